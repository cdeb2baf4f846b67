"""What the reports count, on outcomes written here: JUnit's per-suite
counts, Gradescope's check numbers and maxima, and the score a lesson gets
from its checks (a skipped check is worth nothing and counts in no
maximum). Every expected figure is written in the test, not computed by the
code under test."""

from __future__ import annotations

import json

from m2t import curriculum
from m2t.grading import reports
from m2t.grading.runner import Check
from m2t.grading.runner import LessonResult

# (status, points) of six checks: two not started, one wrong, one crashed,
# one skipped (an answer left to the instructor), one passed.
OUTCOMES = [
    ("passed", 2.0),
    ("failed", 1.0),
    ("not_started", 1.0),
    ("not_started", 3.0),
    ("error", 1.0),
    ("skipped", 4.0),
]


def _result(module: str, outcomes=OUTCOMES) -> LessonResult:
    lesson = curriculum.find(module)
    checks = [
        Check(
            lesson=lesson.tag,
            name=f"test_{i}",
            nodeid=f"graders/test_{module}.py::test_{i}",
            points=points,
            status=status,
            message=f"{status} here",
            seconds=0.5,
        )
        for i, (status, points) in enumerate(outcomes)
    ]
    return LessonResult(lesson, checks)


def test_a_lesson_scores_only_its_passed_checks_and_skips_count_nowhere():
    result = _result("l16_attention_scoring")
    assert [c.score for c in result.checks] == [2.0, 0, 0, 0, 0, 0]
    assert result.score == 2.0
    assert result.max_score == 8.0  # 2 + 1 + 1 + 3 + 1, not the skipped 4
    assert result.passed == 1
    assert result.status == "failed"
    skipped_only = _result("l16_attention_scoring", [("skipped", 5.0)])
    assert skipped_only.score == 0 and skipped_only.max_score == 0


def test_junit_counts_not_started_checks_as_failures():
    tree = reports.junit([_result("l16_attention_scoring")])
    (suite,) = tree.getroot()
    assert suite.get("name") == "l16_attention_scoring"
    assert suite.get("tests") == "6"
    assert suite.get("failures") == "3"  # one failed, two not started
    assert suite.get("errors") == "1"
    assert suite.get("skipped") == "1"
    assert suite.get("time") == "3.000"
    kinds = [
        [child.tag for child in case] for case in suite.findall("testcase")
    ]
    assert kinds == [
        [],
        ["failure"],
        ["failure"],
        ["failure"],
        ["error"],
        ["skipped"],
    ]


def test_gradescope_numbers_count_from_one_in_course_order():
    """The first lesson of curriculum.toml is check group 1 and lesson 21
    (backpropagation by hand) group 2; checks count from 1 in each."""
    results = [_result("l01_mlp"), _result("l21_mlp_backprop", OUTCOMES[:2])]
    data = reports.gradescope(results, 1.5)
    assert [t["number"] for t in data["tests"]] == [
        "1.1",
        "1.2",
        "1.3",
        "1.4",
        "1.5",
        "1.6",
        "2.1",
        "2.2",
    ]
    assert [t["max_score"] for t in data["tests"][:6]] == [
        2.0,
        1.0,
        1.0,
        3.0,
        1.0,
        0.0,
    ]
    assert [t["score"] for t in data["tests"]] == [2.0] + [0] * 5 + [2.0, 0]
    assert data["score"] == 4.0
    assert data["max_score"] == 11.0  # 8 + 3
    assert data["execution_time"] == 1.5
    json.dumps(data)  # what Gradescope reads is JSON
