"""Run the epochs: `model.fit`, or our small loop where fit cannot go.

Keras 3.15's `model.fit` fails under MultiWorkerMirroredStrategy
(keras-team/keras#20585: "Attempt to convert a value (PerReplica...) to a
Tensor"). `multiworker_fit` stands in for it there only, with the same
step (`Trainer.update`), the same callbacks and the same logs. To see
whether a later Keras lets it go, make `fit` below call `trainer.fit` for
every strategy and run
tests/test_train_distribute.py -k loopback_workers; if they
pass, delete `multiworker_fit`.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from .step import Trainer


def fit(
    trainer: Trainer,
    dataset: tf.data.Dataset,
    *,
    multiworker: bool,
    epochs: int,
    initial_epoch: int,
    steps_per_epoch: int,
    callbacks: list[keras.callbacks.Callback],
    validation_data: tf.data.Dataset | None = None,
    verbose: int = 1,
) -> None:
    """Train from `initial_epoch` to `epochs` on batches `(x, y, w)`.

    `dataset` yields global batches and repeats; `steps_per_epoch` of them
    make an epoch.
    """
    if not multiworker:
        trainer.fit(
            dataset,
            epochs=epochs,
            initial_epoch=initial_epoch,
            steps_per_epoch=steps_per_epoch,
            validation_data=validation_data,
            callbacks=callbacks,
            verbose=verbose,
            shuffle=False,  # the order is drawn in data.py
        )
        return
    multiworker_fit(
        trainer,
        dataset,
        epochs=epochs,
        initial_epoch=initial_epoch,
        steps_per_epoch=steps_per_epoch,
        callbacks=callbacks,
        verbose=verbose,
    )


def multiworker_fit(
    trainer: Trainer,
    dataset: tf.data.Dataset,
    *,
    epochs: int,
    initial_epoch: int,
    steps_per_epoch: int,
    callbacks: list[keras.callbacks.Callback],
    verbose: int = 1,
) -> None:
    """`fit` for MultiWorkerMirroredStrategy (no validation).

    Every worker runs every line here: reading a metric sums it over the
    workers, a collective op that all of them must join.
    """
    strategy = trainer.distribute_strategy
    batches = iter(strategy.experimental_distribute_dataset(dataset))

    @tf.function
    def step(batch):
        strategy.run(trainer.update, args=(batch,))

    def logs():
        return {m.name: float(m.result()) for m in trainer.metrics}

    hooks = keras.callbacks.CallbackList(
        callbacks,
        add_progbar=verbose > 0,
        model=trainer,
        verbose=verbose,
        epochs=epochs,
        steps=steps_per_epoch,
    )
    trainer.stop_training = False
    hooks.on_train_begin()
    epoch_logs = {}
    for epoch in range(initial_epoch, epochs):
        trainer.reset_metrics()
        hooks.on_epoch_begin(epoch)
        for index in range(steps_per_epoch):
            hooks.on_train_batch_begin(index)
            step(next(batches))
            hooks.on_train_batch_end(index, logs())
        epoch_logs = logs()
        hooks.on_epoch_end(epoch, epoch_logs)
        if trainer.stop_training:
            break
    hooks.on_train_end(epoch_logs)
