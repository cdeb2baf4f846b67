# Your exercise file: replace each `raise NotImplementedError` below its
# TODO with your code, then run `m2t grade l23`.
# (Generated from solutions/l23_capstone_language_model.py by `m2t make-lessons`.)
"""Lesson 23, capstone A: your language model (语言模型), trained by your
own loop on your own parts.

Nothing here is new mathematics: the recurrent lessons' pieces are put
together and trained on a character corpus, by default the keeper's
inventory (m2t_data.toy_inventory: generated sentences that name a list of
things and, a clause later, name it again; `corpus_ids("real")` gives The
Time Machine instead). Which thing comes next in the second list was
decided further back than a counting n-gram model sees: the grader
computes such a baseline (Kneser-Ney, the best order of 1 to 8) on the
same texts: your GRU and LSTM must beat it, your plain RNN come within
5% of it. The grader first runs each
part's own grader on your files; a part that fails it is named ("your l10
GRUCell fails its own grader: fix l10 first") and nothing is trained on it.

    part   lesson  what it gives
    data   l07     seq_data_iter_random, seq_data_iter_sequential,
                   perplexity (困惑度)
    rnn    l08     RNNScratch, grad_clipping (梯度裁剪)
    gru    l10     GRUCell
    lstm   l11     LSTMCell

The three models read one-hot characters, V = 27 (space and a-z, index =
position in `VOCAB`), and return logits `(B, T, V)` and their state:

    rnn:   lesson 08's RNNScratch(V, U)            state H (B, U)
    gru:   CellLM(GRUCell(U)):  one step per character, then a Dense(V)
                                                   state [H] (B, U)
    lstm:  CellLM(LSTMCell(U))                     state [H, C] (B, U) each

One training step, on a minibatch X, Y `(B, T)` from a state:

    loss = mean over the B T tokens of -log softmax(model(X, state))[Y]
    g    = d loss / d weights                      (tf.GradientTape)
    g    = min(1, theta / ||g||) g                 (your grad_clipping)
    weights <- optimizer step with g               (optimizer.apply)

With random sampling each minibatch starts from `begin_state` (its rows do
not continue the previous minibatch's); with sequential partitioning the
state after minibatch i is where minibatch i + 1 starts (row b continues
row b). TensorFlow needs no `detach` there (d2l's PyTorch code does): a
`GradientTape` only records what runs inside its `with` block, so the
carried state enters the next step as a constant.

The held-out text is never given to your code ahead of its scoring: the
grader trains with `train` (which takes no held-out text), then sends 50
new texts one character at a time, a `(50, 1)` read each, to
`next_log_probs`; it sends the next character only after the
log-probabilities of the one before came back. Row [b, 0] of a read is
log P(. | texts so far), the log-softmax over the next character; the
grader picks the actual next characters' entries itself, and perplexity
= exp(-mean of them).

Reference: d2l 8.5 (9.5) "Recurrent Neural Network Implementation from
Scratch", 9.1-9.2 (10.1-10.2).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import ModuleType
from typing import NamedTuple

import keras
import numpy as np
from keras import ops

VOCAB = [" ", *"abcdefghijklmnopqrstuvwxyz"]
"""The characters; a character's id is its index."""

CELLS = ("rnn", "gru", "lstm")


HYPERPARAMETERS = {
    "num_hiddens": 128,
    "num_steps": 32,
    "batch_size": 32,
    "lr": 0.01,
    "theta": 1.0,
    "epochs": 2,
    "use_random_iter": False,
}
"""What the grader trains with (Adam; every cell alike)."""


class Parts(NamedTuple):
    """Your lesson modules the capstone is built from (see the module
    docstring's table)."""

    data: ModuleType
    rnn: ModuleType
    gru: ModuleType
    lstm: ModuleType


def encode(text: str) -> np.ndarray:
    """Characters -> `(N,)` int32 ids (index in `VOCAB`).

    Raises:
        ValueError: naming the first character outside `VOCAB`.
    """
    index = {ch: i for i, ch in enumerate(VOCAB)}
    bad = next((ch for ch in text if ch not in index), None)
    if bad is not None:
        raise ValueError(f"`text` holds {bad!r}, not one of space and a-z")
    return np.asarray([index[ch] for ch in text], dtype=np.int32)


class CellLM(keras.layers.Layer):
    """A language model around one recurrent cell (lesson 10 or 11).

    Args:
        cell: a cell with `state_size` (int or list) and
            `call(inputs (B, V), states) -> (h (B, U), new_states)`.
        vocab_size: int, V.

    Call arguments:
        inputs: `(B, T)` character ids.
        state: list of the cell's states, each `(B, U)`, or None for
            `begin_state(B)`.

    Returns:
        `(logits (B, T, V), state)`, the state after the last step.
    """

    def __init__(self, cell, vocab_size: int, **kwargs):
        super().__init__(**kwargs)
        if int(vocab_size) != vocab_size or vocab_size <= 0:
            raise ValueError(
                f"`vocab_size` must be a positive int, got {vocab_size!r}"
            )
        self.cell = cell
        self.vocab_size = int(vocab_size)
        sizes = cell.state_size
        self.sizes = (
            list(sizes) if isinstance(sizes, (list, tuple)) else [sizes]
        )
        self.dense = keras.layers.Dense(self.vocab_size, name="output")

    def build(self, inputs_shape, state_shape=None):
        self.cell.build((None, self.vocab_size))
        self.dense.build((None, None, self.sizes[0]))

    def begin_state(self, batch_size):
        """Zeros, one `(batch_size, size)` per state of the cell."""
        return [
            ops.zeros((batch_size, size), dtype=self.compute_dtype)
            for size in self.sizes
        ]

    def call(self, inputs, state=None, training=None):
        if state is None:
            state = self.begin_state(ops.shape(inputs)[0])
        X = ops.one_hot(ops.cast(inputs, "int32"), self.vocab_size)
        X = ops.cast(X, self.compute_dtype)  # (B, T, V)
        outputs = []
        for X_t in ops.unstack(X, axis=1):  # T x (B, V)
            h, state = self.cell(X_t, list(state))
            outputs.append(h)
        return self.dense(ops.stack(outputs, axis=1)), list(state)


def language_model(
    parts: Parts, cell: str, vocab_size: int, num_hiddens: int
) -> keras.layers.Layer:
    """The module docstring's model `cell` ("rnn", "gru" or "lstm"),
    from your parts, unbuilt."""
    if cell == "rnn":
        return parts.rnn.RNNScratch(vocab_size, num_hiddens, name="rnn")
    if cell == "gru":
        return CellLM(parts.gru.GRUCell(num_hiddens), vocab_size, name="gru")
    if cell == "lstm":
        return CellLM(parts.lstm.LSTMCell(num_hiddens), vocab_size, name="lstm")
    raise ValueError(f"`cell` must be one of {CELLS}, got {cell!r}")


def train_step(model, optimizer, clip: Callable, X, Y, state, theta: float):
    """One training step of the module docstring.

    Args:
        model: called as `model(X, state, training=True)` -> `(logits
            (B, T, V), state)`, with `trainable_weights`.
        optimizer: a Keras optimizer (`optimizer.apply(grads, weights)`).
        clip: your lesson-08 `grad_clipping(grads, theta)`.
        X: `(B, T)` int ids; Y: `(B, T)` int ids, the next characters.
        state: the model's state before X (never None).
        theta: float, the clipping radius.

    Returns:
        `(loss, state)`: the scalar loss tensor (mean over the B T
        tokens, before the step) and the model's state after X.
    """
    import tensorflow as tf  # the gradient tape of the TensorFlow backend

    # TODO(l23): one step of the module docstring, X and Y (B, T) -> loss
    #   () before the step, and the state after X. While a
    #   gradient tape records: model on X from state in training mode ->
    #   logits (B, T, V) and the new state, and the loss, the average over
    #   the B T tokens of the cross-entropy of the logits against Y. Then
    #   the loss's gradients with respect to model.trainable_weights,
    #   clipped all together by `clip` at theta, and one step of the
    #   optimizer with them. Our solution is about 7 lines.
    #   中文：在梯度带中算前向和平均损失，取梯度，做一次梯度裁剪，
    #   再让优化器更新。
    raise NotImplementedError("l23: train_step")


def train_epoch(
    parts: Parts,
    model,
    step: Callable,
    corpus: np.ndarray,
    batch_size: int,
    num_steps: int,
    use_random_iter: bool,
    seed: int,
) -> float:
    """One epoch over `corpus`; the training perplexity.

    Args:
        parts: your lesson modules.
        model: the model (for `begin_state`).
        step: `step(X, Y, state) -> (loss, state)`, your `train_step` with
            the model, optimizer, clipping and theta given.
        corpus: `(N,)` int ids.
        batch_size: int, B.
        num_steps: int, T.
        use_random_iter: bool: lesson 07's random sampling (True) or its
            sequential partitioning (False).
        seed: int, the iterator's seed.

    Returns:
        float, lesson 07's perplexity of the epoch's minibatch losses.
    """
    # TODO(l23): one epoch, corpus (N,) -> float, the training
    #   perplexity. The minibatches X, Y (B, T) of lesson 07's iterator (random
    #   or sequential, as use_random_iter says) over corpus with batch_size,
    #   num_steps and seed each go through step, from a state that is
    #   model.begin_state(B) for every minibatch under random sampling, and
    #   under sequential partitioning only for the first one (after that,
    #   the state step returned). Return lesson 07's perplexity of the n
    #   minibatch losses (n,) (each an average over equally many tokens).
    #   Our solution is about 9 lines.
    #   中文：随机采样时每个小批量都从 begin_state 开始，
    #   顺序分区时隐状态接着传；返回困惑度。
    raise NotImplementedError("l23: train_epoch")


def next_log_probs(model, ids, state):
    """The model reads `ids` from `state`: the log-probabilities of what
    comes next, at every position, and the state after them.

    Args:
        model: a trained model (`model(X, state, training=False)` ->
            `(logits (B, t, V), state)`).
        ids: `(B, t)` int ids, t >= 1: the next t characters of B texts.
        state: the model's state after everything before `ids` (from
            `model.begin_state(B)` at the texts' start).

    Returns:
        `(log_probs (B, t, V), state)`: row [b, j] is the log-softmax over
        the character after ids[b, j], given ids[b, : j + 1] and all the
        text the state has read; the state after ids[:, t - 1].
    """
    # TODO(l23): one read, ids (B, t) -> log_probs (B, t, V), from the
    #   state before ids, and the state after them. The model reads ids
    #   from state (not training); the log-softmax of its logits over the
    #   V characters is log P(next character). Return both. Our solution
    #   is about 2 lines.
    #   中文：模型从给定状态读入 ids，返回 logits 的 log-softmax
    #   （下一个字符的对数概率）和读完之后的状态。
    raise NotImplementedError("l23: next_log_probs")


# -- the whole capstone (given) -------------------------------------------


def train(
    parts: Parts,
    cell: str,
    train_ids: np.ndarray,
    hp: dict | None = None,
    seed: int = 0,
    report: Callable | None = None,
) -> dict:
    """Build the model `cell` and train it with your loop.

    Every epoch, your `train_epoch` with your `train_step` (compiled with
    tf.function), Adam(lr) and your lesson-08 clipping. The held-out text
    is no argument: the grader sends it afterwards, one character of each
    text at a time, to `next_log_probs`.

    Args:
        parts: your lesson modules.
        cell: "rnn", "gru" or "lstm".
        train_ids: `(N,)` int ids to train on.
        hp: the settings (`HYPERPARAMETERS` by default).
        seed: the weights' and the iterators' seed.
        report: None, or called after each epoch as
            `report(epoch, train_perplexity)`.

    Returns:
        `{"model": the model, "curve": [train perplexity per epoch],
        "seconds": [wall seconds per epoch], "cpu_seconds": [the process's
        CPU seconds per epoch]}`.
    """
    import tensorflow as tf

    hp = {**HYPERPARAMETERS, **(hp or {})}
    keras.utils.set_random_seed(seed)
    model = language_model(parts, cell, len(VOCAB), int(hp["num_hiddens"]))
    batch_size, num_steps = int(hp["batch_size"]), int(hp["num_steps"])
    model(train_ids[None, :num_steps], model.begin_state(1))  # built
    optimizer = keras.optimizers.Adam(float(hp["lr"]))
    optimizer.build(model.trainable_weights)
    clip, theta = parts.rnn.grad_clipping, float(hp["theta"])

    @tf.function
    def step(X, Y, state):
        return train_step(model, optimizer, clip, X, Y, state, theta)

    curve, seconds, cpu = [], [], []
    for epoch in range(int(hp["epochs"])):
        wall, proc = time.perf_counter(), time.process_time()
        curve.append(
            train_epoch(
                parts,
                model,
                step,
                train_ids,
                batch_size,
                num_steps,
                bool(hp["use_random_iter"]),
                seed + epoch,
            )
        )
        seconds.append(time.perf_counter() - wall)
        cpu.append(time.process_time() - proc)
        if report is not None:
            report(epoch + 1, curve[-1])
    return {
        "model": model,
        "curve": curve,
        "seconds": seconds,
        "cpu_seconds": cpu,
    }


def held_out_perplexity(model, streams: np.ndarray) -> float:
    """What the grader measures, for you to run: the texts `streams`
    `(B, L)` read one character at a time by `next_log_probs` (from
    `begin_state(B)`), exp(-mean log P(the actual next character)) over
    the B (L - 1) predictions."""
    streams = np.asarray(streams, dtype=np.int32)
    state, picked = model.begin_state(len(streams)), []
    for t in range(streams.shape[1] - 1):
        log_probs, state = next_log_probs(model, streams[:, t : t + 1], state)
        rows = np.asarray(ops.convert_to_numpy(log_probs))[:, 0]  # (B, V)
        picked.append(rows[np.arange(len(streams)), streams[:, t + 1]])
    return float(np.exp(-np.mean(picked)))


HELD_OUT = (50, 100)
"""The held-out texts: 50 texts of 100 characters each."""


def corpus_ids(
    source: str = "embedded", seed: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """`(train ids (N,), held-out streams (50, 100))`.

    "embedded": m2t_data.toy_inventory, the keeper's inventory (a generated
    text whose lists are named twice, a clause apart), 250,000 characters
    to train on; the held-out texts are new ones from generator seeds
    `seed` (the grader draws its own). "real": The Time Machine (lines
    joined by spaces); its last 5,000 characters, cut into the streams,
    are held out.
    """
    import m2t_data
    from m2t_data import toy_inventory

    count, length = HELD_OUT
    if source == "embedded":
        held = toy_inventory.streams(seed, count, length)
        return encode(toy_inventory.text()), np.stack([encode(t) for t in held])
    ids = encode(" ".join(m2t_data.time_machine_lines(source)))
    return ids[: -count * length], ids[-count * length :].reshape(HELD_OUT)


def main(source: str = "embedded") -> None:
    """Train the three cells on the parts beside this file (run as a
    script, its folder is on the import path); their held-out
    perplexities."""
    import importlib

    parts = Parts(
        *(
            importlib.import_module(name)
            for name in (
                "l07_language_model_data",
                "l08_rnn_scratch",
                "l10_gru",
                "l11_lstm",
            )
        )
    )
    train_ids, held_out = corpus_ids(source)
    for cell in CELLS:
        out = train(
            parts,
            cell,
            train_ids,
            report=lambda e, p, c=cell: print(f"{c} epoch {e}: train {p:.3f}"),
        )
        ppl = held_out_perplexity(out["model"], held_out)
        print(f"{cell}: held-out perplexity {ppl:.3f}")


if __name__ == "__main__":
    main()
