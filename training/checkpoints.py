"""Fault tolerance: back up every epoch, restore on restart; keep the best.

`Backup` plays the part of `keras.callbacks.BackupAndRestore` (with the
best-model part of `ModelCheckpoint`), with these differences:

* it is fast: the weights and the optimizer's variables go to one `.npz`
  (milliseconds; an `.h5` save of the same took about a second, as long as
  a whole epoch of the small Transformer);
* the files are replaced atomically: a new file each epoch, then the state
  file that names it, so a run killed while writing keeps the previous
  backup whole;
* the epoch logs so far are kept with the weights, so the loss curve of a
  resumed run starts at epoch 1;
* restoring is a plain call before training, so `fit` and the multi-worker
  loop resume the same way (`initial_epoch`).

A run killed at any point restarts at the start of the epoch it was in,
from the weights and optimizer state at the end of the epoch before, and
(data.py) sees the same batches it would have seen.

The best weights (lowest `monitor`) are kept in the backup and written as
`best.weights.h5` (Keras format: `model.load_weights`) when training ends.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import keras
import numpy as np

STATE = "state.json"


class Backup(keras.callbacks.Callback):
    """Back up weights, optimizer state and logs at each epoch's end.

    Args:
        directory: the backup folder (one per worker).
        monitor: the log whose lowest value marks the best epoch.

    Attributes:
        history: one dict of logs per epoch so far (restored ones first).
        best: the lowest `monitor` so far; `best_epoch` its epoch (1-based).
    """

    def __init__(self, directory: str | os.PathLike, monitor: str = "loss"):
        super().__init__()
        self.directory = Path(directory)
        self.monitor = monitor
        self.history: list[dict] = []
        self.best = math.inf
        self.best_epoch = 0
        self._best_weights: list[np.ndarray] | None = None

    def pending(self) -> int | None:
        """The epoch an unfinished run in `directory` would resume at."""
        state = self._state()
        return None if state is None else state["epoch"]

    def restore(self, trainer: keras.Model) -> int:
        """Load the backup into `trainer` (built, with its optimizer built).

        Returns:
            the epoch to start at (0 when there is nothing to restore).
        """
        state = self._state()
        if state is None:
            return 0
        with np.load(self.directory / state["arrays"]) as saved:
            arrays = [saved[f"arr_{i}"] for i in range(len(saved.files))]
        counts = state["counts"]
        model = arrays[: counts[0]]
        optimizer = arrays[counts[0] : counts[0] + counts[1]]
        best = arrays[counts[0] + counts[1] :]
        trainer.set_weights(model)
        variables = trainer.optimizer.variables
        if len(variables) != len(optimizer):
            raise ValueError(
                f"the backup in {self.directory} holds {len(optimizer)} "
                f"optimizer variables, this optimizer has {len(variables)}: "
                "was it made with other settings?"
            )
        for variable, value in zip(variables, optimizer, strict=True):
            variable.assign(value)
        self.history = list(state["history"])
        self.best, self.best_epoch = state["best"], state["best_epoch"]
        self._best_weights = best or None
        return int(state["epoch"])

    def on_epoch_end(self, epoch, logs=None):
        logs = {k: float(v) for k, v in (logs or {}).items()}
        self.history.append(logs)
        if logs.get(self.monitor, math.inf) < self.best:
            self.best, self.best_epoch = logs[self.monitor], epoch + 1
            self._best_weights = self.model.get_weights()
        model = self.model.get_weights()
        optimizer = [np.asarray(v) for v in self.model.optimizer.variables]
        best = self._best_weights or []
        self.directory.mkdir(parents=True, exist_ok=True)
        old = self._state()
        # A new file each epoch, and the state file (written last,
        # atomically) names it: a kill between the two keeps the old pair.
        arrays = f"epoch-{epoch + 1:04d}.npz"
        np.savez(self.directory / arrays, *model, *optimizer, *best)
        state = {
            "epoch": epoch + 1,
            "arrays": arrays,
            "counts": [len(model), len(optimizer), len(best)],
            "best": self.best,
            "best_epoch": self.best_epoch,
            "monitor": self.monitor,
            "history": self.history,
        }
        tmp = self.directory / (STATE + ".tmp")
        tmp.write_text(json.dumps(state, indent=1), encoding="utf-8")
        os.replace(tmp, self.directory / STATE)
        if old is not None and old["arrays"] != arrays:
            (self.directory / old["arrays"]).unlink(missing_ok=True)

    def save_best(self, trainer: keras.Model, path: str | os.PathLike) -> None:
        """Write the best epoch's weights as a Keras `.weights.h5`."""
        if self._best_weights is None:
            return
        current = trainer.get_weights()
        trainer.set_weights(self._best_weights)
        trainer.save_weights(path)
        trainer.set_weights(current)

    def clear(self) -> None:
        """Training finished: the backup is no longer needed."""
        shutil.rmtree(self.directory, ignore_errors=True)

    def _state(self) -> dict | None:
        path = self.directory / STATE
        if not path.exists():
            return None
        return json.loads(path.read_text(encoding="utf-8"))
