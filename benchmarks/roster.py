"""Roster throughput: submissions graded per minute by `m2t grade --roster`
with `-j 1` and `-j 2`, on a generated class.

    python -m benchmarks.roster                   # 8 students, l06 and l13
    python -m benchmarks.roster --students 12 --lessons 06 13 16 \
        --out benchmarks/results-roster.json

The class is made of known mistakes: each student's lesson file is the
reference solution or one of its mutants (solutions/mutants/*.toml, made
with the code `m2t mutants` uses), so the gradebook and the class report
have a known answer (`tests/test_roster.py` checks it). Each run grades the
whole class from scratch in a fresh output folder.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from m2t import ROOT
from m2t import curriculum
from m2t import settings
from m2t.authoring import mutants

SOLUTION = "solution"
"""The variant that is the reference solution itself."""


def variants(lesson: curriculum.Lesson) -> list[str]:
    """The reference, then each known mistake of `lesson`."""
    return [SOLUTION, *mutants.catalogue(lesson.module)]


def source(lesson: curriculum.Lesson, variant: str) -> str:
    """The lesson file of one variant: the solution, or it with one known
    mistake made (`mutants.mutate`, as `m2t mutants` makes it)."""
    text = (ROOT / "solutions" / f"{lesson.module}.py").read_text("utf-8")
    if variant == SOLUTION:
        return text
    replacements = mutants.catalogue(lesson.module)[variant]
    return mutants.mutate(
        text, replacements, f"{lesson.module}.toml [{variant}]"
    )


def plan(
    lessons: Sequence[curriculum.Lesson], students: int
) -> dict[str, dict[str, str]]:
    """Student name -> {lesson tag: variant}: student i takes variant
    (i * (k + 1) + k) mod n of the k-th lesson, so every variant occurs and
    the lessons' mistakes are not made by the same students."""
    out = {}
    for i in range(students):
        row = {}
        for k, lesson in enumerate(lessons):
            names = variants(lesson)
            row[lesson.tag] = names[(i * (k + 1) + k) % len(names)]
        out[f"student{i:02d}"] = row
    return out


def make_roster(
    folder: Path, lessons: Sequence[curriculum.Lesson], students: int
) -> dict[str, dict[str, str]]:
    """Write a roster folder (one sub-folder per student, holding its lesson
    files) as `plan` says; returns the plan."""
    chosen = plan(lessons, students)
    by_tag = {x.tag: x for x in lessons}
    for name, row in chosen.items():
        (folder / name).mkdir(parents=True)
        for tag, variant in row.items():
            lesson = by_tag[tag]
            (folder / name / f"{lesson.module}.py").write_text(
                source(lesson, variant), encoding="utf-8"
            )
    return chosen


def oracle(lessons: Sequence[curriculum.Lesson]) -> dict[str, dict[str, float]]:
    """{tag: {variant: points}}, graded in this process without a sandbox
    (an answer the roster's sandboxed grading must agree with)."""
    from m2t.grading import runner

    out: dict[str, dict[str, float]] = {x.tag: {} for x in lessons}
    width = max(len(variants(x)) for x in lessons)
    with tempfile.TemporaryDirectory(prefix="m2t-oracle-") as temp:
        for i in range(width):
            folder = Path(temp) / str(i)
            folder.mkdir()
            todo = [x for x in lessons if i < len(variants(x))]
            for lesson in todo:
                (folder / f"{lesson.module}.py").write_text(
                    source(lesson, variants(lesson)[i]), encoding="utf-8"
                )
            runner.fresh_keras()
            for result in runner.grade(todo, impl=str(folder)):
                variant = variants(result.lesson)[i]
                out[result.lesson.tag][variant] = result.score
    return out


def time_roster(
    roster: Path, lessons: Sequence[str], jobs: int, out: Path
) -> float:
    """Wall seconds of one `m2t grade --roster` run (a fresh output)."""
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "m2t", "grade", *lessons]
        + ["--roster", str(roster), "-j", str(jobs), "--out", str(out)],
        cwd=ROOT,
        env=settings.quiet_env(),
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(result.stdout + result.stderr)
    return seconds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=8)
    parser.add_argument("--lessons", nargs="*", default=["06", "13"])
    parser.add_argument("--jobs", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--out", help="write the figures (JSON) here")
    args = parser.parse_args(argv)
    lessons = curriculum.select(args.lessons)
    rows = []
    with tempfile.TemporaryDirectory(prefix="m2t-roster-bench-") as temp:
        roster = Path(temp) / "class"
        make_roster(roster, lessons, args.students)
        for jobs in args.jobs:
            load = os.getloadavg()[0]
            seconds = time_roster(
                roster, args.lessons, jobs, Path(temp) / f"grades-j{jobs}"
            )
            rows.append(
                {
                    "jobs": jobs,
                    "students": args.students,
                    "lessons": [x.tag for x in lessons],
                    "seconds": round(seconds, 1),
                    "per_minute": round(60 * args.students / seconds, 2),
                    "load_before": round(load, 2),
                }
            )
            print(
                f"-j {jobs}: {args.students} submissions x "
                f"{len(lessons)} lessons in {seconds:.1f}s = "
                f"{60 * args.students / seconds:.2f} per minute "
                f"(load average {load:.1f} before)"
            )
    if args.out:
        Path(args.out).write_text(
            json.dumps(
                {
                    "machine": {
                        "cpus": os.cpu_count(),
                        "python": platform.python_version(),
                    },
                    "runs": rows,
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
