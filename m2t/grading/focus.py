"""Which checks exercise what the student just changed.

`m2t watch` regrades a lesson after every save. The runner orders the
checks cheapest first; a mistake in a part that only a costly check
exercises (l20's decoder cache, l12's masked stack) then waits for every
cheaper check of the other parts. This module reads, with `ast`, which
top-level functions and classes of the lesson file changed since its last
whole grade in this process (and everything in the file that uses them),
and which of those each grader test function reaches through its probes
(`m.Name` in a function it calls, directly or through other functions of
the grader file), so that the runner can run those checks first.

The order is all it decides: every check still runs, and a check that
reaches the student's code some other way (a grader library helper that
looks a name up itself) merely keeps its usual place. Static reading is
enough here and costs milliseconds; tracing which code each check executes
would slow every check down.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

_SOURCES: dict[Path, str] = {}
"""Each lesson file's text at its last grade in this process that ran
every check (`remember`)."""


def _definitions(source: str) -> dict[str, ast.AST] | None:
    """{top-level name: its definition} of a module (functions, classes,
    assigned constants), or None where the source does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
        ):
            found[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = (
                node.targets if isinstance(node, ast.Assign) else [node.target]
            )
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        found[name.id] = node
    return found


def _names_used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _closure(start: set[str], uses: dict[str, set[str]]) -> set[str]:
    """`start` and every name that uses one of them, transitively."""
    reached = set(start)
    grew = True
    while grew:
        grew = False
        for name, used in uses.items():
            if name not in reached and used & reached:
                reached.add(name)
                grew = True
    return reached


@functools.lru_cache(maxsize=8)
def _summary(source: str) -> tuple[dict[str, str], dict[str, set[str]]] | None:
    """({name: its definition's `ast.dump`}, {name: the names it uses}) of
    a module's top level, or None where it does not parse. Cached: in
    watch, each save's text is the next save's old one."""
    definitions = _definitions(source)
    if definitions is None:
        return None
    dumps = {name: ast.dump(node) for name, node in definitions.items()}
    uses = {name: _names_used(node) for name, node in definitions.items()}
    return dumps, uses


def changed_names(old: str, new: str) -> set[str]:
    """Top-level names of `new` whose definition differs from `old`'s (or
    is new), and the names of `new` that use them; empty where either
    source does not parse (a syntax error fails every check anyway)."""
    before, after = _summary(old), _summary(new)
    if before is None or after is None:
        return set()
    (old_dumps, _), (new_dumps, uses) = before, after
    changed = {
        name for name, dump in new_dumps.items() if old_dumps.get(name) != dump
    }
    changed |= set(old_dumps) - set(new_dumps)  # removed: its users changed
    return _closure(changed, uses) & set(new_dumps)


@functools.lru_cache(maxsize=8)
def reached_names(grader_source: str, param: str = "m") -> dict[str, set[str]]:
    """{test function: the student names `param.Name` it reaches} through
    the grader file's own functions (probes take the student's module as
    their first argument, `m` by the graders' convention). Cached (a grader
    does not change while watch runs): read, never change, the result."""
    definitions = _definitions(grader_source) or {}
    functions = {
        name: node
        for name, node in definitions.items()
        if isinstance(node, ast.FunctionDef)
    }
    direct = {
        name: {
            n.attr
            for n in ast.walk(node)
            if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name)
            and n.value.id == param
        }
        for name, node in functions.items()
    }
    calls = {
        name: _names_used(node) & set(functions)
        for name, node in functions.items()
    }
    reached: dict[str, set[str]] = {}
    for test in (name for name in functions if name.startswith("test_")):
        seen, todo = {test}, [test]
        while todo:
            for callee in calls[todo.pop()] - seen:
                seen.add(callee)
                todo.append(callee)
        reached[test] = set().union(*(direct[name] for name in seen))
    return reached


def focused_checks(grader: Path, lesson_file: Path) -> tuple[set[str], str]:
    """Names of `grader`'s test functions that reach a name of
    `lesson_file` changed since the last grade of it `remember`ed in this
    process (none the first time, or when a file cannot be read), and the
    file's text now (for `remember` once the grade has run to the end, so a
    grade cut short by a save leaves its changes to the next one)."""
    try:
        source = lesson_file.read_text(encoding="utf-8")
        old = _SOURCES.get(lesson_file)
        if old is None or old == source:
            return set(), source
        changed = changed_names(old, source)
        if not changed:
            return set(), source
        reached = reached_names(grader.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return set(), ""
    return {test for test, names in reached.items() if names & changed}, source


def remember(lesson_file: Path, source: str) -> None:
    """`lesson_file` was graded to the end as `source`."""
    if source:
        _SOURCES[lesson_file] = source
