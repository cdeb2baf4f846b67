"""The hint ladder: one `[[todo]]` of lessons/hints/ per TODO, rungs 2-3
naming the calls the TODO leaves out, no rung repeating its TODO, and
`m2t hint` walking the rungs of the first unfinished TODO, then the next."""

import functools
import re

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t.authoring import make_lessons
from m2t.student import hints

LESSONS = [
    x
    for x in curriculum.lessons()
    if (ROOT / "solutions" / f"{x.module}.py").exists()
]
L01 = curriculum.find("01")
REPEAT_WORDS = 8
"""A rung sharing this many words in a row with its TODO repeats it."""


@functools.cache
def _all_specs():
    return tuple(make_lessons.specs())


def _specs(lesson):
    return [s for s in _all_specs() if s.lesson == lesson.module]


# ------------------------------------------------------------- the files
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda x: x.tag)
def test_one_hint_per_todo_in_file_order(lesson):
    todos = [s.region.where for s in _specs(lesson)]
    ladder = [t.where for t in hints.ladder(lesson.module)]
    assert ladder == todos, (
        f"lessons/hints/{lesson.module}.toml: one [[todo]] per TODO of "
        f"solutions/{lesson.module}.py, in file order"
    )


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda x: x.tag)
def test_rungs_two_and_three_name_the_calls(lesson):
    for spec in _specs(lesson):
        if spec.hinted is None or not spec.calls:
            continue
        missing = sorted(set(spec.calls) - set(spec.hinted))
        assert len(spec.hinted) >= 0.9 * len(spec.calls), (
            f"{lesson.tag} {spec.region.where}: the api and near rungs "
            f"name {len(spec.hinted)} of {len(spec.calls)} calls; "
            f"missing {missing}"
        )


def _words(text):
    return re.findall(r"[\w.'\[\]]+", text.lower())


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda x: x.tag)
def test_no_rung_repeats_its_todo(lesson):
    by_where = {t.where: t for t in hints.ladder(lesson.module)}
    for spec in _specs(lesson):
        if spec.region.where not in by_where:
            continue  # test_one_hint_per_todo_in_file_order says so
        todo = _words(spec.region.todo.split(":", 1)[-1])
        runs = {
            " ".join(todo[i : i + REPEAT_WORDS])
            for i in range(len(todo) - REPEAT_WORDS + 1)
        }
        rungs = by_where[spec.region.where].rungs
        for name, rung in zip(hints.RUNGS, rungs, strict=True):
            text = " ".join(_words(rung))
            echoed = [run for run in runs if run in text]
            assert not echoed, (
                f"{lesson.tag} {spec.region.where}: rung {name!r} repeats "
                f"its TODO: {echoed[0]!r}"
            )


def test_no_rung_repeats_its_todo_catches_a_copy(monkeypatch):
    todo = _specs(L01)[-1].region.todo
    ladder = list(hints.ladder(L01.module))
    ladder[-1] = hints.TodoHints(
        ladder[-1].where, ladder[-1].idea, todo, ladder[-1].near
    )
    monkeypatch.setattr(hints, "ladder", lambda module, *a: tuple(ladder))
    with pytest.raises(AssertionError, match="rung 'api' repeats its TODO"):
        test_no_rung_repeats_its_todo(L01)


@pytest.mark.parametrize(
    "text, message",
    [
        ('[[todo]]\nwhere = "f"\nidea = "i"\napi = "a"\n', "near"),
        (
            '[[todo]]\nwhere = "f"\nidea = "i"\napi = "a"\nnear = "n"\n'
            'hint = "x"\n',
            "exactly",
        ),
        ('[[todo]]\nwhere = "f"\nidea = ""\napi = "a"\nnear = "n"\n', "idea"),
        ('hints = ["old style"]\n', "unknown keys"),
        ("[[todo]\n", "not valid TOML"),
    ],
    ids=["missing-rung", "extra-key", "empty-rung", "old-style", "bad-toml"],
)
def test_ladder_refuses_a_malformed_file(tmp_path, text, message):
    (tmp_path / "l99_demo.toml").write_text(text)
    with pytest.raises(ValueError, match=message):
        hints.ladder("l99_demo", tmp_path)


def test_ladder_of_a_lesson_without_hints_is_empty(tmp_path):
    assert hints.ladder("l99_demo", tmp_path) == ()


# -------------------------------------------------------------- the walk
@pytest.fixture
def student(tmp_path, monkeypatch):
    """A student's lessons/ holding lesson 01's skeleton; hint state in
    tmp_path. Returns the folder."""
    monkeypatch.setattr(hints, "STATE", tmp_path / ".m2t" / "hints.json")
    folder = tmp_path / "lessons"
    folder.mkdir()
    name = f"{L01.module}.py"
    solution = (ROOT / "solutions" / name).read_text()
    (folder / name).write_text(make_lessons.cut(solution, name))
    return folder


def _shown(text):
    """(where, rung) of each hint block in `m2t hint`'s output."""
    return re.findall(r"TODO \S+ \((\S+)\), hint (\d)/3", text)


def test_hint_walks_the_first_todo_then_the_next(student):
    ladder = hints.ladder(L01.module)
    first, second = ladder[0], ladder[1]
    seen = [_shown(hints.show(L01, folder=student)) for _ in range(4)]
    assert seen == [
        [(first.where, "1")],
        [(first.where, "2")],
        [(first.where, "3")],
        [(second.where, "1")],
    ]
    out = hints.show(L01, folder=student)
    assert second.api.split()[0] in out  # the rung's own text
    assert "hint 3/3 of this TODO" in out
    assert f"TODO lessons/{L01.module}.py:" in out
    line = int(re.search(rf"{L01.module}\.py:(\d+)", out).group(1))
    text = (student / f"{L01.module}.py").read_text().splitlines()
    assert text[line - 1].strip().startswith("# TODO(l01)")


def test_hint_skips_the_todos_already_written(student):
    path = student / f"{L01.module}.py"
    first = hints.ladder(L01.module)[0]
    path.write_text(
        path.read_text().replace(
            f'raise NotImplementedError("l01: {first.where}")',
            "return x",
        )
    )
    assert hints.left(L01, student) == 3 * (len(hints.ladder(L01.module)) - 1)
    out = hints.show(L01, folder=student)
    assert _shown(out) == [(hints.ladder(L01.module)[1].where, "1")]


def test_hint_says_when_none_is_left(student):
    total = 3 * len(hints.ladder(L01.module))
    for _ in range(total):
        hints.show(L01, folder=student)
    assert hints.left(L01, student) == 0
    out = hints.show(L01, folder=student)
    assert _shown(out) == []
    assert "No hints left" in out and "Stuck still" not in out
    assert "--reset" in out
    again = hints.show(L01, repeat=True, folder=student)
    assert len(_shown(again)) == total


def test_hint_all_repeats_and_reset_starts_over(student):
    hints.show(L01, folder=student)
    hints.show(L01, folder=student)
    where = hints.ladder(L01.module)[0].where
    assert _shown(hints.show(L01, repeat=True, folder=student)) == [
        (where, "1"),
        (where, "2"),
    ]
    hints.reset(L01)
    assert hints.left(L01, student) == 3 * len(hints.ladder(L01.module))
    assert _shown(hints.show(L01, repeat=True, folder=student)) == [
        (where, "1")
    ]


def test_hint_without_a_hints_file_says_so(student, monkeypatch):
    monkeypatch.setattr(hints, "ladder", lambda module, *a: ())
    out = hints.show(L01, folder=student)
    assert "No hints for l01 yet" in out


def test_hint_command(student, capsys, monkeypatch):
    from m2t.cli import main

    monkeypatch.setattr(hints, "ROOT", student.parent)
    assert main(["hint", "01"]) == 0
    assert _shown(capsys.readouterr().out) == [
        (hints.ladder(L01.module)[0].where, "1")
    ]
    assert main(["hint", "01", "--reset"]) == 0
    assert "locked again" in capsys.readouterr().out


def test_hint_walks_the_question_list_from_the_curriculum(student):
    questions = curriculum.question_list()
    assert questions is not None and questions.hints
    first = hints.show(questions)
    assert "lessons/answers.toml, hint 1/" in first
    assert questions.hints[0].split()[0] in first
    for _ in questions.hints[1:]:
        last = hints.show(questions)
    assert f"hint {len(questions.hints)}/{len(questions.hints)}" in last
    assert "No hints left" in last and "question list" in last


def test_the_student_edition_ships_the_hints():
    from m2t.authoring import release

    files = sorted((ROOT / "lessons" / "hints").glob("l[0-9][0-9]_*.toml"))
    assert len(files) == len(LESSONS)
    for path in files:
        assert release.allowed(path.relative_to(ROOT).as_posix()), path
