"""`m2t hint LESSON`: the hint ladder of a lesson's TODOs, one rung at a time.

The hints live in `lessons/hints/lNN_topic.toml`, one `[[todo]]` table per
TODO of the lesson, in file order:

    [[todo]]
    where = "masked_softmax"   # the function or Class.method of the TODO
    idea = "..."               # rung 1: the idea, in words
    api = "..."                # rung 2: which functions, with shapes
    near = "..."               # rung 3: a near-solution in pseudo-code

The TODO is the spec (what to compute, the shapes, the conventions); the
rungs say how, from the idea to the API to a near-solution, and never
repeat the TODO. `m2t hint 16` shows the next rung of the first TODO that
still raises `NotImplementedError` in the student's file, then moves on to
the next such TODO; `.m2t/hints.json` remembers how many rungs of each TODO
are unlocked, `--all` repeats them and `--reset` locks them again.
"""

from __future__ import annotations

import dataclasses
import json
import re
import textwrap
from pathlib import Path

from m2t import ROOT
from m2t import curriculum
from m2t.settings import HINTS_STATE
from m2t.settings import tomllib

HINTS = ROOT / "lessons" / "hints"
STATE = HINTS_STATE
RUNGS = ("idea", "api", "near")
"""The rungs of each TODO's ladder, in the order they are shown."""
_RUNG_NAMES = {"idea": "the idea", "api": "the API", "near": "nearly code"}


@dataclasses.dataclass(frozen=True)
class TodoHints:
    """The ladder of one TODO: `where` it sits and its three rungs."""

    where: str
    idea: str
    api: str
    near: str

    @property
    def rungs(self) -> tuple[str, str, str]:
        return (self.idea, self.api, self.near)


def ladder(module: str, folder: Path = HINTS) -> tuple[TodoHints, ...]:
    """The hints of lesson `module` (`l16_attention_scoring`), one per
    TODO in file order; empty when the lesson has no hints file.

    Raises:
        ValueError: a `[[todo]]` table without a `where`, `idea`, `api` or
            `near` string (or with other keys), naming the file and table.
    """
    path = Path(folder) / f"{module}.toml"
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        return ()
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    extra = set(data) - {"todo"}
    if extra:
        raise ValueError(f"{path}: unknown keys {sorted(extra)}; only [[todo]]")
    found = []
    for n, table in enumerate(data.get("todo", ()), start=1):
        keys = ("where", *RUNGS)
        bad = [
            k
            for k in keys
            if not isinstance(table.get(k), str) or not table[k].strip()
        ]
        if bad or set(table) - set(keys):
            raise ValueError(
                f"{path}: [[todo]] number {n} needs exactly the non-empty "
                f"strings {', '.join(keys)}; got keys {sorted(table)}"
            )
        found.append(TodoHints(**{k: table[k].strip() for k in keys}))
    return tuple(found)


def _load() -> dict[str, dict[str, int]]:
    try:
        data = json.loads(STATE.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        module: {w: n for w, n in seen.items() if isinstance(n, int)}
        for module, seen in data.items()
        if isinstance(seen, dict)  # an older file kept one count per lesson
    }


def _save(data: dict[str, dict[str, int]]) -> None:
    try:
        STATE.parent.mkdir(exist_ok=True)
        STATE.write_text(json.dumps(data, indent=1, sort_keys=True))
    except OSError:
        pass  # a read-only checkout still shows hints


def reset(lesson: curriculum.Lesson) -> None:
    """Lock every hint of the lesson again."""
    data = _load()
    if data.pop(lesson.module, None) is not None:
        _save(data)


def todo_lines(lesson: curriculum.Lesson, folder: Path) -> dict[str, int]:
    """`where` -> the line of its `# TODO(lNN)` for each TODO that still
    raises `NotImplementedError("lNN: where")` in the student's file, in
    file order; empty when the file is missing."""
    try:
        lines = (folder / f"{lesson.module}.py").read_text("utf-8").splitlines()
    except OSError:
        return {}
    pattern = re.compile(
        rf"raise NotImplementedError\(\s*[\"']{lesson.tag}:\s*([^\"']*)"
    )
    found: dict[str, int] = {}
    for i, line in enumerate(lines):
        match = pattern.search(line)
        if match:
            todo = next(
                (
                    j
                    for j in range(i, max(i - 60, -1), -1)
                    if "# TODO(" in lines[j]
                ),
                i,
            )
            found.setdefault(match.group(1).strip(), todo + 1)
    return found


def _walk(
    lesson: curriculum.Lesson, folder: Path
) -> tuple[list[TodoHints], dict[str, int]]:
    """The TODOs the ladder walks, in file order (those still unfinished,
    or all of them once none is), and the line of each unfinished one."""
    todos = list(ladder(lesson.module))
    left = todo_lines(lesson, folder)
    open_ = [t for t in todos if t.where in left]
    return (open_ or todos), left


def left(lesson: curriculum.Lesson, folder: Path | None = None) -> int:
    """How many rungs of the TODOs still to write are locked."""
    todos, _ = _walk(lesson, folder or ROOT / "lessons")
    seen = _load().get(lesson.module, {})
    return sum(
        len(RUNGS) - min(seen.get(t.where, 0), len(RUNGS)) for t in todos
    )


def _where(lesson: curriculum.Lesson, todo: TodoHints, lines: dict) -> str:
    if todo.where in lines:
        return f"lessons/{lesson.module}.py:{lines[todo.where]} ({todo.where})"
    return f"{todo.where} (in lessons/{lesson.module}.py)"


def _block(lesson, todo: TodoHints, rung: int, lines: dict) -> list[str]:
    name = RUNGS[rung - 1]
    head = (
        f"  TODO {_where(lesson, todo, lines)}, hint {rung}/{len(RUNGS)}: "
        f"{_RUNG_NAMES[name]}"
    )
    text = todo.rungs[rung - 1]
    if name == "near":  # pseudo-code keeps its lines
        body = textwrap.indent(text, "      ")
    else:
        body = textwrap.fill(
            " ".join(text.split()),
            width=79,
            initial_indent="      ",
            subsequent_indent="      ",
            break_on_hyphens=False,
        )
    return [head, body, ""]


def show(
    lesson: curriculum.Lesson, repeat: bool = False, folder: Path | None = None
) -> str:
    """What `m2t hint` prints, unlocking the next rung first.

    Args:
        lesson: the lesson.
        repeat: `--all`: show every rung unlocked so far instead (unlocking
            the first one when none is).
        folder: the student's lessons folder (lessons/).
    """
    folder = folder or ROOT / "lessons"
    notes = ROOT / "lessons" / "notes" / f"{lesson.module}.md"
    where = f"lessons/notes/{notes.name}" if notes.exists() else "the notes"
    out = [f"{lesson.tag} {lesson.title}", ""]
    todos, lines = _walk(lesson, folder)
    if not todos:
        out.append(
            textwrap.fill(
                f"No hints for {lesson.tag} yet. The `# TODO({lesson.tag})` "
                "above each `raise NotImplementedError` is the spec: what "
                f"to compute and the shapes. Read {where} too.",
                width=79,
                initial_indent="  ",
                subsequent_indent="  ",
            )
        )
        return "\n".join(out)
    data = _load()
    seen = data.setdefault(lesson.module, {})
    fresh = next((t for t in todos if seen.get(t.where, 0) < len(RUNGS)), None)
    shown: list[tuple[TodoHints, int]] = []
    if fresh is not None and (not repeat or not any(seen.values())):
        seen[fresh.where] = seen.get(fresh.where, 0) + 1
        _save(data)
        shown = [(fresh, seen[fresh.where])]
    if repeat:
        shown = [
            (t, rung)
            for t in ladder(lesson.module)
            for rung in range(1, min(seen.get(t.where, 0), len(RUNGS)) + 1)
        ]
    for todo, rung in shown:
        out += _block(lesson, todo, rung, lines)
    nxt = next((t for t in todos if seen.get(t.where, 0) < len(RUNGS)), None)
    if nxt is None:
        out.append(
            textwrap.fill(
                "No hints left: you have seen every rung of "
                + (
                    "every TODO still to write. "
                    if lines
                    else "every TODO of the lesson. "
                )
                + f"The TODO is the spec and {where} has the maths; "
                f"`m2t hint {lesson.id} --reset` starts over.",
                width=79,
                initial_indent="  ",
                subsequent_indent="  ",
            )
        )
    else:
        rung = seen.get(nxt.where, 0) + 1
        same = bool(shown) and nxt == shown[-1][0]
        out.append(
            f"  Stuck still? `m2t hint {lesson.id}` shows hint {rung}/"
            f"{len(RUNGS)} of "
            + (
                "this TODO."
                if same
                else f"the TODO {_where(lesson, nxt, lines)}."
            )
        )
    return "\n".join(out)
