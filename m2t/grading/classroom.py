"""The student edition's GitHub Classroom grading step:

    python -m m2t.grading.classroom [LESSON ...] [--report results.json]

grades the lessons as `m2t grade` does and hands the result to GitHub
Classroom the way its reporter (`classroom-resources/autograding-grading-
reporter`, the workflow's next step) reads it: for each id in its
`runners` input, the environment variable `<ID>_RESULTS` holds base64 of a
JSON runner result (`max_score`, `status`, `tests[]` with `score`).

**One runner per lesson.** The step writes one output per lesson (`l16`,
`questions`; `runner_id`), and the workflow (`workflow`, rendered by `m2t
release` from the curriculum) maps each to `L16_RESULTS`, ... in the
reporter's `env`. The runner passes `env` to the reporter's `node` through
execve, and Linux refuses any one environment string over MAX_ARG_STRLEN
(131,072 bytes): one output for the whole course (477 checks) did not fit.
A lesson's output is bounded by design: names and messages are cut to a
fixed number of encoded bytes, and `fit` keeps each `NAME=value` under
`BUDGET`, half that limit (`python -m benchmarks.classroom_payload` prints
the sizes).

**The points students read are the points recorded.** Classroom records
the sum of the tests' `score` over the sum of `max_score`; the reporter's
console shows each runner as (tests passed / tests) x `max_score`. These
agree for every outcome only when a runner's tests weigh the same, so a
check worth n points is n tests of one point each (n times the lessons'
common unit, `_unit`): "test_x (1/2)", "test_x (2/2)". A skipped check (an
answer left to the instructor) counts in neither score nor maximum, as in
results.json, so it is no test at all: a skipped test would count as
passed in the console. The per-check table, with messages, is on the job's
summary page.

The step is green when grading ran: unfinished lessons are a score, not a
failure (a runner's `status` is "pass", which the reporter takes as "do
not fail the job"). It is red, with the lesson's `status` "error", only
when the grader broke (the graders could not be collected, or a check
failed inside the grader rather than in the student's code).

The language of the table and the messages (`m2t.i18n`): `--lang en|zh`
where the instructor fixes it for the course (in the workflow), else
`M2T_LANG`, else the student's own choice (`.m2t/lang`, committed by the
student edition), else the runner's locale.
"""

from __future__ import annotations

import argparse
import base64
import collections
import dataclasses
import json
import math
import os
import re
import sys
import time
from collections.abc import Iterable
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from m2t import curriculum
from m2t import i18n
from m2t import settings
from m2t.grading import classreport
from m2t.grading import reports
from m2t.grading.runner import LessonResult

MAX_ARG_STRLEN = 131_072
"""Linux's limit on one argument or environment string, its NUL included
(32 pages): execve fails with E2BIG past it."""

BUDGET = MAX_ARG_STRLEN // 2
"""The most bytes one runner's `NAME=value` may take (`fit`)."""

NAME_BYTES = 96
"""A test's name, JSON-encoded, at most."""

MESSAGE_BYTES = 160
"""A test's message, JSON-encoded, at most: the reporter prints it only for
an error; the whole message is on the summary page and in the step's log."""

SUMMARY_BYTES = 512 * 1024
"""The per-check table stops here (GitHub keeps 1 MiB of a step summary)."""

_STATUS = {"passed": "pass", "error": "error"}
_RUNNER = re.compile(r"[a-z0-9]+")
_PLACEHOLDER = "m2tlesson"


def runner_id(lesson: curriculum.Lesson) -> str:
    """The lesson's runner id ("l16", "questions"): the grading step's
    output name, and `<ID>_RESULTS` the reporter's variable."""
    rid = lesson.tag.lower()
    if not _RUNNER.fullmatch(rid):  # the reporter's own rule for `runners`
        raise ValueError(f"lesson={lesson.module!r}: runner id {rid!r}")
    return rid


def variable(runner: str) -> str:
    """The environment variable the reporter reads for `runner`."""
    return f"{runner.upper()}_RESULTS"


def _encoded(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def cap(text: str, limit: int) -> str:
    """`text` cut (with "…") so that its JSON string takes at most `limit`
    bytes of UTF-8, quotes included."""
    if limit < 8:
        raise ValueError(f"limit={limit!r}: under 8 bytes")
    if _encoded(text) <= limit:
        return text
    low, high = 0, len(text)  # the longest prefix that fits with the mark
    while low < high:
        mid = (low + high + 1) // 2
        if _encoded(text[:mid] + "…") <= limit:
            low = mid
        else:
            high = mid - 1
    return text[:low] + "…"


def _unit(points: Iterable[float]) -> Fraction:
    """The largest number of points that divides every check's points (1
    for whole points): each test of a runner weighs this much."""
    unit = Fraction(0)
    for p in points:
        f = Fraction(p).limit_denominator(1000)
        if f < 0 or abs(float(f) - p) > 1e-9:
            raise ValueError(f"points={p!r}: not a multiple of 1/1000 >= 0")
        unit = Fraction(
            math.gcd(
                unit.numerator * f.denominator, f.numerator * unit.denominator
            ),
            unit.denominator * f.denominator,
        )
    return unit or Fraction(1)


def _first_lines(message: str, lines: int = 3) -> str:
    return "\n".join(reports.clean(message).splitlines()[:lines])


def payload(result: LessonResult, error: str | None = None) -> dict[str, Any]:
    """The runner result of one lesson, as the reporter decodes it: one test
    per point unit of each graded check (`score` the unit when passed),
    `max_score` the lesson's points, `status` "pass" when grading ran and
    "error" (with `error`) when the grader broke."""
    graded = [c for c in result.checks if c.status != "skipped"]
    unit = _unit(c.points for c in graded)
    tests: list[dict[str, Any]] = []
    told = False
    for check in graded:
        copies = round(Fraction(check.points).limit_denominator(1000) / unit)
        passed = check.status == "passed"
        for k in range(copies):
            name = (
                check.name
                if copies == 1
                else f"{check.name} ({k + 1}/{copies})"
            )
            test: dict[str, Any] = {
                "name": cap(reports.clean(name), NAME_BYTES),
                "status": _STATUS.get(check.status, "fail"),
                "score": float(unit) if passed else 0.0,
                "line_no": 0,
            }
            if k == 0 and not passed:
                test["message"] = cap(
                    _first_lines(check.message), MESSAGE_BYTES
                )
                if not told:  # the reporter prints it under the test
                    test["test_code"] = f"m2t grade {result.lesson.arg}"
                    told = True
            tests.append(test)
    most = float(unit) * len(tests)
    if not tests:  # no test: the reporter would divide 0 by 0
        status = "no_checks" if result.lesson.grader.exists() else "no_grader"
        if error:
            status = "error"
        elif result.checks:
            status = "skipped"
        tests.append(
            {
                "name": i18n.text(f"status.{status}"),
                "status": "error" if error else "pass",
                "score": 0.0,
                "line_no": 0,
            }
        )
        if error:
            tests[0]["message"] = cap(_first_lines(error), MESSAGE_BYTES)
    data: dict[str, Any] = {
        "version": 1,
        "status": "error" if error else "pass",
        "max_score": most,
        "tests": tests,
    }
    if error:
        data["message"] = cap(_first_lines(error), MESSAGE_BYTES)
    return data


def encode(data: dict[str, Any]) -> str:
    """base64 of the JSON (UTF-8, compact), as the reporter decodes it."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def env_bytes(runner: str, encoded: str) -> int:
    """The bytes execve counts for the runner's `NAME=value` string."""
    return len(variable(runner)) + 1 + len(encoded) + 1


def fit(runner: str, data: dict[str, Any]) -> str:
    """`encode(data)`, with messages dropped from the last test back (and
    then each test's extras) until its environment string is under
    `BUDGET`; a ValueError if even that does not fit."""
    encoded = encode(data)
    for key in ("message", "test_code"):
        for test in reversed(data["tests"]):
            if env_bytes(runner, encoded) <= BUDGET:
                return encoded
            if test.pop(key, None) is not None:
                encoded = encode(data)
    if env_bytes(runner, encoded) > BUDGET:
        raise ValueError(
            f"runner={runner!r}: {env_bytes(runner, encoded)} bytes with "
            f"{len(data['tests'])} tests, over the budget of {BUDGET}"
        )
    return encoded


def outputs(
    results: Sequence[LessonResult],
    lessons: Sequence[curriculum.Lesson] = (),
    error: str | None = None,
) -> dict[str, str]:
    """The grading step's outputs: runner id -> encoded runner result, one
    per lesson of `results`, and one (an error, no points) for each lesson
    of `lessons` that has no result when grading broke (`error`)."""
    bad: dict[str, str] = {}
    for line in classreport.grader_errors(results):
        bad.setdefault(line.split(" ", 1)[0], line)
    out = {}
    for r in results:
        failed = bad.get(r.lesson.tag) or error
        out[runner_id(r.lesson)] = fit(runner_id(r.lesson), payload(r, failed))
    for lesson in lessons:
        if runner_id(lesson) not in out:
            out[runner_id(lesson)] = fit(
                runner_id(lesson),
                payload(
                    LessonResult(lesson, []),
                    error or i18n.text("classroom.not_graded"),
                ),
            )
    return out


def worst_case(results: Sequence[LessonResult]) -> list[LessonResult]:
    """The same checks at their largest, for measuring (`BUDGET`): each one
    (skipped ones too) an error of the grader itself, so its lesson's runner
    carries a message as well, its name and message long and full of what
    JSON and UTF-8 widen (quotes, backslashes, CJK), past the caps."""
    wide = '"\\中' * (MESSAGE_BYTES + NAME_BYTES)
    message = classreport.GRADER_ERROR[0] + "\n".join([wide] * 4)
    return [
        LessonResult(
            r.lesson,
            [
                dataclasses.replace(
                    c,
                    name=c.name + wide,
                    status="error",
                    message=message,
                )
                for c in r.checks
            ],
            r.mistakes,
        )
        for r in results
    ]


def workflow(template: str, lessons: Sequence[curriculum.Lesson]) -> str:
    """The edition's workflow from `template` (classroom.yml): its one
    placeholder runner `m2tlesson` becomes one runner per lesson, in the
    reporter's `env` (`L16_RESULTS: ${{ steps.m2t.outputs.l16 }}`) and in
    its `runners` input."""
    env = re.compile(
        rf"^( *){variable(_PLACEHOLDER)}: "
        rf"\$\{{\{{ steps\.m2t\.outputs\.{_PLACEHOLDER} \}}\}}$",
        re.M,
    )
    runners = re.compile(rf"^( *)runners: {_PLACEHOLDER}$", re.M)
    if len(env.findall(template)) != 1 or len(runners.findall(template)) != 1:
        raise ValueError(f"template: no single runner {_PLACEHOLDER!r}")
    ids = [runner_id(lesson) for lesson in lessons]
    text = env.sub(
        lambda m: "\n".join(
            f"{m.group(1)}{variable(r)}: ${{{{ steps.m2t.outputs.{r} }}}}"
            for r in ids
        ),
        template,
    )
    return runners.sub(lambda m: f"{m.group(1)}runners: {','.join(ids)}", text)


def _cell(text: str, shared: frozenset[str] = frozenset()) -> str:
    """The line of `text` for a table cell: its first, or its second where
    the first is one that several checks share (the question list's "72 of
    79 questions not answered yet")."""
    lines = _first_lines(text, 2).splitlines() or [""]
    line = lines[1] if lines[0] in shared and len(lines) > 1 else lines[0]
    return cap(line, MESSAGE_BYTES).replace("|", "\\|")


def summary(results: Sequence[LessonResult], error: str | None = None) -> str:
    """The step summary: a score table per lesson, what it means, and each
    check not passed with the first line of its message."""
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
        text("classroom.units"),
        "",
    ]
    failing = [
        (r, c) for r in results for c in r.checks if c.status != "passed"
    ]
    heads = collections.Counter(_first_lines(c.message, 1) for _, c in failing)
    shared = frozenset(h for h, n in heads.items() if n > 1)
    rows = [
        f"| {r.lesson.tag} {_cell(c.name)} | {c.score:g}/{c.points:g} | "
        f"{text('status.' + c.status)} | {_cell(c.message, shared)} |"
        for r, c in failing
    ]
    if rows:
        cols = ("check", "points", "status", "message")
        lines += [
            text("classroom.checks_heading"),
            "",
            "| " + " | ".join(text(f"classroom.col_{c}") for c in cols) + " |",
            "| --- | --- | --- | --- |",
        ]
        size = len("\n".join(lines).encode("utf-8"))
        for i, row in enumerate(rows):
            size += len(row.encode("utf-8")) + 1
            if size > SUMMARY_BYTES:
                lines += ["", text("classroom.more", count=str(len(rows) - i))]
                break
            lines.append(row)
        lines.append("")
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
    found = outputs(results, lessons, error if not results else None)
    _append("GITHUB_OUTPUT", "".join(f"{k}={v}\n" for k, v in found.items()))
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
