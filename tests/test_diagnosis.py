"""Diagnosis that is never wrong: a "Likely mistake" label only where the
input tells that mistake apart (from the right answer and from every other
catalogued mistake), and a property message, never a label, for a mistake
nobody catalogued."""

from __future__ import annotations

import json

import numpy as np
import pytest

from graders.lib import properties
from graders.lib.judge import CheckFailed
from graders.lib.judge import Mistake
from graders.lib.judge import diagnose
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import expect_count
from m2t import ROOT
from m2t.authoring.mutants import mutate

LEFT = Mistake("left", "the left mistake.")
RIGHT = Mistake("right", "the right mistake.")
OTHER = Mistake("other", "another mistake.")


def _message(check, *args, **kwargs) -> str:
    with pytest.raises(CheckFailed) as info:
        check(*args, **kwargs)
    return str(info.value)


# ------------------------------------------------------------- the rule
def test_two_mistakes_that_coincide_on_the_input_get_no_label():
    right, wrong = np.array([1.0, 2.0]), np.array([1.0, 3.0])
    both = {LEFT: wrong, RIGHT: lambda: wrong.copy()}
    assert diagnose(wrong, both, expected=right) is None
    message = _message(expect_close, wrong, right, "x", diagnoses=both)
    assert "Likely mistake" not in message
    # told apart, the same output is named
    apart = {LEFT: wrong, RIGHT: np.array([0.0, 3.0])}
    assert diagnose(wrong, apart, expected=right) is LEFT
    message = _message(expect_close, wrong, right, "x", diagnoses=apart)
    assert message.startswith("Likely mistake [left]")


def test_a_mistake_that_leaves_the_output_right_is_never_named():
    """The l07 case: the mistake changes Y but the check compares X."""
    right = np.arange(4.0)
    wrong = right + [0, 0, 0, 1]
    blind = {LEFT: right.copy(), RIGHT: right + [1, 0, 0, 0]}
    assert diagnose(wrong, blind, expected=right) is None
    # ... even as the only mistake of the check
    assert diagnose(right, {LEFT: right.copy()}, expected=right) is None
    message = _message(
        expect,
        False,
        "x is wrong.",
        got=right,
        diagnoses={LEFT: right.copy()},
        expected=right,
    )
    assert "Likely mistake" not in message


def test_counts_and_the_rule_agree():
    counts = {LEFT: 12, RIGHT: 12, OTHER: 10}
    message = _message(expect_count, 12, 11, "params", diagnoses=counts)
    assert "Likely mistake" not in message
    message = _message(expect_count, 10, 11, "params", diagnoses=counts)
    assert message.startswith("Likely mistake [other]")


# ------------------------------------------------------- the properties
def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _masked(x: np.ndarray, lens: np.ndarray) -> np.ndarray:
    keep = np.arange(x.shape[-1]) < lens[:, None, None]
    return _softmax(np.where(keep, x, -1e9)) * keep


def test_properties_say_what_any_wrong_weights_break():
    x = np.random.default_rng(0).standard_normal((2, 3, 5))
    lens = np.array([2, 4])
    right = _masked(x, lens)
    assert properties.masked_keys(lens)(right) is None
    assert properties.rows_sum_to_one(lens)(right) is None
    leak = properties.masked_keys(lens)(_softmax(x))
    assert leak.startswith("masked keys carry weight: 12 weights")
    off = properties.rows_sum_to_one(lens)(0.9 * right)
    assert "sums to 0.9" in off
    # causality: the first two positions moved though only positions >= 2
    # of the input did
    out = np.zeros((1, 4, 2))
    assert properties.causal(out.copy(), 2)(out) is None
    moved = out.copy()
    moved[0, 1] += 0.5
    assert "position 1" in properties.causal(moved, 2)(out)
    assert properties.same_twice(out + 1e-3)(out).startswith("inference")
    whole = np.arange(1.0, 9.0).reshape(2, 4)
    dropped = np.where(np.arange(8).reshape(2, 4) % 3 == 0, 0.0, 2 * whole)
    line = properties.not_dropped(whole, 0.5, "with training=False")(dropped)
    assert line.startswith("dropout acts with training=False: 3 of 8")
    assert properties.not_dropped(whole, 0.5)(whole + 1) is None
    assert "float32 in a float64" in properties.dtype_of("float64")(
        out.astype(np.float32)
    )


# ------------------------------ mistakes outside the catalogue, graded
OUTSIDE = {  # edits of solutions/l16, none of them a catalogued mistake
    "rows_scaled_by_0.9": [
        (
            "return ops.softmax(scores, axis=-1) * ops.cast(keep, X.dtype)",
            "return 0.9 * ops.softmax(scores, axis=-1) * ops.cast(keep, X.dtype)",
        )
    ],
    "weak_fill_value": [  # masked keys dilute the row, then are zeroed
        (
            "ops.cast(mask_fill_value(X.dtype), X.dtype)",
            "ops.cast(-1.0, X.dtype)",
        )
    ],
    "first_query_length_for_every_query": [
        (
            'lens = ops.cast(valid_lens, "int32")[..., None]',
            'lens = ops.cast(valid_lens, "int32")[..., None]\n'
            "    if len(lens.shape) == 3:\n"
            "        lens = lens[:, :1]",
        )
    ],
}


@pytest.mark.parametrize("name", list(OUTSIDE))
def test_a_mistake_outside_the_catalogue_gets_a_property_not_a_label(
    m2t, tmp_path, name
):
    solution = ROOT / "solutions" / "l16_attention_scoring.py"
    text = mutate(solution.read_text(encoding="utf-8"), OUTSIDE[name], name)
    (tmp_path / solution.name).write_text(text, encoding="utf-8")
    report = tmp_path / "results.json"
    m2t(
        "grade",
        "16",
        "--unconfined",
        "--impl",
        str(tmp_path),
        "--report",
        str(report),
    )
    tests = json.loads(report.read_text())["tests"]
    failing = [t["output"] for t in tests if t.get("status") == "failed"]
    assert failing, f"{name} was not caught"
    assert not any("Likely mistake" in out for out in failing), failing
    assert any("Property: " in out for out in failing), failing
