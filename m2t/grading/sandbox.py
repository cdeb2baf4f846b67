"""Grading untrusted code: probes run in a confined worker process.

This module is the judge's side, `SandboxRunner`: which worker serves which
lesson, the time limits and what a lost worker costs. The worker process
and its confinement are in `m2t.grading.worker`, the frames they exchange
in `m2t.grading.frames`, the strip of the code it imports in
`m2t.grading.strip`.

The judge (pytest with the instructor's graders) never imports student code.
Each probe call goes to a worker: a fresh Python process (spawned through
bubblewrap, never forked from a process that has TensorFlow loaded) that

* sees a trusted copy of `graders/`, `m2t/` and `m2t_data/` stripped of
  every judge-side reference (`m2t.grading.strip`), and the staged
  submission: nothing else of the repository (no solutions, no keys, no
  reference that computes what a check expects);
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
import shutil
import signal
import struct
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from m2t import ROOT
from m2t import i18n
from m2t.grading import confine
from m2t.grading import noautodiff
from m2t.grading import staging
from m2t.grading import strip
from m2t.grading.frames import recv
from m2t.grading.frames import send
from m2t.grading.worker import SandboxError
from m2t.grading.worker import Worker

__all__ = ["SandboxError", "SandboxRunner", "copy_trusted", "stage"]

TRUSTED = ("graders", "m2t", "m2t_data")
READY_SECONDS = 180.0
"""How long a worker may take to start (import TensorFlow)."""

stage = staging.stage  # the CLI's name for it


def copy_trusted(dest: Path) -> Path:
    """Copy the trusted code the workers import (`TRUSTED`, the
    curriculum) to `dest`, stripped of every judge-side reference
    (`m2t.grading.strip`): what the grade started with, whatever changes in
    the repository meanwhile."""
    strip.stripped_copy(ROOT, dest, TRUSTED)
    shutil.copy(ROOT / "curriculum.toml", dest / "curriculum.toml")
    # readable by a worker of another uid, writable by none, whatever
    # modes the repository has (the Gradescope bundle locks its own)
    for path in [dest, *dest.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)
    return dest


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
        code: the trusted copy the workers import, made when the grade
            this one runs inside started (a capstone's parts are graded
            inside the capstone's grade), left in place at `close`; None
            copies it now (`copy_trusted`), removed at `close`. Either
            way a grade's workers import the code as it was at its start.

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
        code: Path | None = None,
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
        self.home.chmod(0o711)  # a worker of another uid reaches code/
        self.code = (
            copy_trusted(self.home / "code") if code is None else Path(code)
        )
        self.refused = staging.refusals(self.folder)
        self.missing = staging.missing(self.folder)
        self.spent: dict[str, float] = {}
        self.probe_seconds: dict[str, float] = {}
        self.restarts: dict[str, int] = {}
        self.module: str | None = None
        self.worker: Worker | None = None
        self.spare: Worker | None = None

    def _new(self) -> Worker:
        return Worker(self.folder, self.code, self.memory_mb, self.weaker)

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

    def _take_spare(self) -> Worker:
        worker = self.spare if self.spare is not None else self._new()
        self.spare = None
        if worker.proc.poll() is not None:  # died while it waited
            worker.close()
            worker = self._new()
        return worker

    def _worker_for(self, module: str, seconds: float) -> Worker:
        """The ready worker of `module`: a fresh one for a new lesson or
        after a failure (waiting at most `seconds`)."""
        if self.module != module and self.worker is not None:
            self.worker.close()
            self.worker = None
        self.module = module
        if self.worker is None or self.worker.proc.poll() is not None:
            if self.worker is not None:
                self.worker.close()
            self.worker = (
                Worker(
                    self.folder, self.code, self.memory_mb, self.weaker, True
                )
                if noautodiff.is_by_hand(module)  # one never given TensorFlow
                else self._take_spare()
            )
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
            why = self.refused[name]
            raise StudentError(i18n.text("notes.refused", tag=tag, why=why))
        if name in self.missing:
            where = self.missing[name]
            raise StudentError(
                i18n.text("notes.missing", tag=tag, name=name, where=where)
            )
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
            send(worker.proc.stdin, request)
            reply = recv(worker.proc.stdout.fileno(), start + limit)
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
