"""Which questions `m2t explain ID ...` names: an id as the bank writes it
(`q16_2`), typed in any case or without its `q` (`Q16_2`, `16_2`), or a
lesson (`16`, `l16`) for all of that lesson's questions."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from collections.abc import Sequence

from m2t import i18n
from m2t.questions.questionbank import Question

NEAREST = 5
"""How many ids an error suggests at most (all of a lesson's, when the id
names a lesson that has questions)."""


def normalise(name: str) -> str:
    """`name` as the bank spells ids: " Q16_2 " -> "q16_2", "16_2" ->
    "q16_2"; a lesson stays a lesson ("L16" -> "l16")."""
    key = name.strip().lower()
    if re.fullmatch(r"\d+_\d+", key):
        key = f"q{key}"
    return key


def _lesson(key: str) -> str | None:
    """The lesson ("16") that `key` ("16", "l16", "l6") names, or None."""
    match = re.fullmatch(r"l?(\d{1,2})", key)
    return match.group(1).zfill(2) if match else None


def nearest(key: str, bank: Mapping[str, Question]) -> list[str]:
    """The ids closest to `key` (normalised): every id of the lesson it
    names when that lesson has questions, else the most similar spellings
    (ties in the bank's order)."""
    match = re.fullmatch(r"q(\d+)_\d+", key)
    lesson = match.group(1).zfill(2) if match else _lesson(key)
    same = [qid for qid, q in bank.items() if q.lesson == lesson]
    if same:
        return same
    ratio = {
        qid: difflib.SequenceMatcher(None, key, qid).ratio() for qid in bank
    }
    ranked = sorted(bank, key=lambda qid: -ratio[qid])  # stable: bank order
    return ranked[:NEAREST]


def choose(
    names: Sequence[str], bank: Mapping[str, Question]
) -> list[Question]:
    """The questions `names` name, in the bank's order; all when empty.

    Raises:
        ValueError: a name that is neither an id of the bank nor a lesson
            with questions, naming the argument, the value as typed and
            the nearest ids.
    """
    wanted_ids: set[str] = set()
    wanted_lessons: set[str] = set()
    lessons = {q.lesson for q in bank.values()}
    for name in names:
        key = normalise(name)
        if key in bank:
            wanted_ids.add(key)
        elif _lesson(key) in lessons:
            wanted_lessons.add(_lesson(key))
        else:
            raise ValueError(
                i18n.text(
                    "questions.unknown_id",
                    value=repr(name),
                    nearest=", ".join(nearest(key, bank)),
                )
            )
    return [
        q
        for q in bank.values()
        if not names or q.id in wanted_ids or q.lesson in wanted_lessons
    ]
