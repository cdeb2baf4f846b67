"""mlp-to-transformer: the course harness (curriculum, lesson generator,
grading runner, reports and the `m2t` command line)."""

import os
import sys
from pathlib import Path

__version__ = "0.1.0"

SHARED = Path(sys.prefix) / "share" / "m2t"
"""Where an installed wheel puts its copy of `curriculum.toml`."""


def find_root() -> Path:
    """The course folder: the one holding `curriculum.toml` (and, in a
    checkout or student edition, lessons/, graders/, solutions/ ...).

    In order: `$M2T_ROOT`; the folder above this package when it is a
    course folder (a checkout, a student edition, an editable install);
    the current folder or one above it that holds `curriculum.toml` and
    lessons/ (a wheel installed, run from a student edition); else the
    wheel's shared copy, which holds the curriculum only.
    """
    if os.environ.get("M2T_ROOT"):
        return Path(os.environ["M2T_ROOT"]).expanduser().resolve()
    here = Path(__file__).resolve().parent.parent
    if (here / "curriculum.toml").is_file():
        return here
    cwd = Path.cwd()
    for folder in (cwd, *cwd.parents):
        if (folder / "curriculum.toml").is_file() and (
            folder / "lessons"
        ).is_dir():
            return folder
    return SHARED


ROOT = find_root()
"""The course folder (`find_root`): lessons/, solutions/, graders/."""
