"""Float64 NumPy references more than one grader needs.

Each takes arrays (or strings) and returns float64 results; the graders
compare the student's float32 outputs with them (see `tolerances`).
"""

from __future__ import annotations

import math

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(x) / sum(exp(x)) along `axis` (any shape in, the same shape
    out), computed after subtracting the maximum so it cannot overflow."""
    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)), elementwise (any shape)."""
    return 1.0 / (1.0 + np.exp(-np.asarray(x, np.float64)))


def bleu(
    pred: str,
    label: str,
    k: int = 2,
    *,
    brevity_penalty: bool = True,
    clip: bool = True,
) -> float:
    """BLEU of a predicted sentence against one label (d2l's form): the
    brevity penalty exp(min(0, 1 - len(label) / len(pred))) times, for
    n = 1..k, the n-gram precision p_n raised to 1 / 2^n. Words are split
    on spaces; a prediction shorter than k words scores 0.

    Args:
        pred, label: the sentences.
        k: the longest n-gram.
        brevity_penalty: False leaves the penalty out (a known mistake).
        clip: False counts a label n-gram again each time the prediction
            repeats it (a known mistake); True counts it at most as often
            as the label has it.
    """
    pred_words, label_words = pred.split(), label.split()
    if len(pred_words) < k:
        return 0.0
    score = 1.0
    if brevity_penalty:
        score = math.exp(min(0.0, 1.0 - len(label_words) / len(pred_words)))
    for n in range(1, k + 1):
        score *= _precision(pred_words, label_words, n, clip) ** (0.5**n)
    return score


def _precision(pred: list[str], label: list[str], n: int, clip: bool) -> float:
    """The share of the prediction's n-grams found in the label."""
    grams = [tuple(label[i : i + n]) for i in range(len(label) - n + 1)]
    left = {g: grams.count(g) for g in grams}
    matches = 0
    for i in range(len(pred) - n + 1):
        gram = tuple(pred[i : i + n])
        if left.get(gram, 0) > 0:
            matches += 1
            if clip:
                left[gram] -= 1
    return matches / (len(pred) - n + 1)
