"""The rules every lesson meets, one function each, in one place.

Each rule takes a numbered lesson (`m2t.curriculum.Lesson`, one with a
solution) and the course folder, and returns its problems: one sentence
each, naming the file and what to run or write to fix it (for a generated
file, the one command that writes it again); `[]` when the lesson meets
the rule. `m2t dev check` (`m2t check`) runs every rule before it grades
anything (`--rules-only`: the rules alone, in about a second); the tests
call the same functions, one per lesson, so the gate and the suite cannot
disagree. `RULES` lists them all: the files, hints and notes here, the
grader's and its mistakes' in `m2t.authoring.grader_rules`.

A placeholder `new-lesson` leaves is a `TODO(author)` marker, reported by
`author_todos`; the minimums a marker stands for (a catalogued mistake, a
mutant) are asked for once the file holding it has none left, so the
scaffold's lesson fails on its markers only.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable
from pathlib import Path

from m2t import ROOT
from m2t import settings
from m2t.authoring import make_lessons
from m2t.authoring import scaffold
from m2t.authoring.grader_rules import AUTHOR_TODO
from m2t.authoring.grader_rules import TEMPLATES
from m2t.authoring.grader_rules import contract_check
from m2t.authoring.grader_rules import grader_imports
from m2t.authoring.grader_rules import gradient_check
from m2t.authoring.grader_rules import mistakes_catalogued
from m2t.authoring.grader_rules import mistakes_documented
from m2t.authoring.grader_rules import mistakes_in_both_languages
from m2t.authoring.grader_rules import mutants_apply
from m2t.authoring.grader_rules import paths
from m2t.authoring.grader_rules import read
from m2t.authoring.grader_rules import references_marked
from m2t.authoring.grader_rules import shown
from m2t.authoring.grader_rules import where
from m2t.curriculum import Lesson
from m2t.student import hints

Rule = Callable[..., list[str]]

NOTES_SECTIONS = ("## English", "## 中文", "## Check yourself", "## 自测")
"""The sections of every lesson's notes, in this order."""

BOX_EN = "> **A common reading says**"
BOX_ZH = "> **常见的一种理解是**"
"""A misreading the notes correct opens so, in each language."""

HINTED_SHARE = 0.9
"""Hint rungs 2-3 (api, near) name at least this share of a region's
library calls."""

REPEAT_WORDS = 8
"""A rung sharing this many words in a row with its TODO repeats it."""

MAKE_LESSONS = "run `m2t make-lessons`"
SPECS = "run `m2t make-lessons --markdown docs/specs.md`"


# ------------------------------------------------------------- the files
def files_in_place(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """Every file of the lesson's footprint (`scaffold.footprint`) is
    there."""
    problems = []
    for role, path in paths(lesson, root).items():
        if path.exists():
            continue
        if role == "skeleton":
            fix = MAKE_LESSONS
        else:
            fix = (
                f"write it (its template: {TEMPLATES}/{scaffold.SOURCES[role]})"
            )
        problems.append(
            f"{where(lesson)}: no {role} file {shown(path, root)}: {fix}"
        )
    return problems


def objects_defined(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """Each name curriculum.toml lists for the lesson is defined at the
    top of its solution."""
    path = paths(lesson, root)["solution"]
    text = read(path)
    if text is None:
        return []  # files_in_place says so
    defined = _top_level_names(ast.parse(text))
    return [
        f"{where(lesson)}: curriculum.toml lists {name!r}, which "
        f"{shown(path, root)} does not define: define it, or take it off "
        "the lesson's `objects`"
        for name in lesson.objects
        if name not in defined
    ]


def _top_level_names(tree: ast.Module) -> set[str]:
    """The functions, classes and variables a module defines at its top."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(
            node.target, ast.Name
        ):
            names.add(node.target.id)
    return names


def author_todos(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """No `TODO(author)` marker is left in any file of the lesson (the
    skeleton's are its solution's, reported there)."""
    problems = []
    for role, path in paths(lesson, root).items():
        if role == "skeleton":
            continue
        for n, line in enumerate((read(path) or "").splitlines(), start=1):
            if AUTHOR_TODO in line:
                problems.append(
                    f"{where(lesson)}: {shown(path, root)}:{n}: "
                    f"{AUTHOR_TODO} left: write what it asks for, then "
                    "delete the marker"
                )
    return problems


# ------------------------------------------------------- hints and notes
def _ladder(lesson: Lesson, root: Path) -> tuple[hints.TodoHints, ...] | str:
    try:
        return hints.ladder(lesson.module, root / "lessons" / "hints")
    except ValueError as exc:
        return str(exc)


def _specs_key(root: Path) -> tuple:
    files = [
        *(root / "solutions").glob(settings.LESSON_GLOB),
        *(root / "lessons" / "hints").glob("*.toml"),
    ]
    return (root, *sorted((p.name, p.stat().st_mtime_ns) for p in files))


@functools.lru_cache(maxsize=4)
def _cached_specs(key: tuple) -> tuple[make_lessons.Spec, ...]:
    root = key[0]
    return tuple(
        make_lessons.specs(root / "solutions", root / "lessons" / "hints")
    )


def _specs(root: Path) -> tuple[make_lessons.Spec, ...]:
    """Every TODO's figures (`make_lessons.specs`), read once per state of
    the files."""
    return _cached_specs(_specs_key(root))


def _lesson_specs(lesson: Lesson, root: Path) -> list[make_lessons.Spec]:
    return [s for s in _specs(root) if s.lesson == lesson.module]


def hints_per_todo(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """The hints file holds one well-formed `[[todo]]` ladder per TODO of
    the solution, in file order."""
    path = paths(lesson, root)["hints"]
    if not path.exists():
        return []  # files_in_place says so
    ladder = _ladder(lesson, root)
    if isinstance(ladder, str):
        return [f"{where(lesson)}: {ladder}"]
    try:
        todos = [s.region.where for s in _lesson_specs(lesson, root)]
    except ValueError:  # a marker error: make-lessons --check names it
        return []
    have = [t.where for t in ladder]
    if have == todos:
        return []
    return [
        f"{where(lesson)}: {shown(path, root)}: one [[todo]] per TODO of "
        f"{shown(paths(lesson, root)['solution'], root)}, in file order: "
        f"want where = {todos}, the file has {have}"
    ]


def hints_in_both_languages(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """Each `[[todo]]` of the hints has its `[todo.zh]`."""
    ladder = _ladder(lesson, root)
    if isinstance(ladder, str):
        return []  # hints_per_todo says so
    lacking = [t.where for t in ladder if t.zh is None]
    if not lacking:
        return []
    path = shown(paths(lesson, root)["hints"], root)
    return [
        f"{where(lesson)}: {path}: no [todo.zh] for {', '.join(lacking)}: "
        "write the three rungs in Chinese (terms: tests/test_terms_zh.py)"
    ]


def hints_name_the_calls(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """The api and near rungs of each TODO name at least 90% of its
    region's library calls."""
    problems = []
    path = shown(paths(lesson, root)["hints"], root)
    try:
        found = _lesson_specs(lesson, root)
    except ValueError:
        return []  # hints_per_todo, make-lessons --check say so
    for spec in found:
        if spec.hinted is None or not spec.calls:
            continue
        if len(spec.hinted) < HINTED_SHARE * len(spec.calls):
            missing = sorted(set(spec.calls) - set(spec.hinted))
            problems.append(
                f"{where(lesson)}: {path} ({spec.region.where}): the api "
                f"and near rungs name {len(spec.hinted)} of "
                f"{len(spec.calls)} calls; name {missing} there"
            )
    return problems


def _words(text: str) -> list[str]:
    return re.findall(r"[\w.'\[\]]+", text.lower())


def hints_do_not_repeat_todos(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """No rung shares REPEAT_WORDS words in a row with its TODO."""
    ladder = _ladder(lesson, root)
    if isinstance(ladder, str):
        return []
    try:
        found = _lesson_specs(lesson, root)
    except ValueError:
        return []
    by_where = {t.where: t for t in ladder}
    path = shown(paths(lesson, root)["hints"], root)
    problems = []
    for spec in found:
        if spec.region.where not in by_where:
            continue  # hints_per_todo says so
        todo = _words(spec.region.todo.split(":", 1)[-1])
        runs = {
            " ".join(todo[i : i + REPEAT_WORDS])
            for i in range(len(todo) - REPEAT_WORDS + 1)
        }
        rungs = by_where[spec.region.where].rungs
        for name, rung in zip(hints.RUNGS, rungs, strict=True):
            text = " ".join(_words(rung))
            echoed = sorted(run for run in runs if run in text)
            if echoed:
                problems.append(
                    f"{where(lesson)}: {path} ({spec.region.where}): rung "
                    f"{name!r} repeats its TODO: {echoed[0]!r}; say how, "
                    "not what"
                )
    return problems


def sections(text: str) -> dict[str, str]:
    """The `## ` sections of `text`, heading -> body, in order."""
    parts = re.split(r"^(## .+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def boxes_of(text: str, opening: str) -> list[str]:
    """The quoted boxes of `text` that open with `opening`, each on one
    line."""
    pattern = r"^> \*\*" + re.escape(opening) + r".*?(?=^$|\Z)"
    return [
        " ".join(box.replace("\n>", " ").split())
        for box in re.findall(pattern, text, re.M | re.S)
    ]


def notes_in_both_languages(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """The notes have `## English`, `## 中文`, `## Check yourself` and
    `## 自测`, in this order, as many checks in each language (at least
    one), and each misreading corrected in both."""
    path = paths(lesson, root)["notes"]
    text = read(path)
    if text is None:
        return []  # files_in_place says so
    at = f"{where(lesson)}: {shown(path, root)}"
    parts = sections(text)
    if tuple(parts) != NOTES_SECTIONS:
        return [
            f"{at}: the sections are {list(parts)}; want "
            f"{list(NOTES_SECTIONS)} (its template: {TEMPLATES}/notes.md.tmpl)"
        ]
    problems = []
    bullets = [
        len(re.findall(r"^- ", parts[s], flags=re.M))
        for s in NOTES_SECTIONS[2:]
    ]
    if not bullets[0] == bullets[1] > 0:
        problems.append(
            f"{at}: {bullets[0]} checks under ## Check yourself, "
            f"{bullets[1]} under ## 自测: the same ones, at least one"
        )
    boxes = (
        parts["## English"].count(BOX_EN),
        parts["## 中文"].count(BOX_ZH),
    )
    if boxes[0] != boxes[1]:
        problems.append(
            f"{at}: {boxes[0]} misreadings in English, {boxes[1]} in "
            "Chinese: correct each in both"
        )
    for box in boxes_of(text, "A common reading"):
        if "**In fact**" not in box:
            problems.append(
                f"{at}: a misreading without **In fact**: {box[:60]}"
            )
    for box in boxes_of(text, "常见的"):
        if "**实际上**" not in box.replace(" ", ""):
            problems.append(
                f"{at}: a misreading without **实际上**: {box[:60]}"
            )
    return problems


# ------------------------------------------------------------ generated
def _table_rows(text: str) -> dict[str, str]:
    """docs/specs.md's rows, by their first cell."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            rows[line.split("|")[1].strip()] = line
    return rows


def specs_fresh(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """The lesson's row of docs/specs.md is what `make-lessons` writes."""
    try:
        want = _table_rows(make_lessons.specs_table(list(_specs(root))))
    except ValueError:
        return []  # hints_per_todo, make-lessons --check say so
    have = _table_rows(read(root / "docs" / "specs.md") or "")
    if (
        lesson.module not in want
        or have.get(lesson.module) == want[lesson.module]
    ):
        return []
    return [f"{where(lesson)}: docs/specs.md is stale: {SPECS}"]


RULES: tuple[Rule, ...] = (
    files_in_place,
    objects_defined,
    author_todos,
    grader_imports,
    references_marked,
    contract_check,
    gradient_check,
    mistakes_catalogued,
    mistakes_in_both_languages,
    mutants_apply,
    mistakes_documented,
    hints_per_todo,
    hints_in_both_languages,
    hints_name_the_calls,
    hints_do_not_repeat_todos,
    notes_in_both_languages,
    specs_fresh,
)
"""Every rule, in the order the gate reports them."""


def course(root: Path = ROOT) -> list[str]:
    """What no one lesson owns: lessons/ as `make-lessons` writes it (a
    skeleton stale or without a solution), docs/specs.md's other rows (its
    header, its totals, a lesson gone)."""
    problems = [
        f"stale: {p}: {MAKE_LESSONS}"
        for p in make_lessons.stale(root / "solutions", root / "lessons")
    ]
    try:
        found = list(_specs(root))
    except ValueError as exc:
        return [*problems, f"solutions/: {exc}"]
    modules = {spec.lesson for spec in found}
    want = make_lessons.specs_table(found).splitlines()
    have = (read(root / "docs" / "specs.md") or "").splitlines()

    def others(lines: list[str]) -> list[str]:
        return [x for x in lines if _table_rows(x).keys().isdisjoint(modules)]

    if others(want) != others(have):
        problems.append(f"docs/specs.md is stale: {SPECS}")
    return problems


def lessons_ruled(lessons: list[Lesson] | tuple[Lesson, ...]) -> list[Lesson]:
    """The lessons the rules apply to: the numbered ones with a solution."""
    return [
        x for x in lessons if not x.is_question_list and x.reference.exists()
    ]


def check(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """Every rule's problems with `lesson`, in RULES order."""
    return [problem for rule in RULES for problem in rule(lesson, root)]
