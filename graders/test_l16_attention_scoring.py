"""Grader for lesson 16: masked softmax, additive and scaled dot-product
attention.

Sizes: B=2 sequences, T=3 queries, S=5 keys, D=8 (query/key size of the
dot product), V=6 (value size); additive attention uses Dq=7, Dk=8, H=4.
Every axis has its own size, so a transpose cannot pass unnoticed.
Conventions: keys at or past `valid_len` get weight exactly 0; a row with
valid length 0 is all zeros.
"""

from functools import partial

import numpy as np
import pytest

from graders.lib import conventions
from graders.lib import properties
from graders.lib.contract import centred_differences
from graders.lib.contract import expect_dropout_only_in_training
from graders.lib.contract import expect_gradient
from graders.lib.contract import expect_layer_contract
from graders.lib.contract import expect_value_errors
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import expect_shape
from graders.lib.judge import mistake_outputs
from graders.lib.messages import say
from graders.lib.probes import dropout_outputs
from graders.lib.probes import in_float64
from graders.lib.probes import layer_contract
from graders.lib.probes import tape_gradient
from graders.lib.probes import value_errors
from graders.lib.references import softmax
from graders.lib.tolerances import EXACT
from graders.lib.tolerances import F32
from graders.lib.tolerances import GRAD
from m2t.grading.probe import Lesson

lesson = Lesson("l16_attention_scoring")
B, T, S, D, V = 2, 3, 5, 8, 6
DQ, DK, H = 7, 8, 4

VALID_LENS = {
    "1d": np.array([2, 4], dtype="int32"),
    "2d": np.array([[1, 2, 5], [3, 0, 4]], dtype="int32"),
}

# ---------------------------------------------------------------- mistakes
NO_SCALE = Mistake(
    "no_scale",
    "the dot-product scores are not divided by sqrt(d), so their variance "
    "grows with d and the softmax saturates.",
)
SCALE_BY_D = Mistake(
    "scale_by_d",
    "the scores are divided by d instead of sqrt(d): the variance of q.k "
    "is d, so its standard deviation is sqrt(d).",
)
MASK_OFF_BY_ONE = Mistake(
    "mask_off_by_one",
    "the key at index valid_len is kept: valid positions are 0 .. "
    "valid_len - 1 (compare with <, not <=).",
)
NO_RENORMALISE = Mistake(
    "no_renormalise",
    "the mask is applied after the softmax, so the kept weights no longer "
    "sum to 1: mask the scores before the softmax.",
)
UNIFORM_EMPTY_ROWS = Mistake(
    "uniform_empty_rows", conventions.UNIFORM_EMPTY_ROWS
)
WRONG_AXIS = Mistake(
    "softmax_wrong_axis",
    "the softmax runs over the queries axis: each query's weights must sum "
    "to 1 over the keys, the last axis.",
)
NO_TANH = Mistake(
    "additive_no_tanh",
    "additive attention without tanh is linear in q and k, and the query "
    "term then cancels in the softmax: score = w_v^T tanh(W_q q + W_k k).",
)
MISTAKES = (
    NO_SCALE,
    SCALE_BY_D,
    MASK_OFF_BY_ONE,
    NO_RENORMALISE,
    UNIFORM_EMPTY_ROWS,
    WRONG_AXIS,
    NO_TANH,
)
SOFTMAX_MISTAKES = (
    MASK_OFF_BY_ONE,
    NO_RENORMALISE,
    UNIFORM_EMPTY_ROWS,
    WRONG_AXIS,
)


# --------------------------------------------------- float64 references


@reference
def ref_masked_softmax(X, valid_lens, mistake=None):
    """(B, T, S) weights in float64, optionally with a known mistake."""
    X = np.asarray(X, dtype=np.float64)
    if valid_lens is None:
        return softmax(X)
    lens = np.asarray(valid_lens)
    lens = np.broadcast_to(
        lens[:, None] if lens.ndim == 1 else lens, X.shape[:2]
    )
    idx = np.arange(X.shape[-1])
    keep = (
        idx <= lens[..., None]
        if mistake is MASK_OFF_BY_ONE
        else idx < lens[..., None]
    )
    if mistake is NO_RENORMALISE:
        return softmax(X) * keep
    filled = np.where(keep, X, conventions.MASK_FILL)
    if mistake is WRONG_AXIS:
        return softmax(filled, axis=-2) * keep
    weights = softmax(filled)
    return weights if mistake is UNIFORM_EMPTY_ROWS else weights * keep


@reference
def ref_dot_product(q, k, v, valid_lens, mistake=None):
    d = q.shape[-1]
    scale = {NO_SCALE: 1.0, SCALE_BY_D: float(d)}.get(mistake, np.sqrt(d))
    scores = np.asarray(q, np.float64) @ np.swapaxes(k, -1, -2) / scale
    weights = ref_masked_softmax(scores, valid_lens, mistake)
    return weights @ v, weights


@reference
def ref_additive(q, k, v, valid_lens, w_q, w_k, w_v, mistake=None):
    # in float64 throughout: float32 products round as the BLAS's threads
    # split them, which moves the last digits from one run to the next
    q, k, v, w_q, w_k, w_v = (
        np.asarray(x, np.float64) for x in (q, k, v, w_q, w_k, w_v)
    )
    feats = (q @ w_q)[:, :, None, :] + (k @ w_k)[:, None, :, :]
    if mistake is not NO_TANH:
        feats = np.tanh(feats)
    scores = (feats @ w_v)[..., 0]
    weights = ref_masked_softmax(scores, valid_lens, mistake)
    return weights @ v, weights


@reference
def ref_gradient(kind, q, k, v, valid_lens, probe_weights, weights):
    """d sum(output * probe_weights) / d(queries), (B, T, Dq): centred
    differences of the float64 reference (`weights`: the additive
    layer's; none for the dot product)."""

    def loss(x):
        out = (
            ref_dot_product(x, k, v, valid_lens)
            if kind == "dot"
            else ref_additive(x, k, v, valid_lens, *weights)
        )[0]
        return np.sum(out * probe_weights)

    return centred_differences(loss, q)


_diagnoses = partial(mistake_outputs, mistakes=MISTAKES)


# ------------------------------------------------------------------ probes
@lesson.probe
def run_masked_softmax(m, X, valid_lens):
    return m.masked_softmax(X, valid_lens)


@lesson.probe
def run_dot_product(m, q, k, v, valid_lens, dropout=0.0, training=False):
    layer = m.DotProductAttention(dropout=dropout)
    return layer(
        q, k, v, valid_lens, training=training, return_attention_weights=True
    )


@lesson.probe
def run_additive(m, q, k, v, valid_lens, weights, dropout=0.0, training=False):
    layer = m.AdditiveAttention(H, dropout=dropout)
    layer(q, k, v, valid_lens)  # build
    layer.W_q.set_weights([weights[0]])
    layer.W_k.set_weights([weights[1]])
    layer.w_v.set_weights([weights[2]])
    return layer(
        q, k, v, valid_lens, training=training, return_attention_weights=True
    )


@lesson.probe
def run_dropout(m, kind, q, k, v, valid_lens, weights=None):
    """`dropout_outputs` of a layer built with dropout 0.5 (additive: with
    the judge's `weights`, so its inference output is the judge's to
    compute)."""
    if kind == "dot":
        layer = m.DotProductAttention(0.5)
    else:
        layer = m.AdditiveAttention(H, 0.5)
        layer(q, k, v, valid_lens)  # build
        layer.W_q.set_weights([weights[0]])
        layer.W_k.set_weights([weights[1]])
        layer.w_v.set_weights([weights[2]])
    return dropout_outputs(partial(layer, q, k, v, valid_lens))


@lesson.probe
def run_contract(m, kind, q, k, v, valid_lens):
    if kind == "dot":
        facts = layer_contract(
            lambda: m.DotProductAttention(0.1),
            [q, k, v, valid_lens],
            symbolic=[(None, D), (None, D), (None, V), None],
        )
    else:
        facts = layer_contract(
            lambda: m.AdditiveAttention(H, 0.1),
            [q, k, v, valid_lens],
            symbolic=[(None, DQ), (None, DK), (None, V), None],
        )
    facts["errors"] = value_errors(
        {
            "num_hiddens": lambda: m.AdditiveAttention(0),
            "dropout": lambda: m.DotProductAttention(dropout=1.5),
            "valid_lens": lambda: m.masked_softmax(
                np.zeros((B, T, S)), np.zeros((B, T, 1))
            ),
        }
    )
    return facts


@lesson.probe
def run_gradient(m, kind, q, k, v, valid_lens, probe_weights, weights):
    """The tape gradient of sum(output * probe_weights) with respect to
    the queries, the layer in float64 with the judge's `weights` (additive;
    none for the dot product)."""
    import keras

    layer = (
        m.DotProductAttention(dtype="float64")
        if kind == "dot"
        else m.AdditiveAttention(H, dtype="float64")
    )
    in_float64(layer, q, k, v, valid_lens)  # build
    if kind == "additive":
        layer.W_q.set_weights([weights[0]])
        layer.W_k.set_weights([weights[1]])
        layer.w_v.set_weights([weights[2]])

    def f(x):
        out = layer(x, k, v, valid_lens)
        return keras.ops.sum(out * probe_weights)

    return tape_gradient(f, q)


# ------------------------------------------------------------------ inputs
def _inputs(rng, dq=D, dk=D):
    q = rng.standard_normal((B, T, dq)).astype("float32")
    k = rng.standard_normal((B, S, dk)).astype("float32")
    v = rng.standard_normal((B, S, V)).astype("float32")
    return q, k, v


def _additive_weights(rng):
    return [
        (rng.standard_normal((DQ, H)) * 0.5).astype("float32"),
        (rng.standard_normal((DK, H)) * 0.5).astype("float32"),
        (rng.standard_normal((H, 1)) * 0.5).astype("float32"),
    ]


# ------------------------------------------------------------------ checks
@pytest.mark.parametrize(
    "lens", ["1d", "2d"], ids=["valid_lens_B", "valid_lens_BT"]
)
def test_masked_softmax_shape(rng, lens):
    X = rng.standard_normal((B, T, S)).astype("float32")
    expect_shape(
        run_masked_softmax(X, VALID_LENS[lens]),
        (B, T, S),
        say("l16.softmax_output"),
    )


def _weight_properties(valid):
    """What any attention weights must satisfy: no weight on a masked key
    (when there is a mask) and rows summing to 1 (0 where no key is
    valid)."""
    if valid is None:
        return [properties.rows_sum_to_one()]
    return [properties.masked_keys(valid), properties.rows_sum_to_one(valid)]


@pytest.mark.points(2)
@pytest.mark.parametrize(
    "lens", ["1d", "2d", None], ids=["valid_lens_B", "valid_lens_BT", "no_mask"]
)
def test_masked_softmax_values(rng, lens):
    X = rng.standard_normal((B, T, S)).astype("float32")
    valid = VALID_LENS.get(lens)
    expect_close(
        run_masked_softmax(X, valid),
        ref_masked_softmax(X, valid),
        say("l16.softmax_weights"),
        diagnoses=_diagnoses(
            ref_masked_softmax, X, valid, mistakes=SOFTMAX_MISTAKES
        ),
        properties=_weight_properties(valid),
    )


@pytest.mark.parametrize(
    "lens", ["1d", "2d"], ids=["valid_lens_B", "valid_lens_BT"]
)
def test_masked_weights_are_exactly_zero_and_rows_sum_to_one(rng, lens):
    X = (rng.standard_normal((B, T, S)) * 10).astype("float32")
    valid = VALID_LENS[lens]
    got = np.asarray(run_masked_softmax(X, valid), dtype=np.float64)
    lens_bt = np.broadcast_to(
        valid[:, None] if valid.ndim == 1 else valid, (B, T)
    )
    masked = np.arange(S) >= lens_bt[..., None]
    expect(
        np.all(got[masked] == 0.0),
        say("l16.masked_not_zero", largest=f"{np.abs(got[masked]).max():.3g}"),
        got=got,
        diagnoses=_diagnoses(
            ref_masked_softmax, X, valid, mistakes=SOFTMAX_MISTAKES
        ),
    )
    sums = got.sum(-1)
    expect_close(
        sums[lens_bt > 0],
        np.ones(int((lens_bt > 0).sum())),
        say("l16.row_sums"),
        tol=F32,
    )


def test_zero_valid_length_gives_all_zero_row(rng):
    X = rng.standard_normal((B, T, S)).astype("float32")
    valid = np.array([0, 3], dtype="int32")
    got = run_masked_softmax(X, valid)
    expect(
        not np.isnan(got).any(),
        say("l16.empty_row_nan"),
    )
    uniform = np.allclose(got[0], 1.0 / S, **F32)  # float32's 1/S
    expect(
        not uniform,
        say("l16.empty_row_uniform", S=S),
        got=np.array([float(uniform)]),
        diagnoses={UNIFORM_EMPTY_ROWS: np.array([1.0])},
    )
    expect_close(
        got[0],
        np.zeros((T, S)),
        say("l16.empty_row"),
        tol=EXACT,
        diagnoses={UNIFORM_EMPTY_ROWS: np.full((T, S), 1.0 / S)},
    )


@pytest.mark.points(2)
@pytest.mark.parametrize(
    "lens", ["1d", "2d"], ids=["valid_lens_B", "valid_lens_BT"]
)
def test_dot_product_attention_matches_reference(rng, lens):
    q, k, v = _inputs(rng)
    valid = VALID_LENS[lens]
    out, weights = run_dot_product(q, k, v, valid)
    ref_out, ref_weights = ref_dot_product(q, k, v, valid)
    expect_close(
        weights,
        ref_weights,
        say("l16.dot_weights"),
        diagnoses=_diagnoses(ref_dot_product, q, k, v, valid, part=1),
        properties=_weight_properties(valid),
    )
    expect_close(
        out,
        ref_out,
        say("l16.dot_output"),
        diagnoses=_diagnoses(ref_dot_product, q, k, v, valid, part=0),
        hint=say("l16.output_hint"),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize(
    "lens", ["1d", "2d"], ids=["valid_lens_B", "valid_lens_BT"]
)
def test_additive_attention_matches_reference(rng, lens):
    q, k, v = _inputs(rng, dq=DQ, dk=DK)
    weights = _additive_weights(rng)
    valid = VALID_LENS[lens]
    out, got_weights = run_additive(q, k, v, valid, weights)
    ref_out, ref_weights = ref_additive(q, k, v, valid, *weights)
    expect_close(
        got_weights,
        ref_weights,
        say("l16.additive_weights"),
        diagnoses=_diagnoses(ref_additive, q, k, v, valid, *weights, part=1),
        properties=_weight_properties(valid),
    )
    expect_close(
        out,
        ref_out,
        say("l16.additive_output"),
        diagnoses=_diagnoses(ref_additive, q, k, v, valid, *weights, part=0),
    )


@pytest.mark.parametrize("kind", ["dot", "additive"])
def test_identical_keys_average_the_valid_values(rng, kind):
    """d2l's oracle: with identical keys every valid key gets the same weight,
    so the output is the mean of the first valid_len value rows."""
    keys = np.ones((2, 10, 2), dtype="float32")
    values = np.tile(
        np.arange(40, dtype="float32").reshape(1, 10, 4), (2, 1, 1)
    )
    valid = np.array([2, 6], dtype="int32")
    if kind == "dot":
        queries = rng.standard_normal((2, 1, 2)).astype("float32")
        out, _ = run_dot_product(queries, keys, values, valid)
    else:
        queries = rng.standard_normal((2, 1, DQ)).astype("float32")
        ws = _additive_weights(rng)
        ws[1] = ws[1][:2]
        out, _ = run_additive(queries, keys, values, valid, ws)
    expect_close(
        out,
        np.array([[[2, 3, 4, 5]], [[10, 11, 12, 13]]], dtype=np.float64),
        say("l16.identical_keys", layer=say(f"l16.{kind}")),
        hint=say("l16.identical_keys_hint"),
    )


@pytest.mark.parametrize("kind", ["dot", "additive"])
def test_dropout_only_in_training(rng, kind):
    q, k, v = _inputs(
        rng,
        dq=DQ if kind == "additive" else D,
        dk=DK if kind == "additive" else D,
    )
    valid = VALID_LENS["2d"]
    if kind == "dot":
        outputs = run_dropout(kind, q, k, v, valid)
        expected = ref_dot_product(q, k, v, valid)[0]
    else:
        ws = _additive_weights(rng)
        outputs = run_dropout(kind, q, k, v, valid, ws)
        expected = ref_additive(q, k, v, valid, *ws)[0]
    expect_dropout_only_in_training(
        outputs, say(f"l16.{kind}"), tol=EXACT, expected=expected
    )


@pytest.mark.parametrize("kind", ["dot", "additive"])
def test_keras_layer_contract(rng, kind):
    q, k, v = _inputs(
        rng,
        dq=DQ if kind == "additive" else D,
        dk=DK if kind == "additive" else D,
    )
    valid = VALID_LENS["1d"]
    facts = run_contract(kind, q, k, v, valid)
    if kind == "dot":
        expected = ref_dot_product(q, k, v, valid)[0]
    else:  # on the weights the layer was built with (W_q, W_k, w_v)
        before = facts["step"]["before"]
        ws = [np.asarray(w, np.float64) for w in before]
        expected = (
            ref_additive(q, k, v, valid, *ws)[0]
            if [w.shape for w in ws] == [(DQ, H), (DK, H), (H, 1)]
            else None
        )
        expect(expected is not None, say("l16.contract_weights"))
    expect_layer_contract(
        facts,
        say(f"l16.{kind}"),
        output_shape=(B, T, V),
        symbolic_shape=(None, None, V),
        on=say("l16.symbolic_on"),
        trainable=0 if kind == "dot" else 3,
        expected=expected,
    )
    expect_value_errors(facts["errors"])


@pytest.mark.points(2)
@pytest.mark.parametrize("kind", ["dot", "additive"])
def test_gradient_matches_centred_differences(rng, kind):
    q, k, v = _inputs(
        rng,
        dq=DQ if kind == "additive" else D,
        dk=DK if kind == "additive" else D,
    )
    q, k, v = (a.astype("float64") for a in (q, k, v))
    probe_weights = rng.standard_normal((B, T, V))
    valid = VALID_LENS["2d"]
    weights = (
        [w.astype("float64") for w in _additive_weights(rng)]
        if kind == "additive"
        else []
    )
    got = run_gradient(kind, q, k, v, valid, probe_weights, weights)
    expect_gradient(
        got,
        ref_gradient(kind, q, k, v, valid, probe_weights, weights),
        say("l16.gradient", layer=say(f"l16.{kind}")),
        tol=GRAD,
    )
