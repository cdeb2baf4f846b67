"""The benchmark script still runs (tiny sizes, no timing asserted)."""

import json
import subprocess
import sys
import time

import pytest

from m2t import settings
from tests.conftest import ROOT


def test_benchmark_smoke(tmp_path):
    out = tmp_path / "results.json"
    # Three cases cover the recurrent, attention and Transformer builders,
    # the paired timing and the FLOP count; --smoke skips m2t train and
    # the grading latency.
    cases = ["gru_lm/tiny", "mha/tiny", "encoder_block/tiny"]
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--smoke", "--only", *cases]
        + ["--out", str(out)],
        cwd=ROOT,
        env=settings.quiet_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(out.read_text())
    assert [c["name"] for c in data["cases"]] == cases
    for case in data["cases"]:
        assert case.get("skipped") is None, case["skipped"]
        ratio = case["ratio"]
        assert 0 < ratio["min"] <= ratio["median"] <= ratio["max"]
        assert case["ours"]["params"] == case["theirs"]["params"]
    assert data["cases"][1]["ours"]["gflop_per_step"] > 0
    assert data["matmul_peak"]["peak_gflop_per_s"] > 0
    assert "| mha/tiny |" in result.stdout


@pytest.mark.parametrize("cell_name", ["gru", "lstm"])
def test_fused_rnn_matches_the_cell_in_keras_rnn(cell_name):
    """benchmarks/fused_rnn.py's hand-written BPTT gives the outputs and
    the gradients TensorFlow's autodiff gives for RNN(cell)."""
    import keras
    import numpy as np
    import tensorflow as tf

    from benchmarks.cases import solution
    from benchmarks.fused_rnn import Fused

    batch, steps, inputs, units = 3, 7, 5, 4
    module = solution("l10_gru" if cell_name == "gru" else "l11_lstm")
    cell_class = module.GRUCell if cell_name == "gru" else module.LSTMCell
    x = tf.random.stateless_normal((batch, steps, inputs), seed=(1, 2))
    w = tf.random.stateless_normal((batch, steps, units), seed=(3, 4))
    reference = keras.layers.RNN(cell_class(units), return_sequences=True)
    fused = Fused(cell_class(units))
    reference(x), fused(x)
    for mine, theirs in zip(
        fused.cell.weights, reference.cell.weights, strict=True
    ):
        mine.assign(theirs + 0.1)  # away from the initial forget bias
        theirs.assign(mine)
    results = []
    for layer in (reference, fused):
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = layer(x)
            loss = tf.reduce_sum(out * w)  # every output gets a gradient
        grads = tape.gradient(loss, [x, *layer.cell.weights])
        results.append([out, *grads])
    names = ["outputs", "d inputs", "d kernel", "d recurrent", "d bias"]
    for name, want, got in zip(names, *results, strict=True):
        np.testing.assert_allclose(
            got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6, err_msg=name
        )


def test_fused_rnn_config_round_trip_and_bad_cell():
    import keras
    import numpy as np

    from benchmarks.cases import solution
    from benchmarks.fused_rnn import Fused

    module = solution("l11_lstm")
    layer = Fused(module.LSTMCell(4))
    x = np.random.default_rng(0).random((2, 3, 5)).astype("float32")
    layer(x)
    with keras.saving.custom_object_scope({"LSTMCell": module.LSTMCell}):
        copy = Fused.from_config(layer.get_config())
    assert tuple(copy(x).shape) == (2, 3, 4)
    with pytest.raises(ValueError, match="`cell` must be a GRUCell"):
        Fused(keras.layers.SimpleRNNCell(3))


def test_check_costs_lists_the_slowest_checks_of_a_lesson():
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.check_costs", "05", "--top", "99"],
        cwd=ROOT,
        env=settings.quiet_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    head = next(x for x in result.stdout.splitlines() if x.startswith("05:"))
    assert " s CPU, " in head, head
    checks = int(head.split()[1])
    rows = [x for x in result.stdout.splitlines() if x.startswith("| `test_")]
    assert len(rows) == checks > 10, result.stdout
    cpu = [float(row.split("|")[2]) for row in rows]
    # the slowest first: lesson 05's training smoke is many times the rest
    assert cpu == sorted(cpu, reverse=True) and cpu[0] > cpu[-1], rows


def test_a_stopped_benchmark_keeps_the_cases_it_finished(tmp_path):
    out = tmp_path / "results.json"
    cases = ["mha/tiny", "encoder_block/tiny"]
    run = subprocess.Popen(  # 8 pairs of at least 0.1 s: over a second a case
        [sys.executable, "-m", "benchmarks.run", "--smoke", "--only", *cases]
        + ["--reps", "8", "--target-s", "0.1", "--out", str(out)],
        cwd=ROOT,
        env=settings.quiet_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while not (out.exists() and json.loads(out.read_text())["cases"]):
            assert run.poll() is None, "the run ended before saving a case"
            time.sleep(0.05)
        assert run.poll() is None, "the first case was saved only at the end"
    finally:
        run.kill()
        run.wait()
    kept = json.loads(out.read_text())
    assert [c["name"] for c in kept["cases"]] == cases[:1]
    assert kept["cases"][0]["ratio"]["median"] > 0
