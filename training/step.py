"""One training step, shared by `model.fit` and the multi-worker loop.

Every pipeline yields `(x, y, w)`: inputs, targets and a weight per loss
element, fixed by the *global* batch: 1/B per image (the weights sum to
1); for translation d2l's seq2seq loss, 1/T per valid target token of a
`(B, T)` batch, 0 at padding (each sequence's loss averaged over its T
positions, summed over the sequences; `data.sequence_weights`). A
replica's loss is then `sum(loss_i * w_i)` over its share of the batch,
and the sum over replicas (which is what the optimizer does with the
replicas' gradients) is exactly the global batch's loss. This is
`tf.nn.compute_average_loss` generalised to weighted losses, and it needs
no collective op in the step: the split of a batch across replicas or
workers changes nothing but float rounding.
"""

from __future__ import annotations

from collections.abc import Callable

import keras
import tensorflow as tf


class Trainer(keras.Model):
    """A model wrapped with its loss, so `fit` and our loop run one step.

    Args:
        net: the reference model (a `keras.layers.Layer` or `Model`) that
            maps `x` to predictions.
        loss_fn: `(y, y_pred) -> per-element losses`, float32, the shape of
            the weights `w` (e.g. `(B,)` images, `(B, T)` tokens).
        correct_fn: optional `(y, y_pred) -> per-element 0/1`, the shape of
            `w`; tracked as "accuracy".
        clip: clip the gradient to this global L2 norm (d2l's
            `grad_clipping`), computed over the whole global batch.
        unit: what one loss element is ("images", "tokens", "examples");
            a metric of that name counts them, for throughput.
    """

    def __init__(
        self,
        net: keras.layers.Layer,
        loss_fn: Callable,
        correct_fn: Callable | None = None,
        clip: float | None = None,
        unit: str = "examples",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.net = net
        self.loss_fn = loss_fn
        self.correct_fn = correct_fn
        self.clip = clip
        self.unit = unit
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.accuracy_tracker = (
            keras.metrics.Mean(name="accuracy") if correct_fn else None
        )
        self.unit_counter = keras.metrics.Sum(name=unit)

    def call(self, inputs, training=None):
        return self.net(inputs, training=training)

    @property
    def metrics(self):
        trackers = [self.loss_tracker, self.accuracy_tracker, self.unit_counter]
        return [m for m in trackers if m is not None]

    def update(self, data) -> None:
        """One replica's step on its share `(x, y, w)` of a global batch."""
        x, y, w = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            per_element = self.loss_fn(y, y_pred)
            loss = tf.reduce_sum(per_element * w)  # this replica's share
            scaled = self.optimizer.scale_loss(loss)  # mixed float16
        variables = self.trainable_variables
        grads = tape.gradient(scaled, variables)
        if self.clip:
            grads = self._clip(grads)
        self.optimizer.apply(grads, variables)
        self._track(y, y_pred, per_element, w)

    def _clip(self, grads):
        # d2l's `grad_clipping` measures the L2 norm of the whole, dense
        # gradient. An embedding's gradient comes as IndexedSlices, whose
        # `values` repeat a row once per occurrence of its token: their
        # norm is not the dense gradient's. So make every gradient dense
        # first (duplicates summed), then measure.
        grads = [None if g is None else tf.convert_to_tensor(g) for g in grads]
        # Keras optimizers clip each replica's gradient before summing the
        # replicas, which is not d2l's clipping of the whole gradient. So
        # sum here, clip, and hand each replica 1/R of the result: the
        # optimizer's own sum gives back the clipped whole. The gradients
        # are loss-scaled under mixed float16; clipping commutes with the
        # scale, so the threshold is scaled too.
        context = tf.distribute.get_replica_context()
        replicas = context.num_replicas_in_sync if context else 1
        if replicas > 1:
            grads = context.all_reduce(tf.distribute.ReduceOp.SUM, grads)
        scale = tf.cast(self.optimizer.scale_loss(1.0), tf.float32)
        grads, _ = tf.clip_by_global_norm(grads, self.clip * scale)
        if replicas > 1:
            grads = [None if g is None else g / replicas for g in grads]
        return grads

    def _track(self, y, y_pred, per_element, w) -> None:
        # The epoch's figures weigh every counted element (image, token)
        # alike, as d2l's accumulators do: `w` is fixed by each global
        # batch, so weighing by it would average the batches' means, and
        # the last, smaller batch of an evaluation pass (1,000 test images
        # in batches of 256: 232) would count as much as a full one.
        counted = tf.cast(w > 0, tf.float32)
        self.loss_tracker.update_state(per_element, sample_weight=counted)
        if self.accuracy_tracker is not None:
            correct = self.correct_fn(y, y_pred)
            self.accuracy_tracker.update_state(correct, sample_weight=counted)
        self.unit_counter.update_state(tf.reduce_sum(counted))

    def train_step(self, data):
        self.update(data)
        return {m.name: m.result() for m in self.metrics}

    def test_step(self, data):
        x, y, w = data
        y_pred = self(x, training=False)
        self._track(y, y_pred, self.loss_fn(y, y_pred), w)
        return {m.name: m.result() for m in self.metrics}
