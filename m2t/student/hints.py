"""`m2t hint LESSON`: the hint ladder of a lesson's TODOs, one rung at a time.

The hints live in `lessons/hints/lNN_topic.toml`, one `[[todo]]` table per
TODO of the lesson, in file order:

    [[todo]]
    where = "masked_softmax"   # the function or Class.method of the TODO
    idea = "..."               # rung 1: the idea, in words
    api = "..."                # rung 2: which functions, with shapes
    near = "..."               # rung 3: a near-solution in pseudo-code

    [todo.zh]                  # the same rungs in Chinese (code stays code)
    idea = "..."
    api = "..."
    near = "..."

The TODO is the spec (what to compute, the shapes, the conventions); the
rungs say how, from the idea to the API to a near-solution, and never
repeat the TODO. `m2t hint 16` shows the next rung of the first TODO that
still raises `NotImplementedError` in the student's file, then moves on to
the next such TODO; `.m2t/hints.json` remembers how many rungs of each TODO
are unlocked, `--all` repeats them and `--reset` locks them again. The
rungs are shown in the run's language (`m2t.i18n`): `[todo.zh]` in
Chinese.
"""

from __future__ import annotations

import dataclasses
import json
import re
import textwrap
from pathlib import Path

from m2t import ROOT
from m2t import curriculum
from m2t import i18n
from m2t.settings import HINTS_STATE
from m2t.settings import tomllib

HINTS = ROOT / "lessons" / "hints"
STATE = HINTS_STATE
RUNGS = ("idea", "api", "near")
"""The rungs of each TODO's ladder, in the order they are shown."""


@dataclasses.dataclass(frozen=True)
class TodoHints:
    """The ladder of one TODO: `where` it sits, its three rungs and their
    Chinese (`zh`: the rungs in RUNGS order; None when the file has no
    `[todo.zh]` for it)."""

    where: str
    idea: str
    api: str
    near: str
    zh: tuple[str, str, str] | None = None

    @property
    def rungs(self) -> tuple[str, str, str]:
        return (self.idea, self.api, self.near)

    def rungs_in(self, lang: str) -> tuple[str, str, str]:
        """The rungs in `lang` (`en` or `zh`).

        Raises:
            i18n.MissingText: no `[todo.zh]` for this TODO, in the full
                repository (a student edition shows the English rungs).
        """
        if lang == "en":
            return self.rungs
        if self.zh is None:
            if i18n.strict():
                raise i18n.MissingText(
                    f"hints of {self.where}: no [todo.{lang}] table"
                )
            return self.rungs
        return self.zh


def ladder(module: str, folder: Path = HINTS) -> tuple[TodoHints, ...]:
    """The hints of lesson `module` (`l16_attention_scoring`), one per
    TODO in file order; empty when the lesson has no hints file.

    Raises:
        ValueError: a `[[todo]]` table without a `where`, `idea`, `api` or
            `near` string (or with other keys), or a `[todo.zh]` without
            exactly the non-empty rungs, naming the file and table.
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
        if bad or set(table) - {*keys, "zh"}:
            raise ValueError(
                f"{path}: [[todo]] number {n} needs exactly the non-empty "
                f"strings {', '.join(keys)}; got keys {sorted(table)}"
            )
        zh = table.get("zh")
        if zh is not None and (
            not isinstance(zh, dict)
            or set(zh) != set(RUNGS)
            or not all(isinstance(v, str) and v.strip() for v in zh.values())
        ):
            raise ValueError(
                f"{path}: [todo.zh] of [[todo]] number {n} needs exactly "
                f"the non-empty strings {', '.join(RUNGS)}; got "
                f"{sorted(zh) if isinstance(zh, dict) else zh!r}"
            )
        found.append(
            TodoHints(
                **{k: table[k].strip() for k in keys},
                zh=tuple(zh[r].strip() for r in RUNGS) if zh else None,
            )
        )
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


@dataclasses.dataclass(frozen=True)
class _Step:
    """One ladder `m2t hint` walks: a TODO's rungs, or the question list's
    hints (kept in curriculum.toml: it has no TODOs)."""

    where: str
    rungs: tuple[str, ...]
    names: tuple[str, ...]
    code: bool  # the rungs of a TODO (pseudo-code keeps its lines)


def _steps(lesson: curriculum.Lesson) -> list[_Step]:
    if lesson.is_question_list:
        rungs = lesson.hints
        if i18n.language() == "zh" and (lesson.hints_zh or i18n.strict()):
            rungs = lesson.hints_zh
            if len(rungs) != len(lesson.hints):
                raise i18n.MissingText(
                    f"curriculum.toml [questions]: {len(lesson.hints)} hints "
                    f"but {len(rungs)} hints_zh"
                )
        return [_Step(lesson.module, rungs, ("",) * len(rungs), False)]
    names = tuple(i18n.text(f"hint.rung_{r}") for r in RUNGS)
    lang = i18n.language()
    return [
        _Step(t.where, t.rungs_in(lang), names, True)
        for t in ladder(lesson.module)
    ]


def _walk(
    lesson: curriculum.Lesson, folder: Path
) -> tuple[list[_Step], list[_Step], dict[str, int]]:
    """All the ladders of the lesson, the ones `m2t hint` walks (the TODOs
    still unfinished, in file order, or all of them once none is), and the
    line of each unfinished TODO."""
    steps = _steps(lesson)
    left = {} if lesson.is_question_list else todo_lines(lesson, folder)
    open_ = [t for t in steps if t.where in left]
    return steps, (open_ or steps), left


def left(lesson: curriculum.Lesson, folder: Path | None = None) -> int:
    """How many rungs of the TODOs still to write are locked."""
    _, walked, _ = _walk(lesson, folder or ROOT / "lessons")
    seen = _load().get(lesson.module, {})
    return sum(
        len(t.rungs) - min(seen.get(t.where, 0), len(t.rungs)) for t in walked
    )


def _fresh(walked: list[_Step], seen: dict[str, int]) -> _Step | None:
    """The ladder `m2t hint` shows a rung of next: the first it walks
    with a rung still locked."""
    return next(
        (t for t in walked if seen.get(t.where, 0) < len(t.rungs)), None
    )


@dataclasses.dataclass(frozen=True)
class Upcoming:
    """The hint `m2t hint` shows next: rung `rung` of `rungs` of the TODO
    `where` (or of the question list), and `what` names it as the hint's
    own "Stuck still?" line does."""

    where: str
    rung: int
    rungs: int
    what: str


def upcoming(
    lesson: curriculum.Lesson, folder: Path | None = None
) -> Upcoming | None:
    """The hint `m2t hint LESSON` would show now, without unlocking it;
    None when every hint it walks is seen (or the lesson has none). It
    changes only when a hint is taken, `--reset` is run, or the TODO it
    is for is written (then it is the next TODO's)."""
    _, walked, lines = _walk(lesson, folder or ROOT / "lessons")
    seen = _load().get(lesson.module, {})
    step = _fresh(walked, seen)
    if step is None:
        return None
    what = (
        i18n.text("hint.next_other", where=_where(lesson, step, lines))
        if step.code
        else i18n.text("hint.next_list")
    )
    rung = seen.get(step.where, 0) + 1
    return Upcoming(step.where, rung, len(step.rungs), what)


def _where(lesson: curriculum.Lesson, step: _Step, lines: dict) -> str:
    if not step.code:
        return i18n.text("hint.where_list", file=lesson.filename)
    if step.where in lines:
        return i18n.text(
            "hint.where_todo",
            file=lesson.filename,
            line=lines[step.where],
            where=step.where,
        )
    return i18n.text(
        "hint.where_todo_unplaced", file=lesson.filename, where=step.where
    )


def _block(lesson, step: _Step, rung: int, lines: dict) -> list[str]:
    name = step.names[rung - 1]
    head = i18n.text(
        "hint.heading_named" if name else "hint.heading",
        where=_where(lesson, step, lines),
        rung=rung,
        rungs=len(step.rungs),
        name=name,
    )
    text = step.rungs[rung - 1]
    if step.code and rung == len(RUNGS):  # pseudo-code keeps its lines
        body = textwrap.indent(text, "      ")
    else:
        body = i18n.wrap(" ".join(text.split()), 79, " " * 6, " " * 6)
    return [head, body, ""]


def _fill(text: str) -> str:
    return i18n.wrap(text, 79, "  ", "  ", break_on_hyphens=True)


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
    where = (
        i18n.text("hint.notes_here", file=notes.name)
        if notes.exists()
        else i18n.text("hint.notes_elsewhere")
    )
    out = [f"{lesson.tag} {i18n.title(lesson)}", ""]
    steps, walked, lines = _walk(lesson, folder)
    if not steps:
        out.append(_fill(i18n.text("hint.none", tag=lesson.tag, notes=where)))
        return "\n".join(out)
    data = _load()
    seen = data.setdefault(lesson.module, {})

    step = _fresh(walked, seen)
    shown: list[tuple[_Step, int]] = []
    if step is not None and (not repeat or not any(seen.values())):
        seen[step.where] = seen.get(step.where, 0) + 1
        _save(data)
        shown = [(step, seen[step.where])]
    if repeat:
        shown = [
            (t, rung)
            for t in steps
            for rung in range(1, min(seen.get(t.where, 0), len(t.rungs)) + 1)
        ]
    for step, rung in shown:
        out += _block(lesson, step, rung, lines)
    nxt = _fresh(walked, seen)
    if nxt is None:
        which = i18n.text(
            "hint.which_open"
            if lines
            else "hint.which_list"
            if lesson.is_question_list
            else "hint.which_all"
        )
        spec = "" if lesson.is_question_list else i18n.text("hint.spec")
        out.append(
            _fill(
                i18n.text(
                    "hint.all_seen",
                    which=which,
                    spec=spec,
                    notes=where,
                    arg=lesson.arg,
                )
            )
        )
    else:
        rung = seen.get(nxt.where, 0) + 1
        same = bool(shown) and nxt == shown[-1][0]
        what = (
            i18n.text("hint.next_this")
            if same and nxt.code
            else i18n.text("hint.next_list")
            if not nxt.code
            else i18n.text("hint.next_other", where=_where(lesson, nxt, lines))
        )
        out.append(
            i18n.text(
                "hint.stuck",
                arg=lesson.arg,
                rung=rung,
                rungs=len(nxt.rungs),
                what=what,
            )
        )
    return "\n".join(out)
