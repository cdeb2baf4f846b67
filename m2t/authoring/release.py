"""`m2t release`: the student edition, and the scanner that proves it holds
no solution, no answer key and nothing unexpected.

Only files on the allow-list are copied; the lesson files are generated from
`solutions/` and the answers file is the blank template, whatever the
working tree's `lessons/` holds. The edition is written to a temporary
folder and moved into place only when the scan passed.

The scanner fails the release if any file is off the list, if any
`__pycache__` or `.pyc` is there, if a file is byte-identical to one under
`solutions/` (keys, mutants), if a long string of an instructor-side TOML
file (an answer explanation) appears, or if any Python file holds the body
of a solution region (matched by AST fingerprint, so reformatting or new
comments do not hide it), or if a grader still holds the body of a
reference: the edition's graders are stripped (`m2t.grading.strip`) and
carry fixtures instead (graders/fixtures/, `m2t dev make-fixtures`: the
references' outputs on the public seed's inputs).
"""

from __future__ import annotations

import ast
import fnmatch
import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from m2t import ROOT
from m2t import curriculum
from m2t import settings
from m2t.authoring import make_lessons
from m2t.authoring.make_lessons import BEGIN
from m2t.authoring.make_lessons import END
from m2t.grading import classroom
from m2t.grading import strip
from m2t.settings import tomllib
from m2t.student import reset

ALLOW = (
    "README.md",
    "README.zh.md",
    "pyproject.toml",
    "curriculum.toml",
    ".gitignore",
    ".github/workflows/grade.yml",
    "lessons/__init__.py",
    f"lessons/{settings.LESSON_GLOB}",
    "lessons/notes/*.md",
    "lessons/hints/*.toml",
    "lessons/answers.toml",
    "graders/*.py",
    "graders/*.toml",
    "graders/fixtures/*.json",
    "graders/fixtures/*.npz",
    "m2t_data/*.py",
    "m2t_data/*/*.py",
    "m2t_data/README.md",
    "m2t/*.py",
    "m2t/*/*.py",
    "m2t/messages/*.toml",
    "notebooks/*.py",
    "notebooks/*.md",
    f"{settings.SKELETONS.relative_to(ROOT).as_posix()}/*.py",
)
"""Paths (relative, POSIX) that may be in the student edition (`*`
matches across folders: `graders/*.py` takes graders/lib/ too)."""

INSTRUCTOR_ONLY = ("m2t/authoring/*",)
"""Paths ALLOW takes that stay out all the same: the authoring commands
(make-lessons, check, mutants, release, new-lesson) need solutions/."""

SOURCES = (
    "pyproject.toml",
    "curriculum.toml",
    ".gitignore",
    "lessons",
    "graders",
    "m2t_data",
    "m2t",
    "notebooks",
)
"""What is copied from the repository (then filtered by ALLOW)."""

TEMPLATES = ROOT / "m2t" / "authoring" / "templates"
"""The student README and the Classroom workflow the edition gets."""

ANSWERS = "lessons/answers.toml"
"""The answers file: the edition gets the blank template."""

MIN_REGION_NODES = 12
"""A region smaller than this many AST nodes is too generic to fingerprint."""


def allowed(rel: str) -> bool:
    """May `rel` (relative, POSIX) be in the student edition?"""
    return any(fnmatch.fnmatchcase(rel, p) for p in ALLOW) and not any(
        fnmatch.fnmatchcase(rel, p) for p in INSTRUCTOR_ONLY
    )


def _files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() or path.is_symlink():
            yield path


def build(out: Path) -> list[str]:
    """Write the student edition to `out` (which must not exist or be
    empty); returns the scanner's problems (empty when the release is
    clean).

    The edition is written to a temporary folder beside `out` and moved
    into place only when the scan found nothing: a failed release leaves
    no folder (and an empty `out` as it was). Lesson files are generated
    from `solutions/` and the answers file is the blank template, whatever
    the working tree's `lessons/` holds (an instructor who tried the
    exercises in this clone releases pristine skeletons).
    """
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"--out {str(out)!r}: the folder is not empty")
    out.parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        _write(temp)
        problems = scan(temp)
        if not problems:
            if out.exists():
                out.rmdir()
            temp.rename(out)
        return problems
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _write(out: Path) -> None:
    """The edition's files, in the empty folder `out`."""
    from m2t import questions

    generated = f"lessons/{settings.LESSON_GLOB}"
    for name in SOURCES:
        source = ROOT / name
        if source.is_file():
            shutil.copy2(source, out / name)
        elif source.is_dir():
            for path in _files(source):
                rel = path.relative_to(ROOT).as_posix()
                if (
                    "__pycache__" in rel
                    or not allowed(rel)
                    or rel == ANSWERS
                    or fnmatch.fnmatchcase(rel, generated)
                ):
                    continue
                (out / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, out / rel)
    # the lessons as the generator writes them, never the working tree's
    for fname, text in make_lessons.expected(ROOT / "solutions").items():
        (out / "lessons" / fname).write_text(text, encoding="utf-8")
    (out / ANSWERS).write_text(questions.template(), encoding="utf-8")
    shutil.copy2(TEMPLATES / "README.student.md", out / "README.md")
    shutil.copy2(TEMPLATES / "README.student.zh.md", out / "README.zh.md")
    workflow = out / ".github" / "workflows" / "grade.yml"
    workflow.parent.mkdir(parents=True, exist_ok=True)
    template = (TEMPLATES / "classroom.yml").read_text(encoding="utf-8")
    text = classroom.workflow(template, curriculum.lessons())
    workflow.write_text(text, encoding="utf-8")
    # pristine skeletons for `m2t reset` (the edition has no generator input)
    reset.write_skeletons(
        ROOT / "solutions", out / settings.SKELETONS.relative_to(ROOT)
    )
    # fixtures, not references: every @reference body and the reference
    # modules of graders/lib are stripped, and the marker puts the edition's
    # references in lookup mode (graders.lib.fixtures)
    strip.strip_tree(out, ["graders"])
    fixtures = out / "graders" / "fixtures"
    fixtures.mkdir(parents=True, exist_ok=True)
    (fixtures / "edition.json").write_text(
        json.dumps({"seed": settings.GRADER_SEED}) + "\n"
    )
    ignore = out / ".gitignore"
    lines = ignore.read_text().splitlines() if ignore.exists() else []
    lines = [x for x in lines if x.strip() not in (".m2t/", "/.m2t/")]
    # the skeletons and the student's language (Classroom and Gradescope
    # report in it) are committed; the rest of .m2t/ is the student's state
    kept = ["!/.m2t/skeletons/", "!/.m2t/lang"]
    ignore.write_text("\n".join([*lines, "/.m2t/*", *kept, ""]))


# ------------------------------------------------------------- scanner
def _dump(nodes: list[ast.stmt]) -> str:
    return "\n".join(ast.dump(n, include_attributes=False) for n in nodes)


def _bodies(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody", "handlers"):
            value = getattr(node, field, None)
            if (
                isinstance(value, list)
                and value
                and isinstance(value[0], ast.stmt)
            ):
                yield value


def fingerprints(
    solutions: Path = ROOT / "solutions",
) -> dict[str, tuple[int, str]]:
    """AST fingerprint of every solution region: `file:line` -> (number of
    statements, dump)."""
    found = {}
    for path in sorted(solutions.glob(settings.LESSON_GLOB)):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        tree = ast.parse(text)
        starts = [
            i + 1 for i, line in enumerate(lines) if line.strip() == BEGIN
        ]
        ends = [i + 1 for i, line in enumerate(lines) if line.strip() == END]
        for start, end in zip(starts, ends, strict=False):
            for body in _bodies(tree):
                stmts = [s for s in body if start < s.lineno < end]
                if stmts:
                    nodes = sum(len(list(ast.walk(s))) for s in stmts)
                    if nodes >= MIN_REGION_NODES:
                        found[f"{path.name}:{start}"] = (
                            len(stmts),
                            _dump(stmts),
                        )
                    break
    return found


def _key_strings(solutions: Path) -> set[str]:
    """Long strings of instructor-side TOML files (explanations, keys)."""
    strings: set[str] = set()

    def walk(value) -> None:
        if isinstance(value, str) and len(value) >= 40:
            strings.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in solutions.rglob("*.toml"):
        if path.parent.name == "mutants":
            continue
        try:
            with open(path, "rb") as f:
                walk(tomllib.load(f))
        except (OSError, tomllib.TOMLDecodeError):
            continue
    return strings


def scan(folder: Path, solutions: Path = ROOT / "solutions") -> list[str]:
    """Everything in `folder` that must not be in a student edition."""
    folder = Path(folder)
    problems = []
    hashes = {
        hashlib.sha256(p.read_bytes()).hexdigest(): p.relative_to(solutions)
        for p in _files(solutions)
        if p.is_file() and "__pycache__" not in p.parts
    }
    regions = fingerprints(solutions)
    key_strings = _key_strings(solutions)
    for path in _files(folder):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            problems.append(f"{rel}: a symbolic link")
            continue
        if "__pycache__" in rel.split("/") or rel.endswith((".pyc", ".pyo")):
            problems.append(f"{rel}: compiled Python")
            continue
        if not allowed(rel):
            problems.append(f"{rel}: not on the release allow-list")
        data = path.read_bytes()
        twin = hashes.get(hashlib.sha256(data).hexdigest())
        if twin is not None:
            problems.append(f"{rel}: identical to solutions/{twin.as_posix()}")
        text = data.decode("utf-8", errors="replace")
        for key in key_strings:
            if key in text:
                problems.append(
                    f"{rel}: holds an answer-key text ({key[:40]!r}...)"
                )
                break
        if rel.endswith(".py"):
            problems += [f"{rel}: {p}" for p in _solution_bodies(text, regions)]
        if rel.startswith("graders/") and rel.endswith(".py"):
            try:
                whole = rel in strip.REFERENCE_MODULES
                if strip.strip_source(text, whole=whole) != text:
                    problems.append(f"{rel}: holds the body of a reference")
            except ValueError as exc:
                problems.append(f"{rel}: {exc}")
    return problems


def _solution_bodies(
    text: str, regions: dict[str, tuple[int, str]]
) -> list[str]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ["does not parse: cannot prove it holds no solution"]
    by_first: dict[str, list[tuple[str, list[str]]]] = {}
    for where, (_, dump) in regions.items():
        stmts = dump.split("\n")
        by_first.setdefault(stmts[0], []).append((where, stmts))
    found = []
    for body in _bodies(tree):
        dumps = [ast.dump(s, include_attributes=False) for s in body]
        for i, first in enumerate(dumps):
            for where, stmts in by_first.get(first, ()):
                if dumps[i : i + len(stmts)] == stmts:
                    found.append(
                        f"line {body[i].lineno} holds the body of the "
                        f"solution region at solutions/{where}"
                    )
    return found
