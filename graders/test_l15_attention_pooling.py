"""Grader for lesson 15: Nadaraya-Watson attention pooling.

Sizes: T=3 queries and S=5 keys for the pooling checks; n=6 points for
leave-one-out; n=8 training and 5 test inputs for prediction; the training
run uses the lesson's data shape, n=50 points in [0, 5). Every axis has its
own size, so a transpose cannot pass unnoticed.
Conventions: weights softmax(-((q - k) w)^2 / 2) over the keys; leave-one-out
row i holds every training point but the i-th, in order; the width is trained
on the sum of squared errors by plain SGD, starting at 2.
"""

from functools import partial

import numpy as np
import pytest

from graders.lib import properties
from graders.lib.contract import centred_differences
from graders.lib.contract import expect_gradient
from graders.lib.contract import expect_layer_contract
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import mistake_outputs
from graders.lib.messages import say
from graders.lib.probes import layer_contract
from graders.lib.probes import tape_gradient
from graders.lib.references import softmax
from graders.lib.tolerances import EXACT
from graders.lib.tolerances import GRAD
from m2t.grading.probe import Lesson

lesson = Lesson("l15_attention_pooling")
T, S = 3, 5

# ---------------------------------------------------------------- mistakes
KERNEL_WRONG_SIGN = Mistake(
    "kernel_wrong_sign",
    "the scores are +(x - x_i)^2 / 2: the farthest keys then get the "
    "largest weights. A Gaussian kernel decays with the distance: "
    "-(x - x_i)^2 / 2.",
)
WIDTH_OUTSIDE_SQUARE = Mistake(
    "width_outside_square",
    "the width multiplies the squared distance, -(x - x_i)^2 w / 2; it "
    "scales the distance before squaring: -((x - x_i) w)^2 / 2.",
)
SOFTMAX_OVER_QUERIES = Mistake(
    "softmax_over_queries",
    "the softmax runs over the queries (axis 0): each query's weights must "
    "sum to 1 over the keys, the last axis.",
)
LOO_INCLUDES_SELF = Mistake(
    "loo_includes_self",
    "leave-one-out keeps point i among its own keys: it then predicts "
    "itself, and the best width grows without bound.",
)
QUERIES_ARE_TRAINING_INPUTS = Mistake(
    "queries_are_training_inputs",
    "the predictions are made at the training inputs: the queries are the "
    "test inputs, the keys and values the training pairs.",
)
MISTAKES = (
    KERNEL_WRONG_SIGN,
    WIDTH_OUTSIDE_SQUARE,
    SOFTMAX_OVER_QUERIES,
    LOO_INCLUDES_SELF,
    QUERIES_ARE_TRAINING_INPUTS,
)
POOL_MISTAKES = (KERNEL_WRONG_SIGN, WIDTH_OUTSIDE_SQUARE, SOFTMAX_OVER_QUERIES)


# --------------------------------------------------- float64 references


@reference
def ref_pool(queries, keys, values, width=1.0, mistake=None):
    """(predictions (T,), weights (T, S)) in float64."""
    q = np.asarray(queries, np.float64)
    diff = q[:, None] - np.asarray(keys, np.float64)
    if mistake is WIDTH_OUTSIDE_SQUARE:
        scores = -(diff**2) * width / 2
    else:
        scores = -((diff * width) ** 2) / 2
    if mistake is KERNEL_WRONG_SIGN:
        scores = -scores
    axis = 0 if mistake is SOFTMAX_OVER_QUERIES else -1
    weights = softmax(scores, axis=axis)
    values = np.broadcast_to(np.asarray(values, np.float64), weights.shape)
    return (weights * values).sum(-1), weights


@reference
def ref_leave_one_out(x, y, mistake=None):
    n = len(x)
    if mistake is LOO_INCLUDES_SELF:
        return np.tile(x, (n, 1)), np.tile(y, (n, 1))
    keep = ~np.eye(n, dtype=bool)
    return np.tile(x, (n, 1))[keep].reshape(n, n - 1), np.tile(y, (n, 1))[
        keep
    ].reshape(n, n - 1)


@reference
def ref_predict(x_train, y_train, x_test, width=1.0, mistake=None):
    queries = x_train if mistake is QUERIES_ARE_TRAINING_INPUTS else x_test
    return ref_pool(queries, x_train, y_train, width, mistake)


@reference
def ref_loo_loss(x, y, width, mistake=None):
    keys, values = ref_leave_one_out(x, y, mistake)
    predictions, _ = ref_pool(x, keys, values, width, mistake)
    return float(((predictions - np.asarray(y, np.float64)) ** 2).sum())


@reference
def ref_loo_gradient(x, y, width):
    """d(leave-one-out loss) / d(width), (1,): centred differences of the
    float64 loss."""
    return centred_differences(lambda w: ref_loo_loss(x, y, w[0]), width)


@reference
def ref_fit(x, y, epochs=5, learning_rate=0.5, width=2.0, mistake=None):
    """(width, losses) of full-batch gradient descent, in float64."""
    losses = []
    for _ in range(epochs):
        losses.append(ref_loo_loss(x, y, width, mistake))
        eps = 1e-6
        grad = (
            ref_loo_loss(x, y, width + eps, mistake)
            - ref_loo_loss(x, y, width - eps, mistake)
        ) / (2 * eps)
        width = width - learning_rate * grad
    return width, losses


_diagnoses = partial(mistake_outputs, mistakes=MISTAKES)


# ------------------------------------------------------------------ probes
@lesson.probe
def run_pool(m, queries, keys, values, width=1.0):
    return m.attention_pool(queries, keys, values, width)


@lesson.probe
def run_leave_one_out(m, x, y):
    return m.leave_one_out(x, y)


@lesson.probe
def run_predict(m, x_train, y_train, x_test, width=1.0):
    return m.nw_predict(x_train, y_train, x_test, width)


@lesson.probe
def run_layer(m, queries, keys, values):
    layer = m.NWKernelRegression(initial_width=1.5)
    facts = layer_contract(
        lambda: m.NWKernelRegression(initial_width=1.5),
        [queries, keys, values],
        symbolic=[(), keys.shape[1:], values.shape[1:]],
    )
    out, weights = layer(queries, keys, values, return_attention_weights=True)
    return out, weights, facts


@lesson.probe
def run_gradient(m, x, y, width):
    import keras

    keys, values = m.leave_one_out(x, y)

    def loss(w):
        predictions, _ = m.attention_pool(x, keys, values, w)
        return keras.ops.sum((predictions - y) ** 2)

    return tape_gradient(loss, width)


@lesson.probe
def run_fit(m, x_train, y_train, x_test):
    width, losses = m.fit_width(x_train, y_train)
    plain, _ = m.nw_predict(x_train, y_train, x_test)
    learned, _ = m.nw_predict(x_train, y_train, x_test, width)
    return width, losses, plain, learned


# ------------------------------------------------------------------ inputs
def _pool_inputs(rng, per_query_keys):
    queries = rng.uniform(0, 5, T).astype("float32")
    shape = (T, S) if per_query_keys else (S,)
    keys = rng.uniform(0, 5, shape).astype("float32")
    values = rng.standard_normal(shape).astype("float32")
    return queries, keys, values


def _data(rng, n):
    """The lesson's data: y = 2 sin x + x^0.8 + N(0, 0.5^2). Computed in
    float64, then rounded to float32: float32 sin and pow differ in the
    last bit between NumPy's SIMD paths (AVX-512 or not), and the student
    edition finds its fixtures by the inputs' exact bits."""
    x = np.sort(rng.uniform(0, 5, n)).astype("float32")
    x64 = x.astype(np.float64)
    y = 2 * np.sin(x64) + x64**0.8 + rng.normal(0, 0.5, n)
    return x, y.astype("float32")


# ------------------------------------------------------------------ checks
@pytest.mark.points(2)
@pytest.mark.parametrize("per_query", [False, True], ids=["keys_S", "keys_TS"])
def test_nonparametric_pooling(rng, per_query):
    queries, keys, values = _pool_inputs(rng, per_query)
    predictions, weights = run_pool(queries, keys, values)
    ref_pred, ref_weights = ref_pool(queries, keys, values)
    args = (queries, keys, values, 1.0)
    expect_close(
        weights,
        ref_weights,
        say("l15.pool_weights"),
        diagnoses=_diagnoses(ref_pool, *args, mistakes=POOL_MISTAKES, part=1),
        hint=say("l15.pool_weights_hint"),
        properties=[properties.rows_sum_to_one()],
    )
    expect_close(
        predictions,
        ref_pred,
        say("l15.pool_predictions"),
        diagnoses=_diagnoses(ref_pool, *args, mistakes=POOL_MISTAKES, part=0),
        hint=say("l15.pool_predictions_hint"),
    )


def test_nearest_key_gets_the_largest_weight(rng):
    queries, keys, values = _pool_inputs(rng, per_query_keys=False)
    _, weights = run_pool(queries, keys, values)
    weights = np.asarray(weights, np.float64)
    nearest = np.abs(queries[:, None] - keys).argmin(-1)
    expect(
        weights.shape == (T, S)
        and np.all(weights >= 0)
        and np.allclose(weights.sum(-1), 1.0, atol=1e-5)
        and np.array_equal(weights.argmax(-1), nearest),
        say(
            "l15.nearest",
            nearest=nearest,
            sums=np.round(weights.sum(-1), 4),
            largest=weights.argmax(-1),
        ),
        got=weights,
        diagnoses=_diagnoses(
            ref_pool, queries, keys, values, mistakes=POOL_MISTAKES, part=1
        ),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("width", [0.5, 3.0], ids=["w_0.5", "w_3"])
def test_pooling_with_a_width(rng, width):
    queries, keys, values = _pool_inputs(rng, per_query_keys=True)
    predictions, weights = run_pool(queries, keys, values, width)
    args = (queries, keys, values, width)
    expect_close(
        weights,
        ref_pool(*args)[1],
        say("l15.width_weights", width=width),
        diagnoses=_diagnoses(ref_pool, *args, mistakes=POOL_MISTAKES, part=1),
        hint=say("l15.width_hint"),
        properties=[properties.rows_sum_to_one()],
    )
    expect_close(
        predictions,
        ref_pool(*args)[0],
        say("l15.width_predictions", width=width),
        diagnoses=_diagnoses(ref_pool, *args, mistakes=POOL_MISTAKES, part=0),
    )


@pytest.mark.points(2)
def test_leave_one_out(rng):
    x, y = _data(rng, 6)
    keys, values = run_leave_one_out(x, y)
    want_keys, want_values = ref_leave_one_out(x, y)
    expect_close(
        keys,
        want_keys,
        say("l15.loo_keys"),
        tol=EXACT,
        diagnoses={
            LOO_INCLUDES_SELF: ref_leave_one_out(x, y, LOO_INCLUDES_SELF)[0]
        },
        hint=say("l15.loo_hint"),
    )
    expect_close(
        values,
        want_values,
        say("l15.loo_values"),
        tol=EXACT,
        diagnoses={
            LOO_INCLUDES_SELF: ref_leave_one_out(x, y, LOO_INCLUDES_SELF)[1]
        },
    )


@pytest.mark.points(2)
def test_prediction_queries_are_the_test_inputs(rng):
    x_train, y_train = _data(rng, 8)
    x_test = np.arange(0.3, 5.0, 1.0).astype("float32")  # 5 test inputs
    predictions, weights = run_predict(x_train, y_train, x_test, 2.5)
    args = (x_train, y_train, x_test, 2.5)
    expect_close(
        weights,
        ref_predict(*args)[1],
        say("l15.predict_weights"),
        diagnoses=_diagnoses(ref_predict, *args, part=1),
        properties=[properties.rows_sum_to_one()],
    )
    expect_close(
        predictions,
        ref_predict(*args)[0],
        say("l15.predict_predictions"),
        diagnoses=_diagnoses(ref_predict, *args, part=0),
    )


def test_layer_with_learned_width(rng):
    queries, keys, values = _pool_inputs(rng, per_query_keys=True)
    out, weights, facts = run_layer(queries, keys, values)
    args = (queries, keys, values, 1.5)
    expected = ref_pool(*args)[0]
    expect_close(
        out,
        expected,
        say("l15.layer_predictions"),
        diagnoses=_diagnoses(ref_pool, *args, mistakes=POOL_MISTAKES, part=0),
    )
    expect_layer_contract(
        facts,
        "NWKernelRegression(initial_width=1.5)",
        output_shape=np.shape(expected),
        symbolic_shape=(None,),
        on="keras.Input",
        trainable=1,
        detail=" (w)",
        expected=expected,  # its width starts at initial_width=1.5
    )


@pytest.mark.points(2)
def test_gradient_of_the_leave_one_out_loss(rng):
    x, y = _data(rng, 7)
    x, y, width = x.astype("float64"), y.astype("float64"), np.array([1.7])
    expect_gradient(
        run_gradient(x, y, width),
        ref_loo_gradient(x, y, width),
        say("l15.gradient"),
        tol=GRAD,
    )


@pytest.mark.points(3)
def test_fit_width_by_leave_one_out(rng):
    x_train, y_train = _data(rng, 50)
    x_test = np.arange(0.0, 5.0, 0.1).astype("float32")
    width, losses, plain, learned = run_fit(x_train, y_train, x_test)
    want_width, want_losses = ref_fit(x_train, y_train)
    expect_close(
        np.array(losses),
        np.array(want_losses),
        say("l15.fit_losses"),
        diagnoses=_diagnoses(ref_fit, x_train, y_train, part=1),
        hint=say("l15.fit_hint"),
    )
    expect_close(
        np.array(width),
        np.array(want_width),
        say("l15.fit_width"),
        diagnoses=_diagnoses(ref_fit, x_train, y_train, part=0),
    )
    truth = 2 * np.sin(x_test) + x_test**0.8
    errors = [
        float(np.mean((np.asarray(p) - truth) ** 2)) for p in (plain, learned)
    ]
    expect(
        errors[1] < errors[0],
        say(
            "l15.fit_better",
            plain=f"{errors[0]:.4f}",
            learned=f"{errors[1]:.4f}",
            width=f"{width:.3f}",
        ),
    )
