"""The lesson notes: one per lesson, each misreading the course corrects
named. Each note's sections, checks and misreadings in both languages are
m2t.authoring.rules.notes_in_both_languages (tests/test_rules.py); d2l-zh's
terms: test_terms_zh.py."""

from m2t import ROOT
from m2t import curriculum
from m2t.authoring import rules

NOTES = sorted((ROOT / "lessons" / "notes").glob("l[0-9][0-9]_*.md"))


def test_there_is_a_note_per_lesson():
    numbered = [x for x in curriculum.lessons() if not x.is_question_list]
    assert [n.stem for n in NOTES] == sorted(x.module for x in numbered)


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
        english = rules.sections(note.read_text(encoding="utf-8"))["## English"]
        boxes = rules.boxes_of(english, "A common reading")
        assert any(words in b for b in boxes), (lesson, words)
