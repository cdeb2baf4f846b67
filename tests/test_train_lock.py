"""`m2t train` refuses what it can refuse before TensorFlow is imported (a
bad setting, a folder another live run is writing), and a killed run
leaves no lock behind."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from m2t import settings
from tests.conftest import ROOT
from training import writer

ENV = settings.quiet_env({k: v for k, v in os.environ.items()})
ENV.pop("TF_CONFIG", None)

# `m2t train ARGS` in a process that says, after it, whether TensorFlow
# was imported (the refusal must come before that import).
TRAIN = """
import sys
from m2t.cli import main
code = main(["train", *sys.argv[1:]])
print("tensorflow imported:", "tensorflow" in sys.modules)
sys.exit(code)
"""


def m2t_train(*args, **kw):
    return subprocess.run(
        [sys.executable, "-c", TRAIN, *args],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        **kw,
    )


@pytest.mark.parametrize(
    "args, says",
    [
        (["--set", "lr=-1"], "--set lr"),
        (["--epochs", "0"], "--epochs must be at least 1, got 0"),
        (["--set", "dropout=0.5"], "mlp has no setting 'dropout'"),
    ],
    ids=["negative_lr", "no_epochs", "unknown_setting"],
)
def test_a_bad_setting_is_refused_before_tensorflow(tmp_path, args, says):
    done = m2t_train("mlp", "--out", str(tmp_path / "out"), *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert says in done.stderr
    assert "tensorflow imported: False" in done.stdout


def test_a_second_live_run_on_one_out_is_refused(tmp_path):
    out = tmp_path / "out"
    first = subprocess.Popen(
        [sys.executable, "-m", "m2t", "train", "mlp", "--smoke"]
        + ["--epochs", "40", "--out", str(out)],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        lock = out / writer.LOCK
        while "pid" not in (lock.read_text() if lock.exists() else ""):
            assert first.poll() is None, "the first run ended early"
            time.sleep(0.05)
        second = m2t_train("mlp", "--smoke", "--out", str(out), "--resume")
        assert first.poll() is None, "the first run ended before the check"
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    assert second.returncode == 2, second.stdout + second.stderr
    assert f"pid {first.pid}" in second.stderr
    assert "is writing" in second.stderr and "another --out" in second.stderr
    assert "tensorflow imported: False" in second.stdout
    assert not (out / "report.json").exists()
    # the kernel released the killed run's lock: the folder can be taken
    assert writer.hold(out) == out


def test_each_worker_of_a_cluster_locks_its_own_folder(tmp_path):
    cluster = {"worker": ["127.0.0.1:1", "127.0.0.1:2"]}
    chief = {"cluster": cluster, "task": {"type": "worker", "index": 0}}
    other = {"cluster": cluster, "task": {"type": "worker", "index": 1}}
    with_chief = {
        "cluster": {**cluster, "chief": ["127.0.0.1:3"]},
        "task": {"type": "worker", "index": 0},
    }
    out = tmp_path / "out"
    assert writer.folder(out, None) == out
    assert writer.folder(out, chief) == out
    assert writer.folder(out, other) == out / ".workers" / "worker-1"
    assert writer.folder(out, with_chief) == out / ".workers" / "worker-0"
    # a second process of worker 1 is refused; worker 0's folder is free
    code = (
        "import json, sys; from training import writer; "
        "writer.hold(sys.argv[1], json.loads(sys.argv[2])); "
        "print('held'); sys.stdin.read()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(out), json.dumps(other)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ValueError, match="is writing"):
            writer.hold(out, other)
        assert writer.hold(out, chief) == out
    finally:
        holder.stdin.close()
        holder.wait()
