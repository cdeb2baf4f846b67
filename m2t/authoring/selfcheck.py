"""The course checks itself (rustlings' `dev check`, stronger), in two
parts. First the rules of `m2t.authoring.rules`, the ones the test suite
calls too (nothing is graded; `m2t dev check --rules-only` stops there):

* lessons/ is what the generator makes from solutions/, docs/specs.md is
  what `make-lessons --markdown` writes;
* every lesson's files are there and agree: curriculum, solution, grader,
  hints, notes and mutants; references marked, hints and notes in both
  languages, the minimums (a catalogued mistake with its mutant, a contract
  check, a gradient check), no `TODO(author)` left.

Then the grades:
* every check passes on solutions/, in this process and once more in the
  sandbox, as `m2t grade --submission` grades a student's files (a
  solution that writes beside itself or reads the repository passes only
  the first);
* every check of every exercise fails as *not started* on the untouched
  lessons/ (a check that passes there tests given code, or a solution leaked).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path

from m2t import ROOT
from m2t import curriculum
from m2t import i18n
from m2t import settings
from m2t.authoring import rules
from m2t.grading.runner import LessonResult


def structure(lessons: Sequence[curriculum.Lesson]) -> list[str]:
    """The rules (`m2t.authoring.rules`), before any grading: what no one
    lesson owns (lessons/ as `make-lessons` writes it, docs/specs.md's
    other rows), then every rule of each of `lessons` that has a solution
    (its files in place and fresh, references marked, hints and notes in
    both languages, mistakes catalogued with mutants, a contract and a
    gradient check where it has layers and weights, no `TODO(author)`
    left). Each problem names the file and what to run or write."""
    problems = rules.course()
    for lesson in rules.lessons_ruled(lessons):
        problems += rules.check(lesson)
    return problems


def _untouched(on_skeletons: Sequence[LessonResult]) -> list[str]:
    """A problem for each check of the untouched lessons' grade that is
    not 'not started'."""
    return [
        f"{check.lesson} {check.name}: {check.status} on the untouched "
        "lessons (every check must fail as not started: does it test given "
        "code, or did a solution leak into the skeleton?)"
        for result in on_skeletons
        for check in result.checks
        if check.status != "not_started"
    ]


def _not_passing(results: Sequence[LessonResult], where: str) -> list[str]:
    """A problem for each check of `results` that did not pass, and for a
    grader without checks."""
    problems = []
    for result in results:
        if not result.lesson.grader.exists():
            continue
        if not result.checks:
            problems.append(f"{result.lesson.tag}: the grader has no checks")
        for check in result.checks:
            if check.status != "passed":
                first = check.message.splitlines()[0] if check.message else ""
                problems.append(
                    f"{check.lesson} {check.name}: {check.status} {where}: "
                    f"{first}"
                )
    return problems


def sandboxed(
    lessons: Sequence[curriculum.Lesson],
    solutions: Path | None = None,
    say: Callable[[str], None] | None = None,
) -> list[str]:
    """Grade the solutions of `lessons` once in the sandbox, staged and
    confined as `m2t grade --submission` grades a student's files (where
    this machine lacks a layer, in the layers it has; `say` is told which).

    Args:
        lessons: the lessons (each with a solution).
        solutions: the folder staged (solutions/ by default).
        say: called with the sandbox's layers, then the lessons graded and
            the seconds it took.

    Returns:
        A problem for each check that does not pass there, and for each
        solution file the staging refused.
    """
    from m2t.grading import runner as grading
    from m2t.grading import submission

    if not lessons:
        return []
    say = say or (lambda line: None)
    folder = Path(solutions or ROOT / "solutions")
    start = time.perf_counter()
    # the notes in English: the refusals are read back from them
    with i18n.using("en"), submission.staged(folder, lessons) as (impl, notes):
        for note in notes:
            say(note)
        problems = [
            f"sandbox: solutions/{note.removeprefix('not graded: ')}"
            for note in notes
            if note.startswith("not graded: ")
        ]
        results = grading.grade(
            lessons,
            impl=impl,
            timeout=settings.CHECK_TIMEOUT,
            sandbox=True,
            lesson_timeout=settings.LESSON_TIMEOUT,
            allow_weaker_sandbox=True,
        )
    seconds = time.perf_counter() - start
    checks = sum(len(r.checks) for r in results)
    say(
        f"sandbox: the solutions of {len(lessons)} lesson(s), {checks} "
        f"checks, graded in {seconds:.1f} s"
    )
    return problems + _not_passing(results, "on solutions/ in the sandbox")


def run(
    lessons: Sequence[curriculum.Lesson],
    skeletons: Path | None = None,
    say: Callable[[str], None] | None = None,
    rules_only: bool = False,
) -> list[str]:
    """All checks: the rules (`structure`), then the grades; `skeletons`
    is the folder graded as the untouched lessons; `say` hears how the
    sandboxed grade was confined and how long it took. `rules_only`: the
    rules alone, nothing graded."""
    problems = structure(lessons)
    if rules_only:
        return problems
    from m2t.grading import runner as grading

    if any(lesson.is_question_list for lesson in lessons):
        from m2t import questions

        try:
            problems += [f"stale: {p}" for p in questions.stale()]
        except Exception as exc:  # a broken bank: say so, do not crash
            problems.append(f"questions: the bank does not load: {exc}")
        problems += questions.problems(experiments=questions.EXPERIMENTS)
    with_solution = [lesson for lesson in lessons if lesson.reference.exists()]
    # The solutions are graded once, in the sandbox, as a student's
    # submission is: a capstone trains once per check. (The local,
    # unconfined path is graded on every mutant by `m2t mutants` and on
    # the solutions by the student edition's tests.)
    in_sandbox = sandboxed(with_solution, say=say)
    on_skeletons = grading.grade(
        with_solution, impl=str(skeletons or ROOT / "lessons")
    )
    return problems + in_sandbox + _untouched(on_skeletons)
