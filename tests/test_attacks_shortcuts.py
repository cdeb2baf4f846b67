"""Shortcuts to a grade, each a real submission in tests/attacks/<name>/
graded by the real `m2t grade --submission`: it may score no more than the
untouched skeleton on the checks it games, and an honest submission still
scores full marks at two seeds.

* forged_facts: at import, a lesson swaps the grader's own
  `layer_contract`, `value_errors` and `dropout_outputs` for forgeries
  whose facts agree with one another (no layer code at all);
* shape_only: layers with outputs of the right shape, weights that move and
  a dropout that acts in training only, but none of the lesson's math (l16,
  and one lesson of each kind: l04's CNN blocks, l10's recurrent cell,
  l18's multi-head attention);
* fixture_tables (l19): the tables and rotations the student edition ships
  as fixtures, looked up by (length, depth) and delta instead of computed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from m2t import ROOT
from m2t import settings

ATTACKS = Path(__file__).parent / "attacks"
SEEDS = (20261202, 7)
"""Two seeds of the judge's inputs, neither the public one."""


def skeleton(lesson: str) -> str:
    """The untouched skeleton of `lesson`, as `m2t make-lessons` writes it."""
    from m2t.authoring import make_lessons

    return make_lessons.expected(ROOT / "solutions")[f"{lesson}.py"]


def graded(folder: Path, number: str, seed: int, tmp: Path) -> dict[str, dict]:
    """`m2t grade NUMBER --submission FOLDER --seed SEED` in a fresh
    process: {check name: its test entry of results.json}."""
    report = tmp / f"{folder.name}-{number}-{seed}.json"
    env = settings.quiet_env({**os.environ, "M2T_LANG": "en"})
    proc = subprocess.run(
        [sys.executable, "-m", "m2t", "grade", number, "--submission"]
        + [str(folder), "--seed", str(seed), "--report", str(report)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert report.exists(), proc.stdout + proc.stderr[-3000:]
    tests = json.loads(report.read_text())["tests"]
    return {t["name"].split(" ", 1)[1]: t for t in tests}


def submission(tmp: Path, name: str, files: dict[str, str]) -> Path:
    folder = tmp / name
    folder.mkdir()
    for file, text in files.items():
        (folder / file).write_text(text)
    return folder


def points(tests: dict[str, dict], names: list[str]) -> float:
    return sum(tests[n]["score"] for n in names)


L16 = "l16_attention_scoring"
L16_GAMED = [
    "test_keras_layer_contract[dot]",
    "test_keras_layer_contract[additive]",
    "test_dropout_only_in_training[dot]",
    "test_dropout_only_in_training[additive]",
]


@pytest.mark.parametrize("attack", ["forged_facts", "shape_only"])
def test_facts_a_worker_reports_are_bound_to_the_judges(tmp_path, attack):
    """The forged facts and the shape-only layers score on the contract and
    dropout checks no more than the untouched skeleton; a forgery of the
    grader's functions is named as such."""
    base = skeleton(L16)
    folders = {
        "skeleton": submission(tmp_path, "skeleton", {f"{L16}.py": base}),
        attack: submission(
            tmp_path,
            attack,
            {
                f"{L16}.py": base
                + (ATTACKS / attack / "l16_tail.py").read_text()
            },
        ),
    }
    got = {k: graded(f, "16", SEEDS[0], tmp_path) for k, f in folders.items()}
    scores = {k: points(t, L16_GAMED) for k, t in got.items()}
    print(scores)
    assert scores[attack] <= scores["skeleton"], {
        n: got[attack][n]["output"] for n in L16_GAMED
    }
    if attack == "forged_facts":
        for name in L16_GAMED:
            assert "changed the grader's own" in got[attack][name]["output"]


SHAPE_ONLY = {
    "l04_densenet": [
        "test_keras_layer_contract[conv_block]",
        "test_keras_layer_contract[dense_block]",
        "test_keras_layer_contract[transition_block]",
    ],
    "l10_gru": ["test_keras_layer_contract"],
    "l18_multihead_attention": [
        "test_dropout_only_in_training",
        "test_keras_layer_contract[no_bias]",
        "test_keras_layer_contract[bias]",
    ],
}
"""Lessons whose shape-only layers (tests/attacks/shape_only/lNN_tail.py)
game their contract and dropout checks: before these were bound to the
judge's reference, l04's scored 3 of 3, l10's 1 of 1 and l18's 3 of 3
where the skeleton scores 0."""


@pytest.mark.parametrize("lesson", list(SHAPE_ONLY))
def test_shape_only_layers_fail_the_bound_checks(tmp_path, lesson):
    """Each shape-only layer scores 0 on its lesson's contract and dropout
    checks (the untouched skeleton's score there: its `call` is not
    started), each failing on the judge's reference, not on a crash."""
    number = lesson[1:3]
    tail = ATTACKS / "shape_only" / f"l{number}_tail.py"
    folder = submission(
        tmp_path,
        "shape_only",
        {f"{lesson}.py": skeleton(lesson) + tail.read_text()},
    )
    tests = graded(folder, number, SEEDS[0], tmp_path)
    gamed = SHAPE_ONLY[lesson]
    outputs = {n: tests[n]["output"] for n in gamed}
    assert points(tests, gamed) == 0, outputs
    for name, output in outputs.items():
        assert "against the judge's reference" in output, (name, output)


@pytest.mark.parametrize("seed", SEEDS)
def test_an_honest_l16_scores_full_marks(tmp_path, seed):
    text = (ROOT / "solutions" / f"{L16}.py").read_text()
    folder = submission(tmp_path, "honest", {f"{L16}.py": text})
    tests = graded(folder, "16", seed, tmp_path)
    failed = {n: t["output"] for n, t in tests.items() if t["score"] < 1e-9}
    assert not failed, failed


FORMULA = '=HYPERLINK("http:\\example.invalid","full marks")'
"""A student folder's name that a spreadsheet would run as a formula."""


def test_the_gradebook_and_class_report_take_no_student_text_as_code(
    tmp_path,
):
    """A roster of two: an honest l06 under a formula's name and a
    skeleton whose exceptions read like five diagnoses and an invented
    one. The gradebook's cells are text (OWASP's leading quote), and the
    class report counts only the mistakes the judge named: none."""
    lesson = "l06_text_preprocessing"
    roster = tmp_path / "class"
    roster.mkdir()
    for name, text in {
        FORMULA: (ROOT / "solutions" / f"{lesson}.py").read_text(),
        "+claims": skeleton(lesson)
        + (ATTACKS / "class_report" / "l06_tail.py").read_text(),
    }.items():
        (roster / name).mkdir()
        (roster / name / f"{lesson}.py").write_text(text)
    out = tmp_path / "grades"
    env = settings.quiet_env({**os.environ, "M2T_LANG": "en"})
    proc = subprocess.run(
        [sys.executable, "-m", "m2t", "grade", "06", "--roster", str(roster)]
        + ["--out", str(out), "-j", "1", "--seed", str(SEEDS[0])],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert (out / "gradebook.csv").exists(), proc.stdout + proc.stderr[-3000:]
    import csv

    with open(out / "gradebook.csv", newline="") as f:
        rows = list(csv.reader(f))
    cells = [cell for row in rows for cell in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert "'" + FORMULA in cells and "'+claims" in cells
    report = (out / "class-report.md").read_text()
    table = report.split("| lesson | known mistake | made by |")[1]
    made = [
        line
        for line in table.splitlines()
        if line.startswith("| l06 |") and not line.endswith("| 0 of 2 (0%) |")
    ]
    assert not made, report
    assert "the_instructor_is_wrong" not in report


def test_a_submission_is_never_judged_on_the_public_seed(tmp_path):
    """`--submission --seed <public>` would judge on the inputs whose
    expected outputs the student edition ships: refused, by `m2t grade`
    and by a roster alike, before anything is graded."""
    from graders.conftest import PUBLIC_SEED

    folder = submission(tmp_path, "sub", {f"{L16}.py": skeleton(L16)})
    report = tmp_path / "results.json"
    env = settings.quiet_env({**os.environ, "M2T_LANG": "en"})
    for extra in (["--submission", str(folder)], ["--roster", str(tmp_path)]):
        proc = subprocess.run(
            [sys.executable, "-m", "m2t", "grade", "16", *extra]
            + ["--seed", str(PUBLIC_SEED), "--report", str(report)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode != 0, proc.stdout
        assert f"--seed {PUBLIC_SEED} is the public seed" in (
            proc.stdout + proc.stderr
        )
        assert not report.exists()


L19 = "l19_self_attention_positional_encoding"


def shipped_tables() -> dict[tuple[int, int], list]:
    """{(rows, depth): table} of every positional-encoding table the
    student edition ships in l19's fixtures (the reference's own outputs,
    without a mistake)."""
    import numpy as np

    from graders.lib import fixtures

    path = fixtures.FOLDER / f"test_{L19}.json"
    arrays = np.load(path.with_suffix(".npz"), allow_pickle=False)
    tables = {}
    for entry in json.loads(path.read_text()).values():
        args, kwargs = fixtures.from_tree(entry["inputs"], arrays)
        if entry["name"].endswith(".ref_table") and not kwargs.get("mistake"):
            out = fixtures.from_tree(entry["output"], arrays)
            if len(args) < 3 or args[2] is None:
                tables[tuple(out.shape)] = out.tolist()
    return tables


def test_l19_judges_tables_it_never_shipped(tmp_path):
    """Tables looked up from the shipped fixtures (the rotation read off a
    table's rows) score on the table and shift checks no more than the
    untouched skeleton, at two seeds; the honest lesson scores full marks
    at both."""
    lookup = (
        skeleton(L19)
        + f"\n_TABLES = {shipped_tables()!r}\n"
        + (ATTACKS / "fixture_tables" / "l19_tail.py").read_text()
    )
    folders = {
        "skeleton": submission(
            tmp_path, "skeleton", {f"{L19}.py": skeleton(L19)}
        ),
        "lookup": submission(tmp_path, "lookup", {f"{L19}.py": lookup}),
        "honest": submission(
            tmp_path,
            "honest",
            {f"{L19}.py": (ROOT / "solutions" / f"{L19}.py").read_text()},
        ),
    }
    for seed in SEEDS:
        got = {k: graded(f, "19", seed, tmp_path) for k, f in folders.items()}
        gamed = [
            n
            for n in got["skeleton"]
            if n.startswith(("test_table", "test_position", "test_relative"))
            or n.startswith("test_offset")
        ]
        assert len(gamed) >= 6, sorted(got["skeleton"])
        scores = {k: points(t, gamed) for k, t in got.items()}
        print(seed, scores)
        assert scores["lookup"] <= scores["skeleton"], {
            n: got["lookup"][n]["output"][:300] for n in gamed
        }
        honest = got["honest"]
        assert all(t["status"] == "passed" for t in honest.values()), {
            n: t["output"] for n, t in honest.items() if t["status"] != "passed"
        }


def test_a_blind_letter_earns_about_a_quarter_of_the_one_of_points(tmp_path):
    """The same letter for every one-of question, none read
    (tests/attacks/blind_guess: "A"), graded by the real command: about a
    quarter of the one-of points, as four options give by chance; and no
    other letter does much better (the key is balanced, not just moved
    off A)."""
    from m2t import questions

    bank = questions.bank()
    one_of = {q.id: q.points for q in bank.values() if q.kind == "one_of"}
    total = sum(one_of.values())
    text = (ATTACKS / "blind_guess" / "answers.toml").read_text()
    shares = {}
    for letter in "ABCD":
        folder = submission(
            tmp_path,
            letter,
            {"answers.toml": text.replace('"A"', f'"{letter}"')},
        )
        tests = graded(folder, "questions", SEEDS[0], tmp_path)
        picked = [n for n in tests if n[len("test_question[") : -1] in one_of]
        assert len(picked) == len(one_of), sorted(tests)[:5]
        shares[letter] = points(tests, picked) / total
    print(shares)
    assert shares["A"] <= 0.3, shares
    assert max(shares.values()) <= 0.35, shares


def test_no_verdict_before_the_instructors_deadline(tmp_path):
    """Per-question feedback finds a one-of key by elimination in a few
    grades. Before `feedback_after` a right and a wrong answer to q16_2
    get the same words and neither counts; after it they are judged."""
    from m2t.questions import feedback

    key = questions_key("q16_2")
    wrong = "ABCD".replace(key, "")[0]
    folders = {
        letter: submission(
            tmp_path,
            f"answer_{letter}",
            {"answers.toml": f'[q16_2]\nanswer = "{letter}"\n'},
        )
        for letter in (key, wrong)
    }

    def q16_2(folder: Path, deadline: str, seed: int) -> dict:
        os.environ[feedback.FEEDBACK_ENV] = deadline
        try:
            return graded(folder, "questions", seed, tmp_path)[
                "test_question[q16_2]"
            ]
        finally:
            del os.environ[feedback.FEEDBACK_ENV]

    ahead = "2999-01-01T00:00:00+00:00"
    before = {k: q16_2(f, ahead, SEEDS[0]) for k, f in folders.items()}
    right, other = before[key], before[wrong]
    assert right["output"] == other["output"], before
    assert "shown after 2999-01-01T00:00+00:00" in right["output"]
    assert right["score"] == other["score"] == right["max_score"] == 0
    past = "2000-01-01T00:00:00+00:00"
    after = {k: q16_2(f, past, SEEDS[1]) for k, f in folders.items()}
    assert after[key]["score"] == 1 and after[key]["status"] == "passed"
    assert after[wrong]["score"] == 0 and after[wrong]["status"] == "failed"


def questions_key(qid: str) -> str:
    from m2t import questions

    return questions.load_key()[qid].answer
