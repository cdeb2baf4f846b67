"""Grader plumbing: which implementation is graded, one-line messages for
checks that are not started, and points per check.

    pytest graders/test_l16_attention_scoring.py              # your lessons
    pytest graders/test_l16_attention_scoring.py --impl solutions
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from graders.lib.judge import CheckFailed
from m2t import i18n
from m2t import settings
from m2t.grading import impl as _impl
from m2t.grading import probe as _probe

PUBLIC_SEED = settings.GRADER_SEED
"""The seed of the judge's inputs in `m2t grade` and the student edition:
public (a submission graded only on it could return answers recorded on
it, so `m2t grade --submission` draws a fresh one per run)."""
SEED_ENV = "M2T_GRADER_SEED"
"""The environment variable that carries another seed (`m2t grade
--seed`)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--impl",
        default=os.environ.get("M2T_IMPL", "lessons"),
        help="what to grade: lessons (default), solutions, or a folder of "
        "lNN_topic.py files",
    )
    parser.addoption(
        "--sandbox",
        action="store_true",
        help="run the probes in a sandboxed worker process (untrusted code)",
    )
    parser.addoption(
        "--probe-timeout", type=float, default=settings.PROBE_TIMEOUT
    )
    parser.addoption(
        "--lesson-timeout", type=float, default=settings.LESSON_TIMEOUT
    )
    parser.addoption(
        "--seed",
        type=int,
        default=None,
        help="seed of the judge's inputs (the `rng` fixture); default "
        f"${SEED_ENV}, else the public seed {PUBLIC_SEED}",
    )
    parser.addoption(
        "--allow-weaker-sandbox",
        action="store_true",
        help="with --sandbox: grade even where a confinement layer is missing",
    )
    parser.addoption(
        "--trusted-code",
        default=None,
        help="with --sandbox: the trusted copy the workers import, made when "
        "the grade this one runs inside started (default: copy it now)",
    )


def pytest_configure(config: pytest.Config) -> None:
    settings.quiet_tensorflow()
    config.addinivalue_line("filterwarnings", "ignore")
    folder = _impl.resolve(config.getoption("--impl"))
    if config.getoption("--sandbox"):
        from m2t.grading.sandbox import SandboxRunner

        sandbox = SandboxRunner(
            folder,
            probe_timeout=config.getoption("--probe-timeout"),
            lesson_timeout=config.getoption("--lesson-timeout"),
            allow_weaker=config.getoption("--allow-weaker-sandbox"),
            code=config.getoption("--trusted-code"),
        )
        sandbox.start()
        _probe.set_runner(sandbox)
    else:
        _probe.set_runner(_probe.InProcessRunner(folder))


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    """A plain `pytest graders/...` (no `--timeout`) gives each check the
    lesson's limit, `settings.LESSON_TIMEOUT`, not the project's suite
    default from pyproject.toml; `m2t grade` passes its own limits."""
    if config.getoption("timeout", None) is not None:
        return
    for item in items:
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(settings.LESSON_TIMEOUT))


def pytest_unconfigure(config: pytest.Config) -> None:
    close = getattr(_probe.runner(), "close", None)
    if close is not None:
        close()


def grader_seed(config: pytest.Config) -> int:
    """The seed of the judge's inputs: `--seed`, else $M2T_GRADER_SEED,
    else `PUBLIC_SEED`.

    Raises:
        ValueError: $M2T_GRADER_SEED is not a non-negative integer.
    """
    seed = config.getoption("--seed")
    if seed is None:
        text = os.environ.get(SEED_ENV, "").strip()
        if not text:
            return PUBLIC_SEED
        try:
            seed = int(text)
        except ValueError:
            seed = -1
        if seed < 0:
            raise ValueError(
                i18n.text("cli.bad_seed", name=SEED_ENV, value=repr(text))
            )
    if seed < 0:
        raise ValueError(i18n.text("cli.bad_seed", name="--seed", value=seed))
    return seed


@pytest.fixture(scope="session")
def grade_seed(request: pytest.FixtureRequest) -> int:
    """The grade's seed (`grader_seed`), for a fixture wider than one check
    that draws the judge's inputs (e.g. a module's gate before training):
    never a literal seed, which the student edition would give away."""
    return grader_seed(request.config)


@pytest.fixture
def rng(grade_seed: int) -> np.random.Generator:
    """Seeded NumPy generator for the judge's inputs and weights: the
    public seed unless the grade asks for another (`grader_seed`)."""
    return np.random.default_rng(grade_seed)


def status_of(
    excinfo: pytest.ExceptionInfo | None, tag: str = "?"
) -> tuple[str, str]:
    """(status, one-line-or-more message) of a check's outcome; `tag` (the
    lesson's, "l16") leads the message of a check stopped at its limit."""
    if excinfo is None:
        return "passed", ""
    exc = excinfo.value
    if isinstance(exc, _probe.ProbeFailure):
        return exc.status, str(exc)
    limit = _probe.time_limit(exc)  # in the judge's own code
    if limit is not None:
        return "error", str(_probe.time_limit_error(tag, limit))
    if isinstance(exc, CheckFailed):
        return "failed", str(exc)
    if isinstance(exc, AssertionError):
        return "failed", str(exc) or "assertion failed"
    if excinfo.errisinstance(pytest.skip.Exception):
        return "skipped", str(exc)
    return "error", i18n.text(
        "grader.error", kind=type(exc).__name__, error=exc
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" and not (report.failed or report.skipped):
        return
    marker = item.get_closest_marker("points")
    points = float(marker.args[0]) if marker else 1.0
    tag = item.path.stem.removeprefix("test_").split("_", 1)[0]
    status, message = status_of(call.excinfo, tag)
    if report.failed and (
        status != "error" or isinstance(call.excinfo.value, _probe.ProbeFailure)
    ):
        report.longrepr = message
    report.user_properties += [
        ("points", points),
        ("m2t_status", status),
        ("m2t_message", message),
        # the judge's own diagnosis, never one read from the message
        ("m2t_mistake", _diagnosis(call.excinfo)),
    ]


def _diagnosis(excinfo: pytest.ExceptionInfo | None) -> str:
    """The known mistake the judge named in a failing check ("" if none)."""
    if excinfo is None or not isinstance(excinfo.value, CheckFailed):
        return ""
    return excinfo.value.mistake or ""
