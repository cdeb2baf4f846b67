"""Grader for lesson 08: one-hot inputs, `RNNScratch`, `grad_clipping` and
greedy `predict`.

Sizes: B=2 sequences, T=3 steps, V=7 tokens, U=5 hidden units (every axis
its own size). Conventions: batch-major (B, T) -> one-hot (B, T, V) ->
logits (B, T, V); weights W_xh (V, U), W_hh (U, U), b_h (U,), W_hq (U, V),
b_q (V,); clipping by the global norm of all gradients together.
"""

import numpy as np
import pytest

from graders.lib.contract import expect_gradient
from graders.lib.contract import expect_layer_contract
from graders.lib.contract import expect_value_errors
from graders.lib.contract import state_centred_differences
from graders.lib.data import text_batches
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import mistake_outputs
from graders.lib.messages import say
from graders.lib.probes import layer_contract
from graders.lib.probes import state_gradient
from graders.lib.probes import value_errors
from graders.lib.tolerances import EXACT
from graders.lib.tolerances import GRAD
from m2t.grading.probe import Lesson

lesson = Lesson("l08_rnn_scratch")
B, T, V, U = 2, 3, 7, 5
# V one-character tokens; index 0 stands for unknown characters ("<unk>"),
# written "#" here so that each token is one character of predict's output.
VOCAB = ["#", " ", "a", "b", "c", "d", "e"]

# ---------------------------------------------------------------- mistakes
ONE_HOT_TIME_MAJOR = Mistake(
    "one_hot_time_major",
    "one_hot returns (T, B, V), d2l's time-major layout: this course keeps "
    "Keras's batch-major (B, T, V).",
)
NO_TANH = Mistake(
    "rnn_no_tanh",
    "the hidden state has no tanh: H_t = tanh(X_t W_xh + H_{t-1} W_hh + "
    "b_h); without it the RNN is linear and its state can grow without "
    "bound.",
)
NOT_FED_BACK = Mistake(
    "rnn_state_not_fed_back",
    "every step uses the initial state instead of the previous step's "
    "H_{t-1}: the new H must feed the next step.",
)
CLIP_PER_TENSOR = Mistake(
    "clip_per_tensor",
    "each gradient is clipped by its own norm: clip by the norm of ALL "
    "gradients together, so their relative sizes (the direction) are kept.",
)
CLIP_ALWAYS_SCALES = Mistake(
    "clip_always_scales",
    "gradients are always rescaled to norm theta, small ones grown too: "
    "the factor is min(1, theta / ||g||).",
)
NO_WARMUP = Mistake(
    "predict_no_warmup",
    "the state computed over the prefix is thrown away (warm-up): keep the "
    "state each prefix token produces, so generation starts from a state "
    "that has read the whole prefix.",
)
PREDICT_STATE_NOT_CARRIED = Mistake(
    "predict_state_not_carried",
    "during generation the state is not carried from one step to the "
    "next: keep the state each model call returns.",
)
MISTAKES = (
    ONE_HOT_TIME_MAJOR,
    NO_TANH,
    NOT_FED_BACK,
    CLIP_PER_TENSOR,
    CLIP_ALWAYS_SCALES,
    NO_WARMUP,
    PREDICT_STATE_NOT_CARRIED,
)
RNN_MISTAKES = (NO_TANH, NOT_FED_BACK)


# --------------------------------------------------- float64 references
@reference
def ref_one_hot(X, V, mistake=None):
    out = np.eye(V)[np.asarray(X, dtype=int)]  # (B, T, V)
    return np.swapaxes(out, 0, 1) if mistake is ONE_HOT_TIME_MAJOR else out


@reference
def ref_rnn(X, h0, weights, mistake=None):
    """(logits (B, T, V), state (B, U)) in float64."""
    W_xh, W_hh, b_h, W_hq, b_q = (np.asarray(w, np.float64) for w in weights)
    onehot = ref_one_hot(X, W_xh.shape[0])
    H = h0 = np.asarray(h0, np.float64)
    outputs = []
    for t in range(onehot.shape[1]):
        prev = h0 if mistake is NOT_FED_BACK else H
        a = onehot[:, t] @ W_xh + prev @ W_hh + b_h
        H = a if mistake is NO_TANH else np.tanh(a)
        outputs.append(H @ W_hq + b_q)
    return np.stack(outputs, axis=1), H


@reference
def ref_state_gradient(X, h0, weights, probe_out, probe_state):
    """d [sum(logits * probe_out) + sum(state * probe_state)] / d(h0),
    (B, U): centred differences of the float64 reference."""
    return state_centred_differences(
        lambda h: ref_rnn(X, h, weights), h0, probe_out, probe_state
    )


@reference
def ref_grad_clipping(grads, theta, mistake=None):
    grads = [np.asarray(g, np.float64) for g in grads]
    if mistake is CLIP_PER_TENSOR:
        return [g * min(1.0, theta / np.linalg.norm(g)) for g in grads]
    norm = np.sqrt(sum(np.sum(g**2) for g in grads))
    scale = (
        theta / norm
        if mistake is CLIP_ALWAYS_SCALES
        else (min(1.0, theta / norm) if norm > 0 else 1.0)
    )
    return [g * scale for g in grads]


@reference
def ref_predict(prefix, num_preds, weights, mistake=None):
    """Greedy generation with the float64 RNN; the token indices."""
    index = {tok: i for i, tok in enumerate(VOCAB)}
    ids = [index.get(ch, 0) for ch in prefix]
    state = np.zeros((1, U))
    outputs = [ids[0]]
    for idx in ids[1:]:
        _, new = _scripted_rnn([[outputs[-1]]], state, weights)
        if mistake is not NO_WARMUP:
            state = new
        outputs.append(idx)
    for _ in range(num_preds):
        logits, new = _scripted_rnn([[outputs[-1]]], state, weights)
        if mistake is not PREDICT_STATE_NOT_CARRIED:
            state = new
        outputs.append(int(np.argmax(logits[0, -1])))
    return np.array(outputs, dtype=np.float64)


def _scripted_rnn(X, h0, weights):
    """The model `predict` is given, one step per token: (logits (B, T, V),
    state (B, U)) in float64. It runs in the worker, so it is not the
    lesson's RNN (sin where RNNScratch has tanh): the graders hand out no
    RNNScratch."""
    W_xh, W_hh, b_h, W_hq, b_q = (np.asarray(w, np.float64) for w in weights)
    onehot = np.eye(W_xh.shape[0])[np.asarray(X, dtype=int)]
    H = np.asarray(h0, np.float64)
    outputs = []
    for t in range(onehot.shape[1]):
        H = np.sin(onehot[:, t] @ W_xh + H @ W_hh + b_h)
        outputs.append(H @ W_hq + b_q)
    return np.stack(outputs, axis=1), H


class _GraderRNN:
    """A scripted float64 model with `predict`'s interface (`_scripted_rnn`),
    so the predict checks do not depend on the student's RNNScratch."""

    def __init__(self, weights):
        self.weights = [np.asarray(w, np.float64) for w in weights]

    def begin_state(self, batch_size):
        return np.zeros((int(batch_size), U))

    def __call__(self, inputs, state):
        import keras

        logits, new = _scripted_rnn(
            np.asarray(inputs).astype(int), np.asarray(state), self.weights
        )
        return keras.ops.convert_to_tensor(logits), keras.ops.convert_to_tensor(
            new
        )


# ------------------------------------------------------------------ probes
@lesson.probe
def run_one_hot(m, X, vocab_size):
    return m.one_hot(X, vocab_size)


def _scratch(m, weights, dtype=None):
    layer = m.RNNScratch(V, U, dtype=dtype) if dtype else m.RNNScratch(V, U)
    layer.build((None, T))
    layer.set_weights(weights)
    return layer


@lesson.probe
def run_rnn(m, X, h0, weights):
    layer = _scratch(m, weights)
    return layer(X, h0)


@lesson.probe
def run_rnn_pieces(m, X, weights):
    """The full pass from begin_state, and the same in two calls carrying
    the state."""
    layer = _scratch(m, weights)
    zeros = layer.begin_state(X.shape[0])
    full, state = layer(X)
    first, mid = layer(X[:, :1], zeros)
    rest, last = layer(X[:, 1:], mid)
    return {
        "begin_state": zeros,
        "full": full,
        "state": state,
        "pieces": np.concatenate([np.asarray(first), np.asarray(rest)], 1),
        "last": last,
    }


@lesson.probe
def run_rnn_vs_keras(m, X, h0, weights):
    import keras

    ours, state = _scratch(m, weights)(X, h0)
    rnn = keras.layers.SimpleRNN(U, return_sequences=True, return_state=True)
    dense = keras.layers.Dense(V)
    onehot = np.eye(V, dtype="float32")[X]
    rnn(onehot, initial_state=h0)  # build
    dense.build((None, U))
    rnn.set_weights(weights[:3])  # kernel, recurrent_kernel, bias
    dense.set_weights(weights[3:])  # kernel, bias
    hidden, keras_state = rnn(onehot, initial_state=h0)
    return ours, state, dense(hidden), keras_state


@lesson.probe
def run_contract(m, X, weights):
    # built with the judge's weights: at its own init (sigma 0.01) the
    # state is so small that tanh(a) and a agree to 1e-6
    facts = layer_contract(lambda: _scratch(m, weights), [X], symbolic=[(T,)])
    layer = m.RNNScratch(V, U)
    layer(X)
    facts["weight_shapes"] = [
        tuple(int(d) for d in w.shape) for w in layer.weights
    ]
    facts["errors"] = value_errors(
        {
            "vocab_size": lambda: m.RNNScratch(0, U),
            "num_hiddens": lambda: m.RNNScratch(V, -2),
            "theta": lambda: m.grad_clipping([np.ones(3)], 0.0),
        }
    )
    return facts


@lesson.probe
def run_gradient(m, X, h0, weights, probe_out, probe_state):
    layer = _scratch(m, weights, dtype="float64")
    return state_gradient(lambda h: layer(X, h), h0, probe_out, probe_state)


@lesson.probe
def run_clipping(m, grads, theta):
    return m.grad_clipping(grads, theta)


@lesson.probe
def run_predict(m, prefix, num_preds, weights):
    return m.predict(prefix, num_preds, _GraderRNN(weights), VOCAB)


@lesson.probe
def run_training(m, eval_batches, train_batches):
    import keras

    model = m.RNNScratch(len(VOCAB_TRAIN), 32)
    frozen = keras.optimizers.SGD(0.0)  # an epoch that only measures
    before = m.train_epoch(model, eval_batches, frozen, theta=1.0)
    m.train_epoch(model, train_batches, keras.optimizers.SGD(1.0), theta=1.0)
    after = m.train_epoch(model, eval_batches, frozen, theta=1.0)
    return before, after


# ------------------------------------------------------------------ inputs
def _tokens(rng, b=B, t=T):
    return rng.integers(0, V, size=(b, t)).astype("int32")


def _weights(rng, scale=0.6):
    return [
        (rng.standard_normal((V, U)) * scale).astype("float32"),
        (rng.standard_normal((U, U)) * scale).astype("float32"),
        (rng.standard_normal(U) * 0.3).astype("float32"),
        (rng.standard_normal((U, V)) * scale).astype("float32"),
        (rng.standard_normal(V) * 0.3).astype("float32"),
    ]


TEXT = "the cat sat on the mat and the dog sat on the log " * 12
VOCAB_TRAIN = ["<unk>", *sorted(set(TEXT))]


def _text_batches(rng, n, b=8, t=6):
    index = {c: i for i, c in enumerate(VOCAB_TRAIN)}
    return text_batches(rng, TEXT, index, n, b, t)


# ------------------------------------------------------------------ checks
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_one_hot(rng, dtype):
    X = rng.integers(0, V, size=(B, T)).astype(dtype)
    expect_close(
        run_one_hot(X, V),
        ref_one_hot(X, V),
        say("l08.one_hot"),
        tol=EXACT,
        diagnoses={ONE_HOT_TIME_MAJOR: ref_one_hot(X, V, ONE_HOT_TIME_MAJOR)},
        hint=say("l08.one_hot_hint"),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("state", ["zeros", "random"], ids=str)
def test_rnn_matches_reference(rng, state):
    X = _tokens(rng)
    weights = _weights(rng)
    h0 = (
        np.zeros((B, U), "float32")
        if state == "zeros"
        else rng.standard_normal((B, U)).astype("float32")
    )
    out, new_state = run_rnn(X, h0, weights)
    ref_out, ref_state = ref_rnn(X, h0, weights)
    expect_close(
        out,
        ref_out,
        say("l08.logits"),
        diagnoses=mistake_outputs(
            ref_rnn, X, h0, weights, mistakes=RNN_MISTAKES, part=0
        ),
        hint=say("l08.logits_hint"),
    )
    expect_close(
        new_state,
        ref_state,
        say("l08.final_state"),
        diagnoses=mistake_outputs(
            ref_rnn, X, h0, weights, mistakes=RNN_MISTAKES, part=1
        ),
    )


@pytest.mark.points(2)
def test_rnn_matches_keras_simple_rnn_after_weight_transfer(rng):
    """W_xh, W_hh, b_h are SimpleRNN's kernel, recurrent kernel and bias;
    W_hq, b_q a Dense on its outputs."""
    X = _tokens(rng)
    weights = _weights(rng)
    h0 = rng.standard_normal((B, U)).astype("float32")
    ours, state, keras_out, keras_state = run_rnn_vs_keras(X, h0, weights)
    expect_close(
        ours,
        keras_out,
        say("l08.vs_keras"),
        diagnoses=mistake_outputs(
            ref_rnn, X, h0, weights, mistakes=RNN_MISTAKES, part=0
        ),
    )
    expect_close(
        state,
        keras_state,
        say("l08.vs_keras_state"),
        diagnoses=mistake_outputs(
            ref_rnn, X, h0, weights, mistakes=RNN_MISTAKES, part=1
        ),
    )


def test_state_carries_across_calls(rng):
    """Running T steps at once equals running 1 step, then T - 1 more from
    the state it returns; no state means begin_state, zeros (B, U)."""
    X = _tokens(rng)
    weights = _weights(rng)
    facts = run_rnn_pieces(X, weights)
    expect_close(
        facts["begin_state"],
        np.zeros((B, U)),
        say("l08.begin_state"),
        tol=EXACT,
    )
    expect_close(
        facts["pieces"],
        facts["full"],
        say("l08.pieces"),
        diagnoses=mistake_outputs(
            ref_rnn, X, np.zeros((B, U)), weights, mistakes=RNN_MISTAKES, part=0
        ),
    )
    expect_close(
        facts["last"],
        facts["state"],
        say("l08.pieces_state"),
    )


def test_keras_layer_contract(rng):
    X = _tokens(rng)
    weights = _weights(rng)
    facts = run_contract(X, weights)
    expect(
        facts["weight_shapes"] == [(V, U), (U, U), (U,), (U, V), (V,)],
        say("l08.weight_shapes", got=facts["weight_shapes"]),
    )
    # bound to the reference on the judge's weights, from begin_state's
    # zeros (the contract passes no state)
    expect_layer_contract(
        facts,
        "RNNScratch",
        output_shape=(B, T, V),
        symbolic_shape=(None, T, V),
        on=say("l08.symbolic_on"),
        trainable=5,
        expected=ref_rnn(X, np.zeros((B, U)), weights)[0],
    )
    expect_value_errors(facts["errors"])


@pytest.mark.points(2)
@pytest.mark.parametrize("steps", [1, T], ids=["one_step", "T_steps"])
def test_gradient_matches_centred_differences(rng, steps):
    X = _tokens(rng, t=steps)
    weights = [w.astype("float64") for w in _weights(rng)]
    h0 = rng.standard_normal((B, U))
    probe_out = rng.standard_normal((B, steps, V))
    probe_state = rng.standard_normal((B, U))
    expect_gradient(
        run_gradient(X, h0, weights, probe_out, probe_state),
        ref_state_gradient(X, h0, weights, probe_out, probe_state),
        say("l08.gradient", steps=steps),
        tol=GRAD,
    )


def _clip_case(rng, case):
    shapes = [(V, U), (U,), (U, V)]
    grads = [rng.standard_normal(s).astype("float32") for s in shapes]
    if case == "small":  # global norm 0.5 < theta
        norm = np.sqrt(sum(np.sum(g.astype(np.float64) ** 2) for g in grads))
        grads = [(g * 0.5 / norm).astype("float32") for g in grads]
    elif case == "mixed":  # one large gradient, two small ones
        grads[1] = grads[1] * 0.01
        grads[2] = grads[2] * 0.05
    return grads, 1.0


@pytest.mark.points(2)
@pytest.mark.parametrize("case", ["small", "large", "mixed"], ids=str)
def test_grad_clipping_matches_reference(rng, case):
    grads, theta = _clip_case(rng, case)
    got = run_clipping(grads, theta)
    expected = ref_grad_clipping(grads, theta)
    expect(
        len(got) == len(grads),
        say("l08.clip_count", got=len(got), expected=len(grads)),
    )
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        diagnoses = {
            m: (lambda m=m, i=i: ref_grad_clipping(grads, theta, m)[i])
            for m in (CLIP_PER_TENSOR, CLIP_ALWAYS_SCALES)
        }
        what = say(
            "l08.clip_gradient", i=i, case=say(f"l08.clip_{case}"), theta=theta
        )
        if case == "small":
            g = np.asarray(g)
            expect(
                g.shape == e.shape and np.array_equal(g, grads[i]),
                say("l08.clip_unchanged", what=what),
                got=g,
                diagnoses=diagnoses,
            )
        else:
            expect_close(g, e, what, diagnoses=diagnoses)


@pytest.mark.parametrize("case", ["large", "mixed"], ids=str)
def test_grad_clipping_global_norm_is_theta(rng, case):
    grads, theta = _clip_case(rng, case)
    got = run_clipping(grads, theta)
    norm = np.sqrt(sum(np.sum(np.asarray(g, np.float64) ** 2) for g in got))
    expect_close(
        np.array([norm]),
        np.array([theta]),
        say("l08.clip_norm"),
        diagnoses={
            CLIP_PER_TENSOR: np.array(
                [
                    np.sqrt(
                        sum(
                            np.sum(g**2)
                            for g in ref_grad_clipping(
                                grads, theta, CLIP_PER_TENSOR
                            )
                        )
                    )
                ]
            )
        },
    )


def test_grad_clipping_zero_gradients():
    grads = [np.zeros((V, U), "float32"), np.zeros(U, "float32")]
    got = run_clipping(grads, 1.0)
    for i, g in enumerate(got):
        expect(
            not np.isnan(np.asarray(g)).any(),
            say("l08.clip_zeros_nan"),
        )
        expect_close(g, grads[i], say("l08.clip_zeros"), tol=EXACT)


@pytest.mark.points(2)
@pytest.mark.parametrize(
    "prefix,num_preds",
    [("abc d", 6), ("e", 5), ("cab", 0)],
    ids=["prefix5", "prefix1", "no_preds"],
)
def test_predict_matches_reference(rng, prefix, num_preds):
    weights = _weights(rng, scale=1.2)
    got = run_predict(prefix, num_preds, weights)
    index = {tok: i for i, tok in enumerate(VOCAB)}
    expected = ref_predict(prefix, num_preds, weights)
    text = "".join(VOCAB[int(i)] for i in expected)
    expect(
        isinstance(got, str) and len(got) == len(prefix) + num_preds,
        say(
            "l08.predict_length",
            prefix=repr(prefix),
            num_preds=num_preds,
            total=len(prefix) + num_preds,
            got=repr(got),
        ),
    )
    expect_close(
        np.array([index.get(c, -1) for c in got], dtype=np.float64),
        expected,
        say(
            "l08.predict_tokens",
            prefix=repr(prefix),
            num_preds=num_preds,
            expected=repr(text),
            got=repr(got),
        ),
        tol=EXACT,
        diagnoses=mistake_outputs(
            ref_predict,
            prefix,
            num_preds,
            weights,
            mistakes=(NO_WARMUP, PREDICT_STATE_NOT_CARRIED),
        ),
    )


@pytest.mark.points(2)
def test_training_smoke(rng):
    """An untrained RNNScratch (weights ~ N(0, 0.01)) guesses uniformly, so
    its perplexity is about V (d2l); 8 SGD steps with clipping lower it."""
    eval_batches = _text_batches(rng, 2)
    before, after = run_training(eval_batches, _text_batches(rng, 8, t=5))
    n = len(VOCAB_TRAIN)
    expect(
        abs(before - n) < 0.5,
        say("l08.untrained", n=n, got=f"{before:.3f}"),
    )
    expect(
        after < before - 2.0,
        say("l08.trained", before=f"{before:.2f}", after=f"{after:.2f}"),
    )
