"""The noisy sine of the sequence-models lesson (``noisy_sine``)."""

from __future__ import annotations

import numpy as np

from ._log import announce


def noisy_sine(
    T: int = 1000, seed: int = 0, verbose: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """d2l's series ``x_t = sin(0.01 t) + eps_t``, ``eps_t ~ N(0, 0.2^2)``.

    Args:
        T: number of steps; ``t = 1, ..., T``.
        seed: seed of the noise (``numpy.random.default_rng``).
        verbose: print a ``data: ...`` line saying which data this is.

    Returns:
        ``(time, x)``: ``time`` float32 ``(T,)`` holding ``1..T``, ``x``
        float32 ``(T,)``.
    """
    if T <= 0:
        raise ValueError(f"`T` must be positive, got {T}")
    announce(f"data: noisy_sine (embedded, seed {seed}, T {T})", verbose)
    time = np.arange(1, T + 1, dtype=np.float32)
    noise = np.random.default_rng(seed).normal(0.0, 0.2, size=T)
    x = np.sin(0.01 * time.astype(np.float64)) + noise
    return time, x.astype(np.float32)
