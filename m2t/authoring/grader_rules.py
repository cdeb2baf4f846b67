"""The lesson rules about the grader, its mistakes and their mutants
(`m2t.authoring.rules` lists every rule and says what a rule is), and what
every rule uses: where a lesson is named and its files found.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from m2t import ROOT
from m2t.authoring import scaffold
from m2t.curriculum import Lesson
from m2t.settings import tomllib

AUTHOR_TODO = "TODO(author)"
"""The marker `m2t dev new-lesson` leaves where the author writes."""

JUDGE_SIDE = ("ref_", "tape_", "keras_")
"""Top-level functions of a grader named so compute what a check expects:
each must be marked `@reference`."""

MISTAKES_MD = "run `m2t mutants --markdown docs/mistakes.md`"
TEMPLATES = "m2t/authoring/templates/lesson"


def where(lesson: Lesson) -> str:
    """How a problem names the lesson: "l16 (l16_attention_scoring)"."""
    return f"{lesson.tag} ({lesson.module})"


def shown(path: Path, root: Path) -> str:
    """`path` as a problem shows it: relative to the course folder."""
    return path.relative_to(root).as_posix()


def paths(lesson: Lesson, root: Path) -> dict[str, Path]:
    """The lesson's files in the course folder `root`, by role."""
    return scaffold.footprint(lesson, root)


def read(path: Path) -> str | None:
    """The text of `path`, or None where it is missing."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def has_author_todo(path: Path) -> bool:
    """Whether `path` still holds a `TODO(author)` marker."""
    return AUTHOR_TODO in (read(path) or "")


# ------------------------------------------------------------- the grader
def _grader_tree(lesson: Lesson, root: Path) -> ast.Module | None:
    text = read(paths(lesson, root)["grader"])
    return None if text is None else ast.parse(text)


def grader_imports(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """The grader reaches the student's code only through probes: it never
    imports `lessons` or `solutions`."""
    tree = _grader_tree(lesson, root)
    if tree is None:
        return []
    grader = shown(paths(lesson, root)["grader"], root)
    problems = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        for name in names:
            if name.split(".")[0] in ("lessons", "solutions"):
                problems.append(
                    f"{where(lesson)}: {grader}:{node.lineno} imports "
                    f"{name}: reach the student's code only through probes"
                )
    return problems


def _marked(node: ast.FunctionDef) -> bool:
    return any(
        ast.unparse(d) in ("reference", "fixtures.reference")
        for d in node.decorator_list
    )


def references_marked(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """Each top-level `ref_*`, `tape_*` and `keras_*` function of the
    grader is marked `@reference` (`graders/lib/fixtures.py`), so the
    grading worker and the student edition get only its stub."""
    tree = _grader_tree(lesson, root)
    if tree is None:
        return []
    grader = shown(paths(lesson, root)["grader"], root)
    return [
        f"{where(lesson)}: {grader}:{node.lineno} {node.name} is not "
        "marked: put `@reference` (from graders.lib.fixtures import "
        "reference) above it"
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and node.name.startswith(JUDGE_SIDE)
        and not _marked(node)
    ]


def _calls(tree: ast.Module) -> set[str]:
    """The last component of every name the module calls or refers to."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
    return found


def _solution_tree(lesson: Lesson, root: Path) -> ast.Module | None:
    text = read(paths(lesson, root)["solution"])
    return None if text is None else ast.parse(text)


def _layer_classes(tree: ast.Module) -> list[str]:
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        and any(
            ast.unparse(b).rsplit(".", 1)[-1] == "Layer" for b in node.bases
        )
    ]


def contract_check(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """A lesson whose solution defines a Keras layer has a `layer_contract`
    check (a capstone's layers are checked by its parts' graders)."""
    solution, grader = _solution_tree(lesson, root), _grader_tree(lesson, root)
    if solution is None or grader is None or lesson.parts:
        return []
    layers = _layer_classes(solution)
    if not layers or "layer_contract" in _calls(grader):
        return []
    path = shown(paths(lesson, root)["grader"], root)
    return [
        f"{where(lesson)}: {path} has no contract check for "
        f"{', '.join(layers)}: probe it with graders.lib.probes."
        "layer_contract and judge with contract.expect_layer_contract "
        "(CONTRIBUTING, Writing a lesson, 5)"
    ]


def gradient_check(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """A lesson whose solution makes weights (`add_weight`) has a float64
    gradient check (`contract.expect_gradient`)."""
    solution, grader = _solution_tree(lesson, root), _grader_tree(lesson, root)
    if solution is None or grader is None:
        return []
    if "add_weight" not in _calls(solution):
        return []
    if "expect_gradient" in _calls(grader):
        return []
    path = shown(paths(lesson, root)["grader"], root)
    return [
        f"{where(lesson)}: {path} has no gradient check, and the solution "
        "makes weights: probe probes.tape_gradient and compare it with "
        "contract.expect_gradient against the centred_differences of a "
        "@reference (CONTRIBUTING, Writing a lesson, 5)"
    ]


# ---------------------------------------------------- mistakes and mutants
def mistake_names(grader: ast.Module) -> list[str] | None:
    """The names of the grader's `MISTAKES`, read from its source (each a
    `Mistake("name", ...)`, directly or through a module-level name);
    None when the grader has no `MISTAKES`.

    Raises:
        ValueError: an entry that is neither, naming it.
    """
    assigned: dict[str, ast.expr] = {}
    for node in grader.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned[target.id] = node.value
    if "MISTAKES" not in assigned:
        return None
    names: list[str] = []

    def add(node: ast.expr) -> None:
        if isinstance(node, (ast.Tuple, ast.List)):
            for element in node.elts:
                add(element)
        elif isinstance(node, ast.Starred):
            add(node.value)
        elif isinstance(node, ast.Name) and node.id in assigned:
            add(assigned[node.id])
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.append(node.args[0].value)
        else:
            raise ValueError(
                f"MISTAKES: {ast.unparse(node)!r} is not a Mistake(...)"
            )

    add(assigned["MISTAKES"])
    return names


def _catalogue(path: Path) -> dict[str, list[tuple[str, str]]] | str:
    """Mistake name -> its replacements (`m2t.authoring.mutants`' format),
    or why the file cannot be read."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
        return {
            name: [(old, new) for old, new in entry["replace"]]
            for name, entry in data.items()
        }
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        return f"not a table of `replace = [[old, new], ...]`: {exc}"


def mistakes_catalogued(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """The grader's `MISTAKES` and the lesson's mutants name the same
    mistakes, at least one (once neither file has a `TODO(author)`)."""
    files = paths(lesson, root)
    tree = _grader_tree(lesson, root)
    if tree is None or not files["mutants"].exists():
        return []  # files_in_place says so
    grader, table = shown(files["grader"], root), shown(files["mutants"], root)
    at = where(lesson)
    try:
        caught = mistake_names(tree)
    except ValueError as exc:
        return [f"{at}: {grader}: {exc}"]
    made = _catalogue(files["mutants"])
    if isinstance(made, str):
        return [f"{at}: {table}: {made}"]
    problems = []
    if caught is None:
        problems.append(
            f"{at}: {grader} has no MISTAKES: list the known mistakes "
            "(graders.lib.judge.Mistake) in a module-level tuple"
        )
        caught = []
    elif not caught and not (
        has_author_todo(files["grader"]) or has_author_todo(files["mutants"])
    ):
        problems.append(
            f"{at}: {grader}: MISTAKES is empty: catalogue at least one "
            f"known mistake, with its mutant in {table} (CONTRIBUTING, "
            "Writing a lesson, 6)"
        )
    for name in caught:
        if name not in made:
            problems.append(
                f"{at}: mistake {name!r} has no mutant: add a [{name}] "
                f"table to {table}"
            )
    for name in made:
        if name not in caught:
            problems.append(
                f"{at}: mutant {name!r} of {table} is not a catalogued "
                f"Mistake: add it to MISTAKES in {grader}, or drop it"
            )
    return problems


def mistakes_in_both_languages(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """Each catalogued mistake has its Chinese in
    graders/messages/mistakes.zh.toml (its English is the Mistake's)."""
    tree = _grader_tree(lesson, root)
    try:
        names = (mistake_names(tree) if tree else None) or []
    except ValueError:
        return []  # mistakes_catalogued says so
    path = root / "graders" / "messages" / "mistakes.zh.toml"
    try:
        with open(path, "rb") as f:
            zh = tomllib.load(f).get(lesson.module, {})
    except FileNotFoundError:
        zh = {}
    missing = [n for n in names if not str(zh.get(n, "")).strip()]
    if not missing:
        return []
    return [
        f"{where(lesson)}: graders/messages/mistakes.zh.toml has no "
        f"[{lesson.module}] {', '.join(missing)}: write each mistake's "
        "explanation in Chinese there"
    ]


def mutants_apply(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """Each mutant's replacements occur exactly once in the solution (so
    `m2t mutants` can make it)."""
    files = paths(lesson, root)
    solution = read(files["solution"])
    made = _catalogue(files["mutants"])
    if solution is None or isinstance(made, str):
        return []  # files_in_place, mistakes_catalogued say so
    table = shown(files["mutants"], root)
    problems = []
    for name, edits in made.items():
        for old, _ in edits:
            count = solution.count(old)
            if count != 1:
                problems.append(
                    f"{where(lesson)}: mutant {name!r} of {table}: its "
                    f"text {old[:40]!r} occurs {count} times in "
                    f"{shown(files['solution'], root)}, not once: edit the "
                    "mutant to the solution as it is"
                )
    return problems


def _mistakes_md_rows(root: Path) -> list[list[str]]:
    text = read(root / "docs" / "mistakes.md") or ""
    return [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if re.match(r"\| l\d\d \| `", line)
    ]


def mistakes_documented(lesson: Lesson, root: Path = ROOT) -> list[str]:
    """docs/mistakes.md has a row for each mutant of the lesson, caught and
    diagnosed as itself, and none for a mutant that is gone."""
    made = _catalogue(paths(lesson, root)["mutants"])
    if isinstance(made, str):
        return []
    rows = {
        row[1].strip("`"): row
        for row in _mistakes_md_rows(root)
        if row[0] == lesson.tag
    }
    fix = (
        f"run `m2t mutants {lesson.id}` (each caught, diagnosed as itself), "
        f"then {MISTAKES_MD.removeprefix('run ')}"
    )
    problems = []
    for name in made:
        row = rows.get(name)
        if row is None:
            problems.append(
                f"{where(lesson)}: docs/mistakes.md has no row for "
                f"mutant {name!r}: {fix}"
            )
        elif row[2:4] != ["yes", "yes"]:
            problems.append(
                f"{where(lesson)}: docs/mistakes.md: mutant {name!r} is "
                f"not caught and diagnosed as itself: {fix}"
            )
    for name in rows:
        if name not in made:
            problems.append(
                f"{where(lesson)}: docs/mistakes.md lists {name!r}, which "
                f"is no mutant of the lesson: {fix}"
            )
    return problems
