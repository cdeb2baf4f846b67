"""Judge-side references, marked so that no student-side copy holds them.

    @reference
    def ref_masked_softmax(X, valid_lens, mistake=None): ...

`@reference` marks a function that computes what a check expects (a float64
NumPy reference, a tape gradient, Keras's own layer): it runs in the judge
only. The grading worker's copy of `graders/` is stripped of every marked
body (`m2t.grading.strip`), and so are the modules that hold nothing but
references (`graders/lib/references.py`, `cnn_references.py`, `tapes.py`):
a submission that imports the graders finds stubs that raise RuntimeError.

In this repository `@reference` returns the function unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., Any])

MARK = "__m2t_reference__"
"""The attribute `@reference` sets on a function (True)."""


def reference(fn: F) -> F:
    """Mark `fn` as a judge-side reference (see the module docstring).

    Raises:
        ValueError: `fn` is not a function.
    """
    if not callable(fn):
        raise ValueError(f"@reference: fn must be callable, got {fn!r}")
    setattr(fn, MARK, True)
    return fn


def is_reference(fn: Any) -> bool:
    """Was `fn` marked with `@reference`?"""
    return getattr(fn, MARK, False) is True
