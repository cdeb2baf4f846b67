"""Per-lesson grading time, written to docs/grading-times.md.

    python -m benchmarks.grading_times                      # every lesson
    python -m benchmarks.grading_times --lessons 16 18 --output -

Each lesson is graded against solutions/ in a fresh process: "cold" is
from the process start to the grade (TensorFlow's import included: what
`m2t grade NN` costs), "regrade" a second grade in the same process after
a save (what `m2t watch` costs once warm). Lessons without a solution or a
grader are listed as missing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from m2t import settings

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "grading-times.md"


def child(lesson_id: str, started: float) -> None:
    """In the fresh process: grade twice, print one JSON line."""
    settings.quiet_tensorflow()
    from m2t import curriculum
    from m2t.console import quiet_native_stderr
    from m2t.grading import runner as grading

    lesson = curriculum.find(lesson_id)
    folder = Path(tempfile.mkdtemp(prefix="m2t-times-"))
    copy = folder / f"{lesson.module}.py"
    shutil.copy(ROOT / "solutions" / copy.name, copy)
    with quiet_native_stderr(True):
        (first,) = grading.grade([lesson], impl=str(folder))
        cold = time.time() - started
        cold_cpu = time.process_time()
        copy.write_text(copy.read_text() + "\n# saved\n")  # re-executed
        grading.fresh_keras()
        start, start_cpu = time.perf_counter(), time.process_time()
        (second,) = grading.grade([lesson], impl=str(folder))
        warm = time.perf_counter() - start
        warm_cpu = time.process_time() - start_cpu
    shutil.rmtree(folder, ignore_errors=True)
    slowest = max(first.checks, key=lambda c: c.seconds, default=None)
    print(
        json.dumps(
            {
                "status": first.status,
                "again": second.status,
                "checks": len(first.checks),
                "passed": first.passed,
                "points": first.max_score,
                "cold": cold,
                "warm": warm,
                "cold_cpu": cold_cpu,
                "warm_cpu": warm_cpu,
                "checks_s": sum(c.seconds for c in first.checks),
                "slowest": slowest.name if slowest else "",
                "slowest_s": slowest.seconds if slowest else 0.0,
            }
        ),
        flush=True,
    )


def measure(lesson) -> dict | None:
    env = settings.quiet_env()
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.grading_times", "--child"]
        + [lesson.id, repr(time.time())],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    lines = [x for x in result.stdout.splitlines() if x.startswith("{")]
    if result.returncode or not lines:
        print(result.stdout[-2000:], result.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(lines[-1])


def table(rows: list[tuple[object, dict | None, str]]) -> list[str]:
    out = [
        "| lesson | checks | points | cold `m2t grade` | regrade (watch) "
        "| cold, CPU | regrade, CPU | slowest check | on solutions |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for lesson, data, why in rows:
        if data is None:
            out.append(f"| {lesson.tag} |" + " - |" * 7 + f" {why} |")
            continue
        status = data["status"].replace("_", " ")
        if data["again"] != data["status"]:
            status += f", then {data['again']}"
        out.append(
            f"| {lesson.tag} | {data['checks']} | {data['points']:g} "
            f"| {data['cold']:.1f} s | {data['warm']:.1f} s "
            f"| {data['cold_cpu']:.1f} s | {data['warm_cpu']:.1f} s "
            f"| `{data['slowest'][:48]}` {data['slowest_s']:.1f} s "
            f"| {status} |"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", nargs="*", help="ids (default: all)")
    parser.add_argument(
        "--output", default=str(DOC), help="markdown file, or - for stdout"
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.child:
        child(args.child[0], float(args.child[1]))
        return 0
    from m2t import curriculum

    chosen = (
        [curriculum.find(x) for x in args.lessons]
        if args.lessons
        else [x for x in curriculum.lessons() if not x.is_question_list]
    )
    start = time.perf_counter()
    rows = []
    for lesson in chosen:
        if not lesson.reference.exists():
            rows.append((lesson, None, "missing: no solution yet"))
        elif not lesson.grader.exists():
            rows.append((lesson, None, "missing: no grader yet"))
        else:
            data = measure(lesson)
            rows.append((lesson, data, "" if data else "the grade crashed"))
        print(f"{lesson.tag} done", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - start
    base, base_cpu = [], []
    for _ in range(3):
        t = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "-c", "import tensorflow"],
            env=settings.quiet_env(),
            capture_output=True,
            check=False,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        base.append(time.perf_counter() - t)
        base_cpu.append(
            after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        )
    missing = [x.tag for x, data, _ in rows if data is None]
    doc = [
        "# Grading time per lesson",
        "",
        "Written by `python -m benchmarks.grading_times` (every lesson "
        "against solutions/, one fresh process each). *cold* is process "
        "start to grade, TensorFlow's import included (`m2t grade NN`); "
        "*regrade* a second grade in the same process after a save (what "
        "`m2t watch` costs once warm; its first failing check shows "
        "sooner). CPU is user + system time: wall times swing with the "
        "load of other jobs on the machine, so compare the CPU columns. "
        'A bare `python -c "import tensorflow"` took '
        f"{min(base):.1f} s wall, {min(base_cpu):.1f} s CPU (best of 3) on "
        "the same machine.",
        "",
        f"Machine: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f} at the end; Python "
        f"{platform.python_version()}; {time.strftime('%Y-%m-%d')}; "
        f"{seconds / 60:.0f} min in all.",
        "",
        *table(rows),
        "",
        "Missing: " + (", ".join(missing) if missing else "none") + ".",
        "",
    ]
    text = "\n".join(doc)
    if args.output == "-":
        print(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
