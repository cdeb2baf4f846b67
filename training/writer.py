"""Who writes where, decided before TensorFlow is imported: the folder a
training process writes (the chief `--out`, every other worker a folder of
its own under it) and a lock on it, so a second live `m2t train` on the
same folder is refused at once instead of training beside the first.

The lock is `fcntl.flock` on `<folder>/.lock`: the kernel releases it when
its process ends however it ends (a killed run leaves no stale lock for
`--resume` to trip on), and the file names the holder's pid for the
message. POSIX only, like the rest of `m2t train`'s multi-worker set-up.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from typing import IO

LOCK = ".lock"
"""The lock file's name in the folder a process writes."""

_held: dict[Path, IO[str]] = {}
"""The open lock files of this process, by folder: kept open until it
exits (a second `hold` of the same folder is a no-op)."""


def task_of(config: dict | None) -> tuple[str, int] | None:
    """(type, index) of this process in TF_CONFIG's cluster, or None when
    it names no cluster of several tasks."""
    if not config:
        return None
    cluster = config.get("cluster", {})
    tasks = sum(len(v) for k, v in cluster.items() if k in ("chief", "worker"))
    if tasks < 2:
        return None
    task = config.get("task", {})
    return str(task.get("type", "worker")), int(task.get("index", 0))


def is_chief(config: dict | None) -> bool:
    """Whether this process is the chief: task "chief" when the cluster
    has one, else worker 0 (a process outside a cluster is its own)."""
    task = task_of(config)
    if task is None:
        return True
    kind, index = task
    if "chief" in config.get("cluster", {}):
        return kind == "chief"
    return kind == "worker" and index == 0


def folder(out: Path, config: dict | None) -> Path:
    """The folder this process writes: `out` for the chief, else
    `out/.workers/<type>-<index>`."""
    if is_chief(config):
        return Path(out)
    kind, index = task_of(config)
    return Path(out) / ".workers" / f"{kind}-{index}"


def config_from_env() -> dict | None:
    """TF_CONFIG as a dict (None when unset).

    Raises:
        ValueError: naming TF_CONFIG when it is not JSON.
    """
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        raise ValueError(f"TF_CONFIG {raw[:80]!r}: not JSON") from None


def hold(out: Path, config: dict | None = None) -> Path:
    """Lock the folder this process writes for as long as it lives.

    Returns:
        the locked folder.

    Raises:
        ValueError: naming --out when another live process holds it.
    """
    where = folder(out, config)
    if where.resolve() in _held:
        return where
    where.mkdir(parents=True, exist_ok=True)
    f = open(where / LOCK, "a+", encoding="utf-8")  # noqa: SIM115
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        holder = f.read().strip() or "another process"
        f.close()
        raise ValueError(
            f"--out {str(out)!r}: {holder} is writing {str(where)!r}; wait "
            "for it to end (or stop it), or choose another --out"
        ) from None
    f.seek(0)
    f.truncate()
    f.write(f"m2t train (pid {os.getpid()}, since {time.strftime('%H:%M')})")
    f.flush()
    _held[where.resolve()] = f
    return where
