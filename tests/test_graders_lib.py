"""The graders' library (graders/lib): the layer contract fails a layer that
does not train every weight, the judge's messages, the shared references."""

from __future__ import annotations

import keras
import numpy as np
import pytest

from graders.lib import cnn_probes
from graders.lib.contract import expect_layer_contract
from graders.lib.contract import expect_value_errors
from graders.lib.contract import layer_facts
from graders.lib.judge import CheckFailed
from graders.lib.judge import Mistake
from graders.lib.judge import diagnose
from graders.lib.judge import expect_close
from graders.lib.judge import fail
from graders.lib.judge import mistake_outputs
from graders.lib.probes import layer_contract
from graders.lib.probes import value_errors
from graders.lib.references import bleu
from graders.lib.references import softmax


class Affine(keras.layers.Layer):
    """x (B, D) -> x @ kernel + bias_scale * bias, (B, units)."""

    def __init__(self, units: int = 3, bias_scale: float = 1.0, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.bias_scale = bias_scale

    def build(self, input_shape):
        self.kernel = self.add_weight(
            shape=(input_shape[-1], self.units), name="kernel"
        )
        self.bias = self.add_weight(
            shape=(self.units,), initializer="ones", name="bias"
        )

    def call(self, x):
        return keras.ops.matmul(x, self.kernel) + self.bias_scale * self.bias

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "bias_scale": self.bias_scale,
        }


class Mirrored(Affine):
    """Affine, then [y, -y] (B, 2 units): the plain sum of the output is
    exactly 0 whatever the weights."""

    def call(self, x):
        y = super().call(x)
        return keras.ops.concatenate([y, -y], axis=-1)


def _contract(layer_class, **kwargs):
    x = np.random.default_rng(0).standard_normal((4, 5)).astype("float32")
    return layer_facts(
        layer_contract(lambda: layer_class(**kwargs), [x], symbolic=[(5,)])
    )


def _expect_affine(facts):
    expect_layer_contract(
        facts,
        "Affine(3)",
        output_shape=(4, 3),
        symbolic_shape=(None, 3),
        trainable=2,
    )


def test_a_layer_that_trains_every_weight_keeps_the_contract():
    facts = _contract(Affine)
    assert facts["step_changes_weights"]
    assert facts["unmoved_weights"] == []
    _expect_affine(facts)


def test_a_bias_multiplied_by_zero_fails_the_contract_by_name():
    facts = _contract(Affine, bias_scale=0.0)
    assert facts["grads_finite"]  # a zero gradient is finite
    assert not facts["step_changes_weights"]
    (unmoved,) = facts["unmoved_weights"]
    assert unmoved.endswith("/bias (3,)")
    with pytest.raises(CheckFailed, match=r"leaves \S*/bias \(3,\) unchanged"):
        _expect_affine(facts)


def test_weights_the_plain_sum_ignores_are_still_trained():
    """[y, -y] sums to 0: a sum loss gives every weight a zero gradient;
    the contract's random-weighted sum does not."""
    facts = _contract(Mirrored)
    assert facts["output_shape"] == (4, 6)
    assert facts["unmoved_weights"] == []


def test_value_errors_are_judged_by_the_argument_they_name():
    def make(units):
        if units <= 0:
            raise ValueError(f"`units` must be positive, got {units}")

    def vague(units):
        raise ValueError("bad value")

    expect_value_errors(value_errors({"units": lambda: make(0)}), quoted=True)
    for calls in ({"units": lambda: vague(0)}, {"units": lambda: make(1)}):
        with pytest.raises(CheckFailed, match="bad `units` should raise"):
            expect_value_errors(value_errors(calls))
    with pytest.raises(TypeError):  # not a ValueError: the check crashes
        value_errors({"units": lambda: make("0")})


NEGATED = Mistake("negated", "the sign is flipped.")
DOUBLED = Mistake("doubled", "counted twice.")


def _reference(x, mistake=None):
    """(x, -x or 2x or x, and a tag)."""
    x = np.asarray(x, np.float64)
    out = -x if mistake is NEGATED else 2 * x if mistake is DOUBLED else x
    return x, out, "tag"


def test_mistake_outputs_picks_the_part_and_skips_a_harmless_mistake():
    x = np.array([1.0, -2.0])
    diagnoses = mistake_outputs(
        _reference, x, mistakes=(NEGATED, DOUBLED), part=1
    )
    assert diagnose(-x, diagnoses) is NEGATED
    assert diagnose(2 * x, diagnoses) is DOUBLED
    zero = np.zeros(2)  # doubling 0 changes nothing: it explains nothing
    skipped = mistake_outputs(
        _reference,
        zero,
        mistakes=(DOUBLED, NEGATED),
        pick=lambda out: out[1],
        skip_right=True,
    )
    assert diagnose(zero, skipped) is None
    assert (
        diagnose(
            zero, mistake_outputs(_reference, zero, mistakes=(DOUBLED,), part=1)
        )
        is None
    )  # skip_right is the default
    kept = mistake_outputs(
        _reference, zero, mistakes=(DOUBLED,), part=1, skip_right=False
    )
    assert diagnose(zero, kept) is DOUBLED


def test_a_diagnosis_leads_and_the_details_keep_their_alignment():
    with pytest.raises(CheckFailed) as excinfo:
        fail(["table:", "     0  Conv2D", "    10  Dense"], NEGATED)
    assert str(excinfo.value).splitlines() == [
        "Likely mistake [negated]: the sign is flipped.",
        "  table:",
        "       0  Conv2D",
        "      10  Dense",
    ]
    x = np.array([1.0, -2.0])
    with pytest.raises(CheckFailed) as excinfo:
        expect_close(-x, x, "out", diagnoses={NEGATED: -x})
    first, second, third = str(excinfo.value).splitlines()
    assert first.startswith("Likely mistake [negated]")
    assert second == "  out: 2 of 2 values are wrong."
    assert third.startswith("    max |got - expected| = 4 at index (1,)")


def test_bleu_follows_d2l():
    assert bleu("a b c d", "a b c d", k=2) == pytest.approx(1.0)
    # d2l's 'il est bon .' vs "he's calm .": 1 of 4 unigrams, 0 bigrams.
    assert bleu("a b c .", "x y .", k=2) == 0.0
    # Repeats: 'a a a' vs 'a b': clipped p1 = 1/3, p2 = 0 (no 'a a').
    assert bleu("a a a", "a b", k=1) == pytest.approx((1 / 3) ** 0.5)
    assert bleu("a a a", "a b", k=1, clip=False) == pytest.approx(1.0)
    # Too short: 'a' vs 'a b c': exp(1 - 3) * 1.
    assert bleu("a", "a b c", k=1) == pytest.approx(np.exp(-2.0))
    assert bleu("a", "a b c", k=1, brevity_penalty=False) == 1.0
    assert bleu("a", "a b c", k=2) == 0.0  # shorter than k words


def test_softmax_is_stable_and_sums_to_one():
    p = softmax(np.array([[1000.0, 1000.0, -np.inf]]))
    np.testing.assert_allclose(p, [[0.5, 0.5, 0.0]])


class _CountingInit(keras.initializers.Initializer):
    calls = 0

    def __call__(self, shape, dtype=None):
        type(self).calls += 1
        return keras.ops.zeros(shape, dtype=dtype)


def test_a_layer_table_initialises_no_weight_then_or_later():
    """The table is shape inference only: the model's weights are never
    initialised, not even by a later symbolic call elsewhere."""
    _CountingInit.calls = 0
    model = keras.Sequential(
        [keras.layers.Dense(4, kernel_initializer=_CountingInit())]
    )
    facts = cnn_probes.layer_table(model, (2, 3))
    assert facts["rows"] == [("Dense", (2, 4), "linear")]
    assert facts["trainable"] == 3 * 4 + 4
    keras.layers.Dense(2)(keras.Input((3,)))  # a later symbolic call
    with keras.StatelessScope():  # Keras's metrics open one, for example
        pass  # leaving the outermost scope initialises what waits
    assert _CountingInit.calls == 0


def test_tape_gradients_are_the_vector_jacobian_product():
    """Given a cotangent dO, the tape's gradient of x @ w is dO w^T and
    x^T dO (lessons 21-22 compare hand-written backward passes with it);
    a scalar forward needs none: d mean CE / d logits is (p - onehot) / B."""
    from graders.lib.tapes import mean_cross_entropy
    from graders.lib.tapes import tape_gradients

    rng = np.random.default_rng(0)
    x, w, dO = (rng.standard_normal(s) for s in ((2, 3), (3, 4), (2, 4)))
    dx, dw = tape_gradients(lambda a, b: a @ b, (x, w), dO)
    np.testing.assert_allclose(dx, dO @ w.T, rtol=1e-12)
    np.testing.assert_allclose(dw, x.T @ dO, rtol=1e-12)
    logits, labels = rng.standard_normal((2, 5)), np.array([4, 1])
    [grad] = tape_gradients(lambda z: mean_cross_entropy(z, labels), [logits])
    expected = (softmax(logits) - np.eye(5)[labels]) / 2
    np.testing.assert_allclose(grad, expected, rtol=1e-10)


def test_expect_gradient_judges_the_tape_gradient_with_its_own():
    """The judge's centred differences of its float64 loss decide: the
    right tape gradient passes, a made-up one fails, whatever the probe
    might have measured beside it."""
    from graders.lib.contract import centred_differences
    from graders.lib.contract import expect_gradient
    from graders.lib.probes import tape_gradient

    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3))
    w = rng.standard_normal((2, 3))

    def loss(v):
        return np.sum(np.tanh(v) * w)

    analytic = (1 - np.tanh(x) ** 2) * w
    np.testing.assert_allclose(centred_differences(loss, x), analytic, 1e-7)
    got = tape_gradient(lambda v: keras.ops.sum(keras.ops.tanh(v) * w), x)
    expected = centred_differences(loss, x)
    expect_gradient(got, expected, "tanh d(loss)/d(x)")
    with pytest.raises(CheckFailed, match="of the reference"):
        expect_gradient(np.zeros_like(x), expected, "tanh d(loss)/d(x)")


def test_contract_facts_that_contradict_each_other_fail():
    """The probe reports values, the judge draws the verdicts: weights
    reported as moved by a step their gradients do not give fail."""
    facts = _contract(Affine)
    forged = {**facts, "step": {**facts["step"]}}
    forged["step"]["after"] = [b + 1.0 for b in facts["step"]["before"]]
    assert not layer_facts(forged)["step_consistent"]
    with pytest.raises(CheckFailed, match="do not hold together"):
        _expect_affine(forged)
    _expect_affine(facts)


def _smoke_model(seed: int):
    keras.utils.set_random_seed(seed)
    return keras.Sequential(
        [keras.layers.Dense(8, "relu"), keras.layers.Dense(3)]
    )


def test_a_training_smoke_check_stops_at_its_verdict_and_fails_a_flat_loss():
    from graders.lib.cnn_judge import expect_loss_falls
    from graders.lib.tolerances import LOSS_FALL

    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 5)).astype("float32")
    y = rng.integers(0, 3, 12).astype("int32")
    # learning: it stops at the first loss below the target
    losses = cnn_probes.train_steps(_smoke_model(1), x, y, 50, 5e-2)
    assert 2 <= len(losses) < 50
    assert losses[-1] < LOSS_FALL * losses[0] <= min(losses[1:-1], default=9)
    expect_loss_falls(losses, "a two-layer net")
    every = cnn_probes.train_steps(_smoke_model(1), x, y, 6, 5e-2, None)
    assert len(every) == 6 and every[: len(losses)] == pytest.approx(losses)
    # not learning: every step runs, and the judge says so with the losses
    flat = cnn_probes.train_steps(_smoke_model(1), x, y, 4, 0.0)
    assert len(flat) == 4
    with pytest.raises(CheckFailed, match="within 4 Adam steps"):
        expect_loss_falls(flat, "a two-layer net")
