"""A class split into shards, graded in separate processes (one of them
through the Slurm template, run with bash) and merged: the same gradebook
and class report, byte for byte, as one run over the whole roster; the
split is stable and the merge refuses pieces that do not fit."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.roster import make_roster
from m2t import curriculum
from m2t import settings
from m2t.grading import confine
from m2t.grading import shards
from tests.conftest import ROOT

LESSON = "06"  # one of the fastest lessons to grade
STUDENTS = 6  # students 03 and 05 fall in shard 1 of 2, the others in 2
SEED = 7
ENV = settings.quiet_env({**os.environ, "PYTHONHASHSEED": "0"})
TEMPLATES = ROOT / "docs" / "templates"

needs_sandbox = pytest.mark.skipif(
    bool(confine.missing_layers()),
    reason="the sandbox lacks a layer here: untrusted code is not graded",
)


@pytest.mark.parametrize("bad", ["0/2", "3/2", "2", "a/b", "1/0", "-1/2"])
def test_a_bad_shard_is_refused_by_name(bad):
    with pytest.raises(ValueError, match=rf"--shard '{bad}'"):
        shards.parse(bad)


def test_the_split_covers_everyone_once_and_moves_no_one_when_the_class_grows():
    names = [f"student-{i}" for i in range(400)]
    parts = [shards.pick(dict.fromkeys(names), (i, 4)) for i in range(1, 5)]
    assert sorted(n for part in parts for n in part) == sorted(names)
    assert all(70 <= len(part) <= 130 for part in parts), [
        len(p) for p in parts
    ]
    grown = dict.fromkeys([*names, "late-1", "late-2"])
    for i, part in enumerate(parts, 1):
        assert set(part) <= set(shards.pick(grown, (i, 4)))
    assert list(parts[0]) == [n for n in names if n in parts[0]]  # order kept


def _grade(*args, out):
    return [sys.executable, "-m", "m2t", "grade", LESSON, *args] + [
        "--seed",
        str(SEED),
        "--out",
        str(out),
    ]


@needs_sandbox
def test_two_shards_merged_equal_one_run(tmp_path):
    make_roster(tmp_path / "class", curriculum.select([LESSON]), STUDENTS)
    roster = str(tmp_path / "class")
    whole = subprocess.Popen(
        _grade("--roster", roster, "-j", "1", out=tmp_path / "whole"),
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    slurm_env = {
        **ENV,
        "SLURM_ARRAY_TASK_ID": "1",
        "SLURM_ARRAY_TASK_COUNT": "2",
        "SLURM_CPUS_PER_TASK": "1",
        "M2T": f"{sys.executable} -m m2t",
    }
    first = subprocess.run(  # shard 1 as a Slurm task would run it
        [
            "bash",
            str(TEMPLATES / "grade-shards.slurm"),
            roster,
            str(tmp_path / "pieces"),
            LESSON,
            "--seed",
            str(SEED),
        ],
        cwd=ROOT,
        env=slurm_env,
        capture_output=True,
        text=True,
    )
    second = subprocess.run(
        _grade("--roster", roster, "--shard", "2/2", out=tmp_path / "two"),
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
    )
    assert whole.wait() == 0
    assert first.returncode == 0, first.stdout + first.stderr
    assert "(shard 1/2): 2 submissions" in first.stdout
    assert second.returncode == 0, second.stdout + second.stderr
    assert "(shard 2/2): 4 submissions" in second.stdout

    pieces = [tmp_path / "pieces" / "shard-1", tmp_path / "two"]
    merged = subprocess.run(
        [sys.executable, "-m", "m2t", "dev", "merge-grades", *map(str, pieces)]
        + ["--out", str(tmp_path / "merged")],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
    )
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "6 of 6 students graded" in merged.stdout
    for name in ("gradebook.csv", "class-report.md"):
        want = (tmp_path / "whole" / name).read_bytes()
        assert (tmp_path / "merged" / name).read_bytes() == want, name
    rows = (tmp_path / "whole" / "gradebook.csv").read_text().splitlines()
    assert [r.split(",")[0] for r in rows[1:]] == [
        f"student{i:02d}" for i in range(STUDENTS)
    ]
    records = sorted(p.name for p in (tmp_path / "merged/students").iterdir())
    assert len(records) == 3 * STUDENTS  # record, results.json, log

    # pieces that do not fit are refused before anything is written
    def merge(*folders):
        return subprocess.run(
            [sys.executable, "-m", "m2t", "dev", "merge-grades"]
            + [str(f) for f in folders]
            + ["--out", str(tmp_path / "bad")],
            cwd=ROOT,
            env=ENV,
            capture_output=True,
            text=True,
        )

    alone = merge(pieces[1])
    assert alone.returncode != 0
    assert "shard(s) 1/2 missing" in alone.stdout + alone.stderr
    twice = merge(pieces[1], pieces[1])
    assert "are both shard 2/2" in twice.stdout + twice.stderr
    other = tmp_path / "other"
    shutil.copytree(pieces[0], other)
    manifest = json.loads((other / "shard.json").read_text())
    manifest["roster"] = manifest["roster"][:-1]
    (other / "shard.json").write_text(json.dumps(manifest))
    mixed = merge(other, pieces[1])
    assert "graded with different roster" in mixed.stdout + mixed.stderr
    assert not (tmp_path / "bad" / "gradebook.csv").exists()


def test_the_shard_members_script_prints_a_shards_rows(tmp_path):
    table = tmp_path / "students.csv"
    rows = [f"s{i},org/repo-{i}" for i in range(30)]
    table.write_text("name,repository\n" + "\n".join(rows) + "\n")
    seen = []
    for i in (1, 2, 3):
        done = subprocess.run(
            [sys.executable, "-m", "m2t.grading.shards", str(table), f"{i}/3"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        lines = done.stdout.splitlines()
        assert lines[0] == "name,repository"
        seen += lines[1:]
        for line in lines[1:]:
            assert shards.index_of(line.split(",")[0], 3) == i
    assert sorted(seen) == sorted(rows)


def test_the_actions_template_is_a_valid_workflow():
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema"]
        + ["--builtin-schema", "vendor.github-workflows"]
        + [str(TEMPLATES / "grade-shards.yml")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    text = (TEMPLATES / "grade-shards.yml").read_text()
    matrix = text.split("shard: [", 1)[1].split("]", 1)[0].split(",")
    assert f'SHARDS: "{len(matrix)}"' in text  # the count the jobs use


def test_the_slurm_template_names_what_it_needs(tmp_path):
    env = {k: v for k, v in ENV.items() if not k.startswith("SLURM_")}
    done = subprocess.run(
        ["bash", str(TEMPLATES / "grade-shards.slurm"), "class", "out"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert "sbatch --array=1-N" in done.stderr
    assert (
        Path(TEMPLATES / "grade-shards.slurm")
        .read_text()
        .startswith("#!/usr/bin/env bash\n")
    )
