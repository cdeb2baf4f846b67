"""Judge side: where dropout acts, checked whatever its random mask.

A probe cannot hand the judge the mask a student's dropout drew, and a
check must not trust one it did. But the judge knows what the tensor
before the dropout should be, and dropout at rate p can only have made
`m * before / (1 - p)` of it, `m` a 0/1 mask. Over a short last axis
(n <= 16) every mask can be tried: `nearest_dropped` gives, row by row, the
output that the closest mask produces. A training output that equals it
is explained by dropout in that place; one that does not is not (dropout
acts elsewhere, or not at all). A known mistake's placement gives the
mistake's own `nearest_dropped`, and so its diagnosis.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

MAX_MASK_BITS = 16
"""The longest last axis whose 2**n masks `nearest_dropped` tries."""


def keep_masks(n: int) -> np.ndarray:
    """Every 0/1 keep-mask of `n` entries: `(2**n, n)` float64."""
    if not 1 <= n <= MAX_MASK_BITS:
        raise ValueError(
            f"`n` must be in [1, {MAX_MASK_BITS}] (2**n masks are tried), "
            f"got {n!r}"
        )
    bits = (np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1
    return bits.astype(np.float64)


def nearest_dropped(
    got: np.ndarray,
    before: np.ndarray,
    rate: float,
    then: Callable[[np.ndarray], np.ndarray] | None = None,
) -> np.ndarray:
    """The output dropout could have given that is closest to `got`.

    Args:
        got: `(..., k)` the student's training output.
        before: `(..., n)` what the dropout acts on (float64), the same
            leading axes as `got`.
        rate: the dropout rate p, in [0, 1).
        then: what comes after the dropout, `(..., 2**n, n) -> (..., 2**n,
            k)` (the candidate axis second to last); None: nothing (k = n).

    Returns:
        `(..., k)`: for each row, `then(m * before / (1 - p))` for the mask
        `m` whose result is closest to `got` (largest |difference|).
    """
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"`rate` must be in [0, 1), got {rate!r}")
    got = np.asarray(got, np.float64)
    before = np.asarray(before, np.float64)
    if got.shape[:-1] != before.shape[:-1]:
        raise ValueError(
            f"`got` {got.shape} and `before` {before.shape} must share "
            "their leading axes"
        )
    dropped = before[..., None, :] * keep_masks(before.shape[-1])
    candidates = dropped / (1.0 - rate)  # (..., 2**n, n)
    if then is not None:
        candidates = np.asarray(then(candidates), np.float64)
    if candidates.shape[-1] != got.shape[-1]:
        raise ValueError(
            f"`then` gives rows of {candidates.shape[-1]}, `got` has "
            f"{got.shape[-1]}"
        )
    with np.errstate(invalid="ignore"):
        gap = np.abs(candidates - got[..., None, :])
    error = np.where(np.isnan(gap), np.inf, gap).max(axis=-1)
    best = np.argmin(error, axis=-1)[..., None, None]  # (..., 1, 1)
    return np.take_along_axis(candidates, best, axis=-2)[..., 0, :]
