"""Grader for lesson 12: stacked (deep) and bidirectional RNNs.

Sizes: B=2 sequences, T=5 steps, D=3 input features, U=4 hidden units,
L=3 layers; every axis has its own size. The float64 NumPy references use
the plain tanh RNN (cell="rnn"); the GRU and LSTM versions are checked
against Keras's own `RNN(StackedRNNCells(...))` and `Bidirectional(...)`
with the same weights.
Conventions: every layer reads the whole output sequence of the one below;
the bidirectional output is [forward, backward] on the last axis, with the
backward half re-aligned so position t holds the state after x_T ... x_t.
"""

from functools import partial

import numpy as np
import pytest

from graders.lib.contract import centred_differences
from graders.lib.contract import contract_weights
from graders.lib.contract import expect_gradient
from graders.lib.contract import expect_layer_contract
from graders.lib.contract import expect_value_errors
from graders.lib.dropout import nearest_dropped
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import expect_shape
from graders.lib.judge import mistake_outputs
from graders.lib.judge import stack_same_shape
from graders.lib.messages import say
from graders.lib.probes import build_on_first_step
from graders.lib.probes import layer_contract
from graders.lib.probes import tape_gradient
from graders.lib.probes import value_errors
from graders.lib.tolerances import EXACT
from graders.lib.tolerances import GRAD
from m2t.grading.probe import Lesson

lesson = Lesson("l12_deep_bidirectional_rnn")
B, T, D, U, L = 2, 5, 3, 4, 3
BLOCKS = {"rnn": 1, "gru": 3, "lstm": 4}  # weight blocks per cell type

# ---------------------------------------------------------------- mistakes
ONLY_LAST_STATE = Mistake(
    "only_last_state_fed",
    "each layer passes only its last hidden state (repeated) to the next "
    "layer; the next layer must read the whole output sequence, the hidden "
    "state at every step.",
)
NOT_RE_REVERSED = Mistake(
    "backward_not_re_reversed",
    "the backward RNN's outputs are left in reversed order: flip them back "
    "along the time axis so that position t holds the state after reading "
    "x_T ... x_t.",
)
RUNS_FORWARD = Mistake(
    "backward_runs_forward",
    "the backward RNN reads the sequence in its original order: give it "
    "ops.flip(inputs, axis=1), then flip its outputs back.",
)
DIRECTIONS_SWAPPED = Mistake(
    "directions_swapped",
    "the halves are concatenated as [backward, forward]; the convention "
    "(as keras.layers.Bidirectional) is [forward, backward].",
)
DROPOUT_ON_INPUTS = Mistake(
    "dropout_on_inputs",
    "dropout acts on what every layer reads, the raw inputs included; it "
    "belongs only between layers: on each layer's output sequence before "
    "the next layer reads it.",
)
DROPOUT_ON_TOP = Mistake(
    "dropout_on_top_output",
    "the returned outputs are the top layer's sequence after dropout; "
    "dropout acts only between layers (as d2l's nn.GRU(dropout=...)), "
    "return the top layer's outputs as they are.",
)
MASK_ONLY_BOTTOM = Mistake(
    "mask_only_bottom_layer",
    "only the bottom layer gets the padding mask, so the layers above read "
    "the padded steps and their states move past the sequence's end: pass "
    "mask to every layer.",
)
MASK_NOT_REVERSED = Mistake(
    "backward_mask_not_reversed",
    "the backward RNN reads the reversed inputs with the mask in its "
    "original order, so it reads the padding and skips real steps: flip "
    "the mask along the time axis together with the inputs.",
)
BACKWARD_INIT_IGNORED = Mistake(
    "backward_ignores_initial_state",
    "the backward RNN starts from zeros: it starts from initial_state[1], "
    "as the forward one from initial_state[0].",
)
MISTAKES = (
    ONLY_LAST_STATE,
    NOT_RE_REVERSED,
    RUNS_FORWARD,
    DIRECTIONS_SWAPPED,
    MASK_ONLY_BOTTOM,
    DROPOUT_ON_INPUTS,
    DROPOUT_ON_TOP,
    MASK_NOT_REVERSED,
    BACKWARD_INIT_IGNORED,
)
STACK_MISTAKES = (ONLY_LAST_STATE, MASK_ONLY_BOTTOM)  # ref_stacked's
BIDIRECTIONAL_MISTAKES = (NOT_RE_REVERSED, RUNS_FORWARD, DIRECTIONS_SWAPPED)


# --------------------------------------------------- float64 references
@reference
def ref_rnn(x, h0, weights, mask=None):
    """tanh RNN (keras SimpleRNN): x (..., T, D) -> ((..., T, U), (..., U)).

    mask (B, T): at a False step the state (and output) stays the previous
    one, as Keras's recurrent layers do."""
    kernel, recurrent, bias = (np.asarray(w, np.float64) for w in weights)
    h = np.zeros((*x.shape[:-2], kernel.shape[1])) if h0 is None else h0
    outputs = []
    for t in range(x.shape[-2]):
        new = np.tanh(x[..., t, :] @ kernel + h @ recurrent + bias)
        h = new if mask is None else np.where(mask[:, t, None], new, h)
        outputs.append(h)
    return np.stack(outputs, axis=-2), h


@reference
def ref_stacked(x, weights, initial_state=None, mask=None, mistake=None):
    """weights: 3 per layer, flat. -> (top outputs (B, T, U), [L x (B, U)])."""
    inputs, states = np.asarray(x, np.float64), []
    for i in range(len(weights) // 3):
        h0 = None if initial_state is None else initial_state[i]
        seen = None if mistake is MASK_ONLY_BOTTOM and i else mask
        outputs, h = ref_rnn(inputs, h0, weights[3 * i : 3 * i + 3], seen)
        states.append(h)
        inputs = outputs
        if mistake is ONLY_LAST_STATE:
            inputs = np.repeat(outputs[:, -1:], outputs.shape[1], axis=1)
    return outputs, states


@reference
def ref_bidirectional(x, weights, initial_state=None, mask=None, mistake=None):
    """weights: forward (3) then backward (3) -> ((B, T, 2U), [h->, h<-]);
    initial_state: None or [h->_0, h<-_0]; mask: None or (B, T)."""
    x = np.asarray(x, np.float64)
    h0 = [None, None] if initial_state is None else list(initial_state)
    if mistake is BACKWARD_INIT_IGNORED:
        h0[1] = None
    forward, h_forward = ref_rnn(x, h0[0], weights[:3], mask)
    backward_in = x if mistake is RUNS_FORWARD else x[:, ::-1]
    backward_mask = mask
    if mask is not None and mistake is not MASK_NOT_REVERSED:
        backward_mask = mask[:, ::-1]
    backward, h_backward = ref_rnn(
        backward_in, h0[1], weights[3:], backward_mask
    )
    if mistake is not NOT_RE_REVERSED:
        backward = backward[:, ::-1]
    halves = [forward, backward]
    if mistake is DIRECTIONS_SWAPPED:
        halves = halves[::-1]
    return np.concatenate(halves, axis=-1), [h_forward, h_backward]


@reference
def ref_input_gradient(kind, x, weights, probe_weights):
    """d sum(outputs * probe_weights) / d x for the 2-layer "stacked" or
    the "bidirectional" tanh RNN: centred differences of the float64
    reference, of x's shape (B, T, D)."""
    ref = ref_stacked if kind == "stacked" else ref_bidirectional

    def loss(v):
        return np.sum(ref(v, weights)[0] * probe_weights)

    return centred_differences(loss, x)


_diagnoses = partial(mistake_outputs, mistakes=STACK_MISTAKES)


# ------------------------------------------------------------------ probes
@lesson.probe
def run_stacked(m, cell, x, weights, initial_state=None, mask=None):
    layer = m.StackedRNN(L, U, cell=cell)
    build_on_first_step(layer, x)
    layer.set_weights(weights)
    outputs, states = layer(x, initial_state=initial_state, mask=mask)
    return outputs, list(states)


@lesson.probe
def run_stacked_training(m, x, weights, num_layers):
    layer = m.StackedRNN(num_layers, U, cell="rnn", dropout=0.5)
    build_on_first_step(layer, x)
    layer.set_weights(weights)
    outputs, states = layer(x, training=True)
    return outputs, list(states)


@lesson.probe
def run_stacked_dropout(m, x, weights):
    layer = m.StackedRNN(L, U, cell="rnn", dropout=0.5)
    build_on_first_step(layer, x)
    layer.set_weights(weights)
    return (
        layer(x, training=False)[0],
        layer(x, training=False)[0],
        layer(x, training=True)[0],
    )


@lesson.probe
def run_bidirectional(m, cell, x, weights, mask=None, initial_state=None):
    layer = m.BidirectionalRNN(U, cell=cell)
    build_on_first_step(layer, x)
    layer.set_weights(weights)
    outputs, states = layer(x, initial_state=initial_state, mask=mask)
    return outputs, list(states)


@lesson.probe
def run_contract(m, kind, x):
    if kind == "stacked":
        make = lambda: m.StackedRNN(2, U, cell="rnn", dropout=0.1)  # noqa: E731
        n_weights = 3 * 2
    else:
        make = lambda: m.BidirectionalRNN(U, cell="rnn")  # noqa: E731
        n_weights = 3 * 2
    facts = layer_contract(make, [x], symbolic=[(None, D)])
    facts["expected_trainable"] = n_weights
    facts["errors"] = value_errors(
        {
            "num_layers": lambda: m.StackedRNN(0, U),
            "num_hiddens": lambda: m.BidirectionalRNN(-2),
            "cell": lambda: m.StackedRNN(L, U, cell="transformer"),
            "dropout": lambda: m.StackedRNN(L, U, dropout=1.0),
            "initial_state": lambda: m.StackedRNN(L, U)(
                x, initial_state=[np.zeros((B, U), "float32")]
            ),
        }
    )
    return facts


@lesson.probe
def run_gradient(m, kind, x, weights, probe_weights):
    import keras

    if kind == "stacked":
        layer = m.StackedRNN(2, U, cell="rnn", dtype="float64")
    else:
        layer = m.BidirectionalRNN(U, cell="rnn", dtype="float64")
    build_on_first_step(layer, x)
    layer.set_weights(weights)
    return tape_gradient(
        lambda v: keras.ops.sum(layer(v)[0] * probe_weights), x
    )


# ------------------------------------------------------------------ inputs
def _layer_weights(rng, cell, d_in, scale=0.5):
    n = BLOCKS[cell] * U
    bias_shape = (2, n) if cell == "gru" else (n,)  # GRU: reset_after=True
    return [
        (rng.standard_normal((d_in, n)) * scale).astype("float32"),
        (rng.standard_normal((U, n)) * scale).astype("float32"),
        (rng.standard_normal(bias_shape) * scale).astype("float32"),
    ]


def _stack_weights(rng, cell, layers=L):
    weights = []
    for i in range(layers):
        weights += _layer_weights(rng, cell, D if i == 0 else U)
    return weights


def _bidirectional_weights(rng, cell):
    return _layer_weights(rng, cell, D) + _layer_weights(rng, cell, D)


def _x(rng):
    return rng.standard_normal((B, T, D)).astype("float32")


def _keras_cell(cell):
    import keras

    return {
        "rnn": keras.layers.SimpleRNNCell,
        "gru": keras.layers.GRUCell,
        "lstm": keras.layers.LSTMCell,
    }[cell](U)


def _stacked(cell):
    """`StackedRNN('cell')`, for a message."""
    return say("l12.stacked", cell=repr(cell))


def _bidirectional(cell):
    """`BidirectionalRNN('cell')`, for a message."""
    return say("l12.bidirectional", cell=repr(cell))


def _flat(states):
    """Per-layer states ((B, U) or [h, c]) -> one list of (B, U) arrays."""
    out = []
    for s in states:
        out += list(s) if isinstance(s, (list, tuple)) else [s]
    return [np.asarray(a) for a in out]


# ------------------------------------------------------------------ checks
@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_stacked_shapes(rng, cell):
    outputs, states = run_stacked(cell, _x(rng), _stack_weights(rng, cell))
    expect_shape(outputs, (B, T, U), say("l12.outputs", layer=_stacked(cell)))
    expect(
        len(states) == L,
        say("l12.one_state_per_layer", layers=L, got=len(states)),
    )
    per_layer = (2, B, U) if cell == "lstm" else (B, U)
    for i, state in enumerate(states):
        expect_shape(
            np.asarray(state),
            per_layer,
            say("l12.state_i", layer=_stacked(cell), i=i),
        )


@pytest.mark.points(2)
@pytest.mark.parametrize("start", [None, "given"], ids=["zeros", "init"])
def test_stacked_matches_reference(rng, start):
    x = _x(rng)
    weights = _stack_weights(rng, "rnn")
    init = None
    if start:
        init = [rng.uniform(-1, 1, (B, U)).astype("float32") for _ in range(L)]
    outputs, states = run_stacked("rnn", x, weights, init)
    args = (x, weights, init)
    ref_outputs, ref_states = ref_stacked(*args)
    expect_close(
        outputs,
        ref_outputs,
        say("l12.top_outputs"),
        diagnoses=_diagnoses(ref_stacked, *args, pick=lambda o: o[0]),
    )
    expect(
        len(states) == L,
        say("l12.one_state_per_layer", layers=L, got=len(states)),
    )
    expect_close(
        stack_same_shape(states, say("l12.states", layer=_stacked("rnn"))),
        np.stack(ref_states),
        say("l12.last_states"),
        diagnoses=_diagnoses(ref_stacked, *args, pick=lambda o: np.stack(o[1])),
        hint=say("l12.last_states_hint"),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_stacked_matches_keras_stacked_cells(rng, cell):
    import keras

    x = _x(rng)
    weights = _stack_weights(rng, cell)
    outputs, states = run_stacked(cell, x, weights)
    ref = keras.layers.RNN(
        keras.layers.StackedRNNCells([_keras_cell(cell) for _ in range(L)]),
        return_sequences=True,
        return_state=True,
    )
    build_on_first_step(ref, x)
    ref.set_weights(weights)
    ref_outputs, *ref_states = ref(x)
    expect_close(
        outputs,
        np.asarray(ref_outputs),
        say("l12.vs_stacked_cells", layer=_stacked(cell)),
        hint=say("l12.vs_stacked_cells_hint"),
    )
    expect_close(
        stack_same_shape(
            _flat(states), say("l12.states", layer=_stacked(cell))
        ),
        np.stack(_flat(ref_states)),
        say("l12.states_vs_stacked_cells", layer=_stacked(cell)),
    )


def test_stacked_dropout_only_in_training(rng):
    x = _x(rng)
    weights = _stack_weights(rng, "rnn")
    first, second, trained = run_stacked_dropout(x, weights)
    # the inference output is the judge's: two that merely agree are no
    # evidence of a layer that drops only in training
    expect_close(
        first,
        ref_stacked(x, weights)[0],
        say("contract.inference_value", name="StackedRNN(dropout=0.5)"),
    )
    expect_close(
        second,
        first,
        say("l12.inference_twice"),
        tol=EXACT,
    )
    expect(
        not np.allclose(trained, first),
        say("l12.dropout_inactive"),
    )


@pytest.mark.points(2)
def test_stacked_mask_reaches_every_layer(rng):
    """Padding after step 3 of the first sequence, and an initial state:
    every layer's last state, and the top outputs at the real steps, are
    those of the sequence without its padding."""
    x, lengths = _x(rng), (3, T)
    weights = _stack_weights(rng, "rnn")
    init = [rng.uniform(-1, 1, (B, U)).astype("float32") for _ in range(L)]
    mask = np.arange(T)[None, :] < np.array(lengths)[:, None]  # (B, T)
    outputs, states = run_stacked("rnn", x, weights, init, mask)
    expect_shape(outputs, (B, T, U), say("l12.masked_outputs"))
    unpadded = [
        ref_stacked(x[b : b + 1, :n], weights, [h[b : b + 1] for h in init])
        for b, n in enumerate(lengths)
    ]
    args = (x, weights, init, mask)
    expect_close(
        stack_same_shape(states, say("l12.states", layer=_stacked("rnn"))),
        np.concatenate([np.stack(ref[1]) for ref in unpadded], axis=1),
        say("l12.masked_states"),
        diagnoses=_diagnoses(ref_stacked, *args, pick=lambda o: np.stack(o[1])),
        hint=say("l12.masked_states_hint"),
    )
    expect_close(
        np.asarray(outputs)[mask],
        np.concatenate([ref[0][0] for ref in unpadded]),
        say("l12.masked_top"),
        diagnoses=_diagnoses(ref_stacked, *args, pick=lambda o: o[0][mask]),
    )


@pytest.mark.points(2)
def test_one_layer_stack_has_no_dropout(rng):
    """One layer: there is nothing between layers, so dropout=0.5 in
    training changes nothing (the top layer's outputs are returned as they
    are, and the raw inputs are read as they are)."""
    x = _x(rng)
    weights = _stack_weights(rng, "rnn", layers=1)
    outputs, states = run_stacked_training(x, weights, 1)
    expect_shape(outputs, (B, T, U), say("l12.one_layer_outputs"))
    expected, _ = ref_stacked(x, weights)
    expect_close(
        outputs,
        expected,
        say("l12.one_layer"),
        diagnoses={
            DROPOUT_ON_TOP: lambda: nearest_dropped(outputs, expected, 0.5)
        },
        hint=say("l12.one_layer_hint"),
    )


@pytest.mark.points(2)
def test_dropout_spares_the_raw_inputs(rng):
    """Two layers, training: the bottom layer reads the raw inputs, so its
    last state is the one without dropout."""
    x = _x(rng)
    weights = _stack_weights(rng, "rnn", layers=2)
    _, states = run_stacked_training(x, weights, 2)
    bottom = np.asarray(states[0]) if len(states) else np.zeros(0)
    expect_shape(bottom, (B, U), say("l12.bottom_state"))

    def read_dropped_inputs(dropped):  # (B, 2**(T*D), T*D) -> (B, 2**.., U)
        steps = dropped.reshape(*dropped.shape[:-1], T, D)
        return ref_rnn(steps, None, weights[:3])[1]

    expect_close(
        bottom,
        ref_stacked(x, weights)[1][0],
        say("l12.bottom_last_state"),
        diagnoses={
            DROPOUT_ON_INPUTS: lambda: nearest_dropped(
                bottom,
                x.reshape(B, T * D).astype(np.float64),
                0.5,
                then=read_dropped_inputs,
            )
        },
        hint=say("l12.bottom_hint"),
    )


@pytest.mark.parametrize("cell", ["lstm"])
def test_bidirectional_shapes(rng, cell):
    weights = _bidirectional_weights(rng, cell)
    outputs, states = run_bidirectional(cell, _x(rng), weights)
    expect_shape(
        outputs, (B, T, 2 * U), say("l12.bi_output", layer=_bidirectional(cell))
    )
    expect(
        len(states) == 2,
        say("l12.two_states", got=len(states)),
    )


@pytest.mark.points(2)
def test_bidirectional_matches_reference(rng):
    x = _x(rng)
    weights = _bidirectional_weights(rng, "rnn")
    outputs, states = run_bidirectional("rnn", x, weights)
    ref_outputs, ref_states = ref_bidirectional(x, weights)
    diagnoses = _diagnoses(
        ref_bidirectional,
        x,
        weights,
        mistakes=BIDIRECTIONAL_MISTAKES,
        pick=lambda o: o[0],
    )
    expect_close(
        outputs,
        ref_outputs,
        say("l12.bi_outputs"),
        diagnoses=diagnoses,
    )
    expect_close(
        stack_same_shape(
            states, say("l12.states", layer=_bidirectional("rnn"))
        ),
        np.stack(ref_states),
        say("l12.bi_states"),
        hint=say("l12.bi_states_hint"),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("masked", [False, True], ids=["no_mask", "mask"])
def test_bidirectional_matches_keras_bidirectional(rng, masked):
    import keras

    x = _x(rng)
    weights = _bidirectional_weights(rng, "gru")
    mask = None
    if masked:
        mask = np.arange(T)[None, :] < np.array([[3], [T]])  # lengths 3, T
    outputs, states = run_bidirectional("gru", x, weights, mask)
    ref = keras.layers.Bidirectional(
        keras.layers.GRU(U, return_sequences=True, return_state=True)
    )
    build_on_first_step(ref, x)
    ref.set_weights(weights)
    ref_outputs, *ref_states = (np.asarray(a) for a in ref(x, mask=mask))
    valid = np.ones((B, T), bool) if mask is None else mask
    expect_close(
        np.asarray(outputs)[valid],
        ref_outputs[valid],
        say(
            "l12.vs_keras",
            steps=say("l12.unmasked_steps" if masked else "l12.all_steps"),
        ),
        hint=say("l12.vs_keras_hint"),
    )
    expect_close(
        stack_same_shape(
            states, say("l12.states", layer=_bidirectional("gru"))
        ),
        np.stack(ref_states),
        say("l12.vs_keras_states"),
    )


@pytest.mark.points(2)
def test_bidirectional_mask_and_initial_state(rng):
    """Padding after step 3 of the first sequence, and an initial state
    for each direction: the outputs at the real steps and both last states
    are those of the sequence without its padding."""
    x, lengths = _x(rng), (3, T)
    weights = _bidirectional_weights(rng, "rnn")
    init = [rng.uniform(-1, 1, (B, U)).astype("float32") for _ in range(2)]
    mask = np.arange(T)[None, :] < np.array(lengths)[:, None]  # (B, T)
    outputs, states = run_bidirectional("rnn", x, weights, mask, init)
    expect_shape(
        outputs,
        (B, T, 2 * U),
        say("l12.bi_output", layer=_bidirectional("rnn")),
    )
    unpadded = [
        ref_bidirectional(
            x[b : b + 1, :n], weights, [h[b : b + 1] for h in init]
        )
        for b, n in enumerate(lengths)
    ]
    diagnoses = partial(
        _diagnoses,
        ref_bidirectional,
        x,
        weights,
        init,
        mask,
        mistakes=(
            *BIDIRECTIONAL_MISTAKES,
            MASK_NOT_REVERSED,
            BACKWARD_INIT_IGNORED,
        ),
    )
    expect_close(
        np.asarray(outputs)[mask],
        np.concatenate([ref[0][0] for ref in unpadded]),
        say("l12.bi_masked_outputs"),
        diagnoses=diagnoses(pick=lambda o: o[0][mask]),
        hint=say("l12.bi_masked_hint"),
    )
    expect_close(
        stack_same_shape(
            states, say("l12.states", layer=_bidirectional("rnn"))
        ),
        np.concatenate([np.stack(ref[1]) for ref in unpadded], axis=1),
        say("l12.bi_masked_states"),
        diagnoses=diagnoses(pick=lambda o: np.stack(o[1])),
    )


def _changed(outputs, perturbed):
    """(T, 2) booleans: which positions of each half moved."""
    diff = np.abs(np.asarray(perturbed) - np.asarray(outputs))
    halves = diff.reshape(diff.shape[0], diff.shape[1], 2, -1)
    return halves.max(axis=(0, 3)) > 1e-6


@pytest.mark.points(2)
def test_bidirectional_output_at_t_sees_the_future(rng):
    """Change x_1 only: the forward half moves at positions 1..T-1 (it has
    read x_1 by then), the backward half at positions 0..1. So H_0 already
    depends on x_1: no next-token prediction with a bidirectional layer."""
    x = _x(rng)
    weights = _bidirectional_weights(rng, "rnn")
    moved = x.copy()
    moved[:, 1] += 1.0
    outputs, _ = run_bidirectional("rnn", x, weights)
    perturbed, _ = run_bidirectional("rnn", moved, weights)
    expect_shape(
        outputs,
        (B, T, 2 * U),
        say("l12.bi_output", layer=_bidirectional("rnn")),
    )
    got = _changed(outputs, perturbed)
    positions = np.arange(T)
    expected = np.stack([positions >= 1, positions <= 1], axis=1)
    expect(
        np.array_equal(got, expected),
        say(
            "l12.future",
            forward=positions[expected[:, 0]].tolist(),
            backward=positions[expected[:, 1]].tolist(),
            got_forward=positions[got[:, 0]].tolist(),
            got_backward=positions[got[:, 1]].tolist(),
        ),
        got=got.astype(float),
        diagnoses={
            m: (
                lambda m=m: _changed(
                    ref_bidirectional(x, weights, mistake=m)[0],
                    ref_bidirectional(moved, weights, mistake=m)[0],
                ).astype(float)
            )
            for m in BIDIRECTIONAL_MISTAKES
        },
    )


@pytest.mark.parametrize("kind", ["stacked", "bidirectional"])
def test_keras_layer_contract(rng, kind):
    x = _x(rng)
    facts = run_contract(kind, x)
    width = U if kind == "stacked" else 2 * U
    name = "StackedRNN" if kind == "stacked" else "BidirectionalRNN"
    # bound to the reference on the weights the layer was built with:
    # kernel, recurrent kernel, bias of each layer (stacked: bottom first;
    # bidirectional: forward, then backward)
    layout = [(D, U), (U, U), (U,)]
    layout += [(U if kind == "stacked" else D, U), (U, U), (U,)]
    weights = contract_weights(facts, name, layout)
    ref = ref_stacked if kind == "stacked" else ref_bidirectional
    expect_layer_contract(
        facts,
        name,
        output_shape=(B, T, width),
        symbolic_shape=(None, None, width),
        on=say("l12.symbolic_on"),
        trainable=facts["expected_trainable"],
        expected=ref(x, weights)[0],
    )
    expect_value_errors(facts["errors"])


@pytest.mark.points(2)
@pytest.mark.parametrize("kind", ["stacked", "bidirectional"])
def test_gradient_matches_centred_differences(rng, kind):
    x = rng.standard_normal((1, T, D))  # one sequence: fewer differences
    if kind == "stacked":
        weights = _stack_weights(rng, "rnn", layers=2)
        width = U
    else:
        weights = _bidirectional_weights(rng, "rnn")
        width = 2 * U
    weights = [w.astype(np.float64) for w in weights]
    probe_weights = rng.standard_normal((1, T, width))
    expect_gradient(
        run_gradient(kind, x, weights, probe_weights),
        ref_input_gradient(kind, x, weights, probe_weights),
        say("l12.gradient", kind=say(f"l12.{kind}_kind")),
        tol=GRAD,
    )
