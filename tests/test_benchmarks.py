"""The benchmark script still runs (tiny sizes, no timing asserted)."""

import json
import os
import subprocess
import sys

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
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
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
