"""The strip: a copy of the graders without their judge-side references.

The grading worker imports the grader modules to run their probes, and the
student edition ships the graders; neither may hold the code that computes
what a check expects (DESIGN principle 9). One transform does both:

* every function decorated with `@reference` (`graders.lib.fixtures`) keeps
  its signature, decorators and docstring, and its body becomes one
  `raise RuntimeError(...)`;
* the modules in `REFERENCE_MODULES` hold nothing but references: every
  top-level function in them is stripped alike (their constants, type
  aliases, classes and the helpers they call while loading stay, so what
  imports them still imports).

The transform works on the source text (comments and layout elsewhere are
kept) and never imports what it strips.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Iterable
from pathlib import Path

REFERENCE_MODULES = (
    "graders/lib/references.py",
    "graders/lib/cnn_references.py",
    "graders/lib/tapes.py",
    "m2t/questions/experiments.py",
)
"""Modules (relative, POSIX) whose every top-level function is a
reference: the float64 NumPy references the graders share, the judge's
tape gradients, and the question list's experiments (BLEU among them)."""

DECORATOR = "reference"
"""The name of the marking decorator (`graders.lib.fixtures.reference`)."""


def _marked(node: ast.AST) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Name) and target.id == DECORATOR:
            return True
        if isinstance(target, ast.Attribute) and target.attr == DECORATOR:
            return True
    return False


def _targets(tree: ast.Module, whole: bool) -> list[ast.FunctionDef]:
    """The outermost functions to strip, in source order. In a reference
    module (`whole`), a function the module itself calls while it loads
    (to build a table, say) stays: the module must still import."""
    found: list[ast.FunctionDef] = []
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    at_load = {
        call.func.id
        for stmt in tree.body
        if not isinstance(stmt, defs)
        for call in ast.walk(stmt)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
    }

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            is_def = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if is_def and (
                (whole and top and child.name not in at_load) or _marked(child)
            ):
                found.append(child)  # nested defs go with it
                continue
            visit(child, top=False)

    visit(tree, top=True)
    return found


def strip_source(text: str, whole: bool = False, where: str = "") -> str:
    """`text` (a Python module) with each reference's body replaced.

    Args:
        text: the module's source.
        whole: strip every top-level function (a reference module), not
            only those marked `@reference`.
        where: the file's name, for messages.

    Returns:
        The new source: same lines outside the stripped bodies.

    Raises:
        ValueError: `text` does not parse, or a reference's body starts on
            its `def` line (nothing to cut by line).
    """
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ValueError(
            f"strip: {where or 'text'} does not parse: {exc}"
        ) from None
    lines = text.splitlines(keepends=True)
    for node in reversed(_targets(tree, whole)):
        body = node.body
        keep = (
            1
            if isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
            else 0
        )
        if body[0].lineno == node.lineno:
            raise ValueError(
                f"strip: {where}:{node.lineno} {node.name}: a one-line body "
                "cannot be stripped (put it on its own line)"
            )
        start = body[keep].lineno - 1 if keep < len(body) else None
        if start is None:  # a docstring only: nothing to withhold
            continue
        indent = " " * body[0].col_offset
        why = f"{node.name} is withheld: it runs in the judge only"
        stub = f'{indent}raise RuntimeError("{why}")\n'

        lines[start : node.end_lineno] = [stub]
    return "".join(lines)


def strip_file(path: Path, rel: str) -> bool:
    """Strip `path` (at `rel` in its tree) in place; True if it changed."""
    text = path.read_text(encoding="utf-8")
    whole = rel in REFERENCE_MODULES
    if not whole and DECORATOR not in text:
        return False
    new = strip_source(text, whole=whole, where=rel)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def strip_tree(
    root: Path, folders: Iterable[str] = ("graders", "m2t")
) -> list[str]:
    """Strip every Python file under `root`/`folders` in place (a copy of
    the repository's trusted code); returns the relative paths changed."""
    changed = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if strip_file(path, rel):
                changed.append(rel)
    return changed


def _ignore(folder: str, names: list[str]) -> set[str]:
    """Caches, and graders/fixtures/ (the public seed's expected values:
    no copy a student's code reads holds them)."""
    skip = {n for n in names if n == "__pycache__" or n.endswith(".pyc")}
    if Path(folder).name == "graders" and "fixtures" in names:
        skip.add("fixtures")
    return skip


def stripped_copy(source: Path, dest: Path, names: Iterable[str]) -> Path:
    """Copy the folders `names` of `source` to `dest` (no caches) and strip
    the copy; returns `dest`."""
    for name in names:
        if (source / name).is_dir():
            shutil.copytree(
                source / name,
                dest / name,
                ignore=_ignore,
            )
    strip_tree(dest, [n for n in names if (dest / n).is_dir()])
    return dest
