"""Backpropagation by hand, done by autodiff: each attack a real submission
(tests/attacks/byhand_autodiff_l21/, ..._l22/) graded by the real `m2t
grade --submission` and by `m2t grade --unconfined` in the grader's own
process (where TensorFlow is loaded for the judge). Before the defence
(curriculum.toml's by_hand flag off) the tape versions scored 12/12 on
l21 and 14/14 on l22; now they may score no more than the untouched
skeleton on the checks they game, and an honest submission still scores
full marks at two seeds (m2t.grading.noautodiff)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from m2t import ROOT
from m2t import settings

ATTACKS = Path(__file__).parent / "attacks"
SEEDS = (20261202, 7)
"""Two seeds of the judge's inputs, neither the public one."""
GAMED = {
    "l21_mlp_backprop": [
        "test_linear_backward",
        "test_relu_backward",
        "test_cross_entropy_gradient",
        "test_cross_entropy_is_stable_for_large_logits",
        "test_mlp_gradients",
        "test_mlp_gradient_matches_centred_differences[W1]",
        "test_mlp_gradient_matches_centred_differences[b2]",
        "test_training_reaches_accuracy",
    ],
    "l22_bptt": [
        "test_sequence_cross_entropy",
        "test_full_bptt",
        "test_truncated_bptt",
        "test_clipping_after_summing",
        "test_gradient_matches_centred_differences[W_hh]",
        "test_gradient_matches_centred_differences[b_h]",
    ],
}
"""The checks a tape over the forward pass would pass without the work."""
TAILS = {
    "l21_tape": ("l21_mlp_backprop", "byhand_autodiff_l21/l21_tail.py"),
    "l21_evasive": (
        "l21_mlp_backprop",
        "byhand_autodiff_l21/l21_evasive_tail.py",
    ),
    "l22_tape": ("l22_bptt", "byhand_autodiff_l22/l22_tail.py"),
}
GAMED_BY = {
    # the evasive attack replaces only the linear layer's and relu's
    # backward passes: the softmax cross-entropy checks are honest there
    "l21_evasive": [
        n for n in GAMED["l21_mlp_backprop"] if "cross_entropy" not in n
    ],
}


def solution(lesson: str) -> str:
    return (ROOT / "solutions" / f"{lesson}.py").read_text()


def graded(folder: Path, lesson: str, seed: int, mode: str) -> dict:
    """`m2t grade` of `folder`'s `lesson` in a fresh process, as a
    submission (`mode` "submission") or in the grader's own process
    ("local"): {check name: its test entry of results.json}."""
    number = lesson[1:3]
    report = folder.parent / f"{folder.name}-{mode}-{seed}.json"
    how = (
        ["--submission", str(folder), "--allow-weaker-sandbox"]
        if mode == "submission"
        else ["--impl", str(folder), "--unconfined"]
    )
    env = settings.quiet_env({**os.environ, "M2T_LANG": "en"})
    proc = subprocess.run(
        [sys.executable, "-m", "m2t", "grade", number, *how]
        + ["--seed", str(seed), "--report", str(report)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert report.exists(), proc.stdout + proc.stderr[-3000:]
    tests = json.loads(report.read_text())["tests"]
    return {t["name"].split(" ", 1)[1]: t for t in tests}


def submission(tmp: Path, name: str, lesson: str, text: str) -> Path:
    folder = tmp / name
    folder.mkdir()
    (folder / f"{lesson}.py").write_text(text)
    return folder


def points(tests: dict, names: list[str]) -> float:
    return sum(tests[n]["score"] for n in names)


@pytest.mark.parametrize("mode", ["submission", "local"])
@pytest.mark.parametrize("attack", sorted(TAILS))
def test_autodiff_scores_no_more_than_the_skeleton(tmp_path, attack, mode):
    """The untouched skeleton scores 0 on every check (`m2t check`: each
    check fails on it), so the attack may score 0 on the checks it games,
    and less than full marks in all."""
    lesson, tail = TAILS[attack]
    text = solution(lesson) + (ATTACKS / tail).read_text()
    tests = graded(
        submission(tmp_path, attack, lesson, text), lesson, SEEDS[0], mode
    )
    names = GAMED_BY.get(attack, GAMED[lesson])
    gamed = points(tests, names)
    total = sum(t["score"] for t in tests.values())
    most = sum(t["max_score"] for t in tests.values())
    print(attack, mode, f"gamed {gamed}, in all {total}/{most}")
    assert gamed == 0, {n: tests[n]["output"][:300] for n in GAMED[lesson]}
    assert total < most


@pytest.mark.parametrize(
    "seed, modes",
    [(SEEDS[0], ("submission", "local")), (SEEDS[1], ("submission",))],
)
@pytest.mark.parametrize("lesson", sorted(GAMED))
def test_an_honest_by_hand_lesson_scores_full_marks(
    tmp_path, lesson, seed, modes
):
    folder = submission(tmp_path, "honest", lesson, solution(lesson))
    for mode in modes:
        tests = graded(folder, lesson, seed, mode)
        failed = {n: t["output"] for n, t in tests.items() if t["score"] < 1e-9}
        assert not failed, (mode, failed)
