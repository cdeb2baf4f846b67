"""A grading worker: the confined process that runs probes, and the
judge's handle on it.

`Worker` spawns one (through bubblewrap where the namespaces are there,
never forked from a process with TensorFlow loaded), waits for its hello
and checks the confinement it reports; `worker_main` is the loop inside:
it drops root, confines itself (`m2t.grading.confine`: limits, Landlock,
seccomp), then answers each request (a grader module and a probe) with a
frame (`m2t.grading.frames`). The code it imports is the trusted copy the
judge made (`m2t.grading.sandbox.copy_trusted`), stripped of every
judge-side reference.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from m2t import ROOT
from m2t import i18n
from m2t import settings
from m2t.grading import confine
from m2t.grading import uids
from m2t.grading.frames import encode
from m2t.grading.frames import recv
from m2t.grading.frames import send

LOG_TAIL = 64 << 10
"""How much of the end of the worker's log the judge reads."""


class SandboxError(RuntimeError):
    """The worker could not be confined as required: nothing is graded."""


class Worker:
    """One confined worker process and its temporary folder; it reads the
    trusted code in `code` and the staged submission in `folder`."""

    def __init__(
        self,
        folder: Path,
        code: Path,
        memory_mb: int,
        weaker: set[str],
        by_hand: bool = False,
    ):
        self.ready = False
        self.facts: dict[str, Any] = {}
        self.home = Path(tempfile.mkdtemp(prefix="m2t-worker-"))
        tmp = self.home / "tmp"
        tmp.mkdir()
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp),
            "TMPDIR": str(tmp),
            "KERAS_HOME": str(tmp / ".keras"),
            **settings.quiet_env({}),  # TensorFlow C++ logs: errors only
            "CUDA_VISIBLE_DEVICES": "-1",  # the worker grades on the CPU
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", ""),
            "LANG": "C.UTF-8",
            # the not-started and error lines, in the judge's language
            "M2T_LANG": i18n.language(),
            # a lesson graded by hand: no autodiff library, ever
            "M2T_BY_HAND": "1" if by_hand else "",
        }
        env = {k: v for k, v in env.items() if v}
        missing = confine.missing_layers()
        namespaces = "namespaces" not in missing
        # A root grader's worker runs as a uid of its own: inside bubblewrap
        # it drops root itself; without namespaces the child switches before
        # it executes Python.
        drop = confine.grader_is_root() and "unprivileged" not in missing
        self.uid, self.claim = uids.claim_uid() if drop else (os.getuid(), None)
        uid = self.uid
        switch: dict[str, Any] = {}
        if drop and not namespaces:
            switch = uids.as_worker(uid)
            # its folder: reachable (not listable) by the worker, which
            # writes only in tmp (its own)
            self.home.chmod(0o711)
            os.chown(tmp, uid, uid)
            tmp.chmod(0o700)
        command = [
            sys.executable,
            "-I",
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]); "
            "from m2t.grading.worker import worker_main; worker_main()",
            str(code),
            str(folder),
            str(tmp),
            str(memory_mb),
            str(uids.process_limit(uid)),
            str(ROOT),
            str(uid) if drop and namespaces else "keep",
            ",".join(
                layer for layer in ("landlock", "seccomp") if layer in missing
            ),
        ]
        if namespaces:
            trees = [
                *confine.SYSTEM,
                *confine.python_trees(exclude=str(ROOT)),
                str(code),
                str(folder),
            ]
            argv = confine.bwrap_argv(
                str(confine.bwrap_path()),
                ro=trees,
                tmp=str(tmp),
                drop=confine.grader_is_root(),
            )
            for key, value in env.items():
                argv += ["--setenv", key, value]
            command = [*argv, *command]
        self.log = open(self.home / "worker.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            cwd=tmp,
            env=env,
            start_new_session=True,
            **switch,
        )
        self.weaker = weaker

    def wait_ready(self, seconds: float) -> None:
        """Wait for the worker's hello; check the layers it reports."""
        if self.ready:
            return
        try:
            reply = recv(self.proc.stdout.fileno(), time.monotonic() + seconds)
        except (TimeoutError, ValueError, struct.error):
            reply = None
        if not isinstance(reply, dict) or reply.get("ready") is not True:
            raise RuntimeError(
                f"the grading worker did not start: {self.log_tail()}"
            )
        self.facts = reply.get("layers") or {}
        lacking = confine.check_layers(self.facts, self.weaker)
        if lacking:
            raise SandboxError(
                f"the grading worker is not confined ({lacking} missing): "
                "nothing is graded"
            )
        self.ready = True

    def close(self) -> None:
        """Stop the worker and everything it started: its session, its
        PID namespace where it has one, and every process of its own uid
        (a daemon in a session of its own included)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        if self.claim is not None:
            uids.reap(self.uid)
            os.close(self.claim)
            self.claim = None
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        self.log.close()
        shutil.rmtree(self.home, ignore_errors=True)

    def log_tail(self) -> str:
        return log_tail(self.home / "worker.log")


def log_tail(path: Path) -> str:
    """The last line of a worker's log, reading at most `LOG_TAIL` bytes of
    its end (a log made huge or sparse costs nothing)."""
    try:
        with open(path, "rb") as f:
            f.seek(max(os.fstat(f.fileno()).st_size - LOG_TAIL, 0))
            text = f.read(LOG_TAIL).decode(errors="replace")
    except OSError:
        return ""
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def worker_main() -> None:
    """The worker's loop (runs in the confined process)."""
    code, folder, tmp, memory_mb, nproc, repo, drop, skip = sys.argv[1:9]
    if drop != "keep":  # root inside bubblewrap: a uid of its own first
        confine.drop_root(int(drop))
    confine.no_new_privileges()  # no set-user-id program makes it root
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # prints from student code go to the log, not the protocol
    confine.set_limits(int(memory_mb) << 20, int(nproc))
    import importlib

    from m2t.grading import tfsetup

    by_hand = os.environ.get("M2T_BY_HAND") == "1"
    if not by_hand:
        tfsetup.load()  # before confinement: a faster start

    with contextlib.suppress(ImportError, OSError):
        import pyseccomp  # noqa: F401  (finds libseccomp with ldconfig)

    from m2t.grading import landlock
    from m2t.grading import probe as _probe

    read = [
        *confine.python_trees(exclude=repo),
        code,
        folder,
        *confine.SYSTEM,
        "/proc/self",  # without namespaces: only the worker's own
        "/proc/cpuinfo",
        "/proc/meminfo",
        "/proc/stat",
        "/sys/devices/system/cpu",
        *confine.DEVICES,
    ]
    abi = 0
    if "landlock" not in skip:
        abi = landlock.restrict(read=read, write=[tmp, "/dev/null"])
    seccomp = "seccomp" not in skip and confine.load_seccomp()
    if by_hand:  # m2t.grading.noautodiff: before any request
        from m2t.grading import noautodiff

        noautodiff.install()
    runner = _probe.InProcessRunner(Path(folder), by_hand=by_hand)
    facts = confine.layers_in_force(abi, seccomp)
    send(proto_out, {"ready": True, "layers": facts})
    while True:
        request = recv(proto_in.fileno())
        if request is None:
            return
        try:
            grader = importlib.import_module(request["grader"])
            fn = getattr(grader, request["probe"]).raw
            result = runner.run(
                request["module"], fn, tuple(request["args"]), request["kwargs"]
            )
            reply: dict[str, Any] = {"ok": result}
            encode(reply)  # fail here, not half-way through a send
        except _probe.ProbeFailure as exc:
            reply = {"failure": exc.status, "message": str(exc)}
        except BaseException as exc:  # noqa: BLE001  the worker survives
            reply = {
                "failure": "error",
                "message": f"{type(exc).__name__}: {exc}",
            }
        send(proto_out, reply)
