"""In-memory examples served as global batches, in an order fixed by seed.

Every data set in the course fits in memory, so a pipeline is: the epoch's
order of example indices, drawn with NumPy from `(seed, epoch)`; batches of
indices; one `tf.gather` (and any resize) per batch; the loss weights; and
prefetch. Drawing the order ourselves, rather than with `Dataset.shuffle`,
makes it the same under every strategy (`shuffle` re-seeds when a strategy
rewrites the pipeline) and makes a resumed run see exactly the batches the
uninterrupted run would have seen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import tensorflow as tf


def permutation(n: int) -> Callable[[np.random.Generator, int], np.ndarray]:
    """An epoch's order: a random permutation of `n` examples."""
    return lambda rng, global_batch: rng.permutation(n)


@dataclass
class Examples:
    """Arrays whose first axis indexes examples, and how to batch them.

    Attributes:
        arrays: NumPy arrays, each `(N, ...)` (or, for language models, the
            corpus `(L,)`, with `order` drawing window starts).
        make_batch: `(tensors gathered at a batch of indices, indices) ->
            (x, y, w)`, in TensorFlow; `w` weighs each loss element (see
            step.py).
        order: `(rng, global batch) -> int array`, the indices of one
            epoch, in order (batch after batch).
        size: indices per epoch (e.g. N).
        gather: gather the arrays at the indices (False: pass the whole
            arrays and let `make_batch` index them, e.g. windows).
        steps: `global batch -> batches per epoch`, when not
            `size // global batch`.
    """

    arrays: tuple[np.ndarray, ...]
    make_batch: Callable
    order: Callable[[np.random.Generator, int], np.ndarray]
    size: int
    gather: bool = True
    steps: Callable[[int], int] | None = None

    def steps_per_epoch(self, global_batch: int) -> int:
        steps = (
            self.steps(global_batch)
            if self.steps
            else self.size // global_batch
        )
        if steps == 0:
            raise ValueError(
                f"the global batch {global_batch} is larger than the "
                f"{self.size} examples of an epoch: pass a smaller "
                "--batch-size"
            )
        return steps

    def dataset(
        self,
        global_batch: int,
        seed: int,
        first_epoch: int,
        epochs: int,
        max_steps: int | None = None,
        whole: bool = False,
    ) -> tuple[tf.data.Dataset, int]:
        """Global batches `(x, y, w)` for epochs `first_epoch..epochs-1`.

        Args:
            whole: one pass over every example, in order, the last batch
                possibly smaller (for evaluation); otherwise full batches
                only, in each epoch's random order.

        Returns:
            the dataset (exactly `steps * (epochs - first_epoch)` batches,
            at least one epoch's worth) and `steps`, batches per epoch.
        """
        if whole:
            steps = -(-self.size // global_batch)
            order = np.arange(self.size)
        else:
            steps = self.steps_per_epoch(global_batch)
        if max_steps:
            steps = min(steps, max_steps)
        if whole:
            order = order[: steps * global_batch]
        else:
            order = np.concatenate(
                [
                    self.order(rng_of(seed, epoch), global_batch)[
                        : steps * global_batch
                    ]
                    for epoch in range(
                        first_epoch, max(epochs, first_epoch + 1)
                    )
                ]
            )
        tensors = tuple(tf.constant(a) for a in self.arrays)

        def batch(indices):
            if self.gather:
                parts = tuple(tf.gather(t, indices) for t in tensors)
            else:
                parts = tensors
            return self.make_batch(parts, indices)

        ds = tf.data.Dataset.from_tensor_slices(order.astype(np.int32))
        ds = ds.batch(global_batch, drop_remainder=not whole)
        ds = ds.map(batch, num_parallel_calls=tf.data.AUTOTUNE)
        options = tf.data.Options()
        options.deterministic = True
        # Each worker builds the same batches; the strategy hands each
        # replica its slice of every global batch.
        options.experimental_distribute.auto_shard_policy = (
            tf.data.experimental.AutoShardPolicy.DATA
        )
        return ds.with_options(options).prefetch(tf.data.AUTOTUNE), steps


def rng_of(seed: int, epoch: int) -> np.random.Generator:
    """The random numbers of one epoch: the same for every strategy, and
    for a run resumed at that epoch."""
    return np.random.default_rng([seed, epoch])


def uniform_weights(like: tf.Tensor) -> tf.Tensor:
    """1/N for each of the N elements of `like` (a global batch)."""
    n = tf.cast(tf.size(like), tf.float32)
    return tf.ones(tf.shape(like), tf.float32) / n


def sequence_weights(mask: tf.Tensor) -> tf.Tensor:
    """`mask / T` for a `(B, T)` mask: d2l's seq2seq loss, each sequence's
    masked loss averaged over its T positions (padding counted as 0), summed
    over the batch's sequences. Its gradient is N / T times that of the
    mean over the N valid tokens (weights mask / N), and that is what
    d2l's `grad_clipping` at theta = 1 measures in `train_seq2seq`."""
    mask = tf.cast(mask, tf.float32)
    return mask / tf.cast(tf.shape(mask)[1], tf.float32)
