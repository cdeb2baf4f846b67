"""`m2t train` under real strategies: two logical CPUs, two worker
processes on 127.0.0.1, and a run killed with SIGKILL and resumed.

Each case runs in fresh processes: the logical devices and the cluster
must be set up before TensorFlow initialises.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONHASHSEED": "0"}
ENV.pop("TF_CONFIG", None)


def weights(path: Path) -> dict[str, np.ndarray]:
    """Every array in a `.weights.h5` file, by its path in the file."""
    arrays = {}
    with h5py.File(path, "r") as f:
        f.visititems(
            lambda name, item: (
                arrays.__setitem__(name, item[()])
                if isinstance(item, h5py.Dataset)
                else None
            )
        )
    return arrays


def assert_same_weights(a: Path, b: Path, **tolerance) -> None:
    wa, wb = weights(a), weights(b)
    assert wa.keys() == wb.keys()
    for name in wa:
        if name.startswith("optimizer"):
            continue
        np.testing.assert_allclose(
            wa[name], wb[name], err_msg=name, **tolerance
        )


TWO_CPUS = """
import sys
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    cpu, [tf.config.LogicalDeviceConfiguration()] * 2
)
from training import Options, train

SETTINGS = {
    # SGD: Adam would magnify the rounding of near-zero gradients.
    "mlp": {"optimizer": "sgd", "lr": 0.1, "clip": 0.5},
    "gru": {"batch_size": 8},  # the state carried per replica's rows
}
for strategy in ("default", "mirrored"):
    train(Options(
        sys.argv[2], smoke=True, strategy=strategy, verbose=0,
        out=f"{sys.argv[1]}/{strategy}", settings=SETTINGS[sys.argv[2]],
    ))
"""


@pytest.mark.parametrize("model", ["mlp", "gru"])
def test_mirrored_over_two_cpus_matches_one_device(model, tmp_path):
    # Same seed and global batch: two replicas of half a batch each must
    # give the weights one device gets (gradient clipping included; for the
    # GRU, each replica carrying the state of its own rows).
    proc = subprocess.run(
        [sys.executable, "-c", TWO_CPUS, str(tmp_path), model],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    one = json.loads((tmp_path / "default" / "report.json").read_text())
    two = json.loads((tmp_path / "mirrored" / "report.json").read_text())
    assert one["strategy"]["replicas"] == 1
    assert two["strategy"]["replicas"] == 2
    assert two["per_replica_batch"] * 2 == one["global_batch"]
    assert_same_weights(
        tmp_path / "default" / "model.weights.h5",
        tmp_path / "mirrored" / "model.weights.h5",
        rtol=1e-5,
        atol=1e-6,
    )
    np.testing.assert_allclose(
        [h["loss"] for h in one["history"]],
        [h["loss"] for h in two["history"]],
        rtol=1e-5,
    )


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


def test_multiworker_on_loopback(tmp_path):
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    out = tmp_path / "out"
    workers = []
    for index in range(2):
        config = {
            "cluster": cluster,
            "task": {"type": "worker", "index": index},
        }
        log = open(tmp_path / f"worker{index}.log", "w")  # noqa: SIM115
        workers.append(
            subprocess.Popen(
                m2t_train(
                    "mlp", "--smoke", "--out", str(out), "--verbose", "2"
                ),
                cwd=ROOT,
                env={**ENV, "TF_CONFIG": json.dumps(config)},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    deadline = time.monotonic() + 300
    try:
        for worker in workers:
            worker.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        pytest.fail("the workers did not finish in 300 s")
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    logs = [(tmp_path / f"worker{i}.log").read_text() for i in range(2)]
    assert [w.returncode for w in workers] == [0, 0], (
        logs[0][-2000:] + logs[1][-2000:]
    )
    report = json.loads((out / "report.json").read_text())
    assert report["strategy"]["kind"] == "multiworker"
    assert report["strategy"]["workers"] == 2
    assert report["strategy"]["replicas"] == 2
    assert report["per_replica_batch"] * 2 == report["global_batch"]
    # Every step used one whole global batch, half on each worker.
    for epoch in report["history"]:
        assert (
            epoch["images"]
            == report["steps_per_epoch"] * report["global_batch"]
        )
    assert "this is worker 0" in logs[0]  # the chief speaks; the other not
    assert "report:" not in logs[1]
    assert not (out / ".workers").exists()
    assert not (out / "backup").exists()


def test_killed_run_resumes_where_it_was(tmp_path):
    # Epochs of a hundred steps, so the kill lands inside one.
    args = [
        "mlp",
        "--smoke",
        "--epochs",
        "4",
        "--set",
        "examples=1600",
        "--set",
        "max_steps=100",
        "--verbose",
        "2",
    ]
    out = tmp_path / "killed"
    state = out / "backup" / "state.json"
    run = subprocess.Popen(
        m2t_train(*args, "--out", str(out)),
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 240
    try:
        while not state.exists() and time.monotonic() < deadline:
            if run.poll() is not None:
                pytest.fail(f"the run ended (rc {run.returncode}) too early")
            time.sleep(0.05)
        assert state.exists(), "no backup within 240 s"
        run.send_signal(signal.SIGKILL)
    finally:
        if run.poll() is None:
            run.kill()
        run.wait()
    assert run.returncode == -signal.SIGKILL
    saved = json.loads(state.read_text())["epoch"]
    assert 1 <= saved < 4
    assert not (out / "report.json").exists()

    again = subprocess.run(
        m2t_train(*args, "--out", str(out)),
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert again.returncode == 2
    assert "unfinished run" in again.stderr and "--resume" in again.stderr

    resumed = subprocess.run(
        m2t_train(*args, "--out", str(out), "--resume"),
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resume: from the backup at the end of epoch {saved}" in (
        resumed.stdout
    )
    report = json.loads((out / "report.json").read_text())
    assert report["epochs"] == 4
    assert len(report["history"]) == 4
    assert report["resumed_from_epoch"] == saved
    assert report["epochs_this_run"] == 4 - saved
    assert not (out / "backup").exists()

    # The same batches in the same order from the same state: the result
    # is the uninterrupted run's.
    whole = tmp_path / "whole"
    straight = subprocess.run(
        m2t_train(*args, "--out", str(whole)),
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert straight.returncode == 0, straight.stderr[-3000:]
    assert_same_weights(
        whole / "model.weights.h5",
        out / "model.weights.h5",
        rtol=1e-5,
        atol=1e-6,
    )
