"""The student edition: what it holds, what the scanner refuses, and that a
submission graded with --submission scores as the edition grades itself."""

import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from m2t import ROOT
from m2t import questions
from m2t import settings
from m2t.authoring import make_lessons
from m2t.authoring import mutants
from m2t.authoring import release


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "edition"
    assert release.build(out) == []
    return out


def test_edition_holds_the_student_files_and_nothing_of_the_instructor(edition):
    files = {
        p.relative_to(edition).as_posix()
        for p in edition.rglob("*")
        if p.is_file()
    }
    assert "lessons/l16_attention_scoring.py" in files
    assert "graders/test_l16_attention_scoring.py" in files
    assert ".github/workflows/grade.yml" in files
    assert (
        "python -m m2t.grading.classroom"
        in (edition / ".github/workflows/grade.yml").read_text()
    )
    assert "student edition" in (edition / "README.md").read_text()
    assert "学生版" in (edition / "README.zh.md").read_text()
    skeleton = (edition / "lessons" / "l16_attention_scoring.py").read_text()
    assert (
        edition / ".m2t" / "skeletons" / "l16_attention_scoring.py"
    ).read_text() == skeleton
    assert "!/.m2t/skeletons/" in (edition / ".gitignore").read_text()
    assert "m2t/student/reset.py" in files
    for name in files:
        assert not name.startswith(
            ("solutions/", "tests/", ".ci/", "benchmarks/", "m2t/authoring/")
        )
        assert "__pycache__" not in name
    assert release.scan(edition) == []


def test_release_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "x").write_text("")
    with pytest.raises(ValueError, match="not empty"):
        release.build(tmp_path)


def test_scanner_finds_a_solution_body_even_reformatted(edition, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(edition, copy)
    lesson = copy / "lessons" / "l16_attention_scoring.py"
    # the student region of DotProductAttention.call, reindented, other comments
    body = [
        "d = ops.cast(ops.shape(queries)[-1], queries.dtype)  # size",
        "scores = ops.matmul(queries, ops.swapaxes(keys, -1, -2)) / ops.sqrt(d)",
        "weights = masked_softmax(scores, valid_lens)",
        "dropped = self.attention_dropout(weights, training=training)",
        "output = ops.matmul(dropped, values)",
    ]
    lesson.write_text(
        lesson.read_text()
        + "\n\ndef leaked(self, queries, keys, values, valid_lens, training):\n"
        + "".join(f"    {line}\n" for line in body)
        + "    return output\n"
    )
    problems = release.scan(copy)
    assert any(
        p.startswith("lessons/l16_attention_scoring.py: line")
        and "solutions/l16_attention_scoring.py" in p
        for p in problems
    ), problems


def test_scanner_refuses_compiled_unknown_and_key_files(edition, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(edition, copy)
    (copy / "graders" / "__pycache__").mkdir()
    (copy / "graders" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (copy / "notes.txt").write_text("hello")
    shutil.copy(
        ROOT / "solutions" / "mutants" / "l16_attention_scoring.toml",
        copy / "graders" / "mistakes.toml",
    )
    keys = tmp_path / "solutions"
    shutil.copytree(ROOT / "solutions", keys)
    explanation = (
        "Each head has its own projections, one matrix split in H slices."
    )
    (keys / "answers_key.toml").write_text(
        f'[q18_1]\nexplanation = "{explanation}"\n'
    )
    (copy / "lessons" / "notes" / "l18.md").write_text(f"Hint: {explanation}\n")
    problems = "\n".join(release.scan(copy, solutions=keys))
    assert "graders/__pycache__/x.cpython-311.pyc: compiled Python" in problems
    assert "notes.txt: not on the release allow-list" in problems
    assert (
        "graders/mistakes.toml: identical to solutions/mutants/l16_attention_scoring.toml"
        in problems
    )
    assert "lessons/notes/l18.md: holds an answer-key text" in problems


def test_submission_scores_as_the_edition_grades_itself(m2t, edition, tmp_path):
    copy = tmp_path / "student"
    shutil.copytree(edition, copy)
    shutil.copy(
        ROOT / "solutions" / "l16_attention_scoring.py", copy / "lessons"
    )
    text = (copy / "lessons" / "l16_attention_scoring.py").read_text()
    # one wrong answer, so the comparison covers failures too
    (copy / "lessons" / "l16_attention_scoring.py").write_text(
        text.replace("keep = positions < lens", "keep = positions <= lens")
    )
    inside = m2t(
        "grade", "16", "--report", str(tmp_path / "inside.json"), cwd=copy
    )
    # graded as a submission from the edition's folder, where the judge's
    # seed is the public one its fixtures hold (the full repository draws
    # a fresh one and refuses the public one)
    outside = m2t(
        "grade",
        "16",
        "--submission",
        str(copy),
        "--report",
        str(tmp_path / "outside.json"),
        cwd=edition,
    )
    assert inside.returncode == outside.returncode == 1, (
        inside.stdout + outside.stdout
    )
    a = json.loads((tmp_path / "inside.json").read_text())
    b = json.loads((tmp_path / "outside.json").read_text())
    assert 0 < a["score"] < a["max_score"]
    assert [(t["name"], t["score"], t["status"]) for t in a["tests"]] == [
        (t["name"], t["score"], t["status"]) for t in b["tests"]
    ]


def test_the_edition_refuses_the_authoring_commands_plainly(m2t, edition):
    result = m2t("check", "16", cwd=edition)
    assert result.returncode == 2
    assert "check needs the full repository" in result.stderr
    assert "Traceback" not in result.stderr
    assert m2t("list", cwd=edition).returncode == 0
    # only what works in the edition is in its help
    helped = m2t("--help", cwd=edition)
    assert helped.returncode == 0, helped.stderr
    listed = helped.stdout.split("commands:")[1]
    for name in ("dev", "train", "make-lessons", "check", "mutants"):
        assert f"{name}," not in listed and f"    {name} " not in listed
    assert "release" not in listed and "    grade " in listed
    for argv in (["dev", "release", "--out", "x"], ["train", "--list"]):
        refused = m2t(*argv, cwd=edition)
        assert refused.returncode == 2, refused.stderr
        assert "needs the full repository" in refused.stderr


def _course(tmp_path):
    """A copy of the repository an instructor has worked in: l16 finished
    (reworded, so no region is AST-identical to the solution) and an answer
    filled in."""
    copy = tmp_path / "course"
    copy.mkdir()
    for name in ("pyproject.toml", "curriculum.toml", ".gitignore"):
        shutil.copy2(ROOT / name, copy / name)
    for name in ("lessons", "graders", "m2t_data", "m2t", "notebooks"):
        shutil.copytree(
            ROOT / name,
            copy / name,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    shutil.copytree(ROOT / "solutions", copy / "solutions")
    solved = (ROOT / "solutions" / "l16_attention_scoring.py").read_text()
    solved = solved.replace("scores", "logits").replace("keep", "inside")
    (copy / "lessons" / "l16_attention_scoring.py").write_text(solved)
    answers = copy / "lessons" / "answers.toml"
    text = answers.read_text()
    assert '[q16_3]\nanswer = ""' in text
    answers.write_text(
        text.replace('[q16_3]\nanswer = ""', "[q16_3]\nanswer = 63.88")
    )
    return copy


def _release(course, out):
    return subprocess.run(
        [sys.executable, "-m", "m2t", "release", "--out", str(out)],
        cwd=course,  # the copy's m2t, with the copy as its course folder
        env=settings.quiet_env({**os.environ, "M2T_ROOT": str(course)}),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_release_ignores_the_working_tree_and_leaves_nothing_when_it_fails(
    tmp_path,
):
    course = _course(tmp_path)
    # a file the scanner refuses (identical to an instructor-side file)
    shutil.copy(
        course / "solutions" / "mutants" / "l16_attention_scoring.toml",
        course / "graders" / "mistakes.toml",
    )
    out = tmp_path / "editions" / "2026"
    failed = _release(course, out)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "graders/mistakes.toml: identical to solutions/mutants" in (
        failed.stderr
    )
    assert not out.exists()
    assert list((tmp_path / "editions").iterdir()) == []  # no partial folder

    (course / "graders" / "mistakes.toml").unlink()
    done = _release(course, out)
    assert done.returncode == 0, done.stdout + done.stderr
    skeletons = make_lessons.expected(ROOT / "solutions")
    for name, text in skeletons.items():
        assert (out / "lessons" / name).read_text() == text, name
    assert (out / "lessons" / "answers.toml").read_text() == (
        questions.template()
    )
    assert "63.88" not in (out / "lessons" / "answers.toml").read_text()
    assert list((tmp_path / "editions").iterdir()) == [out]


def test_a_failed_release_leaves_an_empty_out_folder_as_it_was(
    tmp_path, monkeypatch
):
    out = tmp_path / "out"
    out.mkdir()
    # an instructor-side file in an allowed place: the scan must refuse it
    monkeypatch.setattr(release, "SOURCES", (*release.SOURCES, "solutions"))
    monkeypatch.setattr(
        release, "ALLOW", (*release.ALLOW, "solutions/answers.toml")
    )
    problems = release.build(out)
    assert any("identical to solutions/answers.toml" in p for p in problems)
    assert out.is_dir() and list(out.iterdir()) == []
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_the_gradescope_bundle_grades_as_m2t_grade_submission(m2t, tmp_path):
    bundle = tmp_path / "autograder.zip"
    made = m2t("release", "--gradescope", str(bundle), "06")
    assert made.returncode == 0, made.stdout + made.stderr
    root = tmp_path / "autograder"  # Gradescope's /autograder
    with zipfile.ZipFile(bundle) as z:
        names = set(z.namelist())
        for info in z.infolist():  # unpacked as Gradescope does
            path = z.extract(info, root / "source")
            os.chmod(path, (info.external_attr >> 16) & 0o777 or 0o644)
    assert {"setup.sh", "run_autograder"} <= names
    assert "graders/test_l06_text_preprocessing.py" in names
    assert "solutions/questions_key/l16.toml" in names  # the key grades
    assert not [n for n in names if n.startswith(("lessons/", "tests/"))]
    assert not [n for n in names if n.startswith("solutions/l")]
    assert (
        subprocess.run(["bash", "-n", root / "source" / "setup.sh"]).returncode
        == 0
    )
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    submission = root / "submission"
    submission.mkdir()
    text = (ROOT / "solutions" / "l06_text_preprocessing.py").read_text()
    mutant = mutants.catalogue("l06_text_preprocessing")["min_freq_off_by_one"]
    (submission / "l06_text_preprocessing.py").write_text(
        mutants.mutate(text, mutant, "l06 [min_freq_off_by_one]")
    )
    env = {
        **os.environ,
        "M2T_AUTOGRADER_ROOT": str(root),
        "M2T_PYTHON": sys.executable,
    }
    env.pop("M2T_ROOT", None)
    ran = subprocess.run(
        [root / "run_autograder"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    direct = m2t(
        "grade",
        "06",
        "--submission",
        str(submission),
        "--report",
        str(tmp_path / "direct.json"),
    )
    assert direct.returncode == 1, direct.stdout + direct.stderr
    a = json.loads((root / "results" / "results.json").read_text())
    b = json.loads((tmp_path / "direct.json").read_text())
    assert 0 < a["score"] < a["max_score"]
    assert (a["score"], a["max_score"]) == (b["score"], b["max_score"])
    assert [(t["name"], t["score"], t["status"]) for t in a["tests"]] == [
        (t["name"], t["score"], t["status"]) for t in b["tests"]
    ]


def test_the_edition_judges_with_fixtures_and_gives_solutions_full_marks(
    m2t, edition, tmp_path
):
    """The edition's graders hold no reference (the scanner proves it) and
    judge from graders/fixtures/: the solutions, graded inside the edition
    at the public seed, get full marks (so no fixture is missing); at
    another seed every expected value is missing and the message says so,
    never an answer."""
    import time

    grader = (edition / "graders" / "test_l16_attention_scoring.py").read_text()
    assert "withheld" in grader and "@reference" in grader
    assert "np.sqrt(d)" not in grader  # ref_dot_product's body is gone
    assert (edition / "graders" / "fixtures" / "edition.json").exists()
    copy = tmp_path / "student"
    shutil.copytree(edition, copy)
    for path in (ROOT / "solutions").glob(settings.LESSON_GLOB):
        shutil.copy(path, copy / "lessons")
    shutil.copy(ROOT / "solutions" / "answers.toml", copy / "lessons")
    start = time.monotonic()
    report = tmp_path / "all.json"
    graded = m2t("grade", "--report", str(report), cwd=copy)
    seconds = time.monotonic() - start
    data = json.loads(report.read_text())
    print(
        f"the edition grades the solutions: {data['score']:g}/"
        f"{data['max_score']:g} in {seconds:.0f} s"
    )
    missing = [
        (t["name"], t["output"][:300])
        for t in data["tests"]
        # a check left to the instructor is reported failed at 0 points
        # and tagged skipped (an answer whose key is not in the edition)
        if t["status"] != "passed" and "skipped" not in t["tags"]
    ]
    assert missing == [] and data["score"] == data["max_score"], missing
    assert graded.returncode == 0, graded.stdout[-3000:]
    other = m2t(
        "grade",
        "16",
        "--seed",
        "1",
        "--report",
        str(tmp_path / "1.json"),
        cwd=copy,
    )
    assert other.returncode == 1
    tests = json.loads((tmp_path / "1.json").read_text())["tests"]
    unjudged = [
        t for t in tests if "judges its public inputs only" in t["output"]
    ]
    assert unjudged, [t["output"] for t in tests]
    assert all(
        f"(seed {settings.GRADER_SEED})" in t["output"] for t in unjudged
    )
