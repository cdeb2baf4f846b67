"""What one Gradescope per-lesson grade costs: peak memory (the sum of the
resident sets of run_autograder and every process under it, judge and
worker together, sampled every 0.1 s) and time (wall, and the CPU seconds
of every process of the tree, as last seen), for the settings in
docs/instructors.md.

    python -m benchmarks.gradescope_bundle 16 [--submission DIR]

builds the bundle of the lesson with `m2t release --gradescope`, lays it
out as Gradescope's /autograder in a temporary folder, uploads the
solution (or DIR) and runs the bundle's own run_autograder with this
Python. Run it as root (as Gradescope does) on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

from m2t import ROOT
from m2t import curriculum
from m2t import settings


def tree(pid: int, cpu: dict[int, float]) -> float:
    """The resident memory of `pid` and all its descendants, in MB; each
    one's CPU seconds so far recorded in `cpu` (by pid: a process that
    ended keeps its last figure)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    ticks: dict[int, float] = {}
    hertz = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = dict(
            line.split(":", 1) for line in status.splitlines() if ":" in line
        )
        ppid = int(fields.get("PPid", "0"))
        children.setdefault(ppid, []).append(int(entry))
        rss[int(entry)] = int(fields.get("VmRSS", "0 kB").split()[0])
        after = stat.rsplit(")", 1)[1].split()  # fields from the third on
        ticks[int(entry)] = (int(after[11]) + int(after[12])) / hertz
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        if p in ticks:
            cpu[p] = max(cpu.get(p, 0.0), ticks[p])
        stack += children.get(p, [])
    return total / 1024


def measure(lesson: str, submission: Path | None) -> dict[str, float]:
    """Grade the lesson's solution (or `submission`) with its bundle."""
    (item,) = curriculum.select([lesson])
    home = Path(tempfile.mkdtemp(prefix="m2t-gradescope-bench-"))
    home.chmod(0o755)
    try:
        zipped = home / "autograder.zip"
        subprocess.run(
            [sys.executable, "-m", "m2t", "release", "--gradescope", zipped]
            + [item.tag],
            check=True,
            capture_output=True,
        )
        root = home / "autograder"
        with zipfile.ZipFile(zipped) as z:
            for info in z.infolist():
                path = z.extract(info, root / "source")
                os.chmod(path, (info.external_attr >> 16) & 0o777 or 0o644)
        shutil.copy2(root / "source/run_autograder", root / "run_autograder")
        (root / "submission").mkdir()
        if submission is None:
            shutil.copy(
                ROOT / "solutions" / f"{item.module}.py", root / "submission"
            )
        else:
            shutil.copytree(submission, root / "submission", dirs_exist_ok=True)
        env = settings.quiet_env(
            {
                **os.environ,
                "M2T_AUTOGRADER_ROOT": str(root),
                "M2T_PYTHON": sys.executable,
            }
        )
        env.pop("M2T_ROOT", None)
        start = time.monotonic()
        proc = subprocess.Popen([root / "run_autograder"], cwd=root, env=env)
        peak = [0.0]
        cpu: dict[int, float] = {}

        def sample() -> None:
            while proc.poll() is None:
                peak[0] = max(peak[0], tree(proc.pid, cpu))
                time.sleep(0.1)

        watcher = threading.Thread(target=sample, daemon=True)
        watcher.start()
        proc.wait()
        watcher.join()
        import json

        data = json.loads((root / "results" / "results.json").read_text())
        return {
            "peak_mb": peak[0],
            "wall_s": time.monotonic() - start,
            "cpu_s": sum(cpu.values()),
            "score": data.get("score", 0),
            "max_score": data.get("max_score", 0),
        }
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lesson")
    parser.add_argument("--submission", type=Path)
    args = parser.parse_args()
    got = measure(args.lesson, args.submission)
    print(
        f"l{args.lesson}: peak {got['peak_mb']:.0f} MB (judge and worker), "
        f"{got['wall_s']:.1f} s wall, {got['cpu_s']:.1f} s CPU, "
        f"score {got['score']:g}/{got['max_score']:g}"
    )


if __name__ == "__main__":
    main()
