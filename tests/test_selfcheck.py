"""The self-check: every grader passes on solutions/ and every check fails as
not started on the untouched lessons/; and it fails when it should."""

import re
import shutil

from m2t import ROOT
from m2t.authoring import make_lessons
from m2t.authoring import rules
from m2t.authoring import scaffold
from m2t.curriculum import Lesson


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
    "docs",
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


DEMO = Lesson("99", "l99_demo", "Demo", ("demo",))
"""What `m2t dev new-lesson 99 demo` adds to curriculum.toml."""


def _rules(m2t, repo):
    """(the problems `m2t dev check 99 --rules-only` prints in `repo`, the
    problems the rule functions find there, in this process)."""
    gate = m2t("dev", "check", "99", "--rules-only", cwd=repo)
    lines = gate.stdout.strip().splitlines()
    last = lines.pop() if lines else ""
    if gate.returncode == 0:
        assert last == "check: ok" and not lines, gate.stdout + gate.stderr
    else:
        assert gate.returncode == 1, gate.stdout + gate.stderr
        assert last == f"check: {len(lines)} problem(s)", gate.stdout
    return lines, rules.course(repo) + rules.check(DEMO, repo)


def _write_the_markers(repo):
    """Lesson 99 as its author finishes it: every TODO(author) written, a
    reference and solution (2 x), one mistake (halved) with its mutant, its
    Chinese and its row of docs/mistakes.md, the generated files made
    again."""
    files = scaffold.footprint(DEMO, repo)
    for role, path in files.items():
        if role != "skeleton":
            text = path.read_text(encoding="utf-8")
            path.write_text(text.replace("TODO(author)", "Written"), "utf-8")
    done = "return 2.0 * x"
    for role, placeholder in [
        (
            "solution",
            'raise NotImplementedError("l99: write the reference solution")',
        ),
        (
            "grader",
            'raise NotImplementedError("l99 grader: write the '
            'float64 reference")',
        ),
    ]:
        text = files[role].read_text(encoding="utf-8")
        assert placeholder in text, role
        files[role].write_text(text.replace(placeholder, done), "utf-8")
    grader = files["grader"].read_text(encoding="utf-8")
    files["grader"].write_text(
        grader.replace(
            "from graders.lib.judge import expect_close\n",
            "from graders.lib.judge import Mistake\n"
            "from graders.lib.judge import expect_close\n",
        ).replace(
            "MISTAKES = ()",
            'MISTAKES = (Mistake("halved", "x is halved, not doubled."),)',
        ),
        "utf-8",
    )
    with open(files["mutants"], "a", encoding="utf-8") as f:
        f.write(
            '\n[halved]\nreplace = [["return 2.0 * x", "return 0.5 * x"]]\n'
        )
    zh = repo / "graders" / "messages" / "mistakes.zh.toml"
    with open(zh, "a", encoding="utf-8") as f:
        f.write('\n[l99_demo]\nhalved = "x 被减半了，而不是加倍。"\n')
    with open(repo / "docs" / "mistakes.md", "a", encoding="utf-8") as f:
        f.write("| l99 | `halved` | yes | yes | 1 |\n")
    make_lessons.write(repo / "solutions", repo / "lessons")
    (repo / "docs" / "specs.md").write_text(
        make_lessons.specs_table(
            make_lessons.specs(repo / "solutions", repo / "lessons" / "hints")
        ),
        encoding="utf-8",
    )


def test_the_gate_fails_a_new_lesson_on_its_markers_alone(m2t, tmp_path):
    """The rules alone (nothing graded): `m2t dev new-lesson 99 demo`
    fails the gate on its TODO(author) markers and nothing else; with them
    written it passes; a file of the lesson gone, or a mistake's mutant,
    fails it with the message the rule functions give in the suite."""
    repo = _scratch(tmp_path)
    made = m2t("dev", "new-lesson", "99", "demo", cwd=repo)
    assert made.returncode == 0, made.stdout + made.stderr
    files = scaffold.footprint(DEMO, repo)
    for path in [*files.values(), repo / "docs" / "specs.md"]:
        assert f"wrote {path.relative_to(repo)}" in made.stdout
    assert (
        '[[lesson]]\nid = "99"\nmodule = "l99_demo"'
        in (repo / "curriculum.toml").read_text()
    )

    gate, suite = _rules(m2t, repo)
    assert gate == suite and len(gate) >= 5, gate
    marker = re.compile(r"l99 \(l99_demo\): \S+:\d+: TODO\(author\) left: ")
    assert all(marker.match(p) for p in gate), gate
    marked = {p.split(": ")[1].split(":")[0] for p in gate}
    for role in ("solution", "grader", "mutants", "hints", "notes"):
        assert files[role].relative_to(repo).as_posix() in marked, role

    _write_the_markers(repo)
    assert _rules(m2t, repo) == ([], [])

    mutants = files["mutants"].read_text(encoding="utf-8")
    files["mutants"].write_text(mutants.split("\n[halved]")[0] + "\n")
    gate, suite = _rules(m2t, repo)
    assert (
        gate
        == suite
        == [
            "l99 (l99_demo): mistake 'halved' has no mutant: add a [halved] "
            "table to solutions/mutants/l99_demo.toml",
            "l99 (l99_demo): docs/mistakes.md lists 'halved', which is no "
            "mutant of the lesson: run `m2t mutants 99` (each caught, diagnosed "
            "as itself), then `m2t mutants --markdown docs/mistakes.md`",
        ]
    )
    files["mutants"].write_text(mutants, encoding="utf-8")

    for role in ("hints", "mutants", "skeleton"):
        text = files[role].read_text(encoding="utf-8")
        files[role].unlink()
        gate, suite = _rules(m2t, repo)
        shown = files[role].relative_to(repo).as_posix()
        assert gate == suite, (gate, suite)
        assert f"l99 (l99_demo): no {role} file {shown}: " in "\n".join(gate)
        files[role].write_text(text, encoding="utf-8")
    assert "run `m2t make-lessons`" in "\n".join(gate)  # the skeleton's fix


def test_a_new_lesson_is_checked_once_written(m2t, tmp_path):
    """Written, lesson 99 passes the whole gate: its rules, then its
    grades on the solution (once, in the sandbox) and on the skeleton."""
    repo = _scratch(tmp_path)
    made = m2t("dev", "new-lesson", "99", "demo", cwd=repo)
    assert made.returncode == 0, made.stdout + made.stderr
    _write_the_markers(repo)
    written = m2t("check", "99", cwd=repo)
    assert written.returncode == 0, written.stdout + written.stderr
    assert written.stdout.strip().endswith("check: ok")


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
    """A solution that caches a file beside itself would pass in this
    process; the check grades the solutions in the sandbox, where the
    staged folder is read-only, so it fails, naming the checks, the layers
    and the time, and nothing is written beside the solution."""
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
    assert "on solutions/ in the sandbox: " in out, out
    assert "sandbox: " in out and " in force" in out, out  # the layers
    assert re.search(
        r"sandbox: the solutions of 1 lesson\(s\), \d+ checks, "
        r"graded in [\d.]+ s",
        out,
    ), out
    assert not (path.parent / (path.name + ".cache")).exists()


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
