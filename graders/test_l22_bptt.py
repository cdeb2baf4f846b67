"""Grader for lesson 22: backpropagation through time for lesson 08's RNN,
by hand, with truncation as it is practised and clipping of the summed
gradient.

Sizes: B=2 sequences, D=3 input features, U=4 hidden units, T=5 steps,
Q=6 outputs (every axis its own size); truncation tau=2. Conventions: the
loss is the mean over the B T tokens; truncation cuts the sequence into
chunks of tau steps whose entering state is a constant (steps 1-2, 3-4, 5:
lesson 07's sequential partitioning with the state detached), not d2l
8.7.1.2's per-term truncation (the loss term of every step t reaching tau
steps back from t), which is named when a submission computes it;
clipping scales all five summed gradients by one factor, min(1, theta /
||g||).

Every gradient is judged against values the judge computes itself in
float64: the grader's own derivation (one share per loss term and step,
summed), `tf.GradientTape` on the same forward pass (for tau, a
stop-gradient on the state at each chunk boundary), and centred
differences of the reference's loss. The lesson is graded where no
autodiff library can be imported (curriculum.toml: by_hand).
"""

from functools import partial

import numpy as np
import pytest

from graders.lib.contract import centred_differences
from graders.lib.contract import expect_value_errors
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect_close
from graders.lib.judge import mistake_outputs
from graders.lib.messages import say
from graders.lib.probes import value_errors
from graders.lib.references import softmax
from graders.lib.tapes import mean_cross_entropy
from graders.lib.tapes import tape_gradients
from graders.lib.tolerances import GRAD
from m2t.grading.probe import Lesson

lesson = Lesson("l22_bptt")
B, D, U, T, Q = 2, 3, 4, 5, 6
TAU = 2
KEYS = ("W_xh", "W_hh", "b_h", "W_hq", "b_q")
RECURRENT = KEYS[:3]

# ---------------------------------------------------------------- mistakes
NOT_TRANSPOSED = Mistake(
    "bptt_recurrent_not_transposed",
    "the gradient goes back a step as dA_s W_hh instead of dA_s W_hh^T: "
    "H_s = tanh(H_{s-1} W_hh + ...), so dH_{s-1} = dA_s W_hh^T (W_hh is "
    "square, so the shapes cannot tell).",
)
RECURRENT_DROPPED = Mistake(
    "bptt_recurrent_term_dropped",
    "no gradient flows from H_s back to H_{s-1}: each loss term reaches "
    "only its own step; the recurrent term dH_{s-1} = dA_s W_hh^T carries "
    "it further back.",
)
NOT_ACCUMULATED = Mistake(
    "bptt_not_accumulated",
    "each step's share overwrites the gradient instead of adding to it: "
    "the weights are the same at every step, so their gradient is the sum "
    "of every step's share.",
)
NO_TANH_SLOPE = Mistake(
    "bptt_no_tanh_derivative",
    "the gradient goes through H_s = tanh(A_s) without tanh's slope: "
    "dA_s = dH_s * (1 - H_s^2).",
)
TRUNCATION_IGNORED = Mistake(
    "truncation_ignored",
    "tau is ignored: with tau given, the sequence is cut into chunks of tau "
    "steps and no gradient crosses from a chunk into the one before it.",
)
PER_TERM_TRUNCATION = Mistake(
    "per_term_truncation",
    "this is d2l 8.7.1.2's per-term truncation (the loss term of every step "
    "t reaching tau steps back from t); this lesson truncates as training "
    "does: chunks of tau steps, the state entering each chunk a constant, "
    "so a loss term reaches back only to the start of its own chunk.",
)
TRUNCATION_OFF_BY_ONE = Mistake(
    "truncation_off_by_one",
    "the chunks are tau + 1 steps long: with tau = 2 the cuts come before "
    "steps 3 and 5 (1-based), every tau steps from the first.",
)
TANH_WRONG_STATE = Mistake(
    "bptt_tanh_slope_of_previous_state",
    "tanh's slope is taken at H_{t-1}, the state that went into step t: "
    "it belongs to the state that came out of it, H_t = tanh(A_t).",
)
CLIP_BEFORE_SUM = Mistake(
    "clip_before_summing",
    "each step's share is clipped before the shares are summed: clip once, "
    "the summed gradients of all five weights together.",
)
CE_BATCH_ONLY = Mistake(
    "sequence_ce_divided_by_batch_only",
    "dlogits is divided by B, not B T: the loss is the mean over all B T "
    "tokens (d2l's 1/T sum over the steps, averaged over the batch).",
)
MISTAKES = (
    NOT_TRANSPOSED,
    RECURRENT_DROPPED,
    NOT_ACCUMULATED,
    NO_TANH_SLOPE,
    TANH_WRONG_STATE,
    TRUNCATION_IGNORED,
    PER_TERM_TRUNCATION,
    TRUNCATION_OFF_BY_ONE,
    CLIP_BEFORE_SUM,
    CE_BATCH_ONLY,
)
CHAIN_MISTAKES = (
    NOT_TRANSPOSED,
    RECURRENT_DROPPED,
    NOT_ACCUMULATED,
    NO_TANH_SLOPE,
    TANH_WRONG_STATE,
)
TRUNCATION_MISTAKES = (
    *CHAIN_MISTAKES,
    TRUNCATION_IGNORED,
    PER_TERM_TRUNCATION,
    TRUNCATION_OFF_BY_ONE,
)


# --------------------------------------------- float64 references (NumPy)
@reference
def ref_states(X, H0, params):
    """[H_0, H_1, ..., H_T], each (B, U), and the logits (B, T, Q)."""
    X = np.asarray(X, np.float64)
    states = [np.asarray(H0, np.float64)]
    for t in range(X.shape[1]):
        pre = np.einsum("bd,du->bu", X[:, t], params["W_xh"])
        pre += np.einsum("bv,vu->bu", states[-1], params["W_hh"])
        states.append(np.tanh(pre + params["b_h"]))
    hidden = np.stack(states[1:], axis=1)  # (B, T, U)
    logits = np.einsum("btu,uq->btq", hidden, params["W_hq"]) + params["b_q"]
    return states, logits


def _reaches(t, s, tau, mistake):
    """Whether the loss term of step t (0-based) reaches step s <= t."""
    if mistake is RECURRENT_DROPPED:
        return s == t
    if tau is None or mistake is TRUNCATION_IGNORED:
        return True
    if mistake is PER_TERM_TRUNCATION:  # d2l 8.7.1.2: tau back from t
        return s > t - tau
    size = tau + 1 if mistake is TRUNCATION_OFF_BY_ONE else tau
    return s >= t // size * size  # back to the start of t's own chunk


def _shares(X, states, params, dO, tau, mistake=None):
    """{(t, s): [dW_xh, dW_hh, db_h]}: what the loss term of step t gives
    the recurrent weights at step s, in the order t = 0.., s = t, t-1, ...
    (one chain per loss term: the grader's derivation is independent of
    the sweep a solution runs)."""
    back = "bu,uv->bv" if mistake is NOT_TRANSPOSED else "bu,vu->bv"
    slope = 0 if mistake is TANH_WRONG_STATE else 1
    out = {}
    for t in range(X.shape[1]):
        g = np.einsum("bq,uq->bu", dO[:, t], params["W_hq"])
        for s in range(t, -1, -1):
            if not _reaches(t, s, tau, mistake):
                break
            if mistake is not NO_TANH_SLOPE:
                g = g * (1 - states[s + slope] ** 2)
            out[t, s] = [
                np.einsum("bd,bu->du", X[:, s], g),
                np.einsum("bv,bu->vu", states[s], g),
                np.einsum("bu->u", g),
            ]
            g = np.einsum(back, g, params["W_hh"])
    return out


@reference
def ref_clip(grads, theta):
    total = np.sqrt(sum(float((g * g).sum()) for g in grads.values()))
    factor = 1.0 if total <= theta else theta / total
    return {k: g * factor for k, g in grads.items()}


@reference
def ref_backward(X, H0, params, dO, tau=None, theta=None, mistake=None):
    """The five gradients, given dL/dlogits `dO` (B, T, Q)."""
    X, dO = np.asarray(X, np.float64), np.asarray(dO, np.float64)
    states, _ = ref_states(X, H0, params)
    shares = _shares(X, states, params, dO, tau, mistake)
    per_step = [[0.0, 0.0, 0.0] for _ in range(X.shape[1])]
    for (_, step), share in shares.items():  # summed over the loss terms
        per_step[step] = [
            a + b for a, b in zip(per_step[step], share, strict=True)
        ]
    if mistake is CLIP_BEFORE_SUM:
        per_step = [
            list(ref_clip(dict(zip(RECURRENT, s, strict=True)), theta).values())
            for s in per_step
        ]
    if mistake is NOT_ACCUMULATED:  # a reverse sweep: step 0's share is left
        recurrent = per_step[0]
    else:
        recurrent = [sum(s[i] for s in per_step) for i in range(3)]
    hidden = np.stack(states[1:], axis=1)
    grads = dict(zip(RECURRENT, recurrent, strict=True))
    grads["W_hq"] = np.einsum("btu,btq->uq", hidden, dO)
    grads["b_q"] = np.einsum("btq->q", dO)
    return grads if theta is None else ref_clip(grads, theta)


@reference
def ref_cross_entropy(logits, Y, mistake=None):
    """(mean loss over the B T tokens, dlogits)."""
    z = np.asarray(logits, np.float64)
    probs = softmax(z)
    onehot = np.eye(z.shape[-1])[np.asarray(Y)]
    loss = float(-(np.log(probs) * onehot).sum() / np.asarray(Y).size)
    n = len(z) if mistake is CE_BATCH_ONLY else np.asarray(Y).size
    return loss, (probs - onehot) / n


@reference
def ref_loss_centred(X, Y, H0, params, key):
    """d(mean cross-entropy)/d(params[key]) by centred differences of the
    float64 reference loss, of params[key]'s shape."""

    def loss(w):
        _, logits = ref_states(X, H0, {**params, key: w})
        return ref_cross_entropy(logits, Y)[0]

    return centred_differences(loss, params[key])


# ------------------------------------ float64 references (tf.GradientTape)
@reference
def tape_backward(X, H0, params, dO, tau=None):
    """The tape's gradients of sum(logits * dO); with tau, the state that
    enters each chunk of tau steps is a constant (a stop-gradient)."""
    import tensorflow as tf

    x = tf.constant(np.asarray(X, np.float64))

    def total(W_xh, W_hh, b_h, W_hq, b_q):
        h, out = tf.constant(np.asarray(H0, np.float64)), []
        for t in range(T):
            if tau is not None and t % tau == 0:
                h = tf.stop_gradient(h)  # a chunk begins
            h = tf.tanh(x[:, t] @ W_xh + h @ W_hh + b_h)
            out.append(h @ W_hq + b_q)
        return tf.stack(out, axis=1)  # (B, T, Q)

    grads = tape_gradients(total, [params[k] for k in KEYS], dO)
    return dict(zip(KEYS, grads, strict=True))


@reference
def tape_cross_entropy(logits, Y):
    """(TensorFlow's mean loss, the tape's dlogits)."""

    def loss(z):
        return mean_cross_entropy(z, Y)

    value = float(loss(np.asarray(logits, np.float64)))
    return value, tape_gradients(loss, (logits,))[0]


_diagnoses = partial(mistake_outputs, mistakes=MISTAKES)


# ------------------------------------------------------------------ probes
@lesson.probe
def run_forward(m, X, H0, params):
    logits, _ = m.rnn_forward(X, H0, params)
    return logits


@lesson.probe
def run_backward(m, X, H0, params, dO, tau, theta):
    _, cache = m.rnn_forward(X, H0, params)
    grads = m.rnn_backward(dO, cache, tau, theta)
    return {k: np.asarray(grads[k]) for k in KEYS}


@lesson.probe
def run_cross_entropy(m, logits, Y):
    loss, dlogits = m.sequence_cross_entropy(logits, Y)
    return float(loss), dlogits


@lesson.probe
def run_clip(m, grads, theta):
    return {
        k: np.asarray(v) for k, v in m.clip_by_global_norm(grads, theta).items()
    }


@lesson.probe
def run_loss_gradient(m, X, Y, H0, params, key):
    """The student's gradient of the loss by params[key]."""
    _, grads = m.rnn_loss_and_grads(X, Y, H0, params)
    return np.asarray(grads[key])


@lesson.probe
def run_errors(m, X, H0, params):
    _, cache = m.rnn_forward(X, H0, params)
    dO = np.zeros((B, T, Q))
    return value_errors(
        {
            "tau": lambda: m.rnn_backward(dO, cache, tau=0),
            "H0": lambda: m.rnn_forward(X, H0[:, :-1], params),
            "theta": lambda: m.clip_by_global_norm({"w": np.ones(2)}, -1.0),
            "logits": lambda: m.sequence_cross_entropy(
                np.zeros((B, Q)), np.zeros(B, "int64")
            ),
            "Y": lambda: m.sequence_cross_entropy(
                np.zeros((B, T, Q)), np.zeros((B, T + 1), "int64")
            ),
        }
    )


# ------------------------------------------------------------------ inputs
def _inputs(rng):
    """X (B, T, D), H0 (B, U), the weights (scaled so the tanh is neither
    saturated nor linear) and a cotangent dO (B, T, Q)."""
    params = {
        "W_xh": rng.standard_normal((D, U)) * 0.8,
        "W_hh": rng.standard_normal((U, U)) * 0.6,
        "b_h": rng.standard_normal(U) * 0.3,
        "W_hq": rng.standard_normal((U, Q)) * 0.8,
        "b_q": rng.standard_normal(Q) * 0.3,
    }
    X = rng.standard_normal((B, T, D))
    H0 = rng.standard_normal((B, U)) * 0.5
    return X, H0, params, rng.standard_normal((B, T, Q))


def _check_grads(got, X, H0, params, dO, tau, theta, mistakes, what):
    expected = ref_backward(X, H0, params, dO, tau, theta)
    tape = tape_backward(X, H0, params, dO, tau)
    if theta is not None:
        tape = ref_clip(tape, theta)
    for key in KEYS:
        expect_close(
            got[key],
            expected[key],
            say("l22.grad", what=what, key=key),
            tol=GRAD,
            diagnoses=_diagnoses(
                ref_backward,
                X,
                H0,
                params,
                dO,
                tau,
                theta,
                mistakes=mistakes,
                pick=lambda out, k=key: out[k],
                skip_right=True,
            ),
            hint=say("l22.grad_hint"),
        )
        expect_close(
            got[key],
            tape[key],
            say("l22.grad_tape", what=what, key=key),
            tol=GRAD,
        )


# ------------------------------------------------------------------ checks
def test_forward_matches_reference(rng):
    X, H0, params, _ = _inputs(rng)
    _, expected = ref_states(X, H0, params)
    expect_close(
        run_forward(X, H0, params),
        expected,
        say("l22.forward"),
        tol=GRAD,
        hint=say("l22.forward_hint"),
    )


@pytest.mark.points(2)
def test_sequence_cross_entropy(rng):
    logits = rng.standard_normal((B, T, Q)) * 2
    logits[0, 1] += 1e4  # stays finite
    Y = rng.integers(0, Q, size=(B, T))
    loss, dlogits = run_cross_entropy(logits, Y)
    ref_loss, ref_grad = ref_cross_entropy(logits, Y)
    tape_loss, tape_grad = tape_cross_entropy(logits, Y)
    expect_close(loss, ref_loss, say("l22.loss"), tol=GRAD)
    expect_close(loss, tape_loss, say("l22.loss_vs_tf"), tol=GRAD)
    expect_close(
        dlogits,
        ref_grad,
        say("l22.dlogits"),
        tol=GRAD,
        diagnoses=_diagnoses(
            ref_cross_entropy, logits, Y, mistakes=(CE_BATCH_ONLY,), part=1
        ),
        hint=say("l22.dlogits_hint"),
    )
    expect_close(dlogits, tape_grad, say("l22.dlogits_tape"), tol=GRAD)
    expect_value_errors(run_errors(*_inputs(rng)[:3]))


@pytest.mark.points(3)
def test_full_bptt(rng):
    X, H0, params, dO = _inputs(rng)
    got = run_backward(X, H0, params, dO, None, None)
    _check_grads(
        got, X, H0, params, dO, None, None, CHAIN_MISTAKES, say("l22.full")
    )


@pytest.mark.points(3)
def test_truncated_bptt(rng):
    X, H0, params, dO = _inputs(rng)
    got = run_backward(X, H0, params, dO, TAU, None)
    _check_grads(
        got,
        X,
        H0,
        params,
        dO,
        TAU,
        None,
        TRUNCATION_MISTAKES,
        say("l22.truncated", tau=TAU),
    )


def test_clip_by_global_norm(rng):
    grads = {"a": rng.standard_normal((3, 2)), "b": rng.standard_normal(5)}
    norm = np.sqrt(sum(np.sum(g**2) for g in grads.values()))
    small = {k: g * (0.8 / norm) for k, g in grads.items()}  # ||g|| = 0.8
    for g, theta in ((grads, 0.5), (grads, 100.0), (small, 0.5)):
        expect_close(
            run_clip(g, theta)["a"],
            ref_clip(g, theta)["a"],
            say(
                "l22.clip",
                theta=theta,
                norm=f"{np.sqrt(sum(np.sum(x**2) for x in g.values())):.3g}",
            ),
            tol=GRAD,
            hint=say("l22.clip_hint"),
        )
    zeros = {"a": np.zeros((3, 2)), "b": np.zeros(5)}
    expect_close(run_clip(zeros, 1.0)["b"], zeros["b"], say("l22.clip_zeros"))


@pytest.mark.points(2)
def test_clipping_after_summing(rng):
    X, H0, params, dO = _inputs(rng)
    theta = 0.2
    got = run_backward(X, H0, params, dO, None, theta)
    _check_grads(
        got,
        X,
        H0,
        params,
        dO,
        None,
        theta,
        (CLIP_BEFORE_SUM, *CHAIN_MISTAKES),
        say("l22.clipped", theta=theta),
    )


@pytest.mark.parametrize("key", ["W_hh", "b_h"])
def test_gradient_matches_centred_differences(rng, key):
    X, H0, params, _ = _inputs(rng)
    Y = rng.integers(0, Q, size=(B, T))
    expect_close(
        run_loss_gradient(X, Y, H0, params, key),
        ref_loss_centred(X, Y, H0, params, key),
        say("l22.centred", key=key),
        tol=GRAD,
    )
