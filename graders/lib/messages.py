"""The graders' words in the student's language: the check messages of
graders/messages/{en,zh}.toml and the Chinese of each `Mistake`'s
description (graders/messages/mistakes.zh.toml).

The language is the harness's (`m2t.i18n.language()`: `m2t --lang`,
`M2T_LANG`, then the locale); `m2t grade` runs the graders in its own
process, so they follow it.

    say("judge.shape", what=..., expected=..., got=...)
    mistake_text("l16_attention_scoring", "no_scale", "the scores ...")
"""

from __future__ import annotations

from pathlib import Path

from m2t import i18n

FOLDER = Path(__file__).resolve().parents[1] / "messages"
CHECKS = i18n.Catalogue(FOLDER)
"""graders/messages/en.toml and zh.toml: the check messages."""
MISTAKES = i18n.Catalogue(FOLDER, "mistakes")
"""graders/messages/mistakes.zh.toml: `[lesson module]` then
`mistake name = "..."` (the English stays in the grader)."""


def say(key: str, /, **fields: object) -> str:
    """The check message `key` in the run's language, its fields filled
    (figures already formatted by the caller)."""
    return CHECKS.text(key, **fields)


def mistake_text(lesson: str, name: str, english: str) -> str:
    """The description of mistake `name` of `lesson` (a module, e.g.
    `l16_attention_scoring`) in the run's language: `english` itself, or
    its entry in `mistakes.<lang>.toml`.

    Raises:
        m2t.i18n.MissingText: no entry in that language, in the full
            repository (elsewhere the English is shown).
    """
    lang = i18n.language()
    if lang == "en":
        return english
    found = MISTAKES.get(f"{lesson}.{name}", lang)
    if found is not None:
        return found
    if i18n.strict():
        raise i18n.MissingText(
            f"{MISTAKES.path(lang)}: no description of [{lesson}] {name}"
        )
    return english
