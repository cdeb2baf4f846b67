"""The self-check: every grader passes on solutions/ and every check fails as
not started on the untouched lessons/; and it fails when it should."""

import re
import shutil

from m2t import ROOT


def test_self_check_passes_on_the_repository(m2t):
    result = m2t("check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("check: ok")


def test_self_check_fails_when_a_solution_leaks_into_a_skeleton(m2t, tmp_path):
    shutil.copy(ROOT / "solutions" / "l16_attention_scoring.py", tmp_path)
    result = m2t("check", "16", "--lessons-dir", str(tmp_path))
    assert result.returncode == 1
    assert "passed on the untouched lessons" in result.stdout


def test_self_check_fails_when_a_skeleton_crashes(m2t, tmp_path):
    skeleton = (ROOT / "lessons" / "l16_attention_scoring.py").read_text()
    (tmp_path / "l16_attention_scoring.py").write_text(
        skeleton + "\nimport nothing_here_at_all\n"
    )
    result = m2t("check", "16", "--lessons-dir", str(tmp_path))
    assert result.returncode == 1
    assert "error on the untouched lessons" in result.stdout


COURSE = (
    "m2t",
    "graders",
    "lessons",
    "solutions",
    "notebooks",
    "m2t_data",
    "curriculum.toml",
    "pyproject.toml",
)
"""What a scratch copy of the course needs to run `python -m m2t` in it."""


def _scratch(tmp_path):
    repo = tmp_path / "repo"
    ignore = shutil.ignore_patterns(
        "__pycache__", "*.pyc", ".ipynb_checkpoints"
    )
    for name in COURSE:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, repo / name, ignore=ignore)
        else:
            shutil.copy(ROOT / name, repo / name)
    return repo


def test_a_new_lesson_is_checked_once_written_and_refused_when_a_file_goes(
    m2t, tmp_path
):
    repo = _scratch(tmp_path)
    made = m2t("dev", "new-lesson", "99", "demo", cwd=repo)
    assert made.returncode == 0, made.stdout + made.stderr
    from m2t.authoring import scaffold
    from m2t.curriculum import Lesson

    demo = Lesson("99", "l99_demo", "Demo", ("demo",))
    files = scaffold.footprint(demo, repo)
    for path in files.values():
        assert f"wrote {path.relative_to(repo)}" in made.stdout
    assert (
        '[[lesson]]\nid = "99"\nmodule = "l99_demo"'
        in (repo / "curriculum.toml").read_text()
    )

    # As written, the reference is a placeholder: check refuses.
    unwritten = m2t("check", "99", cwd=repo)
    assert unwritten.returncode == 1
    assert "not_started on solutions/" in unwritten.stdout

    solution, grader = files["solution"], files["grader"]
    solution.write_text(
        solution.read_text().replace(
            'raise NotImplementedError("l99: write the reference solution")',
            "return 2.0 * x",
        )
    )
    grader.write_text(
        grader.read_text().replace(
            'raise NotImplementedError("l99 grader: write the float64 '
            'reference")',
            "return 2.0 * x",
        )
    )
    written = m2t("check", "99", cwd=repo)
    assert written.returncode == 0, written.stdout + written.stderr
    assert written.stdout.strip().endswith("check: ok")

    files["notes"].unlink()
    gone = m2t("check", "99", cwd=repo)
    assert gone.returncode == 1
    assert "l99 (l99_demo): no notes file lessons/notes/l99_demo.md" in (
        gone.stdout
    )


def test_new_lesson_refuses_a_taken_number_and_writes_nothing(m2t, tmp_path):
    repo = _scratch(tmp_path)
    before = (repo / "curriculum.toml").read_text()
    taken = m2t("dev", "new-lesson", "16", "other", cwd=repo)
    assert taken.returncode == 2
    assert (
        "lesson 16: curriculum.toml has l16_attention_scoring" in taken.stderr
    )
    (repo / "lessons" / "notes" / "l98_demo.md").write_text("mine")
    there = m2t("dev", "new-lesson", "98", "demo", cwd=repo)
    assert there.returncode == 2
    assert "lessons/notes/l98_demo.md is already there" in there.stderr
    assert not (repo / "solutions" / "l98_demo.py").exists()
    assert (repo / "curriculum.toml").read_text() == before


def test_a_new_entry_goes_in_number_order_before_the_question_list():
    from m2t.authoring import scaffold

    text = (
        '[[lesson]]\nid = "01"\nmodule = "l01_a"\n\n'
        '[[lesson]]\nid = "03"\nmodule = "l03_c"\n\n'
        '# the list\n[questions]\nmodule = "questions"\n'
    )
    two = scaffold.insert_entry(text, '[[lesson]]\nid = "02"\n', "02")
    assert (
        two.index('id = "01"') < two.index('id = "02"') < two.index('id = "03"')
    )
    four = scaffold.insert_entry(text, '[[lesson]]\nid = "04"\n', "04")
    assert (
        four.index('id = "03"')
        < four.index('id = "04"')
        < four.index("# the list")
    )
    assert four.replace('[[lesson]]\nid = "04"\n\n', "") == text


def test_self_check_refuses_a_solution_that_passes_only_unconfined(
    m2t, tmp_path
):
    """A solution that caches a file beside itself passes in this process;
    in the sandbox its staged folder is read-only, so the check's
    sandboxed grade fails it, naming the checks, the layers and the time."""
    repo = _scratch(tmp_path)
    path = repo / "solutions" / "l16_attention_scoring.py"
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, x in enumerate(lines) if "# BEGIN SOLUTION" in x)
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at + 1, f'{indent}open(__file__ + ".cache", "w").close()\n')
    path.write_text("".join(lines))

    result = m2t("check", "16", cwd=repo)
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "on solutions/:" not in out, out  # unconfined, it passes
    assert "on solutions/ in the sandbox: " in out, out
    assert "sandbox: " in out and " in force" in out, out  # the layers
    assert re.search(
        r"sandbox: the solutions of 1 lesson\(s\), \d+ checks, "
        r"graded in [\d.]+ s",
        out,
    ), out
    assert (path.parent / (path.name + ".cache")).exists()


def test_a_grade_where_no_lesson_produced_a_check_fails(m2t, tmp_path):
    """`m2t grade` exits 1, not 0, when the lessons it graded gave no
    check at all (here a grader that defines none): nothing was shown to
    pass."""
    repo = _scratch(tmp_path)
    made = m2t("dev", "new-lesson", "99", "demo", cwd=repo)
    assert made.returncode == 0, made.stdout + made.stderr
    (repo / "graders" / "test_l99_demo.py").write_text(
        '"""A grader without checks."""\n'
    )
    result = m2t("grade", "99", "--impl", "solutions", cwd=repo)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
