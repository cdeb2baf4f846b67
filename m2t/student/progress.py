"""Where the student stands: each lesson done, in progress or not started,
from the last grade the runner saved (`.m2t/state.json`) and the lesson
file itself. `m2t list` prints the status column; `m2t progress` a bar and
a table with points."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from m2t import curriculum


@dataclasses.dataclass(frozen=True)
class Status:
    """One lesson's standing.

    `kind` is done, in_progress, not_started, missing (no file) or
    no_grader; `label` is what `m2t list` shows; the numbers come from the
    last grade (None when never graded).
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
        return Status("missing", "missing")
    if not lesson.grader.exists():
        return Status("no_grader", "no grader yet")
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
        label = f"done ({last['score']:g}/{last['max_score']:g})"
        return Status("done", label, edited_since_grade=stale, **numbers)
    if last.get("passed"):
        label = f"in progress ({last['passed']}/{last['checks']} checks)"
        return Status("in_progress", label, edited_since_grade=stale, **numbers)
    if _edited(lesson, path):
        return Status("in_progress", "in progress", **numbers)
    return Status("not_started", "not started", **numbers)


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


def render(rows: list[tuple[curriculum.Lesson, Status]]) -> str:
    """What `m2t progress` prints: the bar, the counts, the table."""
    counts = {
        kind: sum(s.kind == kind for _, s in rows)
        for kind in ("done", "in_progress", "not_started")
    }
    unavailable = len(rows) - sum(counts.values())
    score = sum(s.score or 0 for _, s in rows)
    most = sum(s.max_score or 0 for _, s in rows)
    summary = (
        f"{counts['done']}/{len(rows)} done, "
        f"{counts['in_progress']} in progress, "
        f"{counts['not_started']} not started"
    )
    if unavailable:
        summary += f", {unavailable} not available yet"
    lines = [
        f"progress {bar(rows)} {summary}",
        f"points   {score:g}/{most:g} (of the lessons graded so far)"
        if most
        else "points   none yet: `m2t watch` or `m2t grade` grades your "
        "lessons",
        "",
    ]
    table = [("lesson", "title", "status", "checks", "points")]
    for lesson, s in rows:
        label = {
            "done": "done",
            "in_progress": "in progress",
            "not_started": "not started",
            "missing": "missing",
            "no_grader": "no grader yet",
        }[s.kind]
        if s.edited_since_grade:
            label += " (edited since)"
        checks = f"{s.passed}/{s.checks}" if s.checks else "-"
        points = f"{s.score:g}/{s.max_score:g}" if s.checks else "-"
        table.append((lesson.tag, lesson.title, label, checks, points))
    widths = [max(len(row[i]) for row in table) for i in range(5)]
    for i, row in enumerate(table):
        lines.append(
            "  ".join(
                c.ljust(w) for c, w in zip(row, widths, strict=True)
            ).rstrip()
        )
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    following = here(rows)
    if following:
        lines += [
            "",
            f"next: {following.tag} {following.title}: `m2t watch "
            f"{following.arg}` regrades it on every save.",
        ]
    return "\n".join(lines)
