"""Right answers written another way are accepted.

Each variant is the solution with one region rewritten correctly but
differently from the reference (a built-in where the solution spells the
idea out, say), graded in full: every check must pass. They pin the
graders' spots that were once over-strict; the mutants
(solutions/mutants/) prove the same checks still fail the wrong answers
next to them (l01's `naive_softmax_ce` beside the built-in logsumexp).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t.authoring.mutants import mutate

VARIANTS: dict[str, tuple[str, list[tuple[str, str]]]] = {
    # float32 rounds logsumexp near 1e4 to ~1e-3: 3.8e-4 off in a loss of
    # 0.18, which the stability check's 1e-5 once refused.
    "l01_builtin_logsumexp": (
        "l01",
        [
            (
                "log_norm = ops.log(ops.sum(ops.exp(shifted), axis=-1, "
                "keepdims=True))\n    log_probs = shifted - log_norm",
                "log_probs = logits - ops.logsumexp(logits, axis=-1, "
                "keepdims=True)",
            )
        ],
    ),
    # d2l-PyTorch's head: AdaptiveAvgPool2d((1, 1)) then Flatten; the same
    # logits, once refused by the layer table ("30 rows, expected 29").
    "l02_nin_pool_keepdims_then_flatten": (
        "l02",
        [
            (
                "            layers.GlobalAveragePooling2D(),\n        ]",
                "            layers.GlobalAveragePooling2D(keepdims=True),\n"
                "            layers.Flatten(),\n        ]",
            )
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_passes_every_check(name):
    from m2t.grading import runner

    tag, replacements = VARIANTS[name]
    (lesson,) = [x for x in curriculum.lessons() if x.tag == tag]
    solution = ROOT / "solutions" / f"{lesson.module}.py"
    text = mutate(solution.read_text(encoding="utf-8"), replacements, name)
    folder = Path(tempfile.mkdtemp(prefix=f"m2t-variant-{name}-"))
    try:
        (folder / solution.name).write_text(text, encoding="utf-8")
        (result,) = runner.grade([lesson], impl=str(folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    failing = [
        f"{c.name}: {c.message}" for c in result.checks if c.status != "passed"
    ]
    assert result.checks and not failing, "\n".join(failing)
