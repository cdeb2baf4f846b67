"""What a family hands the runner: the model, its loss, its data, its end."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
