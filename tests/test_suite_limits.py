"""The suite's own limits and scheduling: a per-test time limit near five
minutes (pyproject's `timeout`, enforced by pytest-timeout) that a test
running past it fails; under `pytest -n 2`, a module whose tests share a
module-wide fixture runs on one worker, which builds it once, and what
`shared` makes is made once a run for every worker."""

import re
import shutil
import subprocess
import sys

from m2t import ROOT


def test_the_suite_has_a_per_test_time_limit(tmp_path):
    ini = (ROOT / "pyproject.toml").read_text()
    limit = re.search(r"^timeout = (\d+)$", ini, re.M)
    assert limit and 240 <= int(limit.group(1)) <= 360, "no 5-minute limit"
    # the same settings with a 2 s limit, on a test that takes 10 minutes
    (tmp_path / "pyproject.toml").write_text(
        ini.replace(limit.group(0), "timeout = 2")
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_slow.py").write_text(
        "import time\n\ndef test_slow():\n    time.sleep(600)\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,  # a backstop: the test sleeps twice as long
    )
    assert result.returncode == 1, result.stdout
    assert "Timeout (>2.0s) from pytest-timeout" in result.stdout, result.stdout


GROUPED = """
import os
import pytest

@pytest.fixture(scope="module")
def built(tmp_path_factory):
    with open(os.environ["BUILDS"], "a") as f:
        f.write(os.environ.get("PYTEST_XDIST_WORKER", "none") + "\\n")
    return 1

@pytest.mark.parametrize("i", range(8))
def test_uses_it(built, i):
    with open(os.environ["RAN"], "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
"""

SHARED = """
import os
import pytest

def make(folder):
    with open(os.environ["MADE"], "a") as f:
        f.write("made\\n")
    (folder / "x").write_text("7")
    return {"seven": int((folder / "x").read_text())}

@pytest.mark.parametrize("i", range(6))
def test_NAME(shared, i):
    assert shared("seven", make) == {"seven": 7}
"""


def test_tests_sharing_a_module_fixture_run_on_one_worker(tmp_path):
    """Eight tests of one module fixture and twelve others that each ask
    `shared` for the same thing, under `pytest -n 2`: the module's tests
    all run on one worker and its fixture is built once (xdist's own
    `load` would build it on both), and `shared` makes its value once."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    tests = tmp_path / "tests"
    tests.mkdir()
    shutil.copy(ROOT / "tests" / "conftest.py", tests)
    (tests / "__init__.py").write_text("")
    (tests / "test_grouped.py").write_text(GROUPED)
    for name in ("one", "two"):
        text = SHARED.replace("NAME", name)
        (tests / f"test_shared_{name}.py").write_text(text)
    files = {k: tmp_path / k.lower() for k in ("BUILDS", "RAN", "MADE")}
    env = {**__import__("os").environ, **{k: str(v) for k, v in files.items()}}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,  # a backstop: 20 trivial tests
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "20 passed" in result.stdout, result.stdout
    ran = files["RAN"].read_text().split()
    assert len(ran) == 8 and len(set(ran)) == 1, ran
    assert files["BUILDS"].read_text().split() == ran[:1]
    assert files["MADE"].read_text().split() == ["made"]
