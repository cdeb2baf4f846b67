"""Capstone B (lesson 24): it refuses to run on a broken part and names the
lesson to fix; on the solutions it trains to held-out BLEU >= 0.9 (slow).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t.authoring import mutants
from m2t.grading import parts
from m2t.grading import runner
from m2t.grading import sandbox

CAPSTONE = curriculum.find("24")
GRADER = CAPSTONE.grader
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "fixtures")
"""What a copy of the trusted code leaves out (m2t.grading.strip)."""


def _grader_parts() -> dict:
    spec = importlib.util.spec_from_file_location("_capstone_grader", GRADER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MODULES


def _solved(folder: Path, modules=(CAPSTONE.module, *CAPSTONE.parts)) -> Path:
    """A new `folder` holding the solutions of `modules` (the capstone's
    and its parts' by default)."""
    folder.mkdir()
    for module in modules:
        shutil.copy(ROOT / "solutions" / f"{module}.py", folder)
    return folder


def _submission(folder: Path, broken: str, mistake: str) -> Path:
    """The solutions of the capstone and its parts, with `broken`'s
    `mistake` (one of its catalogued mutants) put in."""
    _solved(folder)
    path = folder / f"{broken}.py"
    path.write_text(
        mutants.mutate(
            path.read_text(encoding="utf-8"),
            mutants.catalogue(broken)[mistake],
            f"{broken} [{mistake}]",
        ),
        encoding="utf-8",
    )
    return folder


def _grade_submission(folder: Path, *args: str):
    """`m2t grade 24 --submission folder ARGS` in a fresh process."""
    return subprocess.run(
        [sys.executable, "-m", "m2t", "grade", "24", "--submission"]
        + [str(folder), "--allow-weaker-sandbox", *args],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )


def test_the_curriculum_stages_the_parts_the_grader_checks():
    assert set(_grader_parts().values()) == set(CAPSTONE.parts)


def test_a_broken_part_is_named_and_nothing_is_trained(tmp_path):
    folder = _submission(
        tmp_path / "alice", "l18_multihead_attention", "no_scale"
    )
    (result,) = runner.grade([CAPSTONE], impl=str(folder))
    assert result.checks and all(c.status == "failed" for c in result.checks)
    for check in result.checks:
        assert "your l18 MultiHeadAttention fails its own grader" in (
            check.message
        ), check.message
        assert "fix l18 first" in check.message
        assert "BLEU" not in check.message  # refused before training
    training = next(c for c in result.checks if "bleu" in c.name)
    assert training.seconds < 30, "the refusal took long enough to train"


def test_the_refusal_holds_in_the_sandbox_on_the_code_of_the_start(
    tmp_path, monkeypatch
):
    """Sandboxed, the parts are graded inside the capstone's grade, by the
    trusted code that grade copied when it started: the source of that
    copy is broken once the grade has started (every worker started from
    a new copy would die at import, and the first part, l06, would fail),
    yet the parts' workers run and the broken l20 is the one named."""
    source = tmp_path / "repository"
    for name in sandbox.TRUSTED:
        shutil.copytree(ROOT / name, source / name, ignore=SKIP)
    shutil.copy(ROOT / "curriculum.toml", source)
    monkeypatch.setattr(sandbox, "ROOT", source)
    folder = _submission(
        tmp_path / "bob", "l20_transformer", "residual_missing"
    )
    real = parts.grade

    def mid_grade(*args, **kwargs):
        with open(source / "m2t" / "grading" / "worker.py", "a") as f:
            f.write("\nraise SystemExit('a copy made after the start')\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(parts, "grade", mid_grade)
    (result,) = runner.grade(
        [CAPSTONE], impl=str(folder), sandbox=True, allow_weaker_sandbox=True
    )
    verdict = next(c for c in result.checks if "your_parts" in c.name)
    assert verdict.status == "failed", verdict.message
    assert "your l20 blocks" in verdict.message, verdict.message
    assert "fix l20 first" in verdict.message, verdict.message


@pytest.mark.slow
def test_the_solutions_reach_the_bleu_target():
    (result,) = runner.grade([CAPSTONE], impl="solutions", timeout=600)
    failing = [
        (c.name, c.message) for c in result.checks if c.status != "passed"
    ]
    assert result.status == "passed", failing


def test_the_held_out_references_are_not_in_the_workers_reach(tmp_path):
    """The attack in tests/attacks/held_out.py, graded as a submission:
    it trains nothing and returns the references it finds in m2t_data's
    splits. The judge holds the held-out pairs, so it finds none."""
    folder = _solved(tmp_path / "mallory")
    capstone = folder / f"{CAPSTONE.module}.py"
    capstone.write_text(
        capstone.read_text()
        + (ROOT / "tests" / "attacks" / "held_out.py").read_text()
    )
    report = tmp_path / "results.json"
    proc = _grade_submission(folder, "--report", str(report))
    tests = {t["name"]: t for t in json.loads(report.read_text())["tests"]}
    (bleu,) = [t for name, t in tests.items() if "held_out_bleu" in name]
    assert bleu["score"] == 0, proc.stdout + bleu["output"]
    assert "below the target" in bleu["output"], bleu["output"]


def test_a_grade_of_the_parts_and_the_capstone_grades_each_part_once(
    tmp_path, monkeypatch
):
    """As `m2t grade` with no lesson: the parts come first in the course,
    so the capstone's parts check reuses their results (here on the
    capstone's skeleton, which the graded parts let through to its TODOs)
    instead of starting a second grade of the same lessons."""
    folder = _solved(tmp_path / "carol", CAPSTONE.parts)
    shutil.copy(ROOT / "lessons" / CAPSTONE.filename, folder)
    lessons = [curriculum.find(module) for module in CAPSTONE.parts]
    grades = []
    real = runner.grade

    def spy(graded, *args, **kwargs):
        grades.append([lesson.tag for lesson in graded])
        return real(graded, *args, **kwargs)

    monkeypatch.setattr(runner, "grade", spy)
    results = runner.grade([*lessons, CAPSTONE], impl=str(folder))
    assert grades == [[*(x.tag for x in lessons), CAPSTONE.tag]]
    *parts, capstone = results
    assert all(r.status == "passed" for r in parts), [r.status for r in parts]
    status = {c.name: c.status for c in capstone.checks}
    assert status.pop("test_your_parts_pass_their_own_graders") == "passed"
    assert set(status.values()) == {"not_started"}, status
