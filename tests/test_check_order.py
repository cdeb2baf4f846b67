"""The seconds the runner remembers for ordering the next run's checks."""

from __future__ import annotations

from m2t import settings
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
