"""Grader for lesson 09: `RNNModel` on keras.layers.SimpleRNN.

Sizes: B=2 sequences, T=3 steps, V=7 tokens, U=5 hidden units, E=4
embedding size. The checks copy the grader's weights into the model's
SimpleRNN (kernel, recurrent_kernel, bias), Dense and Embedding, and compare
with the grader's own float64 NumPy RNN:
`H_t = tanh(X_t K + H_{t-1} R + b)`, logits `H_t W + c`.
"""

import numpy as np
import pytest

from graders.lib.contract import contract_weights
from graders.lib.contract import expect_gradient
from graders.lib.contract import expect_layer_contract
from graders.lib.contract import expect_value_errors
from graders.lib.contract import state_centred_differences
from graders.lib.data import text_batches
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import expect_shape
from graders.lib.judge import mistake_outputs
from graders.lib.messages import say
from graders.lib.probes import build_on_first_step
from graders.lib.probes import layer_contract
from graders.lib.probes import state_gradient
from graders.lib.probes import value_errors
from graders.lib.tolerances import GRAD
from m2t.grading.probe import Lesson

lesson = Lesson("l09_rnn_concise")
B, T, V, U, E = 2, 3, 7, 5, 4

# ---------------------------------------------------------------- mistakes
INITIAL_STATE_IGNORED = Mistake(
    "initial_state_ignored",
    "the state passed in never reaches the SimpleRNN, so every call starts "
    "from zeros: pass it as initial_state=state.",
)
NOT_PROJECTED = Mistake(
    "outputs_not_projected",
    "the model returns the RNN's hidden outputs (B, T, U), not logits over "
    "the vocabulary: apply the Dense(V) layer to them.",
)
SOFTMAX_IN_MODEL = Mistake(
    "softmax_in_model",
    "the model returns probabilities (a softmax after the Dense): return "
    "logits and let the loss (from_logits=True) do the softmax.",
)
MISTAKES = (INITIAL_STATE_IGNORED, NOT_PROJECTED, SOFTMAX_IN_MODEL)


# --------------------------------------------------- float64 references
@reference
def ref_model(X, h0, weights, embedding=None, mistake=None):
    """(logits (B, T, V), state (B, U)) in float64."""
    K, R, b, W, c = (np.asarray(w, np.float64) for w in weights)
    X = np.asarray(X, dtype=int)
    features = (
        np.eye(V)[X]
        if embedding is None
        else np.asarray(embedding, np.float64)[X]
    )
    H = np.zeros((X.shape[0], U))
    if h0 is not None and mistake is not INITIAL_STATE_IGNORED:
        H = np.asarray(h0, np.float64)
    hidden = []
    for t in range(X.shape[1]):
        H = np.tanh(features[:, t] @ K + H @ R + b)
        hidden.append(H)
    hidden = np.stack(hidden, axis=1)  # (B, T, U)
    if mistake is NOT_PROJECTED:
        return hidden, H
    logits = hidden @ W + c
    if mistake is SOFTMAX_IN_MODEL:
        e = np.exp(logits - logits.max(-1, keepdims=True))
        logits = e / e.sum(-1, keepdims=True)
    return logits, H


@reference
def ref_state_gradient(X, h0, weights, probe_out, probe_state):
    """d [sum(logits * probe_out) + sum(state * probe_state)] / d(h0),
    (B, U): centred differences of the float64 reference."""
    return state_centred_differences(
        lambda h: ref_model(X, h, weights), h0, probe_out, probe_state
    )


def _diagnoses(X, h0, weights, embedding=None, part=0):
    return mistake_outputs(
        ref_model, X, h0, weights, embedding, mistakes=MISTAKES, part=part
    )


# ------------------------------------------------------------------ probes
def _model(m, X, weights, embedding=None, dtype=None):
    kwargs = {"dtype": dtype} if dtype else {}
    model = m.RNNModel(
        V, U, embedding_dim=None if embedding is None else E, **kwargs
    )
    build_on_first_step(model, X)
    model.rnn.set_weights(weights[:3])
    model.dense.set_weights(weights[3:])
    if embedding is not None:
        model.embedding.set_weights([embedding])
    return model


@lesson.probe
def run_model(m, X, h0, weights, embedding=None):
    return _model(m, X, weights, embedding)(X, h0)


@lesson.probe
def run_pieces(m, X, weights):
    model = _model(m, X, weights)
    full, state = model(X)
    first, mid = model(X[:, :2], model.begin_state(X.shape[0]))
    rest, last = model(X[:, 2:], mid)
    return {
        "full": full,
        "state": state,
        "pieces": np.concatenate([np.asarray(first), np.asarray(rest)], 1),
        "last": last,
    }


@lesson.probe
def run_contract(m, X, embedding_dim):
    facts = layer_contract(
        lambda: m.RNNModel(V, U, embedding_dim=embedding_dim),
        [X],
        symbolic=[(None,)],
    )
    facts["errors"] = value_errors(
        {
            "vocab_size": lambda: m.RNNModel(0, U),
            "num_hiddens": lambda: m.RNNModel(V, 0),
            "embedding_dim": lambda: m.RNNModel(V, U, embedding_dim=-1),
        }
    )
    return facts


@lesson.probe
def run_gradient(m, X, h0, weights, probe_out, probe_state):
    model = _model(m, X, weights, dtype="float64")
    return state_gradient(lambda h: model(X, h), h0, probe_out, probe_state)


@lesson.probe
def run_training(m, eval_batches, train_batches, vocab_size):
    import keras
    import tensorflow as tf

    model = m.RNNModel(vocab_size, 24)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    # global_clipnorm: Keras's grad_clipping (one norm over all gradients)
    optimizer = keras.optimizers.SGD(1.0, global_clipnorm=1.0)

    def evaluate():
        return float(
            np.mean([float(loss_fn(Y, model(X)[0])) for X, Y in eval_batches])
        )

    before = evaluate()
    for X, Y in train_batches:
        with tf.GradientTape() as tape:
            loss = loss_fn(Y, model(X, training=True)[0])
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply(grads, model.trainable_weights)
    return before, evaluate()


# ------------------------------------------------------------------ inputs
def _tokens(rng, b=B, t=T):
    return rng.integers(0, V, size=(b, t)).astype("int32")


def _weights(rng, features=V, scale=0.6):
    return [
        (rng.standard_normal((features, U)) * scale).astype("float32"),
        (rng.standard_normal((U, U)) * scale).astype("float32"),
        (rng.standard_normal(U) * 0.3).astype("float32"),
        (rng.standard_normal((U, V)) * scale).astype("float32"),
        (rng.standard_normal(V) * 0.3).astype("float32"),
    ]


TEXT = "the cat sat on the mat and the dog sat on the log " * 12
CHARS = sorted(set(TEXT))


def _text_batches(rng, n, b=8, t=6):
    index = {c: i + 1 for i, c in enumerate(CHARS)}  # 0: unknown
    return text_batches(rng, TEXT, index, n, b, t)


# ------------------------------------------------------------------ checks
@pytest.mark.parametrize("inputs", ["one_hot", "embedding"], ids=str)
def test_output_shapes(rng, inputs):
    X = _tokens(rng)
    embedding = (
        rng.standard_normal((V, E)).astype("float32")
        if inputs == "embedding"
        else None
    )
    weights = _weights(rng, E if embedding is not None else V)
    logits, state = run_model(X, None, weights, embedding)
    expect_shape(logits, (B, T, V), say("l09.logits", inputs=inputs))
    expect_shape(state, (B, U), say("l09.state", inputs=inputs))


@pytest.mark.points(2)
@pytest.mark.parametrize("state", ["none", "random"], ids=str)
def test_matches_numpy_rnn_after_weight_transfer(rng, state):
    X = _tokens(rng)
    weights = _weights(rng)
    h0 = (
        None
        if state == "none"
        else rng.standard_normal((B, U)).astype("float32")
    )
    logits, new_state = run_model(X, h0, weights)
    ref_logits, ref_state = ref_model(X, h0, weights)
    expect_close(
        logits,
        ref_logits,
        say("l09.vs_numpy_logits", state=state),
        diagnoses=_diagnoses(X, h0, weights),
        hint=say("l09.vs_numpy_hint"),
    )
    expect_close(
        new_state,
        ref_state,
        say("l09.vs_numpy_state", state=state),
        diagnoses=_diagnoses(X, h0, weights, part=1),
    )


@pytest.mark.points(2)
def test_embedding_matches_numpy_rnn(rng):
    X = _tokens(rng)
    embedding = rng.standard_normal((V, E)).astype("float32")
    weights = _weights(rng, features=E)
    h0 = rng.standard_normal((B, U)).astype("float32")
    logits, new_state = run_model(X, h0, weights, embedding)
    expect_close(
        logits,
        ref_model(X, h0, weights, embedding)[0],
        say("l09.embedding_logits"),
        diagnoses=_diagnoses(X, h0, weights, embedding),
        hint=say("l09.embedding_hint"),
    )
    expect_close(
        new_state,
        ref_model(X, h0, weights, embedding)[1],
        say("l09.embedding_state"),
        diagnoses=_diagnoses(X, h0, weights, embedding, part=1),
    )


def test_state_carries_across_calls(rng):
    """Three steps at once equal two steps and then one more from the
    returned state: how state is carried across sequential minibatches."""
    X = _tokens(rng)
    weights = _weights(rng)
    facts = run_pieces(X, weights)
    expect_close(
        facts["pieces"],
        facts["full"],
        say("l09.carry_logits"),
        diagnoses={
            INITIAL_STATE_IGNORED: lambda: np.concatenate(
                [
                    ref_model(X[:, :2], None, weights)[0],
                    ref_model(X[:, 2:], None, weights)[0],
                ],
                axis=1,
            )
        },
    )
    expect_close(
        facts["last"],
        facts["state"],
        say("l09.carry_state"),
    )


@pytest.mark.parametrize(
    "embedding_dim", [None, E], ids=["one_hot", "embedding"]
)
def test_keras_layer_contract(rng, embedding_dim):
    X = _tokens(rng)
    facts = run_contract(X, embedding_dim)
    # bound to the reference on the weights the model was built with (the
    # embedding's first, if any, then the SimpleRNN's and the Dense's),
    # from begin_state's zeros (the contract passes no state)
    features = V if embedding_dim is None else E
    layout = [(features, U), (U, U), (U,), (U, V), (V,)]
    if embedding_dim is not None:
        layout.insert(0, (V, E))
    weights = contract_weights(facts, "RNNModel", layout)
    embedding = None if embedding_dim is None else weights.pop(0)
    expect_layer_contract(
        facts,
        "RNNModel",
        output_shape=(B, T, V),
        symbolic_shape=(None, None, V),
        on=say("l09.symbolic_on"),
        trainable=5 if embedding_dim is None else 6,
        detail=" (SimpleRNN 3, Dense 2"
        + (", Embedding 1)" if embedding_dim else ")"),
        expected=ref_model(X, None, weights, embedding)[0],
    )
    expect_value_errors(facts["errors"])


@pytest.mark.points(2)
def test_gradient_matches_centred_differences(rng):
    X = _tokens(rng)
    weights = [w.astype("float64") for w in _weights(rng)]
    h0 = rng.standard_normal((B, U))
    probe_out = rng.standard_normal((B, T, V))
    probe_state = rng.standard_normal((B, U))
    expect_gradient(
        run_gradient(X, h0, weights, probe_out, probe_state),
        ref_state_gradient(X, h0, weights, probe_out, probe_state),
        say("l09.gradient"),
        tol=GRAD,
    )


@pytest.mark.points(2)
def test_training_smoke(rng):
    """A few SGD steps (lr 1, global_clipnorm 1) lower the loss."""
    eval_batches = _text_batches(rng, 2)
    before, after = run_training(
        eval_batches, _text_batches(rng, 8, t=5), len(CHARS) + 1
    )
    expect(
        after < before - 0.3,
        say("l09.training", before=f"{before:.3f}", after=f"{after:.3f}"),
    )
