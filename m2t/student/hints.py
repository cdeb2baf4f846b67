"""`m2t hint LESSON`: a lesson's hints, one rung of the ladder at a time.

The hints live in `curriculum.toml` (`hints = [...]` per lesson), ordered
from the idea, to the API to use, to the shapes step by step; none of them
is the code. `.m2t/hints.json` remembers how many each lesson has unlocked,
so `m2t hint 16` always shows the next one, `--all` repeats those unlocked
and `--reset` starts the ladder over.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

from m2t import ROOT
from m2t import curriculum

STATE = ROOT / ".m2t" / "hints.json"


def _load() -> dict[str, int]:
    try:
        data = json.loads(STATE.read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, int)}


def _save(data: dict[str, int]) -> None:
    try:
        STATE.parent.mkdir(exist_ok=True)
        STATE.write_text(json.dumps(data, indent=1, sort_keys=True))
    except OSError:
        pass  # a read-only checkout still shows hints


def unlocked(lesson: curriculum.Lesson) -> int:
    """How many of the lesson's hints the student has seen."""
    return min(_load().get(lesson.module, 0), len(lesson.hints))


def unlock_next(lesson: curriculum.Lesson) -> int:
    """Unlock one more hint (if any is left); return how many are unlocked."""
    data = _load()
    shown = min(data.get(lesson.module, 0) + 1, len(lesson.hints))
    data[lesson.module] = shown
    _save(data)
    return shown


def reset(lesson: curriculum.Lesson) -> None:
    """Lock every hint of the lesson again."""
    data = _load()
    if data.pop(lesson.module, None) is not None:
        _save(data)


def first_todo(lesson: curriculum.Lesson, folder: Path) -> str | None:
    """`lessons/l16_x.py:61 (masked_softmax)`: the TODO above the first
    `raise NotImplementedError` left in the student's file, or None."""
    path = folder / f"{lesson.module}.py"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    pattern = re.compile(
        rf"raise NotImplementedError\(\s*[\"']{lesson.tag}:\s*([^\"']*)"
    )
    for i, line in enumerate(lines):
        match = pattern.search(line)
        if not match:
            continue
        todo = next(
            (j for j in range(i, max(i - 60, -1), -1) if "# TODO(" in lines[j]),
            i,
        )
        try:
            shown = path.resolve().relative_to(ROOT)
        except ValueError:
            shown = path
        return f"{shown}:{todo + 1} ({match.group(1).strip()})"
    return None


def _wrap(text: str, number: int, total: int) -> str:
    head = f"  {number}/{total}  "
    return textwrap.fill(
        text,
        width=79,
        initial_indent=head,
        subsequent_indent=" " * len(head),
        break_on_hyphens=False,
    )


def render(
    lesson: curriculum.Lesson,
    shown: int,
    new: bool,
    folder: Path | None = None,
) -> str:
    """What `m2t hint` prints: the newest hint (or all unlocked ones when
    `new` is False), where the next TODO is, and what to do next."""
    total = len(lesson.hints)
    folder = folder or ROOT / "lessons"
    lines = [f"{lesson.tag} {lesson.title}"]
    todo = first_todo(lesson, folder)
    notes = ROOT / "lessons" / "notes" / f"{lesson.module}.md"
    where = (
        f"lessons/notes/{notes.name}" if notes.exists() else "the lesson notes"
    )
    if not total:
        lines.append(
            textwrap.fill(
                f"No hints for {lesson.tag} yet. The `# TODO({lesson.tag})` "
                "above each `raise NotImplementedError` is the spec: what "
                f"to compute, which ops, the shapes. Read {where} too.",
                width=79,
                initial_indent="  ",
                subsequent_indent="  ",
            )
        )
    else:
        first = shown if new else 1
        lines.append("")
        for i in range(first, shown + 1):
            lines.append(_wrap(lesson.hints[i - 1], i, total))
            lines.append("")
    if todo:
        lines.append(f"  Your next TODO: {todo}")
    if total and shown < total:
        lines.append(
            f"  Stuck still? `m2t hint {lesson.id}` shows hint "
            f"{shown + 1} of {total}."
        )
    elif total:
        lines.append(
            f"  That was the last hint. The TODO is the spec, and {where} "
            f"has the maths; `m2t hint {lesson.id} --reset` starts over."
        )
    return "\n".join(lines)
