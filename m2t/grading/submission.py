"""One untrusted submission, graded: what `m2t grade --submission`, a roster
and the Gradescope autograder share.

    with submission.staged(Path("alice"), lessons) as (impl, notes):
        results = runner.grade(lessons, impl=impl, sandbox=True)

`refusal` says whether this machine may grade untrusted code at all;
`staged` copies the gradable files of a submission to a temporary folder
(nothing else of it is ever read) and yields that folder with the notes a
report leads with: how the sandbox was confined, which files were refused.
`fresh_seed` draws the seed of the judge's inputs for one submission, and
`judged_on` grades on it (`seed_note` is the report's line that says so).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path

from m2t import ROOT
from m2t import curriculum
from m2t import i18n
from m2t import settings

SEED_ENV = "M2T_GRADER_SEED"
"""How the graders' `rng` learns the seed (graders/conftest.py)."""


def refusal(allow_weaker_sandbox: bool) -> str | None:
    """Why untrusted code may not be graded here (a layer of the sandbox is
    missing and weaker is not allowed), or None."""
    from m2t.grading import confine
    from m2t.grading import sandbox

    missing = confine.missing_layers()
    if missing and not allow_weaker_sandbox:
        return sandbox.describe_missing(missing)
    return None


@contextlib.contextmanager
def staged(
    folder: Path, lessons: Sequence[curriculum.Lesson]
) -> Iterator[tuple[str, list[str]]]:
    """Stage the lesson files and answers of `folder` (a submission) in a
    temporary folder, removed afterwards.

    Yields:
        (the staged folder, as `runner.grade`'s `impl`; the notes: the
        sandbox's layers, then each refused file and why).

    Raises:
        ValueError: `folder` is no folder.
    """
    from m2t.grading import confine
    from m2t.grading import staging

    notes = confine.describe(confine.missing_layers())
    temp = Path(tempfile.mkdtemp(prefix="m2t-submission-"))
    try:
        modules = [x.module for x in lessons]
        modules += [p for x in lessons for p in x.parts if p not in modules]
        impl = staging.stage(Path(folder), modules, temp)
        notes += [
            i18n.text("notes.not_graded", name=name, why=why)
            for name, why in staging.refusals(temp).items()
        ]
        yield str(impl), notes
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def fresh_seed() -> int:
    """The seed of one submission's judge inputs: drawn afresh in the full
    repository, where the references judge any input (so a submission
    cannot return answers recorded on the public seed); the public seed in
    the student edition, whose fixtures are recorded on it."""
    if (ROOT / "solutions").is_dir():
        return secrets.randbelow(2**31)
    return settings.GRADER_SEED


def submission_seed(seed: int | None) -> int:
    """The seed a submission is judged on: `seed`, or a fresh one
    (`fresh_seed`) when None.

    Raises:
        ValueError: `seed` is negative, or it is the public seed in the
            full repository: the student edition ships the expected
            outputs of every check on that seed (its fixtures), so a
            submission judged on it could replay them.
    """
    if seed is None:
        return fresh_seed()
    check_seed(seed)
    if seed == settings.GRADER_SEED and (ROOT / "solutions").is_dir():
        raise ValueError(i18n.text("cli.public_seed", seed=seed))
    return seed


def seed_note(seed: int) -> str:
    """The report's line naming the seed a submission was judged on, in
    the run's language."""
    return i18n.text("notes.seed", seed=seed)


def check_seed(seed: int) -> int:
    """`seed`, or a ValueError naming --seed and the value when it is
    negative."""
    if seed < 0:
        raise ValueError(i18n.text("cli.bad_seed", name="--seed", value=seed))
    return seed


@contextlib.contextmanager
def judged_on(seed: int) -> Iterator[int]:
    """The graders' `rng` (in this process and the ones it starts) seeded
    with `seed` while the block runs.

    Raises:
        ValueError: `seed` is negative (naming --seed and the value).
    """
    check_seed(seed)
    saved = os.environ.get(SEED_ENV)
    os.environ[SEED_ENV] = str(seed)
    try:
        yield seed
    finally:
        if saved is None:
            os.environ.pop(SEED_ENV, None)
        else:
            os.environ[SEED_ENV] = saved
