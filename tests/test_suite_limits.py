"""The suite's own per-test time limit (pyproject's `timeout`, enforced by
pytest-timeout) is in force: a test that runs past it fails."""

import re
import subprocess
import sys

from m2t import ROOT


def test_the_suite_has_a_per_test_time_limit(tmp_path):
    ini = (ROOT / "pyproject.toml").read_text()
    limit = re.search(r"^timeout = (\d+)$", ini, re.M)
    assert limit and int(limit.group(1)) >= 600, "no per-test limit"
    # the same settings with a 2 s limit, on a test that takes 60 s
    (tmp_path / "pyproject.toml").write_text(
        ini.replace(limit.group(0), "timeout = 2")
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_slow.py").write_text(
        "import time\n\ndef test_slow():\n    time.sleep(60)\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert result.returncode == 1, result.stdout
    assert "Timeout (>2.0s) from pytest-timeout" in result.stdout, result.stdout
