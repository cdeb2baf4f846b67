"""What a run measures (epoch times, throughput) and `report.json`."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import keras


class Timing(keras.callbacks.Callback):
    """Wall time and work (images, tokens...) of each epoch's training.

    The validation pass that `fit` runs inside an epoch is timed apart and
    left out of the training time.

    Args:
        unit: the name of the metric that counts the work, e.g. "tokens".
    """

    def __init__(self, unit: str):
        super().__init__()
        self.unit = unit
        self.epochs: list[tuple[float, float]] = []  # (seconds, units)

    def on_epoch_begin(self, epoch, logs=None):
        self._start = time.perf_counter()
        self._validation = 0.0

    def on_test_begin(self, logs=None):
        self._test_start = time.perf_counter()

    def on_test_end(self, logs=None):
        self._validation += time.perf_counter() - self._test_start

    def on_epoch_end(self, epoch, logs=None):
        seconds = time.perf_counter() - self._start - self._validation
        self.epochs.append((seconds, float((logs or {}).get(self.unit, 0.0))))
        if logs is not None:
            logs["epoch_seconds"] = seconds
            if self._validation:
                logs["validation_seconds"] = self._validation

    def throughput(self) -> tuple[float, str]:
        """Units per second, leaving out the first epoch (tracing, warm-up)
        when later ones ran; and which epochs it covers."""
        measured = self.epochs[1:] if len(self.epochs) > 1 else self.epochs
        seconds = sum(s for s, _ in measured)
        units = sum(u for _, u in measured)
        note = (
            "epochs after the first of this run"
            if len(self.epochs) > 1
            else "the only epoch of this run, tracing included"
        )
        return (units / seconds if seconds else 0.0), note


def strict(value: Any) -> Any:
    """`value` with every non-finite float replaced by None, so that
    `json.dumps(..., allow_nan=False)` writes strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict(v) for v in value]
    return value


def write_json(path: str | os.PathLike, value: Any, indent: int = 1) -> Path:
    """Write `value` as strict, indented JSON, atomically and durably."""
    path = Path(path)
    text = json.dumps(strict(value), indent=indent, allow_nan=False) + "\n"
    durable(path, lambda f: f.write(text.encode("utf-8")))
    return path


def durable(path: Path, write) -> None:
    """`write(file)` into a temporary file, synced, then renamed to
    `path` and the folder synced: the old file or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write(path: str | os.PathLike, report: dict) -> Path:
    """Write `report` as strict JSON (a non-finite number becomes null)."""
    return write_json(path, report, indent=2)
