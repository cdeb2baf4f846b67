"""Generate lessons/ from solutions/: the single source of every exercise.

Each region between `# BEGIN SOLUTION` and `# END SOLUTION` (same
indentation, directly under a `# TODO(lNN): ...` spec) is cut and replaced
by `raise NotImplementedError("lNN: <Class.method>")`. Anything else that
looks like a marker is refused, so marker syntax cannot drift.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from m2t import ROOT

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"
_MARKER = re.compile(r"#\s*(BEGIN|END)\b", re.IGNORECASE)
_LESSON_FILE = re.compile(r"l(\d\d)_\w+\.py")

HEADER = (
    "# Your exercise file: replace each `raise NotImplementedError` below its\n"
    "# TODO with your code, then run `m2t grade {tag}`.\n"
    "# (Generated from solutions/{name} by `m2t make-lessons`.)\n"
)


class MarkerError(ValueError):
    """A solution file whose markers cannot be cut cleanly."""


def _qualnames(tree: ast.Module) -> list[tuple[int, int, str]]:
    """(first line, last line, qualified name) of every function."""
    spans: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                spans.append((child.lineno, child.end_lineno or 0, name))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return spans


def _enclosing(spans: list[tuple[int, int, str]], line: int) -> str | None:
    inside = [s for s in spans if s[0] <= line <= s[1]]
    return max(inside, key=lambda s: s[0])[2] if inside else None


def cut(source: str, name: str) -> str:
    """The skeleton of one solution file's text.

    Args:
        source: the solution module's text.
        name: its file name, `lNN_topic.py` (used for the tag and messages).

    Raises:
        MarkerError: an unknown, unbalanced or misplaced marker, or a region
            without a `# TODO(lNN)` spec above it; the message names
            `name:line`.
    """
    match = _LESSON_FILE.fullmatch(name)
    if not match:
        raise MarkerError(f"{name}: not a lesson file name (lNN_topic.py)")
    tag = f"l{match.group(1)}"
    spans = _qualnames(ast.parse(source, filename=name))
    lines = source.splitlines(keepends=True)
    out: list[str] = [HEADER.format(tag=tag, name=name)]
    i = 0
    regions = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if _MARKER.match(stripped) and stripped != BEGIN:
            raise MarkerError(
                f"{name}:{i + 1}: unexpected marker {stripped!r} "
                f"(only {BEGIN!r} ... {END!r} pairs are allowed)"
            )
        if stripped != BEGIN:
            out.append(line)
            i += 1
            continue
        indent = line[: len(line) - len(line.lstrip())]
        todo = i - 1
        while todo >= 0 and lines[todo].strip().startswith("#"):
            if lines[todo].strip().startswith(f"# TODO({tag})"):
                break
            todo -= 1
        if todo < 0 or not lines[todo].strip().startswith(f"# TODO({tag})"):
            raise MarkerError(
                f"{name}:{i + 1}: {BEGIN} needs a `# TODO({tag}): ...` spec "
                "comment directly above it"
            )
        j = i + 1
        while j < len(lines):
            inner = lines[j].strip()
            if inner == END:
                break
            if _MARKER.match(inner):
                raise MarkerError(
                    f"{name}:{j + 1}: marker {inner!r} inside the region "
                    f"opened at line {i + 1}"
                )
            j += 1
        if j == len(lines):
            raise MarkerError(f"{name}:{i + 1}: {BEGIN} without {END}")
        end_indent = lines[j][: len(lines[j]) - len(lines[j].lstrip())]
        if end_indent != indent:
            raise MarkerError(
                f"{name}:{j + 1}: {END} is not indented like the "
                f"{BEGIN} at line {i + 1}"
            )
        where = _enclosing(spans, i + 1) or "module"
        out.append(f'{indent}raise NotImplementedError("{tag}: {where}")\n')
        regions += 1
        i = j + 1
    if regions == 0:
        raise MarkerError(f"{name}: no {BEGIN} region: nothing to exercise")
    return "".join(out)


def expected(
    solutions: Path = ROOT / "solutions",
) -> dict[str, str]:
    """File name -> the skeleton text generated from `solutions`."""
    return {
        path.name: cut(path.read_text(encoding="utf-8"), path.name)
        for path in sorted(solutions.glob("l[0-9][0-9]_*.py"))
    }


def stale(
    solutions: Path = ROOT / "solutions", lessons: Path = ROOT / "lessons"
) -> list[str]:
    """Lesson files that differ from what the generator writes (or are
    missing, or have no solution)."""
    want = expected(solutions)
    have = {p.name for p in lessons.glob("l[0-9][0-9]_*.py")}
    problems = []
    for fname, text in want.items():
        path = lessons / fname
        if not path.exists():
            problems.append(f"lessons/{fname}: missing")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"lessons/{fname}: differs from solutions/{fname}")
    problems += [
        f"lessons/{fname}: has no solutions/{fname}"
        for fname in sorted(have - set(want))
    ]
    return problems


def write(
    solutions: Path = ROOT / "solutions",
    lessons: Path = ROOT / "lessons",
    only: set[str] | None = None,
) -> list[Path]:
    """Write the skeletons (all, or the file names in `only`); returns the
    files that changed."""
    changed = []
    for fname, text in expected(solutions).items():
        if only is not None and fname not in only:
            continue
        path = lessons / fname
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed
