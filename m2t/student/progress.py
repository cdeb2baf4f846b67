"""Where the student stands: each lesson done, in progress or not started,
from the last grade the runner saved (`.m2t/state.json`) and the lesson
file itself. `m2t list` prints the status column; `m2t progress` a bar and
a table with points."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from m2t import curriculum
from m2t import i18n
from m2t.i18n import text


@dataclasses.dataclass(frozen=True)
class Status:
    """One lesson's standing.

    `kind` is done, in_progress, not_started, missing (no file) or
    no_grader; `label` is what `m2t list` shows (in the run's language);
    the numbers come from the last grade (None when never graded).
    """

    kind: str
    label: str
    passed: int | None = None
    checks: int | None = None
    score: float | None = None
    max_score: float | None = None
    edited_since_grade: bool = False


def lesson_file(lesson: curriculum.Lesson, folder: Path) -> Path:
    """The file the student edits for `lesson` in `folder`."""
    return folder / lesson.filename


def _edited(lesson: curriculum.Lesson, path: Path) -> bool:
    if lesson.is_question_list:
        from m2t import questions

        return questions.any_answered(path)
    marker = f'raise NotImplementedError("{lesson.tag}:'
    return marker not in path.read_text(encoding="utf-8")


def status(lesson: curriculum.Lesson, folder: Path, state: dict) -> Status:
    """The standing of `lesson` whose files are in `folder`, given the
    runner's saved `state` (`grading.load_state()`)."""
    path = lesson_file(lesson, folder)
    if not path.exists():
        return Status("missing", text("status.missing"))
    if not lesson.grader.exists():
        return Status("no_grader", text("status.no_grader"))
    last = state.get(lesson.module) or {}
    numbers = {}
    stale = False
    if last.get("checks"):
        numbers = {
            "passed": last["passed"],
            "checks": last["checks"],
            "score": last["score"],
            "max_score": last["max_score"],
        }
        stale = path.stat().st_mtime > last.get("time", 0)
    if last.get("status") == "passed":
        label = text(
            "status.done_points",
            score=f"{last['score']:g}",
            most=f"{last['max_score']:g}",
        )
        return Status("done", label, edited_since_grade=stale, **numbers)
    if last.get("passed"):
        label = text(
            "status.in_progress_checks",
            passed=last["passed"],
            checks=last["checks"],
        )
        return Status("in_progress", label, edited_since_grade=stale, **numbers)
    if _edited(lesson, path):
        return Status("in_progress", text("status.in_progress"), **numbers)
    return Status("not_started", text("status.not_started"), **numbers)


def statuses(
    folder: Path, state: dict
) -> list[tuple[curriculum.Lesson, Status]]:
    """Every lesson of the course, in order, with its standing."""
    return [(x, status(x, folder, state)) for x in curriculum.lessons()]


def here(
    rows: list[tuple[curriculum.Lesson, Status]],
) -> curriculum.Lesson | None:
    """Where the student is: the first lesson, in course order, not done
    (where `m2t watch` starts); None when every lesson is done."""
    return next(
        (x for x, s in rows if s.kind in ("in_progress", "not_started")), None
    )


def bar(rows: list[tuple[curriculum.Lesson, Status]], width: int = 40) -> str:
    """`[#######~~~~------]`: done, in progress, the rest."""
    total = len(rows) or 1
    done = sum(s.kind == "done" for _, s in rows)
    going = sum(s.kind == "in_progress" for _, s in rows)
    n_done = round(width * done / total)
    n_going = round(width * (done + going) / total) - n_done
    return (
        "["
        + "#" * n_done
        + "~" * n_going
        + "-" * (width - n_done - n_going)
        + "]"
    )


def counted(rows: list[tuple[curriculum.Lesson, Status]]) -> str:
    """What a count over `rows` counts, as `m2t progress` and the watch's
    footer say it: " (of 24 lessons and the question list)"."""
    lessons = sum(not x.is_question_list for x, _ in rows)
    key = (
        "progress.of_course"
        if any(x.is_question_list for x, _ in rows)
        else "progress.of_lessons"
    )
    return text(key, lessons=lessons)


def render(rows: list[tuple[curriculum.Lesson, Status]]) -> str:
    """What `m2t progress` prints: the bar, the counts, the table."""
    counts = {
        kind: sum(s.kind == kind for _, s in rows)
        for kind in ("done", "in_progress", "not_started")
    }
    unavailable = len(rows) - sum(counts.values())
    score = sum(s.score or 0 for _, s in rows)
    most = sum(s.max_score or 0 for _, s in rows)
    summary = text(
        "progress.summary",
        done=counts["done"],
        total=len(rows),
        in_progress=counts["in_progress"],
        not_started=counts["not_started"],
    )
    if unavailable:
        summary += text("progress.unavailable", count=unavailable)
    summary += counted(rows)
    lines = [
        text("progress.line", bar=bar(rows), summary=summary),
        text("progress.points", score=f"{score:g}", most=f"{most:g}")
        if most
        else text("progress.no_points"),
        "",
    ]
    table = [
        tuple(
            text(f"table.{c}")
            for c in ("lesson", "title", "status", "checks", "points")
        )
    ]
    for lesson, s in rows:
        label = text(f"status.{s.kind}")
        if s.edited_since_grade:
            label += text("status.edited_since")
        checks = f"{s.passed}/{s.checks}" if s.checks else "-"
        points = f"{s.score:g}/{s.max_score:g}" if s.checks else "-"
        table.append((lesson.tag, i18n.title(lesson), label, checks, points))
    widths = [max(i18n.columns(row[i]) for row in table) for i in range(5)]
    for i, row in enumerate(table):
        lines.append(
            "  ".join(
                i18n.ljust(c, w) for c, w in zip(row, widths, strict=True)
            ).rstrip()
        )
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    following = here(rows)
    if following:
        lines += [
            "",
            text(
                "progress.next",
                tag=following.tag,
                title=i18n.title(following),
                arg=following.arg,
            ),
        ]
    return "\n".join(lines)
