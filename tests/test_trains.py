"""Checks that train (`@pytest.mark.trains`) run where a grade needs them:
last, and only for a mutant no other check caught (`m2t mutants`); never
in a notebook's short grade. A capstone's parts, graded once in a process,
are graded again when a file they read changes, not when the capstone's
does."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t.grading import parts
from m2t.grading import trains

CHECKS = """
import pytest

@pytest.mark.trains
def test_trains():
    pass

def test_cheap():
    assert {cheap_passes}

def test_after():
    pass
"""


_RUNS = itertools.count()
"""A module name of its own for each run in this process."""


def _run(tmp_path: Path, cheap_passes: bool, plugin) -> dict[str, str]:
    """Outcome of each check of a three-check file, in the order run."""
    (tmp_path / f"test_three_{next(_RUNS)}.py").write_text(
        CHECKS.format(cheap_passes=cheap_passes)
    )
    seen: dict[str, str] = {}

    class Record:
        def pytest_runtest_logreport(self, report):
            name = report.nodeid.rpartition("::")[2]
            if report.when == "call" or report.outcome != "passed":
                seen.setdefault(name, report.outcome)

    pytest.main(
        [
            str(tmp_path),
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
        ],
        plugins=[plugin, Record()],
    )
    return seen


def test_a_caught_mutant_does_not_train(tmp_path):
    seen = _run(tmp_path, False, trains.LeaveOutTraining(once_caught=True))
    assert list(seen) == ["test_cheap", "test_after", "test_trains"]
    assert seen["test_trains"] == "skipped"


def test_a_mutant_nothing_caught_trains(tmp_path):
    seen = _run(tmp_path, True, trains.LeaveOutTraining(once_caught=True))
    assert seen == {
        "test_cheap": "passed",
        "test_after": "passed",
        "test_trains": "passed",
    }


def test_a_short_grade_never_trains_and_names_the_lesson(tmp_path):
    seen = _run(tmp_path, True, trains.LeaveOutTraining(False, "24"))
    assert seen["test_trains"] == "skipped"


def test_the_capstones_training_checks_are_marked():
    for module, name in [
        (
            "l23_capstone_language_model",
            "def test_trains_to_held_out_perplexity",
        ),
        ("l24_capstone_transformer", "def test_trains_to_held_out_bleu"),
    ]:
        text = (ROOT / "graders" / f"test_{module}.py").read_text()
        head = text[: text.index(name)].rsplit("\n\n", 1)[-1]
        assert "@pytest.mark.trains" in head, module


class _Config:
    def __init__(self, folder: Path):
        self.folder = folder

    def getoption(self, name, default=None):
        return {"--impl": str(self.folder)}.get(name, default)


def test_the_parts_are_graded_again_only_when_a_file_they_read_changes(
    tmp_path,
):
    capstone = curriculum.find("24")
    for module in [capstone.module, *capstone.parts]:
        shutil.copy(ROOT / "solutions" / f"{module}.py", tmp_path)
    used = (parts.Part(capstone.parts[0], ""),)
    key = parts._key(_Config(tmp_path), used)
    moved = tmp_path.parent / "elsewhere"
    shutil.copytree(tmp_path, moved)
    assert parts._key(_Config(moved), used) == key  # the bytes, not the path
    with open(tmp_path / f"{capstone.module}.py", "a") as f:
        f.write("\n# the capstone edited\n")
    assert parts._key(_Config(tmp_path), used) == key
    with open(tmp_path / f"{capstone.parts[-1]}.py", "a") as f:
        f.write("\n# a part edited\n")
    assert parts._key(_Config(tmp_path), used) != key
