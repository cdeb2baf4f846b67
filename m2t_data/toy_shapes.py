"""A generated image set of ten shapes (``toy_shapes``), drawn with numpy.

28 x 28 x 1 uint8 images, a bright shape on a dark noisy background, with
a random centre (up to 4 pixels off), size (60 % to 100 %), rotation
(up to 20 degrees), brightness and Gaussian pixel noise. Classes are
balanced: 600 images each in train, 100 each in test.

Class ids and names (``CLASS_NAMES``):
0 disk, 1 ring, 2 square, 3 frame, 4 triangle, 5 plus, 6 cross,
7 equals, 8 diamond, 9 tee.
"""

from __future__ import annotations

import numpy as np

SIZE = 28
NUM_CLASSES = 10
NUM_TRAIN = 6000
NUM_TEST = 1000
CLASS_NAMES = (
    "disk", "ring", "square", "frame", "triangle",
    "plus", "cross", "equals", "diamond", "tee",
)  # fmt: skip


def _masks(label: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Boolean mask of shape ``label`` in unit coordinates (u right, v down).

    The shape fills roughly the square ``[-1, 1]^2``.
    """
    au, av = np.abs(u), np.abs(v)
    r = np.sqrt(u * u + v * v)
    box = np.maximum(au, av)
    if label == 0:  # disk
        return r <= 0.95
    if label == 1:  # ring
        return (r <= 0.95) & (r >= 0.55)
    if label == 2:  # square
        return box <= 0.8
    if label == 3:  # frame (hollow square)
        return (box <= 0.85) & (box >= 0.5)
    if label == 4:  # triangle, apex up
        return (v >= -0.9) & (v <= 0.8) & (au <= 0.55 * (v + 0.9))
    if label == 5:  # plus
        return ((au <= 0.22) & (av <= 0.95)) | ((av <= 0.22) & (au <= 0.95))
    if label == 6:  # cross (x)
        near_diag = (np.abs(u - v) <= 0.3) | (np.abs(u + v) <= 0.3)
        return near_diag & (box <= 0.8)
    if label == 7:  # equals: two horizontal bars
        return (au <= 0.9) & (np.abs(av - 0.45) <= 0.2)
    if label == 8:  # diamond
        return au + av <= 1.0
    if label == 9:  # tee
        top = (np.abs(v + 0.7) <= 0.2) & (au <= 0.9)
        stem = (au <= 0.2) & (v >= -0.7) & (v <= 0.95)
        return top | stem
    raise ValueError(f"`label` must be in 0..9, got {label}")


def toy_shapes(
    split: str = "train", seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Draw the ``toy_shapes`` split.

    Args:
        split: ``"train"`` (6,000 images) or ``"test"`` (1,000 images),
            drawn from different streams of the same seed.
        seed: generator seed; same seed and split, same arrays.

    Returns:
        ``(images, labels)``: ``images`` uint8 ``(N, 28, 28, 1)``,
        ``labels`` int32 ``(N,)`` in ``0..9``, each class ``N / 10`` times.
    """
    if split not in ("train", "test"):
        raise ValueError(f"`split` must be 'train' or 'test', got {split!r}")
    n = NUM_TRAIN if split == "train" else NUM_TEST
    rng = np.random.default_rng([seed, 0 if split == "train" else 1])
    labels = rng.permutation(np.arange(n) % NUM_CLASSES).astype(np.int32)

    f32 = np.float32
    centre = (SIZE / 2 - 0.5 + rng.uniform(-4, 4, size=(n, 2))).astype(f32)
    half = (rng.uniform(0.6, 1.0, size=n) * (SIZE / 2 - 2)).astype(f32)
    angle = np.deg2rad(rng.uniform(-20, 20, size=n)).astype(f32)
    ys, xs = np.mgrid[0:SIZE, 0:SIZE].astype(f32)
    dx = (xs[None] - centre[:, 0, None, None]) / half[:, None, None]
    dy = (ys[None] - centre[:, 1, None, None]) / half[:, None, None]
    cos, sin = np.cos(angle)[:, None, None], np.sin(angle)[:, None, None]
    u = cos * dx + sin * dy  # (N, 28, 28)
    v = -sin * dx + cos * dy

    mask = np.zeros((n, SIZE, SIZE), dtype=bool)
    for label in range(NUM_CLASSES):
        idx = labels == label
        mask[idx] = _masks(label, u[idx], v[idx])

    brightness = rng.uniform(150, 255, size=(n, 1, 1)).astype(f32)
    noise = rng.standard_normal(size=(n, SIZE, SIZE), dtype=f32)
    img = mask * brightness + (20.0 + 20.0 * noise)
    img = np.clip(np.rint(img), 0, 255).astype(np.uint8)
    return img[..., None], labels
