"""The instructor's key: `solutions/questions_key/lNN.toml`, one file per
lesson, beside the bank's `graders/questions/lNN.toml`.

Each entry holds the answer (or a `range`, or the `defensible` options of an
open question) and an explanation in both languages. The key is *not* in the
student edition: small answer spaces can be brute-forced, so no hashes
either.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from m2t import ROOT
from m2t.questions.questionbank import QUESTION_ID
from m2t.questions.questionbank import flow
from m2t.settings import tomllib

KEY_DIR = ROOT / "solutions" / "questions_key"


@dataclasses.dataclass(frozen=True)
class Key:
    """The instructor's key for one question."""

    id: str
    answer: Any = None
    range: tuple[float, float] | None = None
    defensible: tuple[str, ...] = ()
    explanation_en: str = ""
    explanation_zh: str = ""


def load_key(folder: Path = KEY_DIR) -> dict[str, Key] | None:
    """The key of every lesson, or None where it is not shipped (the
    student edition).

    Raises:
        ValueError: naming the file and the entry whose id belongs to
            another lesson's file, or is used twice.
    """
    if not folder.is_dir():
        return None
    key: dict[str, Key] = {}
    for path in sorted(folder.glob("l[0-9][0-9].toml")):
        lesson = path.stem[1:]
        with open(path, "rb") as f:
            data = tomllib.load(f)
        for qid, entry in data.items():
            match = QUESTION_ID.fullmatch(qid)
            if not match or match.group(1) != lesson:
                raise ValueError(
                    f"{path.name} [{qid}]: ids in {path.name} are q{lesson}_N"
                )
            if qid in key:
                raise ValueError(f"{path.name} [{qid}]: id {qid} is used twice")
            key[qid] = Key(
                id=qid,
                answer=entry.get("answer"),
                range=tuple(entry["range"]) if "range" in entry else None,
                defensible=tuple(entry.get("defensible", ())),
                explanation_en=flow(entry.get("explanation_en", "")),
                explanation_zh=flow(entry.get("explanation_zh", "")),
            )
    return key
