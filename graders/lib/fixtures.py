"""Judge-side references, and the fixtures that stand in for them.

    @reference
    def ref_masked_softmax(X, valid_lens, mistake=None): ...

`@reference` marks a function that computes what a check expects (a float64
NumPy reference, a tape gradient, Keras's own layer): it runs in the judge
only. The grading worker's copy of `graders/` is stripped of every marked
body (`m2t.grading.strip`), and so are the modules that hold nothing but
references (`graders/lib/references.py`, `cnn_references.py`, `tapes.py`):
a submission that imports the graders finds stubs that raise RuntimeError.

A reference runs in one of three modes:

* here, in the full repository: it is called, nothing else;
* recording (`m2t dev make-fixtures` sets `$M2T_FIXTURES` to a folder):
  each outermost call is called and kept, its inputs beside its output,
  and for a reference that takes `mistake=`, the output of every mistake of
  its grader's `MISTAKES` too; at exit, one `<lesson>.json` (the structure)
  and `<lesson>.npz` (the arrays) per grader, pickle-free;
* the student edition (`m2t release` writes `EDITION`): the stripped
  reference is never run; its output is looked up by `key`, and an input
  no fixture holds raises `Unrecorded`, never an answer.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from typing import TypeVar

import numpy as np

F = TypeVar("F", bound=Callable[..., Any])

MARK = "__m2t_reference__"
"""The attribute `@reference` sets on a function (True)."""
FOLDER = Path(__file__).resolve().parents[1] / "fixtures"
"""graders/fixtures/: one `<lesson>.json` + `<lesson>.npz` per grader."""
EDITION = FOLDER / "edition.json"
"""Written by `m2t release` (`{"seed": the public seed}`): its presence
puts every reference in lookup mode."""
RECORD_ENV = "M2T_FIXTURES"
"""The folder a recording grade writes its fixtures to."""


class Unrecorded(ValueError):
    """The student edition has no fixture for this call. (A ValueError, so
    a diagnosis that misses is skipped, not an error.)"""


# ------------------------------------------------------------------ codec
def to_tree(value: Any, arrays: dict[str, np.ndarray]) -> Any:
    """`value` as JSON-able data, its arrays moved to `arrays` (name ->
    array) and referenced by name. Takes arrays, NumPy and Python scalars,
    strings, None, tuples, lists, dicts (any keys of these kinds) and
    `judge.Mistake`s (by name).

    Raises:
        TypeError: `value` holds something else (a function, a layer).
    """
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufU":
            raise TypeError(f"an array of dtype {value.dtype}")
        name = f"a{len(arrays)}"
        arrays[name] = value
        return {"$a": name}
    if isinstance(value, np.generic):
        return to_tree(value.item(), arrays)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return {"$f": value.hex()}  # exact, and NaN or inf too
    if isinstance(value, (tuple, list)):
        items = [to_tree(v, arrays) for v in value]
        return {"$t": items} if isinstance(value, tuple) else items
    if isinstance(value, dict):
        return {
            "$d": [
                [to_tree(k, arrays), to_tree(v, arrays)]
                for k, v in value.items()
            ]
        }
    if type(value).__name__ == "Mistake" and hasattr(value, "name"):
        return {"$m": value.name}
    if isinstance(value, np.random.Generator):  # by its state, exactly
        return {"$g": value.bit_generator.state}
    code = getattr(value, "__code__", None)
    if code is not None and "<lambda>" not in value.__qualname__:
        # a function by its name, its code and what it closes over (a
        # block of an architecture's spec): named, not kept
        cells = [c.cell_contents for c in value.__closure__ or ()]
        digest = hashlib.sha256(code.co_code).hexdigest()[:16]
        return {
            "$fn": [value.__module__, value.__qualname__, digest],
            "cells": to_tree(cells, arrays),
        }
    raise TypeError(f"cannot keep a {type(value).__name__}")


def from_tree(
    tree: Any,
    arrays: Any,
    mistakes: dict[str, Any] | None = None,
) -> Any:
    """The inverse of `to_tree`; `arrays` maps names to arrays (an open
    .npz), `mistakes` names to `Mistake`s (else a Mistake stays its
    name)."""
    if isinstance(tree, list):
        return [from_tree(v, arrays, mistakes) for v in tree]
    if not isinstance(tree, dict):
        return tree
    if "$a" in tree:
        return np.array(arrays[tree["$a"]])
    if "$f" in tree:
        return float.fromhex(tree["$f"])
    if "$t" in tree:
        return tuple(from_tree(v, arrays, mistakes) for v in tree["$t"])
    if "$m" in tree:
        return (mistakes or {}).get(tree["$m"], tree["$m"])
    if "$g" in tree:
        return _generator(tree["$g"])
    if "$fn" in tree:
        raise TypeError(f"a function ({tree['$fn'][1]}) is named, not kept")
    return {
        _hashable(from_tree(k, arrays, mistakes)): from_tree(
            v, arrays, mistakes
        )
        for k, v in tree["$d"]
    }


def _generator(state: dict) -> np.random.Generator:
    bits = getattr(np.random, state["bit_generator"])()
    bits.state = state
    return np.random.Generator(bits)


def _generators(args: tuple, kwargs: dict) -> list[np.random.Generator]:
    """The generators among a call's arguments, in order: a reference that
    draws from one (weights for the judge's inputs) moves it on, and the
    edition moves it on alike (`_Fixtures.lookup`)."""
    found = [*args, *kwargs.values()]
    return [g for g in found if isinstance(g, np.random.Generator)]


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


def _canonical(value: Any) -> Any:
    """`value` for hashing: arrays by dtype, shape and bytes."""
    arrays: dict[str, np.ndarray] = {}
    tree = to_tree(value, arrays)
    digests = {
        name: [
            a.dtype.str,
            list(a.shape),
            hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest(),
        ]
        for name, a in arrays.items()
    }

    def swap(t: Any) -> Any:
        if isinstance(t, list):
            return [swap(v) for v in t]
        if isinstance(t, dict):
            if "$a" in t:
                return {"$a": digests[t["$a"]]}
            return {k: swap(v) for k, v in t.items()}
        return t

    return swap(tree)


def key(name: str, args: tuple, kwargs: dict[str, Any]) -> str:
    """The canonical hash of a call of the reference `name` (its module
    and qualified name): the same inputs give the same key on every
    machine.

    Raises:
        TypeError: an argument `to_tree` cannot keep.
    """
    text = json.dumps(
        [
            name,
            _canonical(tuple(args)),
            _canonical(dict(sorted(kwargs.items()))),
        ],
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _name(fn: Callable[..., Any]) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


# -------------------------------------------------------------- recording
class _Recorder:
    """Keeps each outermost reference call, per grader, until exit."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.depth = 0
        self.calls: dict[str, dict[str, tuple]] = {}

    def lesson(self) -> str:
        """The grader whose check is running (the innermost frame of a
        graders/test_*.py module), or the reference's own module."""
        frame = sys._getframe(2)
        while frame is not None:
            module = frame.f_globals.get("__name__", "")
            if module.startswith("graders.test_"):
                return module.removeprefix("graders.")
            frame = frame.f_back
        return "lib"

    def call(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        if self.depth:
            return fn(*args, **kwargs)
        self.depth += 1
        try:
            lesson = self.lesson()
            generators = _generators(args, kwargs)
            start = [g.bit_generator.state for g in generators]
            keep = self._entry(fn, args, kwargs)  # before: the call draws
            out = fn(*args, **kwargs)
            end = [g.bit_generator.state for g in generators]
            keep(lesson, out, end)
            if "mistake" in _parameters(fn) and kwargs.get("mistake") is None:
                for mistake in fn.__globals__.get("MISTAKES", ()):
                    more = {**kwargs, "mistake": mistake}
                    for g, state in zip(generators, start, strict=True):
                        g.bit_generator.state = state
                    keep = self._entry(fn, args, more)
                    try:
                        wrong = fn(*args, **more)
                    except Exception:  # noqa: BLE001  (not on these inputs)
                        continue
                    keep(
                        lesson,
                        wrong,
                        [g.bit_generator.state for g in generators],
                    )
                for g, state in zip(generators, end, strict=True):
                    g.bit_generator.state = state  # as the call left them
        finally:
            self.depth -= 1
        return out

    def _entry(self, fn, args, kwargs) -> Callable[..., None]:
        """A function that keeps the call's output, keyed (and its inputs
        encoded) now, before the call moves a generator on."""
        try:
            k = key(_name(fn), args, kwargs)
            arrays: dict[str, np.ndarray] = {}
            inputs = to_tree([list(args), kwargs], arrays)
        except TypeError:
            return lambda *_: None  # inputs it cannot name: the edition misses
        calls = self.calls

        def keep(lesson: str, out: Any, after: list[dict]) -> None:
            calls.setdefault(lesson, {})[k] = (
                _name(fn),
                inputs,
                arrays,
                out,
                after,
            )

        return keep

    def write(self) -> None:
        """One `<lesson>.json` + `<lesson>.npz` per grader in `folder`."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for lesson, calls in self.calls.items():
            arrays: dict[str, np.ndarray] = {}
            entries = {}
            for k, (name, inputs, given, out, after) in sorted(calls.items()):
                try:
                    output = to_tree(out, arrays)
                except TypeError:
                    continue
                renamed = {}
                for old_name, array in given.items():
                    renamed[old_name] = f"a{len(arrays)}"
                    arrays[renamed[old_name]] = array
                entries[k] = {
                    "name": name,
                    "inputs": _rename(inputs, renamed),
                    "output": output,
                    "generators_after": after,
                }
            (self.folder / f"{lesson}.json").write_text(
                json.dumps(entries, indent=0, sort_keys=True) + "\n"
            )
            np.savez_compressed(self.folder / f"{lesson}.npz", **arrays)


def _rename(tree: Any, names: dict[str, str]) -> Any:
    if isinstance(tree, list):
        return [_rename(v, names) for v in tree]
    if isinstance(tree, dict):
        if "$a" in tree:
            return {"$a": names[tree["$a"]]}
        return {k: _rename(v, names) for k, v in tree.items()}
    return tree


@functools.cache
def _parameters(fn: Callable[..., Any]) -> tuple[str, ...]:
    import inspect

    return tuple(inspect.signature(fn).parameters)


# ----------------------------------------------------------------- lookup
class _Fixtures:
    """The edition's fixtures, read when first needed."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.seed = json.loads(EDITION.read_text()).get("seed")
        self.entries: dict[str, tuple[dict, Path]] | None = None
        self.arrays: dict[Path, Any] = {}

    def lookup(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        if self.entries is None:
            self.entries = {}
            for path in sorted(self.folder.glob("*.json")):
                if path == EDITION:
                    continue
                for k, entry in json.loads(path.read_text()).items():
                    self.entries[k] = (entry, path.with_suffix(".npz"))
        try:
            k = key(_name(fn), args, kwargs)
            entry, npz = self.entries[k]
        except (TypeError, KeyError):
            raise Unrecorded(
                "the student edition judges its public inputs only (seed "
                f"{self.seed}): no expected value for this input "
                f"({fn.__qualname__}); the instructor's grade judges it"
            ) from None
        if npz not in self.arrays:
            self.arrays[npz] = np.load(npz, allow_pickle=False)
        after = entry.get("generators_after", [])
        for g, state in zip(_generators(args, kwargs), after, strict=True):
            g.bit_generator.state = state  # drawn as the reference drew
        return from_tree(entry["output"], self.arrays[npz])


_RECORDER: _Recorder | None = None
_FIXTURES: _Fixtures | None = None


def _mode() -> None:
    global _RECORDER, _FIXTURES
    if EDITION.exists():
        _FIXTURES = _Fixtures(FOLDER)
    elif os.environ.get(RECORD_ENV):
        _RECORDER = _Recorder(Path(os.environ[RECORD_ENV]))
        atexit.register(_RECORDER.write)


_mode()


def reference(fn: F) -> F:
    """Mark `fn` as a judge-side reference (see the module docstring).

    Raises:
        ValueError: `fn` is not a function.
    """
    if not callable(fn):
        raise ValueError(f"@reference: fn must be callable, got {fn!r}")
    setattr(fn, MARK, True)
    if _FIXTURES is None and _RECORDER is None:
        return fn

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if _FIXTURES is not None:
            return _FIXTURES.lookup(fn, args, kwargs)
        return _RECORDER.call(fn, args, kwargs)

    setattr(call, MARK, True)
    return call  # type: ignore[return-value]


def is_reference(fn: Any) -> bool:
    """Was `fn` marked with `@reference`?"""
    return getattr(fn, MARK, False) is True
