"""Every tolerance the graders use, in one place.

float32 against a float64 NumPy reference: atol = rtol = 1e-5 (as Keras's own
GRU goldens). Elementwise ops: 1e-6. Gradients are checked in float64 against
centred differences. A float32 result computed from large inputs is
compared at `at_magnitude(...)`: its absolute error scales with the inputs'
size, not the result's. No check grades float16 yet: the check that does
adds its tolerance here.
"""

import numpy as np

F32 = {"atol": 1e-5, "rtol": 1e-5}
"""A float32 layer against a float64 NumPy reference."""

ELEMENTWISE = {"atol": 1e-6, "rtol": 1e-6}
"""A pure elementwise op in float32."""

F64 = {"atol": 1e-9, "rtol": 1e-9}
"""A layer built with dtype="float64" against a float64 NumPy reference:
far below float32's rounding (6e-8), so a sublayer that computes in
float32 shows."""

GRAD = {"atol": 1e-6, "rtol": 1e-5}
"""A float64 gradient against centred differences."""

GRAD_EPS = 1e-6
"""The step of the centred differences (float64)."""

EXACT = {"atol": 0.0, "rtol": 0.0}
"""Values that must be exact (masked weights, integer results)."""

LOSS_FALL = 0.9
"""A training smoke check passes once a loss falls below this fraction of
the first (`cnn_judge.expect_loss_falls`); the probe stops there
(`cnn_probes.train_steps`), as the verdict is then known."""

FLOAT32_SPACINGS = 2
"""How many float32 spacings of the inputs' magnitude `at_magnitude` allows:
two values each rounded to half a spacing, subtracted."""


def at_magnitude(magnitude: float, tol: dict[str, float] = F32) -> dict:
    """`tol`, with `atol` widened to float32's rounding at `magnitude`.

    A float32 result computed from inputs of size `magnitude` carries an
    absolute error of about a spacing of that size, whatever the size of the
    result: `logsumexp(z) - z[y]` with |z| ~ 1e4 (np.spacing(float32(1e4))
    = 9.8e-4) can be off by 4e-4 in a loss of 0.18, right as it is. A naive
    exp() still overflows to inf, far outside it.

    Args:
        magnitude: the largest |input|, e.g. `np.abs(logits).max()`.
        tol: the tolerance to widen (its `rtol` is kept).
    """
    if not np.isfinite(magnitude) or magnitude < 0:
        raise ValueError(
            f"`magnitude` must be finite and >= 0, got {magnitude!r}"
        )
    spacing = float(np.spacing(np.float32(magnitude)))
    return {**tol, "atol": max(tol["atol"], FLOAT32_SPACINGS * spacing)}
