"""The README's float16 fill value: the solutions' masked softmax fills
masked scores with -3e4 in float16 (-1e9 does not fit), so masked weights
are exactly 0 and nothing overflows to NaN."""

import numpy as np

from m2t import ROOT
from m2t.grading import impl


def test_masked_softmax_in_float16_gives_exact_zeros_and_no_nan():
    module = impl.load("l16_attention_scoring", ROOT / "solutions")
    assert module.mask_fill_value("float16") == -3e4
    scores = np.random.default_rng(0).normal(size=(2, 3, 5)).astype("float16")
    weights = np.asarray(
        module.masked_softmax(scores, np.array([2, 0], dtype="int32"))
    )
    assert weights.dtype == np.float16
    assert not np.isnan(weights).any()
    assert (weights[0, :, 2:] == 0).all() and (weights[1] == 0).all()
    np.testing.assert_allclose(weights[0].sum(-1), 1.0, atol=1e-3)
