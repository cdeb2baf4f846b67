"""graders/lib/dropout.py: every keep-mask is tried, so dropout in its
place is explained whatever its mask, and dropout elsewhere is not; and
tolerances.at_magnitude widens only atol, by float32's rounding."""

import numpy as np
import pytest

from graders.lib.dropout import keep_masks
from graders.lib.dropout import nearest_dropped
from graders.lib.tolerances import F32
from graders.lib.tolerances import at_magnitude


def test_keep_masks_are_every_mask_once():
    masks = keep_masks(3)
    assert masks.shape == (8, 3)
    assert len({tuple(m) for m in masks}) == 8
    with pytest.raises(ValueError, match="`n`"):
        keep_masks(17)


def test_dropout_in_place_is_explained_whatever_the_mask():
    rng = np.random.default_rng(0)
    before = rng.standard_normal((2, 3, 5))
    values = rng.standard_normal((2, 5, 4))
    for _ in range(5):
        mask = rng.random(before.shape) < 0.5
        got = np.einsum("bts,bsk->btk", before * mask / 0.5, values)
        explained = nearest_dropped(
            got,
            before,
            0.5,
            then=lambda d: np.einsum("btms,bsk->btmk", d, values),
        )
        np.testing.assert_allclose(explained, got, atol=1e-12)


def test_dropout_elsewhere_is_not_explained():
    """Dropout on the averaged output instead of on the weights."""
    rng = np.random.default_rng(1)
    before = rng.standard_normal((2, 3, 5))
    values = rng.standard_normal((2, 5, 4))
    out = np.einsum("bts,bsk->btk", before, values)
    got = out * (rng.random(out.shape) < 0.5) / 0.5
    explained = nearest_dropped(
        got, before, 0.5, then=lambda d: np.einsum("btms,bsk->btmk", d, values)
    )
    assert not np.allclose(explained, got, **F32)


def test_nearest_dropped_refuses_mismatched_rows():
    with pytest.raises(ValueError, match="leading axes"):
        nearest_dropped(np.zeros((2, 3)), np.zeros((3, 3)), 0.5)
    with pytest.raises(ValueError, match="`rate`"):
        nearest_dropped(np.zeros((2, 3)), np.zeros((2, 3)), 1.0)


def test_at_magnitude_widens_atol_by_float32_rounding():
    assert at_magnitude(1.0) == F32  # 2 spacings of 1.0 < 1e-5
    tol = at_magnitude(1e4)
    assert tol["rtol"] == F32["rtol"]
    assert 3.8e-4 < tol["atol"] < 3e-3  # the built-in logsumexp's error
    with pytest.raises(ValueError, match="`magnitude`"):
        at_magnitude(float("inf"))
