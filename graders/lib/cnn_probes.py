"""Probe side of the CNN lessons (02-04): they touch the student's model
and return plain data for the judge (`graders.lib.cnn_references`).

`layer_table` (each layer's class and output shape, by shape inference
only), `transfer` / `transfer_named` (the grader's weights into the
student's layer), `first_layer_output` (a network's stem, b1, with
the grader's weights), `train_steps` (a few Adam steps on one batch).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from graders.lib.tolerances import LOSS_FALL


def layer_table(
    model: Any, input_shape: tuple[int, ...], keep: Sequence[str] = ()
) -> dict[str, Any]:
    """Run a symbolic `input_shape` batch through `model.layers` one at a
    time (no weights are initialised: shape inference only, ~0.1 s even for
    VGG's 129M parameters).

    Args:
        keep: class names of the lesson's own blocks ("Residual"), leaves
            of `leaves` even though they hold layers.

    Returns:
        dict: `type` (the model's class name), `rows` [(class name, output
        shape, activation name or None)] of the top-level layers, `leaves`
        the same with containers opened (`_apply_opened`), `trainable` and
        `non_trainable` (parameter counts).
    """
    _expect_layers(model)
    # Variables made under `StatelessScope(initialize_variables=False)` wait
    # on a list for the next top-level symbolic call to initialise them all
    # (seconds for VGG). Keras keeps that list per thread: made in a thread
    # of their own, they are forgotten with it. Nothing uses this model
    # again.
    with ThreadPoolExecutor(max_workers=1) as pool:
        facts = pool.submit(
            _shapes_without_weights, model, tuple(input_shape), tuple(keep)
        )
        return facts.result()


def _expect_layers(model: Any) -> None:
    """A StudentError unless `model` has `layers` (a keras.Sequential)."""
    if not hasattr(model, "layers"):
        from graders.lib.messages import say
        from m2t.grading.probe import StudentError

        got = type(model).__name__
        raise StudentError(say("cnn_probes.not_sequential", got=got))


def _shapes_without_weights(
    model: Any, input_shape: tuple[int, ...], keep: tuple[str, ...]
) -> dict[str, Any]:
    import keras

    rows: list[tuple] = []
    leaves: list[tuple] = []
    with keras.StatelessScope(initialize_variables=False):
        x = keras.Input(batch_shape=input_shape)
        for layer in model.layers:
            if isinstance(layer, keras.layers.InputLayer):
                continue
            x = _apply_opened(layer, x, keep, leaves)
            rows.append(_row(layer, x))
        counts = {
            "trainable": _count(model.trainable_weights),
            "non_trainable": _count(model.non_trainable_weights),
        }
    return {
        "type": type(model).__name__,
        "rows": rows,
        "leaves": leaves,
        **counts,
    }


def _row(layer: Any, out: Any) -> tuple:
    activation = getattr(layer, "activation", None)
    return (
        type(layer).__name__,
        tuple(int(d) for d in out.shape),
        getattr(activation, "__name__", None),
    )


def _apply_opened(layer: Any, x: Any, keep: tuple[str, ...], leaves: list):
    """`layer(x)`, appending the rows of its leaves to `leaves`: a
    Sequential is opened into its layers; a layer of the student's own
    (not Keras's, not named in `keep`) that holds layers is opened into
    them in the order it made them, where running them one after the other
    gives the layer's own output shape (d2l's `ResnetBlock`); any other
    layer is one leaf."""
    import keras

    if isinstance(layer, keras.Sequential):
        for child in layer.layers:
            if not isinstance(child, keras.layers.InputLayer):
                x = _apply_opened(child, x, keep, leaves)
        return x
    children = _own_children(layer, keep)
    out = layer(x)
    if children:
        start, y = len(leaves), x
        try:
            for child in children:
                y = _apply_opened(child, y, keep, leaves)
        except Exception:  # not a chain: the layer is a leaf
            y = None
        if y is not None and tuple(y.shape) == tuple(out.shape):
            return out
        del leaves[start:]
    leaves.append(_row(layer, out))
    return out


def _own_children(layer: Any, keep: tuple[str, ...]) -> list:
    if type(layer).__module__.startswith("keras") or (
        type(layer).__name__ in keep
    ):
        return []
    return list(layer._flatten_layers(include_self=False, recursive=False))


def _count(weights: Sequence[Any]) -> int:
    return int(sum(int(np.prod(w.shape)) for w in weights))


def transfer(layer: Any, weights: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Assign `weights[i]` to the layer's i-th weight where the shapes agree
    (the layer keeps its own where they do not); return the weights it ends
    up with, so the judge computes the reference from exactly those."""
    for variable, value in zip(layer.weights, weights, strict=False):
        if tuple(variable.shape) == tuple(np.shape(value)):
            variable.assign(np.asarray(value, dtype=variable.dtype))
    return [np.array(w) for w in layer.get_weights()]


def transfer_named(
    layer: Any, weights: Mapping[str, Sequence[np.ndarray]]
) -> dict[str, list[np.ndarray]]:
    """`transfer` into each named sublayer (`layer.conv1`, ...) that exists;
    returns {name: the weights it ends up with}."""
    used = {}
    for name, values in weights.items():
        sublayer = getattr(layer, name, None)
        if sublayer is not None:
            used[name] = transfer(sublayer, values)
    return used


def first_layer_output(
    model: Any,
    x: np.ndarray,
    weights: Sequence[np.ndarray],
    shape: Sequence[int],
) -> tuple[Any, list[np.ndarray]]:
    """A network's stem (b1) on x (B, H, W, C) in inference, with
    `weights` put in its weights in order (`transfer`). The stem is the
    model's first layer where that is a block of its own (a Sequential,
    as the course writes b1); where b1's layers stand straight in the
    model (d2l-zh's ResNet), the leading plain layers up to the first one
    whose output has the stem's `shape` (H', W', C'), the judge's.

    Returns:
        (its output, the weights it ended up with), for the judge's own
        float64 stem (`cnn_references.forward`).
    """
    import keras

    _expect_layers(model)
    stem = model.layers[0]
    if not isinstance(stem, keras.Model):
        run, y = [], x
        for layer in model.layers:
            if isinstance(layer, keras.Model):
                break
            run.append(layer)
            y = layer(y, training=False)
            if tuple(y.shape[1:]) == tuple(shape):
                break
        stem = keras.Sequential(run)
    stem(x, training=False)  # build
    used = transfer(stem, weights)
    return stem(x, training=False), used


def train_steps(
    model: Any,
    x: np.ndarray,
    y: np.ndarray,
    steps: int,
    learning_rate: float = 1e-2,
    stop_below: float | None = LOSS_FALL,
) -> list[float]:
    """Up to `steps` Adam steps on one batch with softmax cross-entropy
    from logits (Keras's, so this lesson does not depend on lesson 01);
    returns the loss before each step, and stops as soon as a loss is
    below `stop_below` times the first (the smoke check's verdict is
    known then: half the steps or fewer for every network of the course);
    None runs every step.

    Adam is written out here: a few eager ops per weight, where Keras's
    optimizer spends ~0.1 s a step on its bookkeeping.
    """
    import keras
    import tensorflow as tf

    beta_1, beta_2, epsilon = 0.9, 0.999, 1e-7
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model(x[:1], training=False)  # build
    weights = model.trainable_weights
    first = [tf.zeros(w.shape, w.dtype) for w in weights]
    second = [tf.zeros(w.shape, w.dtype) for w in weights]
    losses = []
    for step in range(1, steps + 1):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        losses.append(float(loss))
        if stop_below is not None and losses[-1] < stop_below * losses[0]:
            break
        grads = tape.gradient(loss, weights)
        if all(g is None for g in grads):
            from graders.lib.messages import say
            from m2t.grading.probe import StudentError

            left = say("probes.left_tape")
            raise StudentError(say("probes.left_tape_training", left=left))
        rate = learning_rate * np.sqrt(1 - beta_2**step) / (1 - beta_1**step)
        for i, (w, g) in enumerate(zip(weights, grads, strict=True)):
            first[i] = beta_1 * first[i] + (1 - beta_1) * g
            second[i] = beta_2 * second[i] + (1 - beta_2) * tf.square(g)
            w.assign_sub(rate * first[i] / (tf.sqrt(second[i]) + epsilon))
    return losses
