"""Checks that train a model (`@pytest.mark.trains`), left out where the
grade does not need them.

A capstone's training checks cost most of its grade (tens of seconds
each). Two callers grade without them:

* `m2t mutants`: a mutant that an earlier check has already failed is
  caught; training it too tells nothing more, so its training checks are
  skipped (`once_caught=True`). A mutant no earlier check catches still
  trains.
* a notebook's grade cell under `M2T_SHORT=1`: the short form leaves the
  training checks to `m2t grade` and says so (`once_caught=False`).

A skipped check counts neither its points nor its maximum
(`m2t.grading.runner.LessonResult`).
"""

from __future__ import annotations

import pytest

from m2t import i18n

MARK = "trains"
"""The marker of a check that trains (graders' `@pytest.mark.trains`)."""


class LeaveOutTraining:
    """A pytest plugin for `m2t.grading.runner.grade(plugins=...)`.

    Args:
        once_caught: skip a training check only after an earlier check of
            this grade failed (a mutant caught already); False: skip every
            training check (a short grade).
        lesson: the lesson's id, named in a short grade's reason ("24").
    """

    def __init__(self, once_caught: bool, lesson: str = ""):
        self.once_caught = once_caught
        self.lesson = lesson
        self.failed = False

    @pytest.hookimpl(trylast=True)  # after the grade's own order
    def pytest_collection_modifyitems(self, items) -> None:
        """The checks that train run last (in their order), so that every
        other check has had its chance to catch the mutant first."""
        if self.once_caught:
            items.sort(
                key=lambda item: item.get_closest_marker(MARK) is not None
            )

    def pytest_runtest_logreport(self, report) -> None:
        if report.failed:
            self.failed = True

    @pytest.hookimpl(tryfirst=True)  # before the check's fixtures are set up
    def pytest_runtest_setup(self, item) -> None:
        if item.get_closest_marker(MARK) is None:
            return
        if self.once_caught and self.failed:
            pytest.skip(i18n.text("grade.trains_caught"))
        if not self.once_caught:
            pytest.skip(i18n.text("grade.trains_short", lesson=self.lesson))
