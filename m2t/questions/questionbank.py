"""The public bank: `graders/questions/lNN.toml`, one file per lesson.

Each question has an id, its text in Chinese and English, a kind, options
and points; no answer is in here, and the bank ships with the student
edition.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from m2t import ROOT
from m2t.i18n import MESSAGES
from m2t.settings import tomllib

BANK_DIR = ROOT / "graders" / "questions"
KINDS = ("one_of", "several_of", "number", "shape", "expression", "experiment")
SEEDS = range(1, 17)
QUESTION_ID = re.compile(r"q(\d\d)_(\d+)")
_text = MESSAGES.text


@dataclasses.dataclass(frozen=True)
class Option:
    en: str
    zh: str


@dataclasses.dataclass(frozen=True)
class Question:
    """One question of the public bank (no answer in here)."""

    id: str
    lesson: str  # "16"
    kind: str
    points: float
    en: str
    zh: str
    options: tuple[Option, ...] = ()
    seed: int | None = None
    open: bool = False
    free_text: bool = False
    tolerance: float = 0.0
    rel_tolerance: float = 0.0
    experiment: str | None = None
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def letters(self) -> str:
        return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[: len(self.options)]

    @property
    def format(self) -> str:
        """How to write the answer, in English (answers.toml's template,
        one file whatever the language)."""
        return self.format_in("en")

    def format_in(self, lang: str | None = None) -> str:
        """How to write the answer, in `lang` (default: the run's), e.g.
        `a number, e.g. answer = 0.25 or answer = "1/4" (graded within
        ±0.01)`: m2t/messages `answer_format.*`."""
        text = _text(f"answer_format.{self.kind}", lang=lang)
        if self.kind in ("number", "experiment"):
            parts = []
            if self.tolerance:
                parts.append(f"±{self.tolerance:g}")
            if self.rel_tolerance:
                parts.append(f"±{self.rel_tolerance:.0%}")
            if parts:
                bounds = _text("answer_format.or", lang=lang).join(parts)
                text += _text("answer_format.within", lang=lang, bounds=bounds)
        if self.open:
            text += _text("answer_format.open", lang=lang)
        return text


_QUESTION_KEYS = {
    "kind",
    "points",
    "en",
    "zh",
    "option",
    "seed",
    "open",
    "free_text",
    "tolerance",
    "rel_tolerance",
    "experiment",
    "params",
}


def is_wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in "WF"


def flow(text: str) -> str:
    """Join the lines of a TOML multi-line string into one paragraph per
    blank-line-separated block (no space between two Chinese characters)."""
    paragraphs = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        joined = lines[0] if lines else ""
        for line in lines[1:]:
            glue = "" if is_wide(joined[-1]) and is_wide(line[0]) else " "
            joined += glue + line
        paragraphs.append(joined)
    return "\n".join(paragraphs)


def bank(folder: Path = BANK_DIR) -> dict[str, Question]:
    """Every question, in lesson order then file order.

    Raises:
        ValueError: naming the file and the question that is malformed.
    """
    questions: dict[str, Question] = {}
    for path in sorted(folder.glob("l[0-9][0-9].toml")):
        lesson = path.stem[1:]
        with open(path, "rb") as f:
            data = tomllib.load(f)
        for qid, entry in data.items():
            where = f"{path.name} [{qid}]"
            match = QUESTION_ID.fullmatch(qid)
            if not match or match.group(1) != lesson:
                raise ValueError(f"{where}: ids in {path.name} are q{lesson}_N")
            if qid in questions:
                raise ValueError(f"{where}: id {qid} is used twice")
            unknown = set(entry) - _QUESTION_KEYS
            if unknown:
                raise ValueError(f"{where}: unknown field(s) {sorted(unknown)}")
            if entry.get("kind") not in KINDS:
                raise ValueError(f"{where}: kind must be one of {KINDS}")
            questions[qid] = Question(
                id=qid,
                lesson=lesson,
                kind=entry["kind"],
                points=float(entry.get("points", 1)),
                en=flow(entry["en"]),
                zh=flow(entry["zh"]),
                options=tuple(
                    Option(flow(o["en"]), flow(o["zh"]))
                    for o in entry.get("option", ())
                ),
                seed=entry.get("seed"),
                open=bool(entry.get("open", False)),
                free_text=bool(entry.get("free_text", False)),
                tolerance=float(entry.get("tolerance", 0.0)),
                rel_tolerance=float(entry.get("rel_tolerance", 0.0)),
                experiment=entry.get("experiment"),
                params=dict(entry.get("params", {})),
            )
    return questions
