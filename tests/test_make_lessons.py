"""The lesson generator: cuts solution regions, refuses bad markers, and the
committed lessons/ are exactly what it writes."""

import shutil

import pytest

from m2t import ROOT
from m2t.authoring import make_lessons
from m2t.authoring.make_lessons import MarkerError
from m2t.authoring.make_lessons import cut

GOOD = '''"""Doc."""


class Layer:
    def call(self, x):
        y = x + 1
        # TODO(l99): double y. About 1 line.
        # BEGIN SOLUTION
        y = 2 * y
        # END SOLUTION
        return y


def helper(a):
    # TODO(l99): return a squared.
    # BEGIN SOLUTION
    return a * a
    # END SOLUTION
'''


def test_cut_replaces_each_region_by_a_named_raise():
    out = cut(GOOD, "l99_demo.py")
    assert "2 * y" not in out and "a * a" not in out
    assert '        raise NotImplementedError("l99: Layer.call")\n' in out
    assert '    raise NotImplementedError("l99: helper")\n' in out
    assert "# TODO(l99): double y." in out  # the spec stays
    assert "return y" in out  # code after the region stays
    assert out.startswith("# Your exercise file")
    compile(out, "l99_demo.py", "exec")


@pytest.mark.parametrize(
    "source, message",
    [
        (
            GOOD.replace("        # END SOLUTION\n", "", 1),
            "inside the region|without",
        ),
        (
            GOOD.replace(
                "# BEGIN SOLUTION\n        y", "# BEGIN SOLUTIONS\n        y"
            ),
            "unexpected marker",
        ),
        (
            GOOD.replace("        # TODO(l99): double y. About 1 line.\n", ""),
            "needs a `# TODO\\(l99\\)",
        ),
        (
            GOOD.replace(
                "        # END SOLUTION\n        return y",
                "    # END SOLUTION\n        return y",
            ),
            "not indented",
        ),
        (
            GOOD.replace(
                "# END SOLUTION\n    return a", "# END SOLUTION\n    return a"
            ).replace("    # END SOLUTION\n", "    # end solution\n", 1),
            "marker",
        ),
        ('"""Doc."""\nx = 1\n', "no # BEGIN SOLUTION region"),
    ],
    ids=[
        "unbalanced",
        "unknown-marker",
        "no-todo",
        "bad-indent",
        "lowercase-marker",
        "no-region",
    ],
)
def test_cut_refuses_bad_markers(source, message):
    with pytest.raises(MarkerError, match=message):
        cut(source, "l99_demo.py")


def test_cut_refuses_a_file_that_is_not_a_lesson():
    with pytest.raises(MarkerError, match="not a lesson file name"):
        cut(GOOD, "helpers.py")


def test_committed_lessons_are_up_to_date():
    assert make_lessons.stale() == []


def test_stale_lessons_are_reported(tmp_path):
    solutions = tmp_path / "solutions"
    lessons = tmp_path / "lessons"
    shutil.copytree(ROOT / "solutions", solutions)
    shutil.copytree(ROOT / "lessons", lessons)
    assert make_lessons.stale(solutions, lessons) == []
    target = solutions / "l16_attention_scoring.py"
    target.write_text(
        target.read_text().replace("Our solution is about", "About")
    )
    (lessons / "l99_orphan.py").write_text("x = 1\n")
    problems = make_lessons.stale(solutions, lessons)
    assert problems == [
        "lessons/l16_attention_scoring.py: differs from solutions/l16_attention_scoring.py",
        "lessons/l99_orphan.py: has no solutions/l99_orphan.py",
    ]
    make_lessons.write(solutions, lessons)
    assert make_lessons.stale(solutions, lessons) == [
        "lessons/l99_orphan.py: has no solutions/l99_orphan.py"
    ]


def test_make_lessons_check_command(m2t, tmp_path):
    assert m2t("make-lessons", "--check").returncode == 0
    shutil.copytree(ROOT / "solutions", tmp_path / "solutions")
    shutil.copytree(ROOT / "lessons", tmp_path / "lessons")
    dirs = [
        "--solutions",
        str(tmp_path / "solutions"),
        "--lessons",
        str(tmp_path / "lessons"),
    ]
    target = tmp_path / "solutions" / "l16_attention_scoring.py"
    target.write_text(target.read_text().replace("# END SOLUTION", "# END", 1))
    result = m2t("make-lessons", "--check", *dirs)
    assert result.returncode == 2 and "marker" in result.stderr, result.stderr
    target.write_text(
        target.read_text()
        .replace("# END\n", "# END SOLUTION\n", 1)
        .replace("about 6", "about 7")
    )
    result = m2t("make-lessons", "--check", *dirs)
    assert result.returncode == 1, result.stderr
    assert "lessons/l16_attention_scoring.py: differs" in result.stderr
