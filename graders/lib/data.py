"""Small generated data sets more than one grader feeds the student's code.

`text_batches` (language-model batches from a short text) and
`toy_images` (a separable image set for the CNN lessons' smoke checks).
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


def toy_images(
    n: int,
    height: int,
    width: int,
    classes: int = 4,
    seed: int = 0,
    standardised: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """A separable image set: class c is a bright square in quadrant c on
    faint noise. Returns x (n, height, width, 1) float32 in [0, 1] (or
    `standardised` to mean 0, variance 1), y (n,) int32, classes in turn.

    Its seed is public on purpose: the CNN lessons' smoke checks judge that
    the loss falls on it, not a value a recorded answer could give, and a
    set that is known to be learnt in a few steps keeps them from flaking.
    """
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    x = rng.uniform(0.0, 0.2, (n, height, width, 1))
    h, w = height // 2, width // 2
    for i, c in enumerate(y):
        top, left = (c // 2 % 2) * h, (c % 2) * w
        x[
            i,
            top + h // 4 : top + 3 * h // 4,
            left + w // 4 : left + 3 * w // 4,
        ] = 1.0
    x = x.astype("float32")
    if standardised:
        x = (x - x.mean()) / x.std()
    return x, y.astype("int32")
