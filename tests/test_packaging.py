"""The wheel `python -m build` makes: the harness and the data package,
the curriculum as shared data, no lessons, graders, solutions or answer
key; installed into a fresh virtual environment, `m2t list` works there,
outside any course folder and inside one."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        # the sdist, then the wheel from it (nothing is built in the tree)
        [sys.executable, "-m", "build", "--outdir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    (path,) = out.glob("*.whl")
    return path


def test_the_wheel_holds_the_harness_not_the_course(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {"m2t", "m2t_data"} <= tops
    assert not tops & {"lessons", "graders", "solutions", "training"}
    assert not [n for n in names if "questions_key" in n or "answers.toml" in n]
    assert any(
        n.endswith(".data/data/share/m2t/curriculum.toml") for n in names
    )
    assert "m2t/authoring/templates/classroom.yml" in names
    # `m2t dev new-lesson` writes a lesson's files from these templates
    templates = ROOT / "m2t" / "authoring" / "templates" / "lesson"
    wanted = {
        f"m2t/authoring/templates/lesson/{p.name}" for p in templates.iterdir()
    }
    assert wanted and wanted <= set(names), sorted(wanted - set(names))


def test_m2t_list_works_from_the_installed_wheel(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True
    )
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [
            python,
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # Install the wheel with this environment's pip, into the new one.
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            purelib,
            str(wheel),
        ],
        check=True,
    )
    # --target puts data files under the target; an installer puts them in
    # the prefix: move them where `pip install` into the venv would.
    data = Path(purelib) / "share"
    if data.is_dir():
        data.rename(venv / "share")
    # The dependencies (TensorFlow...) come from this environment, which
    # has no m2t of its own on the path (its editable finder is a .pth).
    env = {
        **os.environ,
        "PYTHONPATH": sysconfig.get_paths()["purelib"],
        "M2T_ROOT": "",
    }
    where = subprocess.run(
        [python, "-c", "import m2t; print(m2t.__file__); print(m2t.ROOT)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert where[0].startswith(purelib), where
    assert where[1] == str(venv / "share" / "m2t"), where

    outside = subprocess.run(
        [python, "-m", "m2t", "list"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert outside.returncode == 0, outside.stderr
    lines = outside.stdout.splitlines()
    assert lines[0].split() == ["l01", "l01_mlp", "missing"]
    assert "set M2T_ROOT" in outside.stderr

    inside = subprocess.run(
        [python, "-m", "m2t", "list"],
        cwd=ROOT / "lessons",
        env=env,
        capture_output=True,
        text=True,
    )
    assert inside.returncode == 0, inside.stderr
    assert "missing" not in inside.stdout.splitlines()[0]
