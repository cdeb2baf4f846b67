"""Generate lessons/ from solutions/: the single source of every exercise.

Each region between `# BEGIN SOLUTION` and `# END SOLUTION` (same
indentation, directly under a `# TODO(lNN): ...` spec) is cut and replaced
by `raise NotImplementedError("lNN: <Class.method>")`. Anything else that
looks like a marker is refused, so marker syntax cannot drift.

The TODO is a spec, not dictation: `specs` counts the library calls of
each region and those its TODO names, and `spec_problems` refuses a TODO
that names more than a third of them or gives no shapes in and out
(`m2t make-lessons --check`); `specs_table` is docs/specs.md.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import textwrap
from pathlib import Path

from m2t import ROOT
from m2t import settings

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


@dataclasses.dataclass(frozen=True)
class Region:
    """One solution region and the TODO above it.

    Attributes:
        where: the function it sits in, `Class.method` (or "module").
        todo: the TODO comment's text, `#`s and line breaks removed.
        code: the region's code, dedented (markers excluded).
        todo_line: the 1-based line of `# TODO(lNN)`.
        begin: the 1-based line of `# BEGIN SOLUTION`.
        end: the 1-based line of `# END SOLUTION`.
        indent: the markers' indentation.
    """

    where: str
    todo: str
    code: str
    todo_line: int
    begin: int
    end: int
    indent: str


def regions(source: str, name: str) -> list[Region]:
    """The solution regions of one solution file's text, in file order.

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
    found: list[Region] = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if _MARKER.match(stripped) and stripped != BEGIN:
            raise MarkerError(
                f"{name}:{i + 1}: unexpected marker {stripped!r} "
                f"(only {BEGIN!r} ... {END!r} pairs are allowed)"
            )
        if stripped != BEGIN:
            i += 1
            continue
        line = lines[i]
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
        comment = " ".join(x.strip().lstrip("#") for x in lines[todo:i])
        found.append(
            Region(
                where=_enclosing(spans, i + 1) or "module",
                todo=" ".join(comment.split()),
                code=textwrap.dedent("".join(lines[i + 1 : j])),
                todo_line=todo + 1,
                begin=i + 1,
                end=j + 1,
                indent=indent,
            )
        )
        i = j + 1
    if not found:
        raise MarkerError(f"{name}: no {BEGIN} region: nothing to exercise")
    return found


def cut(source: str, name: str) -> str:
    """The skeleton of one solution file's text: each region replaced by
    `raise NotImplementedError("lNN: <where>")`.

    Raises:
        MarkerError: as `regions` does.
    """
    found = regions(source, name)
    tag = name[:3]
    lines = source.splitlines(keepends=True)
    out: list[str] = [HEADER.format(tag=tag, name=name)]
    done = 0
    for region in found:
        out += lines[done : region.begin - 1]
        out.append(
            f'{region.indent}raise NotImplementedError("{tag}: '
            f'{region.where}")\n'
        )
        done = region.end
    out += lines[done:]
    return "".join(out)


def expected(
    solutions: Path = ROOT / "solutions",
) -> dict[str, str]:
    """File name -> the skeleton text generated from `solutions`."""
    return {
        path.name: cut(path.read_text(encoding="utf-8"), path.name)
        for path in sorted(solutions.glob(settings.LESSON_GLOB))
    }


def stale(
    solutions: Path = ROOT / "solutions", lessons: Path = ROOT / "lessons"
) -> list[str]:
    """Lesson files that differ from what the generator writes (or are
    missing, or have no solution)."""
    want = expected(solutions)
    have = {p.name for p in lessons.glob(settings.LESSON_GLOB)}
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


# ------------------------------------------------------------------ specs
LIBRARIES = ("ops", "keras", "layers", "tf", "np", "math")
"""The roots of the dotted calls counted as library calls (`layers` is
the `keras.layers` alias lessons 02-04 use)."""

MAX_NAMED = 1 / 3
"""A TODO may name at most this share of its region's library calls."""

_SHAPE = r"(?:\([^()]*\)|[\w.]+\[[^\]]*\]+|\b(?:int|float|str|bool|scalar)\b)"
_WORDS = r"(?:\s*[\w.~']+){0,3}"  # a name or dtype beside a shape
_IN_OUT = re.compile(rf"{_SHAPE}{_WORDS}\s*->{_WORDS}\s*{_SHAPE}")


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or not parts:
        return None
    return ".".join([node.id, *reversed(parts)])


def library_calls(code: str) -> list[str]:
    """The dotted library calls in `code` (`ops.matmul`,
    `keras.layers.Dense`, ...), one per call, in source order."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name and name.split(".")[0] in LIBRARIES:
                found.append((node.lineno, node.col_offset, name))
    return [name for *_, name in sorted(found)]


def named(calls: list[str], text: str) -> list[str]:
    """The calls whose last component appears as a word in `text`."""
    return [
        call
        for call in calls
        if re.search(
            rf"(?<!\w){re.escape(call.rsplit('.', 1)[-1])}(?!\w)", text
        )
    ]


def states_shapes(todo: str) -> bool:
    """Whether a TODO gives the shapes in and out: a `(B, D) -> (B, U)`
    (or `list[str] -> int`, or `X (B, D) -> O (B, U)`: up to three words
    may sit beside the arrow) somewhere in its text."""
    return _IN_OUT.search(todo) is not None


@dataclasses.dataclass(frozen=True)
class Spec:
    """The figures of one TODO: its region's library calls, those the
    TODO names, and those the hint rungs 2-3 name."""

    file: str
    region: Region
    calls: tuple[str, ...]
    named: tuple[str, ...]
    shapes: bool
    hinted: tuple[str, ...] | None  # None: no hints for this TODO

    @property
    def lesson(self) -> str:
        return self.file.removesuffix(".py")


def specs(
    solutions: Path = ROOT / "solutions", hints: Path = ROOT / "lessons/hints"
) -> list[Spec]:
    """The figures of every TODO of every solution file, in course order.

    Raises:
        MarkerError: as `regions` does.
        ValueError: a malformed hints file (see `m2t.student.hints.ladder`).
    """
    from m2t.student.hints import ladder

    found = []
    for path in sorted(solutions.glob(settings.LESSON_GLOB)):
        rungs = {t.where: t for t in ladder(path.stem, hints)}
        for region in regions(path.read_text(encoding="utf-8"), path.name):
            calls = library_calls(region.code)
            todo = rungs.get(region.where)
            found.append(
                Spec(
                    file=path.name,
                    region=region,
                    calls=tuple(calls),
                    named=tuple(named(calls, region.todo)),
                    shapes=states_shapes(region.todo),
                    hinted=None
                    if todo is None
                    else tuple(named(calls, f"{todo.api}\n{todo.near}")),
                )
            )
    return found


def spec_problems(found: list[Spec]) -> list[str]:
    """The TODOs that dictate (name more than a third of their region's
    library calls) or give no shapes in and out, one message each."""
    problems = []
    for spec in found:
        region = spec.region
        at = f"solutions/{spec.file}:{region.todo_line} ({region.where})"
        if len(spec.named) > MAX_NAMED * len(spec.calls):
            names = ", ".join(
                sorted({c.rsplit(".", 1)[-1] for c in spec.named})
            )
            problems.append(
                f"{at}: the TODO names {len(spec.named)} of the "
                f"{len(spec.calls)} library calls of its region ({names}); "
                "at most a third: say what to compute, leave the ops to the "
                "hints"
            )
        if not spec.shapes:
            problems.append(
                f"{at}: the TODO gives no shapes in and out, e.g. "
                "`(B, D) -> (B, U)` or `list[str] -> int`"
            )
    return problems


def _by_lesson(found: list[Spec]) -> dict[str, list[Spec]]:
    lessons: dict[str, list[Spec]] = {}
    for spec in found:
        lessons.setdefault(spec.lesson, []).append(spec)
    return lessons


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def spec_summary(found: list[Spec]) -> list[str]:
    """One line per lesson: its TODOs with shapes, its calls named."""
    lines = []
    for lesson, rows in _by_lesson(found).items():
        calls = sum(len(s.calls) for s in rows)
        named_ = sum(len(s.named) for s in rows)
        shapes = sum(s.shapes for s in rows)
        lines.append(
            f"{lesson}: {shapes} of {len(rows)} TODOs give their shapes; "
            f"they name {named_} of {calls} library calls "
            f"({_pct(named_, calls)})"
        )
    return lines


def specs_table(found: list[Spec]) -> str:
    """docs/specs.md: per lesson, the library calls in its solution regions,
    how many the TODOs name, how many the hint rungs 2-3 name."""
    out = [
        "# Specs, not dictation: the figures",
        "",
        "Written by `m2t make-lessons --markdown docs/specs.md`; do not edit.",
        "A library call is a dotted call (`ops.*`, `keras.*`, `layers.*`,",
        "`tf.*`, `np.*`, `math.*`) inside a solution region, counted once per",
        "call; a TODO or a hint names it when the call's last component",
        "appears there as a word (case-sensitive: `Dense`, not `dense`).",
        "A TODO gives its shapes when it has an `(in) -> (out)` such as",
        "`X (B, D) -> O (B, U)` or `list[str] -> int`. `make-lessons --check`",
        "refuses a TODO that names more than a third of its region's calls",
        "or gives no shapes; `m2t dev check` wants the hint rungs 2-3",
        "(the API, the near-solution) of each TODO to name at least 90%.",
        "",
        "| lesson | TODOs | with shapes | calls | named in TODOs | "
        "named in hints 2-3 |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    total = [0, 0, 0, 0, 0]
    for lesson, rows in _by_lesson(found).items():
        calls = sum(len(s.calls) for s in rows)
        named_ = sum(len(s.named) for s in rows)
        hinted = sum(len(s.hinted or ()) for s in rows)
        shapes = sum(s.shapes for s in rows)
        missing = sum(s.hinted is None for s in rows)
        note = f" ({missing} TODOs without hints)" if missing else ""
        out.append(
            f"| {lesson} | {len(rows)} | {shapes} | {calls} | {named_} "
            f"({_pct(named_, calls)}) | {hinted} ({_pct(hinted, calls)})"
            f"{note} |"
        )
        for i, n in enumerate((len(rows), shapes, calls, named_, hinted)):
            total[i] += n
    todos, shapes, calls, named_, hinted = total
    out.append(
        f"| **all** | {todos} | {shapes} | {calls} | {named_} "
        f"({_pct(named_, calls)}) | {hinted} ({_pct(hinted, calls)}) |"
    )
    return "\n".join(out) + "\n"
