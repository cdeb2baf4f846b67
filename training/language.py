"""Character language models (lessons 08-12) on The Time Machine or
toy_char_corpus.

d2l's data: the lines as characters, concatenated (no separator), the
vocabulary over all of them, the corpus cut to the first `max_tokens`
(10,000), and minibatches of num_steps by lesson 07's sampling:

* "sequential" (d2l's default in these chapters): after a random offset
  the corpus is cut into B rows; batch i holds columns [i T, (i+1) T) of
  every row, so row b continues row b of the batch before and the hidden
  state carries over (detached), from zeros at each epoch's start;
* "random": non-overlapping windows in a random order, each from a zero
  state.

Loss: cross-entropy per token, weight 1/(B T); perplexity = exp(the
epoch's mean loss), as d2l prints it. Gradients are clipped to norm 1 over
the whole global batch.

At the end: greedy text after a prefix (lesson 08's `predict`), printed and
drawn, and the perplexity curve.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf
from keras import ops

import m2t_data

from . import plots
from .data import Examples
from .data import uniform_weights
from .recipes import Recipe
from .task import Task
from .task import argmax_correct
from .task import cross_entropy

PREFIXES = {
    "real": ["time traveller", "traveller"],
    "embedded": ["the keeper", "the storm"],
}
NUM_PREDS = 50


def _lesson(name: str):
    return importlib.import_module(f"solutions.{name}")


class CellLM(keras.layers.Layer):
    """One-hot tokens -> a recurrent layer -> Dense(V): lesson 08's model
    protocol (`call(inputs, state) -> (logits, state)`, `begin_state`) for
    cells and layers that do not have it.

    Args:
        vocab_size: int, V.
        recurrent: a Keras recurrent layer with `return_sequences=True`
            and `return_state=True` (e.g. `keras.layers.RNN(GRUCell(U),
            ...)`), or lesson 12's `StackedRNN`.

    Call arguments:
        inputs: `(B, T)` token indices.
        state: None (zeros) or what the previous call returned.

    Returns:
        `(logits (B, T, V), state)`.
    """

    def __init__(self, vocab_size: int, recurrent, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = int(vocab_size)
        self.recurrent = recurrent
        self.dense = keras.layers.Dense(vocab_size, name="dense")

    def begin_state(self, batch_size):
        return None  # the recurrent layer starts from zeros

    def call(self, inputs, state=None, training=None):
        X = ops.one_hot(ops.cast(inputs, "int32"), self.vocab_size)
        X = ops.cast(X, self.compute_dtype)  # (B, T, V)
        if isinstance(self.recurrent, keras.layers.RNN):
            outputs, *state = self.recurrent(
                X, initial_state=state, training=training
            )
        else:  # lesson 12's StackedRNN: (outputs, per-layer states)
            outputs, state = self.recurrent(
                X, initial_state=state, training=training
            )
        return self.dense(outputs), state  # (B, T, V)


class CarriedState(keras.layers.Layer):
    """Train `core` on sequential minibatches, carrying its state across.

    Each replica keeps the state of its own rows in variables local to it
    (`ON_READ`): under a strategy, a replica gets the same rows of every
    global batch, so its rows continue its rows. The state is detached
    (no gradient flows into the batch before) and restarts from zeros on
    the first batch of an epoch (`reset`), as d2l's `train_epoch_ch8`.

    Args:
        core: lesson 08's model protocol, `core(tokens, state) -> (logits,
            state)`, None meaning zeros.
        rows: int, this replica's batch size (the global batch / replicas).
        num_steps: int, T.

    Call arguments:
        inputs: `(tokens (B, T), reset (B,))` in training, reset 1.0 on
            an epoch's first batch, else 0.0; `tokens`
            alone, or that pair, otherwise (from zeros, nothing kept).

    Returns:
        `(B, T, V)` logits.
    """

    def __init__(self, core, rows: int, num_steps: int, **kwargs):
        super().__init__(**kwargs)
        self.core = core
        _, state = core(np.zeros((rows, num_steps), np.int32))
        self._structure = state
        self.state = [
            tf.Variable(
                tf.zeros_like(part),
                trainable=False,
                synchronization=tf.VariableSynchronization.ON_READ,
                aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
                name=f"carried_state_{i}",
            )
            for i, part in enumerate(tf.nest.flatten(state))
        ]

    def call(self, inputs, training=None):
        if not isinstance(inputs, (tuple, list)):
            inputs = (inputs, None)
        tokens, reset = inputs
        if not training:
            logits, _ = self.core(tokens, training=training)
            return logits
        keep = 1.0 - tf.cast(reset, self.compute_dtype)[:, None]  # (B, 1)
        state = tf.nest.pack_sequence_as(
            self._structure, [v * tf.cast(keep, v.dtype) for v in self.state]
        )
        logits, state = self.core(tokens, state, training=training)
        for variable, part in zip(
            self.state, tf.nest.flatten(state), strict=True
        ):
            variable.assign(tf.stop_gradient(part))
        return logits


class Logits(keras.layers.Layer):
    """`core(inputs) -> (logits, state)` seen as `inputs -> logits`."""

    def __init__(self, core, **kwargs):
        super().__init__(**kwargs)
        self.core = core

    def call(self, inputs, training=None):
        logits, _ = self.core(inputs, training=training)
        return logits


def _core(name: str, hp: dict, vocab_size: int):
    units = int(hp["num_hiddens"])
    if name == "rnn_scratch":
        return _lesson("l08_rnn_scratch").RNNScratch(vocab_size, units)
    if name == "rnn":
        return _lesson("l09_rnn_concise").RNNModel(vocab_size, units)
    if name in ("gru", "lstm"):
        cell = (
            _lesson("l10_gru").GRUCell(units)
            if name == "gru"
            else _lesson("l11_lstm").LSTMCell(units)
        )
        layer = keras.layers.RNN(
            cell, return_sequences=True, return_state=True, name=name
        )
        return CellLM(vocab_size, layer)
    if name == "deep_rnn":
        stacked = _lesson("l12_deep_bidirectional_rnn").StackedRNN(
            int(hp["num_layers"]), units, cell="lstm"
        )
        return CellLM(vocab_size, stacked)
    raise ValueError(f"no language model called {name!r}")


def load_corpus(source: str, max_tokens: int | None, verbose: bool):
    """d2l's `load_corpus_time_machine`: (corpus (L,) int32, vocab)."""
    text = _lesson("l06_text_preprocessing")
    lines = m2t_data.time_machine_lines(
        source,
        m2t_data.real_data_dir() if source == "real" else None,
        verbose=verbose,
    )
    tokens = text.tokenize(lines, "char")
    vocab = text.Vocab(tokens)
    corpus = np.asarray(
        [vocab[tok] for line in tokens for tok in line], np.int32
    )
    if max_tokens:
        corpus = corpus[:max_tokens]
    return corpus, vocab


def prepare(
    recipe: Recipe, hp: dict, source: str, seed: int, verbose: bool = True
) -> Task:
    num_steps = int(hp["num_steps"])
    corpus, vocab = load_corpus(source, hp.get("max_tokens"), verbose)
    V = len(vocab)

    T = num_steps
    windows = np.arange(T + 1)
    sequential = hp["sampling"] == "sequential"

    def random_order(rng, batch):
        # A random offset, then the starts of non-overlapping windows, in a
        # random order (lesson 07's seq_data_iter_random).
        offset = int(rng.integers(T))
        count = (len(corpus) - offset - 1) // T
        return offset + T * rng.permutation(count)

    def sequential_order(rng, batch):
        # A random offset, then B rows of L tokens; batch i takes the i-th
        # window of every row (lesson 07's seq_data_iter_sequential).
        offset = int(rng.integers(T))
        length = (len(corpus) - offset - 1) // batch
        rows = offset + length * np.arange(batch)  # (B,)
        steps = np.arange(length // T) * T  # (batches,)
        return (steps[:, None] + rows[None, :]).reshape(-1)

    def make_batch(parts, starts):
        (text,) = parts
        rows = tf.gather(text, starts[:, None] + windows)  # (B, T + 1)
        x, y = rows[:, :-1], rows[:, 1:]
        if sequential:  # the first batch of an epoch starts within [0, T)
            first = tf.cast(tf.reduce_min(starts) < T, tf.float32)
            x = (x, tf.fill(tf.shape(starts), first))  # 1.0: reset
        return x, y, uniform_weights(y)

    def steps(batch):  # the fewest any offset leaves
        return ((len(corpus) - T) // batch) // T if sequential else None

    size = (len(corpus) - T) // T  # windows of random sampling, at least
    train = Examples(
        (corpus,),
        make_batch,
        sequential_order if sequential else random_order,
        size,
        gather=False,
        steps=steps if sequential else None,
    )
    name = "time_machine" if source == "real" else "toy_char_corpus"
    data = (
        f"{name} ({source}): {len(corpus)} characters "
        f"(max_tokens {hp.get('max_tokens')}), vocab {V}, "
        f"num_steps {num_steps}, {hp['sampling']} sampling"
    )
    holder = {}

    def build():
        holder["core"] = _core(recipe.name, hp, V)
        if sequential:
            return CarriedState(holder["core"], hp["per_replica_batch"], T)
        return Logits(holder["core"])

    def finish(net, out: Path, history: list[dict]) -> dict:
        predict = _lesson("l08_rnn_scratch").predict
        samples = [
            predict(p, NUM_PREDS, holder["core"], vocab.idx_to_token)
            for p in PREFIXES[source]
        ]
        loss = history[-1]["loss"] if history else float("nan")
        quality = {"perplexity": float(np.exp(loss))}
        png = plots.text_panel(
            [f"{i + 1}. {s}" for i, s in enumerate(samples)]
            + [
                "",
                f"perplexity {quality['perplexity']:.2f} after "
                f"{len(history)} epochs (greedy: the most likely character "
                "each step)",
            ],
            out / "samples.png",
            f"{recipe.name}: text after a prefix",
        )
        return {"quality": quality, "samples": samples, "plots": [png.name]}

    return Task(
        build=build,
        example=np.zeros((1, num_steps), np.int32),
        loss=cross_entropy,
        train=train,
        data=data,
        unit="tokens",
        correct=argmax_correct,
        curve="perplexity",
        finish=finish,
    )
