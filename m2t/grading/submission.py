"""One untrusted submission, graded: what `m2t grade --submission`, a roster
and the Gradescope autograder share.

    with submission.staged(Path("alice"), lessons) as (impl, notes):
        results = runner.grade(lessons, impl=impl, sandbox=True)

`refusal` says whether this machine may grade untrusted code at all;
`staged` copies the gradable files of a submission to a temporary folder
(nothing else of it is ever read) and yields that folder with the notes a
report leads with: how the sandbox was confined, which files were refused.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path

from m2t import curriculum


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
            f"not graded: {name}: {why}"
            for name, why in staging.refusals(temp).items()
        ]
        yield str(impl), notes
    finally:
        shutil.rmtree(temp, ignore_errors=True)
