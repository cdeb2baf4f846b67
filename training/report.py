"""What a run measures (epoch times, throughput) and `report.json`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

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


def write(path: str | os.PathLike, report: dict) -> Path:
    """Write `report` as indented JSON (atomically)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
