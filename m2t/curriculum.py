"""The course's table of contents, read from `curriculum.toml`: the
numbered lessons (`[[lesson]]` tables, in order) and the question list (the
`[questions]` table), which comes after them.

Code that treats the question list differently asks the `Lesson` (its
`kind`, `filename`, `reference`), never compares names.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from m2t import ROOT
from m2t import i18n
from m2t.settings import tomllib

CODE = "code"
"""A numbered lesson: the student fills in `lessons/<module>.py`."""

QUESTIONS = "questions"
"""The question list: the student answers in `lessons/answers.toml`."""


@dataclasses.dataclass(frozen=True)
class Lesson:
    """One unit of the course: a lesson (`id` "16", `module`
    "l16_attention_scoring") or the question list (`id` "", `module`
    "questions", `kind` QUESTIONS).

    `objects` are the names the lesson's module must define (the self-check
    looks for each in the solution and the skeleton). A capstone's `parts`
    are the modules of the earlier lessons it is built from: graded with
    it, they are staged and mutated with it. `timeout`: the seconds one
    of its checks (or probes) may run, where a lesson needs more than
    `m2t grade --timeout` (a capstone's training).
    """

    id: str
    module: str
    title: str
    objects: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()
    hints_zh: tuple[str, ...] = ()
    kind: str = CODE
    parts: tuple[str, ...] = ()
    timeout: float | None = None

    @property
    def is_question_list(self) -> bool:
        return self.kind == QUESTIONS

    @property
    def tag(self) -> str:
        """The short name used in messages: "l16", or "questions"."""
        return self.module if self.is_question_list else f"l{self.id}"

    @property
    def arg(self) -> str:
        """How a command names it: `m2t watch 16`, `m2t grade questions`."""
        return self.module if self.is_question_list else self.id

    @property
    def filename(self) -> str:
        """The file the student edits in lessons/ (or a submission)."""
        return "answers.toml" if self.is_question_list else f"{self.module}.py"

    @property
    def reference(self) -> Path:
        """The reference the solutions are graded from (absent in the
        student edition)."""
        return ROOT / "solutions" / self.filename

    @property
    def grader(self) -> Path:
        return ROOT / "graders" / f"test_{self.module}.py"


def _entry(entry: dict, kind: str) -> Lesson:
    return Lesson(
        id=entry.get("id", ""),
        module=entry["module"],
        title=entry["title"],
        objects=tuple(entry.get("objects", ())),
        hints=tuple(entry.get("hints", ())),
        hints_zh=tuple(entry.get("hints_zh", ())),
        kind=kind,
        parts=tuple(entry.get("parts", ())),
        timeout=entry.get("timeout"),
    )


@cache
def lessons(path: Path | None = None) -> tuple[Lesson, ...]:
    """The course in order: every lesson, then the question list.

    Raises:
        ValueError: a lesson id that is not two digits, or repeated.
    """
    path = path or ROOT / "curriculum.toml"
    with open(path, "rb") as f:
        data = tomllib.load(f)
    found = [_entry(entry, CODE) for entry in data["lesson"]]
    ids = [lesson.id for lesson in found]
    for lesson in found:
        if not re.fullmatch(r"\d\d", lesson.id) or ids.count(lesson.id) > 1:
            raise ValueError(
                f"curriculum.toml: lesson id {lesson.id!r} of "
                f"{lesson.module} must be two digits and unique"
            )
    if "questions" in data:
        found.append(_entry(data["questions"], QUESTIONS))
    return tuple(found)


def question_list() -> Lesson | None:
    """The question list, or None when the course has none."""
    return next((x for x in lessons() if x.is_question_list), None)


def number(lesson: Lesson) -> int:
    """A lesson's place in the course, from 1, in curriculum.toml's order
    (not its id: lesson 21 comes right after lesson 01); the question list
    comes last. Gradescope sorts the checks by it."""
    modules = [x.module for x in lessons()]
    if lesson.module not in modules:
        raise ValueError(f"{lesson.module} is not in curriculum.toml")
    return 1 + modules.index(lesson.module)


def find(name: str) -> Lesson:
    """Look a lesson up by `16`, `l16`, `l16_attention_scoring`, or the
    question list by `questions`.

    Raises:
        ValueError: naming `name` and the lessons there are.
    """
    key = name.strip().lower()
    match = re.fullmatch(r"l?(\d{1,2})(_\w+)?", key)
    for lesson in lessons():
        if key == lesson.module or (
            match
            and not lesson.is_question_list
            and int(match.group(1)) == int(lesson.id)
            and (match.group(2) is None or key == lesson.module)
        ):
            return lesson
    known = ", ".join(lesson.tag for lesson in lessons())
    raise ValueError(
        i18n.text("cli.unknown_lesson", name=repr(name), known=known)
    )


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
