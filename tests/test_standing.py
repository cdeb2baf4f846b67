"""Where the student stands and where `m2t watch` goes next, on lesson
files and saved grades set up here: "edited since the last grade" is true
exactly when the file is newer than the grade, and a pass moves the watch
to the very next unfinished lesson in course order (the lessons expected
are written here, in curriculum.toml's order)."""

from __future__ import annotations

import os
import re
import shutil

from m2t import ROOT
from m2t import curriculum
from m2t import i18n
from m2t.student import progress
from m2t.student import watch

MODULE = "l16_attention_scoring"
GRADED = {"passed": 2, "checks": 5, "score": 2.0, "max_score": 5.0}


def _lesson_file(tmp_path, module=MODULE, where="lessons"):
    shutil.copy(ROOT / where / f"{module}.py", tmp_path)
    path = tmp_path / f"{module}.py"
    os.utime(path, (1_000_000, 1_000_000))
    return path


def test_edited_since_grade_is_true_only_for_a_file_newer_than_the_grade(
    tmp_path,
):
    _lesson_file(tmp_path)
    lesson = curriculum.find(MODULE)
    for status, kind in (("failed", "in_progress"), ("passed", "done")):
        figures = {**GRADED, "status": status}
        if status == "passed":
            figures.update(passed=5, score=5.0)
        before = {MODULE: {**figures, "time": 1_000_000 - 60}}
        after = {MODULE: {**figures, "time": 1_000_000 + 60}}
        edited = progress.status(lesson, tmp_path, before)
        assert (edited.kind, edited.edited_since_grade) == (kind, True)
        assert progress.status(lesson, tmp_path, after).edited_since_grade is (
            False
        )
    never = progress.status(lesson, tmp_path, {})
    assert (never.kind, never.edited_since_grade) == ("not_started", False)


def _watch(tmp_path, modules, solved=()):
    for module in modules:
        where = "solutions" if module in solved else "lessons"
        _lesson_file(tmp_path, module, where)
    lines: list[str] = []
    changes = watch.Changes(tmp_path, events=False)
    w = watch.Watch(
        tmp_path,
        str(tmp_path),
        changes,
        out=lambda *args, **kwargs: lines.append(" ".join(map(str, args))),
    )
    return w, lines


def test_the_next_unfinished_lesson_is_the_one_right_after(tmp_path):
    # the first four lessons of the course, in its order
    modules = ["l01_mlp", "l21_mlp_backprop", "l02_classic_cnns"]
    modules.append("l03_inception_resnet")
    w, _ = _watch(tmp_path, modules)
    w.changes.close()
    lessons = {m: curriculum.find(m) for m in modules}
    assert [x.module for x in w.lessons] == modules
    assert w.first_unfinished().module == "l01_mlp"
    after = lambda m: w.first_unfinished(after=lessons[m]).module  # noqa: E731
    assert after("l01_mlp") == "l21_mlp_backprop"
    assert after("l21_mlp_backprop") == "l02_classic_cnns"
    assert after("l03_inception_resnet") == "l01_mlp"  # wraps around
    w.done = {"l21_mlp_backprop"}
    assert after("l01_mlp") == "l02_classic_cnns"
    w.done = set(modules) - {"l03_inception_resnet"}
    assert after("l03_inception_resnet") == "l03_inception_resnet"
    w.done = set(modules)
    assert w.first_unfinished(after=lessons["l01_mlp"]) is None


def test_after_a_pass_the_watch_grades_the_next_lesson(tmp_path):
    """l06 solved, l07 and l08 untouched: the watch grades l06, which
    passes, says l07 is next and grades l07 (not l08)."""
    modules = ["l06_text_preprocessing", "l07_language_model_data"]
    modules.append("l08_rnn_scratch")
    w, lines = _watch(tmp_path, modules, solved={"l06_text_preprocessing"})
    try:
        assert w.run(max_grades=2) == 0
    finally:
        w.changes.close()
    headings = [line.split(" (")[0] for line in lines if "== l" in line]
    assert [h.split()[1] for h in headings] == ["l06", "l07"], lines
    assert any(line.strip().startswith("next: l07 ") for line in lines), lines
    assert any("ok  l06 passes" in line for line in lines), lines
    assert w.grades == 2


def _count(line):
    """(done, total, what) of the first "N/M done (of ...)" in `line`."""
    found = re.search(r"(\d+)/(\d+) done\b.*?(\(of [^)]*\))", line)
    assert found, line
    return int(found.group(1)), int(found.group(2)), found.group(3)


def test_watch_and_progress_count_the_same_things_and_say_what(tmp_path):
    """One lesson passes, the question list is untouched: the watch's
    footer and `m2t progress` give the same count of the same things (the
    course's lessons and its question list), each saying what it counts,
    whatever files the folder holds."""
    module = "l06_text_preprocessing"
    w, lines = _watch(tmp_path, [module], solved={module})
    w.changes.close()
    w.done = {module}
    w.footer()
    course = curriculum.lessons()
    lessons = sum(not x.is_question_list for x in course)
    assert lessons == len(course) - 1  # a question list, at the end
    what = f"(of {lessons} lessons and the question list)"
    assert _count(lines[-1]) == (1, len(course), what), lines[-1]
    state = {module: {**GRADED, "status": "passed", "time": 2e9}}
    summary = progress.render(progress.statuses(tmp_path, state))
    assert _count(summary.splitlines()[0]) == (1, len(course), what), summary
    with i18n.using("zh"):  # the same words in both, in Chinese too
        w.footer()
        zh = progress.render(progress.statuses(tmp_path, state))
    said = f"已完成 1/{len(course)}"
    counted = f"（共 {lessons} 课和一份问题清单）"
    assert said in lines[-1] and counted in lines[-1], lines[-1]
    assert said in zh.splitlines()[0] and counted in zh.splitlines()[0], zh
