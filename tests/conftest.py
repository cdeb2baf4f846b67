"""The project's own suite: the harness, the self-check, the mutants."""

from __future__ import annotations

import os
import subprocess
import sys
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
