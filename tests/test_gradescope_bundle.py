"""The Gradescope bundle as Gradescope runs it: built by the real command,
unpacked into a folder laid out like `/autograder` (source/, submission/,
results/), and run by its own `run_autograder` as root, with the layers a
container may lack turned off (`M2T_SANDBOX_WITHOUT`). The submission is a
student's upload wrapped in its folder, whose l16 tries what an untouched
skeleton could try in the container (tests/attacks/bundle.py).

Root only: the worker's uid is switched for real.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import stat
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

from m2t import ROOT
from m2t import settings
from tests.conftest import run_m2t
from tests.reachable_python import reachable_python

ATTACKS = Path(__file__).parent / "attacks"

as_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="the worker's uid is switched only by root"
)


def processes_named(comm: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            if Path(f"/proc/{entry}/comm").read_text().strip() == comm:
                found.append(int(entry))
        except (OSError, ValueError):
            pass
    return found


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """The per-lesson bundle of lessons 15 and 16, built by the command."""
    path = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    made = run_m2t("release", "--gradescope", str(path), "15", "16")
    assert made.returncode == 0, made.stdout + made.stderr
    return path


@pytest.fixture
def open_folder():
    """A folder every uid may enter, as `/` is for `/autograder` (pytest's
    own are root's alone, which would close the key to the worker whatever
    run_autograder does)."""
    folder = Path(tempfile.mkdtemp(prefix="m2t-gradescope-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def autograder(bundle: Path, folder: Path) -> Path:
    """`/autograder` as Gradescope lays it out: the bundle unpacked in
    source/ (modes from the zip), run_autograder copied beside it."""
    root = folder / "autograder"
    with zipfile.ZipFile(bundle) as z:
        for info in z.infolist():
            path = z.extract(info, root / "source")
            os.chmod(path, (info.external_attr >> 16) & 0o777 or 0o644)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    (root / "results").mkdir()
    root.chmod(0o755)  # as /autograder
    return root


def upload(root: Path, config: dict) -> None:
    """A student's upload wrapped in its folder: the blank answers and an
    l16 that attacks; no l15."""
    lessons = root / "submission" / "m2t-2026" / "lessons"
    lessons.mkdir(parents=True)
    shutil.copy(ROOT / "lessons" / "answers.toml", lessons / "answers.toml")
    (lessons / "l16_attention_scoring.py").write_text(
        (ROOT / "solutions" / "l16_attention_scoring.py").read_text()
        + f"\nCONFIG = {config!r}\n"
        + (ATTACKS / "bundle.py").read_text()
    )


def run(root: Path, without: str, python: str) -> subprocess.CompletedProcess:
    env = settings.quiet_env(
        {
            **os.environ,
            "M2T_AUTOGRADER_ROOT": str(root),
            "M2T_PYTHON": python,
            "M2T_SANDBOX_WITHOUT": without,
            "M2T_LANG": "en",
        }
    )
    env.pop("M2T_ROOT", None)
    return subprocess.run(
        [root / "run_autograder"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )


def test_one_bundle_per_lesson(tmp_path):
    """`m2t release --gradescope FOLDER` (the recommended layout): a zip
    per lesson, each grading its lesson only."""
    made = run_m2t("release", "--gradescope", str(tmp_path), "15", "16")
    assert made.returncode == 0, made.stdout + made.stderr
    assert "one per lesson" in made.stdout
    written = sorted(tmp_path.glob("*.zip"))
    assert [p.name for p in written] == ["l15.zip", "l16.zip"]
    for path, tag in zip(written, ("l15", "l16"), strict=True):
        with zipfile.ZipFile(path) as z:
            script = z.read("run_autograder").decode()
            names = set(z.namelist())
        assert f"LESSONS=({tag})" in script
        assert "solutions/questions_key/l16.toml" in names
        assert not [n for n in names if n.startswith("solutions/l")]


@as_root
@pytest.mark.parametrize(
    "without",
    ["namespaces", "namespaces,landlock", "namespaces,unprivileged"],
    ids=["no-namespaces", "no-namespaces-no-landlock", "no-namespaces-root"],
)
def test_run_autograder_keeps_the_key_and_the_results(
    bundle, open_folder, without
):
    """Without user namespaces (Docker's usual case) the worker runs as a
    uid of its own, not root: the key and the graders are closed to it, the
    staged answers and the results' folder are not its to write, and its
    setsid daemon is dead when run_autograder returns (results.json keeps
    the grade). With Landlock missing too, or no uid to switch to, the
    container is below the course's minimum: nothing of the student's runs
    and results.json tells the instructor why."""
    python = reachable_python()
    if python is None:
        pytest.skip("no Python here that another uid can run")
    root = autograder(bundle, open_folder)
    survivor = "m2tgs" + secrets.token_hex(4)
    (open_folder / "marks").mkdir(mode=0o777)
    (open_folder / "marks").chmod(0o777)
    marker = open_folder / "marks" / "loaded"  # the module says it loaded
    results = root / "results" / "results.json"
    upload(
        root,
        {
            "key": str(root / "source/solutions/questions_key/l16.toml"),
            "grader": str(
                root / "source/graders/test_l16_attention_scoring.py"
            ),
            "results": str(results),
            "survivor": survivor,
            "marker": str(marker),
        },
    )
    try:
        ran = run(root, without, python)
        time.sleep(3)  # a daemon's turn to rewrite results.json
        survivors = processes_named(survivor)
        data = json.loads(results.read_text())
    finally:
        for pid in processes_named(survivor):
            os.kill(pid, signal.SIGKILL)
    log = ran.stdout + ran.stderr[-3000:]
    assert survivors == [], log
    assert data.get("score") != 999, log
    for path in (root / "source", root / "results"):
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0
    if without != "namespaces":  # below the minimum: refused, told why
        assert ran.returncode == 1, log
        assert not marker.exists()  # the student's code never ran
        assert data["tests"] == [] and data["score"] == 0
        short = (
            "unprivileged"
            if "unprivileged" in without
            else ("namespaces or landlock")
        )
        for text in (data["output"], ran.stderr):
            assert "NOT GRADED" in text and "For the instructor" in text
            assert f"({short}: left out by M2T_SANDBOX_WITHOUT" in text
        return
    assert ran.returncode == 0, log
    assert data["output"].startswith(
        "sandbox: unprivileged, landlock, seccomp in force"
    ), data["output"]
    reports = [
        t["output"] for t in data["tests"] if "bundle: uid=" in t["output"]
    ]
    assert reports, [t["output"][:200] for t in data["tests"]]
    for report in reports:
        found = dict(re.findall(r"(\w+)=(\d+)", report.split("bundle: ")[1]))
        print(found)
        assert int(found["uid"]) != 0 and int(found["euid"]) != 0
        assert int(found["gid"]) != 0
        assert {k for k, v in found.items() if v == "1"} == {"daemon"}
    assert not Path(str(results) + ".mine").exists()
    l15 = [t["output"] for t in data["tests"] if t["name"].startswith("l15")]
    assert l15 and all(
        "expected at m2t-2026/lessons/l15_attention_pooling.py" in o
        for o in l15
    ), l15
    l16 = [t for t in data["tests"] if t["name"].startswith("l16 test_")]
    assert sum(t["status"] == "passed" for t in l16) >= 15
