"""No autodiff in a lesson whose point is the derivation by hand.

Lessons flagged `by_hand = true` in curriculum.toml (backpropagation by
hand, backpropagation through time) are graded where TensorFlow, Keras,
JAX and torch cannot be imported: a gradient tape over the forward pass
would otherwise pass every check of a backward pass without the lesson's
work. Three layers, each checked by tests/test_attacks_byhand.py:

* a finder first on `sys.meta_path` that refuses those packages, with the
  modules already loaded hidden from `sys.modules` while the student's
  code runs (the judge's own process may have TensorFlow loaded);
* an audit hook (`sys.addaudithook`, which no Python code can remove)
  that refuses, while student code runs, the import of those packages
  even with the finder gone, a new process (which could import them),
  ctypes (a library loaded, memory poked), and the garbage collector's
  object lists (which would find a module already loaded);
* a check after each probe: none of those packages in `sys.modules`, and,
  where the process had none of their libraries mapped when grading
  began, none mapped now (`/proc/self/maps`: an extension module is never
  unloaded, whatever `sys.modules` says).

Where it holds fully: the confined worker of `m2t grade --submission`,
which for a by-hand lesson is a process that never imports TensorFlow
(`m2t.grading.sandbox`). In `m2t grade`'s own process TensorFlow is loaded
for the judge, and the guard stops the plain ways to it (an import, a
lookup in `sys.modules`, the garbage collector), not every reference to it
that some other loaded module keeps: that grade is the student's own, the
submission's is the one of record.
"""

from __future__ import annotations

import contextlib
import functools
import re
import resource
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.abc import MetaPathFinder
from typing import Any

from m2t import ROOT
from m2t.settings import tomllib

BANNED = (
    "tensorflow",
    "tf_keras",
    "keras",
    "jax",
    "jaxlib",
    "flax",
    "torch",
    "functorch",
    "autograd",
)
"""Top-level packages that differentiate: none may be imported."""

_LIBRARIES = re.compile(
    r"/(?:tensorflow|jaxlib|torch|functorch)/|libtensorflow|_pywrap_tensorflow"
    r"|xla_extension|libtorch|libjax"
)
"""A path in /proc/self/maps that is one of their shared libraries."""

_REFUSED_EVENTS = (
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "pty.spawn",
    "ctypes.",
    "gc.get_objects",
    "gc.get_referrers",
    "gc.get_referents",
)
"""Audit events refused while student code of a by-hand lesson runs."""


class AutodiffRefused(ModuleNotFoundError):
    """The import of an autodiff library in a by-hand lesson."""


def banned(name: str) -> bool:
    """Whether module `name` belongs to one of the `BANNED` packages."""
    return name.split(".", 1)[0] in BANNED


@functools.cache
def by_hand_modules() -> frozenset[str]:
    """The modules curriculum.toml flags `by_hand = true`."""
    try:
        with open(ROOT / "curriculum.toml", "rb") as f:
            data = tomllib.load(f)
    except OSError:
        return frozenset()
    return frozenset(
        entry["module"]
        for entry in data.get("lesson", [])
        if entry.get("by_hand") is True
    )


def is_by_hand(module: str) -> bool:
    """Whether lesson module `module` (e.g. "l21_mlp_backprop") is graded
    without autodiff."""
    return module in by_hand_modules()


class _Refuse(MetaPathFinder):
    """A finder that refuses the `BANNED` packages."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if banned(fullname):
            raise AutodiffRefused(
                f"{fullname} cannot be imported here: this lesson's "
                "gradients are computed by hand, in NumPy",
                name=fullname,
            )
        return None


_state = {"depth": 0, "hooked": False, "permanent": False}


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not (_state["depth"] or _state["permanent"]):
        return
    if event == "import" and args and banned(str(args[0])):
        raise AutodiffRefused(
            f"{args[0]} cannot be imported here: this lesson's gradients "
            "are computed by hand, in NumPy",
            name=str(args[0]),
        )
    if event.startswith(_REFUSED_EVENTS):
        raise PermissionError(
            f"{event} is not allowed in a lesson graded by hand"
        )


def _add_hook() -> None:
    if not _state["hooked"]:
        sys.addaudithook(_hook)
        _state["hooked"] = True


def mapped_libraries() -> list[str]:
    """The paths of the `BANNED` packages' shared libraries this process
    has mapped (empty where /proc/self/maps cannot be read)."""
    try:
        with open("/proc/self/maps") as f:
            text = f.read()
    except OSError:
        return []
    found = {
        line.split(maxsplit=5)[-1]
        for line in text.splitlines()
        if _LIBRARIES.search(line)
    }
    return sorted(found)


_clean_at_start: list[bool] = []
"""[whether no banned library was mapped when the first guard began]."""


def install() -> None:
    """Guard this whole process from now on (a by-hand lesson's grading
    worker, before any request): the finder, and the audit hook always
    on. Nothing of the `BANNED` packages may be loaded yet.

    Raises:
        RuntimeError: naming the banned modules already loaded.
    """
    import numpy  # noqa: F401  (its import loads ctypes, refused after)

    loaded = sorted(n for n in sys.modules if banned(n))
    if loaded:
        raise RuntimeError(
            f"a by-hand worker must not have {', '.join(loaded[:3])} loaded"
        )
    _clean_at_start[:] = [not mapped_libraries()]
    if not any(isinstance(f, _Refuse) for f in sys.meta_path):
        sys.meta_path.insert(0, _Refuse())
    _state["permanent"] = True
    _add_hook()
    with contextlib.suppress(ValueError, OSError):  # no new process or thread
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))


def used() -> list[str]:
    """The `BANNED` packages this process shows signs of having loaded
    since grading began: top-level names in `sys.modules`, then (where it
    was clean at the start) the libraries mapped."""
    names = sorted({n.split(".", 1)[0] for n in sys.modules if banned(n)})
    if _clean_at_start and _clean_at_start[0]:
        names += mapped_libraries()
    return names


@contextmanager
def guarded() -> Iterator[list[str]]:
    """While inside: the `BANNED` packages cannot be imported, those
    already loaded are hidden from `sys.modules`, and the audit hook
    refuses what `_REFUSED_EVENTS` names. Yields a list that, on leaving,
    holds what the code inside loaded of them (empty when nothing)."""
    _add_hook()
    if not _clean_at_start:
        _clean_at_start.append(not mapped_libraries())
    hidden = {n: sys.modules.pop(n) for n in list(sys.modules) if banned(n)}
    finder = _Refuse()
    sys.meta_path.insert(0, finder)
    _state["depth"] += 1
    found: list[str] = []
    try:
        yield found
    finally:
        _state["depth"] -= 1
        while finder in sys.meta_path:
            sys.meta_path.remove(finder)
        if _state["permanent"] and not any(
            isinstance(f, _Refuse) for f in sys.meta_path
        ):
            sys.meta_path.insert(0, _Refuse())  # a worker's, put back
        found += used()  # every one was hidden or absent on entry
        for name in [n for n in sys.modules if banned(n)]:
            del sys.modules[name]  # loaded inside: not the judge's
        sys.modules.update(hidden)  # the judge's own, as they were
