"""Probe-side helpers: the Keras layer contract and gradients, measured on the
student's layer and returned as plain facts for the judge.

These run wherever the probe runs (this process, or a sandboxed worker), so
they return only numbers, strings, shapes and arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

import numpy as np

from graders._tol import GRAD_EPS


def _first(out: Any) -> Any:
    return out[0] if isinstance(out, (tuple, list)) else out


def layer_contract(
    make: Callable[[], Any],
    inputs: Sequence[Any],
    symbolic: Sequence[tuple[int | None, ...] | None] | None = None,
    call_kwargs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The essentials of Keras's `run_layer_test`, on one layer.

    Args:
        make: builds a fresh layer.
        inputs: positional call arguments (arrays; None passes None).
        symbolic: per input, the shape for `keras.Input` (without the batch
            axis; None entries stay None), or None to skip the symbolic call.
        call_kwargs: keyword call arguments (e.g. `training=False`).

    Returns:
        dict with `output_shape`, `weights` and `trainable` (counts),
        `symbolic_shape`, `config_roundtrip_diff` (max |diff| of the outputs
        of `from_config(get_config())` after copying the weights),
        `grads_finite` (every trainable weight gets a finite gradient of a
        sum loss) and `step_changes_weights` (one SGD step moves them).
    """
    import keras
    import tensorflow as tf

    call_kwargs = call_kwargs or {}
    layer = make()
    out = _first(layer(*inputs, **call_kwargs))
    facts: dict[str, Any] = {
        "output_shape": tuple(int(d) for d in out.shape),
        "weights": len(layer.weights),
        "trainable": len(layer.trainable_weights),
    }
    if symbolic is not None:
        sym_inputs = [
            None if shape is None else keras.Input(shape=shape)
            for shape in symbolic
        ]
        sym_out = _first(make()(*sym_inputs, **call_kwargs))
        facts["symbolic_shape"] = tuple(
            None if d is None else int(d) for d in sym_out.shape
        )
    clone = type(layer).from_config(layer.get_config())
    clone(*inputs, **call_kwargs)
    clone.set_weights(layer.get_weights())
    again = _first(clone(*inputs, **call_kwargs))
    facts["config_roundtrip_diff"] = float(
        np.max(np.abs(np.asarray(again) - np.asarray(out)))
    )
    if layer.trainable_weights:
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(_first(layer(*inputs, **call_kwargs)))
        grads = tape.gradient(loss, layer.trainable_weights)
        # An Embedding's gradient is a tf.IndexedSlices: densify it first.
        facts["grads_finite"] = all(
            g is not None
            and bool(np.all(np.isfinite(np.asarray(tf.convert_to_tensor(g)))))
            for g in grads
        )
        before = [np.array(w) for w in layer.trainable_weights]
        keras.optimizers.SGD(0.1).apply_gradients(
            zip(grads, layer.trainable_weights, strict=True)
        )
        facts["step_changes_weights"] = any(
            not np.array_equal(b, np.asarray(w))
            for b, w in zip(before, layer.trainable_weights, strict=True)
        )
    else:
        facts["grads_finite"] = True
        facts["step_changes_weights"] = True
    return facts


def gradient_check(
    f: Callable[[Any], Any], x: np.ndarray, eps: float = GRAD_EPS
) -> tuple[np.ndarray, np.ndarray]:
    """(tape gradient, centred-difference gradient) of the scalar `f` at `x`.

    `f` takes a float64 tensor and returns a scalar tensor; build the
    layer in float64 (`dtype="float64"`) so the differences are exact enough.
    """
    import tensorflow as tf

    x = np.array(x, dtype=np.float64)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = f(xt)
    analytic = np.asarray(tape.gradient(y, xt), dtype=np.float64)
    numeric = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[index] += eps
        down[index] -= eps
        numeric[index] = (
            float(f(tf.constant(up))) - float(f(tf.constant(down)))
        ) / (2 * eps)
    return analytic, numeric
