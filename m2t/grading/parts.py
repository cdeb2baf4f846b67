"""A capstone's parts, each graded by its own grader before the capstone.

A capstone composes the student's earlier lessons on purpose. Before it
trains anything it grades each part with that lesson's own grader, on the
same implementation folder and through the same runner (in this process,
or sandboxed when the capstone is), and finds the first part that fails
(`first_problem`; graders/lib/capstone.py words the verdict: "your l10
GRUCell fails its own grader (...): fix l10 first"). Where the grade that
runs the capstone has already run every check of the parts (a grade of
the whole course, which follows the course's order), their results are
reused instead of being graded twice.

Use from a capstone's grader (a pytest fixture, once per grade):

    PARTS = (Part("l10_gru", "l23.part_gru"), Part("l08_rnn_scratch",
             "l23.part_rnn", ("test_grad_clipping",)), ...)
    problem = parts.first_problem(parts.grade(request.config, PARTS), PARTS)
    # None, or a Problem whose `status` is "not_started" or "failed"
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from m2t import curriculum
from m2t import settings


@dataclasses.dataclass(frozen=True)
class Part:
    """One lesson a capstone is built from.

    Args:
        module: the lesson's module, e.g. "l10_gru".
        gives: the key, in graders/messages, of the words for what the
            capstone takes from it ("l23.part_gru": "GRUCell").
        checks: name prefixes of the grader's checks that matter here;
            empty for all of them.
    """

    module: str
    gives: str
    checks: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Problem:
    """The first part that fails its own grader, the facts of the verdict
    a student reads (graders/lib/capstone.py words it).

    Attributes:
        status: "not_started" (every graded check of it is not started)
            or "failed".
        part: that part.
        lesson: its tag, e.g. "l10".
        graded: how many of its checks ran (0: its grader ran none).
        failing: how many of those did not pass.
        check: the first of them ("" when none ran).
        first: the first line of that check's message.
    """

    status: str
    part: Part
    lesson: str
    graded: int = 0
    failing: int = 0
    check: str = ""
    first: str = ""


class _Only:
    """A pytest plugin that keeps, of each part's grader, the checks that
    matter to the capstone."""

    def __init__(self, wanted: dict[str, tuple[str, ...]]):
        self.wanted = wanted

    def pytest_collection_modifyitems(self, config, items) -> None:
        keep, drop = [], []
        for item in items:
            nodeid, _, name = item.nodeid.partition("::")
            module = Path(nodeid).stem[len("test_") :]
            prefixes = self.wanted.get(module)
            if prefixes is None or (prefixes and not name.startswith(prefixes)):
                drop.append(item)
            else:
                keep.append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep


def grade(config, parts: Sequence[Part]) -> list:
    """Grade `parts` with their own graders, as the capstone is graded.

    Args:
        config: the capstone's pytest config (its --impl, --sandbox,
            timeouts are used for the parts too).
        parts: the lessons the capstone uses.

    Returns:
        One `m2t.grading.runner.LessonResult` per part, in order.
    """
    from m2t.grading import runner
    from m2t.grading.probe import runner as probe_runner
    from m2t.grading.probe import set_runner

    if not parts:
        raise ValueError("`parts` is empty: a capstone names its lessons")
    lessons = [curriculum.find(part.module) for part in parts]
    done = runner.finished(lessons)
    if done is not None:  # this grade has graded them (`m2t grade`, all)
        return [
            _kept(result, part.checks)
            for result, part in zip(done, parts, strict=True)
        ]
    sandbox = bool(config.getoption("--sandbox"))
    key = None if sandbox else _key(config, parts)
    if key is not None and key in _GRADED:
        return _GRADED[key]
    outer = probe_runner()
    # Sandboxed, the parts' workers import the trusted copy the capstone's
    # grade made at its start, not a new copy of the repository as it is
    # now: the code of a grade is fixed when it starts.
    code = outer.code if sandbox else None
    try:
        results = runner.grade(
            lessons,
            impl=str(config.getoption("--impl")),
            timeout=(
                config.getoption("--probe-timeout")
                if sandbox
                else float(
                    config.getoption("timeout") or settings.CHECK_TIMEOUT
                )
            ),
            sandbox=sandbox,
            lesson_timeout=config.getoption("--lesson-timeout"),
            plugins=[_Only({p.module: p.checks for p in parts})],
            allow_weaker_sandbox=bool(
                config.getoption("--allow-weaker-sandbox")
            ),
            trusted_code=code,
        )
    finally:  # the parts' session installed (and closed) its own runner
        set_runner(outer)
    if key is not None:
        _GRADED[key] = results
    return results


_GRADED: dict[tuple, list] = {}
"""This process's grades of parts, by `_key`: `m2t mutants` grades each of
a capstone's mutants with the same parts, and `m2t watch` regrades a
capstone on every save of its file, the parts unchanged."""


def _key(config, parts: Sequence[Part]) -> tuple | None:
    """What a grade of `parts` in this process depends on: the parts and
    their checks, the grade's seed and language, and the bytes of every
    lesson file of the folder graded that is not a capstone's (a part
    imports earlier lessons, never a capstone). None: not cached (no
    folder to read)."""
    import hashlib
    import os

    from m2t import i18n
    from m2t.grading import impl as _impl

    try:
        folder = _impl.resolve(str(config.getoption("--impl")))
    except ValueError:
        return None
    capstones = {x.module for x in curriculum.lessons() if x.parts}
    digest = hashlib.sha256()
    for path in sorted(folder.glob(settings.LESSON_GLOB)):
        if path.stem not in capstones:
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return (
        tuple((p.module, p.checks) for p in parts),
        config.getoption("--seed", None),
        os.environ.get("M2T_GRADER_SEED", ""),
        i18n.language(),
        digest.hexdigest(),
    )


def _kept(result, prefixes: tuple[str, ...]):
    """`result` with only the checks whose names start with `prefixes`
    (all of them when there are none), as `_Only` keeps them."""
    from m2t.grading import runner

    checks = [
        c for c in result.checks if not prefixes or c.name.startswith(prefixes)
    ]
    return runner.LessonResult(result.lesson, checks, result.mistakes)


def first_problem(results: Sequence, parts: Sequence[Part]) -> Problem | None:
    """The first part that fails its own grader (None when all pass).

    A part whose graded checks are all "not started" is not started ("do
    l10 first"); any other failing check fails it ("fix l10 first"); a
    part whose grader ran no check fails too (nothing vouches for it).
    """
    of = {part.module: part for part in parts}
    for result in results:
        part = of.get(result.lesson.module, Part(result.lesson.module, ""))
        tag = result.lesson.tag
        graded = [c for c in result.checks if c.status != "skipped"]
        bad = [c for c in graded if c.status != "passed"]
        if not graded:
            return Problem("failed", part, tag)
        if not bad:
            continue
        return Problem(
            (
                "not_started"
                if all(c.status == "not_started" for c in graded)
                else "failed"
            ),
            part,
            tag,
            graded=len(graded),
            failing=len(bad),
            check=bad[0].name,
            first=bad[0].message.splitlines()[0] if bad[0].message else "",
        )
    return None
