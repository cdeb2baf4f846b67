"""The class report, built from results written here (no grade runs): a
line per student whose lesson did not run, with the reason the judge's own
message gives; the lessons first and the question list summarised; one
picture the size of a 16:9 slide. Every expected figure and line is
written in the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t import i18n
from m2t.grading import classpage
from m2t.grading import classreport
from m2t.grading.runner import Check
from m2t.grading.runner import LessonResult

L06 = curriculum.find("l06_text_preprocessing")
L16 = curriculum.find("l16_attention_scoring")


def say(key: str, lang: str = "en", **fields) -> str:
    return i18n.MESSAGES.text(key, lang=lang, **fields)


def lesson(
    module: curriculum.Lesson,
    outcomes: list[tuple[str, str]],
    mistakes: tuple[str, ...] = (),
) -> LessonResult:
    """A lesson's result of one check per (status, message)."""
    return LessonResult(
        module,
        [
            Check(module.tag, f"test_{i}", "n", 1.0, status, message, 0.1)
            for i, (status, message) in enumerate(outcomes)
        ],
        mistakes,
    )


def ran(module: curriculum.Lesson, passed: int = 3) -> LessonResult:
    return lesson(module, [("passed", "")] * passed + [("failed", "wrong")])


SYNTAX = say("probe.syntax_error", tag="l16", where="l16_x.py:3", error="bad")
SYNTAX_ZH = say(
    "probe.syntax_error", "zh", tag="l16", where="l16_x.py:3", error="bad"
)
LIMIT = say("probe.time_limit", tag="l16", seconds="60")
MISSING = say("notes.missing", tag="l16", name="l16_x.py", where="l16_x.py")
AT_IMPORT = say(
    "probe.raised",
    tag="l16",
    type="ImportError",
    where=say(
        "probe.raised_where", file="l16_x.py", line=2, function="<module>"
    ),
    detail=": no module named x",
)
# the student's own exception text reading like the judge's words
QUOTING = say(
    "probe.raised",
    tag="l16",
    type="ValueError",
    where=say("probe.raised_where", file="l16_x.py", line=9, function="f"),
    detail=f": {SYNTAX} {LIMIT} {MISSING} x.py:1 (in <module>)",
)
QUOTING_ZH = say(
    "probe.raised",
    "zh",
    tag="l16",
    type="ValueError",
    where=say(
        "probe.raised_where", "zh", file="l16_x.py", line=9, function="f"
    ),
    detail=f": {SYNTAX_ZH} l16_x.py:1 (in <module>)",
)
NOT_STARTED = say(
    "probe.not_started", tag="l16", what="masked_softmax", where="x.py:3"
)


def class_of(
    students: dict[str, list[LessonResult]],
) -> classreport.ClassReport:
    return classreport.build(
        [classreport.record(name, rs, 1.0) for name, rs in students.items()]
    )


def section(text: str, title: str) -> list[str]:
    """The lines of a `## title` section of the markdown."""
    part = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in part.splitlines() if line]


def test_each_student_whose_lesson_did_not_run_gets_a_line_with_why():
    """Syntax error, a raise at import, time limit, missing file, an
    untouched skeleton: each named from the judge's message (in either
    language), never from the student's words it quotes; a lesson with
    some checks at the time limit is named too; a lesson that ran is
    not."""
    syntax = [("error", SYNTAX)] * 4
    students = {
        "ran": [ran(L06), ran(L16)],
        "syntax": [ran(L06), lesson(L16, syntax)],
        "syntax_zh": [ran(L06), lesson(L16, [("error", SYNTAX_ZH)] * 4)],
        "imports": [ran(L06), lesson(L16, [("error", AT_IMPORT)] * 4)],
        "loops": [ran(L06), lesson(L16, [("error", LIMIT)] * 4)],
        "sandbox_loops": [
            ran(L06),
            lesson(
                L16,
                [
                    (
                        "error",
                        "l16: probe_scores timed out after 60 s (an "
                        "endless loop, or far too slow?)",
                    ),
                    (
                        "error",
                        "l16: the lesson's time limit (600 s) is used up "
                        "(9.0 s in probes, 1.0 s restarting the grading "
                        "process 2 times)",
                    ),
                ],
            ),
        ],
        "slow_one": [ran(L06), lesson(L16, [("passed", ""), ("error", LIMIT)])],
        "missing": [lesson(L06, [("error", MISSING)] * 2), ran(L16)],
        "skeleton": [
            lesson(L06, [("not_started", NOT_STARTED)] * 3),
            lesson(
                L16, [("not_started", NOT_STARTED)] * 3 + [("error", LIMIT)]
            ),
        ],
        "quoting": [ran(L06), lesson(L16, [("error", QUOTING)] * 2)],
        "quoting_zh": [ran(L06), lesson(L16, [("error", QUOTING_ZH)] * 2)],
        "wrong": [ran(L06), lesson(L16, [("failed", SYNTAX)] * 2)],
        "crash_one": [ran(L06), lesson(L16, [("passed", ""), ("error", "x")])],
    }
    report = class_of(students)
    text = classpage.markdown(report, {"a|b": "exit 1: killed"})
    assert section(text, "Students whose work did not run") == [
        "| student | lessons, and why |",
        "| --- | --- |",
        "| syntax | l16: syntax error (the file does not import) |",
        "| syntax\\_zh | l16: syntax error (the file does not import) |",
        "| imports | l16: the file does not import (it raises at module "
        "level) |",
        "| loops | l16: time limit reached |",
        "| sandbox\\_loops | l16: time limit reached |",
        "| slow\\_one | l16: time limit reached in 1 of 2 checks (the others "
        "ran) |",
        "| missing | l06: missing file |",
        "| skeleton | l06: not started (the skeleton's TODO); l16: time limit "
        "reached in 1 of 4 checks, not started (the skeleton's TODO) in 3 of "
        "4 checks |",
        "| quoting | l16: raised an error |",
        "| quoting\\_zh | l16: raised an error |",
        "| a\\|b | not graded: exit 1: killed |",
    ]
    lessons = section("\n## x\n" + text.split("\n\n", 1)[1], "x")
    assert lessons[2:] == [
        "| l06 | 2.5 | 4 | 2 of 13 |",  # 11 students x 3 points: 33 / 13
        "| l16 | 0.6 | 4 | 8 of 13 |",  # 3 + 1 + 3 + 1 (crash_one): 8 / 13
    ]
    assert report.did_not_run("l16") == 8  # the slow one and crash_one ran


def test_a_record_without_reasons_reads_its_statuses():
    """A record written before checks named their reason (a roster
    resumed, a shard graded earlier): not started reads as not started, an
    error as raised."""
    rec = classreport.record(
        "old", [lesson(L16, [("not_started", "")] * 2)], 1.0
    )
    other = classreport.record("older", [lesson(L16, [("error", SYNTAX)])], 1)
    for r in (rec, other):
        for check in r["lessons"][0]["checks"]:
            del check["reason"]
    report = classreport.build([rec, other])
    assert classpage.did_not_run(report) == {
        "old": "l16: not started (the skeleton's TODO)",
        "older": "l16: raised an error",
    }


def questions(answers: list[str]) -> LessonResult:
    """The question list with one check per status in `answers` (passed,
    failed, not_started), named as its grader names them."""
    qlist = curriculum.question_list()
    assert qlist is not None
    return LessonResult(
        qlist,
        [
            Check(
                qlist.tag,
                f"test_question[q{i // 4 + 1:02d}_{i % 4 + 1}]",
                "n",
                1.0,
                status,
                "",
                0.1,
            )
            for i, status in enumerate(answers)
        ],
    )


def test_lessons_come_first_and_the_question_list_is_summarised():
    """91 questions do not bury a lesson's checks: the checks table holds
    the lessons' checks, the question list is a short section naming its
    hardest questions, and every question is listed once, at the end."""
    solid = ["passed"] * 91
    none = ["not_started"] * 91
    half = ["passed", "failed"] * 45 + ["failed"]
    report = class_of(
        {
            "a": [ran(L16), questions(solid)],
            "b": [ran(L16), questions(half)],
            "c": [ran(L16), questions(none)],
        }
    )
    text = classpage.markdown(report)
    order = [
        text.index(x)
        for x in (
            "| l16 |",
            "| questions |",
            "## Question list",
            "## Checks",
            "## Known mistakes",
            "<details><summary>All 91 questions</summary>",
        )
    ]
    assert order == sorted(order), text
    checks = section(text, "Checks")
    assert len(checks) == 2 + 4  # header and l16's four checks
    assert not [line for line in checks if "question" in line]
    summary = section(text, "Question list")
    assert summary[0] == (  # (91 + 91 + 0) / 3 answered, (91 + 45) / 3 right
        "91 questions, 91 points: a student answered 60.7 of them and got "
        "45.3 right on average (mean points 45.3); 1 of 3 answered none. "
        "The full list closes this report."
    )
    assert summary[2:] == [  # of a and b, b got every second one wrong
        "- `q01_2`: right for 1 of 2 (50%)",
        "- `q01_4`: right for 1 of 2 (50%)",
        "- `q02_2`: right for 1 of 2 (50%)",
        "- `q02_4`: right for 1 of 2 (50%)",
        "- `q03_2`: right for 1 of 2 (50%)",
    ]
    assert "| c | questions: no question answered |" in text
    rows = text.split("<details>")[1]
    assert "| `q01_1` | 2 of 3 (67%) | 2 of 2 (100%) |" in rows
    assert rows.count("| `q") == 91


def test_the_picture_fits_a_slide_with_the_hardest_checks_and_mistakes(
    tmp_path: Path,
):
    """111 checks and 40 students make one 1920 x 1080 picture (16:9 at
    its dpi), its panels the 10 hardest checks (by the students whose code
    ran them) and the 10 most common mistakes; the markdown keeps all."""
    import matplotlib.image

    names = [f"m{i}" for i in range(12)]
    students = {}
    for s in range(40):  # check c is failed by c % 40 students: s0, s1, ...
        outcomes = [
            ("failed", "wrong") if s < c % 40 else ("passed", "")
            for c in range(111)
        ]
        result = lesson(L16, outcomes, tuple(names))
        for c, check in enumerate(result.checks):
            if check.status == "failed":
                check.mistake = names[c % 12]
        students[f"s{s}"] = [result]
    students["skeleton"] = [lesson(L16, [("not_started", NOT_STARTED)] * 111)]
    report = class_of(students)
    path = classpage.chart(report, tmp_path / "class-report.png")
    height, width = matplotlib.image.imread(path).shape[:2]
    assert (width, height) == (1920, 1080)
    hard = classpage.hardest_checks(report)
    assert [(key[1], passed, ran) for key, passed, ran in hard] == [
        ("test_39", 1, 40),  # 39 % 40 = 39 failed it; the skeleton ran none
        ("test_79", 1, 40),
        ("test_38", 2, 40),
        ("test_78", 2, 40),
        ("test_37", 3, 40),
        ("test_77", 3, 40),
        ("test_36", 4, 40),
        ("test_76", 4, 40),
        ("test_35", 5, 40),
        ("test_75", 5, 40),
    ]
    # every check but 0, 40 and 80 was failed by someone
    assert len(classpage.hardest_checks(report, 200)) == 108
    # mistake m is made by the students who failed its checks c (c % 12 ==
    # m): the largest c % 40 of them; m3 has c = 39, m7 c = 79, m2 c = 38
    assert [(key[1], k) for key, k in classpage.common_mistakes(report)] == [
        ("m3", 39),
        ("m7", 39),
        ("m2", 38),
        ("m6", 38),
        ("m1", 37),
        ("m5", 37),
        ("m0", 36),
        ("m4", 36),
        ("m11", 35),
        ("m10", 34),
    ]
    text = classpage.markdown(report)
    assert len(section(text, "Checks")) == 2 + 111


def test_the_sandboxs_english_limits_are_the_ones_read():
    """m2t/grading/sandbox.py writes its time limits in English only;
    `classreport.LEADS` reads them by these words."""
    source = (ROOT / "m2t" / "grading" / "sandbox.py").read_text()
    assert 'timed out after {limit:g} s "' in source
    assert "the lesson's time limit ({self.lesson_timeout:g} s) \"" in source
    assert 'f"is used up' in source


@pytest.mark.parametrize(
    "message",
    [SYNTAX, SYNTAX_ZH, LIMIT, MISSING, AT_IMPORT, QUOTING, QUOTING_ZH],
)
def test_a_grader_error_names_no_reason(message):
    """A check whose grader raised says nothing of the student's code."""
    broken = say("grader.error", kind="KeyError", error=message)
    assert classreport.reason("error", broken) == ""
    assert classreport.reason("failed", message) == ""


def test_the_roster_reports_a_student_it_could_not_grade(tmp_path):
    """The class report the roster writes names a student whose grade
    broke off (not only the gradebook's note column)."""
    from m2t.grading import roster

    records = [classreport.record("ann", [ran(L06)], 1.0)]
    roster.write_report(tmp_path, records, {"bob": "exit 1: killed"})
    text = (tmp_path / "class-report.md").read_text(encoding="utf-8")
    assert "bob" in text and "exit 1: killed" in text, text
