"""Capstone A (lesson 23): a loop that forgets the clipping or the
optimizer's step fails and says so; mistakes written here (not the
catalogue's) each fail a check that costs under 5 s of CPU, and correct
variants pass; a broken part is named and nothing is trained on it; the
counting baseline is a real one; on the solutions every cell reaches its
held-out perplexity target (slow).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np
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


PLANTED = {
    # the gradient of the summed loss, the mean reported: B T times too
    # large, which the clipped step alone cannot see
    "gradient_times_tokens": (
        "check_train_step",
        (),
        "        )\n    grads = tape.gradient(loss, model.trainable_weights)",
        "        )\n        total = loss * ops.cast(ops.shape(Y)[0] * "
        "ops.shape(Y)[1], loss.dtype)\n"
        "    grads = tape.gradient(total, model.trainable_weights)",
    ),
    # the iterator called without the seed train_epoch was given
    "iterator_unseeded": (
        "check_train_epoch",
        (True,),
        "iterate(corpus, batch_size, num_steps, seed)",
        "iterate(corpus, batch_size, num_steps)",
    ),
    # the log-softmax taken over the positions, not the characters
    "softmax_over_time": (
        "check_held_out",
        (),
        "return ops.log_softmax(logits, axis=-1), state",
        "return ops.log_softmax(logits, axis=1), state",
    ),
}
"""Mistakes written from the TODOs' contracts, each as (the check that
must catch it, its extra arguments, the solution's line, the mistake)."""

VARIANTS = {
    "loss_object": (
        "check_train_step",
        (),
        "loss = ops.mean(\n            keras.losses.sparse_categorical_crossentropy(\n"
        "                Y, logits, from_logits=True\n            )\n        )",
        "loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)"
        "(Y, logits)",
    ),
    "logsumexp": (
        "check_held_out",
        (),
        "return ops.log_softmax(logits, axis=-1), state",
        "return logits - ops.logsumexp(logits, axis=-1, keepdims=True), state",
    ),
}
"""Correct code written differently: each passes its check."""


def _judge(tmp_path, monkeypatch, name, edit):
    """Run one grader check in this process on the solutions with `edit`
    made: (the exception it raised or None, the CPU seconds it took)."""
    from m2t.grading import probe

    check, args, old, new = edit
    folder = tmp_path / name
    folder.mkdir()
    for module in (CAPSTONE.module, *CAPSTONE.parts):
        shutil.copy(ROOT / "solutions" / f"{module}.py", folder)
    path = folder / f"{CAPSTONE.module}.py"
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    monkeypatch.setenv("M2T_LANG", "en")
    monkeypatch.setattr(probe, "_RUNNER", probe.InProcessRunner(folder))
    import graders.test_l23_capstone_language_model as grader

    try:  # TensorFlow warm (on this very code: its verdict comes below)
        grader.check_held_out(np.random.default_rng(0))
    except Exception:  # noqa: BLE001, S110
        pass
    cpu = time.process_time()
    try:
        getattr(grader, check)(np.random.default_rng(1), *args)
    except Exception as exc:  # noqa: BLE001  the verdict, whatever it is
        return exc, time.process_time() - cpu
    return None, time.process_time() - cpu


@pytest.mark.parametrize("name", list(PLANTED))
def test_a_planted_mistake_fails_a_check_in_seconds(
    tmp_path, monkeypatch, name
):
    from graders.lib.judge import CheckFailed

    verdict, cpu = _judge(tmp_path, monkeypatch, name, PLANTED[name])
    assert isinstance(verdict, CheckFailed), verdict
    assert cpu < 5, f"{name}: caught after {cpu:.1f} s of CPU"


@pytest.mark.parametrize("name", list(VARIANTS))
def test_a_correct_variant_passes(tmp_path, monkeypatch, name):
    verdict, _ = _judge(tmp_path, monkeypatch, name, VARIANTS[name])
    assert verdict is None, verdict


def test_the_baseline_counts_and_its_orders_improve():
    """Kneser-Ney's rows are distributions; more context helps up to the
    best order, and the best beats a unigram model by far on the judge's
    own split."""
    import graders.test_l23_capstone_language_model as grader
    from graders.lib import ngram

    train_ids, streams = grader.corpus(7)
    model = ngram.KneserNey(train_ids, len(grader.VOCAB), 4)
    rows = model.log_probs(streams[:5])
    np.testing.assert_allclose(np.exp(rows).sum(-1), 1.0, atol=1e-9)
    order, best, each = ngram.best(train_ids, streams, len(grader.VOCAB))
    assert each[1] > 10 and best < each[1] / 5, each
    assert best == min(each.values()) and each[order] == best
    assert each[4] < each[2] < each[1], each


def test_the_held_out_texts_are_new_and_of_one_length():
    """Every stream is exactly its length (a text of n sentences has n - 1
    spaces between them), each grade seed draws other texts, and none is
    in the training text."""
    import graders.test_l23_capstone_language_model as grader
    from m2t_data import toy_inventory

    for seed in range(40):
        texts = toy_inventory.streams(seed, 3, 37)
        assert [len(t) for t in texts] == [37] * 3, (seed, texts)
        assert len(toy_inventory.text(seed, 50)) >= 50
    train_ids, a = grader.corpus(1)
    _, b = grader.corpus(2)
    assert a.shape == b.shape == (50, 100) and not np.array_equal(a, b)
    text = " ".join(toy_inventory.text().split())
    rows = ["".join(grader.VOCAB[i] for i in row) for row in a]
    assert not [r for r in rows if r in text]
