"""Fault tolerance: back up every epoch, restore on restart; keep the best.

`Backup` plays the part of `keras.callbacks.BackupAndRestore` (with the
best-model part of `ModelCheckpoint`), with these differences:

* it is fast: the weights, the optimizer's variables and the random
  generators' state go to one `.npz` (milliseconds; an `.h5` save of the
  same took about a second, as long as a whole epoch of the small
  Transformer);
* it keeps the random state: the dropout layers' seed generators are not
  in `get_weights()`, and without them a resumed run would draw epoch 1's
  dropout masks again;
* the files are replaced atomically and synced to disk: a new file each
  epoch, then the state file that names it, so a run killed while
  writing (or a machine that loses power) keeps the previous backup whole;
* it keeps the last two epochs, so workers that stopped one epoch apart
  can agree on the last epoch all of them finished (`agree`);
* the epoch logs so far are kept with the weights, so the loss curve of a
  resumed run starts at epoch 1;
* restoring is a plain call before training, so `fit` and the multi-worker
  loop resume the same way (`initial_epoch`).

A run killed at any point restarts at the start of the epoch it was in,
from the weights, optimizer and random state at the end of the epoch
before, and (data.py) sees the same batches it would have seen.

The best weights (lowest `monitor`) are kept in the backup and written as
`best.weights.h5` (Keras format: `model.load_weights`) when training ends.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import uuid
import zipfile
from collections.abc import Mapping
from pathlib import Path

import keras
import numpy as np

from .report import durable
from .report import strict
from .report import write_json

STATE = "state.json"
KEEP = 2  # epochs kept: the latest and the one before


def random_state(model: keras.Model) -> list:
    """The variables of `model` that are neither weights nor metrics: the
    seed generators' state (dropout), in a fixed order."""
    weights = {id(w) for w in model.weights}
    return [v for v in model.variables if id(v) not in weights]


class Backup(keras.callbacks.Callback):
    """Back up weights, optimizer and random state, and logs, each epoch.

    Args:
        directory: the backup folder (one per worker).
        monitor: the log whose lowest value marks the best epoch.
        settings: the run's settings, kept with the backup so a resumed
            run can be checked against them (`saved_settings`).

    Attributes:
        history: one dict of logs per epoch so far (restored ones first).
        best: the lowest `monitor` so far; `best_epoch` its epoch (1-based).
    """

    def __init__(
        self,
        directory: str | os.PathLike,
        monitor: str = "loss",
        settings: dict | None = None,
    ):
        super().__init__()
        self.directory = Path(directory)
        self.monitor = monitor
        self.settings = strict(settings or {})
        self.history: list[dict] = []
        self.best = math.inf
        self.best_epoch = 0
        self._best_weights: list[np.ndarray] | None = None

    def pending(self) -> int | None:
        """The latest epoch backed up by an unfinished run, else None."""
        state = self._state()
        return None if state is None else state["epoch"]

    def epochs(self) -> list[int]:
        """The epochs this backup can restore, oldest first."""
        state = self._state()
        return [] if state is None else [k["epoch"] for k in state["kept"]]

    def saved_settings(self) -> dict | None:
        """The settings the backed-up run was made with."""
        state = self._state()
        return None if state is None else state.get("settings")

    def restore(self, trainer: keras.Model, epoch: int | None = None) -> int:
        """Load a backup into `trainer` (built, with its optimizer built).

        Args:
            epoch: which kept epoch (default: the latest); 0 restores
                nothing.

        Returns:
            the epoch to start at (0 when there is nothing to restore).
        """
        state = self._state()
        if state is None or epoch == 0:
            return 0
        kept = {k["epoch"]: k for k in state["kept"]}
        entry = kept[state["epoch"] if epoch is None else epoch]
        path = self.directory / entry["arrays"]
        try:
            with np.load(path) as saved:
                arrays = [saved[f"arr_{i}"] for i in range(len(saved.files))]
        except (
            OSError,
            EOFError,
            KeyError,
            ValueError,
            zipfile.BadZipFile,
        ) as exc:
            raise ValueError(self._damaged(path, exc)) from exc
        counts = entry["counts"]
        if sum(counts) != len(arrays):
            raise ValueError(self._damaged(path, "arrays missing"))
        parts, start = [], 0
        for count in counts:
            parts.append(arrays[start : start + count])
            start += count
        model, optimizer, rng, best = parts
        trainer.set_weights(model)
        _assign(trainer.optimizer.variables, optimizer, "optimizer", self)
        _assign(random_state(trainer), rng, "random-state", self)
        self.history = list(entry["history"])
        best_value = entry["best"]
        self.best = math.inf if best_value is None else best_value
        self.best_epoch = entry["best_epoch"]
        self._best_weights = best or None
        return int(entry["epoch"])

    def on_epoch_end(self, epoch, logs=None):
        logs = {k: float(v) for k, v in (logs or {}).items()}
        self.history.append(logs)
        if logs.get(self.monitor, math.inf) < self.best:
            self.best, self.best_epoch = logs[self.monitor], epoch + 1
            self._best_weights = self.model.get_weights()
        model = self.model.get_weights()
        optimizer = [np.asarray(v) for v in self.model.optimizer.variables]
        rng = [np.asarray(v) for v in random_state(self.model)]
        best = self._best_weights or []
        self.directory.mkdir(parents=True, exist_ok=True)
        old = self._state()
        # A new file each epoch (a unique name: a resumed worker may write
        # an epoch again), and the state file, written last and
        # atomically, names it: a kill between the two keeps the old pair.
        arrays = f"epoch-{epoch + 1:04d}-{uuid.uuid4().hex[:8]}.npz"
        durable(
            self.directory / arrays,
            lambda f: np.savez(f, *model, *optimizer, *rng, *best),
        )
        entry = {
            "epoch": epoch + 1,
            "arrays": arrays,
            "counts": [len(model), len(optimizer), len(rng), len(best)],
            "best": self.best,
            "best_epoch": self.best_epoch,
            "history": self.history,
        }
        earlier = [
            k for k in (old or {}).get("kept", []) if k["epoch"] <= epoch
        ]
        state = {
            "epoch": epoch + 1,
            "monitor": self.monitor,
            "settings": self.settings,
            "kept": [*earlier[-(KEEP - 1) :], entry],
        }
        write_json(self.directory / STATE, state)
        named = {k["arrays"] for k in state["kept"]}
        for path in self.directory.glob("epoch-*.npz*"):
            if path.name not in named:
                path.unlink(missing_ok=True)

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
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
            whole = isinstance(state["epoch"], int) and all(
                isinstance(k["arrays"], str) for k in state["kept"]
            )
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ValueError(self._damaged(path, exc)) from exc
        if not whole or not state["kept"]:
            raise ValueError(self._damaged(path, "fields missing"))
        return state

    def _damaged(self, path: Path, why) -> str:
        return (
            f"the backup file {path} is damaged ({why}): remove the folder "
            f"{self.directory} to train from epoch 1 (or choose another --out)"
        )


def _assign(variables, values, what: str, backup: Backup) -> None:
    if len(variables) != len(values):
        raise ValueError(
            f"the backup in {backup.directory} holds {len(values)} {what} "
            f"variables, this model has {len(variables)}: was it made with "
            "other settings?"
        )
    for variable, value in zip(variables, values, strict=True):
        variable.assign(value)


def agree(kept: Mapping[str, list[int]]) -> int:
    """The epoch every worker resumes at: the latest all of them finished.

    Args:
        kept: each worker's name -> the epochs its backup holds (empty:
            none; epoch 0, a fresh start, is always possible).

    Returns:
        the epoch (0: start afresh).

    Raises:
        ValueError naming each worker's epochs when some worker no longer
        holds that epoch (they stopped more than one epoch apart).
    """
    latest = min((max(e, default=0) for e in kept.values()), default=0)
    if latest == 0 or all(latest in e for e in kept.values()):
        return latest
    each = "; ".join(
        f"{name} at epoch {max(e, default=0)}"
        + (f" (keeps {', '.join(map(str, e))})" if e else "")
        for name, e in kept.items()
    )
    raise ValueError(
        f"the workers cannot resume together: {each}; epoch {latest} is not "
        "kept by all of them. Remove every worker's backup/ folder to train "
        "from epoch 1"
    )
