"""`m2t train`: every model family trains a few steps (the short form).

In-process and CPU-only: TensorFlow is imported once for all of them.
Each run must make the loss fall and leave its report and plots.
"""

from __future__ import annotations

import json
import os
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


# A fresh process (TensorFlow fixes its threads when it starts) that asks
# TensorFlow, after the run, how many threads an op may use.
THREADS_IN_FORCE = """
import sys
from m2t.cli import main
assert main(["train", *sys.argv[1:]]) == 0
import tensorflow as tf
print("intra-op threads:", tf.config.threading.get_intra_op_parallelism_threads())
"""


@pytest.mark.parametrize(
    "model, threads", [("ar_mlp", 1), ("resnet18", 0)], ids=["small", "cnn"]
)
def test_a_fresh_run_uses_the_recipes_op_threads(model, threads, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", THREADS_IN_FORCE, model, "--smoke"]
        + ["--verbose", "0", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"intra-op threads: {threads}" in proc.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["op_threads"] == threads


def test_bad_op_threads_is_refused():
    from training.strategy import set_op_threads

    with pytest.raises(ValueError, match=r"`op_threads` .* got -1"):
        set_op_threads(-1)


# -- the command line refuses bad values in one line -------------------------


def train_cli(*argv: str) -> int:
    from m2t.cli import main

    return main(["train", *argv])


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--epochs", "0"], "--epochs must be at least 1, got 0"),
        (["--epochs", "-1"], "--epochs must be at least 1, got -1"),
        (["--batch-size", "0"], "--batch-size must be at least 1, got 0"),
        (["--batch-size", "-8"], "--batch-size must be at least 1, got -8"),
        (["--lr", "0"], "--lr must be a finite number > 0, got 0.0"),
        (["--lr", "-0.1"], "--lr must be a finite number > 0, got -0.1"),
        (["--lr", "nan"], "--lr must be a finite number > 0, got nan"),
        (["--lr", "inf"], "--lr must be a finite number > 0, got inf"),
        (
            ["--set", "num_hiddens=abc"],
            "--set num_hiddens must be a whole number, got 'abc'",
        ),
        (["--set", "lr=fast"], "--set lr must be a number, got 'fast'"),
        (["--set", "validate=1"], "--set validate must be True or False"),
        (["--set", "dropout=x"], "no setting 'dropout'"),  # the MLP has none
        (
            ["--set", "batchnorm_momentum=1"],
            "--set batchnorm_momentum must be in [0, 1), got 1",
        ),
        (["--quick"], "--smoke and --quick: choose one"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_out_of_range_values_are_refused_in_one_line(
    argv, message, tmp_path, capsys
):
    assert train_cli("mlp", "--smoke", "--out", str(tmp_path), *argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1, err  # one line, no traceback
    assert not any(tmp_path.iterdir()), "nothing is written"


# -- finished, unfinished and damaged runs -----------------------------------


def train_mlp(out, capsys, *argv: str) -> tuple[int, str, str]:
    code = train_cli(
        "mlp", "--smoke", "--verbose", "0", "--out", str(out), *argv
    )
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_finished_run_is_never_overwritten_without_a_flag(tmp_path, capsys):
    out = tmp_path / "run"
    assert train_mlp(out, capsys)[0] == 0
    trained = (out / "model.weights.h5").read_bytes()
    report = (out / "report.json").read_text()

    code, _, err = train_mlp(out, capsys)
    assert code == 2
    assert "holds a finished run (mlp, 3 epochs, report.json)" in err
    assert "--overwrite" in err
    code, _, err = train_mlp(out, capsys, "--epochs", "0")
    assert code == 2 and "--epochs must be at least 1" in err
    code, stdout, _ = train_cli_verbose(out, capsys, "--resume")
    assert code == 0
    assert "finished run" in stdout and "nothing to resume" in stdout
    assert (out / "model.weights.h5").read_bytes() == trained
    assert (out / "report.json").read_text() == report

    code, _, _ = train_mlp(out, capsys, "--overwrite", "--epochs", "2")
    assert code == 0
    assert json.loads((out / "report.json").read_text())["epochs"] == 2


def train_cli_verbose(out, capsys, *argv):
    code = train_cli(
        "mlp", "--smoke", "--verbose", "2", "--out", str(out), *argv
    )
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def unfinished(tmp_path, capsys, monkeypatch):
    """A run's folder as a kill after its last epoch leaves it: the
    backup, no report."""
    from training.checkpoints import Backup

    out = tmp_path / "run"
    with monkeypatch.context() as patch:
        patch.setattr(Backup, "clear", lambda self: None)
        assert train_mlp(out, capsys)[0] == 0
    (out / "report.json").unlink()
    return out


def test_resuming_with_other_settings_is_refused(unfinished, capsys):
    code, _, err = train_mlp(
        unfinished, capsys, "--resume", "--batch-size", "8"
    )
    assert code == 2
    assert "was made with other settings (batch_size: 16 then, 8 now)" in err
    code, _, err = train_mlp(unfinished, capsys, "--resume", "--seed", "1")
    assert code == 2 and "seed: 0 then, 1 now" in err
    # The same command resumes (nothing left to train: it finishes).
    assert train_mlp(unfinished, capsys, "--resume")[0] == 0
    assert (unfinished / "report.json").exists()


@pytest.mark.parametrize("damaged", ["arrays", "state"])
def test_a_damaged_backup_names_the_file_and_the_way_out(
    damaged, unfinished, capsys
):
    backup = unfinished / "backup"
    if damaged == "arrays":
        (path,) = [p for p in backup.glob("epoch-0003-*.npz")]
    else:
        path = backup / "state.json"
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    code, _, err = train_mlp(unfinished, capsys, "--resume")
    assert code == 2
    assert err.count("\n") == 1, err
    assert f"the backup file {path} is damaged" in err
    assert f"remove the folder {backup} to train from epoch 1" in err


def test_report_json_is_strict_json_when_the_loss_diverges(tmp_path, capsys):
    def refuse(name):
        raise ValueError(f"not JSON: {name}")

    code, stdout, _ = train_cli_verbose(
        tmp_path, capsys, "--set", "optimizer=sgd", "--lr", "1e30"
    )
    assert code == 0
    assert "warning: the loss is not a finite number" in stdout
    report = json.loads(
        (tmp_path / "report.json").read_text(), parse_constant=refuse
    )
    assert report["final_loss"] is None


def test_an_image_model_on_real_data_stops_clearly_without_fashion_mnist(
    tmp_path,
):
    # A fresh process: TFDS reads TFDS_DATA_DIR when it is imported.
    proc = subprocess.run(
        [sys.executable, "-m", "m2t", "train", "mlp", "--data", "real"]
        + ["--smoke", "--verbose", "0", "--out", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TFDS_DATA_DIR": str(tmp_path / "tfds")},
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("m2t")]
    assert line.startswith("m2t train: --data real needs Fashion-MNIST")
    assert "not prepared in" in line and "TFDS_DATA_DIR" in line
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "tfds" / "fashion_mnist").exists()  # no download


# -- the pieces: the best epoch, throughput, agreeing workers ----------------


def test_best_weights_are_the_lowest_loss_epochs_and_load(tmp_path):
    import keras
    import numpy as np

    from training.checkpoints import Backup

    def model():
        net = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
        net.compile(optimizer="sgd", loss="mse")
        net.optimizer.build(net.trainable_variables)
        return net

    net = model()
    backup = Backup(tmp_path / "backup")
    backup.set_model(net)
    for epoch, loss in enumerate([3.0, 1.0, 2.0]):  # epoch 2 is the best
        net.set_weights([np.full_like(w, epoch + 1) for w in net.weights])
        backup.on_epoch_end(epoch, {"loss": loss})
    assert (backup.best, backup.best_epoch) == (1.0, 2)
    backup.save_best(net, tmp_path / "best.weights.h5")
    assert all((np.asarray(w) == 3).all() for w in net.weights)  # kept
    fresh = model()
    fresh.load_weights(tmp_path / "best.weights.h5")
    assert all((np.asarray(w) == 2).all() for w in fresh.weights)

    # The backup keeps the last two epochs, each with its own best.
    assert backup.epochs() == [2, 3]
    again = Backup(tmp_path / "backup")
    assert again.restore(fresh, epoch=2) == 2
    assert len(again.history) == 2 and again.best_epoch == 2


def test_throughput_leaves_out_the_first_epoch():
    from training.report import Timing

    timing = Timing("images")
    timing.epochs = [(10.0, 100.0), (1.0, 100.0), (1.0, 100.0)]  # tracing
    assert timing.throughput() == (100.0, "epochs after the first of this run")
    timing.epochs = timing.epochs[:1]
    assert timing.throughput()[0] == 10.0


def test_an_evaluation_pass_counts_every_image_alike():
    """1,000 examples in batches of 256 (the last of 232), 100 of them
    right, all in the last batch: the accuracy is 100 / 1,000, not the mean
    of the four batches' accuracies (0.108); the loss likewise."""
    import keras
    import numpy as np
    import tensorflow as tf

    from training.data import Examples
    from training.data import uniform_weights
    from training.step import Trainer

    n, right = 1000, np.zeros(1000, bool)
    right[-100:] = True
    y = np.where(right, 0, 1).astype("int32")
    loss = np.linspace(0.0, 3.0, n).astype("float32")  # per example

    def make_batch(parts, indices):
        x, y = parts
        return x, y, uniform_weights(y)

    examples = Examples((loss[:, None], y), make_batch, None, n)
    ds, steps = examples.dataset(256, 0, 0, 1, whole=True)
    assert steps == 4
    trainer = Trainer(
        keras.layers.Identity(),
        loss_fn=lambda y, pred: pred[:, 0],  # the example's own loss
        correct_fn=lambda y, pred: tf.cast(tf.equal(y, 0), tf.float32),
        unit="images",
    )
    trainer.compile()
    got = trainer.evaluate(ds, steps=steps, return_dict=True, verbose=0)
    assert got["accuracy"] == pytest.approx(0.1, abs=1e-7)
    assert got["loss"] == pytest.approx(float(np.mean(loss)), rel=1e-6)
    assert got["images"] == n


def test_translation_trains_on_d2ls_loss():
    """d2l's `MaskedSoftmaxCELoss` averages each sequence's masked loss
    over its num_steps positions, and `train_seq2seq` differentiates the
    sum over the batch (and clips that gradient at 1): the weights give
    exactly that loss, not the mean over the valid tokens."""
    import numpy as np

    from training.data import sequence_weights

    mask = np.array([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], bool)  # N = 4 of T = 5
    loss = np.arange(1.0, 11.0).reshape(2, 5).astype("float32")
    d2l = np.sum(np.mean(loss * mask, axis=1))
    w = np.asarray(sequence_weights(mask))
    assert np.sum(loss * w) == pytest.approx(d2l, rel=1e-6)
    assert np.all(w[~mask] == 0)


def test_workers_agree_on_the_last_epoch_all_finished():
    from training.checkpoints import agree

    assert agree({"worker 0": [2, 3], "worker 1": [2, 3]}) == 3
    assert agree({"worker 0": [2, 3], "worker 1": [1, 2]}) == 2
    assert agree({"worker 0": [1], "worker 1": []}) == 0
    with pytest.raises(ValueError) as refused:
        agree({"chief 0": [3, 4], "worker 0": [1, 2]})
    assert (
        "the workers cannot resume together: chief 0 at epoch 4 (keeps 3, "
        "4); worker 0 at epoch 2 (keeps 1, 2)"
    ) in str(refused.value)


# -- the options that change the computation ---------------------------------


@pytest.mark.parametrize("name", ["mlp", "transformer"])
def test_mixed_precision_and_xla_train_the_smoke_models(name, tmp_path):
    from training import Options
    from training import train

    report = train(
        Options(
            name,
            smoke=True,
            out=str(tmp_path),
            verbose=0,
            mixed_precision=True,
            jit=True,
        )
    )
    assert report["precision"] == "mixed_float16"
    assert report["jit_compile"] is True
    losses = [h["loss"] for h in report["history"]]
    assert losses[-1] < losses[0], losses
    import keras

    assert keras.mixed_precision.global_policy().name == "float32"  # reset


def test_the_readmes_transformer_translates_every_held_out_pair(tmp_path):
    # `m2t train transformer` at its defaults, as the README says: BLEU
    # 0.999 to 1.0 on the 300 held-out pairs (all exact on one CPU, 298 on
    # another: float rounding differs), with its attention maps.
    proc = subprocess.run(
        [sys.executable, "-m", "m2t", "train", "transformer"]
        + ["--verbose", "0", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["quality"]["bleu"] >= 0.99
    assert report["quality"]["exact"] >= 0.99
    assert report["quality"]["bleu_on"] == "300 held-out pairs"
    for png in (
        "attention_1.png",
        "attention_2.png",
        "positional_encoding.png",
    ):
        assert png in report["plots"]
        assert (tmp_path / png).stat().st_size > 5000
    # Every pair scores the same: the by-length picture would say nothing.
    assert "bleu_by_length.png" not in report["plots"]


def test_the_by_length_picture_is_drawn_only_where_its_bars_differ(tmp_path):
    from training.translation import _bleu_by_length

    # 60 sentences of each of 5 lengths; two imperfect translations, as the
    # Transformer gives on some CPUs: every bar within 0.05, no picture
    english = [" ".join(["w"] * n) for n in range(4, 9) for _ in range(60)]
    scores = [1.0] * 300
    scores[10], scores[70] = 0.6, 0.8
    exact = [s == 1.0 for s in scores]
    assert _bleu_by_length(english, scores, exact, "t", tmp_path) is None
    # longer sentences translated worse: the picture shows it
    worse = [1.0 - 0.1 * (len(e.split()) - 4) for e in english]
    exact = [s == 1.0 for s in worse]
    assert _bleu_by_length(english, worse, exact, "t", tmp_path) == (
        "bleu_by_length.png"
    )
    assert (tmp_path / "bleu_by_length.png").stat().st_size > 5000


# -- the quick setting: an image model seen to learn -------------------------


def test_every_image_model_has_a_quick_setting_and_the_others_refuse_it():
    for name, recipe in recipes.RECIPES.items():
        if recipe.family != "images":
            with pytest.raises(ValueError, match="no quick setting"):
                recipe.resolve("embedded", quick=True)
            continue
        quick = recipe.resolve("embedded", quick=True)
        full = recipe.resolve("embedded")
        assert quick["examples"] < 6000 and quick["epochs"] >= 2, name
        assert (quick["resize"] or 28) <= (full["resize"] or 28), name
        # The same network: the width ratio is the recipe's.
        assert quick.get("ratio") == full.get("ratio"), name
    with pytest.raises(ValueError, match="choose one"):
        recipes.get("mlp").resolve("embedded", smoke=True, quick=True)


def test_quick_densenet_learns_well_above_chance_in_one_epoch(tmp_path):
    # The cheapest CNN of the quick table: one of its 3 epochs (64 steps
    # of 32 images at 32 x 32). Test accuracy in inference mode, batch
    # normalisation's averages included; chance is 0.1, and the table's
    # run (docs/training.md) gives about 0.8 here.
    from training import Options
    from training import train

    report = train(
        Options("densenet", quick=True, epochs=1, out=str(tmp_path), verbose=0)
    )
    assert report["settings"]["batchnorm_momentum"] == 0.9
    assert report["steps_per_epoch"] == 64
    assert report["quality"]["test_accuracy"] >= 0.4, report["quality"]
