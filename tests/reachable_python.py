"""A Python that a worker's own uid can run, for the tests that grade as
root without namespaces (the worker executes Python after it switched uid,
so every folder above the interpreter and its library must be open to
others, as `/opt/m2t` is on Gradescope's image).

`reachable_python()` is this interpreter where another uid can start it;
else a virtual environment of the system's interpreter of the same version
(the same ABI) that reads this environment's site-packages, made once in a
folder open to every uid; else None (the test skips, saying why).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import site
import subprocess
import sys
import tempfile
from pathlib import Path

from m2t.grading.uids import WORKER_UIDS
from m2t.grading.uids import as_worker

PROBE_UID = WORKER_UIDS[-2]


def _runs_as_worker(python: str) -> bool:
    try:
        done = subprocess.run(
            [python, "-c", "import numpy, keras, m2t"],
            capture_output=True,
            timeout=600,
            env={"PATH": "/usr/bin:/bin", "TF_CPP_MIN_LOG_LEVEL": "3"},
            cwd="/",
            **as_worker(PROBE_UID),
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def reachable_python() -> str | None:
    """See the module's docstring (root only; None otherwise)."""
    if os.geteuid() != 0:
        return None
    if _runs_as_worker(sys.executable):
        return sys.executable
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    system = shutil.which(version, path="/usr/bin:/bin:/usr/local/bin")
    if system is None:
        return None
    home = Path(tempfile.mkdtemp(prefix="m2t-reachable-python-"))
    home.chmod(0o755)
    atexit.register(shutil.rmtree, home, True)
    venv = home / "venv"
    subprocess.run([system, "-m", "venv", "--without-pip", venv], check=True)
    purelib = subprocess.run(
        [
            venv / "bin" / "python",
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = [p for p in site.getsitepackages() if os.path.isdir(p)]
    lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in ours)
    Path(purelib, "m2t-tests.pth").write_text(lines)
    for path in [home, *home.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)
    python = str(venv / "bin" / "python")
    return python if _runs_as_worker(python) else None
