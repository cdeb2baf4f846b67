"""mlp-to-transformer: the course harness (curriculum, lesson generator,
grading runner, reports and the `m2t` command line)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository (or student edition) root: lessons/, solutions/, graders/."""

__version__ = "0.1.0"
