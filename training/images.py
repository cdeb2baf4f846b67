"""Image classifiers (lessons 01-04) on toy_shapes or Fashion-MNIST.

Softmax cross-entropy per image, weight 1/B; accuracy on the test split
after every epoch (d2l's "test acc"). The picture that teaches: test
images with the predicted and the true class, mistakes in red.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

import m2t_data

from . import plots
from .data import Examples
from .data import permutation
from .data import uniform_weights
from .recipes import Recipe
from .task import Task
from .task import argmax_correct
from .task import cross_entropy

FASHION_MNIST = (
    "t-shirt", "trouser", "pullover", "dress", "coat",
    "sandal", "shirt", "sneaker", "bag", "ankle boot",
)  # fmt: skip
NUM_CLASSES = 10


def _mlp(m, hp):
    return m.MLP(hp["num_hiddens"], NUM_CLASSES)


def _alexnet(m, hp):
    r = hp.get("ratio", 1)
    return m.alexnet(
        NUM_CLASSES,
        widths=tuple(w // r for w in (96, 256, 384, 384, 256)),
        num_hiddens=4096 // r,
    )


def _vgg(m, hp):
    arch = tuple((n, c // hp["ratio"]) for n, c in m.VGG11)
    return m.vgg(arch, NUM_CLASSES, num_hiddens=hp.get("num_hiddens", 4096))


def _nin(m, hp):
    r = hp.get("ratio", 1)
    return m.nin(NUM_CLASSES, widths=tuple(w // r for w in (96, 256, 384)))


def _googlenet(m, hp):
    return m.googlenet(NUM_CLASSES)


def _resnet18(m, hp):
    widths = tuple(w // hp["ratio"] for w in (64, 128, 256, 512))
    return m.resnet18(NUM_CLASSES, widths=widths)


def _densenet(m, hp):
    r = hp["ratio"]
    return m.densenet(NUM_CLASSES, num_channels=64 // r, growth_rate=32 // r)


BUILDERS = {
    "mlp": _mlp,
    "alexnet": _alexnet,
    "vgg": _vgg,
    "nin": _nin,
    "googlenet": _googlenet,
    "resnet18": _resnet18,
    "densenet": _densenet,
}


def load(source: str, split: str, limit: int | None, verbose: bool):
    """All images of a split as uint8 `(N, 28, 28, 1)` and int32 `(N,)`.

    Raises:
        FileNotFoundError: `source` "real" and Fashion-MNIST not prepared
            (nothing is downloaded at run time).
    """
    try:
        ds = m2t_data.images(
            "embedded" if source == "embedded" else "fashion_mnist",
            split,
            download=False,
            verbose=verbose,
        )
    except m2t_data.DataNotFoundError as exc:
        raise FileNotFoundError(
            f"--data real needs Fashion-MNIST prepared by TFDS ({exc}): "
            "prepare it once online (tfds.load('fashion_mnist')) or set "
            "TFDS_DATA_DIR to a folder that holds it; --data embedded "
            "needs nothing"
        ) from exc
    if limit:
        ds = ds.take(limit)
    x, y = next(iter(ds.batch(1 << 20)))
    x = np.round(x.numpy() * 255).astype(np.uint8)
    return x, y.numpy().astype(np.int32)


def predict(
    net, images: np.ndarray, size: int | None = None, training: bool = False
) -> np.ndarray:
    """Predicted classes `(N,)` of uint8 images `(N, 28, 28, 1)`, resized
    to `size` x `size` where given, in batches of 256. `training=True`
    normalises each batch by its own statistics (a diagnosis of batch
    norm's moving averages, `benchmarks.evaluate_run`)."""
    classes = []
    for i in range(0, len(images), 256):
        x = tf.cast(images[i : i + 256], tf.float32) / 255.0
        if size:
            x = tf.image.resize(x, (size, size), method="bilinear")
        classes.append(np.argmax(np.asarray(net(x, training=training)), -1))
    return np.concatenate(classes)


def prepare(
    recipe: Recipe, hp: dict, source: str, seed: int, verbose: bool = True
) -> Task:
    module = importlib.import_module(f"solutions.{recipe.lesson}")
    train = load(source, "train", hp.get("examples"), verbose)
    test = load(source, "test", hp.get("test_examples"), False)
    size = hp.get("resize")
    names = (
        importlib.import_module("m2t_data.toy_shapes").CLASS_NAMES
        if source == "embedded"
        else FASHION_MNIST
    )

    def make_batch(parts, indices):
        x, y = parts
        x = tf.cast(x, tf.float32) / 255.0
        if size:
            x = tf.image.resize(x, (size, size), method="bilinear")
        return x, y, uniform_weights(y)

    def examples(arrays):
        n = len(arrays[1])
        return Examples(arrays, make_batch, permutation(n), n)

    side = size or 28
    data = (
        f"{'toy_shapes' if source == 'embedded' else 'fashion_mnist'} "
        f"({source}): {len(train[1])} train / {len(test[1])} test images, "
        f"{side}x{side}"
    )

    def finish(net, out: Path, history: list[dict]) -> dict:
        last = history[-1] if history else {}
        accuracy = last.get("val_accuracy")
        if accuracy is None:  # no validation in the multi-worker loop
            accuracy = float(np.mean(predict(net, test[0], size) == test[1]))
        quality = {
            "test_accuracy": accuracy,
            "train_accuracy": last.get("accuracy"),
        }
        x = test[0][:16].astype(np.float32) / 255.0
        pred = predict(net, test[0][:16], size)
        truth = test[1][:16]
        titles = [
            f"{names[p]}\n({names[t]})"
            for p, t in zip(pred, truth, strict=True)
        ]
        colors = [
            "black" if p == t else "red"
            for p, t in zip(pred, truth, strict=True)
        ]
        png = plots.image_grid(
            x,
            titles,
            out / "predictions.png",
            f"{recipe.name}: predicted (true); mistakes in red",
            colors,
        )
        return {"quality": quality, "plots": [png.name]}

    def build():
        net = BUILDERS[recipe.name](module, hp)
        momentum = hp.get("batchnorm_momentum")
        if momentum is not None:
            # Keras has no public walk over the layers inside custom ones
            # (ResNet's Residual, DenseNet's blocks).
            for layer in net._flatten_layers():
                if isinstance(layer, keras.layers.BatchNormalization):
                    layer.momentum = float(momentum)
        return net

    return Task(
        build=build,
        example=np.zeros((1, side, side, 1), np.float32),
        loss=cross_entropy,
        train=examples(train),
        validation=examples(test) if hp["validate"] else None,
        data=data,
        unit="images",
        correct=argmax_correct,
        curve="accuracy",
        finish=finish,
    )
