"""How fast the student loop answers: a cold `m2t grade` against a bare
TensorFlow import, and `m2t watch`'s verdict after a save.

    python -m benchmarks.grading_latency                # lesson 16
    python -m benchmarks.grading_latency --lessons 10 --runs 7
    python -m benchmarks.grading_latency --lessons all --skip-cold

Cold: `python -c "import tensorflow"` and `m2t grade LESSON` (on the
skeleton and on the solution, each in a scratch folder so no state is
saved) run alternately, `--runs` times each; we report the median wall
time, the median CPU time (user + sys, steadier on a busy machine) and the
median of the per-run ratios grade / import.

Watch: one `m2t watch LESSON` process on a scratch folder, started on the
solution (so the runner knows what each check costs and runs the quick
ones first); the script then saves each known mistake (solutions/mutants),
the skeleton and the solution in turn, and times, from the save, the
verdict (the first failing check, or "passes") and the end of the run. The
process keeps TensorFlow loaded, so this is the loop's steady state.
`--lessons all` does every lesson with known mistakes but the capstones
(their grade trains for minutes; `--lessons 23` measures one, its parts'
solutions copied beside it).
"""

from __future__ import annotations

import argparse
import os
import queue
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from m2t import settings

ROOT = Path(__file__).resolve().parent.parent
ENV = {**settings.quiet_env(), "M2T_NO_CLEAR": "1"}


def _timed(cmd: list[str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one command, cpu = user + sys of the child."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        cmd, env=ENV, cwd=ROOT, capture_output=True, check=False, text=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def _versions(lesson) -> dict[str, str]:
    """The skeleton, each known mistake and the solution of `lesson`."""
    from m2t.authoring import make_lessons
    from m2t.authoring import mutants

    solution = (ROOT / "solutions" / f"{lesson.module}.py").read_text()
    out = {"skeleton": make_lessons.cut(solution, f"{lesson.module}.py")}
    for name, edits in mutants.catalogue(lesson.module).items():
        out[f"mistake {name}"] = mutants.mutate(solution, edits, name)
    out["solution"] = solution
    return out


def cold(lesson, runs: int) -> list[str]:
    versions = _versions(lesson)
    folders = {}
    for kind in ("skeleton", "solution"):
        folder = Path(tempfile.mkdtemp(prefix=f"m2t-bench-{kind}-"))
        (folder / f"{lesson.module}.py").write_text(versions[kind])
        folders[kind] = folder
    commands = {
        "python -c 'import tensorflow'": [
            sys.executable,
            "-c",
            "import tensorflow",
        ],
    }
    for kind, folder in folders.items():
        commands[f"m2t grade {lesson.id} ({kind})"] = [
            sys.executable,
            "-m",
            "m2t",
            "grade",
            lesson.id,
            "--unconfined",
            "--impl",
            str(folder),
        ]
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in commands}
    _timed(commands["python -c 'import tensorflow'"])  # warm the disk cache
    for _ in range(runs):
        for name, cmd in commands.items():
            times[name].append(_timed(cmd))
    for folder in folders.values():
        shutil.rmtree(folder, ignore_errors=True)
    base = times["python -c 'import tensorflow'"]
    lines = [
        f"cold start, {runs} runs each, alternating "
        f"({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})",
        "",
        "| command | wall median | cpu median | wall / import | cpu / import |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, samples in times.items():
        walls = [w for w, _ in samples]
        cpus = [c for _, c in samples]
        wall_ratio = statistics.median(
            w / b for (w, _), (b, _) in zip(samples, base, strict=True)
        )
        cpu_ratio = statistics.median(
            c / b for (_, c), (_, b) in zip(samples, base, strict=True)
        )
        lines.append(
            f"| `{name}` | {statistics.median(walls):.2f} s "
            f"| {statistics.median(cpus):.2f} s | {wall_ratio:.2f}x "
            f"| {cpu_ratio:.2f}x |"
        )
    return lines


class _Lines:
    """The lines a process prints, with the time each arrived."""

    def __init__(self, stream):
        self.queue: queue.Queue[tuple[float, str]] = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self.queue.put((time.perf_counter(), line.rstrip("\n")))
        self.queue.put((time.perf_counter(), "<eof>"))

    def until(self, predicate, timeout: float) -> tuple[float, str]:
        deadline = time.monotonic() + timeout
        while True:
            stamp, line = self.queue.get(
                timeout=max(deadline - time.monotonic(), 0.01)
            )
            if line == "<eof>":
                raise RuntimeError("m2t watch ended early")
            if predicate(line):
                return stamp, line


def _verdict(line: str) -> bool:
    return line.startswith(("  [", "  ok  "))


def _finished(line: str) -> bool:
    return line.startswith("  ok  ") or " checks pass, " in line


VERDICT_S = 1.0
"""The aim: a mistake's first failing check within this long of the save."""


def watch(
    lesson, saves: int | None = None, timeout: float = 600.0
) -> list[str]:
    versions = _versions(lesson)
    order = [k for k in versions if k.startswith("mistake ")]
    order += ["skeleton", "solution"]
    saves = len(order) if saves is None else saves
    folder = Path(tempfile.mkdtemp(prefix="m2t-bench-watch-"))
    path = folder / f"{lesson.module}.py"
    path.write_text(versions["solution"])
    for part in lesson.parts:  # a capstone composes the parts' solutions
        shutil.copy(ROOT / "solutions" / f"{part}.py", folder)
    proc = subprocess.Popen(
        [sys.executable, "-m", "m2t", "watch", lesson.id, "--impl"]
        + [str(folder)],
        env=ENV,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    out = _Lines(proc.stdout)
    rows = []
    try:
        start = time.perf_counter()
        out.until(_finished, timeout)
        out.until(lambda line: "Watching" in line, timeout)
        first = time.perf_counter() - start
        for i in range(saves):
            kind = order[i % len(order)]
            saved = time.perf_counter()
            path.write_text(versions[kind] + f"\n# save {i}\n")
            verdict_at, verdict = out.until(_verdict, timeout)
            done_at = verdict_at
            if not _finished(verdict):
                done_at, _ = out.until(_finished, timeout)
            out.until(lambda line: "Watching" in line, timeout)
            rows.append(
                (kind, verdict_at - saved, done_at - saved, verdict.strip())
            )
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
    mistakes = [v for k, v, _, _ in rows if k.startswith("mistake ")]
    quick = sum(v <= VERDICT_S for v in mistakes)
    lines = [
        f"`m2t watch {lesson.id}` (load {os.getloadavg()[0]:.1f}): first "
        f"grade, on the solution (TensorFlow start-up included) {first:.2f} "
        f"s; then, from each save ({quick} of {len(mistakes)} mistakes "
        f"within {VERDICT_S:g} s):",
        "",
        "| saved | verdict after | run done after | verdict |",
        "| --- | --- | --- | --- |",
    ]
    for kind, verdict, done, text in rows:
        text = text.replace("|", "\\|")[:70]
        lines.append(f"| {kind} | {verdict:.2f} s | {done:.2f} s | {text} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--lessons", nargs="*", default=["16"], help="ids, or all"
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--saves", type=int, help="saves per watch (each version once)"
    )
    parser.add_argument("--skip-cold", action="store_true")
    parser.add_argument("--skip-watch", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from m2t import curriculum
    from m2t.authoring import mutants

    # `all`: every lesson with known mistakes but the capstones, whose
    # grade trains (minutes a save, by design; name them to measure them)
    chosen = (
        [
            x
            for x in curriculum.graded()
            if mutants.catalogue(x.module) and not x.parts
        ]
        if args.lessons == ["all"]
        else [curriculum.find(x) for x in args.lessons]
    )
    for lesson in chosen:
        if not args.skip_cold:
            print("\n".join(cold(lesson, args.runs)), end="\n\n", flush=True)
        if not args.skip_watch:
            print("\n".join(watch(lesson, args.saves)), end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
