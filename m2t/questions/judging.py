"""Judging one answer against the key (or against an experiment's value,
which the grader computes)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from m2t.i18n import text as _text
from m2t.questions.answers import is_empty
from m2t.questions.bigo import parse_expression
from m2t.questions.bigo import show_expression
from m2t.questions.forms import AnswerError
from m2t.questions.forms import parse_letters
from m2t.questions.forms import parse_number
from m2t.questions.forms import parse_shape
from m2t.questions.forms import show_shape
from m2t.questions.key import Key
from m2t.questions.questionbank import Question


@dataclasses.dataclass(frozen=True)
class Verdict:
    """How one answer fares.

    status: "correct", "wrong", "malformed" (cannot be read),
    "not_answered", "ungraded" (readable, but the key is not here) or
    "recorded" (free text only, for the instructor).
    """

    status: str
    message: str
    text: str = ""


def _reading(question: Question, value: Any) -> tuple[Any, str]:
    """(the normalised answer, how it reads) or AnswerError."""
    kind = question.kind
    if kind in ("one_of", "several_of"):
        letters = parse_letters(value, question)
        if kind == "one_of" and len(letters) != 1:
            raise AnswerError(
                _text("judging.one_letter", letters=", ".join(letters))
            )
        return letters, ", ".join(letters)
    if kind in ("number", "experiment"):
        number = parse_number(value)
        return number, f"{number:g}"
    if kind == "shape":
        shape = parse_shape(value)
        return shape, show_shape(shape)
    poly = parse_expression(value)
    return poly, show_expression(poly)


def expected_reading(question: Question, key: Key) -> Any:
    """The key's answer, normalised as a student's would be."""
    if question.kind == "several_of" and question.open:
        return parse_letters(list(key.defensible), question)
    if question.kind == "number" and key.range is not None:
        return tuple(float(x) for x in key.range)
    return _reading(question, key.answer)[0]


def _close(question: Question, got: float, expected: float) -> bool:
    tol = question.tolerance + question.rel_tolerance * abs(expected)
    return abs(got - expected) <= max(tol, 1e-12 * max(1.0, abs(expected)))


def judge(
    question: Question,
    table: Mapping[str, Any] | None,
    key: Key | None,
    expected: float | None = None,
) -> Verdict:
    """Judge one answer table against the key.

    Args:
        question: from the bank.
        table: the answer's table (`answer`, optional `text`), or None.
        key: the key of this question, or None where the key is absent.
        expected: an experiment's value, computed by the grader.
    """
    qid = question.id
    table = dict(table or {})
    unknown = sorted(set(table) - {"answer", "text"})
    if unknown:
        return Verdict(
            "malformed",
            _text(
                "judging.unknown_keys",
                qid=qid,
                keys=", ".join(map(repr, unknown)),
            ),
        )
    text = table.get("text", "")
    if not isinstance(text, str):
        return Verdict("malformed", _text("judging.text_not_str", qid=qid))
    value = table.get("answer")
    if is_empty(value):
        if question.free_text and text.strip():
            return Verdict(
                "recorded", _text("judging.free_text", qid=qid), text
            )
        return Verdict(
            "not_answered", _text("judging.not_answered", qid=qid), text
        )
    try:
        got, reading = _reading(question, value)
    except AnswerError as exc:
        return Verdict(
            "malformed",
            _text(
                "judging.unreadable",
                qid=qid,
                error=exc,
                format=question.format_in(),
            ),
            text,
        )
    if question.kind == "experiment":
        if expected is None:
            raise ValueError(f"{qid}: the experiment's value is missing")
        ok = _close(question, got, expected)
    elif key is None:
        return Verdict(
            "ungraded",
            _text("judging.ungraded", qid=qid, reading=reading),
            text,
        )
    else:
        want = expected_reading(question, key)
        if question.kind == "several_of" and question.open:
            ok = bool(got) and set(got) <= set(want)
        elif question.kind == "number" and key.range is not None:
            ok = want[0] <= got <= want[1]
        elif question.kind == "number":
            ok = _close(question, got, want)
        elif question.kind == "shape":
            ok = got == want
        else:
            ok = got == want
    if ok:
        return Verdict("correct", "", text)
    extra = _text("judging.not_defensible") if question.open else ""
    return Verdict(
        "wrong",
        _text("judging.wrong", qid=qid, extra=extra, reading=reading),
        text,
    )
