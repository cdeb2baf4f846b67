"""Grader for lesson 21: forward caches and backward passes, by hand, for
the Linear layer, the ReLU, the softmax cross-entropy and lesson 01's MLP;
the student's own gradient check; the MLP trained with the student's own
backward pass.

Sizes: B=2 examples, D=5 inputs, Hd=4 hidden units, U=3 outputs of a lone
Linear, Q=6 classes (every axis its own size, so a missing transpose shows
as a wrong shape). Conventions: the loss is the mean over the batch, so
dlogits carries a 1/B; ReLU's gradient at A == 0 is 0; the relative error
is CS231n's, |a - b| / max(|a|, |b|), the worst entry's.

Every gradient is judged twice, against values the judge computes itself
in float64: the grader's own NumPy derivation, and `tf.GradientTape` on the
same forward pass (a vector-Jacobian product: the tape's gradient of
sum(O * dO) is exactly what a backward pass given dO returns). The MLP's
gradient is also checked against centred differences of the reference's
own float64 loss, taken by the judge. The gradient check is fed functions
whose gradients the judge knows, with right and wrong analytic gradients;
its verdicts and numbers are judged. The training loop's weights are
judged by the accuracy the judge measures on held-out images. The lesson
is graded where no autodiff library can be imported (curriculum.toml:
by_hand).
"""

from functools import partial

import numpy as np
import pytest

from graders.lib.contract import centred_differences
from graders.lib.contract import expect_value_errors
from graders.lib.fixtures import reference
from graders.lib.judge import CheckFailed
from graders.lib.judge import Mistake
from graders.lib.judge import expect_close
from graders.lib.judge import mistake_outputs
from graders.lib.messages import say
from graders.lib.probes import value_errors
from graders.lib.references import softmax
from graders.lib.tapes import mean_cross_entropy
from graders.lib.tapes import tape_gradients
from graders.lib.tolerances import GRAD
from graders.lib.tolerances import LOSS_FALL
from m2t.grading.probe import Lesson

lesson = Lesson("l21_mlp_backprop")
B, D, HD, U, Q = 2, 5, 4, 3, 6
Q_IMAGES = 10  # toy_shapes' classes
KEYS = ("W1", "b1", "W2", "b2")

# ---------------------------------------------------------------- mistakes
DW_TRANSPOSED = Mistake(
    "linear_dw_transposed",
    "dW is dO^T X, (U, D): the gradient of W has W's shape (D, U), which "
    "puts the transpose on X: dW = X^T dO.",
)
DB_AVERAGED = Mistake(
    "linear_db_averaged",
    "db is the mean of dO's rows: b is added to every row, so its gradient "
    "is their sum (the 1/B of the loss is already inside dO).",
)
RELU_WRONG_SIDE = Mistake(
    "relu_grad_wrong_side",
    "ReLU's backward passes the gradient where A < 0 and blocks it where "
    "A > 0: it is the other way round, dA = dH * [A > 0].",
)
RELU_AT_ZERO = Mistake(
    "relu_grad_at_zero",
    "ReLU's backward passes the gradient at A == 0 too ([A >= 0]): the "
    "convention (TensorFlow's, d2l's) is 0 there, dA = dH * [A > 0].",
)
CE_NOT_DIVIDED = Mistake(
    "ce_grad_not_divided_by_batch",
    "dlogits is softmax - onehot without the 1/B: the loss is the mean over "
    "the batch, so each example's gradient is divided by B.",
)
CE_SIGN = Mistake(
    "ce_grad_sign_flipped",
    "dlogits is (onehot - softmax) / B, the gradient's negative: raising the "
    "right class's logit lowers the loss, so dL/do[y] = (p[y] - 1) / B < 0.",
)
SKIPS_RELU = Mistake(
    "mlp_skips_relu_backward",
    "the MLP's backward pass sends dH straight into the first layer's "
    "backward: the ReLU sits between them, so dA = relu_backward(dH) first.",
)
NUMERIC_ONE_SIDED = Mistake(
    "numerical_gradient_one_sided",
    "the numerical gradient is (f(x + h e_i) - f(x)) / h, a one-sided "
    "difference: its error shrinks like h, the centred difference's like "
    "h^2.",
)
NUMERIC_NOT_HALVED = Mistake(
    "numerical_gradient_not_halved",
    "the centred difference is divided by h: x + h and x - h are 2 h "
    "apart, so divide by 2 h.",
)
NUMERIC_NOT_RESTORED = Mistake(
    "numerical_gradient_not_restored",
    "x is left changed: each entry ends at x_i - h, so every later "
    "difference is taken at a point that has moved; put each entry back.",
)
REL_SUM = Mistake(
    "relative_error_sum_denominator",
    "the relative error divides by |a| + |b|: CS231n's notes divide by "
    "max(|a|, |b|), twice as large a figure where a and b are close.",
)
REL_MEAN = Mistake(
    "relative_error_mean",
    "the relative error is the mean over the entries: one wrong entry "
    "among many hides in a mean; take the worst entry's.",
)
MISTAKES = (
    DW_TRANSPOSED,
    DB_AVERAGED,
    RELU_WRONG_SIDE,
    RELU_AT_ZERO,
    CE_NOT_DIVIDED,
    CE_SIGN,
    SKIPS_RELU,
    NUMERIC_ONE_SIDED,
    NUMERIC_NOT_HALVED,
    NUMERIC_NOT_RESTORED,
    REL_SUM,
    REL_MEAN,
)
NUMERIC_MISTAKES = (NUMERIC_ONE_SIDED, NUMERIC_NOT_HALVED, NUMERIC_NOT_RESTORED)
REL_MISTAKES = (REL_SUM, REL_MEAN)
LINEAR_MISTAKES = (DW_TRANSPOSED, DB_AVERAGED)
RELU_MISTAKES = (RELU_WRONG_SIDE, RELU_AT_ZERO)
CE_MISTAKES = (CE_NOT_DIVIDED, CE_SIGN)


# --------------------------------------------- float64 references (NumPy)
@reference
def ref_linear(X, W, b, dO, mistake=None):
    """(O, dX, dW, db), written with einsum (the indices say the shapes)."""
    X, W, b, dO = (np.asarray(a, np.float64) for a in (X, W, b, dO))
    out = np.einsum("bd,du->bu", X, W) + b[None, :]
    dX = np.einsum("bu,du->bd", dO, W)
    dW = np.einsum("bd,bu->du", X, dO)
    if mistake is DW_TRANSPOSED:
        dW = dW.T
    db = np.einsum("bu->u", dO) / (len(dO) if mistake is DB_AVERAGED else 1)
    return out, dX, dW, db


@reference
def ref_relu(A, dH, mistake=None):
    """(H, dA); the derivative of relu as a 0/1 table of A's entries."""
    A, dH = np.asarray(A, np.float64), np.asarray(dH, np.float64)
    slope = np.where(A > 0, 1.0, 0.0)
    if mistake is RELU_WRONG_SIDE:
        slope = np.where(A < 0, 1.0, 0.0)
    elif mistake is RELU_AT_ZERO:
        slope = np.where(A >= 0, 1.0, 0.0)
    return np.where(A > 0, A, 0.0), slope * dH


@reference
def ref_cross_entropy(logits, labels, mistake=None):
    """(mean loss, dlogits) from the float64 softmax of graders.lib."""
    z = np.asarray(logits, np.float64)
    labels = np.asarray(labels)
    n = len(z)
    probs = softmax(z)
    onehot = np.eye(z.shape[1])[labels]
    loss = float(-np.log(probs[onehot.astype(bool)]).sum() / n)
    grad = probs - onehot
    if mistake is CE_SIGN:
        grad = -grad
    return loss, grad if mistake is CE_NOT_DIVIDED else grad / n


@reference
def ref_mlp(X, y, params, mistake=None):
    """(loss, grads) of the MLP from the references above; `mistake` is
    passed on to the piece it belongs to."""
    W1, b1, W2, b2 = (params[k] for k in KEYS)
    A, _, _, _ = ref_linear(X, W1, b1, np.zeros((len(X), W1.shape[1])))
    H, _ = ref_relu(A, np.zeros_like(A))
    logits, _, _, _ = ref_linear(H, W2, b2, np.zeros((len(X), W2.shape[1])))
    loss, dO = ref_cross_entropy(logits, y, mistake)
    _, dH, dW2, db2 = ref_linear(H, W2, b2, dO, mistake)
    dA = dH if mistake is SKIPS_RELU else ref_relu(A, dH, mistake)[1]
    _, _, dW1, db1 = ref_linear(X, W1, b1, dA, mistake)
    return loss, {"W1": dW1, "b1": db1, "W2": dW2, "b2": db2}


@reference
def ref_mlp_centred(X, y, params, key):
    """d(loss)/d(params[key]) by centred differences of the reference's
    float64 loss, of params[key]'s shape."""
    return centred_differences(
        lambda w: ref_mlp(X, y, {**params, key: w})[0], params[key]
    )


def bumpy(x, C, M, s):
    """The scalar function the gradient check is fed: sum(C * tanh(x M))
    + sum(s * x^2) / 2, x (R, K), M (K, P), C (R, P), s (R, K)."""
    x = np.asarray(x, np.float64)
    return float(np.sum(C * np.tanh(x @ M)) + 0.5 * np.sum(s * x * x))


@reference
def ref_bumpy_gradient(x, C, M, s):
    """The exact gradient of `bumpy` at x, (R, K)."""
    x = np.asarray(x, np.float64)
    slope = 1.0 - np.tanh(np.einsum("rk,kp->rp", x, M)) ** 2
    return np.einsum("rp,kp->rk", C * slope, M) + s * x


@reference
def ref_numerical(x, C, M, s, h, mistake=None):
    """(the numerical gradient of `bumpy` at x, x as the loop leaves it):
    centred differences, entry by entry in C order."""
    x = np.array(x, np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        saved = x[i]
        x[i] = saved + h
        up = bumpy(x, C, M, s)
        x[i] = saved if mistake is NUMERIC_ONE_SIDED else saved - h
        down = bumpy(x, C, M, s)
        if mistake is not NUMERIC_NOT_RESTORED:
            x[i] = saved
        width = (
            h if mistake in (NUMERIC_ONE_SIDED, NUMERIC_NOT_HALVED) else 2 * h
        )
        grad[i] = (up - down) / width
    return grad, x


@reference
def ref_relative_error(a, b, mistake=None):
    """CS231n's relative error, the worst entry's; 0 where both are 0."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = np.maximum(np.abs(a), np.abs(b))
    if mistake is REL_SUM:
        scale = np.abs(a) + np.abs(b)
    ratio = np.divide(
        np.abs(a - b), scale, out=np.zeros_like(a), where=scale > 0
    )
    return float(ratio.mean() if mistake is REL_MEAN else ratio.max())


# ------------------------------------ float64 references (tf.GradientTape)
@reference
def tape_linear(X, W, b, dO):
    return tape_gradients(lambda x, w, c: x @ w + c, (X, W, b), dO)


@reference
def tape_relu(A, dH):
    import tensorflow as tf

    return tape_gradients(tf.nn.relu, (A,), dH)[0]


@reference
def tape_cross_entropy(logits, labels):
    return tape_gradients(lambda z: mean_cross_entropy(z, labels), (logits,))[0]


@reference
def tape_mlp(X, y, params):
    import tensorflow as tf

    def loss(W1, b1, W2, b2):
        H = tf.nn.relu(tf.constant(X, tf.float64) @ W1 + b1)
        return mean_cross_entropy(H @ W2 + b2, y)

    grads = tape_gradients(loss, [params[k] for k in KEYS])
    return dict(zip(KEYS, grads, strict=True))


_diagnoses = partial(mistake_outputs, mistakes=MISTAKES)


# ------------------------------------------------------------------ probes
@lesson.probe
def run_linear(m, X, W, b, dO):
    out, cache = m.linear_forward(X, W, b)
    dX, dW, db = m.linear_backward(dO, cache)
    return out, dX, dW, db


@lesson.probe
def run_relu(m, A, dH):
    H, cache = m.relu_forward(A)
    return H, m.relu_backward(dH, cache)


@lesson.probe
def run_cross_entropy(m, logits, labels):
    loss, dlogits = m.softmax_cross_entropy_loss(logits, labels)
    return float(loss), dlogits


@lesson.probe
def run_mlp(m, X, y, params):
    loss, grads = m.mlp_loss_and_grads(X, y, params)
    return float(loss), {k: np.asarray(grads[k]) for k in KEYS}


@lesson.probe
def run_numerical(m, x, C, M, s, h):
    """(the student's numerical gradient of `bumpy`, x after the call, how
    many times f was called)."""
    calls = [0]

    def f(point):
        calls[0] += 1
        return bumpy(point, C, M, s)

    x = np.array(x, np.float64)
    grad = m.numerical_gradient(f, x, h)
    return np.asarray(grad), x, calls[0]


@lesson.probe
def run_relative_error(m, a, b):
    return float(m.relative_error(a, b))


@lesson.probe
def run_gradient_check(m, x, C, M, s, analytic, h, threshold):
    ok, error = m.gradient_check(
        lambda point: bumpy(point, C, M, s),
        np.array(x, np.float64),
        analytic,
        h,
        threshold,
    )
    return bool(ok), float(error)


@lesson.probe
def run_train(m, X, y, params, lr, epochs, batch_size, seed):
    trained, losses = m.train_mlp(X, y, params, lr, epochs, batch_size, seed)
    return {k: np.asarray(trained[k]) for k in KEYS}, np.asarray(losses)


@lesson.probe
def run_errors(m):
    return value_errors(
        {
            "X": lambda: m.linear_forward(
                np.zeros((B, D + 1)), np.zeros((D, U)), np.zeros(U)
            ),
            "b": lambda: m.linear_forward(
                np.zeros((B, D)), np.zeros((D, U)), np.zeros(U + 1)
            ),
            "logits": lambda: m.softmax_cross_entropy_loss(
                np.zeros((B, Q, 1)), np.zeros(B, "int64")
            ),
            "labels": lambda: m.softmax_cross_entropy_loss(
                np.zeros((B, Q)), np.zeros((B, 1), "int64")
            ),
        }
    )


# ------------------------------------------------------------------ inputs
def _params(rng):
    return {
        "W1": rng.standard_normal((D, HD)),
        "b1": rng.standard_normal(HD) * 0.5,
        "W2": rng.standard_normal((HD, Q)),
        "b2": rng.standard_normal(Q) * 0.5,
    }


def _labels(rng, n=B):
    return rng.integers(0, Q, size=n).astype("int64")


# ------------------------------------------------------------------ checks
@pytest.mark.points(2)
def test_linear_backward(rng):
    X, W = rng.standard_normal((B, D)), rng.standard_normal((D, U))
    b, dO = rng.standard_normal(U), rng.standard_normal((B, U))
    out, dX, dW, db = run_linear(X, W, b, dO)
    ref = ref_linear(X, W, b, dO)
    tape = tape_linear(X, W, b, dO)
    names = ("O", "dX (B, D)", "dW (D, U)", "db (U,)")
    for i, (got, name) in enumerate(zip((out, dX, dW, db), names, strict=True)):
        expect_close(
            got,
            ref[i],
            say("l21.linear", name=name),
            tol=GRAD,
            diagnoses=_diagnoses(
                ref_linear, X, W, b, dO, mistakes=LINEAR_MISTAKES, part=i
            ),
            hint=say("l21.linear_hint"),
        )
        if i:
            expect_close(
                got, tape[i - 1], say("l21.linear_tape", name=name), tol=GRAD
            )


@pytest.mark.points(2)
def test_relu_backward(rng):
    A = rng.standard_normal((B, HD))
    A[0, 1] = A[1, 3] = 0.0  # the kink: the gradient there is 0
    dH = rng.standard_normal((B, HD))
    H, dA = run_relu(A, dH)
    ref_H, ref_dA = ref_relu(A, dH)
    expect_close(H, ref_H, say("l21.relu_forward"), tol=GRAD)
    expect_close(
        dA,
        ref_dA,
        say("l21.relu_backward"),
        tol=GRAD,
        diagnoses=_diagnoses(ref_relu, A, dH, mistakes=RELU_MISTAKES, part=1),
        hint=say("l21.relu_hint"),
    )
    expect_close(dA, tape_relu(A, dH), say("l21.relu_tape"), tol=GRAD)


@pytest.mark.points(2)
def test_cross_entropy_gradient(rng):
    logits = rng.standard_normal((B, Q)) * 2
    labels = _labels(rng)
    loss, dlogits = run_cross_entropy(logits, labels)
    ref_loss, ref_grad = ref_cross_entropy(logits, labels)
    expect_close(loss, ref_loss, say("l21.loss"), tol=GRAD)
    expect_close(
        dlogits,
        ref_grad,
        say("l21.dlogits"),
        tol=GRAD,
        diagnoses=_diagnoses(
            ref_cross_entropy, logits, labels, mistakes=CE_MISTAKES, part=1
        ),
        hint=say("l21.dlogits_hint"),
    )
    expect_close(
        dlogits,
        tape_cross_entropy(logits, labels),
        say("l21.dlogits_tape"),
        tol=GRAD,
    )


def test_cross_entropy_is_stable_for_large_logits():
    logits = np.array(
        [[1e4, 0.0, -1e4, 5.0, 1.0, 2.0], [3.0, 1e4 - 1.0, 1e4, 0.0, 1.0, 0]]
    )
    labels = np.array([0, 1])
    loss, dlogits = run_cross_entropy(logits, labels)
    ref_loss, ref_grad = ref_cross_entropy(logits, labels)
    expect_close(loss, ref_loss, say("l21.large_loss"), tol=GRAD)
    expect_close(dlogits, ref_grad, say("l21.large_dlogits"), tol=GRAD)
    expect_value_errors(run_errors())


@pytest.mark.points(3)
def test_mlp_gradients(rng):
    X, y, params = rng.standard_normal((B, D)), _labels(rng), _params(rng)
    loss, grads = run_mlp(X, y, params)
    ref_loss, ref_grads = ref_mlp(X, y, params)
    tape = tape_mlp(X, y, params)
    expect_close(loss, ref_loss, say("l21.mlp_loss"), tol=GRAD)
    for key in KEYS:
        expect_close(
            grads[key],
            ref_grads[key],
            say("l21.mlp_grad", key=key),
            tol=GRAD,
            diagnoses=_diagnoses(
                ref_mlp, X, y, params, pick=lambda out, k=key: out[1][k]
            ),
            hint=say("l21.mlp_hint"),
        )
        expect_close(
            grads[key],
            tape[key],
            say("l21.mlp_tape", key=key),
            tol=GRAD,
        )


@pytest.mark.parametrize("key", ["W1", "b2"])
def test_mlp_gradient_matches_centred_differences(rng, key):
    X, y, params = rng.standard_normal((B, D)), _labels(rng), _params(rng)
    _, grads = run_mlp(X, y, params)
    expect_close(
        grads[key],
        ref_mlp_centred(X, y, params, key),
        say("l21.mlp_centred", key=key),
        tol=GRAD,
    )


# ------------------------------------------------- gradient check, training
def _bumpy_inputs(rng):
    """x (3, 4), C (3, 5), M (4, 5), s (3, 4): a function with curvature
    in every direction, so that a one-sided difference shows."""
    return (
        rng.standard_normal((3, 4)),
        rng.standard_normal((3, 5)),
        rng.standard_normal((4, 5)),
        rng.uniform(0.5, 2.0, size=(3, 4)),
    )


H_CHECK = 1e-4
"""The step the checks give `numerical_gradient`: the centred difference's
error (h^2) is far below GRAD, a one-sided one's (h) far above."""


@pytest.mark.points(2)
def test_numerical_gradient(rng):
    x, C, M, s = _bumpy_inputs(rng)
    grad, after, calls = run_numerical(x, C, M, s, H_CHECK)
    expected, _ = ref_numerical(x, C, M, s, H_CHECK)
    expect_close(
        after,
        x,
        say("l21.numeric_restored"),
        tol=GRAD,
        diagnoses=_diagnoses(
            ref_numerical,
            x,
            C,
            M,
            s,
            H_CHECK,
            mistakes=NUMERIC_MISTAKES,
            part=1,
        ),
    )
    expect_close(
        grad,
        expected,
        say("l21.numeric", h=f"{H_CHECK:g}"),
        tol=GRAD,
        diagnoses=_diagnoses(
            ref_numerical,
            x,
            C,
            M,
            s,
            H_CHECK,
            mistakes=NUMERIC_MISTAKES,
            part=0,
        ),
        hint=say("l21.numeric_hint"),
    )
    if calls < 2 * x.size:
        raise CheckFailed(say("l21.numeric_calls", calls=calls, size=x.size))


@pytest.mark.points(1)
def test_relative_error(rng):
    a = rng.standard_normal((4, 3))
    b = a * (1 + 1e-3 * rng.standard_normal((4, 3)))
    b[1, 2] = -a[1, 2]  # one entry of the wrong sign: its error is 1
    a[3, 0] = b[3, 0] = 0.0  # both 0: counts as 0, not NaN
    for left, right in ((a, b), (a[:3], b[:3] * (1 + 1e-2))):
        expect_close(
            run_relative_error(left, right),
            ref_relative_error(left, right),
            say("l21.rel_error", shape=str(left.shape)),
            tol=GRAD,
            diagnoses=_diagnoses(
                ref_relative_error, left, right, mistakes=REL_MISTAKES
            ),
            hint=say("l21.rel_error_hint"),
        )


@pytest.mark.points(2)
def test_gradient_check_verdicts(rng):
    """Fed a right gradient, one with a single wrong entry and one twice
    too large: the verdicts and the errors the judge computes itself."""
    x, C, M, s = _bumpy_inputs(rng)
    right = ref_bumpy_gradient(x, C, M, s)
    one_wrong = right.copy()
    one_wrong[2, 1] *= 1.5
    numeric, _ = ref_numerical(x, C, M, s, H_CHECK)
    for name, analytic in (
        ("right", right),
        ("one_wrong", one_wrong),
        ("doubled", 2 * right),
    ):
        error = ref_relative_error(analytic, numeric)
        ok, got = run_gradient_check(x, C, M, s, analytic, H_CHECK, 1e-6)
        if ok != (error < 1e-6):
            raise CheckFailed(
                say(
                    f"l21.verdict_{name}",
                    got=say("l21.passed" if ok else "l21.failed"),
                    error=f"{error:.2g}",
                )
            )
        expect_close(got, error, say("l21.check_error", case=name), tol=GRAD)


TARGET_ACCURACY = 0.75
"""The held-out accuracy the trained MLP must reach (the reference: 0.87
to 0.90 at seeds 1, 7, 12345 and 20261202)."""
TRAIN = {"lr": 0.5, "epochs": 10, "batch_size": 50}
"""The training settings of the check (the grade's seed draws the rest)."""
N_TRAIN, HIDDEN = 2000, 32


def _images(split):
    """toy_shapes' `split`, averaged over 2 x 2 pixels and scaled to [0, 1]:
    (N, 196) float64, labels (N,)."""
    from m2t_data.toy_shapes import toy_shapes

    images, labels = toy_shapes(split, seed=0)
    x = images[..., 0].astype(np.float64) / 255.0
    x = x.reshape(len(x), 14, 2, 14, 2).mean(axis=(2, 4))
    return x.reshape(len(x), -1), labels.astype("int64")


@pytest.mark.points(3)
def test_training_reaches_accuracy(rng):
    """The student's train_mlp, with their own backward pass, on 2,000 of
    the generated training images (drawn by the grade's seed); the judge
    measures the accuracy of the weights it returns on the 1,000 held-out
    images, which the worker is never sent."""
    X, y = _images("train")
    X_test, y_test = _images("test")
    mean = X.mean(axis=0)
    pick = rng.choice(len(X), N_TRAIN, replace=False)
    X, y, X_test = X[pick] - mean, y[pick], X_test - mean
    D = X.shape[1]
    start = {
        "W1": rng.standard_normal((D, HIDDEN)) * np.sqrt(2 / D),
        "b1": np.zeros(HIDDEN),
        "W2": rng.standard_normal((HIDDEN, Q_IMAGES)) * np.sqrt(1 / HIDDEN),
        "b2": np.zeros(Q_IMAGES),
    }
    seed = int(rng.integers(2**31))
    trained, losses = run_train(X, y, start, **TRAIN, seed=seed)
    for key in KEYS:
        expect_close(
            np.shape(trained[key]),
            np.shape(start[key]),
            say("l21.train_shape", key=key),
        )
    hidden = np.maximum(X_test @ trained["W1"] + trained["b1"], 0.0)
    logits = hidden @ trained["W2"] + trained["b2"]
    accuracy = float(np.mean(logits.argmax(axis=1) == y_test))
    losses = np.asarray(losses, np.float64).ravel()
    curve = " ".join(f"{v:.3f}" for v in losses)
    if len(losses) != TRAIN["epochs"] or not np.all(np.isfinite(losses)):
        raise CheckFailed(
            say("l21.train_losses", epochs=TRAIN["epochs"], curve=curve)
        )
    if accuracy < TARGET_ACCURACY or not losses[-1] < LOSS_FALL * losses[0]:
        raise CheckFailed(
            say(
                "l21.train_accuracy",
                accuracy=f"{accuracy:.3f}",
                target=f"{TARGET_ACCURACY:g}",
                curve=curve,
                **{k: f"{v:g}" for k, v in TRAIN.items()},
            )
        )
