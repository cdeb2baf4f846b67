"""Per-lesson grading time, written to docs/grading-times.md.

    python -m benchmarks.grading_times                      # every lesson
    python -m benchmarks.grading_times --lessons 16 18 --runs 5 --output -

For each lesson, side by side: a bare `python -c "import tensorflow"`,
then, in a fresh process, `m2t grade NN --impl DIR` on a copy of the
lesson's solution (the command line's own `main`: what a student's cold
`m2t grade NN` costs, TensorFlow's import included), then in that same
process a regrade after a save (what `m2t watch` costs once warm). CPU time
(user + system) is the measure: on a shared machine wall time swings with
the other jobs, so each row also gives the load average when it started.
Each lesson is measured `--runs` times (3) and the medians reported: one
pair's ratio swings by 15% from one run to the next here.
Lessons without a solution or a grader are listed as missing; the
capstones, whose grade trains, are measured in their own sections.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from m2t import settings

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "grading-times.md"
SECTION = "\n## "
"""Where the doc's part written by benchmarks/grading_latency.py begins
(kept when this table is rewritten)."""


def child(lesson_id: str) -> None:
    """In the fresh process: `m2t grade`, then a regrade; one JSON line."""
    settings.quiet_tensorflow()
    from m2t import curriculum
    from m2t.cli import main as m2t_main
    from m2t.console import quiet_native_stderr
    from m2t.grading import runner as grading

    lesson = curriculum.find(lesson_id)
    folder = Path(tempfile.mkdtemp(prefix="m2t-times-"))
    copy = folder / lesson.filename
    shutil.copy(lesson.reference, copy)
    with quiet_native_stderr(True):
        with contextlib.redirect_stdout(io.StringIO()):
            code = m2t_main(
                ["grade", lesson.id, "--unconfined", "--impl", str(folder)]
            )
        copy.write_text(copy.read_text() + "\n# saved\n")  # re-executed
        grading.fresh_keras()
        start, start_cpu = time.perf_counter(), time.process_time()
        (again,) = grading.grade([lesson], impl=str(folder))
        warm = time.perf_counter() - start
        warm_cpu = time.process_time() - start_cpu
    shutil.rmtree(folder, ignore_errors=True)
    slowest = max(again.checks, key=lambda c: c.seconds, default=None)
    print(
        json.dumps(
            {
                "status": "passed" if code == 0 else "failed",
                "again": again.status,
                "checks": len(again.checks),
                "points": again.max_score,
                "warm": warm,
                "warm_cpu": warm_cpu,
                "slowest": slowest.name if slowest else "",
                "slowest_s": slowest.seconds if slowest else 0.0,
            }
        ),
        flush=True,
    )


def _timed(cmd: list[str]) -> tuple[float, float, str]:
    """(wall, CPU, stdout) of one command; CPU = the child's user + sys."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(
        cmd,
        cwd=ROOT,
        env=settings.quiet_env(),
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if result.returncode:
        print(result.stdout[-2000:], result.stderr[-2000:], file=sys.stderr)
    return wall, cpu, result.stdout


def measure(lesson, runs: int) -> dict | None:
    """The bare import, then the lesson's grade, one right after the
    other (the same load on the machine for both), `runs` times: the
    medians of each figure, and of the ratio of each pair (single runs of
    either swing by 15% on a shared machine)."""
    samples = []
    for _ in range(runs):
        load = os.getloadavg()[0]
        _, import_cpu, _ = _timed([sys.executable, "-c", "import tensorflow"])
        _, cpu, out = _timed(
            [sys.executable, "-m", "benchmarks.grading_times", "--child"]
            + [lesson.id]
        )
        lines = [x for x in out.splitlines() if x.startswith("{")]
        if not lines:
            return None
        data = json.loads(lines[-1])
        # the whole process's CPU less the regrade: start-up and exit
        # counted as for the bare import
        cold = cpu - data["warm_cpu"]
        data.update(
            load=load,
            import_cpu=import_cpu,
            cold_cpu=cold,
            ratio=cold / import_cpu,
        )
        samples.append(data)
    summary = dict(samples[-1])  # checks, points, the slowest check
    for key in ("load", "import_cpu", "cold_cpu", "ratio", "warm_cpu"):
        summary[key] = statistics.median(d[key] for d in samples)
    summary["ratios"] = sorted(d["ratio"] for d in samples)
    for key in ("status", "again"):  # passed only if every run passed
        passed = all(d[key] == "passed" for d in samples)
        summary[key] = "passed" if passed else "failed"
    return summary


def table(rows: list[tuple[object, dict | None, str]]) -> list[str]:
    out = [
        "| lesson | checks | points | `import tensorflow`, CPU "
        "| cold `m2t grade`, CPU | grade / import | regrade (watch), CPU "
        "| slowest check (regrade, wall) | load | on solutions |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |",
    ]
    for lesson, data, why in rows:
        if data is None:
            out.append(f"| {lesson.tag} |" + " - |" * 8 + f" {why} |")
            continue
        status = data["status"].replace("_", " ")
        if data["again"] != data["status"]:
            status += f", then {data['again']}"
        spread = data["ratios"]
        ratio = f"{data['ratio']:.2f}x"
        if len(spread) > 1:
            ratio += f" ({spread[0]:.2f}-{spread[-1]:.2f})"
        out.append(
            f"| {lesson.tag} | {data['checks']} | {data['points']:g} "
            f"| {data['import_cpu']:.1f} s | {data['cold_cpu']:.1f} s "
            f"| {ratio} | {data['warm_cpu']:.1f} s "
            f"| `{data['slowest'][:44]}` {data['slowest_s']:.1f} s "
            f"| {data['load']:.1f} | {status} |"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", nargs="*", help="ids (default: all)")
    parser.add_argument(
        "--output", default=str(DOC), help="markdown file, or - for stdout"
    )
    parser.add_argument(
        "--runs", type=int, default=3, help="pairs per lesson (median)"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.child:
        child(args.child)
        return 0
    from m2t import curriculum

    chosen = (
        [curriculum.find(x) for x in args.lessons]
        if args.lessons
        else [
            x
            for x in curriculum.lessons()
            if not x.is_question_list and not x.parts
        ]
    )
    capstones = [x.tag for x in curriculum.lessons() if x.parts]
    start = time.perf_counter()
    rows = []
    for lesson in chosen:
        if not lesson.reference.exists():
            rows.append((lesson, None, "missing: no solution yet"))
        elif not lesson.grader.exists():
            rows.append((lesson, None, "missing: no grader yet"))
        else:
            data = measure(lesson, args.runs)
            rows.append((lesson, data, "" if data else "the grade crashed"))
        print(f"{lesson.tag} done", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - start
    missing = [x.tag for x, data, _ in rows if data is None]
    measured = [data for _, data, _ in rows if data]
    ratios = [d["ratio"] for d in measured]
    loads = [d["load"] for d in measured]
    summary = (
        f"Cold `m2t grade` took {min(ratios):.2f}x to {max(ratios):.2f}x "
        f"(median {statistics.median(ratios):.2f}x) the CPU time of a bare "
        "TensorFlow import measured just before it."
        if ratios
        else "Nothing was measured."
    )
    doc = [
        "# Grading time per lesson",
        "",
        "Written by `python -m benchmarks.grading_times`. For each lesson, "
        'side by side: a bare `python -c "import tensorflow"`, then in a '
        "fresh process `m2t grade NN --impl DIR` on a copy of the lesson's "
        "solution (cold: TensorFlow's import included), then in that same "
        "process a regrade after a save (what `m2t watch` costs once warm; "
        "its first failing check shows sooner). CPU is user + system time: "
        "wall times swing with the load of other jobs on the machine, so "
        "compare the CPU columns. Each lesson's figures are the medians of "
        f"{args.runs} such pairs, one after the other; *grade / import* is "
        "the median of the pairs' ratios, the range in brackets. *load* is "
        "the 1-minute load average when a pair started (median). " + summary,
        "",
        f"Machine: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load average "
        + (f"{min(loads):.1f} to {max(loads):.1f}" if loads else "?")
        + f" during the run; Python {platform.python_version()}; "
        f"{time.strftime('%Y-%m-%d')}; {seconds / 60:.0f} min in all.",
        "",
        *table(rows),
        "",
        "Missing: " + (", ".join(missing) if missing else "none") + ".",
        "",
        f"Not in the table: the capstones ({', '.join(capstones)}), whose "
        "grade trains what the student composed from the parts of earlier "
        "lessons (minutes, by design): their times are in their own "
        "sections below.",
        "",
    ]
    text = "\n".join(doc)
    if args.output != "-" and Path(args.output).exists():  # keep the rest
        old = Path(args.output).read_text(encoding="utf-8")
        # the sections after this table (the capstones, watch), by hand
        # or from other benchmarks
        if SECTION in old:
            text += "\n" + old[old.index(SECTION) + 1 :]
    if args.output == "-":
        print(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
