"""One setting of a recipe checked against its range and its type: what
`m2t train --set key=value` and the flags (--epochs, --batch-size, --lr)
may be, with a one-line error naming the setting and the value."""

from __future__ import annotations

import math
from typing import Any

# Settings any recipe accepts though none sets them by default.
OPTIONAL_SETTINGS = ("max_steps", "batchnorm_momentum")

# Counts that must be whole numbers >= 1; numbers that must be finite and
# > 0; the command-line flag that sets a setting, where there is one.
COUNTS = (
    "epochs", "batch_size", "num_hiddens", "num_steps", "num_layers",
    "embed_size", "ffn_num_hiddens", "num_heads", "max_steps", "examples",
    "num_examples", "test_examples", "max_tokens", "tau", "T", "n_train",
    "ratio", "resize",
)  # fmt: skip
POSITIVE = ("lr", "clip")
FRACTIONS = ("batchnorm_momentum",)  # in [0, 1)
FLAGS = {"epochs": "--epochs", "batch_size": "--batch-size", "lr": "--lr"}


def check(
    key: str, value: Any, default: Any = None, name: str | None = None
) -> Any:
    """`value` for the setting `key`, checked against its range and the
    type of the recipe's `default`; a ValueError naming both otherwise.

    Args:
        name: how the message names it (default `--set key`; the flags
            pass theirs, `FLAGS[key]`).
    """
    name = name or f"--set {key}"
    if isinstance(default, bool) and not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    if key in COUNTS:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be a whole number, got {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
        return value
    if key in FRACTIONS:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{name} must be a number, got {value!r}")
        if not 0 <= value < 1:
            raise ValueError(f"{name} must be in [0, 1), got {value!r}")
        return float(value)
    if key in POSITIVE or isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{name} must be a number, got {value!r}")
        if key in POSITIVE and not (math.isfinite(value) and value > 0):
            raise ValueError(
                f"{name} must be a finite number > 0, got {value!r}"
            )
        return float(value)
    if isinstance(default, int) and not isinstance(default, bool):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be a whole number, got {value!r}")
        return value
    if isinstance(default, str) and not isinstance(value, str):
        raise ValueError(f"{name} must be text, got {value!r}")
    return value
