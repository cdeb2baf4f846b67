"""The grader's own code, as it was before a student's module ran.

A probe calls the grader's helpers (`layer_contract`, `value_errors`,
`dropout_outputs`, ...) by name, in the process where the student's module
was imported; that module can find the grader in `sys.modules` and replace
them with forgeries. `Snapshot` keeps, before any student code runs, every
function and class of the modules named `graders` or `graders.*` and of
`m2t.grading.*` (each taken the first time it is seen, so a module a
student changed is never taken as the original); `changed` names what
differs since. `m2t.grading.probe.InProcessRunner` takes it before loading
the student's module and checks it after the import and after the probe:
a probe whose module changed them fails.

The judge never rests on this alone: what a probe reports is bound to
values the judge computes itself (graders/lib/contract.py), so a forgery
made and undone within one call still fails there.
"""

from __future__ import annotations

import sys
import types
from typing import Any

WATCHED = ("graders", "m2t.grading")
"""Module names (and their submodules) whose functions are kept."""


def _watched(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in WATCHED)


def _function_state(fn: types.FunctionType) -> tuple[Any, ...]:
    """What decides what a function does, each part by identity: the
    function, its code, defaults and what its closure holds (each can be
    replaced in place)."""
    cells = []
    for cell in fn.__closure__ or ():
        try:
            cells.append(cell.cell_contents)
        except ValueError:  # an empty cell
            cells.append(None)
    kwdefaults = fn.__kwdefaults__ or {}
    return (
        fn,
        fn.__code__,
        fn.__defaults__,
        *kwdefaults.values(),
        *cells,
    )


def _state(obj: Any) -> tuple[Any, ...] | None:
    """The parts of a module attribute worth keeping (a function, a
    probe's body with it, a class and its methods), or None for data."""
    if isinstance(obj, types.FunctionType):
        raw = getattr(obj, "raw", None)  # a probe: its body too
        inner = (
            _function_state(raw) if isinstance(raw, types.FunctionType) else ()
        )
        return (*_function_state(obj), *inner)
    if isinstance(obj, type):
        parts: list[Any] = [obj]
        for value in vars(obj).values():
            if isinstance(value, types.FunctionType):
                parts += _function_state(value)
        return tuple(parts)
    return None


def _same(a: tuple[Any, ...] | None, b: tuple[Any, ...]) -> bool:
    return (
        a is not None
        and len(a) == len(b)
        and all(x is y for x, y in zip(a, b, strict=True))
    )


def _module_state(module: types.ModuleType) -> dict[str, tuple[Any, ...]]:
    kept = {}
    for name, value in list(vars(module).items()):
        state = _state(value)
        if state is not None:
            kept[name] = state
    return kept


class Snapshot:
    """Every watched module's functions and classes, each module kept the
    first time `take` sees it."""

    def __init__(self) -> None:
        self.modules: dict[str, tuple[Any, dict[str, tuple[Any, ...]]]] = {}

    def take(self) -> None:
        """Keep the watched modules not kept yet (call it before any
        student code runs)."""
        for name, module in list(sys.modules.items()):
            if (
                module is not None
                and name not in self.modules
                and _watched(name)
            ):
                self.modules[name] = (module, _module_state(module))

    def changed(self, grader: str = "") -> list[str]:
        """`module.name` of each kept function or class that was replaced,
        removed or changed in place since it was kept (a module replaced in
        `sys.modules` as `module`), among what a probe of the grader module
        `grader` runs: that module, `graders.lib.*` and `graders`'s own,
        and the modules of `m2t.grading` a probe passes through
        (`CHECKED`); "" checks every kept module."""
        found = []
        for name, (kept_module, kept) in self.modules.items():
            if grader and not _checked(name, grader):
                continue
            module = sys.modules.get(name)
            if module is not kept_module:
                found.append(name)
                continue
            now = vars(module)
            for attr, state in kept.items():
                if not _unchanged(now.get(attr), state):
                    found.append(f"{name}.{attr}")
        return found


def _unchanged(value: Any, state: tuple[Any, ...]) -> bool:
    """`value` is still what `state` kept: identities first (a dict lookup
    apiece), the whole state only where there is more to it."""
    if value is not state[0]:
        return False
    if type(value) is types.FunctionType and len(state) == 3:
        return value.__code__ is state[1] and value.__defaults__ is state[2]
    return _same(_state(value), state)


CHECKED = (
    "m2t.grading.guard",
    "m2t.grading.impl",
    "m2t.grading.probe",
    "m2t.grading.tfsetup",
)
"""The harness's modules a probe passes through, checked after each."""


def _checked(name: str, grader: str) -> bool:
    if name.startswith("graders.test_"):
        return name == grader
    return name.startswith("graders") or name in CHECKED
