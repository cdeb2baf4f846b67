"""The grading runner: runs the lesson graders under pytest in this process
and collects, per check, its status, points and the message to show.

Statuses: passed, failed (a wrong answer), not_started (a skeleton's
`NotImplementedError`), error (the student's code crashed, timed out or did
not import), skipped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import sys
import time
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import redirect_stdout
from pathlib import Path

from m2t import ROOT
from m2t import curriculum
from m2t import i18n
from m2t import settings
from m2t.grading import focus as focusing
from m2t.grading import tfsetup
from m2t.grading.order import load_costs
from m2t.grading.order import save_costs
from m2t.grading.order import sort_checks
from m2t.grading.probe import strip_tf_noise


@dataclasses.dataclass
class Check:
    """The outcome of one grader check."""

    lesson: str  # "l16"
    name: str  # "test_masked_softmax_values[valid_lens_B]"
    nodeid: str
    points: float
    status: str
    message: str
    seconds: float
    mistake: str = ""  # the known mistake the judge diagnosed, if any

    @property
    def score(self) -> float:
        return self.points if self.status == "passed" else 0.0


@dataclasses.dataclass
class LessonResult:
    """All checks of one lesson, and the names of the mistakes its grader
    knows (its `MISTAKES`, read when pytest collected it)."""

    lesson: curriculum.Lesson
    checks: list[Check]
    mistakes: tuple[str, ...] = ()

    @property
    def passed(self) -> int:
        return sum(c.status == "passed" for c in self.checks)

    @property
    def score(self) -> float:
        return sum(c.score for c in self.checks)

    @property
    def max_score(self) -> float:
        """Points of the checks graded here (a skipped check, e.g. an answer
        left to the instructor, counts in neither score nor maximum)."""
        return sum(c.points for c in self.checks if c.status != "skipped")

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.checks)

    @property
    def status(self) -> str:
        """passed, not_started (every check), failed, or no_checks."""
        if not self.checks:
            return "no_checks"
        graded = [c for c in self.checks if c.status != "skipped"]
        if self.passed == len(graded):
            return "passed"
        if all(c.status == "not_started" for c in self.checks):
            return "not_started"
        return "failed"


class _Collector:
    """A pytest plugin that records each check's outcome."""

    def __init__(
        self,
        on_check: Callable[[Check], None] | None = None,
        short_failures: bool = False,
        costs: dict[str, float] | None = None,
        focus: set[tuple[str, str]] | None = None,
    ):
        self.checks: dict[str, Check] = {}
        self.costs = costs or {}
        self.focus = focus or set()
        self.order: dict[str, int] = {}
        self.mistakes: dict[str, tuple[str, ...]] = {}
        self.on_check = on_check
        self.collect_errors: list[str] = []
        self.short_failures = short_failures

    def pytest_collection_modifyitems(self, items) -> None:
        for item in items:
            module = getattr(item, "module", None)
            if module is not None:
                self.mistakes[_tag(item.nodeid)] = tuple(
                    m.name for m in getattr(module, "MISTAKES", ())
                )
        # pytest formats a traceback for every failing check, parsing the
        # source of each frame (~30 ms a failure, most of the time of a
        # skeleton's grade); the report shows our own message instead.
        if self.short_failures:
            for item in items:
                item.repr_failure = _message_only
        self.order = {item.nodeid: i for i, item in enumerate(items)}
        sort_checks(items, self.costs, self.focus)

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.collect_errors.append(f"{report.nodeid}: {report.longrepr}")

    def pytest_runtest_logreport(self, report) -> None:
        props = dict(report.user_properties)
        if "m2t_status" not in props:
            return
        status = props["m2t_status"]
        message = strip_tf_noise(props["m2t_message"])  # every message
        name = report.nodeid.partition("::")[2]
        check = Check(
            lesson=_tag(report.nodeid),
            name=name,
            nodeid=report.nodeid,
            points=float(props.get("points", 1.0)),
            status=status,
            message=message,
            seconds=report.duration,
            mistake=str(props.get("m2t_mistake", "")),
        )
        self.checks[report.nodeid] = check
        if self.on_check:
            self.on_check(check)


_RUNNING: list[_Collector] = []
"""The collectors of the grades now running in this process, innermost
last (a capstone's parts are graded inside the capstone's grade)."""


def finished(lessons: Sequence[curriculum.Lesson]) -> list[LessonResult] | None:
    """The results of `lessons` from the grade now running in this process,
    if it has already run every check of each of them, else None.

    `m2t grade` with no lesson grades the parts before the capstones that
    use them (the course's order); a capstone's parts check then reuses
    those results instead of grading the same lessons again, with the same
    implementation, sandbox and limits.
    """
    if not _RUNNING:
        return None
    collector = _RUNNING[-1]
    results = []
    for lesson in lessons:
        nodeids = [n for n in collector.order if _tag(n) == lesson.tag]
        if not nodeids or any(n not in collector.checks for n in nodeids):
            return None
        checks = [collector.checks[n] for n in nodeids]  # the file's order
        mistakes = collector.mistakes.get(lesson.tag, ())
        results.append(LessonResult(lesson, checks, mistakes))
    return results


def _tag(nodeid: str) -> str:
    """The lesson tag ("l16") of a check's pytest node id."""
    stem = Path(nodeid.partition("::")[0]).stem.removeprefix("test_")
    tags = {lesson.module: lesson.tag for lesson in curriculum.lessons()}
    return tags.get(stem) or stem.split("_", 1)[0]  # test_questions


def _message_only(excinfo) -> str:
    return excinfo.exconly()


def _focus(
    lessons: Sequence[curriculum.Lesson], impl: str
) -> tuple[set[tuple[str, str]], dict[Path, str]]:
    """(grader file, test function) of the checks that reach what changed
    in each lesson's file since its last whole grade in this process
    (`m2t.grading.focus`), and each file's text now."""
    from m2t.grading.impl import resolve

    try:
        folder = resolve(impl)
    except ValueError:
        return set(), {}
    focus: set[tuple[str, str]] = set()
    sources: dict[Path, str] = {}
    for lesson in lessons:
        if not lesson.grader.exists():
            continue
        path = folder / lesson.filename
        names, sources[path] = focusing.focused_checks(lesson.grader, path)
        with contextlib.suppress(ValueError):
            grader = lesson.grader.resolve().relative_to(ROOT).as_posix()
            focus |= {(grader, name) for name in names}
    return focus, sources


@contextlib.contextmanager
def _no_plugin_autoload() -> Iterator[list[str]]:
    """Load only the plugin the graders need (pytest-timeout) rather than
    every installed pytest plugin (xdist, anyio, ...): yields the `-p`
    arguments; the environment is restored afterwards."""
    key = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
    saved = os.environ.get(key)
    os.environ[key] = "1"
    try:
        yield ["-p", "pytest_timeout"]
    finally:
        if saved is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = saved


def pytest_args(
    files: Sequence[Path],
    impl: str,
    timeout: float,
    sandbox: bool = False,
    lesson_timeout: float = settings.LESSON_TIMEOUT,
    allow_weaker_sandbox: bool = False,
    trusted_code: Path | None = None,
) -> list[str]:
    """The pytest command line the runner uses.

    In-process, `timeout` limits each check (pytest-timeout). Sandboxed,
    the worker limits each probe to `timeout` and pytest-timeout is only a
    backstop.
    """
    if sandbox:
        limits = [
            "--sandbox",
            f"--probe-timeout={timeout:g}",
            f"--lesson-timeout={lesson_timeout:g}",
        ]
        limits.append(f"--timeout={2 * timeout + settings.BACKSTOP_MARGIN:g}")
        if allow_weaker_sandbox:
            limits.append("--allow-weaker-sandbox")
        if trusted_code is not None:
            limits.append(f"--trusted-code={trusted_code}")
    else:
        limits = [f"--timeout={timeout:g}"]
    return [
        *[str(f) for f in files],
        *limits,
        f"--impl={impl}",
        f"--rootdir={ROOT}",
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=",
        "-W",
        "ignore",
    ]


def grade(
    lessons: Sequence[curriculum.Lesson],
    impl: str = "lessons",
    timeout: float = settings.CHECK_TIMEOUT,
    on_check: Callable[[Check], None] | None = None,
    show_pytest: bool = False,
    sandbox: bool = False,
    lesson_timeout: float = settings.LESSON_TIMEOUT,
    plugins: Sequence[object] = (),
    allow_weaker_sandbox: bool = False,
    trusted_code: Path | None = None,
) -> list[LessonResult]:
    """Grade `lessons` against the implementation `impl` in this process.

    Args:
        lessons: which lessons (those without a grader get no checks).
        impl: "lessons", "solutions" or a folder of lesson files.
        timeout: seconds one check may run before it fails as an error.
        on_check: called after each check (for live progress).
        show_pytest: let pytest print to the terminal.
        sandbox: run the student's code in a sandboxed worker process
            (`m2t.grading.sandbox`) instead of this one; `timeout` then limits
            each probe and `lesson_timeout` all probes of a lesson.
        allow_weaker_sandbox: grade in a worker that lacks a layer of
            `m2t.grading.confine` this machine cannot give (else refused).
        plugins: more pytest plugins for this run (e.g. `m2t watch` stops
            a run early when a file is saved again).
        trusted_code: sandboxed, the trusted copy the workers import, made
            at the start of the grade this one runs inside (None: copy it
            at this grade's start).

    Runs repeatedly in one process (`m2t watch`): grader modules stay
    imported, the student's modules are re-executed when their files change.
    """
    import pytest

    settings.quiet_tensorflow()
    files = [lesson.grader for lesson in lessons if lesson.grader.exists()]
    # A lesson that trains (a capstone) may ask for more per check.
    timeout = max([timeout, *(x.timeout for x in lessons if x.timeout)])
    focus, sources = _focus(lessons, impl) if not sandbox else (set(), {})
    collector = _Collector(
        on_check,
        short_failures=not show_pytest,
        costs=load_costs() if not sandbox else None,
        focus=focus,
    )
    if files and not sandbox:  # before pytest: what it imports is frozen
        tfsetup.load()
    if files:
        args = pytest_args(
            files,
            impl,
            timeout,
            sandbox,
            lesson_timeout,
            allow_weaker_sandbox,
            trusted_code,
        )
        with _no_plugin_autoload() as load, _running(collector):
            if show_pytest:
                code = pytest.main(
                    [*args, *load, "--tb=short"],
                    plugins=[collector, *plugins],
                )
            else:
                with redirect_stdout(io.StringIO()) as out:
                    code = pytest.main(
                        [*args, *load, "-p", "no:terminal"],
                        plugins=[collector, *plugins],
                    )
        if code in (
            pytest.ExitCode.INTERNAL_ERROR,
            pytest.ExitCode.USAGE_ERROR,
        ):
            raise RuntimeError(
                i18n.text(
                    "grade.pytest_failed",
                    code=int(code),
                    output=out.getvalue() if not show_pytest else "",
                )
            )
    if collector.collect_errors:
        raise RuntimeError(
            i18n.text(
                "grade.not_collected",
                errors="\n".join(collector.collect_errors),
            )
        )
    if not sandbox:  # the worker's overhead would skew the order
        save_costs(collector.checks.values())
    if len(collector.checks) == len(collector.order):  # ran to the end
        for path, source in sources.items():
            focusing.remember(path, source)
    results = []
    for lesson in lessons:
        checks = sorted(
            (c for c in collector.checks.values() if c.lesson == lesson.tag),
            key=lambda c: collector.order.get(c.nodeid, 0),
        )
        mistakes = collector.mistakes.get(lesson.tag, ())
        results.append(LessonResult(lesson, checks, mistakes))
    return results


@contextlib.contextmanager
def _running(collector: _Collector) -> Iterator[None]:
    """`collector` on `_RUNNING` while its grade runs."""
    _RUNNING.append(collector)
    try:
        yield
    finally:
        _RUNNING.remove(collector)


def fresh_keras() -> None:
    """Reset Keras's global state (layer-name counters, the graph) between
    grades in one process, so a regrade behaves as the first grade did."""
    keras = sys.modules.get("keras")
    if keras is not None:
        keras.backend.clear_session()
        # clear_session() turns Keras's traceback filtering back on, which
        # would rewrite the student's exceptions from the second grade on
        # (no TODO line, no shapes): keep it off, as the probes set it.
        keras.config.disable_traceback_filtering()


def save_state(results: Sequence[LessonResult], impl: str) -> None:
    """Remember the last grade of each lesson (for `m2t list`/`progress`)."""
    if impl != "lessons":
        return
    path = settings.STATE
    try:
        state = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, ValueError):
        state = {}
    for result in results:
        state[result.lesson.module] = {
            "status": result.status,
            "passed": result.passed,
            "checks": len(result.checks),
            "score": result.score,
            "max_score": result.max_score,
            "time": time.time(),
        }
    try:
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(state, indent=1, sort_keys=True))
    except OSError:
        pass  # a read-only checkout still grades


def load_state() -> dict:
    """The grades `save_state` remembered (empty when none)."""
    path = settings.STATE
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
