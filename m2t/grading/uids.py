"""The worker's own uid, where the grader is root: which one
(`claim_uid`), how a child starts as it (`as_worker`), the limit on its
processes (`process_limit`), and how every process of it is killed
(`reap`), whatever session or process group it put itself in.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from m2t import settings

WORKER_UIDS = range(200_000, 265_536)
"""Where the grader is root, each worker runs as a uid (and gid) of its
own from this range, no account's: its process limit counts only its own
processes, workers of grades running side by side cannot touch each
other, and `reap` kills exactly its processes."""

EXTRA_PROCESSES = 512
"""Processes and threads the worker may add to those its uid has."""


def as_worker(uid: int) -> dict[str, Any]:
    """`subprocess.Popen`'s arguments that start the child as `uid` (gid
    `uid`, no supplementary group), switched in the child before it
    executes anything.

    Raises:
        ValueError: `uid` is 0.
    """
    if uid == 0:
        raise ValueError(f"uid={uid}: a worker never runs as root")
    return {"user": uid, "group": uid, "extra_groups": []}


def reap(uid: int) -> None:
    """Kill every process of `uid` (a worker's own): a child that becomes
    `uid` sends SIGKILL to every process it may signal (kill(-1)), which is
    every process of that uid and nothing else, whatever session or process
    group they put themselves in; repeated until none is left.

    Raises:
        ValueError: `uid` is 0 or the grader's own.
    """
    if uid in (0, os.getuid()):
        raise ValueError(f"uid={uid}: not a worker's own uid")
    kill = "import os\ntry: os.kill(-1, 9)\nexcept OSError: pass"
    for _ in range(10):
        if not processes_of(uid):
            return
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                [sys.executable, "-I", "-S", "-c", kill],
                env={},
                capture_output=True,
                timeout=settings.LAYER_PROBE_TIMEOUT,
                **as_worker(uid),
            )


def processes_of(uid: int) -> list[int]:
    """The pids of the processes whose real uid is `uid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            for line in Path(f"/proc/{entry}/status").read_text().splitlines():
                if line.startswith("Uid:"):
                    if int(line.split()[1]) == uid:
                        found.append(int(entry))
                    break
    return found


def reap_workers() -> list[int]:
    """Kill every process of any uid of `WORKER_UIDS` (what a grade that
    was itself killed left behind); returns those uids. Root only."""
    uids = set()
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            uid = os.stat(f"/proc/{entry}").st_uid
            if uid in WORKER_UIDS:
                uids.add(uid)
    for uid in sorted(uids):
        reap(uid)
    return sorted(uids)


CLAIMS = Path("/tmp/m2t-worker-uids")
"""Where a root grader claims a worker's uid: a file per uid, locked
(flock) while that worker lives, so grades side by side (a roster's `-j`)
never share one, and a claim dies with the process that held it."""


def claim_uid() -> tuple[int, int]:
    """A uid of `WORKER_UIDS` that no process has and no other grader has
    claimed: (uid, the claim's descriptor; close it to release).

    Raises:
        OSError: the claims' folder is not a folder of the grader's own.
    """
    import fcntl
    import random
    import stat

    with contextlib.suppress(FileExistsError):
        os.mkdir(CLAIMS, 0o700)
    info = os.lstat(CLAIMS)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise OSError(f"{CLAIMS}: not a folder of uid {os.geteuid()}")
    taken = set()
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            taken.add(os.stat(f"/proc/{entry}").st_uid)
    while True:
        uid = random.choice(WORKER_UIDS)
        if uid in taken:
            continue
        fd = os.open(
            CLAIMS / str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600
        )
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            taken.add(uid)
            continue
        if processes_of(uid):  # a worker whose grader died: not yet reaped
            os.close(fd)
            taken.add(uid)
            continue
        return uid, fd


def process_limit(uid: int) -> int:
    """RLIMIT_NPROC for a worker running as `uid`: the tasks that uid has
    now (the kernel counts them all) plus `EXTRA_PROCESSES`."""
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(
            line.split(":", 1) for line in status.splitlines() if ":" in line
        )
        if int(fields.get("Uid", "-1").split()[0]) == uid:
            count += int(fields.get("Threads", "1"))
    return count + EXTRA_PROCESSES
