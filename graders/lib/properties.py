"""Properties of a right answer, checked on the outputs the judge holds.

A catalogue label names a mistake somebody foresaw; a property says what is
wrong with any output, foreseen or not: weight on a masked key, a row of
weights that does not sum to 1, an output that moves when only the future
moved. A failing value check (`judge.expect_close(..., properties=...)`)
reports each property of its output that fails, one line each, so a mistake
nobody catalogued still gets a cause a student can act on.

A `Property` takes the student's output (an array) and returns None when
the property holds, else that line. Each function below builds one from
what the check knows (the valid lengths, a second output, ...); the judge
calls it only when the check fails.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graders.lib.messages import say

Property = Callable[[np.ndarray], "str | None"]
"""The student's output -> None (holds) or one line saying what failed."""

ROW_SUM_TOL = 1e-5  # float32 weights of up to a few hundred keys


def _index(flat: np.ndarray, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(int(flat), shape))


def _key_mask(valid_lens: Any, shape: tuple[int, ...]) -> np.ndarray:
    """True at the keys a query may not see, for weights of `shape`
    (B, ..., Q, K) and valid lengths (B,) or (B, Q)."""
    lens = np.asarray(valid_lens)
    if lens.ndim not in (1, 2) or lens.shape[0] != shape[0]:
        raise ValueError(
            f"valid_lens must have shape (B,) or (B, Q) with B={shape[0]}, "
            f"got shape {lens.shape}"
        )
    if lens.ndim == 1:
        lens = lens[:, None]  # (B, 1): every query
    lens = lens.reshape((shape[0],) + (1,) * (len(shape) - 3) + lens.shape[1:])
    return np.arange(shape[-1]) >= lens[..., None]


def masked_keys(valid_lens: Any) -> Property:
    """Weights (B, ..., Q, K) must be 0 on the keys at positions >=
    valid_len (valid_lens (B,) or (B, Q), as the layer takes them)."""

    def check(weights: np.ndarray) -> str | None:
        w = np.abs(np.asarray(weights, dtype=np.float64))
        if w.ndim < 3:
            return None  # not weights of this layout: another line says so
        masked = _key_mask(valid_lens, w.shape)
        leak = np.where(masked, w, 0.0)
        if not leak.any():
            return None
        where = _index(np.argmax(leak), leak.shape)
        count = int((leak > 0).sum())
        return say(
            "properties.masked_keys",
            count=count,
            total=f"{leak.sum():.3g}",
            largest=f"{leak[where]:.3g}",
            index=where,
            key=where[-1],
        )

    return check


def rows_sum_to_one(
    valid_lens: Any = None, tol: float = ROW_SUM_TOL
) -> Property:
    """Each row of weights (..., K) sums to 1; with `valid_lens` (as in
    `masked_keys`), a row with no valid key sums to 0 instead."""

    def check(weights: np.ndarray) -> str | None:
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim < 1 or w.size == 0:
            return None
        sums = w.sum(-1)
        target = np.ones_like(sums)
        if valid_lens is not None and w.ndim >= 3:
            target = np.where(_key_mask(valid_lens, w.shape).all(-1), 0, 1)
        off = np.abs(sums - target)
        off = np.where(np.isnan(off), np.inf, off)
        if not (off > tol).any():
            return None
        where = _index(np.argmax(off), off.shape)
        return say(
            "properties.rows_sum_to_one",
            off=int((off > tol).sum()),
            size=off.size,
            row=where,
            sum=f"{sums[where]:.6g}",
            expected=f"{target[where]:g}",
        )

    return check


def causal(shifted: Any, changed_from: int, axis: int = 1) -> Property:
    """The output must not depend on future positions: `shifted` is the
    output of the same call on an input that differs only at positions >=
    `changed_from` along `axis`, so every position before it must be the
    same as in the student's output."""

    def check(got: np.ndarray) -> str | None:
        a = np.asarray(got, dtype=np.float64)
        b = np.asarray(shifted, dtype=np.float64)
        if a.shape != b.shape or a.ndim <= axis:
            return None
        past = [slice(None)] * a.ndim
        past[axis] = slice(0, changed_from)
        diff = np.abs(a[tuple(past)] - b[tuple(past)])
        if not (diff > 1e-5).any():
            return None
        where = _index(np.argmax(diff), diff.shape)
        return say(
            "properties.causal",
            changed_from=changed_from,
            position=where[axis],
            diff=f"{diff[where]:.3g}",
            index=where,
        )

    return check


def same_twice(second: Any, what: str | None = None) -> Property:
    """Two calls on the same input in `what` mode (training=False; None:
    "inference" in the run's language) must agree: `second` is the output
    of the second call."""

    def check(got: np.ndarray) -> str | None:
        mode = what or say("properties.inference")
        a = np.asarray(got, dtype=np.float64)
        b = np.asarray(second, dtype=np.float64)
        if a.shape != b.shape:
            return say(
                "properties.twice_shapes", what=mode, a=a.shape, b=b.shape
            )
        diff = np.abs(a - b)
        if not (diff > 0).any():
            return None
        where = _index(np.nanargmax(diff), diff.shape)
        return say(
            "properties.twice",
            what=mode,
            diff=f"{diff[where]:.3g}",
            index=where,
        )

    return check


def not_dropped(expected: Any, rate: float, where: str = "") -> Property:
    """No dropout acts here (inference, or a place the convention keeps
    whole): `got` must not look like `expected` with dropout `rate`
    applied, each value 0 or `expected / (1 - rate)`, some of them 0."""
    if not 0.0 < rate < 1.0:
        raise ValueError(f"rate must be in (0, 1), got rate={rate!r}")

    def check(got: np.ndarray) -> str | None:
        a = np.asarray(got, dtype=np.float64)
        e = np.asarray(expected, dtype=np.float64)
        if a.shape != e.shape or np.allclose(a, e):
            return None
        zero = np.isclose(a, 0.0, rtol=0.0, atol=1e-6)
        kept = np.isclose(a, e / (1.0 - rate), rtol=1e-4, atol=1e-5)
        if not (zero | kept).all() or not zero.any() or zero.all():
            return None
        return say(
            "properties.dropped_where" if where else "properties.dropped",
            where=where,
            zeros=int(zero.sum()),
            size=a.size,
            scale=f"{1 / (1 - rate):g}",
        )

    return check


def dtype_of(dtype: str) -> Property:
    """The output's dtype is the model's (`dtype`, e.g. "float64"); `got`
    must be passed to the check as it came, not cast."""

    def check(got: np.ndarray) -> str | None:
        have = str(np.asarray(got).dtype)
        if have == dtype:
            return None
        return say("properties.dtype", have=have, dtype=dtype)

    return check


def failed(got: Any, properties: Any) -> list[str]:
    """The lines of every property of `properties` that `got` breaks (a
    property that cannot be evaluated on `got` says nothing)."""
    lines = []
    for prop in properties or ():
        try:
            line = prop(got)
        except (ValueError, TypeError, IndexError):
            continue
        if line:
            lines.append(line)
    return lines
