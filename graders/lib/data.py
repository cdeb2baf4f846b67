"""Small generated data sets more than one grader feeds the student's code.

`text_batches` (language-model batches from a short text); the images of
the CNN lessons are `cnn_references.toy_images`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def text_batches(
    rng: np.random.Generator,
    text: str,
    index: Mapping[str, int],
    n: int,
    b: int = 8,
    t: int = 6,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """`n` batches (X, Y) of `b` windows of `t` characters of `text` at
    random starts, as token ids (`index`: character -> id): X (b, t), Y
    (b, t) the same windows one character later."""
    corpus = np.array([index[c] for c in text])
    out = []
    for _ in range(n):
        starts = rng.integers(0, len(corpus) - t - 1, size=b)
        out.append(
            (
                np.stack([corpus[s : s + t] for s in starts]),
                np.stack([corpus[s + 1 : s + 1 + t] for s in starts]),
            )
        )
    return out
