"""Float64 NumPy references more than one grader needs.

Each takes arrays (or strings) and returns float64 results; the graders
compare the student's float32 outputs with them (see `tolerances`).
`bleu(pred, label, k=2, *, brevity_penalty=True, clip=True)` is the one the
question list's experiments use too (m2t.questions.experiments: the harness
never imports graders, so it lives there).
"""

from __future__ import annotations

import numpy as np

from graders.lib.fixtures import reference
from m2t.questions.experiments import bleu

__all__ = ["bleu", "sigmoid", "softmax"]


@reference
def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(x) / sum(exp(x)) along `axis` (any shape in, the same shape
    out), computed after subtracting the maximum so it cannot overflow."""
    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@reference
def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)), elementwise (any shape)."""
    return 1.0 / (1.0 + np.exp(-np.asarray(x, np.float64)))
