"""What is wrong with the bank and the key (the self-check runs this)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from m2t.questions.answers import display
from m2t.questions.forms import AnswerError
from m2t.questions.judging import expected_reading
from m2t.questions.key import KEY_DIR
from m2t.questions.key import Key
from m2t.questions.key import load_key
from m2t.questions.questionbank import SEEDS
from m2t.questions.questionbank import Question
from m2t.questions.questionbank import bank
from m2t.settings import tomllib


def problems(
    questions: Mapping[str, Question] | None = None,
    key: Mapping[str, Key] | None = None,
    experiments: Mapping[str, Any] | None = None,
) -> list[str]:
    """What is wrong with the bank and the key (the self-check runs this)."""
    from m2t import curriculum

    out = []
    try:
        questions = bank() if questions is None else questions
    except (ValueError, KeyError, tomllib.TOMLDecodeError) as exc:
        return [f"questions: the bank cannot be read: {exc}"]
    key = load_key() if key is None else key
    lessons = {lesson.id for lesson in curriculum.lessons()}
    seeds: dict[int, list[str]] = {}
    for q in questions.values():
        where = f"questions: {q.id}"
        if q.lesson not in lessons:
            out.append(f"{where}: lesson {q.lesson} is not in curriculum.toml")
        if not q.en or not q.zh:
            out.append(f"{where}: the text needs English and Chinese")
        if q.points <= 0:
            out.append(f"{where}: points must be positive")
        if q.seed is not None:
            seeds.setdefault(q.seed, []).append(q.id)
        choice = q.kind in ("one_of", "several_of")
        if choice and len(q.options) < 2:
            out.append(f"{where}: a {q.kind} question needs options")
        if not choice and q.options:
            out.append(f"{where}: a {q.kind} question has no options")
        if any(not o.en or not o.zh for o in q.options):
            out.append(f"{where}: every option needs English and Chinese")
        if q.open and q.kind != "several_of":
            out.append(f"{where}: only several_of questions can be open")
        tolerant = bool(q.tolerance or q.rel_tolerance)
        if q.kind == "experiment" and not tolerant:
            out.append(f"{where}: an experiment needs a tolerance")
        if (q.kind == "experiment") != bool(q.experiment):
            out.append(f"{where}: `experiment` names the grader's reference")
        if experiments is not None and q.experiment:
            if q.experiment not in experiments:
                out.append(f"{where}: no reference {q.experiment!r}")
    for seed in SEEDS:
        ids = seeds.get(seed, [])
        if len(ids) != 1:
            out.append(
                f"questions: seed question {seed} must be in the bank once "
                f"(found {ids or 'none'})"
            )
    if key is None:
        return out
    for qid in sorted(set(key) - set(questions)):
        out.append(f"questions: the key has {qid}, which the bank has not")
    for q in questions.values():
        k = key.get(q.id)
        where = f"questions: {q.id}"
        if k is None:
            path = KEY_DIR / f"l{q.lesson}.toml"
            out.append(f"{where}: no key in {display(path)}")
            continue
        if not k.explanation_en or not k.explanation_zh:
            out.append(f"{where}: the key needs explanations (en and zh)")
        if q.kind == "experiment":
            if k.answer is not None:
                out.append(
                    f"{where}: an experiment's value is computed by the "
                    "grader, not written in the key"
                )
            continue
        if q.open and (k.answer is not None or not k.defensible):
            out.append(f"{where}: an open question's key lists `defensible`")
            continue
        if not q.open and k.answer is None and k.range is None:
            out.append(f"{where}: the key has no answer")
            continue
        try:
            expected_reading(q, k)
        except AnswerError as exc:
            out.append(f"{where}: the key's answer cannot be read: {exc}")
    return out
