"""Grader for lesson 05: lagged features, the autoregressive MLP and k-step-
ahead prediction.

Sizes: series of T=23 and T=40 values, windows tau=1, 4 and 7, a hidden
layer of 10 units (d2l) and, for the k-step checks, a grader-made model with
H=6 tanh units. Edge cases: a series that is a column of a (T, 2) table (a
strided view), and the largest k or tau there is (a single window, one
prediction). Conventions: `features[j] = x[j : j + tau]` (oldest first),
`labels[j] = x[j + tau]`; the k-step prediction j is of `x[j + tau + k - 1]`.
"""

import numpy as np
import pytest

from graders.lib.contract import expect_value_errors
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import expect_shape
from graders.lib.judge import fail
from graders.lib.messages import say
from graders.lib.probes import value_errors
from graders.lib.tolerances import EXACT
from m2t.grading.probe import Lesson

lesson = Lesson("l05_sequence_models")
HIDDENS = 10
H_REF = 6  # hidden units of the grader's own model in the k-step checks

# ---------------------------------------------------------------- mistakes
LABEL_IN_FEATURES = Mistake(
    "label_in_features",
    "the feature windows are shifted one step late, so the newest feature "
    "is the label itself: row j must hold x[j .. j+tau-1] and its label "
    "x[j+tau].",
)
NO_RELU = Mistake(
    "no_relu",
    "the hidden layer has no ReLU, so the MLP is a linear model: give the "
    "hidden Dense activation='relu'.",
)
RELU_ON_OUTPUT = Mistake(
    "relu_on_output",
    "the output layer has a ReLU, so the model can never predict a negative "
    "value (half of a sine): the output Dense has no activation.",
)
TRUE_VALUES_FED_BACK = Mistake(
    "k_step_uses_true_values",
    "the k-step prediction feeds in the true observations instead of the "
    "model's own predictions, which makes it a one-step prediction: append "
    "each prediction to the window.",
)
MISTAKES = (LABEL_IN_FEATURES, NO_RELU, RELU_ON_OUTPUT, TRUE_VALUES_FED_BACK)


# --------------------------------------------------- float64 references
@reference
def ref_lagged_features(x, tau, mistake=None):
    """(features (T-tau, tau), labels (T-tau,)) in float64."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x) - tau
    shift = 1 if mistake is LABEL_IN_FEATURES else 0
    features = np.stack(
        [x[i + shift : i + shift + n] for i in range(tau)], axis=1
    )
    return features, x[tau:]


@reference
def ref_mlp(features, weights, mistake=None):
    """(N, 1): Dense(relu) then Dense, with d2l's layout of `weights`."""
    w1, b1, w2, b2 = (np.asarray(w, np.float64) for w in weights)
    hidden = np.asarray(features, np.float64) @ w1 + b1
    if mistake is not NO_RELU:
        hidden = np.maximum(hidden, 0.0)
    out = hidden @ w2 + b2
    return np.maximum(out, 0.0) if mistake is RELU_ON_OUTPUT else out


@reference
def ref_tanh_model(window, weights):
    """The grader's k-step model: Dense(H, tanh) then Dense(1)."""
    w1, b1, w2, b2 = (np.asarray(w, np.float64) for w in weights)
    return np.tanh(window @ w1 + b1) @ w2 + b2


@reference
def ref_k_step(x, tau, k, weights, mistake=None):
    """(T - tau - k + 1,) k-step-ahead predictions, float64."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x) - tau - k + 1
    window = np.stack([x[i : i + n] for i in range(tau)], axis=1)
    for step in range(k):
        pred = ref_tanh_model(window, weights)[:, 0]
        newest = (
            x[tau + step : tau + step + n]
            if mistake is TRUE_VALUES_FED_BACK
            else pred
        )
        window = np.concatenate([window[:, 1:], newest[:, None]], axis=1)
    return pred


# ------------------------------------------------------------------ probes
@lesson.probe
def run_lagged_features(m, x, tau):
    return m.lagged_features(x, tau)


@lesson.probe
def run_mlp(m, tau, features, weights=None):
    model = m.autoregressive_mlp(tau)
    model(features[:1])  # build, in case the model has no Input
    if weights is not None:
        model.set_weights(weights)
    return {
        "shapes": [tuple(int(d) for d in w.shape) for w in model.weights],
        "trainable": len(model.trainable_weights),
        "output": model(features),
    }


def _grader_model(tau, weights):
    """A small fixed model (not the student's) for the k-step checks."""
    import keras

    model = keras.Sequential(
        [
            keras.Input(shape=(tau,)),
            keras.layers.Dense(H_REF, activation="tanh"),
            keras.layers.Dense(1),
        ]
    )
    model.set_weights(weights)
    return model


@lesson.probe
def run_lagged_features_of_column(m, table, column, tau):
    """lagged_features of one column of a (T, C) table: a strided view."""
    return m.lagged_features(table[:, column], tau)


@lesson.probe
def run_k_step(m, x, tau, k, weights):
    return m.k_step_predict(_grader_model(tau, weights), x, tau, k)


@lesson.probe
def run_k_step_or_error(m, x, tau, k, weights):
    """run_k_step, or {"error": its first line} where the student's code
    raises on a shape (the judge then names the input)."""
    try:
        return m.k_step_predict(_grader_model(tau, weights), x, tau, k)
    except (IndexError, ValueError, TypeError) as e:
        first = str(e).splitlines()[0] if str(e) else ""
        return {"error": f"{type(e).__name__}: {first}"}


@lesson.probe
def run_one_step_two_ways(m, x, tau, weights):
    model = _grader_model(tau, weights)
    features, _ = m.lagged_features(x, tau)
    return (
        m.k_step_predict(model, x, tau, 1),
        np.asarray(model(features))[:, 0],
    )


@lesson.probe
def run_errors(m, x):
    m.lagged_features(x, 2)  # the lesson is started
    return value_errors(
        {
            "tau": lambda: m.lagged_features(x, 0),
            "num_hiddens": lambda: m.autoregressive_mlp(4, num_hiddens=0),
            "k": lambda: m.k_step_predict(None, x, 2, len(x)),
        }
    )


@lesson.probe
def run_training(m, x, tau, n_train, epochs):
    import keras

    features, labels = m.lagged_features(x, tau)
    model = m.autoregressive_mlp(tau)
    train_x, train_y = features[:n_train], labels[:n_train]

    def mse():
        return float(np.mean((np.asarray(model(train_x))[:, 0] - train_y) ** 2))

    before = mse()
    model.compile(
        optimizer=keras.optimizers.Adam(0.01), loss="mse", jit_compile=False
    )
    model.fit(train_x, train_y, batch_size=16, epochs=epochs, verbose=0)
    after = mse()
    preds, errors = {}, {}
    for k in (1, 64):
        preds[k] = np.asarray(m.k_step_predict(model, x, tau, k))
        errors[k] = float(np.mean((preds[k] - x[tau + k - 1 :]) ** 2))
    return before, after, errors[1], errors[64], preds[1], preds[64]


# ------------------------------------------------------------------ inputs
def _series(rng, T):
    return rng.standard_normal(T).astype("float32")


def _noisy_sine(rng, T=1000):
    """d2l's series, made here (not read from m2t_data/)."""
    t = np.arange(1, T + 1)
    return (np.sin(0.01 * t) + rng.normal(0.0, 0.2, T)).astype("float32")


def _mlp_weights(rng, tau):
    return [
        rng.standard_normal((tau, HIDDENS)).astype("float32"),
        rng.standard_normal(HIDDENS).astype("float32") * 0.5,
        rng.standard_normal((HIDDENS, 1)).astype("float32"),
        np.array([-0.7], dtype="float32"),  # so a ReLU output would clip
    ]


def _tanh_weights(rng, tau):
    return [
        (rng.standard_normal((tau, H_REF)) * 0.6).astype("float32"),
        (rng.standard_normal(H_REF) * 0.3).astype("float32"),
        (rng.standard_normal((H_REF, 1)) * 0.5).astype("float32"),
        np.array([0.1], dtype="float32"),
    ]


# ------------------------------------------------------------------ checks
@pytest.mark.parametrize(
    "T,tau", [(23, 1), (23, 4), (40, 7)], ids=["tau1", "tau4", "tau7"]
)
def test_lagged_features_shapes(rng, T, tau):
    features, labels = run_lagged_features(_series(rng, T), tau)
    expect_shape(features, (T - tau, tau), say("l05.features_shape", T=T))
    expect_shape(labels, (T - tau,), say("l05.labels_shape", T=T))


@pytest.mark.points(2)
@pytest.mark.parametrize(
    "T,tau", [(23, 1), (23, 4), (40, 7)], ids=["tau1", "tau4", "tau7"]
)
def test_lagged_features_values(rng, T, tau):
    x = _series(rng, T)
    features, labels = run_lagged_features(x, tau)
    ref_features, ref_labels = ref_lagged_features(x, tau)
    expect_close(
        features,
        ref_features,
        say("l05.features"),
        tol=EXACT,
        diagnoses={
            LABEL_IN_FEATURES: lambda: ref_lagged_features(
                x, tau, LABEL_IN_FEATURES
            )[0]
        },
        hint=say("l05.features_hint"),
    )
    expect_close(
        labels,
        ref_labels,
        say("l05.labels"),
        tol=EXACT,
        hint=say("l05.labels_hint"),
    )


def test_lagged_features_of_a_column(rng):
    """A series is often one column of a table: a view whose items are not
    next to each other in memory. Windows must come from its values, not
    from its memory layout."""
    T, tau = 23, 4
    table = np.stack([_series(rng, T), _series(rng, T)], axis=1)  # (T, 2)
    features, labels = run_lagged_features_of_column(table, 1, tau)
    ref_features, ref_labels = ref_lagged_features(table[:, 1], tau)
    expect_close(
        features,
        ref_features,
        say("l05.column_features", T=T, tau=tau),
        tol=EXACT,
        hint=say("l05.column_hint"),
    )
    expect_close(
        labels,
        ref_labels,
        say("l05.column_labels", T=T, tau=tau),
        tol=EXACT,
    )


def test_label_never_in_its_own_features(rng):
    """Each row's label is the value after its window: with a series of
    distinct values, it never appears among that row's features."""
    x = np.arange(100, 130, dtype="float32")
    features, labels = run_lagged_features(x, 4)
    leaked = np.any(np.asarray(features) == np.asarray(labels)[:, None], axis=1)
    expect(
        not leaked.any(),
        say("l05.leaked", rows=int(leaked.sum())),
        got=features,
        diagnoses={
            LABEL_IN_FEATURES: lambda: ref_lagged_features(
                x, 4, LABEL_IN_FEATURES
            )[0]
        },
    )


@pytest.mark.parametrize("tau", [4, 6], ids=["tau4", "tau6"])
def test_autoregressive_mlp_structure(rng, tau):
    features = rng.standard_normal((9, tau)).astype("float32")
    facts = run_mlp(tau, features)
    expect_shape(facts["output"], (9, 1), say("l05.mlp_output"))
    expect(
        facts["shapes"] == [(tau, HIDDENS), (HIDDENS,), (HIDDENS, 1), (1,)],
        say(
            "l05.mlp_shapes",
            expected=[(tau, HIDDENS), (HIDDENS,), (HIDDENS, 1), (1,)],
            got=facts["shapes"],
        ),
    )
    expect(
        facts["trainable"] == 4,
        say("l05.mlp_trainable", got=facts["trainable"]),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("tau", [4, 6], ids=["tau4", "tau6"])
def test_autoregressive_mlp_matches_reference(rng, tau):
    features = rng.standard_normal((17, tau)).astype("float32")
    weights = _mlp_weights(rng, tau)
    got = run_mlp(tau, features, weights)["output"]
    expect_close(
        got,
        ref_mlp(features, weights),
        say("l05.mlp_values"),
        diagnoses={
            mistake: (
                lambda mistake=mistake: ref_mlp(features, weights, mistake)
            )
            for mistake in (NO_RELU, RELU_ON_OUTPUT)
        },
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("k", [1, 4, 16, 64], ids=lambda k: f"k{k}")
def test_k_step_predict_matches_reference(rng, k):
    tau = 4
    x = _noisy_sine(rng, T=90)
    weights = _tanh_weights(rng, tau)
    expect_close(
        run_k_step(x, tau, k, weights),
        ref_k_step(x, tau, k, weights),
        say("l05.k_step", k=k),
        diagnoses={
            TRUE_VALUES_FED_BACK: lambda: ref_k_step(
                x, tau, k, weights, TRUE_VALUES_FED_BACK
            )
        },
        hint=say("l05.k_step_hint", n=len(x) - tau - k + 1),
    )


# The largest k (or tau) a series allows: n = T - tau - k + 1 = 1 window.
SINGLE_WINDOW = {"k_last": (23, 4, 19), "tau_last": (8, 7, 1)}


@pytest.mark.parametrize("case", list(SINGLE_WINDOW), ids=list(SINGLE_WINDOW))
def test_k_step_predict_of_a_single_window(rng, case):
    T, tau, k = SINGLE_WINDOW[case]
    x = _noisy_sine(rng, T=T)
    weights = _tanh_weights(rng, tau)
    got = run_k_step_or_error(x, tau, k, weights)
    if isinstance(got, dict):
        fail([say("l05.single_window_raised", T=T, tau=tau, k=k, **got)])
    shape_wrong = np.shape(got) != (1,)
    expect_close(
        got,
        ref_k_step(x, tau, k, weights),
        say("l05.single_window", T=T, tau=tau, k=k),
        diagnoses={
            TRUE_VALUES_FED_BACK: lambda: ref_k_step(
                x, tau, k, weights, TRUE_VALUES_FED_BACK
            )
        },
        hint=say("l05.single_window_hint")
        if shape_wrong
        else say("l05.k_step_hint", n=1),
    )


def test_one_step_prediction_is_the_model_on_lagged_features(rng):
    tau = 3
    x = _noisy_sine(rng, T=31)
    one_step, direct = run_one_step_two_ways(x, tau, _tanh_weights(rng, tau))
    expect_close(
        one_step,
        direct,
        say("l05.one_step"),
        hint=say("l05.one_step_hint"),
    )


def test_bad_arguments_raise_value_error(rng):
    errors = run_errors(_series(rng, 12))
    expect_value_errors(errors)


@pytest.mark.points(2)
def test_training_smoke_and_error_accumulation(rng):
    """Two epochs on the noisy sine lower the loss to near the noise level
    (0.2^2 = 0.04), and, as in d2l, 64-step-ahead predictions are far worse
    than one-step ones."""
    x = _noisy_sine(rng)
    before, after, one_step, far, pred1, pred64 = run_training(x, 4, 600, 2)
    expect(
        after < 0.5 * before and after < 0.1,
        say("l05.training", before=f"{before:.4f}", after=f"{after:.4f}"),
    )
    expect(
        far > 2 * one_step,
        say("l05.far", far=f"{far:.4f}", one_step=f"{one_step:.4f}"),
        # Fed the true values, entry j of the 64-step predictions is the
        # one-step prediction from the window x[j + 63 .. j + 66]: entry
        # j + 63 of the student's own one-step predictions, and only then.
        got=pred64,
        diagnoses={TRUE_VALUES_FED_BACK: lambda: np.asarray(pred1)[63:]},
    )
    expect(
        0.03 < one_step < 0.07,
        say("l05.noise", one_step=f"{one_step:.4f}"),
    )
