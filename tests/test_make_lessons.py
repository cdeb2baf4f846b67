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
                "        y = x + 1\n",
                "        # begin solution\n        y = x + 1\n",
            ),
            "unexpected marker '# begin solution'",
        ),
        (
            GOOD.replace("y = 2 * y\n", "y = 2 * y\n        # End Solution\n"),
            "marker '# End Solution' inside the region",
        ),
        ('"""Doc."""\nx = 1\n', "no # BEGIN SOLUTION region"),
    ],
    ids=[
        "unbalanced",
        "unknown-marker",
        "no-todo",
        "bad-indent",
        "lowercase-marker",
        "mixed-case-marker-inside",
        "no-region",
    ],
)
def test_cut_refuses_bad_markers(source, message):
    with pytest.raises(MarkerError, match=message):
        cut(source, "l99_demo.py")


def test_cut_refuses_a_file_that_is_not_a_lesson():
    with pytest.raises(MarkerError, match="not a lesson file name"):
        cut(GOOD, "helpers.py")


def test_stale_lessons_are_reported(tmp_path):
    solutions = tmp_path / "solutions"
    lessons = tmp_path / "lessons"
    shutil.copytree(ROOT / "solutions", solutions)
    shutil.copytree(ROOT / "lessons", lessons)
    assert make_lessons.stale(solutions, lessons) == []
    target = solutions / "l01_mlp.py"
    text = target.read_text()
    assert "Our solution is about" in text
    target.write_text(text.replace("Our solution is about", "About"))
    (lessons / "l99_orphan.py").write_text("x = 1\n")
    (lessons / "l16_attention_scoring.py").unlink()  # a skeleton gone
    problems = make_lessons.stale(solutions, lessons)
    assert problems == [
        "lessons/l01_mlp.py: differs from solutions/l01_mlp.py",
        "lessons/l16_attention_scoring.py: missing",
        "lessons/l99_orphan.py: has no solutions/l99_orphan.py",
    ]
    make_lessons.write(solutions, lessons)
    assert (lessons / "l16_attention_scoring.py").read_text() == (
        ROOT / "lessons" / "l16_attention_scoring.py"
    ).read_text()
    assert make_lessons.stale(solutions, lessons) == [
        "lessons/l99_orphan.py: has no solutions/l99_orphan.py"
    ]


def test_the_committed_todos_are_specs(m2t):
    clean = m2t("make-lessons", "--check")
    assert clean.returncode == 0, clean.stderr
    assert "l01_mlp: 4 of 4 TODOs give their shapes; they name" in clean.stdout


def test_make_lessons_check_command(m2t, tmp_path):
    name = "l01_mlp"
    (tmp_path / "solutions").mkdir()
    (tmp_path / "lessons" / "hints").mkdir(parents=True)
    for part in (f"solutions/{name}.py", f"lessons/{name}.py"):
        shutil.copy(ROOT / part, tmp_path / part)
    shutil.copy(
        ROOT / f"lessons/hints/{name}.toml",
        tmp_path / f"lessons/hints/{name}.toml",
    )
    dirs = [
        "--solutions",
        str(tmp_path / "solutions"),
        "--lessons",
        str(tmp_path / "lessons"),
    ]
    target = tmp_path / "solutions" / "l01_mlp.py"
    good = target.read_text()
    target.write_text(good.replace("# END SOLUTION", "# END", 1))
    result = m2t("make-lessons", "--check", *dirs)
    assert result.returncode == 2 and "marker" in result.stderr, result.stderr
    target.write_text(good.replace("Our solution is 1 line.", "One line."))
    result = m2t("make-lessons", "--check", *dirs)
    assert result.returncode == 1, result.stderr
    assert "lessons/l01_mlp.py: differs" in result.stderr
    # A TODO that dictates the code, then one without shapes: refused.
    line = good[: good.index("# TODO(l01): relu(x)")].count("\n") + 1
    for edit, message in [
        (
            ("relu(x) = max(x, 0),", "ops.maximum of x and ops.zeros_like,"),
            f"l01_mlp.py:{line} (relu): the TODO names 2 of the 2 library "
            "calls of its region (maximum, zeros_like)",
        ),
        (
            ("x (...) -> (...), the same", "x keeps its"),
            f"l01_mlp.py:{line} (relu): the TODO gives no shapes in and out",
        ),
    ]:
        target.write_text(good.replace(*edit))
        assert m2t("make-lessons", *dirs).returncode == 0
        result = m2t("make-lessons", "--check", *dirs)
        assert result.returncode == 1, result.stderr
        assert message in result.stderr, result.stderr
        assert "differs" not in result.stderr
    target.write_text(good)
    assert m2t("make-lessons", *dirs).returncode == 0
    table = tmp_path / "specs.md"
    result = m2t("make-lessons", "--check", "--markdown", str(table), *dirs)
    assert result.returncode == 0, result.stderr
    assert "| l01_mlp | 4 | 4 | 8 | 0 (0%) | 8 (100%) |" in table.read_text()


def test_library_calls_and_the_names_a_todo_gives():
    code = (
        "h = ops.tanh(ops.matmul(x, w) + b)\n"
        "y = keras.layers.Dense(3)(h)\n"
        "z = np.stack([h, h]) + layers.Flatten()(y) + self.cell(x) + len(x)\n"
    )
    calls = make_lessons.library_calls(code)
    assert calls == [
        "ops.tanh",
        "ops.matmul",
        "keras.layers.Dense",
        "np.stack",
        "layers.Flatten",
    ]
    todo = "H = tanh(X W + b) -> (B, U); a Dense layer; stacked, not stack_"
    assert make_lessons.named(calls, todo) == ["ops.tanh", "keras.layers.Dense"]


@pytest.mark.parametrize(
    "todo, shapes",
    [
        ("X (B, D) -> O (B, U)", True),
        ("logits (B, Q), labels y (B,) int32 -> (B,) losses", True),
        ("lines list[str] -> list[list[str]]", True),
        ("(B, T) -> the mean, a scalar", False),  # more than 3 words
        ("the last axis has size U", False),
        ("a -> b", False),
    ],
)
def test_a_todo_gives_its_shapes_in_and_out(todo, shapes):
    assert make_lessons.states_shapes(todo) is shapes
