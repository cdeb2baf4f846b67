"""`m2t train`: every model family trains a few steps (the short form).

In-process and CPU-only: TensorFlow is imported once for all of them.
Each run must make the loss fall and leave its report and plots.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from training import recipes

ALL = list(recipes.RECIPES)


@pytest.mark.parametrize("name", ALL, ids=ALL)
def test_family_trains_a_few_steps(name, tmp_path):
    recipe = recipes.get(name)
    if not recipe.available():
        pytest.skip(f"solutions/{recipe.lesson}.py is not there yet")
    from training import Options
    from training import train

    out = tmp_path / name
    report = train(Options(name, smoke=True, out=str(out), verbose=0))
    losses = [h["loss"] for h in report["history"]]
    assert len(losses) == recipe.resolve("embedded", smoke=True)["epochs"]
    assert losses[-1] < losses[0], f"{name}: the loss did not fall: {losses}"
    written = json.loads((out / "report.json").read_text())
    assert written["model"] == name
    assert written["throughput"]["value"] > 0
    assert written["quality"], "no quality figure"
    for png in written["plots"]:
        assert (out / png).stat().st_size > 5000, png
    assert not (out / "backup").exists(), "a finished run keeps no backup"
    assert (out / "best.weights.h5").exists()
    assert list((out / "logs").rglob("events.out.tfevents.*"))


def test_list_shows_models_and_settings():
    proc = subprocess.run(
        [sys.executable, "-m", "m2t", "train", "--list"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    for name in ALL:
        assert name in proc.stdout
    assert "lr=0.005" in proc.stdout  # transformer, d2l's


def test_student_edition_says_training_needs_the_full_repository():
    # The student edition has no solutions/ package: make it unimportable.
    code = (
        "import sys; sys.modules['solutions'] = None\n"
        "from m2t.cli import main\n"
        "sys.exit(main(['train', 'transformer']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "needs the full repository" in proc.stderr


def test_unknown_setting_is_refused():
    with pytest.raises(ValueError, match="no setting 'num_hidden'"):
        recipes.get("mlp").resolve("embedded", overrides={"num_hidden": 3})


@pytest.mark.parametrize(
    "model, threads", [("ar_mlp", 1), ("resnet18", 0)], ids=["small", "cnn"]
)
def test_a_fresh_run_uses_the_recipes_op_threads(model, threads, tmp_path):
    # A fresh process: TensorFlow fixes its threads when it starts.
    proc = subprocess.run(
        [sys.executable, "-m", "m2t", "train", model, "--smoke"]
        + ["--verbose", "0", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["op_threads"] == threads
    assert report["settings"]["op_threads"] == threads


def test_bad_op_threads_is_refused():
    from training.strategy import set_op_threads

    with pytest.raises(ValueError, match=r"`op_threads` .* got -1"):
        set_op_threads(-1)
