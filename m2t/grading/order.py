"""The order a grade runs its checks in: what each check cost when it last
passed (kept between runs), what the student just changed, and the sort.

The report keeps the grader file's order; only the running order changes,
so that in `m2t watch` the first failing check shows as soon as it can.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from m2t import settings

SECOND_CASE_WEIGHT = 3.0
"""How much more a test function's later cases count than its quickest
one when checks are ordered by their seconds (`sort_checks`): a part's
mistake mostly fails that part's first case already."""


def sort_checks(
    items: list[Any],
    costs: dict[str, float],
    focus: set[tuple[str, str]] = frozenset(),
) -> None:
    """Sort pytest `items` in place into the running order.

    Within each grader file: checks that never passed first, in the file's
    order; then the checks of the test functions in `focus` ((grader file,
    function name): those that reach what the student just changed,
    `m2t.grading.focus`); then the rest. Within the last two groups, by the
    seconds when a check last passed (`costs`), a test function's later
    cases weighing SECOND_CASE_WEIGHT times their seconds: a mistake in one
    part of a lesson (l03's Inception) mostly fails that part's quickest
    case, so the quickest case of every function goes before the other
    cases of a cheap one, and those go before one slow check (l05's k = 4
    step, 0.05 s, which feeding back the true values fails, before its
    1.2 s training run).
    """
    files: dict[str, int] = {}
    for item in items:
        files.setdefault(_file(item.nodeid), len(files))
    passed = sorted(
        (i for i in items if i.nodeid in costs),
        key=lambda item: costs[item.nodeid],
    )
    quickest: dict[str, str] = {}
    for item in passed:
        quickest.setdefault(item.nodeid.partition("[")[0], item.nodeid)
    firsts = set(quickest.values())

    def key(item: Any) -> tuple:
        file = _file(item.nodeid)
        if item.nodeid not in costs:  # never passed
            return (files[file], 0, 0.0)
        function = item.nodeid.partition("::")[2].partition("[")[0]
        group = 1 if (file, function) in focus else 2
        weight = 1.0 if item.nodeid in firsts else SECOND_CASE_WEIGHT
        return (files[file], group, weight * costs[item.nodeid])

    items.sort(key=key)


def _file(nodeid: str) -> str:
    return nodeid.partition("::")[0]


def load_costs() -> dict[str, float]:
    """{check node id: its seconds when it last passed in process}."""
    try:
        data = json.loads(settings.CHECK_COSTS.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(v, (int, float))}


def save_costs(checks: Iterable[Any]) -> None:
    """Remember the seconds of the passing `checks` (runner `Check`s) for
    the next run's order: a check that fails costs what it did when it
    passed, and one that never passed counts as free, so it runs first
    (written whole, then renamed: parallel grades never read half a file).

    A check keeps at least half of what it cost before: a memoised probe
    (l03's layer table, shared by the table and the parameter count) costs
    whichever of its checks runs first, and the one that found it ready
    would otherwise jump ahead and pay it in the next run.
    """
    costs = load_costs()
    for check in checks:
        if check.status == "passed":
            before = costs.get(check.nodeid, 0.0)
            costs[check.nodeid] = round(max(check.seconds, before / 2), 4)
    path = settings.CHECK_COSTS
    temporary = path.with_name(f"{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(exist_ok=True)
        temporary.write_text(json.dumps(costs, indent=0, sort_keys=True))
        os.replace(temporary, path)
    except OSError:
        pass  # a read-only checkout still grades
