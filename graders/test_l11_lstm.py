"""Grader for lesson 11: the LSTM cell.

Sizes: B=2 sequences, T=3 steps, D=5 input features, U=4 hidden units;
every axis has its own size, so a transpose cannot pass unnoticed.
Conventions: blocks [i | f | c | o] as Keras, `c = f*c_prev + i*c_cand`,
`h = o*tanh(c)`, states `[h, c]`, forget-gate bias initialised to 1.
The cell is checked against a float64 NumPy reference and against
`keras.layers.LSTM` with the same weights.
"""

from functools import partial

import numpy as np
import pytest

from graders.lib.contract import centred_differences
from graders.lib.contract import contract_weights
from graders.lib.contract import expect_bad_values_named
from graders.lib.contract import expect_gradient
from graders.lib.contract import expect_layer_contract
from graders.lib.conventions import book_vs_course
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

lesson = Lesson("l11_lstm")
B, T, D, U = 2, 3, 5, 4

# ---------------------------------------------------------------- mistakes
FORGET_MISSING = Mistake(
    "forget_gate_missing",
    "the old memory is added without the forget gate (c = c_prev + "
    "i*c_cand), so the cell can never forget: c = f*c_prev + i*c_cand.",
)
MEMORY_DROPPED = Mistake(
    "memory_not_carried",
    "the old memory is dropped (c = i*c_cand): the memory cell must carry "
    "f*c_prev forward, c = f*c_prev + i*c_cand.",
)
OUTPUT_NO_TANH = Mistake(
    "output_without_tanh",
    "the hidden state uses the memory itself (h = o*c); squash it first, "
    "h = o*tanh(c), so h stays in (-1, 1).",
)
IF_SWAPPED = Mistake(
    "input_forget_swapped",
    "the input and forget gate blocks are exchanged: the columns are "
    "ordered [i | f | c | o], input gate first, as in Keras.",
)
D2L_GATE_ORDER = Mistake(
    "gates_in_d2l_order",
    book_vs_course(
        "the candidate and output gate blocks are exchanged",
        "lists the LSTM's parameters i, f, o, c (W_xi, W_xf, W_xo, W_xc)",
        "slices the (B, 4U) pre-activations [i | f | c | o]",
        "that is the order of Keras's LSTMCell kernels, so the weights "
        "transfer to keras.layers.LSTM",
    ),
)
MISTAKES = (
    FORGET_MISSING,
    MEMORY_DROPPED,
    OUTPUT_NO_TANH,
    IF_SWAPPED,
    D2L_GATE_ORDER,
)


# --------------------------------------------------- float64 references


@reference
def ref_lstm_step(x, h, c, kernel, recurrent, bias, mistake=None):
    """One step in float64: x (B, D), h and c (B, U) -> (h_new, c_new)."""
    x, h, c = (np.asarray(a, np.float64) for a in (x, h, c))
    pre = x @ kernel + h @ recurrent + np.asarray(bias, np.float64)
    pre_i, pre_f, pre_c, pre_o = np.split(pre, 4, axis=-1)
    if mistake is IF_SWAPPED:
        pre_i, pre_f = pre_f, pre_i
    if mistake is D2L_GATE_ORDER:
        pre_c, pre_o = pre_o, pre_c
    i, f, o = sigmoid(pre_i), sigmoid(pre_f), sigmoid(pre_o)
    c_cand = np.tanh(pre_c)
    if mistake is FORGET_MISSING:
        c_new = c + i * c_cand
    elif mistake is MEMORY_DROPPED:
        c_new = i * c_cand
    else:
        c_new = f * c + i * c_cand
    h_new = o * c_new if mistake is OUTPUT_NO_TANH else o * np.tanh(c_new)
    return h_new, c_new


@reference
def ref_step_gradient(wrt, x, h, c, weights, probe_weights):
    """d [sum(h_new * P0) + sum(c_new * P1)] / d(`wrt`: "inputs" x,
    "hidden" h or "memory" c): centred differences of the float64 step."""

    def loss(v):
        args = {"inputs": (v, h, c), "hidden": (x, v, c), "memory": (x, h, v)}
        h_new, c_new = ref_lstm_step(*args[wrt], *weights)
        return np.sum(h_new * probe_weights[0]) + np.sum(
            c_new * probe_weights[1]
        )

    return centred_differences(
        loss, {"inputs": x, "hidden": h, "memory": c}[wrt]
    )


@reference
def ref_lstm(x, h0, c0, weights, mistake=None):
    """A sequence: x (B, T, D) -> (outputs (B, T, U), h (B, U), c (B, U))."""
    h, c = h0, c0
    outputs = []
    for t in range(x.shape[1]):
        h, c = ref_lstm_step(x[:, t], h, c, *weights, mistake=mistake)
        outputs.append(h)
    return np.stack(outputs, axis=1), h, c


_diagnoses = partial(mistake_outputs, mistakes=MISTAKES)


@reference
def keras_lstm(x, h0, c0, weights):
    """The judge's own run of keras.layers.LSTM with the same weights."""
    import keras

    layer = keras.layers.LSTM(U, return_sequences=True, return_state=True)
    build_on_first_step(layer, x, initial_state=[h0, c0])
    layer.set_weights(weights)
    outputs, h, c = layer(x, initial_state=[h0, c0])
    return np.asarray(outputs), np.asarray(h), np.asarray(c)


# ------------------------------------------------------------------ probes
@lesson.probe
def run_step(m, x, h, c, weights=None):
    cell = m.LSTMCell(U)
    cell(x, [h, c])  # build
    if weights is not None:
        cell.set_weights(weights)
    h_new, states = cell(x, [h, c])
    return h_new, list(states)


@lesson.probe
def run_fresh_cell_without_kernels(m, x, h, c):
    """Default initial bias, kernels zeroed: only the bias drives the gates."""
    cell = m.LSTMCell(U)
    cell(x, [h, c])  # build
    cell.kernel.assign(np.zeros(cell.kernel.shape, "float32"))
    cell.recurrent_kernel.assign(
        np.zeros(cell.recurrent_kernel.shape, "float32")
    )
    h_new, states = cell(x, [h, c])
    return h_new, list(states), cell.bias


@lesson.probe
def run_sequence(m, x, h0, c0, weights):
    import keras

    rnn = keras.layers.RNN(
        m.LSTMCell(U), return_sequences=True, return_state=True
    )
    build_on_first_step(rnn, x, initial_state=[h0, c0])
    rnn.set_weights(weights)
    outputs, h, c = rnn(x, initial_state=[h0, c0])
    return outputs, h, c


@lesson.probe
def run_contract(m, x, h, c):
    import keras

    facts = layer_contract(lambda: m.LSTMCell(U), [x, [h, c]], symbolic=None)
    rnn = keras.layers.RNN(m.LSTMCell(U))
    facts["rnn_symbolic_shape"] = tuple(rnn(keras.Input((None, D))).shape)
    facts["errors"] = value_errors(
        {str(v): (lambda v=v: m.LSTMCell(v)) for v in (0, -3, 2.5)}
    )
    return facts


@lesson.probe
def run_gradient(m, wrt, x, h, c, weights, probe_weights):
    import keras

    cell = m.LSTMCell(U, dtype="float64")
    cell(x, [h, c])  # build
    cell.set_weights(weights)

    def f(v):
        args = {"inputs": (v, h, c), "hidden": (x, v, c), "memory": (x, h, v)}
        xx, hh, cc = args[wrt]
        h_new, (_, c_new) = cell(xx, [hh, cc])
        return keras.ops.sum(h_new * probe_weights[0]) + keras.ops.sum(
            c_new * probe_weights[1]
        )

    return tape_gradient(f, {"inputs": x, "hidden": h, "memory": c}[wrt])


# ------------------------------------------------------------------ inputs
def _weights(rng, scale=0.5):
    return [
        (rng.standard_normal((D, 4 * U)) * scale).astype("float32"),
        (rng.standard_normal((U, 4 * U)) * scale).astype("float32"),
        (rng.standard_normal(4 * U) * scale).astype("float32"),
    ]


def _state(rng, scale=1.0):
    h = rng.uniform(-0.9, 0.9, (B, U)).astype("float32")
    c = (rng.standard_normal((B, U)) * scale).astype("float32")
    return h, c


# ------------------------------------------------------------------ checks
@pytest.mark.parametrize("batch,d", [(B, D), (3, 7)], ids=["B2_D5", "B3_D7"])
def test_step_shapes(rng, batch, d):
    x = rng.standard_normal((batch, d)).astype("float32")
    h = rng.standard_normal((batch, U)).astype("float32")
    c = rng.standard_normal((batch, U)).astype("float32")
    h_new, states = run_step(x, h, c)
    expect_shape(h_new, (batch, U), say("l11.output"))
    expect(
        len(states) == 2,
        say("l11.two_states", got=len(states)),
    )
    expect_shape(states[1], (batch, U), say("l11.memory"))
    expect_close(
        states[0],
        h_new,
        say("l11.state_vs_output"),
        hint=say("l11.state_vs_output_hint"),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("start", ["zeros", "random"], ids=["state0", "state"])
def test_sequence_matches_reference(rng, start):
    x = rng.standard_normal((B, T, D)).astype("float32")
    h0, c0 = _state(rng)
    if start == "zeros":
        h0, c0 = np.zeros_like(h0), np.zeros_like(c0)
    weights = _weights(rng)
    outputs, h, c = run_sequence(x, h0, c0, weights)
    args = (x, h0, c0, weights)
    ref_outputs, ref_h, ref_c = ref_lstm(*args)
    expect_close(
        outputs,
        ref_outputs,
        say("l11.outputs"),
        diagnoses=_diagnoses(ref_lstm, *args, part=0),
    )
    expect_close(
        c,
        ref_c,
        say("l11.final_memory"),
        diagnoses=_diagnoses(ref_lstm, *args, part=2),
    )


@pytest.mark.points(2)
def test_matches_keras_lstm_after_weight_transfer(rng):
    x = rng.standard_normal((B, T, D)).astype("float32")
    h0, c0 = _state(rng)
    weights = _weights(rng)
    outputs, h, c = run_sequence(x, h0, c0, weights)
    keras_outputs, keras_h, keras_c = keras_lstm(x, h0, c0, weights)
    expect_close(
        outputs,
        keras_outputs,
        say("l11.vs_keras"),
        diagnoses=_diagnoses(ref_lstm, x, h0, c0, weights, part=0),
        hint=say("l11.vs_keras_hint"),
    )
    expect_close(h, keras_h, say("l11.vs_keras_state"))
    expect_close(c, keras_c, say("l11.vs_keras_memory"))


def test_forget_open_input_closed_keeps_the_memory(rng):
    """F near 1 and I near 0: C_{t-1} passes through every step unchanged."""
    x = rng.standard_normal((B, T, D)).astype("float32")
    h0, c0 = _state(rng)
    weights = _weights(rng)
    weights[2][:U] = -30.0  # input gate closed
    weights[2][U : 2 * U] = 30.0  # forget gate open
    _, _, c = run_sequence(x, h0, c0, weights)
    expect_close(
        c,
        c0,
        say("l11.carry"),
        diagnoses=_diagnoses(ref_lstm, x, h0, c0, weights, part=2),
        hint=say("l11.carry_hint"),
    )


def test_fresh_cell_remembers_by_default(rng):
    """The forget-gate bias starts at 1: with zero kernels a fresh cell keeps
    sigmoid(1) = 73% of its memory and writes nothing (tanh(0) = 0)."""
    x = rng.standard_normal((B, D)).astype("float32")
    h, c = _state(rng)
    h_new, states, bias = run_fresh_cell_without_kernels(x, h, c)
    expect_close(
        bias,
        np.concatenate([np.zeros(U), np.ones(U), np.zeros(2 * U)]),
        say("l11.initial_bias"),
    )
    zero = [np.zeros((D, 4 * U)), np.zeros((U, 4 * U)), bias]
    ref_h, ref_c = ref_lstm_step(x, h, c, *zero)
    expect_close(
        states[1],
        ref_c,
        say("l11.fresh_memory"),
        diagnoses=_diagnoses(ref_lstm_step, x, h, c, *zero, part=1),
        hint=say("l11.fresh_memory_hint"),
    )
    expect_close(
        h_new,
        ref_h,
        say("l11.fresh_state"),
        diagnoses=_diagnoses(ref_lstm_step, x, h, c, *zero, part=0),
        hint=say("l11.fresh_state_hint"),
    )


def test_hidden_state_stays_in_minus_one_one(rng):
    """H_t = O_t * tanh(C_t) is in (-1, 1) even when the memory is large."""
    x = rng.standard_normal((B, D)).astype("float32")
    h, _ = _state(rng)
    c = np.where(rng.random((B, U)) < 0.5, -6.0, 6.0).astype("float32")
    weights = _weights(rng)
    weights[2][3 * U :] = 30.0  # output gate open
    h_new, _ = run_step(x, h, c, weights)
    expect(
        np.all(np.abs(h_new) < 1.0),
        say("l11.bounded", largest=f"{np.abs(h_new).max():.3g}"),
        got=h_new,
        diagnoses=_diagnoses(ref_lstm_step, x, h, c, *weights, part=0),
    )


def test_keras_layer_contract(rng):
    x = rng.standard_normal((B, D)).astype("float32")
    h, c = _state(rng)
    facts = run_contract(x, h, c)
    # bound to the reference on the weights the cell was built with
    weights = contract_weights(
        facts, "LSTMCell", [(D, 4 * U), (U, 4 * U), (4 * U,)]
    )
    expect_layer_contract(
        facts,
        "LSTMCell",
        output_shape=(B, U),
        trainable=3,
        detail=" (kernel, recurrent_kernel, bias)",
        expected=ref_lstm_step(x, h, c, *weights)[0],
    )
    expect_shape(
        facts["rnn_symbolic_shape"],
        (None, U),
        say("l11.rnn_symbolic"),
    )
    expect_bad_values_named(facts["errors"], "LSTMCell", "units")


@pytest.mark.points(2)
@pytest.mark.parametrize("wrt", ["inputs", "hidden", "memory"])
def test_gradient_matches_centred_differences(rng, wrt):
    x = rng.standard_normal((B, D))
    h = rng.uniform(-0.9, 0.9, (B, U))
    c = rng.standard_normal((B, U))
    weights = [w.astype("float64") for w in _weights(rng)]
    probe_weights = rng.standard_normal((2, B, U))
    got = run_gradient(wrt, x, h, c, weights, probe_weights)
    expect_gradient(
        got,
        ref_step_gradient(wrt, x, h, c, weights, probe_weights),
        say("l11.gradient", wrt=wrt),
        tol=GRAD,
    )
