"""The lesson notes: English and Chinese side by side, each with its checks,
each misreading named in both languages (d2l-zh's terms: test_terms_zh.py)."""

import re

import pytest

from m2t import ROOT
from m2t import curriculum

NOTES = sorted((ROOT / "lessons" / "notes").glob("l[0-9][0-9]_*.md"))
SECTIONS = ("## English", "## 中文", "## Check yourself", "## 自测")
BOX_EN = "> **A common reading says**"
BOX_ZH = "> **常见的一种理解是**"


def sections(text: str) -> dict[str, str]:
    parts = re.split(r"^(## .+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def boxes_of(text: str, opening: str) -> list[str]:
    """The quoted boxes that open with `opening`, each on one line."""
    pattern = r"^> \*\*" + re.escape(opening) + r".*?(?=^$|\Z)"
    return [
        " ".join(box.replace("\n>", " ").split())
        for box in re.findall(pattern, text, re.M | re.S)
    ]


def test_there_is_a_note_per_lesson():
    numbered = [x for x in curriculum.lessons() if not x.is_question_list]
    assert [n.stem for n in NOTES] == sorted(x.module for x in numbered)


@pytest.mark.parametrize("note", NOTES, ids=lambda p: p.stem[:3])
def test_each_note_is_complete_in_both_languages(note):
    text = note.read_text(encoding="utf-8")
    parts = sections(text)
    assert tuple(parts) == SECTIONS, note.name
    bullets = [
        len(re.findall(r"^- ", parts[s], flags=re.M)) for s in SECTIONS[2:]
    ]
    assert bullets[0] == bullets[1] > 0, f"{note.name}: checks {bullets}"
    boxes = (
        parts["## English"].count(BOX_EN),
        parts["## 中文"].count(BOX_ZH),
    )
    assert boxes[0] == boxes[1], f"{note.name}: misreadings {boxes}"
    for box in boxes_of(text, "A common reading"):
        assert "**In fact**" in box, box[:60]
    for box in boxes_of(text, "常见的"):
        assert "**实际上**" in box.replace(" ", ""), box[:60]


def test_the_misreadings_the_course_corrects_are_named():
    # Each misreading of the study notes, and the note that corrects it.
    named = {
        "l07": "within a batch",
        "l08": "unit vector",
        "l14": "penalises long",
        "l15": "attention weights are the query",
        "l16": "masks the queries",
        "l18": 'is "the FFN"',
        "l20": "over all the tokens of a",
    }
    for lesson, words in named.items():
        [note] = [n for n in NOTES if n.stem.startswith(lesson)]
        english = sections(note.read_text(encoding="utf-8"))["## English"]
        boxes = boxes_of(english, "A common reading")
        assert any(words in b for b in boxes), (lesson, words)
