"""`m2t dev make-fixtures`: the references' outputs on the public inputs,
for the student edition (DESIGN principle 9: a public grader carries
expected outputs, not the references that compute them).

It grades `solutions/` at the public seed (`settings.GRADER_SEED`) in a
fresh process whose `@reference` functions record (`$M2T_FIXTURES`, see
`graders.lib.fixtures`), and replaces `graders/fixtures/` with what they
kept: per grader a `<lesson>.json` (each call's key, reference, inputs and
output, arrays by name) and a `<lesson>.npz` (the arrays), pickle-free.
m2t never imports the graders: the recording runs in that other process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from m2t import ROOT
from m2t import settings

FOLDER = ROOT / "graders" / "fixtures"
"""Where the fixtures live (the edition ships them)."""
RECORD_ENV = "M2T_FIXTURES"
"""`graders.lib.fixtures.RECORD_ENV`: the folder a recording grade fills."""


def record(
    out: Path, lessons: list[str] | None = None
) -> tuple[set[str], set[str]]:
    """Grade `solutions/` (every lesson, or `lessons`) at the public seed,
    recording every outermost reference call into `out`; returns the tags
    of the lessons graded and of those that got full marks (a fixture of
    a failing lesson would hold what the references gave on inputs the
    solutions never produce: it is not kept). A capstone's parts, graded
    inside its grade, record too but are not in the report: neither."""
    report = out / "results.json"
    env = settings.quiet_env({**os.environ, RECORD_ENV: str(out)})
    env.pop("M2T_GRADER_SEED", None)
    command = [
        sys.executable,
        "-m",
        "m2t",
        "grade",
        *(lessons or []),
        "--impl",
        "solutions",
        "--seed",
        str(settings.GRADER_SEED),
        "--report",
        str(report),
    ]
    subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if not report.exists():
        raise RuntimeError("m2t dev make-fixtures: the grade did not run")
    tests = json.loads(report.read_text())["tests"]
    tags = {t["name"].split()[0] for t in tests}
    failed = {t["name"].split()[0] for t in tests if t["status"] != "passed"}
    return tags, tags - failed


def make(
    folder: Path = FOLDER, lessons: list[str] | None = None
) -> tuple[dict[str, int], set[str]]:
    """Record and replace the fixtures in `folder` of every lesson whose
    solution gets full marks (of `lessons` only, when given); returns
    ({grader: number of calls kept}, the tags of the lessons left as
    they were because their solution failed)."""
    with tempfile.TemporaryDirectory(prefix="m2t-fixtures-") as tmp:
        graded, passed = record(Path(tmp), lessons)
        folder.mkdir(parents=True, exist_ok=True)
        counts, kept = {}, set()
        for path in sorted(Path(tmp).glob("test_l*.json")):
            tag = path.stem.split("_")[1]  # test_l16_attention... -> l16
            if tag not in passed:
                continue
            kept.add(tag)
            for suffix in (".json", ".npz"):
                name = path.with_suffix(suffix).name
                shutil.copy(path.with_suffix(suffix), folder / name)
            counts[path.stem] = len(json.loads(path.read_text()))
        if not lessons:  # a grader with no reference left: no fixture
            for old in folder.glob("test_l*.json"):
                if old.stem not in counts and old.stem.split("_")[1] in passed:
                    old.unlink()
                    old.with_suffix(".npz").unlink(missing_ok=True)
        recorded = {
            p.stem.split("_")[1] for p in Path(tmp).glob("test_l*.json")
        }
        return counts, (recorded & graded) - kept
