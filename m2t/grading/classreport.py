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


def _rate(k: int, n: int) -> str:
    return f"{k} of {n} ({100 * k / n:.0f}%)" if n else f"{k} of 0"


HARDEST = 5
"""How many of the hardest questions the report's summary names."""

TOP = 10
"""How many checks and mistakes each panel of the picture shows."""


def _md(text: str) -> str:
    """`text` (a student's name, a roster's note) as the text of one
    markdown table cell: safe characters (`clean`), one line, and nothing
    a renderer reads as markup (a `|`, a backtick, HTML)."""
    text = re.sub(r"\s", " ", clean(text))
    for char, escaped in (
        ("\\", "\\\\"),
        ("|", "\\|"),
        ("`", "\\`"),
        ("*", "\\*"),
        ("_", "\\_"),
        ("[", "\\["),
        ("<", "&lt;"),
    ):
        text = text.replace(char, escaped)
    return text


def _spans(tags: Sequence[str], order: Sequence[str]) -> str:
    """Lesson tags as "l01-l05, l09": a run of three or more that follow
    one another in `order` is written as its ends."""
    place = {t: i for i, t in enumerate(order)}
    runs: list[list[str]] = []
    for tag in sorted(tags, key=lambda t: place.get(t, len(order))):
        if runs and place.get(tag) == place.get(runs[-1][-1], -2) + 1:
            runs[-1].append(tag)
        else:
            runs.append([tag])
    return ", ".join(
        f"{run[0]}-{run[-1]}" if len(run) >= 3 else ", ".join(run)
        for run in runs
    )


def did_not_run(report: ClassReport) -> dict[str, str]:
    """Student -> one line of the lessons that did not run (or had checks
    stopped at the time limit) and why, in roster order; students whose
    every lesson ran are left out."""
    lines = {}
    for student in report.students:
        by_reason: dict[str, list[str]] = {}
        for tag in report.lessons:
            why = report.no_answer.get((student, tag))
            if why is not None:
                text = why.text(questions=tag == QUESTION_LIST)
                by_reason.setdefault(text, []).append(tag)
        if by_reason:
            lines[student] = "; ".join(
                f"{_spans(tags, report.lessons)}: {why}"
                for why, tags in by_reason.items()
            )
    return lines


def _question_summary(report: ClassReport) -> list[str]:
    """A short section on the question list: how much of it the class
    answered and got right, and its hardest questions."""
    n = report.size
    questions = [
        (name, k)
        for (tag, name), k in report.checks.items()
        if tag == QUESTION_LIST
    ]
    if not questions or not n:
        return []
    answered = {
        name: report.answered.get((QUESTION_LIST, name), 0)
        for name, _ in questions
    }
    right = sum(k for _, k in questions) / n
    tried = sum(answered.values()) / n
    most = report.max_points.get(QUESTION_LIST, 0.0)
    got = [report.points.get((s, QUESTION_LIST), 0.0) for s in report.students]
    none = report.did_not_run(QUESTION_LIST)
    lines = [
        "## Question list",
        "",
        f"{len(questions)} questions, {most:g} points: a student answered "
        f"{tried:.1f} of them and got {right:.1f} right on average (mean "
        f"points {sum(got) / n:.1f}); {none} of {n} answered none. The full "
        "list closes this report.",
        "",
    ]
    hardest = sorted(
        (
            (k / answered[name], name, k)
            for name, k in questions
            if answered[name]
        ),
        key=lambda x: (x[0], -answered[x[1]]),
    )[:HARDEST]
    if hardest:
        lines.append("Hardest, among the students who answered them:")
        lines.append("")
        lines += [
            f"- `{question(name)}`: right for {_rate(k, answered[name])}"
            for _, name, k in hardest
        ]
        lines.append("")
    return lines


def markdown(report: ClassReport, failed: dict[str, str] | None = None) -> str:
    """The class report: per lesson the mean points and how many students'
    code did not run; a line per student whose lesson did not run, and
    why (and per student not graded at all, given `failed`); the question
    list summarised; per lesson check its pass rate; per known mistake
    how many students made it; the full question list last."""
    n = report.size
    lines = [f"# Class report: {n} students", ""]
    lines += [
        "| lesson | mean points | max | did not run |",
        "| --- | --- | --- | --- |",
    ]
    for tag in report.lessons:
        got = [report.points.get((s, tag), 0.0) for s in report.students]
        mean = sum(got) / n if n else 0.0
        lines.append(
            f"| {tag} | {mean:.1f} | {report.max_points[tag]:g} | "
            f"{report.did_not_run(tag)} of {n} |"
        )
    lines += ["", "## Students whose work did not run", ""]
    missing = did_not_run(report)
    failed = failed or {}
    if missing or failed:
        lines += [
            "| student | lessons, and why |",
            "| --- | --- |",
        ]
        lines += [f"| {_md(s)} | {_md(why)} |" for s, why in missing.items()]
        lines += [
            f"| {_md(s)} | {_md('not graded: ' + why)} |"
            for s, why in failed.items()
        ]
    else:
        lines.append("Every graded student's code ran in every lesson.")
    lines.append("")
    lines += _question_summary(report)
    lines += [
        "## Checks",
        "",
        "| lesson | check | passed by | of those whose code ran it |",
        "| --- | --- | --- | --- |",
    ]
    for (tag, name), k in report.checks.items():
        if tag != QUESTION_LIST:
            ran = report.answered.get((tag, name), 0)
            lines.append(
                f"| {tag} | `{clean(name)}` | {_rate(k, n)} | {_rate(k, ran)} |"
            )
    lines += [
        "",
        "## Known mistakes",
        "",
        "| lesson | known mistake | made by |",
        "| --- | --- | --- |",
    ]
    for (tag, mistake), k in sorted(
        report.mistakes.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][1])
    ):
        lines.append(f"| {tag} | `{mistake}` | {_rate(k, n)} |")
    questions = [
        (name, k)
        for (tag, name), k in report.checks.items()
        if tag == QUESTION_LIST
    ]
    if questions:
        lines += [
            "",
            f"<details><summary>All {len(questions)} questions</summary>",
            "",
            "| question | right for | of those who answered it |",
            "| --- | --- | --- |",
        ]
        for name, k in questions:
            ran = report.answered.get((QUESTION_LIST, name), 0)
            lines.append(
                f"| `{question(name)}` | {_rate(k, n)} | {_rate(k, ran)} |"
            )
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def hardest_checks(
    report: ClassReport, k: int = TOP
) -> list[tuple[tuple[str, str], int, int]]:
    """The `k` lesson checks (the question list's left out) passed by the
    smallest share of the students whose code ran them, as ((tag, check),
    passed, ran); a check every such student passed is not among them."""
    found = [
        (key, passed, report.answered.get(key, 0))
        for key, passed in report.checks.items()
        if key[0] != QUESTION_LIST
    ]
    found = [x for x in found if x[2] and x[1] < x[2]]
    order = {key: i for i, key in enumerate(report.checks)}
    found.sort(key=lambda x: (x[1] / x[2], -x[2], order[x[0]]))
    return found[:k]


def common_mistakes(
    report: ClassReport, k: int = TOP
) -> list[tuple[tuple[str, str], int]]:
    """The `k` known mistakes the most students made (each made by one at
    least), most first."""
    order = {tag: i for i, tag in enumerate(report.lessons)}
    made = [(key, m) for key, m in report.mistakes.items() if m]
    made.sort(key=lambda x: (-x[1], order.get(x[0][0], 0), x[0][1]))
    return made[:k]


SLIDE = (16.0, 9.0)
"""The picture's size in inches: a 16:9 slide."""

DPI = 120
"""The picture's resolution: 1920 x 1080 pixels."""


def chart(report: ClassReport, path: Path) -> Path:
    """One 16:9 picture for a slide (1920 x 1080 px): per lesson the mean
    share of its points and the share of students whose code did not run;
    the hardest checks (of the students whose code ran them); the known
    mistakes the most students made. Every check and mistake is in
    class-report.md."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    n = report.size
    fig = plt.figure(figsize=SLIDE, dpi=DPI, layout="constrained")
    upper, lower = fig.subfigures(2, 1, height_ratios=[1.0, 1.35])
    top = upper.subplots()
    left, right = lower.subplots(1, 2, width_ratios=[1.15, 1.0])
    stopped = {s for (s, _), why in report.no_answer.items() if not why.ran}
    title = f"Class report: {n} students"
    if stopped:
        title += (
            f"; {len(stopped)} with a lesson that did not run "
            "(class-report.md names them and why)"
        )
    fig.suptitle(title, fontsize=17)

    tags = report.lessons
    x = list(range(len(tags)))
    means = [
        100
        * sum(report.points.get((s, t), 0.0) for s in report.students)
        / (n * report.max_points[t])
        if n and report.max_points[t]
        else 0.0
        for t in tags
    ]
    absent = [100 * report.did_not_run(t) / n if n else 0.0 for t in tags]
    width = 0.4
    top.bar(
        [i - width / 2 for i in x],
        means,
        width,
        color="tab:green",
        label="mean share of the points",
    )
    top.bar(
        [i + width / 2 for i in x],
        absent,
        width,
        color="tab:gray",
        label="students whose code did not run",
    )
    names = ["Q" if t == QUESTION_LIST else t for t in tags]
    top.set_xticks(x, names, fontsize=12)
    top.set_xlim(-0.6, max(len(tags), 8) - 0.4)  # one lesson: a slim bar
    top.set_ylim(0, 100)
    top.set_ylabel("% of the class", fontsize=12)
    top.set_title("Lessons", fontsize=14, loc="left")
    top.legend(
        loc="lower right",
        bbox_to_anchor=(1.0, 1.0),
        fontsize=11,
        ncols=2,
        frameon=False,
    )
    top.grid(axis="y", alpha=0.3)
    if QUESTION_LIST in tags:
        top.set_xlabel("Q: the question list", fontsize=11)

    hard = hardest_checks(report)
    rates = [100 * passed / ran for _, passed, ran in hard]
    left.barh(range(len(hard)), rates, color="tab:orange")
    left.set_yticks(
        range(len(hard)),
        [f"{tag} {_short(name, 42)}" for (tag, name), _, _ in hard],
        fontsize=12,
    )
    left.set_xlim(0, 100)
    left.set_xlabel(
        "% of the students whose code ran it who passed", fontsize=12
    )
    left.set_title(
        f"The {len(hard)} hardest checks" if hard else "Hardest checks",
        fontsize=14,
    )
    for i, (rate, (_, passed, ran)) in enumerate(zip(rates, hard, strict=True)):
        left.text(rate + 1, i, f"{passed} of {ran}", va="center", fontsize=11)
    if not hard:
        left.text(
            50,
            0.5,
            "every check passed by every student whose code ran it",
            ha="center",
            va="center",
            fontsize=12,
        )
        left.set_ylim(0, 1)
        left.set_yticks([])

    made = common_mistakes(report)
    counts = [m for _, m in made]
    right.barh(range(len(made)), counts, color="tab:red")
    right.set_yticks(
        range(len(made)),
        [f"{tag} {mistake}" for (tag, mistake), _ in made],
        fontsize=12,
    )
    right.set_xlim(0, max(n, 1) * 1.12)
    right.set_xlabel("students who made it", fontsize=12)
    right.set_title(
        f"The {len(made)} most common mistakes" if made else "Mistakes",
        fontsize=14,
    )
    right.xaxis.set_major_locator(MaxNLocator(integer=True))
    for i, m in enumerate(counts):
        right.text(m + 0.01 * n, i, f"{m} of {n}", va="center", fontsize=11)
    if not made:
        right.text(
            0.5,
            0.5,
            "no known mistake diagnosed",
            ha="center",
            va="center",
            fontsize=12,
            transform=right.transAxes,
        )
        right.set_yticks([])
    for ax in (left, right):
        if ax.get_yticks().size:
            ax.invert_yaxis()
        ax.grid(axis="x", alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _short(name: str, width: int = 48) -> str:
    """A check's name cut to `width` characters for a chart label."""
    name = clean(name)
    return name if len(name) <= width else name[: width - 1] + "…"
