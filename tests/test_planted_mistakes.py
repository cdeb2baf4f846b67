"""Mistakes written here, not taken from the catalogue
(solutions/mutants/), each the way a student could plausibly make it from
the book or the TODO, graded in full: each must fail the check named
beside it, a check that runs on small inputs.

They pin the edge cases in the graders' inputs (docs/edge-cases.md lists
them per lesson): a corpus with stray lines and a third column, a caller's
list that must be left alone."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t.authoring.mutants import mutate

TOKENIZE = """    for line in text.split("\\n"):
        if num_examples is not None and len(source) >= num_examples:
            break
        parts = line.split("\\t")
        if len(parts) >= 2:
            source.append(parts[0].split(" "))
            target.append(parts[1].split(" "))"""

PLANTED: dict[str, tuple[str, list[tuple[str, str]], str]] = {
    # d2l's loop: counts lines, tab-less ones included, against the limit
    "l13_counts_lines_not_pairs": (
        "l13",
        [
            (
                TOKENIZE,
                """    for i, line in enumerate(text.split("\\n")):
        if num_examples is not None and i >= num_examples:
            break
        parts = line.split("\\t")
        if len(parts) >= 2:
            source.append(parts[0].split(" "))
            target.append(parts[1].split(" "))""",
            )
        ],
        "test_tokenize_nmt[2]",
    ),
    # the attribution column kept in the target
    "l13_keeps_the_third_column": (
        "l13",
        [
            (
                TOKENIZE,
                """    for line in text.split("\\n"):
        if num_examples is not None and len(source) >= num_examples:
            break
        if "\\t" in line:
            src, tgt = line.split("\\t", 1)
            source.append(src.split(" "))
            target.append(tgt.split(" "))""",
            )
        ],
        "test_tokenize_nmt[None]",
    ),
    # pads the caller's list in place (the given copy removed)
    "l13_pads_in_place": (
        "l13",
        [
            ("    line = list(line)\n", ""),
            (
                "    return line + [padding_token] * (num_steps - len(line))",
                "    line += [padding_token] * (num_steps - len(line))\n"
                "    return line",
            ),
        ],
        "test_truncate_pad_leaves_the_callers_line_alone[pad]",
    ),
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_planted_mistake_fails_its_check(name):
    from m2t.grading import runner

    tag, replacements, check = PLANTED[name]
    (lesson,) = [x for x in curriculum.lessons() if x.tag == tag]
    solution = ROOT / "solutions" / f"{lesson.module}.py"
    text = mutate(solution.read_text(encoding="utf-8"), replacements, name)
    folder = Path(tempfile.mkdtemp(prefix=f"m2t-planted-{name}-"))
    try:
        (folder / solution.name).write_text(text, encoding="utf-8")
        (result,) = runner.grade([lesson], impl=str(folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    failed = {c.name for c in result.checks if c.status == "failed"}
    assert check in failed, sorted(failed)
