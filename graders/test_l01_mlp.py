"""Grader for lesson 01: `relu`, `Linear`, the one-hidden-layer `MLP` and the
softmax cross-entropy from logits.

Sizes: B=3 examples, inputs (B, 2, 5, 1) flattened to D=10 features,
Hd=6 hidden units, Q=4 classes. Every axis has its own size, so a transpose
cannot pass unnoticed. Weights are set by the grader (with nonzero biases)
and the outputs compared with a float64 NumPy reference; the MLP's tape
gradients (by the inputs and by W1) with centred differences of it.
Conventions: the MLP returns logits (no softmax); `softmax_cross_entropy`
returns one loss per example, (B,).
"""

from functools import partial

import numpy as np
import pytest

from graders.lib.contract import centred_differences
from graders.lib.contract import contract_weights
from graders.lib.contract import expect_gradient
from graders.lib.contract import expect_layer_contract
from graders.lib.contract import expect_value_errors
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import mistake_outputs
from graders.lib.messages import say
from graders.lib.probes import layer_contract
from graders.lib.probes import tape_gradient
from graders.lib.probes import value_errors
from graders.lib.tolerances import ELEMENTWISE
from graders.lib.tolerances import EXACT
from graders.lib.tolerances import GRAD
from graders.lib.tolerances import at_magnitude
from m2t.grading.probe import Lesson

lesson = Lesson("l01_mlp")
B, D, HD, Q = 3, 10, 6, 4
IMAGE = (2, 5, 1)  # flattened to D = 10

# ---------------------------------------------------------------- mistakes
RELU_REDUCES = Mistake(
    "relu_reduces",
    "relu used ops.max(x, 0), which reduces over axis 0; the elementwise "
    "maximum of x and 0 is ops.maximum(x, 0).",
)
LINEAR_NO_BIAS = Mistake(
    "linear_no_bias",
    "Linear leaves out the bias: an affine layer is inputs @ kernel + bias.",
)
NO_HIDDEN_RELU = Mistake(
    "mlp_no_hidden_relu",
    "the hidden layer has no nonlinearity, so the MLP collapses into one "
    "affine map: H = relu(X W1 + b1).",
)
RELU_ON_OUTPUT = Mistake(
    "mlp_relu_on_output",
    "relu is applied to the output layer too: the outputs are logits, which "
    "may be negative; only the hidden layer has the relu.",
)
NAIVE_CE = Mistake(
    "naive_softmax_ce",
    "exp() of the raw logits overflows to inf for logits above ~88 "
    "(float32): subtract each row's max before the exp (log-sum-exp).",
)
LSE_WITHOUT_MAX = Mistake(
    "lse_without_max",
    "the normaliser log(sum(exp(z - m))) is taken from the shifted logits "
    "but subtracted from the raw ones: log-softmax = (z - m) - "
    "log(sum(exp(z - m))); the max must cancel.",
)
MISTAKES = (
    RELU_REDUCES,
    LINEAR_NO_BIAS,
    NO_HIDDEN_RELU,
    RELU_ON_OUTPUT,
    NAIVE_CE,
    LSE_WITHOUT_MAX,
)


# --------------------------------------------------- float64 references
@reference
def ref_relu(x, mistake=None):
    x = np.asarray(x, np.float64)
    return x.max(axis=0) if mistake is RELU_REDUCES else np.maximum(x, 0.0)


@reference
def ref_linear(x, kernel, bias, mistake=None):
    out = np.asarray(x, np.float64) @ kernel
    return out if mistake is LINEAR_NO_BIAS else out + bias


@reference
def ref_mlp(x, weights, mistake=None):
    w1, b1, w2, b2 = weights
    X = np.asarray(x, np.float64).reshape(len(x), -1)  # (B, D)
    H = ref_linear(X, w1, b1, mistake)
    if mistake is not NO_HIDDEN_RELU:
        H = ref_relu(H, mistake)
    logits = ref_linear(H, w2, b2, mistake)
    return np.maximum(logits, 0.0) if mistake is RELU_ON_OUTPUT else logits


@reference
def ref_cross_entropy(logits, labels, mistake=None):
    """(B,) losses in float64; NAIVE_CE in float32 as a student's would be."""
    z = np.asarray(logits, np.float64)
    labels = np.asarray(labels)
    rows = np.arange(len(z))
    if mistake is NAIVE_CE:
        z32 = np.asarray(logits, np.float32)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            log_norm = np.log(np.exp(z32).sum(-1, keepdims=True))
            return -(z32 - log_norm)[rows, labels].astype(np.float64)
    m = z.max(-1, keepdims=True)
    log_norm = np.log(np.exp(z - m).sum(-1, keepdims=True))
    log_probs = (z if mistake is LSE_WITHOUT_MAX else z - m) - log_norm
    return -log_probs[rows, labels]


@reference
def ref_cross_entropy_grad(logits, labels):
    """d(sum of losses)/d(logits) = softmax(logits) - one_hot(labels)."""
    z = np.asarray(logits, np.float64)
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True) - np.eye(z.shape[-1])[labels]


@reference
def ref_mlp_gradient(wrt, x, weights, probe_weights):
    """d sum(MLP(x) * probe_weights) / d(`wrt`: "input" x or "kernel" W1):
    centred differences of the float64 MLP, of x's or W1's shape."""

    def loss(v):
        if wrt == "input":
            return np.sum(ref_mlp(v, weights) * probe_weights)
        return np.sum(ref_mlp(x, [v, *weights[1:]]) * probe_weights)

    return centred_differences(loss, x if wrt == "input" else weights[0])


_diagnoses = partial(mistake_outputs, mistakes=MISTAKES)


# ------------------------------------------------------------------ probes
@lesson.probe
def run_relu(m, x):
    return m.relu(x)


@lesson.probe
def run_linear(m, x, weights):
    layer = m.Linear(weights[0].shape[-1])
    layer(x)  # build
    layer.set_weights(weights)
    return layer(x)


@lesson.probe
def run_mlp(m, x, weights):
    model = m.MLP(HD, Q)
    model(x)  # build
    model.hidden.set_weights(weights[:2])
    model.output_layer.set_weights(weights[2:])
    return model(x)


@lesson.probe
def run_cross_entropy(m, logits, labels):
    import tensorflow as tf

    z = tf.constant(logits)
    with tf.GradientTape() as tape:
        tape.watch(z)
        losses = m.softmax_cross_entropy(z, labels)
        total = tf.reduce_sum(losses)
    return losses, tape.gradient(total, z)


@lesson.probe
def run_mlp_gradient(m, wrt, x, weights, probe_weights):
    """The tape gradient of sum(MLP(x) * probe_weights) in float64, with
    the judge's weights: by the inputs x (B, 2, 5, 1) or by the hidden
    kernel W1 (D, Hd)."""
    import keras

    model = m.MLP(HD, Q, dtype="float64")
    model(x)  # build
    model.hidden.set_weights(weights[:2])
    model.output_layer.set_weights(weights[2:])
    if wrt == "input":
        return tape_gradient(
            lambda v: keras.ops.sum(model(v) * probe_weights), x
        )
    kernel = model.hidden.kernel

    def by_kernel(v):
        # the model run with v in W1's place, so the tape sees v
        trainable = [
            v if w is kernel else w.value for w in model.trainable_variables
        ]
        frozen = [w.value for w in model.non_trainable_variables]
        out, _ = model.stateless_call(trainable, frozen, x)
        return keras.ops.sum(out * probe_weights)

    return tape_gradient(by_kernel, weights[0])


@lesson.probe
def run_contract(m, x):
    facts = {
        "linear": layer_contract(
            lambda: m.Linear(5), [x.reshape(B, D)], symbolic=[(D,)]
        ),
        "mlp": layer_contract(lambda: m.MLP(HD, Q), [x], symbolic=[IMAGE]),
    }
    facts["errors"] = value_errors(
        {
            "units": lambda: m.Linear(0),
            "num_hiddens": lambda: m.MLP(0, Q),
            "num_outputs": lambda: m.MLP(HD, -1),
            "logits": lambda: m.softmax_cross_entropy(
                np.zeros((B, Q, 1)), np.zeros((B,), "int32")
            ),
            "labels": lambda: m.softmax_cross_entropy(
                np.zeros((B, Q)), np.zeros((B, 1), "int32")
            ),
        }
    )
    return facts


@lesson.probe
def run_parameter_count(m):
    model = m.MLP(256, 10)
    model(np.zeros((1, 28, 28, 1), "float32"))
    return {
        "params": int(sum(np.prod(w.shape) for w in model.trainable_weights)),
        "shapes": [tuple(int(d) for d in w.shape) for w in model.weights],
    }


@lesson.probe
def run_training(m, x, y, steps, learning_rate):
    """Full-batch gradient descent on the student's MLP and loss; the loss
    before each step."""
    import keras
    import tensorflow as tf

    model = m.MLP(16, 3)
    model(x[:1])  # build
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = keras.ops.mean(m.softmax_cross_entropy(model(x), y))
        grads = tape.gradient(loss, model.trainable_weights)
        for weight, grad in zip(model.trainable_weights, grads, strict=True):
            weight.assign_sub(learning_rate * grad)
        losses.append(float(loss))
    return losses


# ------------------------------------------------------------------ inputs
def _images(rng):
    return rng.standard_normal((B, *IMAGE)).astype("float32")


def _mlp_weights(rng):
    return [
        (rng.standard_normal((D, HD)) * 0.5).astype("float32"),
        rng.standard_normal(HD).astype("float32"),
        (rng.standard_normal((HD, Q)) * 0.5).astype("float32"),
        rng.standard_normal(Q).astype("float32"),
    ]


def _separable(rng, n=60, d=8, classes=3):
    """`classes` Gaussian blobs in d dimensions, well apart."""
    centres = rng.standard_normal((classes, d)) * 3.0
    y = np.arange(n) % classes
    x = centres[y] + rng.standard_normal((n, d))
    return x.astype("float32"), y.astype("int32")


# ------------------------------------------------------------------ checks
def test_relu_values(rng):
    x = rng.standard_normal((B, 5, 2)).astype("float32")
    x[0, 0, 0] = 0.0
    expect_close(
        run_relu(x),
        ref_relu(x),
        say("l01.relu"),
        tol=EXACT,
        diagnoses=_diagnoses(ref_relu, x, mistakes=(RELU_REDUCES,)),
        hint=say("l01.relu_hint"),
    )


@pytest.mark.points(2)
def test_linear_matches_reference(rng):
    x = rng.standard_normal((B, D)).astype("float32")
    weights = [
        rng.standard_normal((D, 5)).astype("float32"),
        rng.standard_normal(5).astype("float32"),
    ]
    expect_close(
        run_linear(x, weights),
        ref_linear(x, *weights),
        say("l01.linear"),
        diagnoses=_diagnoses(
            ref_linear, x, *weights, mistakes=(LINEAR_NO_BIAS,)
        ),
        hint=say("l01.linear_hint"),
    )


@pytest.mark.points(3)
def test_mlp_matches_reference(rng):
    x = _images(rng)
    weights = _mlp_weights(rng)
    expect_close(
        run_mlp(x, weights),
        ref_mlp(x, weights),
        say("l01.mlp_logits"),
        diagnoses=_diagnoses(ref_mlp, x, weights),
        hint=say("l01.mlp_hint"),
    )


def test_mlp_parameter_count():
    """d2l's MLP on 28x28 images: 784*256 + 256 + 256*10 + 10 parameters."""
    facts = run_parameter_count()
    expected = 784 * 256 + 256 + 256 * 10 + 10
    expect(
        facts["params"] == expected,
        say(
            "l01.params",
            expected=f"{expected:,}",
            got=f"{facts['params']:,}",
            shapes=facts["shapes"],
        ),
    )


@pytest.mark.points(2)
def test_cross_entropy_values(rng):
    logits = (rng.standard_normal((5, Q)) * 3).astype("float32")
    labels = np.array([0, 3, 1, 2, 3], dtype="int32")
    losses, _ = run_cross_entropy(logits, labels)
    expect_close(
        losses,
        ref_cross_entropy(logits, labels),
        say("l01.ce"),
        diagnoses=_diagnoses(ref_cross_entropy, logits, labels),
        hint=say("l01.ce_hint"),
    )


@pytest.mark.points(2)
def test_cross_entropy_is_stable_for_large_logits():
    """Logits of 1e4: the naive exp() overflows, log-sum-exp does not."""
    logits = np.array(
        [
            [1e4, 0.0, -1e4, 5.0],
            [1e4, 1e4 - 2.0, 3.0, 1e4 - 1.0],
            [-1e4, -1e4 + 1.0, -1e4 + 3.0, -1e4],
            [2.0, 1e4, 1.0, 0.5],
        ],
        dtype="float32",
    )
    labels = np.array([0, 1, 2, 0], dtype="int32")
    losses, grads = run_cross_entropy(logits, labels)
    expected = ref_cross_entropy(logits, labels)
    diagnoses = _diagnoses(
        ref_cross_entropy,
        logits,
        labels,
        mistakes=(NAIVE_CE, LSE_WITHOUT_MAX),
    )
    expect(
        bool(np.all(np.isfinite(losses))),
        say(
            "l01.not_finite",
            got=np.asarray(losses).tolist(),
            expected=expected.tolist(),
        ),
        got=losses,
        diagnoses=diagnoses,
    )
    expect_close(
        losses,
        expected,
        say("l01.large_logits"),
        tol=at_magnitude(float(np.abs(logits).max())),
        diagnoses=diagnoses,
    )
    expect_close(
        grads,
        ref_cross_entropy_grad(logits, labels),
        say("l01.large_gradient"),
        tol=ELEMENTWISE,
    )


def test_cross_entropy_gradient_is_softmax_minus_one_hot(rng):
    logits = (rng.standard_normal((5, Q)) * 2).astype("float32")
    labels = np.array([1, 0, 3, 3, 2], dtype="int32")
    _, grads = run_cross_entropy(logits, labels)
    expect_close(
        grads,
        ref_cross_entropy_grad(logits, labels),
        say("l01.gradient"),
        hint=say("l01.gradient_hint"),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("wrt", ["input", "kernel"])
def test_mlp_gradient_matches_centred_differences(rng, wrt):
    x = _images(rng).astype("float64")
    weights = [w.astype("float64") for w in _mlp_weights(rng)]
    probe_weights = rng.standard_normal((B, Q))
    expect_gradient(
        run_mlp_gradient(wrt, x, weights, probe_weights),
        ref_mlp_gradient(wrt, x, weights, probe_weights),
        say("l01.mlp_gradient", wrt=wrt),
        tol=GRAD,
    )


@pytest.mark.parametrize("kind", ["linear", "mlp"])
def test_keras_layer_contract(rng, kind):
    x = _images(rng)
    facts = run_contract(x)
    linear = kind == "linear"
    name = "Linear(5)" if linear else f"MLP({HD}, {Q})"
    shape = (B, 5) if linear else (B, Q)
    # bound to the reference on the weights the layer was built with
    if linear:
        kernel, bias = contract_weights(facts[kind], name, [(D, 5), (5,)])
        expected = ref_linear(x.reshape(B, D), kernel, bias)
    else:
        layout = [(D, HD), (HD,), (HD, Q), (Q,)]
        expected = ref_mlp(x, contract_weights(facts[kind], name, layout))
    expect_layer_contract(
        facts[kind],
        name,
        output_shape=shape,
        symbolic_shape=(None, shape[1]),
        trainable=2 if linear else 4,
        expected=expected,
    )
    expect_value_errors(facts["errors"])


@pytest.mark.points(2)
def test_mlp_trains(rng):
    """Smoke: 15 steps of gradient descent on three separable blobs: the
    loss falls by half."""
    x, y = _separable(rng)
    losses = run_training(x, y, 15, 0.5)
    expect(
        bool(np.all(np.isfinite(losses))) and losses[-1] < 0.5 * losses[0],
        say("l01.training", losses=[round(v, 3) for v in losses]),
    )
