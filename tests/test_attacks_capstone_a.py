"""Capstone A without a model: tests/attacks/capstone_a_reads_held_out/,
an honest lesson-23 loop (every check before training passes) whose
training trains nothing and whose scoring reads whatever held-out text the
worker can find, putting 1 - 1e-9 on the character that follows. Graded
by the real `m2t grade 23 --submission`: on the trained-perplexity checks
it may score no more than the untouched skeleton; an honest submission
scores full marks at two seeds (slow: three trainings a grade).

When `run(parts, cell, train_ids, held_out_ids)` handed the worker the
text it was scored on, this attack reached perplexity 1.0 and 19/19; the
held-out texts now reach the worker one character of each at a time, the
next only after the log-probabilities for the one before came back.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from m2t import ROOT
from m2t import curriculum
from tests.test_attacks_shortcuts import SEEDS
from tests.test_attacks_shortcuts import graded
from tests.test_attacks_shortcuts import points
from tests.test_attacks_shortcuts import skeleton

ATTACK = Path(__file__).parent / "attacks" / "capstone_a_reads_held_out"
CAPSTONE = curriculum.find("23")
GAMED = [
    f"test_trains_to_held_out_perplexity[{c}]" for c in ("rnn", "gru", "lstm")
]


def folder(tmp: Path, name: str, capstone_text: str) -> Path:
    """The honest parts beside `capstone_text` as the lesson-23 file."""
    out = tmp / name
    out.mkdir()
    for module in CAPSTONE.parts:
        text = (ROOT / "solutions" / f"{module}.py").read_text()
        (out / f"{module}.py").write_text(text)
    (out / f"{CAPSTONE.module}.py").write_text(capstone_text)
    return out


def honest() -> str:
    return (ROOT / "solutions" / f"{CAPSTONE.module}.py").read_text()


@pytest.mark.timeout(3600)  # two grades with the parts' graders (load)
def test_reading_the_held_out_text_scores_nothing(tmp_path):
    attack = honest() + "\n" + (ATTACK / "l23_tail.py").read_text()
    got = {
        name: graded(folder(tmp_path, name, text), "23", SEEDS[0], tmp_path)
        for name, text in {
            "skeleton": skeleton(CAPSTONE.module),
            "attack": attack,
        }.items()
    }
    assert all(n in got["attack"] for n in GAMED), sorted(got["attack"])
    scores = {k: points(t, GAMED) for k, t in got.items()}
    print(scores)
    assert scores["attack"] <= scores["skeleton"], {
        n: got["attack"][n]["output"][:400] for n in GAMED
    }
    # the loop's own checks still pass: only the trained checks are gamed
    loop = [n for n in got["attack"] if n not in GAMED]
    assert all(got["attack"][n]["status"] == "passed" for n in loop), {
        n: got["attack"][n]["output"][:300] for n in loop
    }


@pytest.mark.slow
@pytest.mark.timeout(3600)  # a grade with three trainings
@pytest.mark.parametrize("seed", SEEDS)
def test_an_honest_capstone_a_scores_full_marks(tmp_path, seed):
    tests = graded(folder(tmp_path, "honest", honest()), "23", seed, tmp_path)
    failed = {
        n: t["output"] for n, t in tests.items() if t["status"] != "passed"
    }
    assert not failed, failed
