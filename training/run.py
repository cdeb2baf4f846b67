"""`m2t train MODEL`: one run, from the strategy to report.json.

    settings (each checked) -> a finished run in --out? -> strategy ->
    seed, precision -> data -> model under the strategy's scope -> the
    backup: same settings? the workers' common epoch -> restore -> fit (or
    the multi-worker loop) -> evaluate, samples, plots -> report.json

What a run leaves in `--out`: report.json, loss.png and the family's
pictures, model.weights.h5 (final), best.weights.h5 (lowest loss),
logs/ (TensorBoard), and backup/ while it is unfinished.
"""

from __future__ import annotations

import json
import math
import platform
import shutil
import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from . import recipes
from . import writer
from .settings import FLAGS
from .settings import check as check_setting


@dataclass
class Options:
    """The command line's options (see `m2t train --help`).

    `epochs`, `batch_size` (global, split across replicas) and `lr`
    override the recipe when given; `settings` overrides any other setting
    (`--set num_hiddens=64`). `jit=None` means XLA on accelerators only.
    `cpu_replicas`: the logical CPU devices `mirrored` makes on a machine
    without GPUs. `overwrite`: train again into a folder that holds a
    finished run (or an unfinished one, from epoch 1).
    """

    model: str
    data: str = "embedded"
    epochs: int | None = None
    batch_size: int | None = None
    lr: float | None = None
    strategy: str = "auto"
    mixed_precision: bool = False
    jit: bool | None = None
    out: str | None = None
    resume: bool = False
    seed: int = 0
    smoke: bool = False
    quick: bool = False
    settings: dict[str, Any] = field(default_factory=dict)
    verbose: int = 1
    cpu_replicas: int = 2
    overwrite: bool = False


def default_out(model: str, data: str) -> Path:
    return Path("runs") / f"{model}-{data}"


@dataclass
class Plan:
    """What `plan` settled before TensorFlow is imported."""

    recipe: Any
    settings: dict
    out: Path
    report: dict | None = None
    """A finished run's report, when --resume finds nothing to do."""


def plan(options: Options) -> Plan:
    """Check everything that needs no TensorFlow: the recipe, every
    setting, the output folder (finished? another live writer?), and lock
    the folder this process writes (`training.writer`).

    Raises:
        ValueError: naming the flag and the value, first of all.
    """
    recipe = recipes.get(options.model)
    if recipe.missing():
        raise ValueError(
            f"{recipe.name} needs solutions/{{{','.join(recipe.missing())}}}"
            ".py, not in this repository yet"
        )
    settings = _settings(recipe, options)  # each value checked, first
    out = Path(options.out or default_out(recipe.name, options.data))
    finished = _finished(out)
    if finished is not None and not options.overwrite:
        if options.resume:
            if options.verbose:
                print(
                    f"resume: {out} holds a finished run ({finished}): "
                    "nothing to resume (--overwrite trains it again)"
                )
            report = json.loads((out / "report.json").read_text("utf-8"))
            return Plan(recipe, settings, out, report)
        raise ValueError(
            f"{out} holds a finished run ({finished}): pass --overwrite to "
            "train it again, or choose another --out"
        )
    writer.hold(out, writer.config_from_env())
    return Plan(recipe, settings, out)


def train(options: Options, planned: Plan | None = None) -> dict:
    """Train one model; returns the report (written by the chief)."""
    started = time.perf_counter()
    planned = planned or plan(options)
    if planned.report is not None:
        return planned.report
    recipe, settings = planned.recipe, planned.settings
    # The strategy first: the multi-worker one sets up the cluster before
    # anything else touches TensorFlow's devices.
    from . import strategy as strategies

    # Threads before the strategy: TensorFlow fixes them when it starts.
    op_threads = strategies.set_op_threads(settings["op_threads"])
    placement = strategies.choose(options.strategy, options.cpu_replicas)

    import keras

    keras.utils.set_random_seed(options.seed)
    policy = keras.mixed_precision.global_policy()
    if options.mixed_precision:
        keras.mixed_precision.set_global_policy(
            strategies.mixed_policy(placement)
        )
    try:
        return _train(options, recipe, placement, started, op_threads)
    finally:
        keras.mixed_precision.set_global_policy(policy)


def _train(
    options: Options, recipe, placement, started: float, op_threads: int
) -> dict:
    import keras

    from . import loop
    from . import strategy as strategies
    from .checkpoints import Backup
    from .checkpoints import agree
    from .report import Timing

    jit = (
        strategies.jit_default(placement)
        if options.jit is None
        else options.jit
    )
    hp = _settings(recipe, options)
    hp["batch_size"] = _split_batch(hp["batch_size"], placement.replicas)
    hp["per_replica_batch"] = hp["batch_size"] // placement.replicas
    say = print if placement.is_chief and options.verbose else _silent
    say(f"train: {recipe.name} ({recipe.title}) on {placement.describe()}")
    task = recipe.family_module().prepare(
        recipe, hp, options.data, options.seed, verbose=bool(options.verbose)
    )

    out = Path(options.out or default_out(recipe.name, options.data))
    # Every worker backs up (saving reads variables on all of them); the
    # others to a folder of their own, removed at the end.
    own = out
    if not placement.is_chief:
        own = out / ".workers" / "-".join(map(str, placement.task))
    multiworker = placement.kind == "multiworker"
    validate = task.validation is not None and not multiworker
    precision = keras.mixed_precision.global_policy().name
    # What a resumed run must share with the backup's (the replicas may
    # change: a job preempted on two GPUs may go on on one).
    made_with = {
        "data": options.data,
        "seed": options.seed,
        "precision": precision,
        **{k: v for k, v in hp.items() if k != "per_replica_batch"},
    }
    backup = Backup(
        own / "backup", "val_loss" if validate else "loss", made_with
    )
    if options.overwrite:
        backup.clear()
        (out / "report.json").unlink(missing_ok=True)
    pending = backup.pending()
    if pending is not None and not options.resume:
        raise ValueError(
            f"{out} holds an unfinished run (next epoch {pending + 1}): pass "
            "--resume to continue it, --overwrite to start it again, or "
            "choose another --out"
        )
    if pending is not None:
        _same_settings(out, backup.saved_settings(), backup.settings)

    net, trainer = _model(placement, task, hp, jit)
    resume_at = None
    if multiworker and options.resume:
        resume_at = agree(_kept_by_each_worker(placement, backup.epochs()))
    first_epoch = backup.restore(trainer, resume_at) if options.resume else 0
    epochs = int(hp["epochs"])
    if first_epoch:
        say(f"resume: from the backup at the end of epoch {first_epoch}")
    say(
        f"settings: global batch {hp['batch_size']} "
        f"({hp['batch_size'] // placement.replicas} per replica), "
        f"{hp['optimizer']} lr {hp['lr']} (as given, not scaled), "
        f"{epochs} epochs, jit {'on' if jit else 'off'}, {precision}, "
        f"op threads {op_threads or 'all (TensorFlow default)'}"
    )

    dataset, steps = task.train.dataset(
        hp["batch_size"], options.seed, first_epoch, epochs, hp.get("max_steps")
    )
    validation = None
    if validate:
        validation, _ = task.validation.dataset(
            hp["batch_size"], options.seed, 0, 1, hp.get("max_steps"), True
        )
    timing = Timing(task.unit)
    callbacks = [timing, backup]
    if placement.is_chief:
        callbacks.append(
            keras.callbacks.TensorBoard(str(out / "logs"), write_graph=False)
        )
    train_started = time.perf_counter()
    if first_epoch < epochs:
        loop.fit(
            trainer,
            dataset,
            multiworker=multiworker,
            epochs=epochs,
            initial_epoch=first_epoch,
            steps_per_epoch=steps,
            callbacks=callbacks,
            validation_data=validation,
            verbose=options.verbose if placement.is_chief else 0,
        )
    throughput, measured = timing.throughput()
    diverged = [
        i + 1
        for i, h in enumerate(backup.history)
        if not math.isfinite(h.get("loss", 0.0))
    ]
    if diverged:
        say(
            f"warning: the loss is not a finite number from epoch "
            f"{diverged[0]} on (report.json says null): try a lower --lr"
        )
    report: dict[str, Any] = {
        "model": recipe.name,
        "title": recipe.title,
        "lesson": recipe.lesson,
        "data": {"source": options.data, "name": task.data},
        "strategy": {
            "name": options.strategy,
            "kind": placement.kind,
            "replicas": placement.replicas,
            "devices": placement.devices,
            "workers": placement.workers,
        },
        "settings": hp,
        "lr_as_used": hp["lr"],
        "global_batch": hp["batch_size"],
        "per_replica_batch": hp["batch_size"] // placement.replicas,
        "jit_compile": jit,
        "op_threads": op_threads,
        "precision": precision,
        "epochs": len(backup.history),
        "epochs_this_run": len(timing.epochs),
        "resumed_from_epoch": first_epoch,
        "steps_per_epoch": steps,
        "final_loss": backup.history[-1]["loss"] if backup.history else None,
        "quality": {},
        "throughput": {
            "value": round(throughput, 1),
            "unit": f"{task.unit}/s",
            "measured_over": measured,
        },
        "train_time_s": round(time.perf_counter() - train_started, 2),
        "history": backup.history,
        "versions": _versions(),
        "seed": options.seed,
        "smoke": options.smoke,
        "quick": options.quick,
    }
    if placement.is_chief:
        _finish(report, out, task, net, trainer, backup, say)
    report["wall_time_s"] = round(time.perf_counter() - started, 2)
    backup.clear()
    if placement.is_chief:
        from .report import write

        say(_summary(report))
        say(f"report: {write(out / 'report.json', report)}")
    else:
        shutil.rmtree(own, ignore_errors=True)
        if own.parent.is_dir() and not any(own.parent.iterdir()):
            own.parent.rmdir()
        if options.verbose:
            print(_not_the_chief(report, placement, out))
    return report


def _not_the_chief(report: dict, placement, out: Path) -> str:
    """What a worker that is not the chief says at the end: its part and
    where the run's report is (the chief's machine, not this one)."""
    kind, index = placement.task
    chief = " ".join(map(str, placement.chief))
    loss = report["final_loss"]
    return (
        f"{kind} {index}: {report['epochs']} epochs done"
        + (f", loss {loss:.4f}" if loss is not None else "")
        + f"; the run's report is written by the chief ({chief}) to "
        f"{out / 'report.json'} on the chief's machine, with the plots "
        "and logs (this worker writes none)"
    )


def _settings(recipe, options: Options) -> dict:
    """The recipe's settings with the command line's, each checked (the
    flags win over `--set`)."""
    flags = {}
    for key in ("epochs", "batch_size", "lr"):
        value = getattr(options, key)
        if value is not None:
            flags[key] = check_setting(key, value, name=FLAGS[key])
    return recipe.resolve(
        options.data,
        smoke=options.smoke,
        quick=options.quick,
        overrides={**options.settings, **flags},
    )


def _model(placement, task, hp: dict, jit: bool):
    """The net and its Trainer, built with the optimizer, under the
    strategy's scope (so their variables are mirrored)."""
    from .step import Trainer

    with placement.strategy.scope():
        net = task.build()
        trainer = Trainer(
            net,
            task.loss,
            correct_fn=task.correct,
            clip=hp.get("clip"),
            unit=task.unit,
        )
        trainer.compile(
            optimizer=_optimizer(hp["optimizer"], hp["lr"]), jit_compile=jit
        )
        trainer(task.example, training=False)
        trainer.optimizer.build(trainer.trainable_variables)
    return net, trainer


def _finish(report, out: Path, task, net, trainer, backup, say) -> None:
    """The chief's end: weights, evaluation, samples, plots."""
    from . import plots

    trainer.save_weights(out / "model.weights.h5")
    backup.save_best(trainer, out / "best.weights.h5")
    report["best_epoch"] = {backup.monitor: backup.best_epoch}
    end = task.finish(net, out, backup.history) if task.finish else {}
    report["quality"] = end.get("quality", {})
    report["samples"] = end.get("samples", [])
    curve = plots.curves(
        backup.history, out / "loss.png", report["model"], quality=task.curve
    )
    report["plots"] = [curve.name, *end.get("plots", [])]
    for line in report["samples"]:
        say(line)


def _finished(out: Path) -> str | None:
    """What the finished run in `out` is ("transformer, 30 epochs"), or
    None when `out` holds none."""
    path = out / "report.json"
    if not path.exists():
        return None
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
        return f"{report['model']}, {report['epochs']} epochs, report.json"
    except (ValueError, KeyError, TypeError):
        return "report.json"


def _same_settings(out: Path, saved: dict | None, now: dict) -> None:
    """Refuse to resume with settings other than the backup's."""
    if saved is None:
        return
    now = json.loads(json.dumps(now))  # tuples as lists, as saved
    differ = [
        f"{k}: {saved.get(k)!r} then, {now.get(k)!r} now"
        for k in sorted(set(saved) | set(now))
        if saved.get(k) != now.get(k)
    ]
    if differ:
        raise ValueError(
            f"--resume: the unfinished run in {out} was made with other "
            f"settings ({'; '.join(differ)}): resume it with its own, or "
            "pass --overwrite to start again"
        )


def _kept_by_each_worker(placement, kept: list[int]) -> dict[str, list[int]]:
    """Every worker's kept backup epochs, exchanged with one all-gather
    (a collective: every worker calls this at the same point)."""
    import numpy as np
    import tensorflow as tf

    from .checkpoints import KEEP

    kind, index = placement.task
    mine = [0 if kind == "chief" else 1, index]
    mine += ([0] * KEEP + kept)[-KEEP:]  # oldest first, 0: none
    strategy = placement.strategy

    @tf.function
    def gather():
        context = tf.distribute.get_replica_context()
        return context.all_gather(tf.constant([mine], tf.int64), axis=0)

    result = strategy.experimental_local_results(strategy.run(gather))[0]
    rows = {tuple(row) for row in np.asarray(result).tolist()}
    return {
        f"{'chief' if role == 0 else 'worker'} {i}": [e for e in epochs if e]
        for role, i, *epochs in sorted(rows)
    }


def _silent(*args, **kwargs) -> None:
    pass


def _split_batch(batch: int, replicas: int) -> int:
    """The global batch, a multiple of the replicas (rounded down)."""
    batch = int(batch)
    if batch < replicas:
        raise ValueError(
            f"--batch-size {batch} is smaller than the {replicas} replicas"
        )
    if batch % replicas:
        rounded = batch - batch % replicas
        print(
            f"notice: global batch {batch} rounded down to {rounded}, a "
            f"multiple of the {replicas} replicas"
        )
        return rounded
    return batch


def _optimizer(name: str, lr: float):
    import keras

    if name == "sgd":
        return keras.optimizers.SGD(learning_rate=lr)
    if name == "adam":
        return keras.optimizers.Adam(learning_rate=lr)
    raise ValueError(f"`optimizer` must be 'sgd' or 'adam', got {name!r}")


def _summary(report: dict) -> str:
    quality = ", ".join(
        f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
        for k, v in report["quality"].items()
    )
    rate = report["throughput"]
    loss = report["final_loss"]
    parts = [
        f"{report['model']}: {report['epochs']} epochs",
        f"loss {loss:.4f}" if loss is not None else "no epochs",
    ]
    if quality:
        parts.append(quality)
    parts.append(f"{rate['value']:,.0f} {rate['unit']}")
    parts.append(f"{report['wall_time_s']:.1f} s")
    strategy = report["strategy"]
    parts.append(f"{strategy['kind']} x{strategy['replicas']}")
    return ", ".join(parts)


def _versions() -> dict:
    import keras
    import tensorflow as tf

    return {
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
        "python": platform.python_version(),
    }
