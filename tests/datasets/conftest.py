"""Shared fixtures for the m2t_data tests: offline, isolated caches."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
# Our `m2t_data` must come first on sys.path, ahead of any Hugging Face
# `m2t_data` that may be installed.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from m2t import settings  # noqa: E402

settings.quiet_tensorflow()  # before m2t_data imports TensorFlow

import m2t_data  # noqa: E402


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path):
    """No network, no user cache, no mirror from the environment."""
    monkeypatch.setenv("M2T_OFFLINE", "1")
    monkeypatch.setenv("M2T_CACHE_DIR", str(tmp_path / "m2t-cache"))
    monkeypatch.delenv("M2T_DATA_MIRROR", raising=False)


@pytest.fixture(scope="session")
def real_dir() -> Path:
    """The shared folder with the book's files, or skip."""
    path = m2t_data.real_data_dir()
    if path is None:
        pytest.skip(
            "real data folder absent (<repo>/../shared/data/real or "
            "$M2T_REAL_DATA)"
        )
    return path


def _need(folder: Path, name: str) -> Path:
    path = folder / name
    if not path.is_file():
        pytest.skip(f"{name} absent from {folder}")
    return path


@pytest.fixture(scope="session")
def time_machine_file(real_dir) -> Path:
    return _need(real_dir, "timemachine.txt")


@pytest.fixture(scope="session")
def fra_eng_file(real_dir) -> Path:
    return _need(real_dir, "fra-eng.zip")
