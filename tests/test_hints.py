"""The hint ladder: lessons/hints/ read and refused when malformed, and
`m2t hint` walking the rungs of the first unfinished TODO, then the next.
What each lesson's hints file holds is m2t.authoring.rules' (tests/
test_rules.py)."""

import functools
import json
import re
import shutil

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t.authoring import make_lessons
from m2t.authoring import rules
from m2t.student import hints

LESSONS = [
    x
    for x in curriculum.lessons()
    if (ROOT / "solutions" / f"{x.module}.py").exists()
]
L01 = curriculum.find("01")


@functools.cache
def _all_specs():
    return tuple(make_lessons.specs())


def _specs(lesson):
    return [s for s in _all_specs() if s.lesson == lesson.module]


# ------------------------------------------------------------- the files
# One [[todo]] per TODO in file order, both languages, rungs 2-3 naming the
# calls and no rung repeating its TODO are lesson rules
# (m2t.authoring.rules.hints_*), which tests/test_rules.py runs for every
# lesson.
def test_no_rung_repeats_its_todo_catches_a_copy(tmp_path):
    """A copy of lesson 01 whose last api rung is its TODO, word for word
    (in a folder of its own: the rules keep what they read of a course
    folder while its files are unchanged)."""
    todo = _specs(L01)[-1].region.todo
    (tmp_path / "solutions").mkdir()
    (tmp_path / "lessons" / "hints").mkdir(parents=True)
    name = f"{L01.module}.py"
    shutil.copy(ROOT / "solutions" / name, tmp_path / "solutions" / name)
    hints_file = tmp_path / "lessons" / "hints" / f"{L01.module}.toml"
    text = (ROOT / "lessons" / "hints" / hints_file.name).read_text()
    last = text.rindex("\n[[todo]]")
    api = re.compile(r'(?ms)^api = """.*?"""$')
    tail = api.sub(lambda m: f"api = {json.dumps(todo)}", text[last:], count=1)
    hints_file.write_text(text[:last] + tail)
    where = hints.ladder(L01.module, hints_file.parent)[-1].where
    (problem,) = rules.hints_do_not_repeat_todos(L01, tmp_path)
    assert f"({where}): rung 'api' repeats its TODO" in problem


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
