"""The order the runner runs checks in: the seconds it remembers of each
check, and the checks that reach what the student just changed."""

from __future__ import annotations

import json

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t import settings
from m2t.grading import focus
from m2t.grading import runner


def _check(nodeid: str, seconds: float, status: str = "passed"):
    return runner.Check("l03", nodeid, nodeid, 1.0, status, "", seconds)


def test_a_check_that_found_a_memoised_probe_ready_keeps_half_its_cost(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(settings, "CHECK_COSTS", tmp_path / "costs.json")
    # first run: the table check builds the table, the count reuses it
    runner.save_costs([_check("table", 0.8), _check("count", 0.001)])
    assert runner.load_costs() == {"table": 0.8, "count": 0.001}
    # next run the count came first and built it; the table found it ready
    runner.save_costs([_check("count", 0.8), _check("table", 0.001)])
    assert runner.load_costs() == {"count": 0.8, "table": 0.4}
    # a failing check keeps what it cost when it passed; a new one counts
    runner.save_costs([_check("count", 0.01, "failed"), _check("new", 0.2)])
    assert runner.load_costs() == {"count": 0.8, "table": 0.4, "new": 0.2}
    # a check that got quicker halves its cost each run, down to its own
    for want in (0.2, 0.1, 0.05):
        runner.save_costs([_check("table", 0.06)])
        assert runner.load_costs()["table"] == max(want, 0.06)


# ------------------------------------------------------------ what changed
LESSON = """
import numpy as np

EPSILON = 1e-5


def helper(x):
    return x + EPSILON


class Uses(object):
    def call(self, x):
        return helper(x)


class Alone(object):
    def call(self, x):
        return x
"""

GRADER = """
def _build(m):
    return m.Uses()


def run_uses(m, x):
    return _build(m).call(x)


def run_alone(m, x):
    return m.Alone().call(x)


def test_uses():
    run_uses(1)


def test_alone():
    run_alone(1)


def test_both():
    run_uses(1), run_alone(1)
"""


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        ("x + EPSILON", "x - EPSILON", {"helper", "Uses"}),
        ("EPSILON = 1e-5", "EPSILON = 1e-3", {"EPSILON", "helper", "Uses"}),
        ("        return x\n", "        return -x\n", {"Alone"}),
        ("class Alone", "# a comment\nclass Alone", set()),
        ("return x + EPSILON", "return x +", set()),  # does not parse
    ],
    ids=["function", "constant", "method", "comment_only", "syntax_error"],
)
def test_a_change_reaches_its_definition_and_every_user(old, new, changed):
    assert old in LESSON
    assert focus.changed_names(LESSON, LESSON.replace(old, new)) == changed


def test_a_test_reaches_the_names_its_probes_use_through_the_grader():
    assert focus.reached_names(GRADER) == {
        "test_uses": {"Uses"},
        "test_alone": {"Alone"},
        "test_both": {"Uses", "Alone"},
    }


def test_a_grade_cut_short_leaves_its_changes_to_the_next(tmp_path):
    grader, lesson = tmp_path / "test_x.py", tmp_path / "x.py"
    grader.write_text(GRADER)
    lesson.write_text(LESSON)
    assert focus.focused_checks(grader, lesson) == (set(), LESSON)
    focus.remember(lesson, LESSON)
    lesson.write_text(LESSON.replace("return x\n", "return -x\n"))
    for _ in range(2):  # not remembered: the same focus again
        names, source = focus.focused_checks(grader, lesson)
        assert names == {"test_alone", "test_both"}
    focus.remember(lesson, source)
    assert focus.focused_checks(grader, lesson)[0] == set()


def test_after_a_save_the_checks_that_reach_the_change_run_first(
    tmp_path, monkeypatch
):
    """l16: AdditiveAttention loses its tanh. Its checks were made the
    dearest, so by cost alone they would run last; they run first, and
    the report keeps the file's order."""
    monkeypatch.setattr(settings, "CHECK_COSTS", tmp_path / "costs.json")
    lesson = curriculum.find("16")
    folder = tmp_path / "impl"
    folder.mkdir()
    path = folder / lesson.filename
    solution = (ROOT / "solutions" / lesson.filename).read_text()
    path.write_text(solution)
    ran: list[str] = []

    def grade() -> list[str]:
        ran.clear()
        (result,) = runner.grade(
            [lesson], impl=str(folder), on_check=lambda c: ran.append(c.nodeid)
        )
        return [c.nodeid for c in result.checks]

    in_file = grade()
    # every function that builds an AdditiveAttention (the kind-
    # parametrized ones build both kinds: a whole function is focused)
    additive = {
        "test_additive_attention_matches_reference",
        "test_identical_keys_average_the_valid_values",
        "test_dropout_only_in_training",
        "test_keras_layer_contract",
        "test_gradient_matches_centred_differences",
    }
    function = {n: n.partition("::")[2].partition("[")[0] for n in in_file}
    reaching = [n for n in in_file if function[n] in additive]
    assert 0 < len(reaching) < len(in_file)
    costs = {n: 5.0 if n in reaching else 0.01 for n in in_file}
    settings.CHECK_COSTS.write_text(json.dumps(costs))
    path.write_text(
        solution.replace(
            "features = ops.tanh(q[:, :, None, :] + k[:, None, :, :])",
            "features = q[:, :, None, :] + k[:, None, :, :]",
        )
    )
    assert grade() == in_file
    assert set(ran[: len(reaching)]) == set(reaching)
