"""What the watch shows while one grade runs (`Live`): the first failing
check the moment it is known, one naming a catalogued mistake before one
that names none (after a pass the quickest checks run first, and those
are often gradient counts), and a check that runs long (a capstone's
training) every few seconds, with the capstone's own progress lines
(`TerminalLines`)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

from m2t.grading import runner as grading
from m2t.grading.reports import clean
from m2t.i18n import text

HOLD_S = 3.0
"""A failing check that names no mistake waits at most this long, unshown,
for one that names a catalogued mistake (once a lesson has passed its
quickest checks run first, often a gradient count that names none)."""

LONG_S = 5.0
"""A check still running after this many seconds says so (a capstone
trains for minutes: the watch must not look frozen) ..."""

TICK_S = 15.0
"""... and again every this many seconds until it ends."""


class TerminalLines:
    """Stands for `sys.__stderr__` while the watch grades: a terminal,
    whose every line goes to `say`. A capstone's grader writes its progress
    there where a person watches (the cell it trains, then the held-out
    perplexity reached against its target), and in the watch's process
    descriptor 2 is pytest's capture file or /dev/null, never a terminal."""

    def __init__(self, say: Callable[[str], None], real):
        self.say = say
        self.real = real
        self.encoding = getattr(real, "encoding", None) or "utf-8"
        self._partial = ""

    def isatty(self) -> bool:
        return True

    def write(self, data: str) -> int:
        *lines, self._partial = (self._partial + data).split("\n")
        for line in lines:
            self.say(f"  {clean(line)}")
        return len(data)

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return self.real.fileno()


class Live:
    """pytest plugin of one grade in the watch, and its `on_check`: which
    failing check is shown, and word of a check that runs long.

    The first failing check that names a catalogued mistake is shown the
    moment it is known. One that names none waits for it, unshown, while
    the lesson has catalogued mistakes: it is shown at the end of the run,
    or before the next check starts when that check's cost when it last
    passed (`costs`; unknown counts as long) would make it wait past
    `hold_s`. Only one failing check is shown, as before.

    A check still running after `long_s` says so every `tick_s` seconds
    (its seconds so far, and what it took when it last passed), and once
    it has passed says that too: a capstone's training shows it moves;
    while the run lasts, what a grader writes to the terminal for a person
    watching (`sys.__stderr__`, `TerminalLines`) is said too.

    Args:
        show: prints a failing check (the check, its seconds into the run).
        say: prints one line (from a timer thread too).
        costs: {check node id: its seconds when it last passed}.
    """

    def __init__(
        self,
        show: Callable[[grading.Check, float], None],
        say: Callable[[str], None],
        costs: dict[str, float],
        hold_s: float | None = None,
        long_s: float | None = None,
        tick_s: float | None = None,
    ):
        self.show = show
        self.say = say
        self.costs = costs
        self.hold_s = HOLD_S if hold_s is None else hold_s
        self.long_s = LONG_S if long_s is None else long_s
        self.tick_s = TICK_S if tick_s is None else tick_s
        self.catalogued = False
        self.shown = False
        self.start = time.perf_counter()
        self.held: tuple[grading.Check, float, float] | None = None
        self.started: dict[str, float] = {}
        self.announced: set[str] = set()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._stderr = sys.__stderr__

    def pytest_sessionstart(self, session) -> None:
        self._stderr = sys.__stderr__
        sys.__stderr__ = TerminalLines(self.say, self._stderr)

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        self._restore()

    def _restore(self) -> None:
        if isinstance(sys.__stderr__, TerminalLines):
            sys.__stderr__ = self._stderr

    def pytest_collection_modifyitems(self, items) -> None:
        self.catalogued = any(
            getattr(getattr(item, "module", None), "MISTAKES", ())
            for item in items
        )

    def on_check(self, check: grading.Check) -> None:
        now = time.perf_counter()
        with self._lock:
            if check.nodeid in self.started:
                self._stop.set()  # its timer says no more
            long = check.nodeid in self.announced
        if check.status != "passed" and not self.shown:
            if check.mistake or not self.catalogued:
                self._show(check, now - self.start)
                return  # its own line says it has ended
            if self.held is None:
                self.held = (check, now - self.start, now)
        if long:  # the end of a long check is news, whatever it says
            ran = now - self.started.get(check.nodeid, now)
            self.say(
                text(
                    "watch.long_done",
                    mark=text(f"mark.{check.status}"),
                    name=clean(check.name),
                    seconds=f"{ran:.1f}",
                )
            )

    def pytest_runtest_logstart(self, nodeid, location) -> None:
        now = time.perf_counter()
        if self.held is not None and not self.shown:
            waited = now - self.held[2]
            if waited + self.costs.get(nodeid, float("inf")) > self.hold_s:
                self.flush()
        self._stop.set()  # the previous check's timer, if any
        self._stop = stop = threading.Event()
        self.started[nodeid] = now
        threading.Thread(
            target=self._tick, args=(nodeid, now, stop), daemon=True
        ).start()

    def pytest_runtest_logfinish(self, nodeid, location) -> None:
        self._stop.set()

    def _tick(self, nodeid: str, started: float, stop: threading.Event):
        wait = self.long_s
        while not stop.wait(wait):
            last = self.costs.get(nodeid)
            line = text(
                "watch.running",
                name=clean(nodeid.partition("::")[2]),
                seconds=f"{time.perf_counter() - started:.0f}",
                last=text("watch.last_passed", seconds=f"{last:.0f}")
                if last is not None
                else "",
            )
            with self._lock:  # never after the line saying it has ended
                if stop.is_set():
                    return
                self.announced.add(nodeid)
                self.say(line)
            wait = self.tick_s

    def flush(self) -> None:
        """Show the check held back, if one is and none was shown."""
        if self.held is not None and not self.shown:
            check, seconds, _ = self.held
            self._show(check, seconds)

    def finish(self) -> None:
        """The run has ended (or stopped): no timer keeps ticking, and
        `sys.__stderr__` is itself again."""
        self._stop.set()
        self._restore()

    def _show(self, check: grading.Check, seconds: float) -> None:
        self.shown = True
        self.held = None
        self.show(check, seconds)
