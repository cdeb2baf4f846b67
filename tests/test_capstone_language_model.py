"""Capstone A (lesson 23): a loop that forgets the clipping or the
optimizer's step fails and says so; a broken part is named and nothing is
trained on it; on the solutions every cell reaches its held-out perplexity
target (slow).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t.authoring import mutants
from m2t.grading import runner

CAPSTONE = curriculum.find("23")


def submission(
    folder: Path, capstone: curriculum.Lesson, broken: str, mistake: str
) -> Path:
    """`folder` holding the solutions of `capstone` and its parts, with
    `broken`'s catalogued mutant `mistake` put in (`broken` may be the
    capstone itself)."""
    folder.mkdir()
    for module in (capstone.module, *capstone.parts):
        shutil.copy(ROOT / "solutions" / f"{module}.py", folder)
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


def _check(result, prefix: str):
    return next(c for c in result.checks if c.name.startswith(prefix))


@pytest.mark.parametrize(
    ("mistake", "says"),
    [
        ("no_clipping", "That is lr x the unclipped gradient"),
        ("no_optimizer_step", "The weights did not change at all"),
    ],
)
def test_a_loop_without_clipping_or_step_fails_saying_so(
    tmp_path, monkeypatch, mistake, says
):
    """Graded on a seed of its own (as `--submission` does): the gate
    before training reruns the loop's checks on the grade's seed too, so
    it quotes the failing check's message, figures and all."""
    monkeypatch.setenv("M2T_GRADER_SEED", "5")
    folder = submission(tmp_path / "carol", CAPSTONE, CAPSTONE.module, mistake)
    (result,) = runner.grade([CAPSTONE], impl=str(folder))
    step = _check(result, "test_train_step_clips_and_steps")
    assert step.status == "failed"
    assert f"Likely mistake [{mistake}]" in step.message, step.message
    assert says in step.message, step.message
    assert _check(result, "test_your_parts").status == "passed"
    said = step.message.strip()
    for check in result.checks:
        if "perplexity" in check.name:  # refused before training
            assert check.status == "failed"
            assert "your train_step fails its check" in check.message
            assert said in check.message, (said, check.message)
            assert check.seconds < 30, "the refusal took long enough to train"


def test_a_broken_part_is_named_and_nothing_is_trained(tmp_path):
    folder = submission(tmp_path / "dave", CAPSTONE, "l10_gru", "gates_swapped")
    (result,) = runner.grade([CAPSTONE], impl=str(folder))
    assert result.checks and all(c.status == "failed" for c in result.checks)
    for check in result.checks:
        assert "your l10 GRUCell fails its own grader" in check.message
        assert "fix l10 first" in check.message, check.message
        assert "held-out perplexity" not in check.message
    assert all(
        c.seconds < 30 for c in result.checks if "perplexity" in c.name
    ), "the refusal took long enough to train"


@pytest.mark.slow
def test_the_solutions_reach_the_perplexity_targets():
    (result,) = runner.grade([CAPSTONE], impl="solutions", timeout=600)
    failing = [
        (c.name, c.message) for c in result.checks if c.status != "passed"
    ]
    assert result.status == "passed", failing
