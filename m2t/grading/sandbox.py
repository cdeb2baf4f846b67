"""Grading untrusted code: probes run in a sandboxed worker process.

The judge (pytest with the instructor's graders) never imports student code.
Each probe call goes to a worker: a fresh Python process (spawned, never
forked from a process that has TensorFlow loaded) that

* sees a trusted copy of `graders/`, `m2t/` and `m2t_data/` and the staged
  submission, and nothing else of the repository (no solutions, no keys):
  Linux Landlock confines its reads and writes, forbids TCP, and scopes its
  signals and ptrace so it cannot touch the judge;
* runs under a memory limit (RLIMIT_AS) and a wall-clock limit per probe;
* answers with plain arrays in a pickle-free format (JSON + .npy).

A worker that times out, dies, or breaks the protocol fails the check that
was running, with a message saying which and why; the next probe gets a new
worker. One worker serves many lessons, so TensorFlow is imported once.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from m2t import ROOT
from m2t import settings

TRUSTED = ("graders", "m2t", "m2t_data")
MAX_FRAME = 512 << 20


# ----------------------------------------------------------------- codec
def encode(obj: Any) -> bytes:
    """Plain data -> bytes: a JSON tree whose arrays are `.npy` blobs."""
    arrays: list[np.ndarray] = []

    def walk(x: Any) -> Any:
        if isinstance(x, np.ndarray):
            arrays.append(x)
            return {"$a": len(arrays) - 1}
        if isinstance(x, np.generic):  # NumPy scalars travel as Python ones
            return x.item()
        if isinstance(x, tuple):
            return {"$t": [walk(v) for v in x]}
        if isinstance(x, list):
            return [walk(v) for v in x]
        if isinstance(x, dict):
            return {"$d": {str(k): walk(v) for k, v in x.items()}}
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        raise TypeError(f"cannot send a {type(x).__name__}")

    header = json.dumps(walk(obj)).encode()
    blobs = []
    for array in arrays:
        buf = io.BytesIO()
        np.save(buf, array, allow_pickle=False)
        blobs.append(buf.getvalue())
    parts = [struct.pack(">II", len(header), len(blobs)), header]
    for blob in blobs:
        parts += [struct.pack(">Q", len(blob)), blob]
    return b"".join(parts)


def decode(data: bytes) -> Any:
    """The inverse of `encode`; never unpickles."""
    hlen, count = struct.unpack_from(">II", data, 0)
    offset = 8
    header = json.loads(data[offset : offset + hlen])
    offset += hlen
    arrays = []
    for _ in range(count):
        (n,) = struct.unpack_from(">Q", data, offset)
        offset += 8
        arrays.append(
            np.load(io.BytesIO(data[offset : offset + n]), allow_pickle=False)
        )
        offset += n

    def walk(x: Any) -> Any:
        if isinstance(x, dict):
            if "$a" in x:
                return arrays[x["$a"]]
            if "$t" in x:
                return tuple(walk(v) for v in x["$t"])
            return {k: walk(v) for k, v in x["$d"].items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    return walk(header)


def _send(stream, obj: Any) -> None:
    data = encode(obj)
    stream.write(struct.pack(">Q", len(data)) + data)
    stream.flush()


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _recv(fd: int, deadline: float | None = None) -> Any:
    """One frame from `fd`; None at end of file; TimeoutError past deadline."""
    head = _read_exact(fd, 8, deadline)
    if head is None:
        return None
    (n,) = struct.unpack(">Q", head)
    if n > MAX_FRAME:
        raise ValueError(f"frame of {n} bytes is over the {MAX_FRAME} limit")
    body = _read_exact(fd, n, deadline)
    if body is None:
        return None
    return decode(body)


# ------------------------------------------------------------ the judge
class SandboxRunner:
    """Runs probes in a sandboxed worker (the judge side).

    Args:
        folder: the staged submission (lesson files and answers).
        probe_timeout: seconds one probe may run.
        lesson_timeout: seconds all probes of one lesson may run together.
        memory_mb: the worker's address-space limit.
    """

    def __init__(
        self,
        folder: Path,
        probe_timeout: float = settings.PROBE_TIMEOUT,
        lesson_timeout: float = settings.LESSON_TIMEOUT,
        memory_mb: int = 8192,
    ):
        self.folder = Path(folder).resolve()
        self.probe_timeout = probe_timeout
        self.lesson_timeout = lesson_timeout
        self.memory_mb = memory_mb
        self.spent: dict[str, float] = {}
        self.proc: subprocess.Popen | None = None
        self.home: Path | None = None
        self.restarts = 0
        self.ready = False
        self.sandboxed = 0

    # -- worker life
    def start(self) -> None:
        """Spawn a worker now (it imports TensorFlow while the judge
        collects the checks); the first probe waits until it is ready."""
        if self.proc is None:
            self._spawn()

    def _start(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            self.close()
            self._spawn()
        if not self.ready:
            reply = _recv(self.proc.stdout.fileno(), time.monotonic() + 180)
            if not reply or reply.get("ready") is not True:
                tail = self._log_tail()
                self.close()
                raise RuntimeError(f"the grading worker did not start: {tail}")
            self.ready = True
            self.sandboxed = reply.get("landlock", 0)

    def _spawn(self) -> None:
        self.ready = False
        self.home = Path(tempfile.mkdtemp(prefix="m2t-worker-"))
        code = self.home / "code"
        for name in TRUSTED:
            if (ROOT / name).is_dir():
                shutil.copytree(
                    ROOT / name,
                    code / name,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
                )
        shutil.copy(ROOT / "curriculum.toml", code / "curriculum.toml")
        (self.home / "tmp").mkdir()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home / "tmp"),
            "TMPDIR": str(self.home / "tmp"),
            "KERAS_HOME": str(self.home / "tmp" / ".keras"),
            "TF_CPP_MIN_LOG_LEVEL": settings.TF_LOG_LEVEL,
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", ""),
            "LANG": "C.UTF-8",
        }
        env = {k: v for k, v in env.items() if v}
        self.log = open(self.home / "worker.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-I",
                "-c",
                "import sys; sys.path.insert(0, sys.argv[1]); "
                "from m2t.grading.sandbox import worker_main; worker_main()",
                str(code),
                str(self.folder),
                str(self.home / "tmp"),
                str(self.memory_mb),
                str(ROOT),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            cwd=self.home / "tmp",
            env=env,
            start_new_session=True,
        )

    def close(self) -> None:
        """Stop the worker and everything it started."""
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            self.log.close()
            self.proc = None
        if self.home is not None:
            shutil.rmtree(self.home, ignore_errors=True)
            self.home = None

    def _log_tail(self) -> str:
        try:
            text = (self.home / "worker.log").read_text(errors="replace")
        except (OSError, TypeError):
            return ""
        lines = [line for line in text.splitlines() if line.strip()]
        return lines[-1][:300] if lines else ""

    # -- probes
    def run(self, module: str, fn: Any, args: tuple, kwargs: dict) -> Any:
        from m2t.grading.probe import StudentError

        tag = module.split("_", 1)[0]
        left = self.lesson_timeout - self.spent.get(module, 0.0)
        if left <= 0:
            raise StudentError(
                f"{tag}: the lesson's time limit ({self.lesson_timeout:g} s) "
                "is used up"
            )
        self._start()
        request = {
            "grader": fn.__module__,
            "probe": fn.__qualname__,
            "module": module,
            "args": list(args),
            "kwargs": kwargs,
        }
        limit = min(self.probe_timeout, left)
        start = time.monotonic()
        try:
            _send(self.proc.stdin, request)
            reply = _recv(self.proc.stdout.fileno(), start + limit)
        except TimeoutError:
            self.spent[module] = self.spent.get(module, 0.0) + limit
            self._restart()
            raise StudentError(
                f"{tag}: {fn.__qualname__} timed out after {limit:g} s "
                "(an endless loop, or far too slow?)"
            ) from None
        except (BrokenPipeError, ValueError, struct.error, KeyError) as exc:
            reply = None
            detail = f" ({type(exc).__name__})"
        else:
            detail = ""
        finally:
            self.spent[module] = self.spent.get(module, 0.0) + (
                time.monotonic() - start
            )
        if not isinstance(reply, dict) or not (
            "ok" in reply or "failure" in reply
        ):
            code = None
            if self.proc is not None:
                # The pipe can close a moment before the process is reaped:
                # give a dying worker a short while to report its exit code.
                with contextlib.suppress(subprocess.TimeoutExpired):
                    code = self.proc.wait(timeout=2)
            tail = self._log_tail()
            self._restart()
            how = (
                f"exited with code {code}"
                if code is not None
                else "broke the protocol"
            )
            raise StudentError(
                f"{tag}: the grading process {how}{detail} while running "
                f"{fn.__qualname__}: your code must not exit, kill the "
                "process or write to its protocol; memory is limited to "
                f"{self.memory_mb} MB."
                + (f" Last output: {tail}" if tail else "")
            )
        if "failure" in reply:
            from m2t.grading.probe import NotStarted

            cls = (
                NotStarted
                if reply["failure"] == "not_started"
                else StudentError
            )
            raise cls(str(reply.get("message", "")))
        return reply["ok"]

    def _restart(self) -> None:
        self.restarts += 1
        self.close()


# ------------------------------------------------------------ the worker
def worker_main() -> None:
    """The worker's loop (runs in the sandboxed process)."""
    import resource

    code, folder, tmp, memory_mb, repo = sys.argv[1:6]
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # prints from student code go to the log, not the protocol
    limit = int(memory_mb) << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    import importlib

    import keras  # noqa: F401  (loaded before confinement: faster start)

    from m2t.grading import landlock
    from m2t.grading import probe as _probe

    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    prefixes |= {
        os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)
    }
    read = [
        *prefixes,
        code,
        folder,
        "/usr",
        "/lib",
        "/lib64",
        "/etc",
        "/proc",
        "/sys",
        "/dev",
    ]
    read = [p for p in read if not _contains(p, repo)]
    abi = landlock.restrict(read=read, write=[tmp, "/dev/null"])
    runner = _probe.InProcessRunner(Path(folder))
    _send(proto_out, {"ready": True, "landlock": abi})
    while True:
        request = _recv(proto_in.fileno())
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
        _send(proto_out, reply)


def _contains(path: str, repo: str) -> bool:
    """True when `path` is the repository or above it (reading it would
    expose the solutions and keys; the worker reads its copy of the trusted
    code instead)."""
    try:
        return Path(repo).resolve().is_relative_to(Path(path).resolve())
    except OSError:
        return True


# ------------------------------------------------------------- staging
def stage(submission: Path, modules: list[str], dest: Path) -> Path:
    """Copy only what is graded from a submission: `lNN_topic.py` files of
    known lessons and `answers.toml`, each at most 1 MB; everything else
    (tests, conftest.py, pytest.ini, graders) is ignored.

    `submission` is a folder holding the lesson files, or a student edition
    (or its clone) with a `lessons/` folder.
    """
    submission = Path(submission)
    if not submission.is_dir():
        raise ValueError(f"--submission {str(submission)!r}: no such folder")
    source = (
        submission / "lessons"
        if (submission / "lessons").is_dir()
        else submission
    )
    dest.mkdir(parents=True, exist_ok=True)
    for name in [f"{m}.py" for m in modules] + ["answers.toml"]:
        path = source / name
        if (
            path.is_file()
            and not path.is_symlink()
            and path.stat().st_size <= 1 << 20
        ):
            shutil.copyfile(path, dest / name)
    return dest
