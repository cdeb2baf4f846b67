"""`m2t reset LESSON`: put a lesson file back to its skeleton, keeping the
student's version in `.m2t/backups/<module>-<timestamp>.py`.

Where the skeleton comes from:

1. the full repository: generated from `solutions/<module>.py` by the
   lesson generator (`m2t.make_lessons.cut`), the single source;
2. the student edition (no solutions/): the pristine copy
   `.m2t/skeletons/<module>.py` that `m2t release` ships, written by
   `write_skeletons`.
"""

from __future__ import annotations

import time
from pathlib import Path

from m2t import ROOT
from m2t import curriculum
from m2t import i18n
from m2t import settings

SKELETONS = settings.SKELETONS
BACKUPS = settings.BACKUPS


class NoSkeleton(ValueError):
    """Neither a solution to generate from nor a pristine copy."""


def skeleton(lesson: curriculum.Lesson) -> tuple[str, str]:
    """The skeleton text of `lesson` and where it came from.

    Raises:
        NoSkeleton: naming the two places looked at.
    """
    name = f"{lesson.module}.py"
    solution = ROOT / "solutions" / name
    if solution.exists():  # the full repository: the cutter is there too
        from m2t.authoring import make_lessons

        text = make_lessons.cut(solution.read_text(encoding="utf-8"), name)
        return text, i18n.text("reset.from_solution", name=name)
    pristine = SKELETONS / name
    if pristine.exists():
        return pristine.read_text(encoding="utf-8"), f".m2t/skeletons/{name}"
    raise NoSkeleton(i18n.text("reset.no_skeleton", tag=lesson.tag, name=name))


def backup(path: Path) -> Path:
    """Copy `path` to `.m2t/backups/<stem>-<timestamp>.py`; return it."""
    BACKUPS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = BACKUPS / f"{path.stem}-{stamp}{path.suffix}"
    n = 1
    while target.exists():
        n += 1
        target = BACKUPS / f"{path.stem}-{stamp}-{n}{path.suffix}"
    target.write_bytes(path.read_bytes())
    return target


def restore(lesson: curriculum.Lesson, text: str) -> Path:
    """Write the skeleton `text` over the student's file (atomically)."""
    path = ROOT / "lessons" / f"{lesson.module}.py"
    tmp = path.with_suffix(".py.m2t-tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


def write_skeletons(solutions: Path, out: Path) -> list[Path]:
    """The pristine copies for the student edition: one skeleton per
    solution module in `solutions`, written to `out` (`m2t release` calls
    this with `<edition>/.m2t/skeletons`)."""
    from m2t.authoring import make_lessons

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in make_lessons.expected(solutions).items():
        (out / name).write_text(text, encoding="utf-8")
        written.append(out / name)
    return written
