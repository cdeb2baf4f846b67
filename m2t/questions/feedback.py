"""When a grade may say which answers are right: the instructor's
`feedback_after` deadline.

Per-question verdicts let a student find a one-of key by elimination over a
few grades. An instructor who wants none of that before a deadline sets it
in curriculum.toml's `[questions]` table (a TOML date-time with its offset,
or the same as an ISO 8601 string):

    [questions]
    feedback_after = 2026-12-20T23:59:00+08:00

or for one run in $M2T_FEEDBACK_AFTER (an ISO 8601 date-time with its
offset; "" or "none": no deadline). Until then every readable answer is
recorded, never judged aloud: its check is skipped (in neither the score
nor the maximum), with the same message whether it is right or wrong; an
unreadable answer is still named, since that is about its form.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from m2t import ROOT
from m2t.settings import tomllib

FEEDBACK_ENV = "M2T_FEEDBACK_AFTER"
"""The environment variable that sets (or clears) the deadline for a run."""
SETTING = "feedback_after"
"""Its key in curriculum.toml's `[questions]` table."""


def _parse(value: object, name: str) -> dt.datetime | None:
    if value is None or (
        isinstance(value, str) and value.strip().lower() in ("", "none")
    ):
        return None
    when = value
    if isinstance(value, str):
        try:
            when = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            when = None
    if not isinstance(when, dt.datetime) or when.tzinfo is None:
        raise ValueError(
            f"{name} must be a date-time with its UTC offset, e.g. "
            f"2026-12-20T23:59:00+08:00, got {value!r}"
        )
    return when


def feedback_after(curriculum: Path | None = None) -> dt.datetime | None:
    """The deadline before which no answer's verdict is shown, or None.

    Raises:
        ValueError: a setting that is not a date-time with an offset,
            naming where it was set and its value.
    """
    if FEEDBACK_ENV in os.environ:
        return _parse(os.environ[FEEDBACK_ENV], f"${FEEDBACK_ENV}")
    path = curriculum or ROOT / "curriculum.toml"
    with open(path, "rb") as f:
        table = tomllib.load(f).get("questions", {})
    return _parse(table.get(SETTING), f"curriculum.toml [questions] {SETTING}")


def hidden_until(now: dt.datetime | None = None) -> dt.datetime | None:
    """The deadline while it is still ahead of `now` (default: this
    instant), else None: verdicts may be shown."""
    deadline = feedback_after()
    now = now or dt.datetime.now(dt.timezone.utc)
    return deadline if deadline is not None and now < deadline else None
