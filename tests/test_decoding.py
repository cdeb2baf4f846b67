"""The scripted decoders of graders/lib/decoding.py: the histories they
answer, the course's greedy_decode on them, and the judge's lines for a
step-by-step pass and for what each decoding step fed."""

from __future__ import annotations

import numpy as np

from graders.lib import decoding
from m2t import ROOT
from m2t.grading import impl

A, B, C, EOS, BOS = range(5)
NAMES = {A: "A", B: "B", C: "C", EOS: "<eos>", BOS: "<bos>"}


def test_scripted_step_answers_the_history_it_is_given():
    table = {(): [0.1, 0.7, 0.1, 0.1], (B,): [0.6, 0.2, 0.1, 0.1]}
    step = decoding.scripted_step(decoding.plain_table(table), BOS)
    log_p, state = step(BOS, ())
    assert state == () and int(np.argmax(log_p)) == B
    log_p, state = step(B, state)
    assert state == (B,)
    np.testing.assert_allclose(np.exp(log_p), table[(B,)])
    # A history the table lacks is uniform: its argmax is token 0.
    log_p, state = step(C, state)
    assert state == (B, C)
    np.testing.assert_allclose(np.exp(log_p), [0.25] * 4)


def test_scripted_transformer_decodes_by_the_fed_history():
    tables = [
        decoding.plain_table({(BOS,): [0.1, 0.1, 0.7, 0.1]}),
        decoding.plain_table({(BOS,): [0.1, 0.1, 0.1, 0.7]}),
    ]
    model = decoding.scripted_transformer(tables, 4)
    src, valid = np.zeros((2, 3), "int32"), np.array([3, 1], "int32")
    enc = model.encoder(src, valid, training=False)
    logits, cache = model.decoder(
        np.full((2, 1), BOS, "int32"), enc, valid, None, training=False
    )
    assert np.argmax(np.asarray(logits)[:, -1], -1).tolist() == [C, EOS]
    logits, cache = model.decoder(
        np.array([[C], [EOS]], "int32"), enc, valid, cache, training=False
    )
    assert np.asarray(cache[0])[..., 0].tolist() == [[BOS, C], [BOS, EOS]]
    assert [call["seen"] for call in model.decoder.calls] == [
        [[BOS], [BOS]],
        [[BOS, C], [BOS, EOS]],
    ]
    # The full pass over <bos> C gives what the two cached steps gave.
    full = model((src, valid, np.array([[BOS, C], [BOS, EOS]], "int32")))
    np.testing.assert_allclose(np.asarray(full)[:, 1], np.asarray(logits)[:, 0])


def test_the_course_greedy_decode_on_a_scripted_model():
    solution = impl.load("l20_transformer", ROOT / "solutions")
    tables = [
        decoding.plain_table(
            {(BOS,): [0.7, 0.1, 0.1, 0.1], (BOS, A): [0.1, 0.1, 0.1, 0.7]}
        )
    ]
    model = decoding.scripted_transformer(tables, 4)
    tokens, lengths = solution.greedy_decode(
        model, np.zeros((1, 2), "int32"), np.array([2]), BOS, EOS, 3
    )
    assert tokens.tolist() == [[A, EOS, EOS]] and lengths.tolist() == [1]
    calls = model.decoder.calls
    assert decoding.fed_histories(calls, [[[BOS]], [[BOS, A]]], NAMES) is None
    line = decoding.fed_histories(calls, [[[BOS]], [[BOS, B]]], NAMES)
    assert "at step 2" in line and "[<bos> A]" in line and "[<bos> B]" in line


def test_fed_histories_names_a_call_in_training_mode():
    calls = [{"seen": [[BOS]], "training": True}]
    line = decoding.fed_histories(calls, [[[BOS]]], NAMES)
    assert "training=True" in line


def test_same_as_full_pass_names_the_first_step_that_departs():
    full = np.zeros((2, 4, 3))
    check = decoding.same_as_full_pass(full)
    assert check(full.copy()) is None
    steps = full.copy()
    steps[1, 2, 0] = 0.5
    steps[0, 3, 1] = -0.25
    line = check(steps)
    assert "agrees at positions 0..1" in line
    assert "at position 2 (of 4), by up to 0.5" in line
    assert "2 positions differ" in line
    first = full.copy()
    first[0, 0, 0] = 1.0
    assert "agrees" not in check(first) and "at position 0" in check(first)
    assert check(np.zeros((2, 3, 3))) is None  # another shape: not judged
