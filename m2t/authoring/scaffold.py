"""A lesson's files, in one place: `footprint` names them (the self-check
verifies each is there) and `new_lesson` writes them all, from the
templates in `m2t/authoring/templates/lesson/`, with the lesson's entry in
curriculum.toml (`m2t dev new-lesson NN topic`).
"""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

from m2t import ROOT
from m2t import curriculum

TEMPLATES = Path(__file__).resolve().parent / "templates" / "lesson"

SOURCES = {
    "solution": "solution.py.tmpl",
    "grader": "grader.py.tmpl",
    "mutants": "mutants.toml.tmpl",
    "notes": "notes.md.tmpl",
    "notebook": "notebook.py.tmpl",
    "questions": "questions.toml.tmpl",
    "key": "key.toml.tmpl",
    "hints": "hints.toml.tmpl",
}
"""Each file `new_lesson` writes -> its template; the skeleton
lessons/<module>.py is generated from the solution instead."""

NOTES_SECTIONS = ("## English", "## 中文")
"""The headings every lesson's notes carry."""


def footprint(lesson: curriculum.Lesson, root: Path = ROOT) -> dict[str, Path]:
    """Every file of a numbered lesson, by role, in the order a newcomer
    writes them:

    solution   solutions/lNN_topic.py, the reference with its TODO regions
    skeleton   lessons/lNN_topic.py (generated: `m2t make-lessons`)
    grader     graders/test_lNN_topic.py
    mutants    solutions/mutants/lNN_topic.toml, its known mistakes
    hints      lessons/hints/lNN_topic.toml, one ladder per TODO
    notes      lessons/notes/lNN_topic.md, English and Chinese
    notebook   notebooks/lNN_topic.py (jupytext; `m2t notebook NN`)
    questions  graders/questions/lNN.toml, its part of the question bank
    key        solutions/questions_key/lNN.toml, their answers

    Raises:
        ValueError: for the question list, whose files are the bank's.
    """
    if lesson.is_question_list:
        raise ValueError("the question list has no lesson footprint")
    m, n = lesson.module, lesson.id
    return {
        "solution": root / "solutions" / f"{m}.py",
        "skeleton": root / "lessons" / f"{m}.py",
        "grader": root / "graders" / f"test_{m}.py",
        "mutants": root / "solutions" / "mutants" / f"{m}.toml",
        "hints": root / "lessons" / "hints" / f"{m}.toml",
        "notes": root / "lessons" / "notes" / f"{m}.md",
        "notebook": root / "notebooks" / f"{m}.py",
        "questions": root / "graders" / "questions" / f"l{n}.toml",
        "key": root / "solutions" / "questions_key" / f"l{n}.toml",
    }


def _lesson_id(number: str) -> str:
    if not re.fullmatch(r"\d{1,2}", number) or int(number) == 0:
        raise ValueError(f"lesson number {number!r}: want 1 to 99")
    return f"{int(number):02d}"


def _topic(topic: str) -> str:
    if not re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", topic):
        raise ValueError(
            f"topic {topic!r}: want lower_snake_case, e.g. layer_norm"
        )
    return topic


def curriculum_entry(lesson: curriculum.Lesson) -> str:
    """The `[[lesson]]` table of `lesson`, as curriculum.toml writes it."""
    objects = ", ".join(json.dumps(x) for x in lesson.objects)
    return (
        "[[lesson]]\n"
        f"id = {json.dumps(lesson.id)}\n"
        f"module = {json.dumps(lesson.module)}\n"
        f"title = {json.dumps(lesson.title)}\n"
        f"objects = [{objects}]\n"
    )


def insert_entry(text: str, entry: str, lesson_id: str) -> str:
    """curriculum.toml's `text` with `entry` before the first lesson whose
    id is larger, else before the question list (and the comment lines
    right above it), else at the end; the rest of the text is kept as is."""
    lines = text.splitlines(keepends=True)
    at = len(lines)
    for i, line in enumerate(lines):
        if line.strip() == "[[lesson]]":
            ids = [
                re.fullmatch(r'id\s*=\s*"(\d+)"', x.strip())
                for x in lines[i + 1 : i + 4]
            ]
            found = next((m.group(1) for m in ids if m), None)
            if found is not None and int(found) > int(lesson_id):
                at = i
                break
        elif line.strip() == "[questions]":
            at = i
            while at > 0 and lines[at - 1].startswith("#"):
                at -= 1
            break
    head = "".join(lines[:at])
    if head and not head.endswith("\n\n"):
        head += "\n" if head.endswith("\n") else "\n\n"
    tail = "".join(lines[at:])
    return head + entry + ("\n" + tail if tail else "")


def new_lesson(
    number: str, topic: str, title: str | None = None, root: Path = ROOT
) -> list[Path]:
    """Write every file of lesson `number` on `topic` and its curriculum
    entry; returns the files written (curriculum.toml, then docs/specs.md,
    last).

    The solution has one TODO region around a placeholder, the grader one
    probe and one check against a reference still to write, and every
    place the author writes carries a `TODO(author)` marker: `m2t dev
    check` refuses the lesson on those markers (and nothing else) until
    each is written. docs/specs.md, where there is one, is written again
    with the new lesson's row.

    Raises:
        ValueError: a bad number or topic, a number or module the
            curriculum has, or a file that is already there (nothing is
            written then).
    """
    lesson_id, topic = _lesson_id(number), _topic(topic)
    module = f"l{lesson_id}_{topic}"
    toml = root / "curriculum.toml"
    for other in curriculum.lessons(toml):
        if other.id == lesson_id or other.module == module:
            raise ValueError(
                f"lesson {lesson_id}: curriculum.toml has {other.module}"
            )
    lesson = curriculum.Lesson(
        id=lesson_id,
        module=module,
        title=title or topic.replace("_", " ").capitalize(),
        objects=(topic,),
    )
    files = footprint(lesson, root)
    there = [p for p in files.values() if p.exists()]
    if there:
        raise ValueError(
            f"{there[0].relative_to(root)} is already there; nothing written"
        )
    values = {
        "id": lesson.id,
        "tag": lesson.tag,
        "module": module,
        "title": lesson.title,
        "fn": topic,
    }
    written = []
    for role, name in SOURCES.items():
        template = string.Template((TEMPLATES / name).read_text("utf-8"))
        path = files[role]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.substitute(values), encoding="utf-8")
        written.append(path)
    from m2t.authoring import make_lessons

    skeleton = files["skeleton"]
    skeleton.write_text(
        make_lessons.cut(files["solution"].read_text("utf-8"), skeleton.name),
        encoding="utf-8",
    )
    written.insert(1, skeleton)
    text = toml.read_text(encoding="utf-8")
    toml.write_text(
        insert_entry(text, curriculum_entry(lesson), lesson_id),
        encoding="utf-8",
    )
    written.append(toml)
    specs = root / "docs" / "specs.md"
    if specs.exists():  # the TODO figures, with the new lesson's row
        found = make_lessons.specs(root / "solutions", root / "lessons/hints")
        specs.write_text(make_lessons.specs_table(found), encoding="utf-8")
        written.append(specs)
    return written
