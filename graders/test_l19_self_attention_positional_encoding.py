"""Grader for lesson 19: sinusoidal positional encoding and the rotation
that shifts it.

Sizes: B=2 sequences, T=3 positions (then 7); the depth D (even, 6 to 32)
and the table's length L (20 to 60), a second table's depth and length and
the offsets delta are drawn from the grade's seed (`_sizes`), so the
expected outputs the student edition ships (fixtures, on the public seed)
answer no other grade. Every axis has its own size, so a transpose cannot
pass unnoticed.
Conventions: interleaved, P[i, 2j] = sin(i / 10000^(2j/D)),
P[i, 2j+1] = cos(i / 10000^(2j/D)); P[i + d] = P[i] @ M(d) with M(d) block
diagonal, block j = [[cos(d w_j), -sin(d w_j)], [sin(d w_j), cos(d w_j)]].
"""

import numpy as np
import pytest

from graders.lib import properties
from graders.lib.contract import expect_layer_contract
from graders.lib.contract import expect_value_errors
from graders.lib.dropout import nearest_dropped
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import expect_shape
from graders.lib.messages import say
from graders.lib.probes import layer_contract
from graders.lib.probes import value_errors
from graders.lib.tolerances import EXACT
from m2t.grading.probe import Lesson

lesson = Lesson("l19_self_attention_positional_encoding")
B, T, T2 = 2, 3, 7

# ---------------------------------------------------------------- mistakes
SIN_COS_SWAPPED = Mistake(
    "sin_cos_swapped",
    "cos is in the even columns and sin in the odd ones: P[i, 2j] = "
    "sin(i w_j), P[i, 2j+1] = cos(i w_j), so position 0 is [0, 1, 0, 1, ...].",
)
HALVES_NOT_INTERLEAVED = Mistake(
    "halves_not_interleaved",
    "the sines fill the first D/2 columns and the cosines the last D/2 "
    "(the TensorFlow tutorial's layout); this course interleaves them: "
    "sin in column 2j, cos in column 2j+1.",
)
EXPONENT_NOT_2J = Mistake(
    "exponent_not_2j",
    "the frequency of pair j is 1 / 10000^(j/D); it is 1 / 10000^(2j/D) "
    "(2j/D = ops.arange(0, D, 2) / D), so the lowest frequency reaches "
    "about 1/10000.",
)
ROTATION_TRANSPOSED = Mistake(
    "rotation_transposed",
    "M(delta) holds the transposed blocks [[cos, sin], [-sin, cos]], which "
    "shift backwards (P[i] @ M = P[i - delta]): with row vectors, block j is "
    "[[cos, -sin], [sin, cos]].",
)
DROPOUT_BEFORE_ADD = Mistake(
    "dropout_before_add",
    "dropout acts on the embeddings X before P is added, so P is never "
    "dropped; the layer is Dropout(X + P), as d2l's: add first.",
)
DROPOUT_ON_P = Mistake(
    "dropout_on_p",
    "dropout acts on the table P alone, so X is never dropped; the layer "
    "is Dropout(X + P), as d2l's: add first.",
)
MISTAKES = (
    SIN_COS_SWAPPED,
    HALVES_NOT_INTERLEAVED,
    EXPONENT_NOT_2J,
    ROTATION_TRANSPOSED,
    DROPOUT_BEFORE_ADD,
    DROPOUT_ON_P,
)
TABLE_MISTAKES = (SIN_COS_SWAPPED, HALVES_NOT_INTERLEAVED, EXPONENT_NOT_2J)


# --------------------------------------------------- float64 references
def _frequencies(depth, mistake=None):
    j = np.arange(depth // 2)
    exponent = j / depth if mistake is EXPONENT_NOT_2J else 2 * j / depth
    return 1.0 / 10000.0**exponent  # (D/2,)


@reference
def ref_table(max_len, depth, mistake=None):
    """(max_len, D) positional encoding in float64."""
    angles = np.arange(max_len)[:, None] * _frequencies(depth, mistake)
    sin, cos = np.sin(angles), np.cos(angles)
    if mistake is SIN_COS_SWAPPED:
        sin, cos = cos, sin
    if mistake is HALVES_NOT_INTERLEAVED:
        return np.concatenate([sin, cos], axis=1)
    table = np.zeros((max_len, depth))
    table[:, 0::2], table[:, 1::2] = sin, cos
    return table


@reference
def ref_shift(delta, depth, mistake=None):
    """(D, D) block-diagonal rotation M(delta) in float64."""
    angles = delta * _frequencies(depth)
    M = np.zeros((depth, depth))
    for j, a in enumerate(angles):
        block = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        if mistake is ROTATION_TRANSPOSED:
            block = block.T
        M[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = block
    return M


def _table_diagnoses(max_len, depth, transform=lambda table: table):
    return {
        m: (lambda m=m: transform(ref_table(max_len, depth, m)))
        for m in TABLE_MISTAKES
    }


def _sizes(rng):
    """(L, D): the length and depth of the grade's table, drawn from its
    seed (every check draws these first, so they agree within a grade)."""
    depth = 2 * int(rng.integers(3, 17))  # even, 6 to 32
    return int(rng.integers(20, 61)), depth


def _other_sizes(rng, depth):
    """(rows, depth) of a second, short table of another depth."""
    other = depth
    while other == depth:
        other = 2 * int(rng.integers(3, 17))
    return int(rng.integers(5, 13)), other


DELTAS = {
    "small": (1, 4),
    "large": (4, 13),
    "negative": (-12, 0),
}
"""Where each offset check draws its delta: [low, high)."""


def _delta(rng, kind):
    low, high = DELTAS[kind]
    return int(rng.integers(low, high))


# ------------------------------------------------------------------ probes
@lesson.probe
def run_table(m, max_len, depth):
    return m.positional_encoding_table(max_len, depth)


@lesson.probe
def run_shift(m, delta, depth):
    return m.relative_shift(delta, depth)


@lesson.probe
def run_layer(m, first, second, max_len, dropout=0.0):
    layer = m.PositionalEncoding(
        first.shape[-1], dropout=dropout, max_len=max_len
    )
    return (
        layer(first, training=False),
        layer(second, training=False),
        layer(first, training=True),
    )


@lesson.probe
def run_contract(m, X, max_len):
    depth = X.shape[-1]
    facts = layer_contract(
        lambda: m.PositionalEncoding(depth, 0.1, max_len),
        [X],
        symbolic=[(None, depth)],
    )
    facts["errors"] = value_errors(
        {
            "num_hiddens": lambda: m.PositionalEncoding(7),
            "max_len": lambda: m.PositionalEncoding(depth, max_len=0),
            "dropout": lambda: m.PositionalEncoding(depth, dropout=-0.1),
        }
    )
    import keras

    float64 = m.PositionalEncoding(depth, max_len=max_len, dtype="float64")
    out = float64(X.astype("float64"))
    facts["float64_dtype"] = keras.backend.standardize_dtype(out.dtype)
    return facts


# ------------------------------------------------------------------ checks
@pytest.mark.points(2)
def test_table_matches_closed_form(rng):
    L, D = _sizes(rng)
    expect_close(
        run_table(L, D),
        ref_table(L, D),
        say("l19.table", max_len=L, depth=D),
        diagnoses=_table_diagnoses(L, D),
        hint=say("l19.table_hint"),
    )


def test_position_zero_is_0_1_0_1(rng):
    L, D = _sizes(rng)
    got = run_table(L, D)
    expect_shape(got, (L, D), say("l19.table", max_len=L, depth=D))
    expect_close(
        got[0],
        np.tile([0.0, 1.0], D // 2),
        say("l19.position_zero"),
        tol=EXACT,
        diagnoses=_table_diagnoses(L, D, lambda table: table[0]),
    )


def test_table_other_depth(rng):
    """A second, short table of another depth: no size is fixed inside."""
    rows, depth = _other_sizes(rng, _sizes(rng)[1])
    expect_close(
        run_table(rows, depth),
        ref_table(rows, depth),
        say("l19.table", max_len=rows, depth=depth),
        diagnoses=_table_diagnoses(rows, depth),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("kind", list(DELTAS))
def test_relative_shift_matches_closed_form(rng, kind):
    D = _sizes(rng)[1]
    delta = _delta(rng, kind)
    expect_close(
        run_shift(delta, D),
        ref_shift(delta, D),
        say("l19.shift", delta=delta, depth=D),
        diagnoses={
            ROTATION_TRANSPOSED: ref_shift(delta, D, ROTATION_TRANSPOSED)
        },
        hint=say("l19.shift_hint"),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("kind", list(DELTAS))
def test_offset_is_a_linear_map_of_the_encoding(rng, kind):
    """The relative-position property, measured on your table: for every
    position i, P[i + delta] = P[i] @ M(delta) with the closed-form M."""
    L, D = _sizes(rng)
    delta = _delta(rng, kind)
    P = np.asarray(run_table(L, D), np.float64)
    expect_shape(P, (L, D), say("l19.table", max_len=L, depth=D))
    rows = np.arange(max(0, -delta), L - max(0, delta))
    shifted = P[rows] @ ref_shift(delta, D)
    expect_close(
        shifted,
        P[rows + delta],
        say("l19.offset_table", delta=delta),
        diagnoses=_table_diagnoses(
            L, D, lambda table: table[rows] @ ref_shift(delta, D)
        ),
        hint=say("l19.offset_hint"),
    )
    M = np.asarray(run_shift(delta, D), np.float64)
    reference = ref_table(L, D)
    expect_close(
        reference[rows] @ M,
        reference[rows + delta],
        say("l19.offset_shift", delta=delta),
        diagnoses={
            ROTATION_TRANSPOSED: reference[rows]
            @ ref_shift(delta, D, ROTATION_TRANSPOSED)
        },
    )


def _layer_inputs(rng):
    """(L, first (B, T, D), second (B, T2, D)) for the layer's checks."""
    L, D = _sizes(rng)
    first = rng.standard_normal((B, T, D)).astype("float32")
    second = rng.standard_normal((B, T2, D)).astype("float32")
    return L, first, second


@pytest.mark.points(2)
def test_layer_adds_the_encoding(rng):
    """Same layer: (B, T=3, D), then T=7; dropout off at inference."""
    L, first, second = _layer_inputs(rng)
    D = first.shape[-1]
    out1, out2, _ = run_layer(first, second, L)
    expect_close(
        out1,
        first + ref_table(L, D)[:T],
        say("l19.first_length"),
        diagnoses=_table_diagnoses(L, D, lambda table: first + table[:T]),
    )
    expect_close(
        out2,
        second + ref_table(L, D)[:T2],
        say("l19.second_length"),
        diagnoses=_table_diagnoses(L, D, lambda table: second + table[:T2]),
        hint=say("l19.length_hint"),
    )


def _dropped_elementwise(got, before):
    """Each element of `got` as 0 or 2 * `before` (dropout 0.5), whichever
    is closer."""
    return nearest_dropped(got[..., None], before[..., None], 0.5)[..., 0]


def test_dropout_only_in_training(rng):
    """dropout=0.5: every element of the training output is 0 or
    2 (X + P), some of each; X has no zeros, so a dropout of X alone or
    of P alone cannot pass."""
    L, first, second = _layer_inputs(rng)
    D = first.shape[-1]
    out, _, trained = run_layer(first, second, L, dropout=0.5)
    X = first.astype(np.float64)
    P = np.broadcast_to(ref_table(L, D)[:T], X.shape)  # (B, T, D)
    expect_close(
        out,
        X + P,
        say("l19.inference"),
        properties=[
            properties.not_dropped(X + P, 0.5, say("l19.inference_where"))
        ],
    )
    trained = np.asarray(trained, np.float64)
    expect_shape(trained, (B, T, D), say("l19.training_shape"))
    expect_close(
        trained,
        _dropped_elementwise(trained, X + P),
        say("l19.training"),
        diagnoses={
            DROPOUT_BEFORE_ADD: lambda: (
                _dropped_elementwise(trained - P, X) + P
            ),
            DROPOUT_ON_P: lambda: X + _dropped_elementwise(trained - X, P),
        },
        hint=say("l19.training_hint"),
    )
    dropped = np.isclose(trained, 0.0)
    expect(
        dropped.any() and not dropped.all(),
        say("l19.dropped_some", zeroed=int(dropped.sum()), size=dropped.size),
    )


def test_keras_layer_contract(rng):
    L, X, _ = _layer_inputs(rng)
    D = X.shape[-1]
    facts = run_contract(X, L)
    expect_layer_contract(
        facts,
        "PositionalEncoding",
        output_shape=(B, T, D),
        symbolic_shape=(None, None, D),
        on=say("l19.symbolic_on"),
        trainable=0,
        weights=0,
        detail=say("l19.constant"),
        expected=X + ref_table(L, D)[:T],
    )
    expect(
        facts["float64_dtype"] == "float64",
        say("l19.float64", dtype=facts["float64_dtype"]),
    )
    expect_value_errors(facts["errors"], quoted=True)
