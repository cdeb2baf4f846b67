"""Grader for lesson 18: multi-head attention.

Sizes: B=2 sequences, T=3 queries, S=5 keys, H=4 heads of Dk=6, so D=24;
the inputs have their own sizes Dq=7 (queries), 10 (keys), 11 (values).
Every axis has its own size, so a transpose cannot pass unnoticed.
Conventions: head h owns columns h*Dk:(h+1)*Dk of W_q, W_k, W_v and rows
h*Dk:(h+1)*Dk of W_o (the layout of keras.layers.MultiHeadAttention); scores
are scaled by 1/sqrt(Dk); masked keys get weight exactly 0 in every head.
"""

from functools import partial

import numpy as np
import pytest

from graders.lib import conventions
from graders.lib import properties
from graders.lib.contract import centred_differences
from graders.lib.contract import contract_weights
from graders.lib.contract import expect_dropout_only_in_training
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
from graders.lib.messages import say
from graders.lib.probes import dropout_outputs
from graders.lib.probes import in_float64
from graders.lib.probes import layer_contract
from graders.lib.probes import tape_gradient
from graders.lib.probes import value_errors
from graders.lib.references import softmax
from graders.lib.tolerances import EXACT
from graders.lib.tolerances import GRAD
from m2t.grading.probe import Lesson

lesson = Lesson("l18_multihead_attention")
B, T, S, H, DK = 2, 3, 5, 4, 6
D = H * DK
DQ, DKEY, DV = 7, 10, 11

VALID_LENS = {
    "1d": np.array([2, 4], dtype="int32"),
    "2d": np.array([[1, 2, 5], [3, 0, 4]], dtype="int32"),
    None: None,
}
LENS_IDS = ["valid_lens_B", "valid_lens_BT", "no_mask"]

# ---------------------------------------------------------------- mistakes
NO_SCALE = Mistake(
    "no_scale",
    "the scores are not divided by sqrt(Dk): q.k has variance Dk, so "
    "without the scale the softmax saturates as the heads grow.",
)
SCALE_BY_MODEL_SIZE = Mistake(
    "scale_by_model_size",
    "the scores are divided by sqrt(D), the model size; each head's dot "
    "product has only Dk = D / H terms, so divide by sqrt(D / H).",
)
MASK_AFTER_SOFTMAX = Mistake(
    "mask_after_softmax",
    "the mask is applied to the weights after the softmax, so the kept "
    "weights no longer sum to 1: fill the masked scores (-1e9) before it.",
)
MASK_OFF_BY_ONE = Mistake(
    "mask_off_by_one",
    "the key at index valid_len is kept: the valid keys are 0 .. "
    "valid_len - 1 (compare with <, not <=).",
)
HEADS_WRONG_ORDER = Mistake(
    "heads_wrong_order",
    "the heads are split as (B, T, Dk, H): head h then takes every H-th "
    "feature instead of the contiguous block h*Dk:(h+1)*Dk; reshape to "
    "(B, T, H, Dk) before moving H forward.",
)
UNIFORM_EMPTY_ROWS = Mistake(
    "uniform_empty_rows", conventions.UNIFORM_EMPTY_ROWS
)
NO_OUTPUT_PROJECTION = Mistake(
    "no_output_projection",
    "the concatenated heads are returned without W_o: the output "
    "projection mixes what the heads found.",
)
DROPOUT_ON_OUTPUT = Mistake(
    "dropout_on_output",
    "dropout acts on W_o's output; it belongs on the attention weights: "
    "head_h = Dropout(weights) V_h, so in training each head averages a "
    "random subset of the values.",
)
DROPPED_WEIGHTS_RETURNED = Mistake(
    "dropped_weights_returned",
    "the returned attention weights are the ones after dropout; return "
    "them before it, so that they sum to 1 in training too (only the "
    "values' average uses the dropped ones).",
)
MISTAKES = (
    NO_SCALE,
    SCALE_BY_MODEL_SIZE,
    MASK_AFTER_SOFTMAX,
    MASK_OFF_BY_ONE,
    HEADS_WRONG_ORDER,
    NO_OUTPUT_PROJECTION,
    UNIFORM_EMPTY_ROWS,
    DROPOUT_ON_OUTPUT,
    DROPPED_WEIGHTS_RETURNED,
)
SOFTMAX_MISTAKES = (MASK_AFTER_SOFTMAX, MASK_OFF_BY_ONE, UNIFORM_EMPTY_ROWS)


# --------------------------------------------------- float64 references


@reference
def ref_split_heads(X, num_heads=H, mistake=None):
    b, t, d = X.shape
    if mistake is HEADS_WRONG_ORDER:
        return X.reshape(b, t, d // num_heads, num_heads).transpose(0, 3, 1, 2)
    return X.reshape(b, t, num_heads, d // num_heads).transpose(0, 2, 1, 3)


@reference
def ref_merge_heads(X, mistake=None):
    b, h, t, dk = X.shape
    if mistake is HEADS_WRONG_ORDER:
        return X.transpose(0, 2, 3, 1).reshape(b, t, h * dk)
    return X.transpose(0, 2, 1, 3).reshape(b, t, h * dk)


def _keep(valid_lens, b, t, s):
    """(B, T, S) bool: key s is valid for query t of sequence b."""
    lens = np.asarray(valid_lens)
    lens = np.broadcast_to(lens[:, None] if lens.ndim == 1 else lens, (b, t))
    return np.arange(s) < lens[..., None]


@reference
def ref_masked_softmax(scores, valid_lens, mistake=None):
    """(B, H, T, S) weights in float64, optionally with a known mistake."""
    scores = np.asarray(scores, dtype=np.float64)
    if valid_lens is None:
        return softmax(scores)
    b, _, t, s = scores.shape
    lens = np.asarray(valid_lens)
    if mistake is MASK_OFF_BY_ONE:
        lens = lens + 1
    keep = _keep(lens, b, t, s)[:, None]  # (B, 1, T, S)
    if mistake is MASK_AFTER_SOFTMAX:
        return softmax(scores) * keep
    weights = softmax(np.where(keep, scores, conventions.MASK_FILL))
    return weights if mistake is UNIFORM_EMPTY_ROWS else weights * keep


@reference
def ref_mha(q, k, v, valid_lens, params, mistake=None):
    """(output (B, T, D), weights (B, H, T, S)) in float64.

    `params`: [W_q, W_k, W_v, W_o] kernels, then their biases if any.
    """
    kernels = [np.asarray(p, np.float64) for p in params[:4]]
    biases = [np.asarray(p, np.float64) for p in params[4:]] or [0.0] * 4
    proj = [
        np.asarray(x, np.float64) @ w + b_
        for x, w, b_ in zip((q, k, v), kernels[:3], biases[:3], strict=True)
    ]
    qh, kh, vh = (ref_split_heads(x, H, mistake) for x in proj)
    scale = {NO_SCALE: 1.0, SCALE_BY_MODEL_SIZE: np.sqrt(D)}.get(
        mistake, np.sqrt(DK)
    )
    weights = ref_masked_softmax(
        qh @ np.swapaxes(kh, -1, -2) / scale, valid_lens, mistake
    )
    out = ref_merge_heads(weights @ vh, mistake)  # (B, T, D)
    if mistake is not NO_OUTPUT_PROJECTION:
        out = out @ kernels[3] + biases[3]
    return out, weights


@reference
def ref_gradient(q, k, v, valid_lens, params, probe_weights):
    """d sum(output * probe_weights) / d(queries), (B, T, Dq): centred
    differences of the float64 reference."""

    def loss(x):
        return np.sum(ref_mha(x, k, v, valid_lens, params)[0] * probe_weights)

    return centred_differences(loss, q)


_diagnoses = partial(mistake_outputs, mistakes=MISTAKES)


# ------------------------------------------------------------------ probes
def _set_params(layer, params):
    """Copy [W_q, W_k, W_v, W_o] kernels (+ biases) into the layer."""
    names = ("W_q", "W_k", "W_v", "W_o")
    with_bias = len(params) == 8
    for i, name in enumerate(names):
        values = [params[i], params[4 + i]] if with_bias else [params[i]]
        getattr(layer, name).set_weights(values)


@lesson.probe
def run_split(m, X):
    return m.split_heads(X, H)


@lesson.probe
def run_merge(m, X, Y):
    merged = m.merge_heads(Y)
    return merged, m.merge_heads(m.split_heads(X, H))


@lesson.probe
def run_masked_softmax(m, scores, valid_lens):
    return m.masked_softmax(scores, valid_lens)


@lesson.probe
def run_mha(m, q, k, v, valid_lens, params):
    layer = m.MultiHeadAttention(D, H, bias=len(params) == 8)
    layer(q, k, v, valid_lens)  # build
    _set_params(layer, params)
    return layer(q, k, v, valid_lens, return_attention_weights=True)


@lesson.probe
def run_perturbed_head(m, q, k, v, params, head, delta):
    layer = m.MultiHeadAttention(D, H)
    layer(q, k, v)  # build
    _set_params(layer, params)
    _, before = layer(q, k, v, return_attention_weights=True)
    kernel = np.array(params[0])
    kernel[:, head * DK : (head + 1) * DK] += delta
    layer.W_q.set_weights([kernel])
    _, after = layer(q, k, v, return_attention_weights=True)
    return before, after


@lesson.probe
def run_two_lengths(m, first, second, params):
    layer = m.MultiHeadAttention(D, H)
    layer(*first)  # build on the first lengths
    _set_params(layer, params)
    return layer(*first), layer(*second)


@lesson.probe
def run_dropout(m, q, k, v, valid_lens, params):
    layer = m.MultiHeadAttention(D, H, dropout=0.5)
    layer(q, k, v, valid_lens)  # build
    _set_params(layer, params)
    return dropout_outputs(partial(layer, q, k, v, valid_lens))


@lesson.probe
def run_mha_training(m, q, k, v, valid_lens, params):
    layer = m.MultiHeadAttention(D, H, dropout=0.5)
    layer(q, k, v, valid_lens)  # build
    _set_params(layer, params)
    return layer(
        q, k, v, valid_lens, training=True, return_attention_weights=True
    )


@lesson.probe
def run_contract(m, q, k, v, valid_lens, bias):
    facts = layer_contract(
        lambda: m.MultiHeadAttention(D, H, dropout=0.1, bias=bias),
        [q, k, v, valid_lens],
        symbolic=[(None, DQ), (None, DKEY), (None, DV), None],
    )
    facts["errors"] = value_errors(
        {
            "num_hiddens": lambda: m.MultiHeadAttention(10, 4),
            "num_heads": lambda: m.MultiHeadAttention(24, 0),
            "dropout": lambda: m.MultiHeadAttention(24, 4, dropout=1.5),
            "valid_lens": lambda: m.masked_softmax(
                np.zeros((B, H, T, S)), np.zeros((B, T, 1))
            ),
        }
    )
    return facts


@lesson.probe
def run_gradient(m, q, k, v, valid_lens, params, probe_weights):
    """The tape gradient of sum(output * probe_weights) with respect to
    the queries, the layer in float64 with the judge's `params` (run in a
    tf.function once first: code that works only eagerly fails here)."""
    import keras
    import tensorflow as tf

    layer = m.MultiHeadAttention(D, H, dtype="float64")
    in_float64(layer, q, k, v, valid_lens)  # build
    _set_params(layer, params)

    @tf.function  # run once in a graph, as fit runs it, then taped eagerly
    def f(x):
        return keras.ops.sum(layer(x, k, v, valid_lens) * probe_weights)

    f(tf.constant(q, tf.float64))
    return tape_gradient(f, q)


# ------------------------------------------------------------------ inputs
def _inputs(rng, t=T, s=S):
    q = rng.standard_normal((B, t, DQ)).astype("float32")
    k = rng.standard_normal((B, s, DKEY)).astype("float32")
    v = rng.standard_normal((B, s, DV)).astype("float32")
    return q, k, v


def _params(rng, bias=False):
    """[W_q, W_k, W_v, W_o] with unit-variance projections (+ biases)."""
    kernels = [
        (rng.standard_normal((din, D)) / np.sqrt(din)).astype("float32")
        for din in (DQ, DKEY, DV, D)
    ]
    if not bias:
        return kernels
    return kernels + [
        (rng.standard_normal(D) * 0.5).astype("float32") for _ in range(4)
    ]


@reference
def keras_mha(q, k, v, valid_lens, params):
    """keras.layers.MultiHeadAttention with our weights, reshaped to its
    einsum layout: kernels (Din, H, Dk), output kernel (H, Dk, D), biases
    (H, Dk) and (D,). Returns (output, scores) in float64."""
    import keras

    bias = len(params) == 8
    layer = keras.layers.MultiHeadAttention(
        num_heads=H, key_dim=DK, use_bias=bias, output_shape=D
    )
    mask = None if valid_lens is None else _keep(valid_lens, B, T, S)
    layer(q, v, k, attention_mask=mask)  # build
    weights = [p.reshape(-1, H, DK) for p in params[:3]]
    weights.append(params[3].reshape(H, DK, D))
    if bias:
        weights = [
            weights[0],
            params[4].reshape(H, DK),
            weights[1],
            params[5].reshape(H, DK),
            weights[2],
            params[6].reshape(H, DK),
            weights[3],
            params[7],
        ]
    layer.set_weights(weights)
    # return_attention_scores takes the explicit-softmax path, which (like
    # ours) gives all-zero weights to a query with valid length 0.
    out, scores = layer(
        q, v, k, attention_mask=mask, return_attention_scores=True
    )
    return np.asarray(out, np.float64), np.asarray(scores, np.float64)


# ------------------------------------------------------------------ checks
def test_split_heads(rng):
    X = rng.standard_normal((B, T, D)).astype("float32")
    split = run_split(X)
    expect_close(
        split,
        ref_split_heads(X),
        say("l18.split"),
        tol=EXACT,
        diagnoses={HEADS_WRONG_ORDER: ref_split_heads(X, H, HEADS_WRONG_ORDER)},
        hint=say("l18.split_hint", shape=(B, H, T, DK)),
    )


def test_merge_heads_inverts_split(rng):
    X = rng.standard_normal((B, T, D)).astype("float32")
    Y = rng.standard_normal((B, H, T, DK)).astype("float32")
    merged, roundtrip = run_merge(X, Y)
    expect_close(
        merged,
        ref_merge_heads(Y),
        say("l18.merge"),
        tol=EXACT,
        diagnoses={HEADS_WRONG_ORDER: ref_merge_heads(Y, HEADS_WRONG_ORDER)},
        hint=say("l18.merge_hint"),
    )
    expect_close(
        roundtrip,
        X,
        say("l18.roundtrip"),
        tol=EXACT,
    )


def _weight_properties(valid):
    """What weights (B, H, T, S) must satisfy whatever the mistake: no
    weight on a masked key, rows summing to 1 (0 with no valid key)."""
    if valid is None:
        return [properties.rows_sum_to_one()]
    return [properties.masked_keys(valid), properties.rows_sum_to_one(valid)]


@pytest.mark.points(2)
@pytest.mark.parametrize("lens", ["1d", "2d", None], ids=LENS_IDS)
def test_masked_softmax_values(rng, lens):
    scores = rng.standard_normal((B, H, T, S)).astype("float32")
    valid = VALID_LENS[lens]
    expect_close(
        run_masked_softmax(scores, valid),
        ref_masked_softmax(scores, valid),
        say("l18.softmax_weights"),
        diagnoses=_diagnoses(
            ref_masked_softmax, scores, valid, mistakes=SOFTMAX_MISTAKES
        ),
        hint=say("l18.softmax_hint"),
        properties=_weight_properties(valid),
    )


@pytest.mark.parametrize(
    "lens", ["1d", "2d"], ids=["valid_lens_B", "valid_lens_BT"]
)
def test_masked_weights_are_exactly_zero_and_rows_sum_to_one(rng, lens):
    scores = (rng.standard_normal((B, H, T, S)) * 10).astype("float32")
    valid = VALID_LENS[lens]
    got = np.asarray(run_masked_softmax(scores, valid), np.float64)
    keep = np.broadcast_to(_keep(valid, B, T, S)[:, None], got.shape)
    diagnoses = _diagnoses(
        ref_masked_softmax, scores, valid, mistakes=SOFTMAX_MISTAKES
    )
    expect(
        np.all(got[~keep] == 0.0),
        say("l18.masked_not_zero", largest=f"{np.abs(got[~keep]).max():.3g}"),
        got=got,
        diagnoses=diagnoses,
    )
    rows = keep.any(-1)
    expect_close(
        got.sum(-1),
        rows.astype(np.float64),
        say("l18.row_sums"),
        diagnoses={
            m: (lambda m=m: diagnoses[m]().sum(-1)) for m in SOFTMAX_MISTAKES
        },
    )


@pytest.mark.points(3)
@pytest.mark.parametrize("lens", ["1d", "2d", None], ids=LENS_IDS)
def test_mha_matches_reference(rng, lens):
    q, k, v = _inputs(rng)
    params = _params(rng)
    valid = VALID_LENS[lens]
    out, weights = run_mha(q, k, v, valid, params)
    ref_out, ref_weights = ref_mha(q, k, v, valid, params)
    expect_close(
        weights,
        ref_weights,
        say("l18.weights"),
        diagnoses=_diagnoses(ref_mha, q, k, v, valid, params, part=1),
        properties=_weight_properties(valid),
    )
    expect_close(
        out,
        ref_out,
        say("l18.output"),
        diagnoses=_diagnoses(ref_mha, q, k, v, valid, params, part=0),
        hint=say("l18.output_hint"),
    )


def test_self_attention(rng):
    """Self-attention (自注意力): queries = keys = values = X."""
    X = rng.standard_normal((B, T, D)).astype("float32")
    params = [
        (rng.standard_normal((D, D)) / np.sqrt(D)).astype("float32")
        for _ in range(4)
    ]
    valid = VALID_LENS["1d"]
    out, _ = run_mha(X, X, X, valid, params)
    expect_close(
        out,
        ref_mha(X, X, X, valid, params)[0],
        say("l18.self_attention"),
        diagnoses=_diagnoses(ref_mha, X, X, X, valid, params, part=0),
    )


@pytest.mark.points(3)
@pytest.mark.parametrize(
    "bias,lens",
    [(False, "2d"), (True, "1d"), (False, None)],
    ids=["no_bias_valid_lens_BT", "bias_valid_lens_B", "no_bias_no_mask"],
)
def test_matches_keras_mha_by_weight_transfer(rng, bias, lens):
    q, k, v = _inputs(rng)
    params = _params(rng, bias=bias)
    valid = VALID_LENS[lens]
    out, weights = run_mha(q, k, v, valid, params)
    keras_out, keras_weights = keras_mha(q, k, v, valid, params)
    expect_close(
        weights,
        keras_weights,
        say("l18.keras_weights"),
        diagnoses=_diagnoses(ref_mha, q, k, v, valid, params, part=1),
    )
    expect_close(
        out,
        keras_out,
        say("l18.keras_output"),
        diagnoses=_diagnoses(ref_mha, q, k, v, valid, params, part=0),
        hint=say("l18.keras_hint"),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("head", [0, 2], ids=["head_0", "head_2"])
def test_heads_do_not_share_projections(rng, head):
    q, k, v = _inputs(rng)
    params = _params(rng)
    delta = rng.standard_normal((DQ, DK)).astype("float32")
    before, after = run_perturbed_head(q, k, v, params, head, delta)
    expect_shape(after, (B, H, T, S), say("l18.attention_weights"))
    others = [h for h in range(H) if h != head]
    moved = np.abs(after - before).astype(np.float64).max(axis=(0, 2, 3))
    changed = params[0].copy()
    changed[:, head * DK : (head + 1) * DK] += delta
    expect(
        moved[head] > 1e-3 and np.all(moved[others] <= 1e-6),
        say(
            "l18.one_head",
            head=head,
            start=head * DK,
            stop=(head + 1) * DK,
            moved=np.round(moved, 4).tolist(),
        ),
        got=after,
        diagnoses={
            HEADS_WRONG_ORDER: lambda: ref_mha(
                q, k, v, None, [changed, *params[1:]], HEADS_WRONG_ORDER
            )[1]
        },
    )


def test_variable_sequence_lengths(rng):
    """One layer, called with (T, S) = (3, 5) and then (7, 9)."""
    params = _params(rng)
    first = (*_inputs(rng), VALID_LENS["1d"])
    second = (*_inputs(rng, t=7, s=9), np.array([9, 6], dtype="int32"))
    out1, out2 = run_two_lengths(first, second, params)
    expect_close(
        out1,
        ref_mha(*first, params)[0],
        say("l18.first_lengths"),
        diagnoses=_diagnoses(ref_mha, *first, params, part=0),
    )
    expect_close(
        out2,
        ref_mha(*second, params)[0],
        say("l18.second_lengths"),
        diagnoses=_diagnoses(ref_mha, *second, params, part=0),
        hint=say("l18.lengths_hint"),
    )


def test_dropout_only_in_training(rng):
    q, k, v = _inputs(rng)
    params = _params(rng)
    valid = VALID_LENS["2d"]
    expect_dropout_only_in_training(
        run_dropout(q, k, v, valid, params),
        "MultiHeadAttention",
        expected=ref_mha(q, k, v, valid, params)[0],
    )


@pytest.mark.points(2)
def test_dropout_acts_on_the_attention_weights(rng):
    """dropout=0.5, training: the returned weights are those before the
    dropout (rows sum to 1), and each output is Dropout(weights) V for
    some keep-mask of each row's keys. W_o = I and W_v is zero outside
    head 0's columns, so the output is head 0's, then zeros."""
    q, k, v = _inputs(rng)
    W_q, W_k, W_v = _params(rng)[:3]
    W_v[:, DK:] = 0.0
    params = [W_q, W_k, W_v, np.eye(D, dtype="float32")]
    valid = VALID_LENS["2d"]
    out, weights = run_mha_training(q, k, v, valid, params)
    ref_out, ref_weights = ref_mha(q, k, v, valid, params)
    expect_close(
        weights,
        ref_weights,
        say("l18.dropout_weights"),
        diagnoses={
            DROPPED_WEIGHTS_RETURNED: lambda: nearest_dropped(
                weights, ref_weights, 0.5
            )
        },
    )
    expect_shape(out, (B, T, D), say("l18.dropout_shape"))
    out = np.asarray(out, np.float64)
    values = (np.asarray(v, np.float64) @ W_v)[:, None, :, :DK]  # (B,1,S,Dk)
    head = nearest_dropped(
        out[..., :DK], ref_weights[:, 0], 0.5, lambda d: d @ values
    )
    expect_close(
        out,
        np.concatenate([head, np.zeros((B, T, D - DK))], axis=-1),
        say("l18.dropout_output"),
        diagnoses={
            DROPOUT_ON_OUTPUT: lambda: nearest_dropped(
                out[..., None], ref_out[..., None], 0.5
            )[..., 0]
        },
        hint=say("l18.dropout_hint"),
    )


@pytest.mark.parametrize("bias", [False, True], ids=["no_bias", "bias"])
def test_keras_layer_contract(rng, bias):
    q, k, v = _inputs(rng)
    valid = VALID_LENS["1d"]
    facts = run_contract(q, k, v, valid, bias)
    name = f"MultiHeadAttention(bias={bias})"
    # bound to the reference on the weights the layer was built with:
    # W_q, W_k, W_v, W_o, each kernel followed by its bias if any
    kernels = [(DQ, D), (DKEY, D), (DV, D), (D, D)]
    layout = [s for k in kernels for s in (k, (D,))] if bias else kernels
    weights = contract_weights(facts, name, layout)
    params = weights[0::2] + weights[1::2] if bias else weights
    expect_layer_contract(
        facts,
        name,
        output_shape=(B, T, D),
        symbolic_shape=(None, None, D),
        on=say("l18.symbolic_on"),
        trainable=8 if bias else 4,
        expected=ref_mha(q, k, v, valid, params)[0],
    )
    expect_value_errors(facts["errors"], quoted=True)


@pytest.mark.points(2)
def test_gradient_matches_centred_differences(rng):
    """The layer's tape gradient in float64 against the centred
    differences of the float64 reference, at the same weights."""
    q, k, v = (x.astype("float64") for x in _inputs(rng))
    params = [p.astype("float64") for p in _params(rng)]
    valid = VALID_LENS["2d"]
    probe_weights = rng.standard_normal((B, T, D))
    got = run_gradient(q, k, v, valid, params, probe_weights)
    expect_gradient(
        got,
        ref_gradient(q, k, v, valid, params, probe_weights),
        say("l18.gradient"),
        tol=GRAD,
    )
