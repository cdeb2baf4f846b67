"""The judge: compares a probe's plain arrays with the references, and names
the known mistake a wrong answer matches.

Every failure raises `CheckFailed` with a message a student can act on:
what was checked, expected vs got (shape, or the largest difference and its
index), and, when the output equals what one catalogued mistake produces
and no other (`only_match`), that diagnosis first.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import TypeVar

import numpy as np

from graders.lib.messages import mistake_text
from graders.lib.messages import say
from graders.lib.properties import Property
from graders.lib.properties import failed
from graders.lib.tolerances import F32


class CheckFailed(AssertionError):
    """A wrong answer (as opposed to code that is not started or crashed).

    `mistake` is the name of the known mistake the judge diagnosed (None
    when none): the class report counts it from here, never from the
    message, which may quote the student's own text.
    """

    def __init__(self, message: str = "", mistake: str | None = None):
        super().__init__(message)
        self.mistake = mistake


@dataclasses.dataclass(frozen=True)
class Mistake:
    """A mistake learners make, known to the judge.

    Args:
        name: short id, e.g. "no_scale"; the mutant suite patches the
            solution to make exactly this mistake and expects this name.
        explanation: one sentence naming the idea that went wrong, in
            English; its Chinese is graders/messages/mistakes.zh.toml's
            `[lesson]` entry `name`.
        lesson: the lesson module (`l16_attention_scoring`); by default the
            module that makes the Mistake, less its `test_` (as
            `collections.namedtuple` finds its `__module__`).
    """

    name: str
    explanation: str
    lesson: str = dataclasses.field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.lesson:  # the grader module that called Mistake(...)
            caller = sys._getframe(2).f_globals.get("__name__", "")
            module = caller.rpartition(".")[2].removeprefix("test_")
            object.__setattr__(self, "lesson", module)

    @property
    def description(self) -> str:
        """`explanation` in the run's language (graders/lib/messages.py)."""
        return mistake_text(self.lesson, self.name, self.explanation)


T = TypeVar("T")

Diagnoses = Mapping[Mistake, Any]
"""Mistake -> the output it produces (an array, or a function that computes
it only when needed)."""


# ------------------------------------------------------------ diagnoses


def mistake_outputs(
    reference: Callable[..., Any],
    *args: Any,
    mistakes: Sequence[Mistake],
    part: int | None = None,
    pick: Callable[[Any], Any] | None = None,
    skip_right: bool = True,
) -> dict[Mistake, Callable[[], Any]]:
    """Diagnoses for a check: each mistake -> a function computing what
    `reference(*args, mistake=m)` gives (computed only when a wrong answer
    is being explained).

    Args:
        reference: the float64 reference; takes `mistake=` (None: right).
        args: its positional arguments, as the check passes them.
        mistakes: the mistakes this check can tell apart.
        part: the index of the output to compare when the reference
            returns a tuple (e.g. 0 for the outputs of (outputs, state)).
        pick: instead of `part`, a function choosing what to compare.
        skip_right: leave out a mistake that gives the right answer on
            these arguments (it cannot explain a wrong one): the label
            rule of `only_match`, also where the check (`expect`) has no
            `expected` to compare with. On by default.
    """

    def chosen(out: Any) -> Any:
        if pick is not None:
            return pick(out)
        return out if part is None else out[part]

    right: list[Any] = []  # the right answer, computed once when needed

    def output(mistake: Mistake) -> Any:
        out = chosen(reference(*args, mistake=mistake))
        if skip_right:
            if not right:
                right.append(chosen(reference(*args)))
            if _same(out, right[0]):
                raise ValueError("same as the right answer")  # left out
        return out

    return {m: (lambda m=m: output(m)) for m in mistakes}


def _same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "biuf" and b.dtype.kind in "biuf":
        return bool(np.allclose(a.astype(np.float64), b.astype(np.float64)))
    return bool(np.array_equal(a, b))


def _array(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    return np.asarray(value, dtype=np.float64)


def _close(a: np.ndarray, b: np.ndarray, tol: Mapping[str, float]) -> bool:
    if a.shape != b.shape:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.allclose(a, b, equal_nan=True, **tol))


def only_match(
    got: T,
    outputs: Mapping[Mistake, T],
    same: Callable[[T, T], bool],
    expected: T | None = None,
) -> Mistake | None:
    """The label rule, for every kind of output: the one mistake whose
    output equals `got`, where that output differs from the right answer
    (`expected`, when known) and from every other mistake's; else None.

    Two mistakes that coincide on this input tell nothing apart, and a
    mistake that leaves this output right cannot explain a wrong one: no
    label is given from such an input (the check needs one that does).
    """
    if expected is not None:
        outputs = {m: o for m, o in outputs.items() if not same(o, expected)}
    matching = [m for m, o in outputs.items() if same(got, o)]
    if len(matching) != 1:
        return None
    (mistake,) = matching
    mine = outputs[mistake]
    if any(same(mine, o) for m, o in outputs.items() if m is not mistake):
        return None
    return mistake


def diagnose(
    got: Any,
    diagnoses: Diagnoses | None,
    tol: Mapping[str, float] = F32,
    expected: Any = None,
) -> Mistake | None:
    """The catalogued mistake `got` shows, by `only_match`'s rule: None
    when no mistake, or more than one, could have produced it.

    Args:
        got: the student's output.
        diagnoses: mistake -> its output (or a function computing it; one
            that raises ValueError or TypeError is left out).
        tol: what counts as equal (see graders/lib/tolerances.py).
        expected: the right answer. Without it every mistake is taken to
            differ from it: fine for flags the right answer never raises,
            otherwise pass it.
    """
    got = _array(got)
    outputs = {}
    for mistake, candidate in (diagnoses or {}).items():
        try:
            outputs[mistake] = _array(
                candidate() if callable(candidate) else candidate
            )
        except (ValueError, TypeError):
            continue
    right = None if expected is None else _array(expected)
    return only_match(got, outputs, lambda a, b: _close(a, b, tol), right)


# -------------------------------------------------------------- failing


def fail(lines: Sequence[str], mistake: Mistake | None = None) -> None:
    """Raise `CheckFailed` with `lines`, one a line.

    With a diagnosis, it leads and `lines` follow, indented two more
    spaces (each keeps its own indentation, so a table stays aligned).
    """
    lines = list(lines)
    if mistake is not None:
        lines = [
            say(
                "judge.likely",
                name=mistake.name,
                description=mistake.description,
            ),
            *(f"  {line}" for line in lines),
        ]
    raise CheckFailed(
        "\n".join(lines), None if mistake is None else mistake.name
    )


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _with_hint(lines: list[str], hint: str) -> list[str]:
    return [*lines, say("judge.hint", hint=hint)] if hint else lines


# --------------------------------------------------------------- checks


def expect_shape(got: Any, shape: tuple[int | None, ...], what: str) -> None:
    """`got` (an array or a shape tuple) must have `shape`."""
    have = tuple(got) if isinstance(got, (tuple, list)) else np.shape(got)
    if have != tuple(shape):
        fail([say("judge.shape", what=what, expected=tuple(shape), got=have)])


def expect_close(
    got: Any,
    expected: Any,
    what: str,
    *,
    tol: Mapping[str, float] = F32,
    diagnoses: Diagnoses | None = None,
    hint: str = "",
    properties: Sequence[Property] = (),
) -> None:
    """`got` must equal `expected` (any shape) within `tol` (see
    graders/lib/tolerances.py).

    On failure the message gives the shape mismatch or the largest
    difference with its index, leads with the diagnosis when `got` matches a
    catalogued mistake, says which of `properties` (graders/lib/properties.py:
    masked keys, rows summing to 1, causality, ...) `got` breaks, one line
    each, and ends with `hint` (the likely cause) if given.
    """
    got = _array(got)
    expected = _array(expected)
    if got.dtype.kind not in "biuf":
        fail([say("judge.non_numeric", what=what, dtype=got.dtype)])
    if got.shape != expected.shape:
        lines = [
            say(
                "judge.shape",
                what=what,
                expected=expected.shape,
                got=got.shape,
            )
        ]
        fail(_with_hint(lines, hint), diagnose(got, diagnoses, tol, expected))
    with np.errstate(invalid="ignore"):
        ok = np.isclose(got, expected, equal_nan=False, **tol)
    if ok.all():
        return
    lines = [
        say(
            "judge.wrong_values",
            what=what,
            wrong=int((~ok).sum()),
            size=ok.size,
        ),
        _largest_error(got, expected, tol),
        *(say("judge.property", line=x) for x in failed(got, properties)),
    ]
    fail(_with_hint(lines, hint), diagnose(got, diagnoses, tol, expected))


def _largest_error(
    got: np.ndarray, expected: np.ndarray, tol: Mapping[str, float]
) -> str:
    """One indented line: the first unexpected NaN, or the largest
    difference, with its index."""
    bad_nan = np.isnan(got) & ~np.isnan(expected)
    if bad_nan.any():
        index = tuple(int(i) for i in np.argwhere(bad_nan)[0])
        return say("judge.nan", index=index, expected=_fmt(expected[index]))
    diff = np.abs(got.astype(np.float64) - expected)
    index = tuple(
        int(i) for i in np.unravel_index(np.nanargmax(diff), diff.shape)
    )
    return say(
        "judge.largest",
        diff=_fmt(diff[index]),
        index=index,
        expected=_fmt(expected[index]),
        got=_fmt(got[index]),
        atol=f"{tol['atol']:g}",
        rtol=f"{tol['rtol']:g}",
        shape=got.shape,
    )


def expect(
    condition: bool,
    message: str,
    *,
    got: Any = None,
    diagnoses: Diagnoses | None = None,
    tol: Mapping[str, float] = F32,
    expected: Any = None,
) -> None:
    """A behavioural invariant: `message` says what should hold and what
    came; `got` (optional) is matched against `diagnoses` by `diagnose`'s
    rule, `expected` (the right value of `got`, when it has one) leaving
    out the mistakes that do not change it."""
    if not condition:
        mistake = (
            diagnose(got, diagnoses, tol, expected) if got is not None else None
        )
        fail([message], mistake)


def expect_count(
    got: int,
    expected: int,
    what: str,
    diagnoses: Mapping[Mistake, int] | None = None,
    hint: str = "",
) -> None:
    """An exact count (parameters), with its formula in `hint`; a mistake
    whose count equals `got` is named (by `only_match`'s rule)."""
    if int(got) == int(expected):
        return
    lines = [
        say(
            "judge.count",
            what=what,
            expected=f"{expected:,}",
            got=f"{int(got):,}",
        )
    ]
    counts = {m: int(n) for m, n in (diagnoses or {}).items()}
    mistake = only_match(int(got), counts, int.__eq__, int(expected))
    fail(_with_hint(lines, hint), mistake)


def expect_reference(
    got: Any,
    reference: Callable[..., Any],
    weights: Sequence[np.ndarray] | Mapping[str, Sequence[np.ndarray]],
    what: str,
    *,
    mistakes: Sequence[Mistake] = (),
    tol: Mapping[str, float] = F32,
    hint: str = "",
) -> None:
    """`got` must equal `reference(weights)` (float64).

    `weights` (a list, or a dict by sublayer name) are those the student's
    layer ended up with (the grader's, transferred where the shapes fit):
    when they do not fit the reference's layout, the failure names the
    shapes, and a mistake whose reference (`reference(weights, mistake=m)`)
    reproduces `got` is named.
    """
    diagnoses = {
        m: (lambda m=m: reference(weights, mistake=m)) for m in mistakes
    }
    try:
        expected = reference(weights)
    except (ValueError, IndexError) as exc:
        lines = [
            say(
                "judge.layout",
                what=what,
                error=exc,
                shapes=_shapes(weights),
            )
        ]
        fail(_with_hint(lines, hint), diagnose(got, diagnoses, tol))
    expect_close(got, expected, what, tol=tol, diagnoses=diagnoses, hint=hint)


def _shapes(weights: Any) -> Any:
    if isinstance(weights, dict):
        return {k: _shapes(v) for k, v in weights.items()}
    return [tuple(np.shape(w)) for w in weights]


def stack_same_shape(arrays: Sequence[Any], what: str) -> np.ndarray:
    """`arrays` (e.g. one state per layer, each (B, U)) stacked into one
    array (n, B, U); a failed check if their shapes differ."""
    shapes = sorted({tuple(np.shape(a)) for a in arrays})
    expect(
        len(shapes) == 1,
        say("judge.same_shape", what=what, shapes=shapes),
    )
    return np.stack([np.asarray(a) for a in arrays])


# ------------------------------------------------------ remembered probes

_MEMO: dict[tuple, Any] = {}


def memo(probe: Callable[..., Any], module: str, *args: Any) -> Any:
    """`probe(*args)`, remembered while the graded file is unchanged: two
    checks that judge the same facts (a network's table and its parameter
    count) share one run. Keyed on the graded folder, the lesson file's
    mtime and size, the probe and its arguments; failures are not kept."""
    from pathlib import Path

    from m2t.grading import probe as _probe

    folder = Path(getattr(_probe.runner(), "folder", "."))
    try:
        stat = (folder / f"{module}.py").stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        return probe(*args)
    key = (str(folder), stamp, probe.__name__, repr(args))
    if key not in _MEMO:
        _MEMO[key] = probe(*args)
    return _MEMO[key]
