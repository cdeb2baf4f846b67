"""What a class got right and wrong: the gradebook, the per-check pass
rates and the per-mistake counts of a graded roster.

The input is one *record* per student (`record`, written by
`m2t.grading.roster`): per lesson its points, each check's status and the
known mistake the judge diagnosed in it (`Check.mistake`, from the
judge's own result: never read from a message, which may quote the
student's exception text), and the mistakes the lesson's grader knows. From
the records:

* `gradebook.csv`: student x lesson points, total and maximum; a cell
  that a spreadsheet would run as a formula (a student folder named
  `=HYPERLINK(...)`) is written as text (`cell`);
* `class-report.md` (what `m2t grade --roster` prints): per lesson the
  mean points and how many students' code did not run; a line per student
  whose lesson did not run, and why (`reason`: syntax error, time limit,
  missing file, not started, ...: from each check's status and the judge's
  own words that lead its message); the question list summarised; per
  check "passed by k of N", per known mistake "l16 no_scale: 12 of 40";
  every question last;
* `class-report.png`: one 1920 x 1080 picture for a 16:9 slide: the
  lessons, the hardest checks and the most common mistakes.
"""

from __future__ import annotations

import csv
import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from m2t import ROOT
from m2t import curriculum
from m2t import i18n
from m2t.grading.reports import clean
from m2t.grading.runner import LessonResult


def _diagnosis() -> re.Pattern[str]:
    """`judge.likely` of graders/messages/*.toml up to its `[{name}]`, in
    either language ("Likely mistake [no_scale]", "可能的错误 [no_scale]"),
    as a pattern capturing the name."""
    checks = i18n.Catalogue(ROOT / "graders" / "messages")
    leads = {
        template.partition("[{name}]")[0]
        for lang in i18n.LANGUAGES
        if (template := checks.get("judge.likely", lang))
    } or {"Likely mistake "}
    alternatives = "|".join(re.escape(x) for x in sorted(leads))
    return re.compile(rf"(?:{alternatives})\[(\w+)\]")


DIAGNOSIS = _diagnosis()
"""How a failing check names a known mistake (graders/lib/judge.py), in
either language."""


def diagnosed(message: str) -> list[str]:
    """The known mistakes a check's message names, in order (for trusted
    messages only: a grade's diagnoses are `Check.mistake`)."""
    return DIAGNOSIS.findall(message)


FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
"""How a spreadsheet cell that runs as a formula starts (OWASP, CSV
injection)."""


def cell(text: str) -> str:
    """`text` as a CSV cell a spreadsheet shows as text: one that starts
    like a formula gets a leading single quote."""
    return "'" + text if text.startswith(FORMULA_LEADS) else text


GRADER_ERROR = tuple(
    sorted(
        {
            template.partition("{kind}")[0]
            for lang in i18n.LANGUAGES
            if (template := i18n.MESSAGES.get("grader.error", lang))
        }
    )
)
"""How a check's message starts when the grader itself raised
(graders/conftest.py) rather than the student's code, in either language
("grader error: ", "评分器出错：")."""


def grader_errors(results: Sequence[LessonResult]) -> list[str]:
    """The checks whose grader raised, as `lesson check: message`: such a
    grade says nothing of the student's work."""
    return [
        f"{c.lesson} {c.name}: {clean(c.message)}"
        for r in results
        for c in r.checks
        if c.status == "error" and c.message.startswith(GRADER_ERROR)
    ]


# ------------------------------------------------ why a check did not run
QUESTION_LIST = curriculum.QUESTIONS
"""The question list's tag: its ~90 checks are summarised, not listed
among the lessons' (the full list closes the report)."""


def question(name: str) -> str:
    """A question's id from its check's name: "q16_3" from
    "test_question[q16_3]"."""
    found = re.fullmatch(r"test_question\[(.+)\]", name)
    return clean(found.group(1) if found else name)


REASONS = {
    "missing": "missing file",
    "refused": "file refused",
    "syntax_error": "syntax error (the file does not import)",
    "import_error": "the file does not import (it raises at module level)",
    "time_limit": "time limit reached",
    "crashed": "raised an error",
    "not_started": "not started (the skeleton's TODO)",
}
"""Why a check gave no answer (a `record`'s check `reason`), most telling
first: a lesson's line in the class report names its checks' reasons in
this order."""

QUESTION_REASONS = {"not_started": "no question answered"}
"""The question list's words where they differ from `REASONS`."""

_FIELDS = {
    "tag": r"\w+",
    "type": r"[\w.]+",
    "line": r"\d+",
    "seconds": r"[0-9.]+",
    "function": "<module>",
    "file": r"[^:\n]+?",
    "name": r"[\w.]+",
}
"""How a field of a message the judge writes reads, where the reason
depends on it (any other field: any text)."""


def _template(template: str, **fields: str) -> str:
    """A message template (`{tag}: syntax error at {where}: {error}`) as a
    pattern for the messages it writes, matched from their start; a field
    reads as `fields` or `_FIELDS` say, else as any text."""
    fields = {**_FIELDS, **fields}
    parts = re.split(r"\{(\w+)\}", template)
    out = []
    for i, part in enumerate(parts):
        if i % 2 == 0:
            out.append(re.escape(part))
        else:
            out.append(fields.get(part, ".*?"))
    return "".join(out)


def _leads() -> list[tuple[str, re.Pattern[str]]]:
    """(reason, pattern) of every message the judge writes for a check
    that gave no answer, in both languages (m2t/messages: `probe.*`,
    `notes.*`), and those m2t/grading/sandbox.py and probe.py write in
    English only."""
    found: list[tuple[str, str]] = []
    for lang in i18n.LANGUAGES:

        def get(key: str, lang: str = lang) -> str:
            return i18n.MESSAGES.get(key, lang) or ""

        raised = get("probe.raised").replace(
            "{where}", get("probe.raised_where")
        )
        found += [
            ("missing", _template(get("notes.missing"))),
            ("refused", _template(get("notes.refused"))),
            (
                "syntax_error",
                _template(get("probe.syntax_error"), where=r"[^:\n]+?:\d+"),
            ),
            ("import_error", _template(raised)),
            ("time_limit", _template(get("probe.time_limit"))),
        ]
    found += [
        ("missing", r"\w+: [^:\n]+\.py is missing$"),
        ("time_limit", r"\w+: [\w.<>]+ timed out after [0-9.]+ s \("),
        ("time_limit", r"\w+: the lesson's time limit \([0-9.]+ s\) "),
    ]
    return [(reason, re.compile(pattern, re.S)) for reason, pattern in found]


LEADS = _leads()
"""How the judge's message of a check that gave no answer starts, by
reason (`reason`)."""


def reason(status: str, message: str) -> str:
    """Why a check gave no answer, a key of `REASONS` ("" for a check that
    passed, failed or was skipped, and for a grader's own error), from its
    status and the start of its message, which the judge writes (the
    student's words only ever follow the lead: never read as code)."""
    if status == "not_started":
        return "not_started"
    if status != "error" or message.startswith(GRADER_ERROR):
        return ""
    for name, pattern in LEADS:
        if pattern.match(message):
            return name
    return "crashed"


def record(
    name: str, results: Sequence[LessonResult], seconds: float
) -> dict[str, Any]:
    """One student's grade as plain JSON data: per lesson its points, its
    checks (name, points, status, mistakes named, the `reason` a check gave
    no answer) and the mistakes its grader knows."""
    lessons = []
    for r in results:
        checks = [
            {
                "name": c.name,
                "points": c.points,
                "status": c.status,
                "mistakes": [c.mistake]
                if c.status == "failed" and c.mistake in r.mistakes
                else [],
                "reason": reason(c.status, c.message),
            }
            for c in r.checks
        ]
        lessons.append(
            {
                "tag": r.lesson.tag,
                "title": r.lesson.title,
                "points": r.score,
                "max_points": r.max_score,
                "status": r.status,
                "known_mistakes": list(r.mistakes),
                "checks": checks,
            }
        )
    return {
        "student": name,
        "seconds": round(seconds, 3),
        "grader_errors": grader_errors(results),
        "lessons": lessons,
    }


@dataclasses.dataclass(frozen=True)
class NoAnswer:
    """Why a student's lesson gave no answer, or some of its checks did.

    Attributes:
        reasons: reason (a key of `REASONS`) -> how many of the lesson's
            checks gave no answer for it.
        checks: the lesson's graded checks (skipped ones not counted).
        ran: whether any check gave an answer (passed or failed): then only
            the checks stopped at the time limit are counted here.
    """

    reasons: dict[str, int]
    checks: int
    ran: bool = False

    def text(self, questions: bool = False) -> str:
        """The reason in words ("syntax error (the file does not
        import)"), or each reason with its checks, most telling first;
        `questions`: of the question list, where a check not started is a
        question not answered."""
        names = {**REASONS, **(QUESTION_REASONS if questions else {})}
        order = [r for r in names if self.reasons.get(r)]
        order += sorted(r for r in self.reasons if r not in names)
        if self.ran:
            k = sum(self.reasons.values())
            return (
                f"{names['time_limit']} in {k} of {self.checks} checks "
                "(the others ran)"
            )
        if len(order) == 1:
            return names.get(order[0], order[0])
        return ", ".join(
            f"{names.get(r, r)} in {self.reasons[r]} of {self.checks} checks"
            for r in order
        )


@dataclasses.dataclass
class ClassReport:
    """The class's figures, from the students' records.

    Attributes:
        students: the names, in roster order (those graded).
        lessons: lesson tags in order.
        max_points: tag -> the lesson's points.
        points: (student, tag) -> points.
        checks: (tag, check name) -> number of students who passed it.
        mistakes: (tag, mistake) -> number of students whose failing checks
            named it (every mistake a grader knows is listed, 0 included).
        answered: (tag, check name) -> number of students whose code gave
            the check an answer (it passed or failed).
        no_answer: (student, tag) -> why the student's lesson did not run
            (no graded check gave an answer), or which of its checks
            reached the time limit; absent when every check ran.
    """

    students: list[str]
    lessons: list[str]
    max_points: dict[str, float]
    points: dict[tuple[str, str], float]
    checks: dict[tuple[str, str], int]
    mistakes: dict[tuple[str, str], int]
    answered: dict[tuple[str, str], int] = dataclasses.field(
        default_factory=dict
    )
    no_answer: dict[tuple[str, str], NoAnswer] = dataclasses.field(
        default_factory=dict
    )

    @property
    def size(self) -> int:
        return len(self.students)

    def total(self, student: str) -> float:
        return sum(self.points.get((student, t), 0.0) for t in self.lessons)

    def did_not_run(self, tag: str) -> int:
        """How many students' `tag` gave no answer at all."""
        return sum(
            1
            for (_, t), why in self.no_answer.items()
            if t == tag and not why.ran
        )


def _no_answer(checks: Sequence[dict[str, Any]]) -> NoAnswer | None:
    """Why a lesson's checks (a record's) gave no answer: every graded one
    (the lesson did not run), or some at the time limit; None when all
    ran. A record written before checks named their reason counts a not
    started check as not started and an error as raised."""
    graded = [c for c in checks if c["status"] != "skipped"]
    ran = any(c["status"] in ("passed", "failed") for c in graded)
    reasons: dict[str, int] = {}
    for c in graded:
        if c["status"] in ("passed", "failed"):
            continue
        why = c.get("reason")
        if why is None:
            why = "not_started" if c["status"] == "not_started" else "crashed"
        if why and (not ran or why == "time_limit"):
            reasons[why] = reasons.get(why, 0) + 1
    if not graded or not reasons:
        return None
    return NoAnswer(reasons, len(graded), ran)


def build(records: Sequence[dict[str, Any]]) -> ClassReport:
    """Count over the records (one per graded student)."""
    students, lessons = [], []
    max_points: dict[str, float] = {}
    points: dict[tuple[str, str], float] = {}
    checks: dict[tuple[str, str], int] = {}
    mistakes: dict[tuple[str, str], int] = {}
    answered: dict[tuple[str, str], int] = {}
    no_answer: dict[tuple[str, str], NoAnswer] = {}
    for rec in records:
        name = rec["student"]
        students.append(name)
        for lesson in rec["lessons"]:
            tag = lesson["tag"]
            if tag not in max_points:
                lessons.append(tag)
            max_points[tag] = max(
                max_points.get(tag, 0.0), lesson["max_points"]
            )
            points[name, tag] = lesson["points"]
            for known in lesson["known_mistakes"]:
                mistakes.setdefault((tag, known), 0)
            made = set()
            known = set(lesson["known_mistakes"])
            for check in lesson["checks"]:
                key = (tag, check["name"])
                checks[key] = checks.get(key, 0) + (check["status"] == "passed")
                answered[key] = answered.get(key, 0) + (
                    check["status"] in ("passed", "failed")
                )
                made.update(set(check["mistakes"]) & known)
            for mistake in made:
                mistakes[tag, mistake] = mistakes.get((tag, mistake), 0) + 1
            why = _no_answer(lesson["checks"])
            if why is not None:
                no_answer[name, tag] = why
    return ClassReport(
        students,
        lessons,
        max_points,
        points,
        checks,
        mistakes,
        answered,
        no_answer,
    )


def write_gradebook(
    path: Path, report: ClassReport, failed: dict[str, str] | None = None
) -> None:
    """student, one column per lesson, total, max; a student whose
    submission could not be graded has empty points and a note."""
    failed = failed or {}
    most = sum(report.max_points.values())
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(
            ["student", *map(cell, report.lessons), "total", "max"] + ["note"]
        )
        for name in report.students:
            row = [
                f"{report.points.get((name, t), 0.0):g}" for t in report.lessons
            ]
            out.writerow(
                [cell(name), *row, f"{report.total(name):g}", f"{most:g}", ""]
            )
        for name, why in failed.items():
            blank = [""] * len(report.lessons)
            note = cell(f"not graded: {why}")
            out.writerow([cell(name), *blank, "", f"{most:g}", note])
    tmp.replace(path)
