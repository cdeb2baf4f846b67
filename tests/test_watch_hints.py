"""`m2t watch` and `m2t hint` point at the same TODO, and the watch's
"stuck?" line moves only when a hint is taken: on lesson 16's skeleton
(three TODOs: masked_softmax, then AdditiveAttention.call, then
DotProductAttention.call in the file; its grader checks the dot product
before the additive), graded in this process, the hint state in tmp_path."""

from __future__ import annotations

import re

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t import settings
from m2t.authoring import make_lessons
from m2t.student import hints
from m2t.student import watch

L16 = curriculum.find("16")
NAME = f"{L16.module}.py"


def _written(source: str, done: set[str]) -> str:
    """The solution with every TODO region but those in `done` cut back
    to its `raise NotImplementedError` (the skeleton's)."""
    lines = source.splitlines(keepends=True)
    out: list[str] = []
    at = 0
    for region in make_lessons.regions(source, NAME):
        if region.where in done:
            continue
        out += lines[at : region.begin - 1]
        out.append(
            f'{region.indent}raise NotImplementedError("{L16.tag}: '
            f'{region.where}")\n'
        )
        at = region.end
    return "".join(out + lines[at:])


@pytest.fixture
def student(tmp_path, monkeypatch):
    """A lessons folder holding l16's skeleton; returns (folder, write)
    where write(done) saves the file with the TODOs in `done` written."""
    monkeypatch.setattr(hints, "STATE", tmp_path / ".m2t" / "hints.json")
    monkeypatch.setattr(settings, "CHECK_COSTS", tmp_path / ".m2t" / "costs")
    folder = tmp_path / "lessons"
    folder.mkdir()
    solution = (ROOT / "solutions" / NAME).read_text()
    order = [r.where for r in make_lessons.regions(solution, NAME)]
    assert order == [
        "masked_softmax",
        "AdditiveAttention.call",
        "DotProductAttention.call",
    ]

    def write(done: set[str]) -> None:
        (folder / NAME).write_text(_written(solution, done))

    write(set())
    return folder, write


def _grade(folder) -> list[str]:
    lines: list[str] = []
    changes = watch.Changes(folder, events=False)
    try:
        w = watch.Watch(
            folder,
            str(folder),
            changes,
            out=lambda *a, **k: lines.append(" ".join(map(str, a))),
        )
        assert w.grade(L16) is not None
    finally:
        changes.close()
    return lines


def _todo(lines) -> str:
    """The TODO the watch's first not-started line names."""
    found = [m for x in lines if (m := re.search(r"\[todo\] l16 (\S+):", x))]
    assert found, lines
    return found[0].group(1)


def _stuck(lines) -> tuple[str, str]:
    """(rung "1/3", TODO) of the watch's "stuck?" line."""
    line = next((x for x in lines if "stuck?" in x), None)
    assert line is not None, lines
    found = re.search(r"hint (\d/\d) of the TODO \S+ \((\S+)\)", line)
    assert found, line
    return found.group(1), found.group(2)


def _hint_next(folder) -> str:
    """The TODO `m2t hint 16` would show next (taking that hint)."""
    out = hints.show(L16, folder=folder)
    return re.findall(r"TODO \S+ \((\S+)\), hint \d/3", out)[0]


def test_watch_names_the_todo_the_hint_is_for_and_stuck_moves_with_hints(
    student,
):
    folder, write = student
    first = _grade(folder)
    assert _todo(first) == "masked_softmax"
    assert _stuck(first) == ("1/3", "masked_softmax")

    # masked_softmax written, no hint taken: the grader checks the dot
    # product first, yet the watch names the file's next TODO, as the
    # hint does, and the rung the "stuck?" line offers is still the first
    write({"masked_softmax"})
    second = _grade(folder)
    assert _todo(second) == "AdditiveAttention.call", second
    assert _stuck(second) == ("1/3", "AdditiveAttention.call"), second
    assert _hint_next(folder) == "AdditiveAttention.call"  # rung 1 taken

    # one hint taken: the next save offers the second rung of that TODO
    third = _grade(folder)
    assert _stuck(third) == ("2/3", "AdditiveAttention.call"), third
    assert _todo(third) == "AdditiveAttention.call"
