"""The course's table of contents, read from `curriculum.toml`."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from m2t import ROOT
from m2t.settings import tomllib


@dataclasses.dataclass(frozen=True)
class Lesson:
    """One lesson: `id` "16", `module` "l16_attention_scoring"."""

    id: str
    module: str
    title: str
    objects: tuple[str, ...]
    hints: tuple[str, ...]

    @property
    def tag(self) -> str:
        """The short name used in messages, e.g. "l16"."""
        return f"l{self.id}"

    @property
    def grader(self) -> Path:
        return ROOT / "graders" / f"test_{self.module}.py"


@cache
def lessons(path: Path | None = None) -> tuple[Lesson, ...]:
    """All lessons in course order."""
    path = path or ROOT / "curriculum.toml"
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return tuple(
        Lesson(
            id=entry["id"],
            module=entry["module"],
            title=entry["title"],
            objects=tuple(entry.get("objects", ())),
            hints=tuple(entry.get("hints", ())),
        )
        for entry in data["lesson"]
    )


def find(name: str) -> Lesson:
    """Look a lesson up by `16`, `l16` or `l16_attention_scoring`.

    Raises:
        ValueError: naming `name` and the lessons there are.
    """
    key = name.strip().lower()
    match = re.fullmatch(r"l?(\d{1,2})(_\w+)?", key)
    for lesson in lessons():
        if key == lesson.module or (
            match
            and int(match.group(1)) == int(lesson.id)
            and (match.group(2) is None or key == lesson.module)
        ):
            return lesson
    known = ", ".join(lesson.tag for lesson in lessons())
    raise ValueError(f"unknown lesson {name!r}; the lessons are: {known}")


def select(names: Sequence[str]) -> list[Lesson]:
    """The lessons `names` name (each as `find` takes it); all when empty.

    Raises:
        ValueError: naming an unknown lesson.
    """
    if not names:
        return list(lessons())
    return [find(name) for name in names]


def graded() -> tuple[Lesson, ...]:
    """The lessons that have a grader file."""
    return tuple(lesson for lesson in lessons() if lesson.grader.exists())
