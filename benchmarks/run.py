"""Time our solution layers against Keras's, the machine's matmul peak,
`m2t train` throughput and grading latency, in one run.

    python -m benchmarks.run                       # everything (~15 min)
    python -m benchmarks.run --only mha gru_lm     # some comparisons
    python -m benchmarks.run --smoke               # tiny sizes, seconds
    python -m benchmarks.run --table benchmarks/results.json   # tables only

Writes the raw numbers to benchmarks/results.json (or --out) and prints a
Markdown table. See benchmarks/README.md for what each number means.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path

from m2t import settings

settings.quiet_tensorflow()

HERE = Path(__file__).resolve().parent


def machine() -> dict:
    """What ran the benchmark: cores, load, library versions."""
    import keras
    import tensorflow as tf

    threading = tf.config.threading
    info = {
        "cpus": os.cpu_count(),
        "load_avg_1_5_15": list(os.getloadavg()),
        "python": platform.python_version(),
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
        "platform": platform.platform(),
        # 0 means TensorFlow's default: one thread per core.
        "intra_op_threads": threading.get_intra_op_parallelism_threads(),
        "inter_op_threads": threading.get_inter_op_parallelism_threads(),
    }
    try:
        import keras_hub

        info["keras_hub"] = keras_hub.__version__
    except ImportError:
        info["keras_hub"] = None
    return info


def run_cases(
    args: argparse.Namespace,
    records: list[dict] | None = None,
    save: Callable[[], None] = lambda: None,
) -> list[dict]:
    """Time every case, appending each record to `records` and calling
    `save` after each, so a stopped run keeps the cases it finished."""
    from benchmarks import cases as cases_module
    from benchmarks.timing import compare

    records = [] if records is None else records
    for case in cases_module.cases(smoke=args.smoke):
        if args.only and not any(case.name.startswith(o) for o in args.only):
            continue
        record = {"name": case.name, "what": case.what, "size": case.size}
        print(f"-- {case.name}: {case.what}", flush=True)
        start = time.perf_counter()
        try:
            ours, theirs = case.build(case.size)
        except cases_module.Unavailable as error:
            record["skipped"] = str(error)
            print(f"   skipped: {error}", flush=True)
            records.append(record)
            save()
            continue
        record.update(
            compare(ours, theirs, reps=args.reps, target_s=args.target_s)
        )
        record["wall_s"] = time.perf_counter() - start
        three = "{min:.2f} {median:.2f} {max:.2f}"
        print(
            "   ours/theirs wall "
            + three.format(**record["ratio"])
            + "  cpu "
            + three.format(**record["cpu_ratio"])
            + f"  ({record['wall_s']:.0f}s)",
            flush=True,
        )
        records.append(record)
        save()
    return records


# Steps per epoch for `m2t train` throughput: image models are capped (an
# epoch of AlexNet at 224x224 takes many minutes on two cores); sequence
# models run their whole (short) epochs.
IMAGE_MODELS = ("mlp", "alexnet", "vgg", "nin", "googlenet", "resnet18")
IMAGE_MODELS += ("densenet",)
IMAGE_MAX_STEPS = 4


def train_throughput(models: Sequence[str], smoke: bool) -> list[dict]:
    """`m2t train MODEL --epochs 2` in a fresh process, per model.

    Throughput is what report.json says: units (images, tokens) per second
    over the second epoch (the first one traces and warms up), validation
    left out, as `m2t train` measures it, with the recipe's `op_threads`.
    """
    import tempfile

    records = []
    for name in models:
        out = Path(tempfile.mkdtemp(prefix=f"m2t-bench-train-{name}-"))
        args = ["train", name, "--epochs", "2", "--verbose", "0"]
        if smoke:
            args.append("--smoke")
        elif name in IMAGE_MODELS:
            args += ["--set", f"max_steps={IMAGE_MAX_STEPS}"]
        cmd = [sys.executable, "-m", "m2t", *args, "--out", str(out)]
        print(f"-- m2t train {name}", flush=True)
        start = time.perf_counter()
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=1800, check=False
        )
        record = {
            "model": name,
            "command": "m2t " + " ".join(args),
            "wall_s": time.perf_counter() - start,
        }
        report = out / "report.json"
        if proc.returncode != 0 or not report.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:]
            record["failed"] = tail[0][:200] if tail else "no report"
            print(f"   failed: {record['failed']}", flush=True)
        else:
            data = json.loads(report.read_text())
            last = data["history"][-1] if data["history"] else {}
            record.update(
                throughput=data["throughput"]["value"],
                unit=data["throughput"]["unit"],
                global_batch=data["global_batch"],
                steps_per_epoch=data["steps_per_epoch"],
                epoch_seconds=last.get("epoch_seconds"),
                units_per_epoch=last.get(data["throughput"]["unit"][:-2]),
                settings=data["settings"],
            )
            print(
                f"   {record['throughput']:,.0f} {record['unit']}", flush=True
            )
        shutil.rmtree(out, ignore_errors=True)
        records.append(record)
    return records


def grading_latency(lesson: str, runs: int) -> dict:
    """One lesson: benchmarks/grading_latency.py's cold start. All lessons:
    `m2t grade` of every lesson, on the solutions and on untouched
    skeletons (a scratch copy of lessons/, so no progress is saved)."""
    import tempfile

    from benchmarks import grading_latency as latency
    from m2t import curriculum

    print(f"-- grading latency: lesson {lesson}", flush=True)
    one = latency.cold(curriculum.find(lesson), runs)
    skeletons = Path(tempfile.mkdtemp(prefix="m2t-bench-lessons-")) / "l"
    shutil.copytree(HERE.parent / "lessons", skeletons)
    grade = [sys.executable, "-m", "m2t", "grade", "--unconfined", "--impl"]
    every = {}
    for kind, impl in (("solutions", "solutions"), ("skeletons", skeletons)):
        print(f"-- grading latency: all lessons, {kind}", flush=True)
        wall, cpu = latency._timed([*grade, str(impl)])
        every[kind] = {"wall_s": wall, "cpu_s": cpu}
    shutil.rmtree(skeletons.parent, ignore_errors=True)
    return {"one_lesson": one, "all_lessons": every}


def markdown(results: dict) -> str:
    """The tables for the README."""
    three = "{min:.2f} / {median:.2f} / {max:.2f}"
    lines = [
        "| case | ours | theirs | wall ratio min / med / max "
        "| CPU ratio min / med / max | ours units/s | theirs units/s |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results.get("cases", []):
        if "skipped" in r:
            lines.append(f"| {r['name']} | skipped: {r['skipped']} ||||||")
            continue
        o, t = r["ours"], r["theirs"]
        lines.append(
            f"| {r['name']} | {o['label']} | {t['label']} "
            f"| {three.format(**r['ratio'])} "
            f"| {three.format(**r['cpu_ratio'])} "
            f"| {o['units_per_s']:,.0f} | {t['units_per_s']:,.0f} |"
        )
    peak = results.get("matmul_peak")
    if peak:
        best = peak["peak_gflop_per_s"]
        lines += [
            "",
            f"float32 matmul peak: {best:.1f} GFLOP/s (best of "
            + ", ".join(f"{n}x{n}" for n in peak["sizes"])
            + ")",
            "",
            "| case | side | GFLOP per step | GFLOP/s (median step) "
            "| share of peak |",
            "| --- | --- | --- | --- | --- |",
        ]
        for r in results.get("cases", []):
            for key in ("ours", "theirs"):
                side = r.get(key, {})
                if "gflop_per_s" not in side:
                    continue
                lines.append(
                    f"| {r['name']} | {side['label']} "
                    f"| {side['gflop_per_step']:.2f} "
                    f"| {side['gflop_per_s']:.1f} "
                    f"| {side['gflop_per_s'] / best:.0%} |"
                )
    if results.get("train"):
        lines += [
            "",
            "| m2t train | throughput | batch | steps/epoch | command |",
            "| --- | --- | --- | --- | --- |",
        ]
        for r in results["train"]:
            if "failed" in r:
                lines.append(
                    f"| {r['model']} | failed: {r['failed']} ||| "
                    f"`{r['command']}` |"
                )
                continue
            lines.append(
                f"| {r['model']} | {r['throughput']:,.0f} {r['unit']} "
                f"| {r['global_batch']} | {r['steps_per_epoch']} "
                f"| `{r['command']}` |"
            )
    grading = results.get("grading")
    if grading:
        lines += ["", *grading["one_lesson"], ""]
        lines.append("| all lessons | wall | CPU |")
        lines.append("| --- | --- | --- |")
        for kind, t in grading["all_lessons"].items():
            lines.append(
                f"| `m2t grade --impl {kind}` | {t['wall_s']:.1f} s "
                f"| {t['cpu_s']:.1f} s |"
            )
    return "\n".join(lines)


def peak(smoke: bool) -> dict:
    """The machine's float32 matmul peak: the best rate over a few sizes."""
    from benchmarks.timing import matmul_peak

    sizes = [(64, 2)] if smoke else [(512, 80), (1024, 10), (2048, 2)]
    runs = [matmul_peak(n, calls, reps=2 if smoke else 5) for n, calls in sizes]
    best = max(runs, key=lambda r: r["peak_gflop_per_s"])
    print(f"-- matmul peak: {best['peak_gflop_per_s']:.1f} GFLOP/s", flush=True)
    return {
        "sizes": [r["n"] for r in runs],
        "runs": runs,
        "peak_gflop_per_s": best["peak_gflop_per_s"],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes")
    parser.add_argument("--only", nargs="*", help="case name prefixes")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument(
        "--target-s",
        type=float,
        default=None,
        help="seconds per timing of one side (default 0.5, smoke 0.01)",
    )
    parser.add_argument(
        "--train",
        nargs="*",
        default=None,
        metavar="MODEL",
        help="m2t train models to time (default: all; none with --smoke)",
    )
    parser.add_argument("--no-train", action="store_true")
    parser.add_argument("--no-grading", action="store_true")
    parser.add_argument("--lesson", default="16", help="for grading latency")
    parser.add_argument("--grading-runs", type=int, default=3)
    parser.add_argument(
        "--op-threads",
        type=int,
        default=0,
        help="threads one TensorFlow op may use (0: TensorFlow's default, "
        "all cores; 1: what m2t train uses for small models on CPU)",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="JSON results file"
    )
    parser.add_argument(
        "--table",
        type=Path,
        metavar="JSON",
        help="print the tables of an earlier run's JSON and stop",
    )
    args = parser.parse_args(argv)
    if args.table:
        print(markdown(json.loads(args.table.read_text())))
        return 0
    if args.op_threads:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(args.op_threads)
    if args.reps is None:
        args.reps = 2 if args.smoke else 7
    if args.target_s is None:
        args.target_s = 0.01 if args.smoke else 0.5
    if args.out is None and not args.smoke:
        args.out = HERE / "results.json"
    if args.train is None:
        args.train = [] if args.smoke or args.only else _train_models()
    if args.no_train:
        args.train = []
    grading = not (args.smoke or args.only or args.no_grading)

    start = time.perf_counter()
    results = {
        "command": "python -m benchmarks.run "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine(),
        "reps": args.reps,
        "target_s": args.target_s,
    }

    def save() -> None:  # after each section: a long run keeps what it has
        results["machine"]["load_avg_after"] = list(os.getloadavg())
        results["wall_s"] = time.perf_counter() - start
        if args.out is not None:  # whole or not at all, for a reader
            tmp = args.out.with_suffix(args.out.suffix + ".tmp")
            tmp.write_text(json.dumps(results, indent=1) + "\n")
            tmp.replace(args.out)

    results["matmul_peak"] = peak(args.smoke)
    results["cases"] = []
    run_cases(args, results["cases"], save)
    if args.train:
        results["train"] = train_throughput(args.train, args.smoke)
        save()
    if grading:
        results["grading"] = grading_latency(args.lesson, args.grading_runs)
        save()
    print()
    print(markdown(results))
    if args.out is not None:
        print(f"\nwrote {args.out}")
    return 0


def _train_models() -> list[str]:
    from training import recipes

    return [r.name for r in recipes.RECIPES.values() if r.available()]


if __name__ == "__main__":
    sys.exit(main())
