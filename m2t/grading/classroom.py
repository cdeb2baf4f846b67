"""The student edition's GitHub Classroom grading step:

    python -m m2t.grading.classroom [LESSON ...] [--report results.json]

grades the lessons as `m2t grade` does and hands the result to GitHub
Classroom the way its reporter (`classroom-resources/autograding-grading-
reporter`) reads it: the step output `result` is base64 of a JSON runner
result (`payload`), whose `max_score` is the course's points and whose
tests are the checks, each scoring its points when passed. The reporter
(the workflow's next step, `runners: m2t`, `M2T_RESULTS` = that output)
adds the tests' scores: that sum is the score Classroom records, the same
as results.json's `score`.

The step is green when grading ran: unfinished lessons are a score, not a
failure (the runner's `status` is "pass", which the reporter takes as "do
not fail the job"). It is red, with `status` "error", only when the grader
broke (the graders could not be collected, or a check failed inside the
grader rather than in the student's code). A score table goes to
`$GITHUB_STEP_SUMMARY`.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from m2t import curriculum
from m2t import settings
from m2t.grading import classreport
from m2t.grading import reports
from m2t.grading.runner import LessonResult

RUNNER = "m2t"
"""The runner id the workflow's reporter step names (`runners: m2t`)."""

_STATUS = {"passed": "pass", "skipped": "pass"}


def payload(
    results: Sequence[LessonResult], error: str | None = None
) -> dict[str, Any]:
    """The runner result the Classroom reporter decodes: `max_score` the
    lessons' points, one test per check (`score` its points when passed),
    `status` "pass" when grading ran and "error" (with `error`) when the
    grader broke."""
    tests = []
    for r in results:
        for check in r.checks:
            message = reports.clean(check.message)
            tests.append(
                {
                    "name": reports.clean(f"{r.lesson.tag} {check.name}"),
                    "status": _STATUS.get(check.status, "fail")
                    if check.status != "error"
                    else "error",
                    "score": check.score,
                    "message": "\n".join(message.splitlines()[:6]) or None,
                    "test_code": f"m2t grade {r.lesson.tag}",
                    "filename": f"lessons/{r.lesson.module}.py",
                    "line_no": 0,
                    "duration": round(check.seconds * 1000),
                }
            )
    return {
        "version": 1,
        "status": "error" if error else "pass",
        "max_score": sum(r.max_score for r in results),
        "tests": tests,
        **({"message": error} if error else {}),
    }


def encode(data: dict[str, Any]) -> str:
    """base64 of the JSON, as the reporter decodes it."""
    return base64.b64encode(json.dumps(data).encode("utf-8")).decode("ascii")


def summary(results: Sequence[LessonResult], error: str | None = None) -> str:
    """The step summary: a score table per lesson, and what it means."""
    lines = ["## Autograding", ""]
    if error:
        lines += [f"**The grader broke**: {reports.clean(error)}", ""]
    lines += [
        "| lesson | checks | points | status |",
        "| --- | --- | --- | --- |",
    ]
    for r in results:
        if r.checks:
            lines.append(
                f"| {r.lesson.tag} {r.lesson.title} | {r.passed}/"
                f"{len(r.checks)} | {r.score:g}/{r.max_score:g} | "
                f"{r.status.replace('_', ' ')} |"
            )
    total = sum(r.score for r in results)
    most = sum(r.max_score for r in results)
    lines += [
        f"| **total** | | **{total:g}/{most:g}** | |",
        "",
        "Graded from this repository's own copy of the graders: a progress "
        "score. Your instructor's regrade of your files is the grade of "
        "record.",
        "",
    ]
    return "\n".join(lines)


def _append(variable: str, text: str) -> None:
    path = os.environ.get(variable)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m m2t.grading.classroom")
    parser.add_argument("lessons", nargs="*")
    parser.add_argument("--report", help="also write results.json here")
    parser.add_argument("--junit", help="also write JUnit XML here")
    parser.add_argument("--timeout", type=float, default=settings.CHECK_TIMEOUT)
    args = parser.parse_args(argv)
    from m2t.console import quiet_native_stderr
    from m2t.grading import runner

    lessons = curriculum.select(args.lessons)
    start = time.perf_counter()
    error = None
    results: list[LessonResult] = []
    try:
        with quiet_native_stderr():
            results = runner.grade(lessons, timeout=args.timeout)
    except RuntimeError as exc:
        error = str(exc)
    bad = classreport.grader_errors(results)
    if bad and error is None:
        error = f"{len(bad)} check(s) failed in the grader: {bad[0]}"
    seconds = time.perf_counter() - start
    print(reports.table(results))
    _append("GITHUB_OUTPUT", f"result={encode(payload(results, error))}\n")
    _append("GITHUB_STEP_SUMMARY", summary(results, error))
    if args.report:
        reports.write_gradescope(Path(args.report), results, seconds)
    if args.junit:
        reports.write_junit(Path(args.junit), results)
    total = sum(r.score for r in results)
    most = sum(r.max_score for r in results)
    if error:
        print(f"\nthe grader broke: {reports.clean(error)}", file=sys.stderr)
        return 1
    print(f"\nscore {total:g}/{most:g} in {seconds:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
