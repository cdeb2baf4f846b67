"""Every known mistake (solutions/mutants/*.toml) is caught by its lesson's
grader and diagnosed by name; docs/mistakes.md lists them as they are.

A lesson whose grader speaks Chinese (off tests/english.py's STILL_ENGLISH)
has its mutants graded in Chinese: the same failing checks, the same names
diagnosed ("可能的错误 [name]"), and no English sentence in any failing
check's message."""

import json

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t.authoring import grader_rules
from m2t.authoring import mutants
from tests.english import english_sentences
from tests.english import speaks_chinese

WITH_MUTANTS = [
    lesson
    for lesson in curriculum.lessons()
    if mutants.catalogue(lesson.module)
]


@pytest.mark.parametrize(
    "lesson", WITH_MUTANTS, ids=[lesson.tag for lesson in WITH_MUTANTS]
)
def test_every_mutant_is_caught_and_diagnosed(m2t, lesson, tmp_path):
    lang = "zh" if speaks_chinese(lesson) else "en"
    outcomes = tmp_path / "outcomes.json"
    result = m2t("mutants", lesson.tag, "--json", str(outcomes), lang=lang)
    assert result.returncode == 0, result.stdout + result.stderr
    if lang == "zh":
        english = {
            o["mistake"]: left
            for o in json.loads(outcomes.read_text(encoding="utf-8"))
            if (left := english_sentences("\n".join(o["messages"])))
        }
        assert not english, f"English in the failing checks: {english}"
    rows = [
        line
        for line in result.stdout.splitlines()
        if line.startswith(f"| {lesson.tag} ")
    ]
    assert len(rows) == len(mutants.catalogue(lesson.module))
    table = [
        line
        for line in (ROOT / "docs" / "mistakes.md").read_text().splitlines()
        if line.startswith(f"| {lesson.tag} ")
    ]
    stale = f"docs/mistakes.md is stale: {grader_rules.MISTAKES_MD}"
    assert sorted(table) == sorted(rows), (
        f"{stale}\nonly in the table: {sorted(set(table) - set(rows))}\n"
        f"only in the output: {sorted(set(rows) - set(table))}"
    )


def test_mutate_refuses_text_that_is_not_there_once():
    with pytest.raises(ValueError, match="occurs 0 times"):
        mutants.mutate("a = 1\n", [("b = 2", "b = 3")], "demo [x]")
    with pytest.raises(ValueError, match="occurs 2 times"):
        mutants.mutate("a = 1\na = 1\n", [("a = 1", "a = 2")], "demo [x]")
