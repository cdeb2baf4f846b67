"""`m2t watch` in a real terminal: a pseudo-terminal is its stdin, stdout
and stderr (and its controlling terminal, so Ctrl-C is a typed ^C), in a
scratch copy of the repository. The student saves a shape error after the
first grade, then a syntax error, then two saves 0.5 s apart (the second
lands while the first is being graded), the last one the fix."""

import fcntl
import json
import os
import pty
import re
import signal
import subprocess
import sys
import termios
import threading
import time

from m2t import ROOT
from m2t import curriculum
from tests.test_student_loop import ENV
from tests.test_student_loop import L16
from tests.test_student_loop import repo  # noqa: F401  (the fixture)

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
COURSE = list(curriculum.graded())
NEXT = COURSE[COURSE.index(L16) + 1]  # where watch goes once l16 passes


class Terminal:
    """The master side of a pty: everything the program wrote, in order,
    with escape sequences removed; `until` reads forward from the last
    match."""

    def __init__(self, fd: int):
        self.fd = fd
        self.text = ""
        self.pos = 0
        self.closed = False
        self._lock = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError:  # EIO: the program closed the terminal
                data = b""
            with self._lock:
                if not data:
                    self.closed = True
                else:
                    chunk = data.decode("utf-8", "replace")
                    self.text += ANSI.sub("", chunk.replace("\r", ""))
                self._lock.notify_all()
            if not data:
                return

    def until(self, pattern: str, timeout: float = 300) -> str:
        """The text from the last match up to and including the next line
        matching `pattern` (a regular expression)."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern + r"[^\n]*\n")
        with self._lock:
            while True:
                found = regex.search(self.text, self.pos)
                if found:
                    seen = self.text[self.pos : found.end()]
                    self.pos = found.end()
                    return seen
                left = deadline - time.monotonic()
                if self.closed or left <= 0:
                    why = "watch ended" if self.closed else "timed out"
                    raise AssertionError(
                        f"{why} before {pattern!r}; after the last match:\n"
                        + self.text[self.pos :]
                    )
                self._lock.wait(min(left, 1.0))

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())


def _controlling_terminal():  # in the child, after setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    # a pytest-xdist worker may ignore SIGINT, and Python keeps an ignored
    # SIGINT ignored: the typed ^C would never reach the watch
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_watch_in_a_terminal_survives_saves_errors_and_the_fix(repo):  # noqa: F811
    path = repo / "lessons" / f"{L16.module}.py"
    solution = (ROOT / "solutions" / f"{L16.module}.py").read_text()
    right = "ops.matmul(queries, ops.swapaxes(keys, -1, -2))"
    assert right in solution
    shape_error = solution.replace(
        right, "ops.matmul(queries, ops.transpose(keys))"
    )
    syntax_error = solution.replace(
        "def masked_softmax(", "def masked_softmax((", 1
    )
    # importing this version takes 2 s: the next save lands mid-grade
    slow_and_wrong = "import time\ntime.sleep(2)\n" + solution.replace(
        right, "keys", 1
    )
    env = {k: v for k, v in ENV.items() if k != "M2T_NO_CLEAR"}
    env["TERM"] = "xterm"
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "m2t", "watch", "16"],
        cwd=repo,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        preexec_fn=_controlling_terminal,
    )
    os.close(slave)
    screen = Terminal(master)
    try:
        first = screen.until(r"Watching lessons/")
        assert (
            "[todo] l16 masked_softmax: not started (TODO at "
            "lessons/l16_attention_scoring.py:" in first
        ), first

        path.write_text(shape_error)  # a shape error after a first grade
        graded = screen.until(r"Watching lessons/")
        assert "In[0] and In[1] must have compatible batch dimensions" in (
            graded
        ), graded
        assert "[2,3,8] vs. [8,5,2]" in graded, graded
        assert "lessons/l16_attention_scoring.py:" in graded
        assert "Exception encountered when calling" not in graded, graded

        path.write_text(syntax_error)
        graded = screen.until(r"Watching lessons/")
        line = 1 + syntax_error.splitlines().index(
            next(x for x in syntax_error.splitlines() if "((" in x)
        )
        assert (
            f"l16: syntax error at lessons/l16_attention_scoring.py:{line}"
            in graded
        ), graded

        path.write_text(slow_and_wrong)  # two saves 0.5 s apart
        time.sleep(0.5)
        path.write_text(solution)
        graded = screen.until(r"ok  l16 passes") + screen.until("Watching")
        assert "(saved again: regrading)" in graded, graded
        assert graded.count("Watching") == 1, graded  # straight to the regrade
        assert re.search(r"ok  l16 passes: (\d+)/\1 checks", graded), graded
        assert f"next: {NEXT.tag}" in graded and f"== {NEXT.tag} " in graded
        assert proc.poll() is None, "watch ended"

        screen.type("\x03")  # Ctrl-C, typed
        screen.until(r"stopped; `m2t progress` shows where you are\.")
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert "Traceback" not in screen.text, screen.text
    state = json.loads((repo / ".m2t" / "state.json").read_text())
    assert state[L16.module]["status"] == "passed", state
    assert state[L16.module]["passed"] == state[L16.module]["checks"] > 0
    assert state[NEXT.module]["status"] == "not_started", state
