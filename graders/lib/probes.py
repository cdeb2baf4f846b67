"""Probe side: the Keras layer contract, gradients and argument checking,
measured on the student's code and returned as plain facts for the judge.

These run wherever the probe runs (this process, or a sandboxed worker), so
they return only numbers, strings, shapes and arrays. The verdicts on them
are in `graders.lib.contract`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np

from graders.lib.messages import say

STEP_SEED = 20261201
"""Seeds the fixed random weights of the one-step loss (see
`layer_contract`). Public on purpose: the judge checks the step's facts
against each other (`contract.layer_facts`), not against a value of its
own."""
STEP_LEARNING_RATE = 0.1
"""The learning rate of `layer_contract`'s SGD step."""


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
        Values, never verdicts (`contract.layer_facts` draws those, judge
        side): `output_shape` (of the first output), `weights` and
        `trainable` (counts), `symbolic_shape`, `output` and
        `roundtrip_output` (the first output, and that of
        `from_config(get_config())` after copying the weights), and `step`:
        one SGD step (learning rate `STEP_LEARNING_RATE`) on
        `sum(output * P)`, `P` fixed random numbers (so an output whose
        plain sum ignores a weight, a layer norm's say, still trains it):
        each trainable weight's `paths` ("path (shape)"), `before`,
        `gradients` (None where there is none) and `after`.
    """

    import tensorflow as tf

    call_kwargs = call_kwargs or {}
    layer = make()
    # The first call, which builds the layer, is also the one SGD step's
    # forward pass: a second pass would cost as much again.
    with tf.GradientTape() as tape:
        out = _first(layer(*inputs, **call_kwargs))
        shape = tuple(int(d) for d in out.shape)
        probe = np.random.default_rng(STEP_SEED).standard_normal(shape)
        loss = tf.reduce_sum(out * tf.constant(probe, out.dtype))
    facts: dict[str, Any] = {
        "output_shape": shape,
        "weights": len(layer.weights),
        "trainable": len(layer.trainable_weights),
    }
    clone = type(layer).from_config(layer.get_config())
    if symbolic is not None:
        # The clone's first call is the symbolic one, so it is built from
        # `keras.Input` shapes (a None batch), as in a functional model: a
        # third layer built for it alone would cost a third more.
        facts["symbolic_shape"] = _symbolic_shape(clone, symbolic, call_kwargs)
    else:
        clone(*inputs, **call_kwargs)
    clone.set_weights(layer.get_weights())
    again = _first(clone(*inputs, **call_kwargs))
    facts["output"] = np.asarray(out)
    facts["roundtrip_output"] = np.asarray(again)
    facts["step"] = _one_step(layer, tape, loss)
    return facts


def _symbolic_shape(
    layer: Any,
    symbolic: Sequence[tuple[int | None, ...] | None],
    call_kwargs: dict[str, Any],
) -> tuple[int | None, ...]:
    """The first output's shape of `layer`, unbuilt, called on
    `keras.Input`s (None batch)."""
    import keras

    sym_inputs = [
        None if shape is None else keras.Input(shape=shape)
        for shape in symbolic
    ]
    sym_out = _first(layer(*sym_inputs, **call_kwargs))
    return tuple(None if d is None else int(d) for d in sym_out.shape)


def _one_step(layer: Any, tape: Any, loss: Any) -> dict[str, Any]:
    """`paths`, `before`, `gradients` and `after` of each trainable weight
    for one SGD step (`STEP_LEARNING_RATE`) on `loss`, `sum(output * P)`
    recorded on `tape` (Keras's SGD, written out: its optimizer's set-up
    costs more than the step)."""
    import tensorflow as tf

    weights = layer.trainable_weights
    paths = [f"{getattr(w, 'path', w.name)} {tuple(w.shape)}" for w in weights]
    before = [np.array(w) for w in weights]
    if not weights:
        return {"paths": [], "before": [], "gradients": [], "after": []}
    grads = tape.gradient(loss, weights)
    # An Embedding's gradient is a tf.IndexedSlices: densify it first.
    dense = [
        None if g is None else np.asarray(tf.convert_to_tensor(g))
        for g in grads
    ]
    for w, g in zip(weights, dense, strict=True):
        if g is not None:
            w.assign_sub((STEP_LEARNING_RATE * g).astype(g.dtype))
    return {
        "paths": paths,
        "before": before,
        "gradients": dense,
        "after": [np.array(w) for w in weights],
    }


def build_on_first_step(layer: Any, x: Any, *args: Any, **kwargs: Any) -> None:
    """Build a recurrent `layer` by calling it on the first time step of
    `x` `(B, T, ...)`, i.e. `x[:, :1]`, and `args`/`kwargs` (an initial
    state, an encoder's state): its weights do not depend on T, and a
    full-length call would only cost time before the judge sets them."""
    layer(x[:, :1], *args, **kwargs)


def in_float64(f: Callable[..., Any], *args: Any) -> Any:
    """f(*args) for a layer built with dtype="float64"; where float32
    meets float64 inside it (a TypeError, ValueError or TensorFlow's
    InvalidArgumentError naming float32), a StudentError that says how."""
    import tensorflow as tf

    try:
        return f(*args)
    except (TypeError, ValueError, tf.errors.InvalidArgumentError) as e:
        # eager TensorFlow says "a double tensor but is a float tensor"
        if not re.search(r"float32|double tensor but is a float", str(e)):
            raise
        from m2t.grading.probe import StudentError
        from m2t.grading.probe import strip_tf_noise

        first = strip_tf_noise(str(e)).strip().splitlines()[0][:200]
        raise StudentError(
            say(
                "probes.float32_meets_float64",
                error=f"{type(e).__name__}: {first}",
            )
        ) from None


def tape_gradient(f: Callable[[Any], Any], x: np.ndarray) -> np.ndarray:
    """The tape gradient of the scalar `f` at `x` (any shape; float64, of
    x's shape): all a gradient probe returns. The judge compares it with
    the gradient of its own reference (`contract.expect_gradient`), never
    with differences measured here.

    `f` takes a float64 tensor and returns a scalar tensor; build the
    layer in float64 (`dtype="float64"`).
    """
    import tensorflow as tf

    from m2t.grading.probe import StudentError

    xt = tf.constant(np.array(x, dtype=np.float64))
    with tf.GradientTape() as tape:
        tape.watch(xt)
        # a tf.function's tape costs a backward graph (~0.5 s for an RNN):
        # the tape runs the same Python function eagerly
        y = in_float64(getattr(f, "python_function", f), xt)
    dtype = tf.as_dtype(getattr(y, "dtype", tf.float64))
    if dtype != tf.float64:
        raise StudentError(say("probes.result_dtype", dtype=dtype.name))
    grad = tape.gradient(y, xt)
    if grad is None:  # y does not depend on x on the tape
        raise StudentError(say("probes.left_tape"))
    return np.asarray(grad, dtype=np.float64)


def state_gradient(
    call: Callable[[Any], tuple[Any, Any]],
    h0: np.ndarray,
    probe_out: np.ndarray,
    probe_state: np.ndarray,
) -> np.ndarray:
    """`tape_gradient` of sum(out * probe_out) + sum(state * probe_state)
    with respect to the initial state h0 (B, U), where `out, state =
    call(h)` (a recurrent layer on fixed inputs, built in float64); the
    judge's own is `contract.state_centred_differences`."""
    import keras

    def f(h: Any) -> Any:
        out, state = call(h)
        return keras.ops.sum(out * probe_out) + keras.ops.sum(
            state * probe_state
        )

    return tape_gradient(f, h0)


def dropout_outputs(call: Callable[..., Any]) -> tuple[Any, Any, Any]:
    """`call(training=False)` twice, then `call(training=True)`: the three
    outputs `contract.expect_dropout_only_in_training` judges."""
    return call(training=False), call(training=False), call(training=True)


def value_errors(calls: Mapping[Any, Callable[[], Any]]) -> dict[Any, str]:
    """Run each call with a bad argument; {its key: the message of the
    ValueError it raised, or "" when it raised none}.

    Other exceptions propagate (the check then reports the crash). Judge
    the result with `contract.expect_value_errors`.
    """
    errors = {}
    for key, call in calls.items():
        try:
            call()
            errors[key] = ""
        except ValueError as exc:
            errors[key] = str(exc)
    return errors


def layers_off_dtype(call: Callable[[Any], Any], x: Any) -> dict[str, Any]:
    """What computes in another dtype than `x`'s when `call(x)` runs.

    Every Keras layer called on the way is recorded (the student's own
    sublayers, and those made inside `call`, as `keras.layers.add([...])`
    makes one each time, with the default float32 policy).

    Returns:
        dict with `output_dtype` (of the first output) and `off` ("Class
        'name' (dtype)" of each layer called whose compute dtype is not
        x's, in call order, once each).
    """
    import keras

    seen: list[Any] = []
    original = keras.layers.Layer.__call__

    def spy(layer: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(layer)
        return original(layer, *args, **kwargs)

    keras.layers.Layer.__call__ = spy
    try:
        out = _first(call(x))
    finally:
        keras.layers.Layer.__call__ = original
    want = keras.backend.standardize_dtype(np.asarray(x).dtype)
    off = []
    for layer in seen:
        dtype = keras.backend.standardize_dtype(layer.compute_dtype)
        entry = f"{type(layer).__name__} {layer.name!r} ({dtype})"
        if dtype != want and entry not in off:
            off.append(entry)
    return {
        "output_dtype": keras.backend.standardize_dtype(out.dtype),
        "off": off,
    }
