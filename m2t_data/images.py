"""Image pipelines: ``toy_shapes`` (embedded) or Fashion-MNIST (TFDS)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ._fetch import DataNotFoundError
from ._log import announce
from .toy_shapes import toy_shapes

if TYPE_CHECKING:  # TensorFlow is imported on first use (it takes ~3 s).
    import tensorflow as tf

_SOURCES = ("embedded", "fashion_mnist", "real")


def images(
    source: str = "embedded",
    split: str = "train",
    resize: int | tuple[int, int] | None = None,
    batch_size: int | None = None,
    *,
    data_dir: str | os.PathLike | None = None,
    download: bool = True,
    fallback: bool = False,
    seed: int = 0,
    verbose: bool = False,
) -> tf.data.Dataset:
    """A ``tf.data`` pipeline of (image, label) pairs, in a fixed order.

    Args:
        source: ``"embedded"``: ``toy_shapes`` (6,000 train / 1,000 test,
            10 balanced classes). ``"fashion_mnist"`` (alias ``"real"``):
            TFDS's ``fashion_mnist`` builder (60,000 / 10,000).
        split: ``"train"`` or ``"test"``.
        resize: output side ``S`` (or ``(H, W)``), e.g. 224 for AlexNet,
            96 for GoogLeNet; bilinear. ``None`` keeps 28 x 28.
        batch_size: batch the pipeline (last batch may be smaller).
        data_dir: Fashion-MNIST only: TFDS ``data_dir``.
        download: Fashion-MNIST only: may TFDS download it if absent.
        fallback: Fashion-MNIST only: when it is absent, print a notice and
            return the embedded set instead of raising.
        seed: embedded only: generator seed.
        verbose: print a ``data: ...`` line saying which data this is.

    Returns:
        ``tf.data.Dataset`` of ``(image, label)``: image float32
        ``(H, W, 1)`` in ``[0, 1]``, label int32 ``()``; with
        ``batch_size``: ``(B, H, W, 1)`` and ``(B,)``. Not shuffled:
        call ``.shuffle`` in the training loop.

    Raises:
        DataNotFoundError: Fashion-MNIST is absent and cannot be
            downloaded (and ``fallback`` is False).
    """
    if source not in _SOURCES:
        raise ValueError(f"`source` must be one of {_SOURCES}, got {source!r}")
    if split not in ("train", "test"):
        raise ValueError(f"`split` must be 'train' or 'test', got {split!r}")
    import tensorflow as tf

    if source == "embedded":
        ds = _embedded(split, seed, verbose)
    else:
        try:
            ds = _fashion_mnist(split, data_dir, download, verbose)
        except DataNotFoundError as e:
            if not fallback:
                raise
            print(
                f"notice: {e}\nnotice: falling back to the embedded "
                "toy_shapes images.",
                flush=True,
            )
            ds = _embedded(split, seed, verbose)

    size = None
    if resize is not None:
        size = (resize, resize) if isinstance(resize, int) else tuple(resize)

    def prepare(image, label):
        image = tf.cast(image, tf.float32) / 255.0
        if size is not None:
            image = tf.image.resize(image, size, method="bilinear")
        return image, tf.cast(label, tf.int32)

    ds = ds.map(prepare, num_parallel_calls=tf.data.AUTOTUNE)
    if batch_size is not None:
        ds = ds.batch(batch_size)
    return ds.prefetch(tf.data.AUTOTUNE)


def _embedded(split: str, seed: int, verbose: bool) -> tf.data.Dataset:
    import tensorflow as tf

    x, y = toy_shapes(split, seed)
    announce(
        f"data: toy_shapes (embedded, seed {seed}, split {split})", verbose
    )
    return tf.data.Dataset.from_tensor_slices((x, y))


def _fashion_mnist(
    split: str,
    data_dir: str | os.PathLike | None,
    download: bool,
    verbose: bool,
) -> tf.data.Dataset:
    import tensorflow_datasets as tfds

    builder = tfds.builder("fashion_mnist", data_dir=data_dir)
    if not builder.is_prepared():
        where = builder.data_dir
        if not download:
            raise DataNotFoundError(
                f"fashion_mnist: not prepared in {where} and download=False. "
                "Run once online, or pass data_dir= a TFDS data folder that "
                "holds fashion_mnist."
            )
        try:
            builder.download_and_prepare()
        except Exception as e:  # network and TFDS errors vary
            raise DataNotFoundError(
                f"fashion_mnist: not prepared in {where} and the download "
                f"failed ({type(e).__name__}: {e}). Offline? Pass data_dir= "
                "a TFDS data folder that holds fashion_mnist."
            ) from e
    announce(f"data: fashion_mnist (real, {builder.data_dir})", verbose)
    return builder.as_dataset(split=split, as_supervised=True)
