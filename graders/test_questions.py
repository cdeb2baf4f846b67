"""Grader for the question list: one check per question id.

The answers are data, not code: `answers.toml` of the graded folder
(`lessons/` by default, `solutions/` with `--impl solutions`, or a
submission) is read here with the harness's own TOML parser and judged
against the instructor's key, `solutions/questions_key/lNN.toml`. Where the
key is not shipped (the student edition), a readable answer is recorded and
"graded by your instructor". Experiments are numbers the student measured
with their own code; their expected values come from the reference formulas
in `m2t.questions.experiments`, so they are graded in every edition.

Before the instructor's `feedback_after` deadline
(`m2t.questions.feedback`), a readable answer's check is skipped with the
same words whether it is right or wrong.

Unanswered questions all carry one first line, the count ("72 of 79
questions not answered yet"), so the report shows it once rather than a
line per question; a free-text question answered with text only keeps its
automatic points in the maximum (it is "todo", not skipped).
"""

from __future__ import annotations

import pytest

from graders.lib.judge import CheckFailed
from graders.lib.messages import say
from m2t import questions
from m2t.grading import probe as _probe
from m2t.questions import expected_value
from m2t.questions import feedback

BANK = questions.bank()
KEY = questions.load_key()
HIDDEN_UNTIL = feedback.hidden_until()
"""The instructor's deadline while it is ahead (`m2t.questions.feedback`):
until then no verdict of a readable answer is shown."""


# ------------------------------------------------------------------ check
_CACHE: dict[tuple, questions.AnswersFile] = {}


def answers() -> questions.AnswersFile:
    """The graded folder's answers file, read once per version."""
    path = _probe.runner().folder / questions.ANSWERS
    stamp = path.stat().st_mtime_ns if path.exists() else None
    key = (str(path), stamp)
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = questions.read_answers(path)
    return _CACHE[key]


PARAMS = [
    pytest.param(q.id, id=q.id, marks=pytest.mark.points(q.points))
    for q in BANK.values()
]


def unanswered(file: questions.AnswersFile) -> str:
    """The one line every unanswered question reports: how many of the
    bank's questions wait for an answer in `file`."""
    where = questions.display(file.path)
    if not file.exists:
        return say("questions.no_file", total=len(BANK), where=where)
    waiting = sum(
        1
        for qid in BANK
        if qid not in file.errors
        and questions.is_empty((file.tables.get(qid) or {}).get("answer"))
    )
    return say(
        "questions.waiting", waiting=waiting, total=len(BANK), where=where
    )


@pytest.mark.parametrize("qid", PARAMS)
def test_question(qid, record_property):
    question = BANK[qid]
    file = answers()
    where = questions.display(file.path)
    if not file.exists:
        raise _probe.NotStarted(
            f"{unanswered(file)}\n{say('questions.no_answers', qid=qid)}"
        )
    if qid in file.errors:
        raise CheckFailed(f"{qid}: {file.errors[qid]}")
    key = KEY.get(qid) if KEY is not None else None
    verdict = questions.judge(
        question,
        file.tables.get(qid),
        key,
        expected_value(question),
    )
    if verdict.text.strip():
        record_property("free_text", verdict.text.strip())
    deadline = HIDDEN_UNTIL
    if deadline is not None and verdict.status in ("correct", "wrong"):
        # the same words for a right and a wrong answer (feedback.py)
        pytest.skip(
            say(
                "questions.hidden",
                qid=qid,
                deadline=deadline.isoformat(timespec="minutes"),
            )
        )
    if verdict.status == "correct":
        return
    if verdict.status == "not_answered":
        missing = say("questions.not_answered", qid=qid, where=where)
        raise _probe.NotStarted(f"{unanswered(file)}\n{missing}")
    if verdict.status == "recorded":  # the letters are still to come
        raise _probe.NotStarted(verdict.message)
    if verdict.status == "ungraded":
        pytest.skip(verdict.message)
    line = file.lines.get(qid)
    at = f" ({where}:{line})" if line else ""
    raise CheckFailed(verdict.message + at)
