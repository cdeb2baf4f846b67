"""Known mistakes, made on purpose: every grader must catch each one and name
it.

`solutions/mutants/<module>.toml` holds, per mistake of a lesson, the text
replacements that turn the reference solution into a solution with exactly
that mistake (a *mutant*):

    [no_scale]
    replace = [["... / ops.sqrt(d)", "..."]]

The same names are the `Mistake`s the lesson's grader diagnoses. A mutant is
*caught* when at least one check fails, and *diagnosed* when a failing check
leads with "Likely mistake [<its name>]" ("可能的错误 [<its name>]" in
Chinese: `m2t.grading.classreport.diagnosed` reads both).
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from m2t import ROOT
from m2t import curriculum
from m2t import settings
from m2t.grading.classreport import diagnosed
from m2t.settings import tomllib

MUTANTS = ROOT / "solutions" / "mutants"


@dataclasses.dataclass
class Outcome:
    lesson: str
    mistake: str
    caught: bool
    diagnosed_as: list[str]
    failing_checks: int
    messages: list[str] = dataclasses.field(default_factory=list)
    """The failing checks' messages, as the student reads them."""

    @property
    def ok(self) -> bool:
        return self.caught and self.diagnosed_as == [self.mistake]


def catalogue(module: str) -> dict[str, list[tuple[str, str]]]:
    """Mistake name -> its replacements, for one lesson (empty if none)."""
    path = MUTANTS / f"{module}.toml"
    if not path.exists():
        return {}
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return {
        name: [(old, new) for old, new in entry["replace"]]
        for name, entry in data.items()
    }


def mutate(
    source: str, replacements: Sequence[tuple[str, str]], where: str
) -> str:
    """Apply each (old, new) once; `old` must occur exactly once.

    Raises:
        ValueError: naming `where` and the text that is missing or repeated.
    """
    for old, new in replacements:
        count = source.count(old)
        if count != 1:
            raise ValueError(
                f"{where}: {old!r} occurs {count} times in the solution "
                "(it must occur exactly once)"
            )
        source = source.replace(old, new)
    return source


def run(
    lessons: Sequence[curriculum.Lesson],
    timeout: float = settings.MUTANT_TIMEOUT,
) -> list[Outcome]:
    """Grade every mutant of `lessons` in this process."""
    from m2t.grading import runner as grading
    from m2t.grading import trains

    outcomes = []
    for lesson in lessons:
        solution = ROOT / "solutions" / f"{lesson.module}.py"
        for name, replacements in catalogue(lesson.module).items():
            text = mutate(
                solution.read_text(encoding="utf-8"),
                replacements,
                f"{lesson.module}.toml [{name}]",
            )
            folder = Path(tempfile.mkdtemp(prefix=f"m2t-mutant-{name}-"))
            try:
                (folder / solution.name).write_text(text, encoding="utf-8")
                for part in lesson.parts:  # a capstone's, as solved
                    shutil.copy(ROOT / "solutions" / f"{part}.py", folder)
                (result,) = grading.grade(
                    [lesson],
                    impl=str(folder),
                    timeout=timeout,
                    plugins=[trains.LeaveOutTraining(once_caught=True)],
                )
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            # a training check left out (caught already) is not a failure
            failing = [
                c
                for c in result.checks
                if c.status not in ("passed", "skipped")
            ]
            names = sorted({m for c in failing for m in diagnosed(c.message)})
            outcomes.append(
                Outcome(
                    lesson.tag,
                    name,
                    bool(failing),
                    names,
                    len(failing),
                    [c.message for c in failing],
                )
            )
    return outcomes


MARKDOWN_HEADER = """# Known mistakes, caught and diagnosed

Every row is a mistake learners make, catalogued in its lesson's grader
(`Mistake`, with a float64 reference of what it produces) and made on purpose
as an edit of the solution in `solutions/mutants/`. *Caught*: at least one
check fails. *Diagnosed as itself*: the failing checks name this mistake and
no other. A check that trains (a capstone's) runs last and only for a mutant
no other check has caught (`m2t/grading/trains.py`). Reproduce with
`m2t mutants --markdown docs/mistakes.md`; the test suite
(`tests/test_mutants.py`) runs every mutant and checks this table.

"""


def markdown(outcomes: Sequence[Outcome]) -> str:
    """The table of catalogued mistakes: lesson, mistake, caught, diagnosed."""
    lines = [
        "| lesson | mistake | caught | diagnosed as itself | failing checks |",
        "| --- | --- | --- | --- | --- |",
    ]
    for o in outcomes:
        caught = "yes" if o.caught else "NO"
        named = ", ".join(o.diagnosed_as) or "none"
        diagnosed = "yes" if o.diagnosed_as == [o.mistake] else f"NO: {named}"
        lines.append(
            f"| {o.lesson} | `{o.mistake}` | {caught} | {diagnosed} "
            f"| {o.failing_checks} |"
        )
    return "\n".join(lines) + "\n"
