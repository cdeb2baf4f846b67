"""Every tolerance the graders use, in one place.

float32 against a float64 NumPy reference: atol = rtol = 1e-5 (as Keras's own
GRU goldens). Elementwise ops: 1e-6. Gradients are checked in float64 against
centred differences. No check grades float16 yet: the check that does adds
its tolerance here.
"""

F32 = {"atol": 1e-5, "rtol": 1e-5}
"""A float32 layer against a float64 NumPy reference."""

ELEMENTWISE = {"atol": 1e-6, "rtol": 1e-6}
"""A pure elementwise op in float32."""

GRAD = {"atol": 1e-6, "rtol": 1e-5}
"""A float64 gradient against centred differences."""

GRAD_EPS = 1e-6
"""The step of the centred differences (float64)."""

EXACT = {"atol": 0.0, "rtol": 0.0}
"""Values that must be exact (masked weights, integer results)."""
