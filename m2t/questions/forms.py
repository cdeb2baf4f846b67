"""Reading an answer: letters, numbers and shapes, forgiving where the
meaning is unambiguous and strict otherwise (big-O is in `bigo`)."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from m2t.i18n import text as _text
from m2t.questions.questionbank import Question


class AnswerError(ValueError):
    """An answer that cannot be read (as opposed to a wrong one)."""


_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_SUPERSCRIPT_RUN = re.compile(r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+")


def plain_text(value: str) -> str:
    """Superscripts to ^n, then full-width forms to ASCII (NFKC)."""
    value = _SUPERSCRIPT_RUN.sub(
        lambda m: "^" + m.group(0).translate(_SUPERSCRIPTS), value
    )
    value = unicodedata.normalize("NFKC", value)
    return value.replace("·", "*").replace("×", "*").replace("−", "-").strip()


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def parse_letters(value: Any, question: Question) -> tuple[str, ...]:
    """Letters of `question`'s options, sorted and without repeats.

    "a, c", "A C", "(a) (c)", "AC" and ["A", "c"] all read as ("A", "C").
    """
    if isinstance(value, str):
        text = plain_text(value).strip("[]{} ")
        parts = [p for p in re.split(r"[\s,;/&+，、和及]+", text) if p]
        tokens = [p.strip("()[].:'\"") for p in parts]
        if len(tokens) == 1 and len(tokens[0]) > 1 and tokens[0].isalpha():
            tokens = list(tokens[0])  # "AC"
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        tokens = [plain_text(v).strip("()[].: ") for v in value]
    else:
        raise AnswerError(_text("answer.letters_expected"))
    letters = set()
    for token in tokens:
        upper = token.upper()
        if len(upper) != 1 or upper not in question.letters:
            raise AnswerError(
                _text(
                    "answer.not_an_option",
                    token=repr(token),
                    letters=", ".join(question.letters),
                )
            )
        letters.add(upper)
    return tuple(sorted(letters))


def parse_number(value: Any) -> float:
    """A finite number: 0.75, "0.75", "3/4", "7.5e-1", "40_000"."""
    if _is_number(value):
        number = float(value)
    elif isinstance(value, str):
        text = plain_text(value).replace("_", "").replace(" ", "")
        if "," in text:
            raise AnswerError(_text("answer.comma", value=repr(value)))
        if text.endswith("%"):
            raise AnswerError(_text("answer.percent", value=repr(value)))
        try:
            if re.fullmatch(r"[-+]?\d+(\.\d*)?/[-+]?\d+(\.\d*)?", text):
                top, bottom = text.split("/")
                number = float(top) / float(bottom)
            else:
                number = float(text)
        except (ValueError, ZeroDivisionError):
            raise AnswerError(
                _text("answer.not_a_number", value=repr(value))
            ) from None
    else:
        raise AnswerError(_text("answer.number_expected", value=repr(value)))
    if not math.isfinite(number):
        raise AnswerError(_text("answer.not_finite", value=repr(value)))
    return number


def parse_shape(value: Any) -> tuple[int, ...]:
    """(2, 3, 4) from [2, 3, 4], "(2, 3, 4)", "[2,3,4]", "2x3x4", "2 × 3 × 4"
    or "2 * 3 * 4"; every axis a whole number."""
    if isinstance(value, list):
        items = value
    elif isinstance(value, str):
        text = plain_text(value).strip()
        if text[:1] in "([" and text[-1:] in ")]":
            text = text[1:-1]
        text = re.sub(r"(?<=\d)\s*[xX*]\s*(?=\d)", ",", text)
        items = [p for p in re.split(r"\s*,\s*|\s+", text.strip()) if p]
    else:
        raise AnswerError(_text("answer.shape_expected"))
    dims: list[int] = []
    for item in items:
        if isinstance(item, int) and not isinstance(item, bool) and item >= 0:
            dims.append(item)
        elif isinstance(item, str) and re.fullmatch(r"\d+", item):
            dims.append(int(item))
        else:
            raise AnswerError(_text("answer.not_an_axis", item=repr(item)))
    if not dims:
        raise AnswerError(_text("answer.no_axes"))
    return tuple(dims)


def show_shape(shape: Sequence[int]) -> str:
    inner = ", ".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"
