"""The course checks itself (rustlings' `dev check`, stronger):

* lessons/ is what the generator makes from solutions/;
* curriculum, solution, lesson, grader, hints and mutants agree;
* every check passes on solutions/, in this process and once more in the
  sandbox, as `m2t grade --submission` grades a student's files (a
  solution that writes beside itself or reads the repository passes only
  the first);
* every check of every exercise fails as *not started* on the untouched
  lessons/ (a check that passes there tests given code, or a solution leaked).
"""

from __future__ import annotations

import ast
import time
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path

from m2t import ROOT
from m2t import curriculum
from m2t import i18n
from m2t import settings
from m2t.authoring import make_lessons
from m2t.authoring import mutants
from m2t.authoring import scaffold
from m2t.grading.runner import LessonResult
from m2t.student import hints


def structure(lessons: Sequence[curriculum.Lesson]) -> list[str]:
    """Problems with the files of `lessons` (those that have a solution):
    a file of the lesson's footprint missing (named), notes without both
    languages, a hints file without ladders, a curriculum object the
    solution does not define, a grader importing lessons or solutions."""
    problems = []
    for lesson in lessons:
        if lesson.is_question_list or not lesson.reference.exists():
            continue
        where = f"{lesson.tag} ({lesson.module})"
        files = scaffold.footprint(lesson)
        for role, path in files.items():
            if not path.exists():
                shown = path.relative_to(ROOT).as_posix()
                problems.append(f"{where}: no {role} file {shown}")
        if files["notes"].exists():
            text = files["notes"].read_text(encoding="utf-8")
            for heading in scaffold.NOTES_SECTIONS:
                if heading not in text.splitlines():
                    problems.append(f"{where}: the notes have no {heading!r}")
        if files["hints"].exists():
            try:
                if not hints.ladder(lesson.module):
                    problems.append(f"{where}: the hints file has no [[todo]]")
            except ValueError as exc:
                problems.append(f"{where}: {exc}")
        defined = _top_level_names(lesson.reference)
        for name in lesson.objects:
            if name not in defined:
                problems.append(
                    f"{where}: curriculum.toml lists {name!r}, which "
                    f"solutions/{lesson.filename} does not define"
                )
        if files["grader"].exists():
            problems += _grader_imports(lesson, where)
    return problems


def _top_level_names(path: Path) -> set[str]:
    """The functions, classes and variables a module defines at its top."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(
            node.target, ast.Name
        ):
            names.add(node.target.id)
    return names


def _grader_imports(lesson: curriculum.Lesson, where: str) -> list[str]:
    problems = []
    tree = ast.parse(lesson.grader.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        for name in names:
            if name.split(".")[0] in ("lessons", "solutions"):
                problems.append(
                    f"{where}: the grader imports {name}; reach the "
                    "student's code only through probes"
                )
    return problems


def catalogued(results: Sequence[LessonResult]) -> list[str]:
    """Problems between each grader's `MISTAKES` (as pytest collected them
    in `results`) and the lesson's mutants: one without the other."""
    problems = []
    for result in results:
        lesson = result.lesson
        if not lesson.grader.exists():
            continue
        where = f"{lesson.tag} ({lesson.module})"
        caught = set(result.mistakes)
        made = set(mutants.catalogue(lesson.module))
        for name in sorted(caught - made):
            problems.append(f"{where}: mistake {name!r} has no mutant")
        for name in sorted(made - caught):
            problems.append(
                f"{where}: mutant {name!r} is not a catalogued Mistake"
            )
    return problems


def verify(
    on_solutions: Sequence[LessonResult], on_skeletons: Sequence[LessonResult]
) -> list[str]:
    """Problems in the two grades: a solution check that does not pass, a
    skeleton check that is not 'not started'."""
    problems = _not_passing(on_solutions, "on solutions/")
    for result in on_skeletons:
        for check in result.checks:
            if check.status != "not_started":
                problems.append(
                    f"{check.lesson} {check.name}: {check.status} on the "
                    "untouched lessons (every check must fail as not "
                    "started: does it test given code, or did a solution "
                    "leak into the skeleton?)"
                )
    return problems


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
) -> list[str]:
    """All checks; `skeletons` is the folder graded as the untouched
    lessons; `say` hears how the sandboxed grade was confined and how long
    it took."""
    from m2t.grading import runner as grading

    problems = [f"stale: {p}" for p in make_lessons.stale()]
    problems += structure(lessons)
    if any(lesson.is_question_list for lesson in lessons):
        from m2t import questions

        try:
            problems += [f"stale: {p}" for p in questions.stale()]
        except Exception as exc:  # a broken bank: say so, do not crash
            problems.append(f"questions: the bank does not load: {exc}")
        problems += questions.problems(experiments=questions.EXPERIMENTS)
    with_solution = [lesson for lesson in lessons if lesson.reference.exists()]
    on_solutions = grading.grade(with_solution, impl="solutions")
    on_skeletons = grading.grade(
        with_solution, impl=str(skeletons or ROOT / "lessons")
    )
    problems += catalogued(on_solutions)
    problems += verify(on_solutions, on_skeletons)
    return problems + sandboxed(with_solution, say=say)
