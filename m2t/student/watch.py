"""`m2t watch`: regrade the lesson you are editing every time you save it.

TensorFlow is imported once. A save re-executes only the edited module
(`m2t.grading.impl` reloads a file whose mtime changed) and reruns its
grader in this process. The first failing check is printed the moment it
is known, one naming a catalogued mistake first (`m2t.student.live`); a
check not started names the file's next TODO, the one `m2t hint` is for;
a check that runs long (a capstone's training) says so every few seconds.
A new save during a run stops that run and starts the next. When a lesson
passes, the next unfinished one is graded and becomes current.

Saves are noticed by file-system events when `watchdog` is installed and
by polling modification times otherwise; polling also runs beside the
events as a backstop (some editors, network drives and containers never
send them).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from m2t import ROOT
from m2t import curriculum
from m2t import i18n
from m2t import settings
from m2t.grading import runner as grading
from m2t.grading.order import load_costs
from m2t.grading.reports import clean
from m2t.i18n import text
from m2t.student import hints
from m2t.student import progress
from m2t.student.live import Live

BACKSTOP_S = 1.0
"""With file events, still poll this often in case none arrive."""

SETTLE_S = 0.05
"""Editors write a file in several steps: wait this long for it to settle."""


class Changes:
    """The lesson files in a folder, and which of them changed."""

    def __init__(
        self, folder: Path, interval: float = 0.25, events: bool = True
    ):
        self.folder = folder
        self.interval = interval
        self.seen = self._scan()
        self._wake = threading.Event()
        self._observer = _observe(folder, self._wake) if events else None

    @property
    def using_events(self) -> bool:
        return self._observer is not None

    def _scan(self) -> dict[str, tuple[int, int]]:
        stamps = {}
        for path in self.folder.glob(settings.LESSON_GLOB):
            try:
                st = path.stat()
            except OSError:
                continue  # deleted between glob and stat
            stamps[path.name] = (st.st_mtime_ns, st.st_size)
        return stamps

    def pending(self) -> bool:
        """Has a file changed since the last `poll` (without consuming)?"""
        return self._scan() != self.seen

    def poll(self) -> list[Path]:
        """The files changed since the last call, most recent first."""
        now = self._scan()
        if now == self.seen:
            return []
        time.sleep(SETTLE_S)
        now = self._scan()
        changed = [n for n, stamp in now.items() if self.seen.get(n) != stamp]
        self.seen = now
        changed.sort(key=lambda n: now[n][0], reverse=True)
        return [self.folder / n for n in changed]

    def wait(self, timeout: float | None = None) -> list[Path]:
        """Block until a file changes (or `timeout` seconds pass)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._observer is not None:
                self._wake.wait(BACKSTOP_S)
                self._wake.clear()
            else:
                time.sleep(self.interval)
            changed = self.poll()
            if changed or (deadline and time.monotonic() > deadline):
                return changed

    def close(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer = None


def _observe(folder: Path, wake: threading.Event):
    """A watchdog observer that sets `wake` on any event in `folder`, or
    None when watchdog is not installed or cannot watch here."""
    try:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
    except ImportError:
        return None

    class _Wake(FileSystemEventHandler):
        def on_any_event(self, event) -> None:
            wake.set()

    observer = Observer()
    observer.daemon = True
    try:
        observer.schedule(_Wake(), str(folder), recursive=False)
        observer.start()
    except (OSError, RuntimeError):
        return None
    return observer


class _StopOnSave:
    """pytest plugin: end the run after the current check when a lesson
    file was saved again, or when the student pressed Ctrl-C."""

    def __init__(self, changes: Changes):
        self.changes = changes
        self.session = None
        self.saved_again = False
        self.interrupted = False

    def pytest_sessionstart(self, session) -> None:
        self.session = session

    def pytest_runtest_logfinish(self, nodeid, location) -> None:
        if self.session is not None and self.changes.pending():
            self.saved_again = True
            self.session.shouldstop = "a lesson file was saved again"

    def pytest_keyboard_interrupt(self, excinfo) -> None:
        # pytest ends a run we stopped by raising `Session.Interrupted`,
        # a KeyboardInterrupt: only a real one is the student's Ctrl-C.
        import pytest

        if not isinstance(excinfo.value, pytest.Session.Interrupted):
            self.interrupted = True


class Watch:
    """The watch loop's state: which lessons, which is current, which pass.

    Args:
        folder: the student's lesson files (`lessons/` or an `--impl` DIR).
        impl: what `grading.grade` grades (`lessons` saves the state).
        out: where to print (a function like `print`; by default the
            `sys.stdout` of when the watch started).
        clear: clear the screen before each grade (on a terminal).
    """

    def __init__(
        self,
        folder: Path,
        impl: str,
        changes: Changes,
        out: Callable[..., None] | None = None,
        clear: bool = False,
        timeout: float = settings.CHECK_TIMEOUT,
    ):
        self.folder = folder
        self.impl = impl
        self.changes = changes
        self.out = out or _printer(sys.stdout)
        self.clear = clear
        self.timeout = timeout
        self.lessons = [
            x
            for x in curriculum.lessons()
            if x.grader.exists() and (folder / f"{x.module}.py").exists()
        ]
        state = grading.load_state() if impl == "lessons" else {}
        self.done = {
            x.module
            for x in self.lessons
            if progress.status(x, folder, state).kind == "done"
        }
        self.grades = 0

    def first_unfinished(
        self, after: curriculum.Lesson | None = None
    ) -> curriculum.Lesson | None:
        """The next lesson not done, in course order (after `after`,
        wrapping around), or None when every lesson passes."""
        order = self.lessons
        if after in order:
            i = order.index(after)
            order = order[i + 1 :] + order[: i + 1]
        return next((x for x in order if x.module not in self.done), None)

    def lesson_of(self, path: Path) -> curriculum.Lesson | None:
        return next(
            (x for x in self.lessons if f"{x.module}.py" == path.name), None
        )

    def grade(self, lesson: curriculum.Lesson) -> grading.LessonResult | None:
        """Grade one lesson, streaming its first failing check; returns the
        result, or None when the run was cut short by another save."""
        if self.clear:
            self.out("\033[2J\033[H", end="")
        shown = self.folder / f"{lesson.module}.py"
        if shown.is_relative_to(ROOT):
            shown = shown.relative_to(ROOT)
        self.out(
            "\n"
            + text(
                "watch.heading",
                tag=lesson.tag,
                title=i18n.title(lesson),
                path=shown,
            )
        )
        start = time.perf_counter()

        def show(check: grading.Check, seconds: float) -> None:
            todo = None
            if check.status == "not_started":
                todo = _next_todo(lesson, self.folder, shown)
            self.out(_describe(check, seconds, todo))

        live = Live(show, self.out, load_costs())
        stop = _StopOnSave(self.changes)
        grading.fresh_keras()
        try:
            (result,) = grading.grade(
                [lesson],
                impl=self.impl,
                timeout=self.timeout,
                on_check=live.on_check,
                plugins=[stop, live],
            )
        except RuntimeError as exc:  # the grader itself could not run
            self.out(text("watch.grader_error", error=clean(exc)))
            self.grades += 1
            return grading.LessonResult(lesson, [])
        finally:
            live.finish()
        seconds = time.perf_counter() - start
        if stop.interrupted:
            raise KeyboardInterrupt
        if stop.saved_again:
            self.out(text("watch.saved_again"))
            return None
        live.flush()  # no check named a mistake: the first that failed
        self.grades += 1
        grading.save_state([result], self.impl)
        figures = {
            "tag": lesson.tag,
            "total": len(result.checks),
            "score": f"{result.score:g}",
            "most": f"{result.max_score:g}",
            "seconds": f"{seconds:.1f}",
        }
        if result.status == "passed":
            self.done.add(lesson.module)
            self.out(text("watch.passes", **figures))
        else:
            self.done.discard(lesson.module)
            self.out(text("watch.score", passed=result.passed, **figures))
            nxt = hints.upcoming(lesson, self.folder)
            if nxt is not None:
                self.out(
                    text(
                        "watch.stuck",
                        arg=lesson.arg,
                        rung=nxt.rung,
                        rungs=nxt.rungs,
                        what=nxt.what,
                    )
                )
        return result

    def footer(self) -> None:
        """The bar and the count `m2t progress` gives (every lesson of the
        course and the question list, whatever files the folder holds),
        then where the watch looks for saves."""
        state = grading.load_state() if self.impl == "lessons" else {}
        rows = progress.statuses(self.folder, state)
        done = sum(
            x.module in self.done or (x.is_question_list and s.kind == "done")
            for x, s in rows
        )
        n = len(rows)
        width = 30
        filled = round(width * done / n)
        where = self.folder
        if where.is_relative_to(ROOT):
            where = where.relative_to(ROOT)
        how = (
            text("watch.file_events")
            if self.changes.using_events
            else text("watch.polling", interval=f"{self.changes.interval:g}")
        )
        footer = text(
            "watch.footer",
            bar="#" * filled + "-" * (width - filled),
            done=done,
            total=n,
            counted=progress.counted(rows),
            folder=where,
            how=how,
        )
        self.out(f"\n{footer}")

    def run(
        self,
        start: curriculum.Lesson | None = None,
        max_grades: int | None = None,
    ) -> int:
        """Grade, then regrade on every save until Ctrl-C (or until
        `max_grades` completed grades, for tests)."""
        if not self.lessons:
            self.out(text("watch.no_lessons", folder=self.folder))
            return 1
        if start is not None and start not in self.lessons:
            raise ValueError(text("watch.no_start", tag=start.tag))
        current = start or self.first_unfinished()
        if current is None:
            self.out(text("watch.all_pass"))
            current = self.lessons[-1]

        def limit() -> bool:
            return max_grades is not None and self.grades >= max_grades

        pending = [current]
        while True:
            while pending and not limit():
                lesson = pending.pop(0)
                result = self.grade(lesson)
                if result is None:  # saved again mid-run: grade that save
                    pending = self._edited(self.changes.poll()) or [lesson]
                    continue
                if result.status == "passed":
                    following = self.first_unfinished(after=lesson)
                    if following is None:
                        self.out("\n" + text("watch.all_pass"))
                    elif following is not lesson:
                        self.out(
                            "\n"
                            + text(
                                "watch.next",
                                tag=following.tag,
                                title=i18n.title(following),
                            )
                        )
                        pending = [following]
            if limit():
                return 0
            self.footer()
            pending = []
            while not pending:
                pending = self._edited(self.changes.wait())

    def _edited(self, changed: list[Path]) -> list[curriculum.Lesson]:
        """The lesson of the most recent save among `changed` (as a list:
        empty when none of them is a lesson file)."""
        edited = [self.lesson_of(p) for p in changed]
        return [x for x in edited if x is not None][:1]


def _printer(stream) -> Callable[..., None]:
    """`print` to `stream`, flushed: bound now, because the grading runner
    redirects `sys.stdout` while the checks run; and through a copy of its
    file descriptor where it has one, because pytest's capture points
    descriptor 1 at a file while a check runs, and what a long check says
    (`Live`) must reach the terminal then."""
    try:
        fd = os.dup(stream.fileno())
    except (AttributeError, OSError, ValueError):  # no descriptor
        target = stream
    else:
        target = os.fdopen(
            fd,
            "w",
            encoding=getattr(stream, "encoding", None) or "utf-8",
            errors=getattr(stream, "errors", None) or "strict",
            buffering=1,
        )

    def out(*args, **kwargs) -> None:
        print(*args, **kwargs, file=target, flush=True)

    return out


def _next_todo(
    lesson: curriculum.Lesson, folder: Path, shown: Path
) -> str | None:
    """ "l16 AdditiveAttention.call: not started (TODO at FILE:LINE)" for
    the first TODO of the file still to write, the one `m2t hint` is for
    (a grader may check the TODOs in another order); None when no
    `raise NotImplementedError` of the lesson is left to place."""
    todos = hints.todo_lines(lesson, folder)
    if not todos:
        return None
    where, line = next(iter(todos.items()))
    return text(
        "probe.not_started", tag=lesson.tag, what=where, where=f"{shown}:{line}"
    )


def _describe(
    check: grading.Check, seconds: float, todo: str | None = None
) -> str:
    """The watch's line for a failing check; `todo`, for a check not
    started, names the TODO to write next instead of the check's own."""
    mark = text(f"mark.{check.status}")
    message = clean(check.message)  # the student's output: no controls
    lines = message.splitlines() or [text(f"status.{check.status}")]
    if check.status == "not_started":
        return f"  [{mark}] {clean(todo) if todo else lines[0]}"
    return text(
        "watch.check",
        mark=mark,
        name=clean(check.name),
        seconds=f"{seconds:.1f}",
        body="\n      ".join(lines[:8]),
    )


def main(
    start: str | None = None,
    impl: str = "lessons",
    interval: float = 0.25,
    events: bool = True,
    max_grades: int | None = None,
    timeout: float = settings.CHECK_TIMEOUT,
) -> int:
    """`m2t watch`: see the module docstring."""
    from m2t.grading import impl as _impl

    folder = _impl.resolve(impl)
    lesson = curriculum.find(start) if start else None
    changes = Changes(folder, interval=interval, events=events)
    clear = sys.stdout.isatty() and not os.environ.get("M2T_NO_CLEAR")

    watch = Watch(folder, impl, changes, clear=clear, timeout=timeout)
    try:
        return watch.run(lesson, max_grades=max_grades)
    except KeyboardInterrupt:
        watch.out("\n" + text("watch.stopped"))
        return 0
    finally:
        changes.close()
