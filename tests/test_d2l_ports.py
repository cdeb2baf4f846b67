"""d2l's own code, ported to the course's API without changing its math,
graded by the real runner: where the book and the course differ, the
message says how, by name.

Each port is the solution with one piece rewritten as d2l writes it, in a
scratch folder, graded in a fresh process by `m2t.grading.runner.grade`
with only the named checks selected. README's convention list is compared
with graders/lib/conventions.py line for line.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from graders.lib.conventions import CONVENTIONS
from m2t import ROOT
from m2t.authoring.mutants import mutate

GRADE = """
import json, sys
from m2t import curriculum
from m2t.grading import runner

lesson, folder, *names = sys.argv[1:]

class Only:
    def pytest_collection_modifyitems(self, config, items):
        keep = [i for i in items if any(n in i.name for n in names)]
        config.hook.pytest_deselected(
            items=[i for i in items if i not in keep]
        )
        items[:] = keep

(result,) = runner.grade(
    [curriculum.find(lesson)], impl=folder, plugins=[Only()]
)
print(json.dumps({c.name: [c.status, c.message] for c in result.checks}))
"""


def grade_port(
    module: str,
    tmp_path: Path,
    checks: list[str],
    replace: list[tuple[str, str]] = (),
    append: str = "",
) -> dict[str, tuple[str, str]]:
    """Grade the solution of `module` with `replace` made and `append`
    added at its end; {check name: (status, message)} of the checks whose
    names contain one of `checks`."""
    solution = ROOT / "solutions" / f"{module}.py"
    text = mutate(solution.read_text(), list(replace), f"d2l port {module}")
    (tmp_path / solution.name).write_text(text + textwrap.dedent(append))
    done = subprocess.run(
        [sys.executable, "-c", GRADE, module, str(tmp_path), *checks],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert results, f"no check of {module} matched {checks}"
    return results


def failures(results: dict) -> dict[str, str]:
    return {n: m for n, (s, m) in results.items() if s != "passed"}


# ---------------------------------------------------------- conventions
def readme_conventions() -> list[tuple[str, str]]:
    """(head, text) of each bullet of README's "Conventions the graders
    fix", continuation lines joined."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Conventions the graders fix", 1)[1]
    section = section.split("\n## ", 1)[0]
    bullets = re.split(r"\n- ", "\n" + section.strip())[1:]
    return [
        tuple(part.strip() for part in " ".join(b.split()).split(":", 1))
        for b in bullets
    ]


def test_readme_conventions_match_the_graders_constants():
    bullets = readme_conventions()
    assert [head for head, _ in bullets] == list(CONVENTIONS), (
        "README's conventions and graders/lib/conventions.py's CONVENTIONS "
        "list different bullets"
    )
    for head, text in bullets:
        want = CONVENTIONS[head]
        for figure in want["figures"]:
            assert figure in text, f"README's {head!r} lacks {figure!r}"
        # the lessons that enforce it: the bullet's last "(lNN, lNN)"
        groups = re.findall(r"\((l\d\d(?:, l\d\d)*)\)", text)
        named = groups[-1].split(", ") if groups else []
        assert named == list(want["lessons"]), (
            f"README's {head!r} names lessons {named}, the graders enforce "
            f"it in {want['lessons']}"
        )


# ---------------------------------------------------------- lesson 20
D2L_ADDNORM = """

class AddNorm(keras.layers.Layer):
    # d2l 10.7.3 (11.7.3): the residual, dropout, then Keras's LayerNorm.
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = keras.layers.Dropout(dropout, dtype=self.dtype_policy)
        self.ln = keras.layers.LayerNormalization(dtype=self.dtype_policy)

    def call(self, X, Y, training=None):
        return self.ln(self.dropout(Y, training=training) + X)
"""


def test_d2l_addnorm_is_told_the_epsilon(tmp_path):
    results = grade_port(
        "l20_transformer",
        tmp_path,
        ["test_addnorm_matches_reference"],
        append=D2L_ADDNORM,
    )
    (message,) = failures(results).values()
    assert "Likely mistake [layer_norm_keras_epsilon]" in message, message
    assert "0.001" in message and "epsilon=1e-05" in message, message


def test_d2l_addnorm_with_the_courses_epsilon_passes(tmp_path):
    results = grade_port(
        "l20_transformer",
        tmp_path,
        ["test_addnorm_matches_reference"],
        append=D2L_ADDNORM.replace(
            "LayerNormalization(", "LayerNormalization(epsilon=1e-5, "
        ),
    )
    assert not failures(results), results


def test_d2l_ffn_relu_layer_is_named_in_the_float64_check(tmp_path):
    """d2l's PositionWiseFFN keeps a `ReLU()` layer, made without dtype."""
    results = grade_port(
        "l20_transformer",
        tmp_path,
        ["test_encoder_block_gradient", "test_position_wise_ffn"],
        replace=[
            (
                "        self.dense2 = keras.layers.Dense(\n",
                "        self.relu = keras.layers.ReLU()\n"
                "        self.dense2 = keras.layers.Dense(\n",
            ),
            (
                "return self.dense2(ops.relu(self.dense1(X)))",
                "return self.dense2(self.relu(self.dense1(X)))",
            ),
        ],
    )
    bad = failures(results)
    assert list(bad) == [
        "test_encoder_block_gradient_matches_centred_differences"
    ], results
    (message,) = bad.values()
    assert "ReLU() computes in float32" in message, message
    assert "pass dtype=self.dtype_policy" in message, message


@pytest.mark.parametrize("module", ["l20_transformer"])
def test_the_solution_passes_the_ported_checks(module, tmp_path):
    """The harness itself: the unchanged solution passes the same checks."""
    results = grade_port(
        module,
        tmp_path,
        ["test_addnorm_matches_reference", "test_encoder_block_gradient"],
    )
    assert not failures(results), results
