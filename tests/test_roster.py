"""`m2t grade --roster`: a class built from known mistakes, graded in
parallel, killed halfway and resumed; the gradebook and the class report
equal what the class was built with."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.roster import make_roster
from m2t import curriculum
from m2t import settings
from m2t.grading import classreport
from m2t.grading import confine
from m2t.grading import roster
from tests.conftest import ROOT

LESSONS = ["06", "13"]  # two of the fastest lessons to grade, 6 mistakes each
STUDENTS = 7  # every variant of both lessons once (a solution and six mistakes)
ENV = settings.quiet_env({**os.environ, "PYTHONHASHSEED": "0"})

needs_sandbox = pytest.mark.skipif(
    bool(confine.missing_layers()),
    reason="the sandbox lacks a layer here: untrusted code is not graded",
)


@pytest.fixture(scope="module")
def oracle():
    """{tag: {variant: points}}, graded in process without the sandbox."""
    code = (
        "import json; from m2t import curriculum; "
        "from benchmarks.roster import oracle; "
        f"print(json.dumps(oracle(curriculum.select({LESSONS!r}))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _records(folder):
    return {
        p: p.stat().st_mtime_ns
        for p in (folder / "students").glob("*.json")
        if not p.name.endswith(".results.json")
    }


def _graders_of(out):
    """Processes still grading for this batch (their command names `out`)."""
    found = []
    for proc in os.listdir("/proc"):
        try:
            with open(f"/proc/{proc}/cmdline", "rb") as f:
                line = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(out) in line and int(proc) != os.getpid():
            found.append(line)
    return found


@needs_sandbox
def test_a_killed_roster_resumes_and_counts_exactly(tmp_path, oracle):
    lessons = curriculum.select(LESSONS)
    plan = make_roster(tmp_path / "class", lessons, STUDENTS)
    out = tmp_path / "grades"
    command = [sys.executable, "-m", "m2t", "grade", *LESSONS]
    command += ["--roster", str(tmp_path / "class"), "-j", "2"]
    command += ["--out", str(out)]
    start = time.monotonic()
    batch = subprocess.Popen(
        command,
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while len(_records(out)) < STUDENTS // 2:
            assert batch.poll() is None, "the batch ended before halfway"
            assert time.monotonic() - start < 1200
            time.sleep(0.2)
    finally:
        batch.send_signal(signal.SIGKILL)
        batch.wait()
    first = _records(out)
    assert STUDENTS // 2 <= len(first) < STUDENTS
    deadline = time.monotonic() + 10  # the children die with the batch
    while _graders_of(out) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _graders_of(out) == []
    assert not (out / "gradebook.csv").exists()

    again = subprocess.run(
        command, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=1200
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"{len(first)} already graded" in again.stdout
    for path, mtime in first.items():  # the finished were not graded again
        assert path.stat().st_mtime_ns == mtime, path
    assert len(_records(out)) == STUDENTS

    with open(out / "gradebook.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["student"] for r in rows] == sorted(plan)
    most = sum(max(points.values()) for points in oracle.values())
    for row in rows:
        want = {tag: oracle[tag][plan[row["student"]][tag]] for tag in oracle}
        assert {tag: float(row[tag]) for tag in oracle} == want, row
        assert float(row["total"]) == sum(want.values())
        assert float(row["max"]) == most

    made = Counter(
        (tag, variant)
        for row in plan.values()
        for tag, variant in row.items()
        if variant != "solution"
    )
    records = [
        json.loads(p.read_text()) for p in sorted(_records(out)) if p.is_file()
    ]
    seeds = [rec["seed"] for rec in records]  # each drawn for it alone
    assert len(set(seeds)) == STUDENTS, seeds
    assert settings.GRADER_SEED not in seeds  # never the public one
    for path in sorted(_records(out)):
        seed = json.loads(path.read_text())["seed"]
        output = json.loads(path.with_suffix(".results.json").read_text())
        assert f"judged on seed {seed} (" in output["output"], output
    report = classreport.build(records)
    assert {k: v for k, v in report.mistakes.items() if v} == dict(made)
    assert report.size == STUDENTS
    table = (out / "class-report.md").read_text()
    for (tag, mistake), count in made.items():
        assert f"| {tag} | `{mistake}` | {count} of {STUDENTS} " in table
    assert (out / "class-report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_csv_roster_names_its_students_and_refuses_bad_rows(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "class.csv").write_text("name,path\nAda L,a\nBob,/x/b\n")
    assert roster.read(tmp_path / "class.csv") == {
        "Ada L": tmp_path / "a",
        "Bob": Path("/x/b"),
    }
    assert (
        roster.default_out(tmp_path / "class.csv") == tmp_path / "class-grades"
    )
    (tmp_path / "bad.csv").write_text("Ada,a\nAda,b\n")
    with pytest.raises(ValueError, match="'Ada' twice"):
        roster.read(tmp_path / "bad.csv")
    (tmp_path / "short.csv").write_text("Ada\n")
    with pytest.raises(ValueError, match="line 1 .* not name,path"):
        roster.read(tmp_path / "short.csv")
    with pytest.raises(ValueError, match="--roster"):
        roster.read(tmp_path / "nothing.txt")
    with pytest.raises(ValueError, match="-j 0"):
        roster.grade_roster(tmp_path / "class.csv", [], tmp_path / "o", jobs=0)


def test_gradebook_cells_that_start_like_a_formula_are_text(tmp_path):
    """OWASP's CSV injection: a cell starting with = + - @, a tab or a
    carriage return gets a leading quote, in names and notes alike."""
    names = ["=1+2", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "Ada"]
    report = classreport.ClassReport(
        students=names,
        lessons=["l06"],
        max_points={"l06": 17.0},
        points={(n, "l06"): 1.0 for n in names},
        checks={},
        mistakes={},
    )
    path = tmp_path / "gradebook.csv"
    classreport.write_gradebook(path, report, {"=cmd|' /C calc'!A0": "=x"})
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    firsts = [row[0] for row in rows[1:]]
    assert firsts == ["'" + n for n in names[:-1]] + [
        "Ada",
        "'=cmd|' /C calc'!A0",
    ]
    assert rows[-1][-1] == "not graded: =x"  # starts with "n": text already
    assert not [c for row in rows for c in row if c[:1] in "=+-@\t\r" and c]


def test_the_class_report_counts_the_judges_diagnoses_only():
    """A check's mistake comes from the judge's result (`Check.mistake`),
    never from its message: a message quoting "Likely mistake [x]" (the
    student's own exception text) adds nothing, a name the grader does not
    know is dropped."""
    from m2t.grading.runner import Check
    from m2t.grading.runner import LessonResult

    lesson = curriculum.select(["16"])[0]

    def check(status, message, mistake=""):
        return Check("l16", "c", "n", 1.0, status, message, 0.1, mistake)

    claims = "Likely mistake [no_scale] Likely mistake [invented]"
    result = LessonResult(
        lesson,
        [
            check("error", claims),
            check("failed", claims),
            check("failed", "wrong", "mask_off_by_one"),
            check("failed", "wrong", "invented"),
        ],
        ("no_scale", "mask_off_by_one"),
    )
    rec = classreport.record("s", [result], 1.0)
    assert [c["mistakes"] for c in rec["lessons"][0]["checks"]] == [
        [],
        [],
        ["mask_off_by_one"],
        [],
    ]
    report = classreport.build([rec])
    assert report.mistakes == {
        ("l16", "no_scale"): 0,
        ("l16", "mask_off_by_one"): 1,
    }
