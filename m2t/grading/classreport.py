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
* `class-report.md`: per check "passed by k of N", per known mistake
  "l16 no_scale: 12 of 40" (the same table `m2t grade --roster` prints);
* `class-report.png`: both as bar charts, for slides.
"""

from __future__ import annotations

import csv
import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from m2t import ROOT
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


def record(
    name: str, results: Sequence[LessonResult], seconds: float
) -> dict[str, Any]:
    """One student's grade as plain JSON data: per lesson its points, its
    checks (name, points, status, mistakes named) and the mistakes its
    grader knows."""
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
    """

    students: list[str]
    lessons: list[str]
    max_points: dict[str, float]
    points: dict[tuple[str, str], float]
    checks: dict[tuple[str, str], int]
    mistakes: dict[tuple[str, str], int]

    @property
    def size(self) -> int:
        return len(self.students)

    def total(self, student: str) -> float:
        return sum(self.points.get((student, t), 0.0) for t in self.lessons)


def build(records: Sequence[dict[str, Any]]) -> ClassReport:
    """Count over the records (one per graded student)."""
    students, lessons = [], []
    max_points: dict[str, float] = {}
    points: dict[tuple[str, str], float] = {}
    checks: dict[tuple[str, str], int] = {}
    mistakes: dict[tuple[str, str], int] = {}
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
                made.update(set(check["mistakes"]) & known)
            for mistake in made:
                mistakes[tag, mistake] = mistakes.get((tag, mistake), 0) + 1
    return ClassReport(students, lessons, max_points, points, checks, mistakes)


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


def markdown(report: ClassReport) -> str:
    """The class report: per lesson the mean points, per check its pass
    rate, per known mistake how many students made it."""
    n = report.size
    lines = [f"# Class report: {n} students", ""]
    lines += ["| lesson | mean points | max |", "| --- | --- | --- |"]
    for tag in report.lessons:
        got = [report.points.get((s, tag), 0.0) for s in report.students]
        mean = sum(got) / n if n else 0.0
        lines.append(f"| {tag} | {mean:.1f} | {report.max_points[tag]:g} |")
    lines += ["", "| lesson | check | passed by |", "| --- | --- | --- |"]
    for (tag, name), k in report.checks.items():
        lines.append(f"| {tag} | `{clean(name)}` | {_rate(k, n)} |")
    lines += ["", "| lesson | known mistake | made by |", "| --- | --- | --- |"]
    for (tag, mistake), k in sorted(
        report.mistakes.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][1])
    ):
        lines.append(f"| {tag} | `{mistake}` | {_rate(k, n)} |")
    return "\n".join(lines) + "\n"


def chart(report: ClassReport, path: Path) -> Path:
    """A PNG of two bar charts: each check's pass rate, and how many
    students made each known mistake (drop it into slides)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    n = report.size
    checks = list(report.checks.items())
    mistakes = sorted(
        report.mistakes.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][1])
    )
    rows = max(len(checks), len(mistakes), 1)
    fig, (left, right) = plt.subplots(
        1,
        2,
        figsize=(15, 1.5 + 0.28 * rows),
        gridspec_kw={"width_ratios": [1.1, 1.0]},
    )
    labels = [f"{tag} {_short(name)}" for (tag, name), _ in checks]
    rates = [100 * k / n if n else 0.0 for _, k in checks]
    left.barh(range(len(checks)), rates, color="tab:green")
    left.set_yticks(range(len(checks)), labels, fontsize=8)
    left.set_xlim(0, 100)
    left.set_xlabel("students who passed (%)")
    left.set_title(f"Pass rate per check ({n} students)")
    for i, (_, k) in enumerate(checks):
        left.text(1, i, f"{k}/{n}", va="center", fontsize=7)
    labels = [f"{tag} {mistake}" for (tag, mistake), _ in mistakes]
    counts = [k for _, k in mistakes]
    right.barh(range(len(mistakes)), counts, color="tab:red")
    right.set_yticks(range(len(mistakes)), labels, fontsize=8)
    right.set_xlim(0, max(n, 1))
    right.set_xlabel("students who made it")
    right.set_title("Known mistakes")
    right.xaxis.set_major_locator(MaxNLocator(integer=True))
    for i, k in enumerate(counts):
        right.text(k + 0.01 * n, i, f"{k} of {n}", va="center", fontsize=7)
    for ax in (left, right):
        ax.invert_yaxis()
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _short(name: str, width: int = 48) -> str:
    """A check's name cut to `width` characters for a chart label."""
    name = clean(name)
    return name if len(name) <= width else name[: width - 1] + "…"
