"""The harness's settings, in one place: time limits, TensorFlow's log
level, the student's state folder `.m2t/`, the lesson file pattern and the
TOML reader.

Everything here is a plain value (or the `tomllib` module); importing this
module imports nothing heavy, so the graders, `training/` and `benchmarks/`
use it as freely as the harness.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from m2t import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 (pyproject declares tomli there)
    import tomli as tomllib

__all__ = [
    "BACKSTOP_MARGIN",
    "BACKUPS",
    "CHECK_COSTS",
    "CHECK_TIMEOUT",
    "GRADING_TF_ENV",
    "HINTS_STATE",
    "LANG_STATE",
    "LESSON_GLOB",
    "LAYER_PROBE_TIMEOUT",
    "LESSON_TIMEOUT",
    "MUTANT_TIMEOUT",
    "PROBE_TIMEOUT",
    "SKELETONS",
    "STATE",
    "STATE_DIR",
    "TF_LOG_LEVEL",
    "quiet_env",
    "quiet_tensorflow",
    "tomllib",
]

# -- time limits, in seconds
CHECK_TIMEOUT = 120.0
"""One grader check, in process (`m2t grade --timeout`, `m2t watch`)."""

PROBE_TIMEOUT = 60.0
"""One probe in the sandboxed worker, when nobody says otherwise."""

LESSON_TIMEOUT = 600.0
"""All probes of one lesson in the sandboxed worker (`--lesson-timeout`)."""

BACKSTOP_MARGIN = 120.0
"""Sandboxed, pytest-timeout only backs the worker's own limits up: a
check may run two probe limits plus this margin."""

GRADER_SEED = 20261130
"""The public seed of the judge's inputs (the graders' `rng`): `m2t grade`
and the student edition use it, and its fixtures hold the references'
outputs on it; `m2t grade --submission` draws a fresh one per run."""

MUTANT_TIMEOUT = 60.0
"""One check while grading a mutant (`m2t mutants`): a known mistake may
loop, and the suite should not wait the full check limit for it."""

LAYER_PROBE_TIMEOUT = 60.0
"""Starting a bare Python in bubblewrap, to learn whether this machine can
give the sandbox its namespaces."""

# -- TensorFlow
TF_LOG_LEVEL = "3"
"""`TF_CPP_MIN_LOG_LEVEL`: TensorFlow's C++ logs show errors only."""

GRADING_TF_ENV = {"TF_ENABLE_ONEDNN_OPTS": "0"}
"""The environment TensorFlow is imported in to grade, where the caller's
environment does not set it (`m2t.grading.tfsetup.load`): oneDNN's custom
ops cost several times the op itself on a grader's tiny tensors."""


def quiet_tensorflow() -> None:
    """Set `TF_CPP_MIN_LOG_LEVEL` for this process unless the user has
    (call before TensorFlow is imported)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", TF_LOG_LEVEL)


def quiet_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child process: `base` (default `os.environ`)
    with TensorFlow's C++ logs at `TF_LOG_LEVEL`."""
    env = dict(os.environ if base is None else base)
    env["TF_CPP_MIN_LOG_LEVEL"] = TF_LOG_LEVEL
    return env


# -- files
LESSON_GLOB = "l[0-9][0-9]_*.py"
"""A lesson's module file (`l16_attention_scoring.py`) in lessons/,
solutions/ or a student's folder."""

STATE_DIR = ROOT / ".m2t"
"""The student's state in a checkout or student edition (git-ignored)."""

STATE = STATE_DIR / "state.json"
"""The last grade of each lesson (`m2t list`, `m2t progress`)."""

HINTS_STATE = STATE_DIR / "hints.json"
"""How many hints of each lesson are unlocked (`m2t hint`)."""

CHECK_COSTS = STATE_DIR / "check-costs.json"
"""Each grader check's seconds when it last passed in process: the runner
runs a lesson's unpassed and quick checks first (`m2t watch` shows a
failure sooner)."""

SKELETONS = STATE_DIR / "skeletons"
"""The pristine skeletons `m2t release` ships (`m2t reset` without
solutions/)."""

LANG_STATE = STATE_DIR / "lang"
"""The language `m2t --lang` remembered (`en` or `zh`; see m2t/i18n.py)."""

BACKUPS = STATE_DIR / "backups"
"""The student's versions `m2t reset` replaced."""
