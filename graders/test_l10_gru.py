"""Grader for lesson 10: the GRU cell.

Sizes: B=2 sequences, T=3 steps, D=5 input features, U=4 hidden units;
every axis has its own size, so a transpose cannot pass unnoticed.
Conventions: reset gate before the recurrent matmul (Keras
`GRU(reset_after=False)`), blocks [z | r | h], `h = z*h_prev + (1-z)*h_cand`.
The cell is checked against a float64 NumPy reference and against
`keras.layers.GRU(reset_after=False)` with the same weights.
"""

from functools import partial

import numpy as np
import pytest

from graders.lib.contract import centred_differences
from graders.lib.contract import contract_weights
from graders.lib.contract import expect_bad_values_named
from graders.lib.contract import expect_gradient
from graders.lib.contract import expect_layer_contract
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import expect_shape
from graders.lib.judge import mistake_outputs
from graders.lib.messages import say
from graders.lib.probes import build_on_first_step
from graders.lib.probes import layer_contract
from graders.lib.probes import tape_gradient
from graders.lib.probes import value_errors
from graders.lib.references import sigmoid
from graders.lib.tolerances import GRAD
from m2t.grading.probe import Lesson

lesson = Lesson("l10_gru")
B, T, D, U = 2, 3, 5, 4

# ---------------------------------------------------------------- mistakes
UPDATE_INVERTED = Mistake(
    "update_gate_inverted",
    "the update gate is used the other way round (h = (1-z)*h_prev + "
    "z*h_cand): z near 1 must KEEP the old state, h = z*h_prev + "
    "(1-z)*h_cand.",
)
RESET_AFTER = Mistake(
    "reset_after_matmul",
    "the reset gate multiplies h_prev @ W_hh (Keras's reset_after=True "
    "form); this lesson applies it before the matmul: (r * h_prev) @ W_hh.",
)
GATES_SWAPPED = Mistake(
    "gates_swapped",
    "the z and r blocks are exchanged: the weight columns are ordered "
    "[z | r | h] (update gate first), as in Keras.",
)
MISTAKES = (UPDATE_INVERTED, RESET_AFTER, GATES_SWAPPED)


# --------------------------------------------------- float64 references


@reference
def ref_gru_step(x, h, kernel, recurrent, bias, mistake=None):
    """One step in float64: x (B, D), h (B, U) -> (B, U)."""
    x, h = np.asarray(x, np.float64), np.asarray(h, np.float64)
    w_z, w_r, w_h = np.split(np.asarray(kernel, np.float64), 3, axis=-1)
    u_z, u_r, u_h = np.split(np.asarray(recurrent, np.float64), 3, axis=-1)
    b_z, b_r, b_h = np.split(np.asarray(bias, np.float64), 3, axis=-1)
    if mistake is GATES_SWAPPED:
        w_z, w_r, u_z, u_r, b_z, b_r = w_r, w_z, u_r, u_z, b_r, b_z
    z = sigmoid(x @ w_z + h @ u_z + b_z)
    r = sigmoid(x @ w_r + h @ u_r + b_r)
    if mistake is RESET_AFTER:
        h_cand = np.tanh(x @ w_h + r * (h @ u_h) + b_h)
    else:
        h_cand = np.tanh(x @ w_h + (r * h) @ u_h + b_h)
    if mistake is UPDATE_INVERTED:
        return (1.0 - z) * h + z * h_cand
    return z * h + (1.0 - z) * h_cand


@reference
def ref_gru(x, h0, weights, mistake=None):
    """A whole sequence: x (B, T, D), h0 (B, U) -> ((B, T, U), (B, U))."""
    h = np.asarray(h0, np.float64)
    outputs = []
    for t in range(x.shape[1]):
        h = ref_gru_step(x[:, t], h, *weights, mistake=mistake)
        outputs.append(h)
    return np.stack(outputs, axis=1), h


_diagnoses = partial(mistake_outputs, mistakes=MISTAKES)


@reference
def ref_step_gradient(wrt, x, h, weights, probe_weights):
    """d sum(h_new * probe_weights) / d(`wrt`: "inputs" x or "hidden" h):
    centred differences of the float64 step, of x's or h's shape."""

    def loss(v):
        args = (v, h) if wrt == "inputs" else (x, v)
        return np.sum(ref_gru_step(*args, *weights) * probe_weights)

    return centred_differences(loss, x if wrt == "inputs" else h)


@reference
def keras_gru(x, h0, weights):
    """The judge's own run of keras.layers.GRU(reset_after=False)."""
    import keras

    layer = keras.layers.GRU(
        U, reset_after=False, return_sequences=True, return_state=True
    )
    build_on_first_step(layer, x, initial_state=[h0])
    layer.set_weights(weights)
    outputs, h = layer(x, initial_state=[h0])
    return np.asarray(outputs), np.asarray(h)


# ------------------------------------------------------------------ probes
@lesson.probe
def run_step(m, x, h):
    cell = m.GRUCell(U)
    h_new, states = cell(x, [h])
    return h_new, list(states)


@lesson.probe
def run_step_with_weights(m, x, h, weights):
    cell = m.GRUCell(U)
    cell(x, [h])  # build
    cell.set_weights(weights)
    h_new, states = cell(x, [h])
    return h_new, list(states)


@lesson.probe
def run_sequence(m, x, h0, weights):
    import keras

    rnn = keras.layers.RNN(
        m.GRUCell(U), return_sequences=True, return_state=True
    )
    build_on_first_step(rnn, x, initial_state=[h0])
    rnn.set_weights(weights)
    outputs, h = rnn(x, initial_state=[h0])
    return outputs, h


@lesson.probe
def run_contract(m, x, h):
    import keras

    facts = layer_contract(lambda: m.GRUCell(U), [x, h], symbolic=[(D,), (U,)])
    rnn = keras.layers.RNN(m.GRUCell(U))
    facts["rnn_symbolic_shape"] = tuple(rnn(keras.Input((None, D))).shape)
    facts["errors"] = value_errors(
        {str(v): (lambda v=v: m.GRUCell(v)) for v in (0, -3, 2.5)}
    )
    return facts


@lesson.probe
def run_gradient(m, wrt, x, h, weights, probe_weights):
    import keras

    cell = m.GRUCell(U, dtype="float64")
    cell(x, [h])  # build
    cell.set_weights(weights)

    def f(v):
        args = (v, h) if wrt == "inputs" else (x, v)
        h_new, _ = cell(args[0], [args[1]])
        return keras.ops.sum(h_new * probe_weights)

    return tape_gradient(f, x if wrt == "inputs" else h)


# ------------------------------------------------------------------ inputs
def _weights(rng, scale=0.5):
    return [
        (rng.standard_normal((D, 3 * U)) * scale).astype("float32"),
        (rng.standard_normal((U, 3 * U)) * scale).astype("float32"),
        (rng.standard_normal(3 * U) * scale).astype("float32"),
    ]


def _with_gate_bias(weights, z=None, r=None):
    """The same weights with the z and/or r bias block set to a constant."""
    bias = weights[2].copy()
    if z is not None:
        bias[:U] = z
    if r is not None:
        bias[U : 2 * U] = r
    return [weights[0], weights[1], bias]


def _sequence(rng):
    x = rng.standard_normal((B, T, D)).astype("float32")
    h0 = rng.standard_normal((B, U)).astype("float32")
    return x, h0


# ------------------------------------------------------------------ checks
@pytest.mark.parametrize("batch,d", [(B, D), (3, 7)], ids=["B2_D5", "B3_D7"])
def test_step_shapes(rng, batch, d):
    x = rng.standard_normal((batch, d)).astype("float32")
    h = rng.standard_normal((batch, U)).astype("float32")
    h_new, states = run_step(x, h)
    expect_shape(h_new, (batch, U), say("l10.output"))
    expect(len(states) == 1, say("l10.one_state", got=len(states)))
    expect_close(
        states[0],
        h_new,
        say("l10.state_vs_output"),
        hint=say("l10.state_vs_output_hint"),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("start", ["zeros", "random"], ids=["h0_zero", "h0"])
def test_sequence_matches_reference(rng, start):
    x, h0 = _sequence(rng)
    if start == "zeros":
        h0 = np.zeros_like(h0)
    weights = _weights(rng)
    outputs, h = run_sequence(x, h0, weights)
    ref_outputs, ref_h = ref_gru(x, h0, weights)
    expect_close(
        outputs,
        ref_outputs,
        say("l10.outputs"),
        diagnoses=_diagnoses(ref_gru, x, h0, weights, part=0),
    )
    expect_close(
        h,
        ref_h,
        say("l10.final_state"),
        diagnoses=_diagnoses(ref_gru, x, h0, weights, part=1),
    )


@pytest.mark.points(2)
def test_matches_keras_gru_after_weight_transfer(rng):
    x, h0 = _sequence(rng)
    weights = _weights(rng)
    outputs, h = run_sequence(x, h0, weights)
    keras_outputs, keras_h = keras_gru(x, h0, weights)
    expect_close(
        outputs,
        keras_outputs,
        say("l10.vs_keras"),
        diagnoses=_diagnoses(ref_gru, x, h0, weights, part=0),
        hint=say("l10.vs_keras_hint"),
    )
    expect_close(h, keras_h, say("l10.vs_keras_state"))


def test_update_gate_open_keeps_the_state(rng):
    """Z near 1 (bias +30) copies H_{t-1} forward unchanged: the memory."""
    x, h0 = _sequence(rng)
    weights = _with_gate_bias(_weights(rng), z=30.0)
    _, h = run_sequence(x, h0, weights)
    expect_close(
        h,
        h0,
        say("l10.update_open"),
        diagnoses=_diagnoses(ref_gru, x, h0, weights, part=1),
        hint=say("l10.update_open_hint"),
    )


def test_reset_and_update_closed_forget_the_past(rng):
    """R near 0 and Z near 0: H_t = tanh(X_t W_xh + b_h), whatever H_{t-1}."""
    x = rng.standard_normal((B, D)).astype("float32")
    h = rng.standard_normal((B, U)).astype("float32")
    weights = _with_gate_bias(_weights(rng), z=-30.0, r=-30.0)
    h_new, _ = run_step_with_weights(x, h, weights)
    w_h = weights[0][:, 2 * U :].astype(np.float64)
    expected = np.tanh(x @ w_h + weights[2][2 * U :])
    expect_close(
        h_new,
        expected,
        say("l10.gates_closed"),
        diagnoses=_diagnoses(ref_gru_step, x, h, *weights),
        hint=say("l10.gates_closed_hint"),
    )


def test_keras_layer_contract(rng):
    x = rng.standard_normal((B, D)).astype("float32")
    h = rng.standard_normal((B, U)).astype("float32")
    facts = run_contract(x, h)
    # bound to the reference on the weights the cell was built with
    weights = contract_weights(
        facts, "GRUCell", [(D, 3 * U), (U, 3 * U), (3 * U,)]
    )
    expect_layer_contract(
        facts,
        "GRUCell",
        output_shape=(B, U),
        symbolic_shape=(None, U),
        trainable=3,
        detail=" (kernel, recurrent_kernel, bias)",
        expected=ref_gru_step(x, h, *weights),
    )
    expect_shape(
        facts["rnn_symbolic_shape"],
        (None, U),
        say("l10.rnn_symbolic"),
    )
    expect_bad_values_named(facts["errors"], "GRUCell", "units")


@pytest.mark.points(2)
@pytest.mark.parametrize("wrt", ["inputs", "state"])
def test_gradient_matches_centred_differences(rng, wrt):
    x = rng.standard_normal((B, D))
    h = rng.standard_normal((B, U))
    weights = [w.astype("float64") for w in _weights(rng)]
    probe_weights = rng.standard_normal((B, U))
    got = run_gradient(wrt, x, h, weights, probe_weights)
    expect_gradient(
        got,
        ref_step_gradient(wrt, x, h, weights, probe_weights),
        say("l10.gradient", wrt=wrt),
        tol=GRAD,
    )
