"""Grading untrusted code: probes run in a confined worker process.

The judge (pytest with the instructor's graders) never imports student code.
Each probe call goes to a worker: a fresh Python process (spawned through
bubblewrap, never forked from a process that has TensorFlow loaded) that

* sees a trusted copy of `graders/`, `m2t/` and `m2t_data/` and the staged
  submission, and nothing else of the repository (no solutions, no keys);
* is confined by every layer of `m2t.grading.confine`: its own namespaces
  (no network, its own /proc and a /dev of null, zero and urandom, every
  descendant killed with it), an unprivileged uid, Landlock, and a seccomp
  filter that refuses sockets of every family; with limits on memory,
  processes, file size and temp space, and a wall-clock limit per probe;
* answers with plain arrays in a pickle-free format (JSON + .npy) whose
  size and nesting the judge bounds before it parses anything.

Each lesson gets a fresh worker (code run for one lesson never meets the
next lesson's checks); a spare worker imports TensorFlow while the current
one serves, so the switch costs little. A worker that times out, dies, or
breaks the protocol fails the check that was running, with a message saying
which and why; the time it and its replacement take is charged, once, to
its lesson's `--lesson-timeout`.
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
from m2t.grading import confine
from m2t.grading import staging

TRUSTED = ("graders", "m2t", "m2t_data")
MAX_FRAME = 256 << 20
"""The largest reply (arrays included) the judge reads."""
MAX_HEADER = 1 << 20
"""The largest JSON part of a reply (the arrays travel beside it)."""
MAX_DEPTH = 32
"""The deepest nesting of lists, tuples and dicts in a reply."""
MAX_ARRAYS = 4096
LOG_TAIL = 64 << 10
"""How much of the end of the worker's log the judge reads."""
READY_SECONDS = 180.0
"""How long a worker may take to start (import TensorFlow)."""

stage = staging.stage  # the CLI's name for it


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
    """The inverse of `encode`; never unpickles. Raises ValueError for a
    header over `MAX_HEADER`, nesting deeper than `MAX_DEPTH`, more than
    `MAX_ARRAYS` arrays or a malformed frame: the judge's memory and time
    stay bounded by the frame's size."""
    hlen, count = struct.unpack_from(">II", data, 0)
    if hlen > MAX_HEADER or hlen > len(data) - 8:
        raise ValueError(f"a reply header of {hlen} bytes (limit {MAX_HEADER})")
    if count > MAX_ARRAYS:
        raise ValueError(f"a reply of {count} arrays (limit {MAX_ARRAYS})")
    offset = 8
    raw = data[offset : offset + hlen]
    if _depth(raw) > MAX_DEPTH:
        raise ValueError(f"a reply nested deeper than {MAX_DEPTH}")
    header = json.loads(raw)
    offset += hlen
    arrays = []
    for _ in range(count):
        (n,) = struct.unpack_from(">Q", data, offset)
        offset += 8
        if n > len(data) - offset:
            raise ValueError("an array runs past the end of the reply")
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


def _depth(raw: bytes) -> int:
    """The deepest bracket nesting in JSON text `raw` (brackets inside
    strings do not count); linear in its length, no parsing."""
    text = raw.decode("utf-8", errors="replace")
    # Drop the strings (escaped quotes first), then count what is left.
    text = text.replace("\\\\", "").replace('\\"', "")
    depth = deepest = 0
    for i, part in enumerate(text.split('"')):
        if i % 2:
            continue
        for char in part:
            if char in "[{":
                depth += 1
                deepest = max(deepest, depth)
            elif char in "]}":
                depth -= 1
    return deepest


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
    """One frame from `fd`; None at end of file; TimeoutError past deadline;
    ValueError for a frame over `MAX_FRAME` or one `decode` refuses."""
    head = _read_exact(fd, 8, deadline)
    if head is None:
        return None
    (n,) = struct.unpack(">Q", head)
    if n > MAX_FRAME:
        raise ValueError(f"a reply of {n} bytes (limit {MAX_FRAME})")
    body = _read_exact(fd, n, deadline)
    if body is None:
        return None
    return decode(body)


# ------------------------------------------------------------ the judge
class SandboxError(RuntimeError):
    """The worker could not be confined as required: nothing is graded."""


def copy_trusted(dest: Path) -> Path:
    """Copy the trusted code the workers import (`TRUSTED`, the
    curriculum) to `dest`: what the grade started with, whatever changes in
    the repository meanwhile."""
    for name in TRUSTED:
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name,
                dest / name,
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
            )
    shutil.copy(ROOT / "curriculum.toml", dest / "curriculum.toml")
    return dest


class _Worker:
    """One confined worker process and its temporary folder; it reads the
    trusted code in `code` and the staged submission in `folder`."""

    def __init__(
        self, folder: Path, code: Path, memory_mb: int, weaker: set[str]
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
        }
        env = {k: v for k, v in env.items() if v}
        missing = confine.missing_layers()
        namespaces = "namespaces" not in missing
        drop = namespaces and confine.grader_is_root()
        uid = confine.free_uid() if drop else os.getuid()
        command = [
            sys.executable,
            "-I",
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]); "
            "from m2t.grading.sandbox import worker_main; worker_main()",
            str(code),
            str(folder),
            str(tmp),
            str(memory_mb),
            str(confine.process_limit(uid)),
            str(ROOT),
            str(uid) if drop else "keep",
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
                str(confine.bwrap_path()), ro=trees, tmp=str(tmp), drop=drop
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
        )
        self.weaker = weaker

    def wait_ready(self, seconds: float) -> None:
        """Wait for the worker's hello; check the layers it reports."""
        if self.ready:
            return
        try:
            reply = _recv(self.proc.stdout.fileno(), time.monotonic() + seconds)
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
        """Stop the worker and everything it started (its PID namespace
        ends with it; without namespaces, its process group)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
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


class SandboxRunner:
    """Runs probes in confined workers, a fresh one per lesson (the judge
    side).

    Args:
        folder: the staged submission (lesson files and answers).
        probe_timeout: seconds one probe may run.
        lesson_timeout: seconds all probes of one lesson may run together,
            worker restarts the lesson's code caused included.
        memory_mb: the worker's address-space limit.
        allow_weaker: grade even where this machine lacks a layer of
            `m2t.grading.confine` (the report says which).

    Raises:
        SandboxError: a layer is missing and `allow_weaker` is False.
    """

    def __init__(
        self,
        folder: Path,
        probe_timeout: float = 60.0,
        lesson_timeout: float = 600.0,
        memory_mb: int = 8192,
        allow_weaker: bool = False,
    ):
        self.folder = Path(folder).resolve()
        self.probe_timeout = probe_timeout
        self.lesson_timeout = lesson_timeout
        self.memory_mb = memory_mb
        missing = confine.missing_layers()
        if missing and not allow_weaker:
            raise SandboxError(describe_missing(missing))
        self.weaker = set(missing) if allow_weaker else set()
        self.home = Path(tempfile.mkdtemp(prefix="m2t-judge-"))
        self.code = copy_trusted(self.home / "code")
        self.refused = staging.refusals(self.folder)
        self.spent: dict[str, float] = {}
        self.probe_seconds: dict[str, float] = {}
        self.restarts: dict[str, int] = {}
        self.module: str | None = None
        self.worker: _Worker | None = None
        self.spare: _Worker | None = None

    def _new(self) -> _Worker:
        return _Worker(self.folder, self.code, self.memory_mb, self.weaker)

    def start(self) -> None:
        """Spawn the first worker now (it imports TensorFlow while the
        judge collects the checks)."""
        if self.spare is None:
            self.spare = self._new()

    def close(self) -> None:
        """Stop every worker and everything they started."""
        for worker in (self.worker, self.spare):
            if worker is not None:
                worker.close()
        self.worker = self.spare = None
        shutil.rmtree(self.home, ignore_errors=True)

    def _take_spare(self) -> _Worker:
        worker = self.spare if self.spare is not None else self._new()
        self.spare = None
        if worker.proc.poll() is not None:  # died while it waited
            worker.close()
            worker = self._new()
        return worker

    def _worker_for(self, module: str, seconds: float) -> _Worker:
        """The ready worker of `module`: a fresh one for a new lesson or
        after a failure (waiting at most `seconds`)."""
        if self.module != module and self.worker is not None:
            self.worker.close()
            self.worker = None
        self.module = module
        if self.worker is None or self.worker.proc.poll() is not None:
            if self.worker is not None:
                self.worker.close()
            self.worker = self._take_spare()
        try:
            self.worker.wait_ready(seconds)
        except BaseException:
            self.worker.close()
            self.worker = None
            raise
        if self.spare is None:  # the next lesson's, importing meanwhile
            self.spare = self._new()
        return self.worker

    # -- probes
    def run(self, module: str, fn: Any, args: tuple, kwargs: dict) -> Any:
        from m2t.grading.probe import StudentError

        tag = module.split("_", 1)[0]
        name = f"{module}.py"
        if name in self.refused:
            raise StudentError(f"{tag}: not graded: {self.refused[name]}")
        left = self.lesson_timeout - self.spent.get(module, 0.0)
        if left <= 0:
            probes = self.probe_seconds.get(module, 0.0)
            raise StudentError(
                f"{tag}: the lesson's time limit ({self.lesson_timeout:g} s) "
                f"is used up ({probes:.1f} s in probes, "
                f"{self.spent[module] - probes:.1f} s restarting the grading "
                f"process {self.restarts.get(module, 0)} times)"
            )
        start = time.monotonic()
        restarted = self.restarts.get(module, 0) > 0
        try:
            # The first worker of a lesson is the judge's cost; a restart
            # the lesson's code caused is the lesson's.
            try:
                worker = self._worker_for(
                    module,
                    min(READY_SECONDS, left) if restarted else READY_SECONDS,
                )
            except SandboxError:
                raise
            except RuntimeError:
                if not restarted:
                    raise
                raise StudentError(
                    f"{tag}: the lesson's time limit ({self.lesson_timeout:g}"
                    " s) ran out while the grading process restarted"
                ) from None
            if not restarted:
                start = time.monotonic()
            return self._call(worker, module, tag, fn, args, kwargs, left)
        finally:
            self.spent[module] = self.spent.get(module, 0.0) + (
                time.monotonic() - start
            )

    def _call(self, worker, module, tag, fn, args, kwargs, left) -> Any:
        from m2t.grading.probe import NotStarted
        from m2t.grading.probe import StudentError

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
            _send(worker.proc.stdin, request)
            reply = _recv(worker.proc.stdout.fileno(), start + limit)
        except TimeoutError:
            self._failed(module)
            raise StudentError(
                f"{tag}: {fn.__qualname__} timed out after {limit:g} s "
                "(an endless loop, or far too slow?)"
            ) from None
        except (BrokenPipeError, ValueError, struct.error, KeyError) as exc:
            reply = None
            detail = f" ({type(exc).__name__}: {str(exc)[:100]})"
        else:
            detail = ""
        finally:
            self.probe_seconds[module] = self.probe_seconds.get(module, 0.0) + (
                time.monotonic() - start
            )
        if not isinstance(reply, dict) or not (
            "ok" in reply or "failure" in reply
        ):
            code = None
            # The pipe can close a moment before the process is reaped:
            # give a dying worker a short while to report its exit code.
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = worker.proc.wait(timeout=2)
            tail = worker.log_tail()
            self._failed(module)
            how = (
                f"exited with code {_exit_code(code)}"
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
            cls = (
                NotStarted
                if reply["failure"] == "not_started"
                else StudentError
            )
            raise cls(str(reply.get("message", "")))
        return reply["ok"]

    def _failed(self, module: str) -> None:
        """The worker of `module` is lost: stop it (the next probe gets a
        fresh one, its start charged to the lesson)."""
        self.restarts[module] = self.restarts.get(module, 0) + 1
        if self.worker is not None:
            self.worker.close()
            self.worker = None

    @property
    def layers(self) -> dict[str, Any]:
        """What the last worker reported about its confinement."""
        for worker in (self.worker, self.spare):
            if worker is not None and worker.facts:
                return worker.facts
        return {}


def _exit_code(code: int) -> str:
    """A worker's exit: through bubblewrap a signal arrives as 128 + N."""
    if code < 0 or code > 128:
        number = -code if code < 0 else code - 128
        with contextlib.suppress(ValueError):
            return f"{code} ({signal.Signals(number).name})"
    return str(code)


def describe_missing(missing: dict[str, str]) -> str:
    """One paragraph: which layers of the sandbox this machine lacks, why,
    and how to grade anyway."""
    parts = "; ".join(f"{layer}: {why}" for layer, why in missing.items())
    return (
        f"the sandbox lacks {len(missing)} of its layers here ({parts}); "
        "untrusted code is not graded without them (pass "
        "--allow-weaker-sandbox to grade anyway, and the report says so)"
    )


# ------------------------------------------------------------ the worker
def worker_main() -> None:
    """The worker's loop (runs in the confined process)."""
    code, folder, tmp, memory_mb, nproc, repo, drop, skip = sys.argv[1:9]
    if drop != "keep":  # root inside bubblewrap: a uid of its own first
        confine.drop_root(int(drop))
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # prints from student code go to the log, not the protocol
    confine.set_limits(int(memory_mb) << 20, int(nproc))
    import importlib

    import keras  # noqa: F401  (loaded before confinement: faster start)

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
    runner = _probe.InProcessRunner(Path(folder))
    facts = confine.layers_in_force(abi, seccomp)
    _send(proto_out, {"ready": True, "layers": facts})
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
