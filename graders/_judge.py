"""The judge: compares a probe's plain arrays with the references, and names
the known mistake a wrong answer matches.

Every failure raises `CheckFailed` with a message a student can act on:
what was checked, expected vs got (shape, or the largest difference and its
index), and, when the output equals what a catalogued mistake produces,
that diagnosis first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from graders._tol import F32


class CheckFailed(AssertionError):
    """A wrong answer (as opposed to code that is not started or crashed)."""


@dataclasses.dataclass(frozen=True)
class Mistake:
    """A mistake learners make, known to the judge.

    Args:
        name: short id, e.g. "no_scale"; the mutant suite patches the
            solution to make exactly this mistake and expects this name.
        explanation: one sentence naming the idea that went wrong.
    """

    name: str
    explanation: str


Diagnoses = Mapping[Mistake, Any]
"""Mistake -> the output it produces (an array, or a function that computes
it only when needed)."""


def _array(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    return np.asarray(value, dtype=np.float64)


def _shape(value: Any) -> tuple[int, ...]:
    return tuple(np.shape(value))


def _matches(got: np.ndarray, candidate: Any, tol: Mapping[str, float]) -> bool:
    if callable(candidate):
        candidate = candidate()
    candidate = _array(candidate)
    if got.shape != candidate.shape:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.allclose(got, candidate, equal_nan=True, **tol))


def diagnose(
    got: Any, diagnoses: Diagnoses | None, tol: Mapping[str, float] = F32
) -> Mistake | None:
    """The first catalogued mistake whose output equals `got`, if any."""
    got = _array(got)
    for mistake, candidate in (diagnoses or {}).items():
        try:
            if _matches(got, candidate, tol):
                return mistake
        except (ValueError, TypeError):
            continue
    return None


def _fail(lines: list[str], mistake: Mistake | None) -> None:
    if mistake is not None:  # the diagnosis leads; the numbers follow
        lines = [
            f"Likely mistake [{mistake.name}]: {mistake.explanation}",
            *(f"  {line.strip()}" for line in lines),
        ]
    raise CheckFailed("\n".join(lines))


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def expect_shape(got: Any, shape: tuple[int | None, ...], what: str) -> None:
    """`got` (an array or a shape tuple) must have `shape`."""
    have = tuple(got) if isinstance(got, (tuple, list)) else _shape(got)
    if have != tuple(shape):
        _fail([f"{what}: expected shape {tuple(shape)}, got {have}."], None)


def expect_close(
    got: Any,
    expected: Any,
    what: str,
    *,
    tol: Mapping[str, float] = F32,
    diagnoses: Diagnoses | None = None,
    hint: str = "",
) -> None:
    """`got` must equal `expected` within `tol` (see graders/_tol.py).

    On failure the message gives the shape mismatch or the largest
    difference with its index, leads with the diagnosis when `got` matches a
    catalogued mistake, and ends with `hint` (the likely cause) if given.
    """
    got = _array(got)
    expected = _array(expected)
    if got.dtype.kind not in "biuf":
        _fail([f"{what}: got non-numeric values (dtype {got.dtype})."], None)
    if got.shape != expected.shape:
        lines = [f"{what}: expected shape {expected.shape}, got {got.shape}."]
        if hint:
            lines.append(f"  Hint: {hint}")
        _fail(lines, diagnose(got, diagnoses, tol))
    with np.errstate(invalid="ignore"):
        ok = np.isclose(got, expected, equal_nan=False, **tol)
    if ok.all():
        return
    lines = [f"{what}: {int((~ok).sum())} of {ok.size} values are wrong."]
    bad_nan = np.isnan(got) & ~np.isnan(expected)
    if bad_nan.any():
        index = tuple(int(i) for i in np.argwhere(bad_nan)[0])
        lines.append(
            f"  got NaN at index {index} (expected {_fmt(expected[index])}): "
            "a 0/0 or exp overflow somewhere, e.g. a fully masked row."
        )
    else:
        diff = np.abs(got.astype(np.float64) - expected)
        index = tuple(
            int(i) for i in np.unravel_index(np.nanargmax(diff), diff.shape)
        )
        lines.append(
            f"  max |got - expected| = {_fmt(diff[index])} at index {index}: "
            f"expected {_fmt(expected[index])}, got {_fmt(got[index])} "
            f"(atol={tol['atol']:g}, rtol={tol['rtol']:g}, shape {got.shape})."
        )
    if hint:
        lines.append(f"  Hint: {hint}")
    _fail(lines, diagnose(got, diagnoses, tol))


def expect(
    condition: bool,
    message: str,
    *,
    got: Any = None,
    diagnoses: Diagnoses | None = None,
    tol: Mapping[str, float] = F32,
) -> None:
    """A behavioural invariant: `message` says what should hold and what
    came; `got` (optional) is matched against `diagnoses`."""
    if not condition:
        mistake = diagnose(got, diagnoses, tol) if got is not None else None
        _fail([message], mistake)
