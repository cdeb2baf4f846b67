"""Mutation testing of the graders: cosmic-ray's mutation operators applied
to the solution regions (between `# BEGIN SOLUTION` and `# END SOLUTION`) of
`solutions/lNN_*.py`, each mutant graded by the lesson's grader.

Unlike the catalogue (`m2t.authoring.mutants`: mistakes learners make, each
named), these mutants are mechanical (`<` for `<=`, `+ 1` for `+ 0`, ...):
a grader that lets one pass has a blind spot, unless the mutant computes
the same thing (it is *equivalent*; the reason is recorded, reviewed, in
`solutions/mutants/equivalent.toml`). `m2t dev mutation [LESSON ...]`
writes the figures to `docs/mutation.md`; it is slow and need not run in CI.

Each mutant is cheap: one process per run, the grader's modules stay
imported (only the mutated lesson file is re-executed), and the grading
stops at the first failing check.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from pathlib import Path

from m2t import ROOT
from m2t import curriculum
from m2t.settings import tomllib

EQUIVALENT = ROOT / "solutions" / "mutants" / "equivalent.toml"
MARKDOWN = ROOT / "docs" / "mutation.md"
MUTANT_TIMEOUT = 30.0  # seconds per check: a mutant that loops forever

OPERATORS = (
    # one replacement per arithmetic operator, the boundary of each
    # comparison, and cosmic-ray's operators that need no arguments and
    # change what is computed (not which exception is caught)
    "core/ReplaceBinaryOperator_Add_Sub",
    "core/ReplaceBinaryOperator_Sub_Add",
    "core/ReplaceBinaryOperator_Mul_Div",
    "core/ReplaceBinaryOperator_Div_Mul",
    "core/ReplaceBinaryOperator_FloorDiv_Mul",
    "core/ReplaceBinaryOperator_Mod_FloorDiv",
    "core/ReplaceBinaryOperator_Pow_Mul",
    "core/ReplaceComparisonOperator_Lt_LtE",
    "core/ReplaceComparisonOperator_LtE_Lt",
    "core/ReplaceComparisonOperator_Gt_GtE",
    "core/ReplaceComparisonOperator_GtE_Gt",
    "core/ReplaceComparisonOperator_Eq_NotEq",
    "core/ReplaceComparisonOperator_NotEq_Eq",
    "core/ReplaceComparisonOperator_Is_IsNot",
    "core/ReplaceComparisonOperator_IsNot_Is",
    "core/ReplaceUnaryOperator_USub_UAdd",
    "core/ReplaceUnaryOperator_Delete_Not",
    "core/ReplaceTrueWithFalse",
    "core/ReplaceFalseWithTrue",
    "core/ReplaceAndWithOr",
    "core/ReplaceOrWithAnd",
    "core/ReplaceBreakWithContinue",
    "core/ReplaceContinueWithBreak",
    "core/NumberReplacer",
    "core/ZeroIterationForLoop",
)

BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One mutation of a solution file.

    Attributes:
        operator: cosmic-ray's operator name.
        line: the 1-based line of the solution it changes.
        before: that line, stripped.
        after: the line as the mutant has it, stripped.
        source: the whole mutated file.
        follows: the nonblank line above `before`, stripped (tells two
            mutants of equal lines apart, e.g. two `break`s).
    """

    operator: str
    line: int
    before: str
    after: str
    source: str = dataclasses.field(repr=False, compare=False)
    follows: str = ""

    @property
    def key(self) -> tuple[str, str]:
        """What `equivalent.toml` names a mutant by (stable while the line
        is unchanged, wherever it moves)."""
        return (self.before, self.after)


Reasons = dict[tuple[str, str, str], str]
"""(before, after, follows or "") -> why that mutant is equivalent."""


def reason_for(mutant: Mutant, reasons: Reasons) -> str | None:
    """The recorded reason `mutant` is equivalent, if any: an entry with
    `follows` names only the mutant below that line, one without names
    every mutant of its (before, after)."""
    exact = reasons.get((*mutant.key, mutant.follows))
    return (exact if mutant.follows else None) or reasons.get((*mutant.key, ""))


@dataclasses.dataclass
class Result:
    lesson: str
    mutants: int = 0
    killed: int = 0
    equivalent: list[tuple[Mutant, str]] = dataclasses.field(
        default_factory=list
    )
    survivors: list[Mutant] = dataclasses.field(default_factory=list)
    seconds: float = 0.0

    @property
    def score(self) -> float:
        """Killed or equivalent, as a fraction of the mutants."""
        if not self.mutants:
            return 1.0
        return (self.killed + len(self.equivalent)) / self.mutants


def regions(source: str) -> list[tuple[int, int]]:
    """The 1-based line ranges [first, last] between each `# BEGIN
    SOLUTION` and its `# END SOLUTION` (markers excluded).

    Raises:
        ValueError: a marker without its pair.
    """
    found, start = [], None
    for number, line in enumerate(source.splitlines(), 1):
        text = line.strip()
        if text == BEGIN:
            if start is not None:
                raise ValueError(f"line {number}: {BEGIN} inside a region")
            start = number + 1
        elif text == END:
            if start is None:
                raise ValueError(f"line {number}: {END} without {BEGIN}")
            found.append((start, number - 1))
            start = None
    if start is not None:
        raise ValueError(f"line {start - 1}: {BEGIN} never ended")
    return found


def _changed_line(original: str, mutated: str) -> tuple[int, str, str]:
    """The first line `mutated` changes: (its number, before, after)."""
    old, new = original.splitlines(), mutated.splitlines()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, _, j1, _ in matcher.get_opcodes():
        if tag != "equal":
            before = old[i1].strip() if i1 < len(old) else ""
            after = new[j1].strip() if j1 < len(new) else ""
            return i1 + 1, before, after
    return 0, "", ""


def mutants(source: str, operators: Sequence[str] = OPERATORS) -> list[Mutant]:
    """Every mutant of `source`'s solution regions by `operators`, one
    per distinct mutated text (cosmic-ray finds the places, on parso's
    syntax tree, and makes each change)."""
    import cosmic_ray.plugins
    from cosmic_ray.ast import ast_nodes
    from cosmic_ray.ast import get_ast
    from cosmic_ray.mutating import mutate_code

    inside = regions(source)
    lines = source.splitlines()
    tree = get_ast(source)
    seen, found = set(), []
    for name in operators:
        operator = cosmic_ray.plugins.get_operator(name)()
        positions = [
            start
            for node in ast_nodes(tree)
            for start, _ in operator.mutation_positions(node)
        ]
        for occurrence, (line, _) in enumerate(positions):
            if not any(a <= line <= b for a, b in inside):
                continue
            text = mutate_code(source, operator, occurrence)
            if text is None or text == source or text in seen:
                continue
            seen.add(text)
            number, before, after = _changed_line(source, text)
            above = [x.strip() for x in lines[: number - 1] if x.strip()]
            follows = above[-1] if above else ""
            found.append(Mutant(name, number, before, after, text, follows))
    return found


def equivalents(path: Path = EQUIVALENT) -> dict[str, Reasons]:
    """Lesson module -> its `Reasons`, from `path`:

    [[l16_attention_scoring]]
    before = "..."   # the solution's line, stripped
    after = "..."    # the mutant's
    follows = "..."  # optional: the nonblank line above, stripped
    reason = "why the mutant computes the same thing"
    """
    if not path.exists():
        return {}
    with open(path, "rb") as f:
        data = tomllib.load(f)
    table: dict[str, Reasons] = {}
    for module, entries in data.items():
        for entry in entries:
            reason = entry.get("reason", "").strip()
            if not reason:
                raise ValueError(
                    f"{path.name} [{module}] {entry.get('before')!r}: every "
                    "equivalent mutant needs its reason"
                )
            key = (entry["before"], entry["after"], entry.get("follows", ""))
            table.setdefault(module, {})[key] = reason
    return table


class _StopAtFirstFailure:
    """A pytest plugin: end the run at the first check that does not pass
    (a mutant is killed by one)."""

    def pytest_runtest_logreport(self, report) -> None:
        if report.failed:
            self.session.shouldstop = "a check failed: the mutant is killed"

    def pytest_sessionstart(self, session) -> None:
        self.session = session


def killed(
    lesson: curriculum.Lesson,
    source: str,
    timeout: float = MUTANT_TIMEOUT,
) -> bool:
    """Whether grading `source` as `lesson`'s file fails a check (in this
    process; the grading stops at the first failure)."""
    from m2t.grading import runner as grading

    folder = Path(tempfile.mkdtemp(prefix="m2t-mutation-"))
    try:
        (folder / f"{lesson.module}.py").write_text(source, encoding="utf-8")
        for part in lesson.parts:  # a capstone's, as solved
            shutil.copy(ROOT / "solutions" / f"{part}.py", folder)
        (result,) = grading.grade(
            [lesson],
            impl=str(folder),
            timeout=timeout,
            plugins=[_StopAtFirstFailure()],
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return any(c.status != "passed" for c in result.checks)


def run(
    lessons: Iterable[curriculum.Lesson],
    operators: Sequence[str] = OPERATORS,
    on_mutant: Callable[[curriculum.Lesson, Mutant, str], None] | None = None,
    timeout: float = MUTANT_TIMEOUT,
) -> list[Result]:
    """Mutate and grade every lesson of `lessons`; `on_mutant(lesson,
    mutant, outcome)` is told each outcome ("killed", "equivalent",
    "survived")."""
    known = equivalents()
    results = []
    for lesson in lessons:
        path = ROOT / "solutions" / f"{lesson.module}.py"
        result = Result(lesson.tag)
        start = time.monotonic()
        reasons = known.get(lesson.module, {})
        source = path.read_text(encoding="utf-8")
        if killed(lesson, source, timeout):  # else every mutant is "killed"
            raise RuntimeError(
                f"{lesson.tag}: the solution itself fails its grader (m2t "
                f"grade {lesson.tag} --impl solutions); mend that first"
            )
        for mutant in mutants(source, operators):
            result.mutants += 1
            if killed(lesson, mutant.source, timeout):
                result.killed += 1
                outcome = "killed"
            elif reason_for(mutant, reasons):
                result.equivalent.append((mutant, reason_for(mutant, reasons)))
                outcome = "equivalent"
            else:
                result.survivors.append(mutant)
                outcome = "survived"
            if on_mutant:
                on_mutant(lesson, mutant, outcome)
        result.seconds = time.monotonic() - start
        results.append(result)
    return results


HEADER = """# Mutation testing of the graders

`m2t dev mutation [LESSON ...]` applies cosmic-ray's mutation operators
(`m2t/authoring/mutation.py`: `OPERATORS`) to the solution regions of
`solutions/lNN_*.py` and grades each mutant with the lesson's grader.
*Killed*: a check fails. *Equivalent*: the mutant computes the same thing;
the reason is in `solutions/mutants/equivalent.toml`. *Survivors*: neither,
a blind spot of the grader. Score: killed and equivalent, of all mutants.
A run rewrites the sections of the lessons it ran and keeps the others.
"""


def _code(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def section(result: Result) -> str:
    """One lesson's section of docs/mutation.md."""
    lines = [
        f"## {result.lesson}",
        "",
        f"{result.mutants} mutants: {result.killed} killed, "
        f"{len(result.equivalent)} equivalent, {len(result.survivors)} "
        f"survivors; score {100 * result.score:.1f}% "
        f"({result.seconds:.0f} s).",
    ]
    if result.survivors:
        lines += ["", "Survivors:", ""]
        for m in result.survivors:
            lines.append(
                f"- line {m.line}: {_code(m.before)} -> {_code(m.after)} "
                f"({m.operator.split('/')[-1]})"
            )
    if result.equivalent:
        lines += ["", "Equivalent:", ""]
        for m, reason in result.equivalent:
            lines.append(
                f"- line {m.line}: {_code(m.before)} -> {_code(m.after)}: "
                f"{reason}"
            )
    return "\n".join(lines) + "\n"


_SECTION = re.compile(r"^## (l\d\d)\s*$", re.MULTILINE)


def _sections(text: str) -> dict[str, str]:
    starts = list(_SECTION.finditer(text))
    ends = [m.start() for m in starts[1:]] + [len(text)] * bool(starts)
    return {
        m.group(1): text[m.start() : end]
        for m, end in zip(starts, ends, strict=True)
    }


def _summary(sections: dict[str, str]) -> str:
    rows = [
        "| lesson | mutants | killed | equivalent | survivors | score |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    figures = re.compile(
        r"(\d+) mutants: (\d+) killed, (\d+) equivalent, (\d+) survivors; "
        r"score ([\d.]+)%"
    )
    for tag in sorted(sections):
        m = figures.search(sections[tag])
        if m:
            rows.append(f"| {tag} | " + " | ".join(m.groups()) + "% |")
    missing = [
        x.tag
        for x in curriculum.lessons()
        if x.tag not in sections
        and (ROOT / "solutions" / f"{x.module}.py").exists()
    ]
    note = f"\nNot run yet: {', '.join(missing)}.\n" if missing else "\n"
    return "\n".join(rows) + "\n" + note


def markdown(results: Sequence[Result], previous: str = "") -> str:
    """docs/mutation.md: `previous`'s sections, those of `results`
    replaced, under a summary table of every lesson run."""
    sections = _sections(previous)
    for result in results:
        sections[result.lesson] = section(result)
    body = "\n".join(sections[tag].rstrip() + "\n" for tag in sorted(sections))
    return f"{HEADER}\n{_summary(sections)}\n{body}"


_FIGURES = re.compile(
    r"(\d+) mutants: (\d+) killed, \d+ equivalent, \d+ survivors; "
    r"score [\d.]+% \((\d+) s\)"
)
_LISTED = re.compile(r"^- line (\d+): `(.*?)` -> `(.*?)`(?:: (.*)| \((\w+)\))$")


def _listed(block: str) -> list[tuple[Mutant, str]]:
    """The mutants of a Survivors: or Equivalent: list, with the reason
    (equivalent) or "" (survivor)."""
    found = []
    for line in block.splitlines():
        m = _LISTED.match(line.strip())
        if m:
            number, before, after, reason, operator = m.groups()
            mutant = Mutant(operator or "", int(number), before, after, "")
            found.append((mutant, reason or ""))
    return found


def reclassify(text: str, regrade: bool = False) -> str:
    """docs/mutation.md with every listed survivor that equivalent.toml now
    names moved to the equivalents, with its reason. With `regrade`, each
    listed survivor is first graded again (a check added since may kill
    it); the killed stay killed either way."""
    known = equivalents()
    lessons = {x.tag: x for x in curriculum.lessons()}
    results = []
    for tag, body in _sections(text).items():
        figures = _FIGURES.search(body)
        if not figures or tag not in lessons:
            continue
        lesson = lessons[tag]
        total, killed_before, seconds = map(int, figures.groups())
        reasons = known.get(lesson.module, {})
        result = Result(tag, total, killed_before, seconds=float(seconds))
        survivors, _, equivalent = body.partition("Equivalent:")
        for mutant, reason in _listed(equivalent):
            known_reason = reason_for(mutant, reasons) or reason
            result.equivalent.append((mutant, known_reason))
        current = []  # the solution's mutants now (their `follows`)
        if _listed(survivors):
            path = ROOT / "solutions" / f"{lesson.module}.py"
            current = mutants(path.read_text(encoding="utf-8"))
        for mutant, _ in _listed(survivors):
            same = [m for m in current if m.key == mutant.key]
            same.sort(key=lambda m: abs(m.line - mutant.line))
            if regrade and same and killed(lesson, same[0].source):
                result.killed += 1
                continue
            mutant = same[0] if same else mutant
            if reason_for(mutant, reasons):
                result.equivalent.append((mutant, reason_for(mutant, reasons)))
            else:
                result.survivors.append(mutant)
        results.append(result)
    return markdown(results, text)


def command(lessons: Sequence[str], out: Path | None = MARKDOWN) -> int:
    """`m2t dev mutation`: run `lessons` (numbers or tags; all when
    empty), print each outcome and the figures, update `out`. Exit 1 while
    a survivor is left."""
    from m2t.console import quiet_native_stderr

    def say(lesson, mutant: Mutant, outcome: str) -> None:
        print(
            f"{lesson.tag} {outcome:10} line {mutant.line}: {mutant.before} "
            f"-> {mutant.after}",
            flush=True,
        )

    results, failed = [], []
    for lesson in curriculum.select(list(lessons)):
        try:
            with quiet_native_stderr(True):
                (r,) = run([lesson], on_mutant=say)
        except RuntimeError as e:  # its grader does not pass as it is
            print(f"{lesson.tag}: not run: {e}", flush=True)
            failed.append(lesson.tag)
            continue
        results.append(r)
        print(
            f"{r.lesson}: {r.mutants} mutants, {r.killed} killed, "
            f"{len(r.equivalent)} equivalent, {len(r.survivors)} survivors "
            f"({100 * r.score:.1f}%)",
            flush=True,
        )
        if out is not None:  # after each lesson: a long run keeps its part
            previous = out.read_text(encoding="utf-8") if out.exists() else ""
            out.write_text(markdown([r], previous), encoding="utf-8")
    if out is not None:
        print(f"wrote {out}")
    return 0 if not failed and all(not r.survivors for r in results) else 1
