"""Where a training step spends its time, by TensorFlow op type.

    python -m benchmarks.profile_ops mha/seq10
    python -m benchmarks.profile_ops transformer/fra_eng --threads 1

Builds both sides of a case from benchmarks/cases.py, traces a few steps
of each with `tf.profiler`, reads the trace (the XSpace protobuf that
TensorBoard reads) and prints, per op type, the time per step, the calls
per step and the time per call. `--threads 1` runs every op on one
thread, which makes the split steadier on a busy machine.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
from pathlib import Path

from m2t import settings

settings.quiet_tensorflow()


def op_times(step, steps: int) -> dict[str, tuple[float, int]]:
    """{op type: (seconds per step, calls per step)} over `steps` steps."""
    import numpy as np
    import tensorflow as tf
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    step()  # traced and warm before the trace starts
    logdir = tempfile.mkdtemp(prefix="m2t-profile-")
    tf.profiler.experimental.start(logdir)
    for _ in range(steps):
        out = step()
    np.asarray(out)
    tf.profiler.experimental.stop()
    space = xplane_pb2.XSpace()
    space.ParseFromString(next(Path(logdir).rglob("*.xplane.pb")).read_bytes())
    time_ps: collections.Counter = collections.Counter()
    calls: collections.Counter = collections.Counter()
    for plane in space.planes:
        for line in plane.lines:
            if not line.name.startswith("tf_Compute"):
                continue  # op events run on TensorFlow's compute threads
            for event in line.events:
                name = plane.event_metadata[event.metadata_id].name
                if ":" not in name or "::" in name:
                    continue  # executor bookkeeping, not an op
                kind = name.rsplit(":", 1)[1]
                time_ps[kind] += event.duration_ps
                calls[kind] += 1
    return {
        kind: (ps / 1e12 / steps, calls[kind] // steps)
        for kind, ps in time_ps.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", help="a case name, e.g. mha/seq10")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes")
    args = parser.parse_args(argv)
    import tensorflow as tf

    if args.threads:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    from benchmarks import cases

    (case,) = [c for c in cases.cases(args.smoke) if c.name == args.case]
    for side in case.build(case.size):
        times = op_times(side.step, args.steps)
        total = sum(seconds for seconds, _ in times.values())
        print(f"\n{side.label}: {total * 1e3:.1f} ms of ops per step")
        print(f"{'op':<34} {'ms/step':>8} {'calls':>6} {'us/call':>8}")
        ranked = sorted(times.items(), key=lambda kv: -kv[1][0])
        for kind, (seconds, count) in ranked[: args.top]:
            per_call = seconds / max(count, 1) * 1e6
            print(f"{kind:<34} {seconds * 1e3:8.2f} {count:6d} {per_call:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
