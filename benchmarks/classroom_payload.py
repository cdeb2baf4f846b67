"""How big the Classroom workflow's step outputs are, against the limit the
reporter's exec puts on each.

    python -m benchmarks.classroom_payload
    python -m benchmarks.classroom_payload --edition DIR   # one built already

Builds the student edition (`m2t release`) in a scratch folder, runs the
edition workflow's grading step there as the runner would (`python -m
m2t.grading.classroom`, GITHUB_OUTPUT pointing at a file) on the untouched
skeletons, and reads its outputs: one per lesson. From the checks that
grade lists (its results.json), it then encodes two more outcomes with
`m2t.grading.classroom.outputs`: the worst case (`worst_case`: every check
an error of the grader, names and messages past the caps) and every check
passing. Each runner's `NAME=value` string, its NUL included, is what
execve counts against Linux's MAX_ARG_STRLEN (131,072 bytes); the layout's
budget is half of it. A last exec (`/usr/bin/env true`) holds the worst
case's strings all at once, as the reporter's environment would.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from m2t import curriculum
from m2t import settings
from m2t.grading import classroom
from m2t.grading.runner import Check
from m2t.grading.runner import LessonResult


def grade_untouched(edition: Path, scratch: Path) -> tuple[dict, dict]:
    """The grading step's outputs (runner -> value) and results.json, on an
    untouched copy of `edition` graded in `scratch`."""
    student = scratch / "student"
    subprocess.run(["cp", "-a", f"{edition}/.", str(student)], check=True)
    env = settings.quiet_env(
        {**os.environ, "GITHUB_OUTPUT": str(scratch / "output")}
    )
    env.pop("M2T_ROOT", None)
    env.pop("GITHUB_STEP_SUMMARY", None)
    command = [sys.executable, "-m", "m2t.grading.classroom"]
    subprocess.run(
        [*command, "--report", "results.json"],
        cwd=student,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    lines = (scratch / "output").read_text(encoding="utf-8").splitlines()
    outputs = dict(line.split("=", 1) for line in lines if line)
    report = json.loads((student / "results.json").read_text())
    return outputs, report


def checks_of(report: dict) -> list[LessonResult]:
    """The checks results.json lists, per lesson (its `tags`: the lesson's
    module and the check's status)."""
    lessons = {lesson.module: lesson for lesson in curriculum.lessons()}
    checks: dict[str, list[Check]] = {module: [] for module in lessons}
    for test in report["tests"]:
        module, status = test["tags"]
        tag = lessons[module].tag
        checks[module].append(
            Check(
                lesson=tag,
                name=test["name"].removeprefix(f"{tag} "),
                nodeid="",
                points=test["max_score"],
                status=status,
                message=test["output"],
                seconds=0.0,
            )
        )
    return [LessonResult(lessons[m], c) for m, c in checks.items()]


def sizes(outputs: dict[str, str]) -> dict[str, int]:
    return {r: classroom.env_bytes(r, v) for r, v in outputs.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.classroom_payload"
    )
    parser.add_argument("--edition", type=Path, help="a built edition")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="m2t-classroom-") as tmp:
        scratch = Path(tmp)
        edition = args.edition
        if edition is None:
            from m2t.authoring import release

            edition = scratch / "edition"
            problems = release.build(edition)
            if problems:
                print("\n".join(problems), file=sys.stderr)
                return 1
        outputs, report = grade_untouched(edition, scratch)
    results = checks_of(report)
    passing = [
        LessonResult(
            r.lesson,
            [dataclasses.replace(c, status="passed") for c in r.checks],
        )
        for r in results
    ]
    worst = classroom.outputs(classroom.worst_case(results))
    cases = {
        "untouched": sizes(outputs),
        "worst": sizes(worst),
        "passing": sizes(classroom.outputs(passing)),
    }
    limit, budget = classroom.MAX_ARG_STRLEN, classroom.BUDGET
    print(
        f"one environment string: limit {limit:,} bytes (MAX_ARG_STRLEN), "
        f"budget {budget:,} (half)\n"
    )
    print(
        f"{'runner':10} {'checks':>6} {'points':>6} "
        + " ".join(f"{case:>10}" for case in cases)
    )
    for r in results:
        rid = classroom.runner_id(r.lesson)
        row = " ".join(f"{cases[case][rid]:>10,}" for case in cases)
        print(f"{rid:10} {len(r.checks):>6} {r.max_score:>6g} {row}")
    print()
    for case, size in cases.items():
        big = max(size, key=size.get)
        print(
            f"{case:9}: largest {big} {size[big]:,} bytes "
            f"({size[big] / limit:.1%} of the limit), all runners "
            f"{sum(size.values()):,} bytes"
        )
    env = {**os.environ, **{classroom.variable(r): v for r, v in worst.items()}}
    subprocess.run(["/usr/bin/env", "true"], env=env, check=True)
    print("worst case, every runner in one environment: exec ok")
    over = [case for case, size in cases.items() if max(size.values()) > budget]
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
