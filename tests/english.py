"""What the Chinese tests share: the lessons whose graders still speak
English, and the detector of an English sentence left in a Chinese text.

STILL_ENGLISH: when a lesson's grader speaks Chinese through and through
(every check message from graders/messages, every mistake in
mistakes.zh.toml), delete its number from the set below, one line edit,
and run

    pytest tests/test_i18n.py tests/test_mutants.py -q -p no:xdist -k lNN

Then `test_mutants` grades each of its mutants in Chinese and fails on any
English sentence in a failing check's message, and `test_i18n` grades its
skeleton in Chinese (all such skeletons in one `m2t grade`).
"""

from __future__ import annotations

import re

from m2t import curriculum

STILL_ENGLISH: set[str] = set()
"""The lessons whose graders' own check messages are English still."""


def speaks_chinese(lesson: curriculum.Lesson) -> bool:
    """Whether `lesson`'s grader is off the STILL_ENGLISH list."""
    return lesson.id not in STILL_ENGLISH


def chinese_graders() -> list[curriculum.Lesson]:
    """The lessons with a grader that speaks Chinese, in course order."""
    return [
        x
        for x in curriculum.lessons()
        if x.grader.exists() and not x.is_question_list and speaks_chinese(x)
    ]


_WIDE = re.compile(r"[\u2e80-\uffef]+")
_CODE = re.compile(r"`[^`]*`|「[^」]*」")
"""Code, and what the student's code raised, quoted (probe.raised_detail):
TensorFlow's own words are not ours to translate."""
_WORD = re.compile(r"[A-Za-z][a-z]+")
_BRACKETS = "()[]{}<>,.;:!?"
_EDGES = _BRACKETS + "\"'"
_LITERAL = re.compile(r"'[^']*'|\"[^\"]*\"")
"""A string value as Python writes it ('the', "cat"): data the student's
code returned, tokens of a corpus, not a sentence of ours."""
_NUMBERS = {"inf", "nan", "Inf", "NaN"}  # how NumPy writes some floats


def english_sentences(text: str) -> list[str]:
    """The English left in `text`: each run of two or more English words
    in a row, a word being letters only, at least two of them, lower case
    after the first (so identifiers, CamelCase classes, TODO, paths,
    shapes and numbers, inf and nan too, are not words). Code in backticks,
    an exception's own message in 「」 and string values ('the') are left
    out, and Chinese characters end a run."""
    found = []
    for line in text.splitlines():
        for segment in _WIDE.split(_CODE.sub(" ", line)):
            run: list[str] = []
            for token in [*segment.split(), ""]:
                word = token.strip(_EDGES)
                literal = _LITERAL.fullmatch(token.strip(_BRACKETS))
                if (
                    _WORD.fullmatch(word)
                    and word not in _NUMBERS
                    and not literal
                ):
                    run.append(token)
                    continue
                if len(run) >= 2:
                    found.append(" ".join(run))
                run = []
    return found


def no_english(text: str) -> None:
    """Fail, quoting the English sentences, if `text` has any."""
    left = english_sentences(text)
    assert not left, f"English left: {left}\n{text}"
