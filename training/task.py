"""What a family hands the runner: the model, its loss, its data, its end."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import keras
import tensorflow as tf

from .data import Examples


@dataclass
class Task:
    """One recipe on one data source, ready to train.

    Attributes:
        build: `() -> net`, called under the strategy's scope.
        example: a small input batch `x` that builds the net.
        loss: `(y, y_pred) -> per-element losses`, float32, shaped like
            the weights `w` of a batch.
        train: the training examples.
        data: one line saying which data this is, for the report.
        unit: what one loss element is: "images", "tokens", "examples".
        correct: `(y, y_pred) -> per-element 0/1` for an accuracy, or None.
        validation: examples to evaluate after each epoch, or None.
        curve: the second panel of the loss plot ("accuracy",
            "perplexity" or None).
        finish: `(net, out, history) -> {"quality": {...}, "samples":
            [...], "plots": [...]}`: evaluate, print d2l-style samples and
            draw the family's pictures into `out`.
    """

    build: Callable[[], Any]
    example: Any
    loss: Callable
    train: Examples
    data: str
    unit: str = "examples"
    correct: Callable | None = None
    validation: Examples | None = None
    curve: str | None = None
    finish: Callable[[Any, Path, list[dict]], dict] | None = None


def cross_entropy(y, logits):
    """Softmax cross-entropy per label (an image's, a token's), in float32:
    `(B, ...)` labels and `(B, ..., K)` logits -> `(B, ...)`."""
    return keras.losses.sparse_categorical_crossentropy(
        y, tf.cast(logits, tf.float32), from_logits=True
    )


def argmax_correct(y, logits):
    """1.0 where the argmax of the logits is the label: `(B, ...)`."""
    pred = tf.argmax(logits, axis=-1, output_type=tf.int32)
    return tf.cast(tf.equal(pred, tf.cast(y, tf.int32)), tf.float32)
