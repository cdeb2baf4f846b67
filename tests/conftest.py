"""The project's own suite: the harness, the self-check, the mutants."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from m2t import settings

ROOT = Path(__file__).resolve().parent.parent

# The suite reads m2t in English, whatever the machine's locale or a
# remembered `m2t --lang` say; a test that wants Chinese asks for it.
os.environ["M2T_LANG"] = "en"


def run_m2t(
    *args: str, cwd: Path = ROOT, timeout: float = 1500, lang: str = "en"
) -> subprocess.CompletedProcess:
    """Run the `m2t` command line in a fresh process (as a user would),
    speaking `lang`."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "M2T_LANG": lang}
    env = settings.quiet_env(env)
    return subprocess.run(
        [sys.executable, "-m", "m2t", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def m2t():
    return run_m2t


# -- one run, two workers: each expensive thing once ------------------------
#
# `pytest -n 2` hands out tests one by one (xdist's `load`), so a module's
# fixture would be built once on each worker. The suite schedules by group
# instead (xdist's `loadgroup`): every test of a module that uses a
# module-wide fixture of the suite's own (an edition, a wheel, a training)
# carries that module's `xdist_group` and runs on one worker; the rest still
# go one by one. What several modules need is made once through `shared`.


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"  # the controller schedules by group
    workerinput = getattr(config, "workerinput", {})
    if workerinput.get("m2t_loadgroup"):
        config.option.loadgroup = True  # a worker names each test's group


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """Tell each xdist worker to name the groups (a worker parses the
    command line again, where `-n 2` alone means `load`)."""
    node.workerinput["m2t_loadgroup"] = node.config.option.dist == "loadgroup"


HEAVY = {
    # node id (or its prefix) -> seconds: a test measured near or over the
    # suite's 300 s (the figure beside it, on 2 cores at load 20), or one
    # that waits on a subprocess under a longer limit of its own
    "tests/test_selfcheck.py::test_self_check_passes_on_the_repository": 1500,
    "tests/test_train_distribute.py": 1500,
    "tests/test_train_recipes.py": 900,
    "tests/test_notebooks.py::test_notebook_executes_against_the_solutions": (
        900
    ),
    "tests/test_attacks.py": 1500,  # 751 s at load 20
    "tests/test_attacks_shortcuts.py": 1200,
    "tests/test_capstone_language_model.py": 1200,
    "tests/test_capstone_transformer.py": 1800,  # 1108 s at load 20
    "tests/test_classroom.py": 1500,
    "tests/test_gradescope_bundle.py": 1500,
    "tests/test_d2l_ports.py": 1200,
    "tests/test_packaging.py": 900,
    "tests/test_release.py": 1500,
    "tests/test_roster.py": 1500,
    "tests/test_roster_shards.py": 1500,
    "tests/test_student_loop.py": 1200,
    "tests/test_mutants.py": 900,
    "tests/test_i18n.py": 600,
    "tests/test_tfsetup.py": 900,  # fresh TensorFlow imports: 307 s at load 20
    "tests/test_time_limit.py": 600,
    "tests/datasets/test_datasets_embedded.py": 600,
    "tests/datasets/test_datasets_tfds.py": 900,  # 195 s at load 20
    "tests/test_benchmarks.py": 900,  # 301 s at load 20
    "tests/test_watch_tty.py": 600,
    "tests/test_standing.py::test_after_a_pass_the_watch_grades_the_next": 600,
}
"""Tests allowed more than the suite's per-test limit (pyproject.toml's
`timeout`), by node id or the prefix of one (a whole module)."""


def _module_wide(item: pytest.Item) -> bool:
    """Does `item` use a module- or package-scoped fixture of this suite
    (not a plugin's)?"""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(
        d.scope in ("module", "package") and d.baseid
        for name in info.names_closure
        for d in info.name2fixturedefs.get(name, ())
    )


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark `item` as it is collected (before xdist reads the marks in
    `pytest_collection_modifyitems`): its module's group where it uses a
    module-wide fixture, its limit where HEAVY lists it."""
    if item.get_closest_marker("xdist_group") is None and _module_wide(item):
        module = item.nodeid.partition("::")[0]
        item.add_marker(pytest.mark.xdist_group(module))
    if item.get_closest_marker("timeout") is None:
        for prefix, seconds in HEAVY.items():
            if item.nodeid.startswith(prefix):
                item.add_marker(pytest.mark.timeout(seconds))
                break


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    """On an xdist worker scheduling by group, end each grouped test's node
    id with `@GROUP`, as xdist does where pytest keeps the id in `_nodeid`
    (pytest 9.2 keeps it in `_id`, which xdist 3.8 does not set: every
    test would be scheduled alone)."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        names = sorted(
            {
                str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                for m in item.iter_markers("xdist_group")
            }
        )
        if names and "@" not in item.nodeid:
            nodeid = f"{item.nodeid}@{'_'.join(names)}"
            if hasattr(item, "_id"):
                from _pytest.nodeid import NodeId

                item._id = NodeId.parse(nodeid)
            else:
                item._nodeid = nodeid


def _run_folder(factory: pytest.TempPathFactory) -> Path:
    """A folder of this run that every xdist worker of it sees."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def _locked(path: Path):
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def shared(tmp_path_factory: pytest.TempPathFactory):
    """`shared(name, make)`: what `make(folder)` returns (JSON), made once
    per test run whichever xdist worker asks first, in its own `folder`
    that lasts the run; the other workers wait for it and read it.

    A `make` that raises is not remembered: the next caller runs it again
    (and fails as loudly)."""
    run = _run_folder(tmp_path_factory) / "m2t-shared"
    run.mkdir(exist_ok=True)

    def get(name: str, make: Callable[[Path], object]):
        if not name.isidentifier():
            raise ValueError(f"name: {name!r} is not an identifier")
        done = run / f"{name}.json"
        with _locked(run / f"{name}.lock"):
            if not done.exists():
                folder = run / name
                folder.mkdir(exist_ok=True)
                value = make(folder)
                tmp = done.with_suffix(".tmp")
                tmp.write_text(json.dumps(value))
                tmp.replace(done)
        return json.loads(done.read_text())

    return get
