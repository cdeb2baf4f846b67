"""A check stopped at its time limit says so: the limit and how to raise
it, in the run's language, and never a line of the student's code (the
clock ran out there; no fault was found). Graded in this process with a
1 s limit per check on lesson 06, whose `tokenize` loops forever in one
file and is right but slow in the other."""

from __future__ import annotations

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t import i18n
from m2t.grading import runner

LESSON = curriculum.find("l06_text_preprocessing")

STALLS = {
    "loops_forever": "while True:\n    pass",
    "right_but_slow": "import time\ntime.sleep(30)",
}


def _student(folder, stall: str):
    """The solution of l06 with `stall` run first thing in `tokenize`."""
    lines = (ROOT / "solutions" / LESSON.filename).read_text().splitlines()
    at = next(i for i, x in enumerate(lines) if "# BEGIN SOLUTION" in x)
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    stalled = [indent + line for line in stall.splitlines()]
    folder.mkdir()
    text = "\n".join([*lines[: at + 1], *stalled, *lines[at + 1 :]]) + "\n"
    (folder / LESSON.filename).write_text(text)
    return folder


WANT = {
    "en": ("stopped at the time limit of 1 s per check", "--timeout SECONDS"),
    "zh": ("每项 1 秒的时间上限", "--timeout 秒数"),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("stall", list(STALLS))
def test_a_check_at_its_limit_names_the_limit_not_the_students_line(
    tmp_path, stall, lang
):
    folder = _student(tmp_path / "student", STALLS[stall])
    with i18n.using(lang):
        (result,) = runner.grade([LESSON], impl=str(folder), timeout=1)
    stopped = [c for c in result.checks if c.status != "passed"]
    assert stopped, [(c.name, c.status) for c in result.checks]
    limit, remedy = WANT[lang]
    for check in stopped:
        assert check.status == "error", (check.name, check.message)
        assert check.message.startswith("l06"), check.message
        assert limit in check.message and remedy in check.message, check.message
        assert LESSON.filename not in check.message, check.message
        assert "raised" not in check.message and "抛出" not in check.message
    # the checks that never call tokenize still pass
    assert any(c.status == "passed" for c in result.checks), [
        (c.name, c.status, c.message) for c in result.checks
    ]
