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

The language of the table and the messages (`m2t.i18n`): `--lang en|zh`
where the instructor fixes it for the course (in the workflow), else
`M2T_LANG`, else the student's own choice (`.m2t/lang`, committed by the
student edition), else the runner's locale.
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
from m2t import i18n
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
    text = i18n.text
    lines = [text("classroom.heading"), ""]
    if error:
        lines += [text("classroom.broke", error=reports.clean(error)), ""]
    head = [text(f"table.{c}") for c in ("lesson", "checks", "points")]
    lines += [
        "| " + " | ".join([*head, text("table.status")]) + " |",
        "| --- | --- | --- | --- |",
    ]
    for r in results:
        if r.checks:
            lines.append(
                f"| {r.lesson.tag} {i18n.title(r.lesson)} | {r.passed}/"
                f"{len(r.checks)} | {r.score:g}/{r.max_score:g} | "
                f"{text('status.' + r.status)} |"
            )
    total = sum(r.score for r in results)
    most = sum(r.max_score for r in results)
    lines += [
        text("classroom.total", total=f"{total:g}", most=f"{most:g}"),
        "",
        text("classroom.progress_score"),
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
    parser.add_argument(
        "--lang",
        choices=i18n.LANGUAGES,
        help="the course's language (default: M2T_LANG, the student's "
        ".m2t/lang, the locale)",
    )
    args = parser.parse_args(argv)
    with i18n.using(args.lang):
        return _grade(args)


def _grade(args: argparse.Namespace) -> int:
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
        broke = i18n.text("classroom.broke_line", error=reports.clean(error))
        print(f"\n{broke}", file=sys.stderr)
        return 1
    score = i18n.text(
        "classroom.score",
        total=f"{total:g}",
        most=f"{most:g}",
        seconds=f"{seconds:.1f}",
    )
    print(f"\n{score}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
