"""A long check in `m2t watch` (a capstone trains for minutes) shows that
it moves: its name and seconds so far every few seconds, what it took when
it last passed, and its end; a quick check says nothing. And the words
reach the terminal while the check runs, though pytest's capture points
file descriptor 1 at a file for that time."""

from __future__ import annotations

import os
import re
import sys
import time

from m2t.grading import runner as grading
from m2t.student import watch
from m2t.student.live import Live

TRAIN = "graders/test_l23_capstone_language_model.py::test_trains[gru]"


def _check(nodeid: str, status: str = "passed") -> grading.Check:
    name = nodeid.partition("::")[2]
    return grading.Check("l23", name, nodeid, 4.0, status, "", 0.0)


def test_a_long_check_says_it_runs_and_when_it_ends():
    said: list[str] = []
    live = Live(
        show=lambda check, seconds: said.append(f"shown {check.name}"),
        say=said.append,
        costs={TRAIN: 77.2},
        long_s=0.05,
        tick_s=0.05,
    )
    quick = "graders/test_l23_capstone_language_model.py::test_shapes"
    live.pytest_runtest_logstart(quick, ("", 0, ""))
    live.on_check(_check(quick))
    live.pytest_runtest_logfinish(quick, ("", 0, ""))
    time.sleep(0.2)
    assert said == []  # a quick check: not a word

    live.pytest_runtest_logstart(TRAIN, ("", 0, ""))
    time.sleep(0.5)
    live.on_check(_check(TRAIN))
    live.pytest_runtest_logfinish(TRAIN, ("", 0, ""))
    running = [x for x in said if "running" in x]
    assert len(running) >= 2, said  # again and again while it runs
    assert re.search(r"test_trains\[gru\]: running, \d+ s so far", running[0])
    assert "(it took 77 s when it last passed)" in running[0], said
    assert re.fullmatch(r"  \[ok\] test_trains\[gru\] \(0\.\ds\)", said[-1])
    count = len(said)
    time.sleep(0.2)
    live.finish()
    assert len(said) == count, said  # no word once it has ended


def test_the_watch_speaks_past_pytests_capture(tmp_path):
    """The watch's printer writes to its own copy of the terminal's file
    descriptor: pointing descriptor 1 (here: a pipe's) at a file, as
    pytest does while a check runs, does not swallow what it prints."""
    read, write = os.pipe()
    stream = os.fdopen(write, "w")
    out = watch._printer(stream)
    captured = tmp_path / "captured"
    with open(captured, "w") as capture:
        saved = os.dup(write)
        os.dup2(capture.fileno(), write)  # the check's capture begins
        try:
            out("  ... test_trains[gru]: running, 15 s so far")
        finally:
            os.dup2(saved, write)
            os.close(saved)
    stream.close()
    os.set_blocking(read, False)  # the printer's copy keeps the pipe open
    try:
        seen = os.read(read, 4096).decode()
    except BlockingIOError:
        seen = ""
    os.close(read)
    assert "running, 15 s so far" in seen, (seen, captured.read_text())


def test_a_capstones_progress_lines_reach_the_watch():
    """Lesson 23's grader writes its progress (the cell it trains, the
    perplexity reached against the target) to `sys.__stderr__` where that
    is a terminal; in the watch's run it is, and each line is said."""
    from graders.test_l23_capstone_language_model import _progress

    said: list[str] = []
    live = Live(show=lambda *a: None, say=said.append, costs={})
    real = sys.__stderr__
    live.pytest_sessionstart(None)
    try:
        _progress("gru: held-out perplexity 1.702, target 1.841")
    finally:
        live.pytest_sessionfinish(None, 0)
    assert sys.__stderr__ is real
    assert said == ["  gru: held-out perplexity 1.702, target 1.841"]
    _progress("after the run: not said")
    assert len(said) == 1
