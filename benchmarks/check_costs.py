"""What each check of a lesson costs: CPU and wall seconds per check, the
slowest first, one pytest run in this process.

    python -m benchmarks.check_costs 03 12
    python -m benchmarks.check_costs 12 --impl /tmp/mutant --top 5

CPU is this process's time (`time.process_time`: every thread, the
probes' TensorFlow ops included, as probes run in process under pytest);
wall time swings with the load of other jobs on the machine, CPU time much
less, so compare CPU figures across runs. Collection and TensorFlow's
import are outside the figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import pytest

from m2t import curriculum


class _Costs:
    """A pytest plugin: (cpu, wall) seconds of each check's call."""

    def __init__(self) -> None:
        self.seconds: dict[str, tuple[float, float]] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        cpu, wall = time.process_time(), time.perf_counter()
        yield
        self.seconds[item.name] = (
            time.process_time() - cpu,
            time.perf_counter() - wall,
        )


def costs(lesson: str, impl: str) -> dict[str, tuple[float, float]]:
    """{check name: (cpu s, wall s)} of one lesson's grader on `impl`."""
    plugin = _Costs()
    grader = curriculum.find(lesson).grader
    quiet = ["-q", "-p", "no:xdist", "-p", "no:cacheprovider"]
    pytest.main([str(grader), "--impl", impl, *quiet], plugins=[plugin])
    return plugin.seconds


def table(lesson: str, seconds: dict[str, tuple[float, float]], top: int):
    cpu = sum(c for c, _ in seconds.values())
    wall = sum(w for _, w in seconds.values())
    lines = [
        f"{lesson}: {len(seconds)} checks, {cpu:.2f} s CPU, {wall:.2f} s "
        f"wall (load {os.getloadavg()[0]:.1f})",
        "",
        "| check | CPU s | wall s |",
        "| --- | ---: | ---: |",
    ]
    slowest = sorted(seconds.items(), key=lambda kv: -kv[1][0])[:top]
    lines += [f"| `{n}` | {c:.2f} | {w:.2f} |" for n, (c, w) in slowest]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="+", help="lesson ids")
    parser.add_argument("--impl", default="solutions")
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args(argv)
    if args.top < 1:
        raise ValueError(f"--top must be at least 1, got {args.top}")
    out = []
    for lesson in args.lessons:
        out += [*table(lesson, costs(lesson, args.impl), args.top), ""]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
