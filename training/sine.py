"""The autoregressive MLP of lesson 05 on the noisy sine (d2l's setting).

Squared error per example, weight 1/B. The picture that teaches: the data
with the one-step predictions, which follow it, and the k-step ones, which
drift towards a flat line as k grows (errors pile up).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import tensorflow as tf

import m2t_data

from . import plots
from .data import Examples
from .data import permutation
from .data import uniform_weights
from .recipes import Recipe
from .task import Task

K_STEPS = (1, 4, 16, 64)


def prepare(
    recipe: Recipe, hp: dict, source: str, seed: int, verbose: bool = True
) -> Task:
    m = importlib.import_module(f"solutions.{recipe.lesson}")
    tau, n_train = int(hp["tau"]), int(hp["n_train"])
    time, x = m2t_data.noisy_sine(T=int(hp["T"]), seed=0, verbose=verbose)
    features, labels = m.lagged_features(x, tau)
    features = np.asarray(features, np.float32)
    labels = np.asarray(labels, np.float32).reshape(-1)

    def make_batch(parts, indices):
        f, y = parts
        return f, y, uniform_weights(y)

    train = (features[:n_train], labels[:n_train])

    def finish(net, out: Path, history: list[dict]) -> dict:
        one = np.asarray(net(features, training=False)).reshape(-1)
        test_mse = float(np.mean((one[n_train:] - labels[n_train:]) ** 2))
        quality = {"test_mse_1step": test_mse}
        predictions = {}
        for k in K_STEPS:
            pred = np.asarray(m.k_step_predict(net, x, tau, k))
            predictions[k] = pred
            quality[f"mse_{k}step"] = float(
                np.mean((pred - x[tau + k - 1 :]) ** 2)
            )
        fig, (left, right) = plots.figure(12, 3.8, cols=2)
        left.plot(time, x, color="0.6", lw=0.8, label="data")
        left.plot(time[tau:], one, lw=1.2, label="1-step predictions")
        left.axvline(time[n_train + tau], color="k", ls=":", lw=1)
        left.text(time[n_train + tau], 1.45, " test", fontsize=8)
        left.set(xlabel="time", ylabel="x", title="one step ahead")
        for k, pred in predictions.items():
            right.plot(time[tau + k - 1 :], pred, lw=1, label=f"{k}-step")
        right.set(xlabel="time", title="k steps ahead: errors pile up")
        for ax in (left, right):
            ax.set_ylim(-1.6, 1.6)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8, loc="lower left")
        png = plots.save(fig, out / "predictions.png")
        return {"quality": quality, "plots": [png.name]}

    return Task(
        build=lambda: m.autoregressive_mlp(tau, int(hp["num_hiddens"])),
        example=features[:1],
        loss=_squared_error,
        train=Examples(train, make_batch, permutation(n_train), n_train),
        data=f"noisy_sine (generated, T {hp['T']}): {n_train} training "
        f"windows of tau {tau}, {len(labels) - n_train} held out",
        unit="examples",
        finish=finish,
    )


def _squared_error(y, pred):
    """`(y - pred)^2` per example: `(B,)`."""
    pred = tf.reshape(tf.cast(pred, tf.float32), tf.shape(y))
    return tf.square(y - pred)
