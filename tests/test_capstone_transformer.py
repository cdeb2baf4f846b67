"""Capstone B (lesson 24): it refuses to run on a broken part and names the
lesson to fix; on the solutions it trains to held-out BLEU >= 0.9 (slow);
a submission that translates without training (it parses the grammar
m2t_data ships) scores on the BLEU check no more than the untouched
skeleton, while an honest one scores full marks at two seeds (slow).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t import settings
from m2t.authoring import mutants
from m2t.grading import parts
from m2t.grading import runner
from m2t.grading import sandbox

CAPSTONE = curriculum.find("24")
GRADER = CAPSTONE.grader
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "fixtures")
"""What a copy of the trusted code leaves out (m2t.grading.strip)."""


def _grader_parts() -> dict:
    spec = importlib.util.spec_from_file_location("_capstone_grader", GRADER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MODULES


def _solved(folder: Path, modules=(CAPSTONE.module, *CAPSTONE.parts)) -> Path:
    """A new `folder` holding the solutions of `modules` (the capstone's
    and its parts' by default)."""
    folder.mkdir()
    for module in modules:
        shutil.copy(ROOT / "solutions" / f"{module}.py", folder)
    return folder


def _submission(folder: Path, broken: str, mistake: str) -> Path:
    """The solutions of the capstone and its parts, with `broken`'s
    `mistake` (one of its catalogued mutants) put in."""
    _solved(folder)
    path = folder / f"{broken}.py"
    path.write_text(
        mutants.mutate(
            path.read_text(encoding="utf-8"),
            mutants.catalogue(broken)[mistake],
            f"{broken} [{mistake}]",
        ),
        encoding="utf-8",
    )
    return folder


def _skeleton(folder: Path) -> Path:
    """A new `folder` holding the parts' solutions and the capstone's
    untouched skeleton."""
    from m2t.authoring import make_lessons

    _solved(folder, CAPSTONE.parts)
    text = make_lessons.expected(ROOT / "solutions")[CAPSTONE.filename]
    (folder / CAPSTONE.filename).write_text(text, encoding="utf-8")
    return folder


def _graded(folder: Path, seed: int) -> dict[str, dict]:
    """`m2t grade 24 --submission folder --seed seed`, in English: {check
    name: its entry of results.json}."""
    report = folder.parent / f"{folder.name}-{seed}.json"
    proc = _grade_submission(
        folder, "--seed", str(seed), "--report", str(report)
    )
    assert report.exists(), proc.stdout + proc.stderr[-3000:]
    tests = json.loads(report.read_text())["tests"]
    return {t["name"].split(" ", 1)[1]: t for t in tests}


ATTACKS = ROOT / "tests" / "attacks"
SEEDS = (20261202, 7)
"""Two seeds of the judge's draws, neither the public one."""
BLEU_CHECK = "test_trains_to_held_out_bleu"


def _grade_submission(folder: Path, *args: str):
    """`m2t grade 24 --submission folder ARGS` in a fresh process."""
    return subprocess.run(
        [sys.executable, "-m", "m2t", "grade", "24", "--submission"]
        + [str(folder), "--allow-weaker-sandbox", *args],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
        env=settings.quiet_env({**os.environ, "M2T_LANG": "en"}),
    )


def test_the_curriculum_stages_the_parts_the_grader_checks():
    assert set(_grader_parts().values()) == set(CAPSTONE.parts)


def test_a_broken_part_is_named_and_nothing_is_trained(tmp_path):
    folder = _submission(
        tmp_path / "alice", "l18_multihead_attention", "no_scale"
    )
    (result,) = runner.grade([CAPSTONE], impl=str(folder))
    assert result.checks and all(c.status == "failed" for c in result.checks)
    for check in result.checks:
        assert "your l18 MultiHeadAttention fails its own grader" in (
            check.message
        ), check.message
        assert "fix l18 first" in check.message
        assert "BLEU" not in check.message  # refused before training
    training = next(c for c in result.checks if "bleu" in c.name)
    assert training.seconds < 30, "the refusal took long enough to train"


def test_the_refusal_holds_in_the_sandbox_on_the_code_of_the_start(
    tmp_path, monkeypatch
):
    """Sandboxed, the parts are graded inside the capstone's grade, by the
    trusted code that grade copied when it started: the source of that
    copy is broken once the grade has started (every worker started from
    a new copy would die at import, and the first part, l06, would fail),
    yet the parts' workers run and the broken l20 is the one named."""
    source = tmp_path / "repository"
    for name in sandbox.TRUSTED:
        shutil.copytree(ROOT / name, source / name, ignore=SKIP)
    shutil.copy(ROOT / "curriculum.toml", source)
    monkeypatch.setattr(sandbox, "ROOT", source)
    folder = _submission(
        tmp_path / "bob", "l20_transformer", "residual_missing"
    )
    real = parts.grade

    def mid_grade(*args, **kwargs):
        with open(source / "m2t" / "grading" / "worker.py", "a") as f:
            f.write("\nraise SystemExit('a copy made after the start')\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(parts, "grade", mid_grade)
    (result,) = runner.grade(
        [CAPSTONE], impl=str(folder), sandbox=True, allow_weaker_sandbox=True
    )
    verdict = next(c for c in result.checks if "your_parts" in c.name)
    assert verdict.status == "failed", verdict.message
    assert "your l20 blocks" in verdict.message, verdict.message
    assert "fix l20 first" in verdict.message, verdict.message


@pytest.mark.slow
def test_the_solutions_reach_the_bleu_target():
    (result,) = runner.grade([CAPSTONE], impl="solutions", timeout=600)
    failing = [
        (c.name, c.message) for c in result.checks if c.status != "passed"
    ]
    assert result.status == "passed", failing


def test_the_held_out_references_are_not_in_the_workers_reach(tmp_path):
    """The attack in tests/attacks/held_out.py, graded as a submission:
    it trains nothing and returns the references it finds in m2t_data's
    splits. The judge holds the held-out pairs, so it finds none."""
    folder = _solved(tmp_path / "mallory")
    capstone = folder / f"{CAPSTONE.module}.py"
    capstone.write_text(
        capstone.read_text()
        + (ROOT / "tests" / "attacks" / "held_out.py").read_text()
    )
    report = tmp_path / "results.json"
    proc = _grade_submission(folder, "--report", str(report))
    tests = {t["name"]: t for t in json.loads(report.read_text())["tests"]}
    (bleu,) = [t for name, t in tests.items() if "held_out_bleu" in name]
    assert bleu["score"] == 0, proc.stdout + bleu["output"]
    assert "below the target" in bleu["output"], bleu["output"]


def test_a_grade_of_the_parts_and_the_capstone_grades_each_part_once(
    tmp_path, monkeypatch
):
    """As `m2t grade` with no lesson: the parts come first in the course,
    so the capstone's parts check reuses their results (here on the
    capstone's skeleton, which the graded parts let through to its TODOs)
    instead of starting a second grade of the same lessons."""
    folder = _solved(tmp_path / "carol", CAPSTONE.parts)
    shutil.copy(ROOT / "lessons" / CAPSTONE.filename, folder)
    lessons = [curriculum.find(module) for module in CAPSTONE.parts]
    grades = []
    real = runner.grade

    def spy(graded, *args, **kwargs):
        grades.append([lesson.tag for lesson in graded])
        return real(graded, *args, **kwargs)

    monkeypatch.setattr(runner, "grade", spy)
    results = runner.grade([*lessons, CAPSTONE], impl=str(folder))
    assert grades == [[*(x.tag for x in lessons), CAPSTONE.tag]]
    *parts, capstone = results
    assert all(r.status == "passed" for r in parts), [r.status for r in parts]
    status = {c.name: c.status for c in capstone.checks}
    assert status.pop("test_your_parts_pass_their_own_graders") == "passed"
    assert set(status.values()) == {"not_started"}, status


def test_a_model_that_never_trained_scores_no_bleu_whatever_it_parses(
    tmp_path,
):
    """tests/attacks/capstone_b_parses_grammar: `train` is a no-op and
    `run` translates by parsing each source with the grammar m2t_data
    ships (600 of 600 unseen pairs right offline), renaming its French
    as the training pairs rename it. The judge renames both vocabularies
    with a secret drawn from the grade's seed, so no shipped table maps
    a source to its target: the attack scores on the BLEU check no more
    than the untouched skeleton."""
    attack = _solved(tmp_path / "mallory")
    capstone = attack / CAPSTONE.filename
    tail = ATTACKS / "capstone_b_parses_grammar" / "tail.py"
    capstone.write_text(capstone.read_text() + tail.read_text())
    got = _graded(attack, SEEDS[0])
    base = _graded(_skeleton(tmp_path / "skeleton"), SEEDS[0])
    assert got[BLEU_CHECK]["score"] <= base[BLEU_CHECK]["score"], got[
        BLEU_CHECK
    ]["output"]
    assert "below the target" in got[BLEU_CHECK]["output"]
    mean = float(got[BLEU_CHECK]["output"].split("held-out BLEU ")[1][:5])
    assert mean < 0.05, got[BLEU_CHECK]["output"]


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_an_honest_capstone_scores_full_marks(tmp_path, seed):
    tests = _graded(_solved(tmp_path / "honest"), seed)
    failed = {n: t["output"] for n, t in tests.items() if t["score"] < 1e-9}
    assert not failed, failed


# -- composition: wiring mistakes fail a check of seconds ------------------

SQRT = "X = X * ops.sqrt(ops.cast(self.num_hiddens, X.dtype))"
PE = "X = self.src_positions(X, training=training)"
ENC_LOOP = "X = blk(X, src_valid_len, training=training)  # (B, S, D)"
DEC_LOOP = "Y, _ = blk(Y, enc_outputs, src_valid_len, training=training)"
STEP = "log_probs = ops.log_softmax(logits[0, -1])  # (V,)"
PLANTED = {
    # Written from the module docstring's equations, not from
    # solutions/mutants: (the edits, the check that must fail, a word
    # of the stage its message must name).
    "positions_scaled_with_the_embeddings": (
        [(f"{SQRT}\n        {PE}", f"{PE}\n        {SQRT}")],
        "test_encoder_is_its_blocks_chained",
        "first encoder block's input",
    ),
    "encoder_embeddings_unscaled": (
        [(SQRT, "pass")],
        "test_encoder_is_its_blocks_chained",
        "first encoder block's input",
    ),
    "embeddings_added_twice": (
        [(PE, "X = X + self.src_positions(X, training=training)")],
        "test_encoder_is_its_blocks_chained",
        "first encoder block's input",
    ),
    "encoder_blocks_not_chained": (
        [
            (ENC_LOOP, "out = blk(X, src_valid_len, training=training)"),
            (
                "        return X\n        # END SOLUTION",
                "        return out\n        # END SOLUTION",
            ),
        ],
        "test_encoder_is_its_blocks_chained",
        "encoder block 2 does not read block 1's output",
    ),
    "decoder_blocks_read_the_embeddings": (
        [
            (
                DEC_LOOP,
                "out, _ = blk(Y, enc_outputs, src_valid_len, "
                "training=training)",
            ),
            ("return self.dense(Y)  # (B, T, V)", "return self.dense(out)"),
        ],
        "test_decoder_is_its_blocks_chained",
        "decoder block 2 does not read block 1's output",
    ),
    "beam_over_raw_logits": (
        [(STEP, "log_probs = logits[0, -1]")],
        "test_translate_searches_log_probabilities_beam_2",
        "beam 2",
    ),
    "beam_over_probabilities": (
        [(STEP, "log_probs = ops.softmax(logits[0, -1])")],
        "test_translate_searches_log_probabilities_beam_2",
        "beam 2",
    ),
}
VARIANTS = {
    # Right, written another way.
    "one_expression_and_math_sqrt": [
        (
            f"X = self.src_embedding(src)  # (B, S, D)\n        {SQRT}\n"
            f"        {PE}",
            "X = self.src_positions(\n            self.src_embedding(src) "
            "* math.sqrt(self.num_hiddens), training=training\n        )",
        ),
        ("import time\n", "import math\nimport time\n"),
    ],
    "log_softmax_by_logsumexp": [
        (
            STEP,
            "log_probs = logits[0, -1] - ops.logsumexp(logits[0, -1])",
        )
    ],
}
CHEAP = (
    "test_encoder_is_its_blocks_chained",
    "test_decoder_is_its_blocks_chained",
    "test_translate_searches_log_probabilities_beam_2",
)
CPU_LIMIT = 5.0
"""CPU seconds (this process, all its threads) a composition check may
take to fail."""


def _cheap_checks(folder: Path, seed: int) -> dict[str, tuple[str, float]]:
    """The composition checks of the grader on `folder`, in this process
    (the parts are the solutions: their verdict is taken as passed):
    {check: (message or "passed", CPU seconds)}."""
    import time

    import numpy as np

    from graders.lib.judge import CheckFailed
    from m2t.grading import probe

    spec = importlib.util.spec_from_file_location("_l24_checks", GRADER)
    grader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grader)
    before = probe.runner()
    probe.set_runner(probe.InProcessRunner(folder))
    try:
        out = {}
        for name in CHEAP:
            start = time.process_time()
            try:
                getattr(grader, name)(lambda: None, np.random.default_rng(seed))
                verdict = "passed"
            except CheckFailed as failed:
                verdict = str(failed)
            out[name] = (verdict, time.process_time() - start)
        return out
    finally:
        probe.set_runner(before)


def _planted(folder: Path, edits) -> Path:
    _solved(folder)
    path = folder / CAPSTONE.filename
    path.write_text(
        mutants.mutate(path.read_text(encoding="utf-8"), edits, folder.name),
        encoding="utf-8",
    )
    return folder


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_wiring_mistake_fails_a_composition_check_in_seconds(tmp_path, name):
    edits, check, stage = PLANTED[name]
    got = _cheap_checks(_planted(tmp_path / name, edits), SEEDS[0])
    verdict, seconds = got[check]
    assert verdict != "passed", got
    assert stage in verdict, verdict
    assert seconds < CPU_LIMIT, (seconds, verdict)


@pytest.mark.parametrize("name", sorted(VARIANTS))
@pytest.mark.parametrize("seed", SEEDS)
def test_a_correct_variant_passes_the_composition_checks(tmp_path, name, seed):
    got = _cheap_checks(_planted(tmp_path / name, VARIANTS[name]), seed)
    assert all(v == "passed" for v, _ in got.values()), got


def scaled_embedding_ratio(folder: Path) -> float:
    """The root mean square of the capstone's freshly initialised source
    embeddings times sqrt(D), over that of the positional encoding added to
    them (0.71), at the graded size D = 32, with the lesson file in
    `folder` and the parts' solutions."""
    import numpy as np

    from m2t.grading import impl

    capstone = impl.load(CAPSTONE.module, folder)
    parts = capstone.Parts(
        **{
            role: impl.load(name, ROOT / "solutions")
            for role, name in _grader_parts().items()
        }
    )
    D = capstone.HYPERPARAMETERS["num_hiddens"]
    model = capstone.CapstoneTransformer(parts, 50, 60, num_hiddens=D)
    ids = np.zeros((1, 3), dtype="int32")
    model((ids, np.array([3], dtype="int32"), ids), training=False)
    table = np.asarray(model.src_embedding.embeddings) * np.sqrt(D)
    angles = np.arange(10)[:, None] / 1e4 ** (np.arange(0, D, 2) / D)
    encoding = np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
    rms = [float(np.sqrt(np.mean(x**2))) for x in (table, encoding)]
    return rms[0] / rms[1]


def test_scaled_embeddings_are_about_as_large_as_the_encoding():
    """The hint's claim: sqrt(D) brings the embeddings to the size of the
    positional encoding (1.0 against 0.71 with the N(0, 1/D) initialiser;
    Keras's default gave 0.16, a ratio of 0.23)."""
    ratio = scaled_embedding_ratio(ROOT / "solutions")
    assert 0.7 < ratio < 2.0, ratio
