"""Judge side: gradients by `tf.GradientTape`, in float64, of forward passes
the judge writes itself, on the inputs it gave the student's code.

The lessons that write a backward pass by hand (21, 22) are checked against
these as well as against the grader's own NumPy derivation: two references
that share nothing but the inputs. Nothing here runs student code.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

import numpy as np

from graders.lib.fixtures import reference


@reference
def tape_gradients(
    forward: Callable[..., Any],
    inputs: Sequence[Any],
    cotangent: Any = None,
) -> list[np.ndarray]:
    """The gradients of `forward(*inputs)` with respect to each input.

    Args:
        forward: takes float64 tensors, one per input; returns a scalar, or
            any tensor when `cotangent` is given.
        inputs: arrays (any shapes), converted to float64 constants.
        cotangent: None, or an array of the output's shape: the gradient
            is then that of `sum(output * cotangent)`, which is what a
            backward pass given dL/d(output) = cotangent returns (a
            vector-Jacobian product).

    Returns:
        One float64 array per input, of its shape.
    """
    import tensorflow as tf

    tensors = [tf.constant(np.asarray(a, np.float64)) for a in inputs]
    with tf.GradientTape() as tape:
        for tensor in tensors:
            tape.watch(tensor)
        out = forward(*tensors)
        if cotangent is not None:
            weights = tf.constant(np.asarray(cotangent, np.float64))
            out = tf.reduce_sum(out * weights)
    return [np.asarray(g) for g in tape.gradient(out, tensors)]


@reference
def mean_cross_entropy(logits: Any, labels: Any) -> Any:
    """TensorFlow's softmax cross-entropy of `logits` (..., Q) against the
    integer `labels` (...), averaged over every label: a scalar tensor."""
    import tensorflow as tf

    return tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.constant(np.asarray(labels)), logits=logits
        )
    )
