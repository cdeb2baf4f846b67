"""What both capstones share: the verdict on the student's own parts.

A capstone composes the parts of earlier lessons (DESIGN principle 3), so
before it trains anything it grades each part with that part's own grader
(`m2t.grading.parts`) and every capstone check starts from that verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence

import pytest

from graders.lib.judge import CheckFailed
from graders.lib.messages import say
from m2t.grading import parts
from m2t.grading.probe import NotStarted


def parts_verdict(
    config: pytest.Config, wanted: Sequence[parts.Part]
) -> Callable[[], None]:
    """Grade `wanted` once (or reuse this grade's results for them) and give
    back a check that raises the first failing part's verdict: NotStarted
    for a part not started, CheckFailed naming the lesson otherwise; it
    returns None when every part passes."""
    problem = parts.first_problem(parts.grade(config, wanted), wanted)

    def check() -> None:
        if problem is None:
            return
        if problem.status == "not_started":
            raise NotStarted(verdict(problem))
        raise CheckFailed(verdict(problem))

    return check


def verdict(problem: parts.Problem) -> str:
    """The line a student reads about the first part that fails, naming
    the lesson to fix (in the grade's language)."""
    what = say(problem.part.gives) if problem.part.gives else ""
    if not problem.graded:
        return say("capstone.no_checks", lesson=problem.lesson, what=what)
    if problem.status == "not_started":
        return say(
            "capstone.not_started",
            lesson=problem.lesson,
            what=what,
            first=problem.first,
        )
    return say(
        "capstone.failed",
        lesson=problem.lesson,
        what=what,
        failing=problem.failing,
        graded=problem.graded,
        check=problem.check,
        first=problem.first,
    )
