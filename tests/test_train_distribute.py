"""`m2t train` under real strategies, through the command line: two
logical CPUs (`--strategy mirrored`), two worker processes on 127.0.0.1,
runs killed with SIGKILL and resumed.

Each case runs in fresh processes: the logical devices and the cluster
must be set up before TensorFlow initialises. The short form (CI): one
model of each family, `--smoke`.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from m2t import settings

ROOT = Path(__file__).resolve().parent.parent
ENV = settings.quiet_env({**os.environ, "PYTHONHASHSEED": "0"})
ENV.pop("TF_CONFIG", None)

# One model of each family; the three translation models each (their
# embeddings' sparse gradients once broke every strategy but one device).
FAMILIES = ["mlp", "resnet18", "ar_mlp", "gru", "seq2seq", "bahdanau"]
FAMILIES += ["transformer"]


def weights(path: Path) -> dict[str, np.ndarray]:
    """Every array in a `.weights.h5` file but the optimizer's, by path."""
    arrays = {}
    with h5py.File(path, "r") as f:
        f.visititems(
            lambda name, item: (
                arrays.__setitem__(name, item[()])
                if isinstance(item, h5py.Dataset)
                and not name.startswith("optimizer")
                else None
            )
        )
    return arrays


def assert_same_weights(a: Path, b: Path, **tolerance) -> None:
    """Equal weights: exactly, or within `tolerance` (assert_allclose)."""
    wa, wb = weights(a), weights(b)
    assert wa.keys() == wb.keys()
    for name in wa:
        if tolerance:
            np.testing.assert_allclose(
                wa[name], wb[name], err_msg=name, **tolerance
            )
        else:
            np.testing.assert_array_equal(wa[name], wb[name], err_msg=name)


def report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


CPU_SECONDS = 3600
"""What one `m2t train` process of these tests may spend, in CPU seconds
(RLIMIT_CPU: SIGXCPU, then SIGKILL): a bound the machine's load does not
move. A process that hangs without spending CPU is ended by the test's
own limit (tests/conftest.py HEAVY), never by a wall clock that load
stretches."""


def _cpu_bound() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 60))


def run(command: list[str]) -> subprocess.CompletedProcess:
    """Run `command` to its end, its CPU time bounded (`CPU_SECONDS`)."""
    return subprocess.run(
        command,
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        preexec_fn=_cpu_bound,
    )


# -- two logical CPU replicas, through the command line ---------------------

# Each command of one process: `m2t train` as `main` parses it. The
# process splits its CPU once (--strategy mirrored); the default-strategy
# runs share it and run on the first CPU device.
RUNS = """
import json, sys
from m2t.cli import main
for argv in json.loads(sys.argv[1]):
    print("run:", " ".join(argv), flush=True)
    code = main(argv)
    print("rc:", code, flush=True)
"""

# Runs without dropout or batch normalisation: two replicas must give one
# device's weights (see EXACT below).
EXACT = {
    "mlp": [],
    "gru": ["--batch-size", "8"],  # each replica carries its rows' state
    "transformer": ["--set", "dropout=0.0"],
}


@pytest.fixture(scope="module")
def two_cpus(tmp_path_factory):
    """Every family trained on two logical CPUs (and the EXACT ones on one
    device too), in one process; its output and folder."""
    tmp = tmp_path_factory.mktemp("two_cpus")
    argvs = []
    for model in FAMILIES:
        extra = ["--batch-size", "15"] if model == "mlp" else []
        argvs.append(
            ["train", model, "--smoke", "--verbose", "0", "--strategy"]
            + ["mirrored", "--out", str(tmp / model), *extra]
        )
    for model, extra in EXACT.items():
        for strategy in ("default", "mirrored"):
            argvs.append(
                ["train", model, "--smoke", "--verbose", "0", "--strategy"]
                + [strategy, "--out", str(tmp / f"exact-{model}-{strategy}")]
                + extra
            )
    started = time.perf_counter()
    proc = run([sys.executable, "-c", RUNS, json.dumps(argvs)])
    print(f"two_cpus: {time.perf_counter() - started:.0f} s")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert proc.stdout.count("rc: 0") == len(argvs), proc.stdout
    return proc.stdout, tmp


@pytest.mark.parametrize("model", FAMILIES)
def test_every_family_trains_on_two_cpu_replicas(model, two_cpus):
    stdout, tmp = two_cpus
    got = report(tmp / model)
    assert got["strategy"]["kind"] == "mirrored"
    assert got["strategy"]["replicas"] == 2
    assert got["strategy"]["devices"] == ["/device:CPU:0", "/device:CPU:1"]
    assert got["per_replica_batch"] * 2 == got["global_batch"]
    losses = [h["loss"] for h in got["history"]]
    assert losses[-1] < losses[0], losses
    assert (tmp / model / "model.weights.h5").exists()


def test_the_global_batch_is_rounded_to_the_replicas_with_a_notice(two_cpus):
    stdout, tmp = two_cpus
    assert (
        "notice: global batch 15 rounded down to 14, a multiple of the 2 "
        "replicas"
    ) in stdout
    got = report(tmp / "mlp")
    assert got["global_batch"] == 14
    assert got["per_replica_batch"] == 7


@pytest.mark.parametrize("model", list(EXACT))
def test_two_replicas_match_one_device_without_dropout(model, two_cpus):
    # Same seed and global batch: two replicas of half a batch each give
    # one device's weights but for the rounding of sums split in two
    # (measured: 1e-7 for SGD, up to 9e-7 with Adam, which divides by
    # the square root of tiny second moments; 2.3e-6 on an AMD EPYC, for
    # one of the Transformer's 1,408 token-embedding weights). Gradient clipping measures
    # the whole batch's gradient (step.py), the GRU's replicas carry the
    # state of their own rows. Dropout draws other masks on each half
    # batch, batch norm takes each half's statistics: those models train
    # alike, not to the same weights (docs/training.md).
    _, tmp = two_cpus
    one, two = (tmp / f"exact-{model}-{s}" for s in ("default", "mirrored"))
    assert report(one)["strategy"]["replicas"] == 1
    assert report(two)["strategy"]["replicas"] == 2
    assert_same_weights(
        one / "model.weights.h5",
        two / "model.weights.h5",
        rtol=1e-5,
        atol=5e-6,
    )
    np.testing.assert_allclose(
        [h["loss"] for h in report(one)["history"]],
        [h["loss"] for h in report(two)["history"]],
        rtol=1e-6,
    )


# -- two workers on 127.0.0.1 -----------------------------------------------


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def m2t_train(*args: str) -> list[str]:
    return [sys.executable, "-m", "m2t", "train", *args]


# Worker 1, killed by SIGKILL in the middle of writing its backup of the
# epoch `sys.argv[1]` (half the file written), then `m2t train`.
KILLED_MID_SAVE = """
import os, signal, sys
from training import checkpoints

write = checkpoints.durable
epoch = f"epoch-{int(sys.argv[1]):04d}-"

def dying(path, fill):
    if path.name.startswith(epoch):
        def half(f):
            fill(f)
            f.truncate(f.tell() // 2)
            f.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        return write(path, half)
    return write(path, fill)

checkpoints.durable = dying
from m2t.cli import main
sys.exit(main(["train", *sys.argv[2:]]))
"""


def start_workers(
    tmp: Path,
    args: list[str],
    roles=("worker", "worker"),
    commands=None,
    tag: str = "",
) -> list[subprocess.Popen]:
    """Two processes of `m2t train ARGS`, one per task of a loopback
    cluster (`roles`: each task's type); `commands[i]` replaces task i's
    command line."""
    ports = free_ports(2)
    cluster: dict[str, list[str]] = {}
    tasks = []
    for role, port in zip(roles, ports, strict=True):
        cluster.setdefault(role, []).append(f"127.0.0.1:{port}")
        tasks.append((role, len(cluster[role]) - 1))
    workers = []
    for i, (role, index) in enumerate(tasks):
        config = {"cluster": cluster, "task": {"type": role, "index": index}}
        log = open(tmp / f"{tag}{role}{index}.log", "w")  # noqa: SIM115
        command = (commands or {}).get(i) or m2t_train(*args)
        workers.append(
            subprocess.Popen(
                command,
                cwd=ROOT,
                env={**ENV, "TF_CONFIG": json.dumps(config)},
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_cpu_bound,
            )
        )
    return workers


def wait_all(workers) -> list[int]:
    """Wait for every worker to end (each bounded by its CPU time; a hang
    by the test's limit), killing those left if the wait is cut short."""
    try:
        for worker in workers:
            worker.wait()
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    return [w.returncode for w in workers]


LOOPBACK = {
    "mlp": ("chief", "worker"),  # a `chief` task writes the report
    "ar_mlp": ("worker", "worker"),
    "gru": ("worker", "worker"),
    "transformer": ("worker", "worker"),
}


@pytest.mark.parametrize("model", list(LOOPBACK))
def test_every_family_trains_on_two_loopback_workers(model, tmp_path):
    roles = LOOPBACK[model]
    out = tmp_path / "out"
    args = [model, "--smoke", "--out", str(out), "--verbose", "2"]
    codes = wait_all(start_workers(tmp_path, args, roles))
    logs = {p.name: p.read_text() for p in tmp_path.glob("*.log")}
    assert codes == [0, 0], "\n".join(v[-2000:] for v in logs.values())
    got = report(out)
    assert got["strategy"]["kind"] == "multiworker"
    assert got["strategy"]["workers"] == 2
    assert got["strategy"]["replicas"] == 2
    assert got["per_replica_batch"] * 2 == got["global_batch"]
    # Every step used one whole global batch, half on each worker.
    unit = {"mlp": "images", "ar_mlp": "examples"}.get(model)
    for epoch in got["history"] if unit else []:
        assert epoch[unit] == got["steps_per_epoch"] * got["global_batch"]
    losses = [h["loss"] for h in got["history"]]
    assert losses[-1] < losses[0], losses
    chief = f"{roles[0]}0.log"
    other = f"{roles[1]}{0 if roles[1] != roles[0] else 1}.log"
    assert f"this is {roles[0]} 0" in logs[chief]  # the chief speaks
    assert "report:" not in logs[other]
    # ... and the other says where the run's report is.
    chief_task = f"{roles[0]} 0"
    assert (
        f"by the chief ({chief_task}) to {out / 'report.json'}" in (logs[other])
    ), logs[other][-2000:]
    assert not (out / ".workers").exists()
    assert not (out / "backup").exists()


def test_workers_killed_apart_resume_from_the_epoch_both_finished(tmp_path):
    # Worker 1 dies half-way through writing its epoch-2 backup; worker 0
    # has written its own. On --resume both must start from epoch 1 (the
    # last one both finished) and end with the run's true result.
    out = tmp_path / "out"
    args = ["mlp", "--smoke", "--epochs", "4", "--out", str(out)]
    args += ["--verbose", "2"]
    dying = [sys.executable, "-c", KILLED_MID_SAVE, "2", *args]
    workers = start_workers(tmp_path, args, commands={1: dying}, tag="a-")
    mine = out / "backup" / "state.json"
    theirs = out / ".workers" / "worker-1" / "backup" / "state.json"
    # until worker 1 is dead and worker 0 has backed up epoch 2, or both
    # have ended
    while any(w.poll() is None for w in workers):
        if workers[1].poll() is not None and _backup_epoch(mine) == 2:
            break
        time.sleep(0.1)
    died = workers[1].poll()  # by its own hand, not ours below
    for worker in workers:  # worker 0 would fail on its own, later
        if worker.poll() is None:
            worker.kill()
        worker.wait()
    assert died == -signal.SIGKILL, f"worker 1 ended with {died}"
    assert json.loads(mine.read_text())["epoch"] == 2
    # The half-written file is not the backup: its state still names the
    # whole epoch-1 file.
    assert json.loads(theirs.read_text())["epoch"] == 1
    assert list(theirs.parent.glob("epoch-0002-*.tmp"))

    resumed = start_workers(tmp_path, [*args, "--resume"], tag="b-")
    codes = wait_all(resumed)
    logs = [(tmp_path / f"b-worker{i}.log").read_text() for i in range(2)]
    assert codes == [0, 0], logs[0][-2000:] + logs[1][-2000:]
    assert "resume: from the backup at the end of epoch 1" in logs[0]
    got = report(out)
    assert got["resumed_from_epoch"] == 1
    assert got["epochs"] == 4 and got["epochs_this_run"] == 3

    # The run never stopped (one device: the same sums, split otherwise).
    whole = tmp_path / "whole"
    straight = run(m2t_train(*args[:-4], "--out", str(whole), "--verbose", "0"))
    assert straight.returncode == 0, straight.stderr[-3000:]
    np.testing.assert_allclose(
        [h["loss"] for h in got["history"]],
        [h["loss"] for h in report(whole)["history"]],
        rtol=1e-6,
    )
    assert_same_weights(
        whole / "model.weights.h5",
        out / "model.weights.h5",
        rtol=1e-5,
        atol=5e-6,
    )


# -- a run killed with SIGKILL in the middle of an epoch --------------------


def _backup_epoch(state: Path) -> int | None:
    """The epoch the run's backup holds (None while there is none, or while
    it is being written)."""
    try:
        return json.loads(state.read_text())["epoch"]
    except (OSError, ValueError, KeyError):
        return None


def kill_mid_epoch(args: list[str], out: Path) -> int:
    """Start `m2t train ARGS --out OUT` and SIGKILL it halfway through its
    third epoch: half the second epoch's time after the backup of epoch 2
    appears (a fixed delay lets a fast machine finish the run first). The
    epoch the last backup holds."""
    state = out / "backup" / "state.json"
    proc = subprocess.Popen(
        m2t_train(*args, "--out", str(out)),
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_cpu_bound,
    )
    seen: dict[int, float] = {}  # epoch -> when its backup was first seen
    try:
        while True:  # until the backup of epoch 2 (or the run's end)
            if proc.poll() is not None:
                pytest.fail(f"the run ended (rc {proc.returncode}) too early")
            epoch = _backup_epoch(state)
            if epoch is not None:
                seen.setdefault(epoch, time.monotonic())
                if epoch >= 2:
                    break
            time.sleep(0.005)
        assert seen and max(seen) >= 2, f"backups seen: {seen}"
        if 1 in seen and 2 in seen:
            time.sleep((seen[2] - seen[1]) / 2)
        proc.send_signal(signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "report.json").exists()
    return json.loads(state.read_text())["epoch"]


# Epochs of 40 steps, with dropout: the kill lands inside epoch 3.
KILLED = {
    "transformer": ["--set", "num_examples=640", "--set", "max_steps=40"],
    "alexnet": ["--set", "examples=640", "--set", "max_steps=40"],
}


@pytest.mark.parametrize("model", list(KILLED))
def test_a_run_killed_mid_epoch_resumes_to_the_same_weights(model, tmp_path):
    args = [model, "--smoke", "--epochs", "4", *KILLED[model]]
    args += ["--verbose", "0"]
    out = tmp_path / "killed"
    saved = kill_mid_epoch(args, out)
    assert 1 <= saved < 4

    again = run(m2t_train(*args, "--out", str(out)))
    assert again.returncode == 2
    assert "unfinished run" in again.stderr and "--resume" in again.stderr

    resumed = run(
        m2t_train(*args, "--out", str(out), "--resume", "--verbose", "1")
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resume: from the backup at the end of epoch {saved}" in (
        resumed.stdout
    )
    got = report(out)
    assert got["epochs"] == 4 and len(got["history"]) == 4
    assert got["resumed_from_epoch"] == saved
    assert got["epochs_this_run"] == 4 - saved
    assert not (out / "backup").exists()

    # The same batches, weights, optimizer and dropout generators' state:
    # the result is the uninterrupted run's, bit for bit.
    whole = tmp_path / "whole"
    straight = run(m2t_train(*args, "--out", str(whole)))
    assert straight.returncode == 0, straight.stderr[-3000:]
    assert [h["loss"] for h in got["history"]] == [
        h["loss"] for h in report(whole)["history"]
    ]
    assert_same_weights(whole / "model.weights.h5", out / "model.weights.h5")
