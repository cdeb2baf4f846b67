# Your exercise file: replace each `raise NotImplementedError` below its
# TODO with your code, then run `m2t grade l08`.
# (Generated from solutions/l08_rnn_scratch.py by `m2t make-lessons`.)
"""Lesson 08: an RNN from scratch (循环神经网络的从零开始实现).

A character-level language model. Each token index becomes a one-hot vector
(独热编码) of the vocabulary size V; the hidden state (隐状态) H carries what
the network has read so far:

    H_t = tanh(X_t W_xh + H_{t-1} W_hh + b_h)        (B, U)
    O_t = H_t W_hq + b_q                             (B, V) logits

with W_xh (V, U), W_hh (U, U), b_h (U,), W_hq (U, V), b_q (V,): the same
weights at every time step. H_0 is zeros (`begin_state`) unless a state is
carried over from the previous minibatch.

Layout: batch-major, as Keras: token indices (B, T) -> one-hot (B, T, V) ->
logits (B, T, V). (d2l transposes to (T, B, V) to loop over the first axis;
we loop over axis 1.) V here is the vocabulary size.

Gradient clipping (梯度裁剪): backpropagation through T steps multiplies T
Jacobians, so gradients can explode. Project all gradients together back
onto the ball of radius theta:

    g <- min(1, theta / ||g||) g,   ||g|| over ALL gradients concatenated

Small gradients are left as they are; large ones keep their direction and
get norm theta.

Prediction: warm up (预热期) on the prefix, feeding its tokens to update the
state without predicting, then repeatedly take the most likely next token
(greedy) and feed it back in.

Reference: d2l 8.5 (9.5), "Recurrent Neural Network Implementation from
Scratch".
"""

import math
from collections.abc import Sequence

import keras
import numpy as np
from keras import ops


def _check_positive_int(name: str, value) -> None:
    if int(value) != value or value <= 0:
        raise ValueError(f"`{name}` must be a positive int, got {value!r}")


def one_hot(X, vocab_size: int, dtype: str = "float32"):
    """One-hot encode token indices.

    Args:
        X: `(B, T)` token indices (any integer or float dtype).
        vocab_size: int, V.
        dtype: the dtype of the result.

    Returns:
        `(B, T, V)`: `out[b, t, X[b, t]] = 1`, zeros elsewhere (batch-major,
        like Keras; d2l's (T, B, V) is the transpose).
    """
    _check_positive_int("vocab_size", vocab_size)
    # TODO(l08): out[b, t, X[b, t]] = 1 and zeros elsewhere: X (B, T) -> (B, T,
    #   V) in `dtype`, batch axis first (d2l's (T, B, V) is the transpose). The
    #   indices may arrive as floats. Our solution is about 1 line.
    #   中文：把 (B, T) 的整数索引变成 (B, T, V) 的独热向量，批量在前。
    raise NotImplementedError("l08: one_hot")


class RNNScratch(keras.layers.Layer):
    """A one-layer RNN language model with its own weights.

    Args:
        vocab_size: int, V, the size of the one-hot inputs and the logits.
        num_hiddens: int, U, the size of the hidden state.
        sigma: float, the standard deviation of the initial weights (d2l:
            0.01); biases start at zero.

    Call arguments:
        inputs: `(B, T)` token indices; T must be known (a Python loop over
            the time steps).
        state: `(B, U)` hidden state before the first step, or None for
            `begin_state(B)` (zeros).
        training: unused (no dropout); kept explicit.

    Returns:
        `(outputs, state)`: logits `(B, T, V)` and the hidden state after the
        last step `(B, U)`.

    Weights, in this order: `W_xh (V, U)`, `W_hh (U, U)`, `b_h (U,)`,
    `W_hq (U, V)`, `b_q (V,)`.
    """

    def __init__(
        self, vocab_size: int, num_hiddens: int, sigma: float = 0.01, **kwargs
    ):
        super().__init__(**kwargs)
        _check_positive_int("vocab_size", vocab_size)
        _check_positive_int("num_hiddens", num_hiddens)
        if not sigma > 0:
            raise ValueError(f"`sigma` must be positive, got {sigma!r}")
        self.vocab_size = int(vocab_size)
        self.num_hiddens = int(num_hiddens)
        self.sigma = float(sigma)

    def build(self, inputs_shape, state_shape=None):
        V, U = self.vocab_size, self.num_hiddens
        normal = keras.initializers.RandomNormal(stddev=self.sigma)
        self.W_xh = self.add_weight(
            shape=(V, U), initializer=normal, name="W_xh"
        )
        self.W_hh = self.add_weight(
            shape=(U, U), initializer=normal, name="W_hh"
        )
        self.b_h = self.add_weight(shape=(U,), initializer="zeros", name="b_h")
        self.W_hq = self.add_weight(
            shape=(U, V), initializer=normal, name="W_hq"
        )
        self.b_q = self.add_weight(shape=(V,), initializer="zeros", name="b_q")

    def begin_state(self, batch_size):
        """The initial hidden state: zeros `(batch_size, U)`."""
        return ops.zeros(
            (batch_size, self.num_hiddens), dtype=self.compute_dtype
        )

    def call(self, inputs, state=None, training=None):
        if state is None:
            state = self.begin_state(ops.shape(inputs)[0])
        # TODO(l08): the module docstring's recurrence for t = 1 .. T, from H_0
        #   = state: X_t (B, V) is the one-hot of inputs[:, t] (this module's
        #   one_hot, in self.compute_dtype), H_t = tanh(X_t W_xh + H_{t-1} W_hh
        #   + b_h) (B, U), O_t = H_t W_hq + b_q (B, V). inputs (B, T) -> outputs
        #   (B, T, V), the O_t in time order on axis 1, and H_T (B, U). Return
        #   (outputs, H_T). Our solution is about 8 lines.
        #   中文：逐个时间步计算 H_t = tanh(X_t W_xh + H_{t-1} W_hh + b_h)，
        #   新的隐状态传给下一步，每步输出 logits。
        raise NotImplementedError("l08: RNNScratch.call")

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "num_hiddens": self.num_hiddens,
            "sigma": self.sigma,
        }


def grad_clipping(grads, theta: float):
    """Scale all gradients together so their global norm is at most theta.

    Args:
        grads: list of gradient tensors (any shapes).
        theta: float > 0, the largest norm allowed.

    Returns:
        list of tensors, the same shapes: every gradient times
        `min(1, theta / ||g||)`, where `||g||` is the L2 norm of all the
        gradients together. Unchanged when `||g|| <= theta`.
    """
    if not theta > 0:
        raise ValueError(f"`theta` must be positive, got {theta!r}")
    grads = [ops.convert_to_tensor(g) for g in grads]
    # TODO(l08): the docstring's clipping, g <- min(1, theta / ||g||) g, where
    #   ||g|| is the L2 norm of ALL the gradients together, as if concatenated
    #   into one vector (one number, not one per tensor): grads list[(...)] ->
    #   list[(...)], the same shapes and dtypes. Gradients whose norm is at most
    #   theta come back unchanged, and all-zero gradients must not give NaN. Our
    #   solution is about 3 lines.
    #   中文：梯度裁剪：用所有梯度合在一起的范数，
    #   缩放因子为 min(1, theta / ||g||)。
    raise NotImplementedError("l08: grad_clipping")


def predict(prefix: str, num_preds: int, model, vocab: Sequence[str]) -> str:
    """Greedy character generation after a prefix.

    Args:
        prefix: str, at least one character; each character is a token.
        num_preds: int >= 0, how many tokens to generate.
        model: called as `model(X (1, 1) token indices, state)` and returning
            `(logits (1, 1, V), state)`, with `model.begin_state(1)`; e.g.
            `RNNScratch`.
        vocab: the token of each index (index 0 for unknown characters),
            e.g. `Vocab.idx_to_token` or `StringLookup.get_vocabulary()`.

    Returns:
        `prefix` (unknown characters as `vocab[0]`) followed by the
        `num_preds` generated tokens, one string.
    """
    if not prefix:
        raise ValueError(
            f"`prefix` must hold at least one token, got {prefix!r}"
        )
    if int(num_preds) != num_preds or num_preds < 0:
        raise ValueError(f"`num_preds` must be an int >= 0, got {num_preds!r}")
    token_to_idx = {tok: i for i, tok in enumerate(vocab)}
    ids = [token_to_idx.get(ch, 0) for ch in prefix]
    # TODO(l08): the module docstring's greedy generation. Start from the state
    #   model.begin_state(1) and outputs = [the first prefix index]. Warm-up:
    #   each later prefix index is appended as it is (observed, not predicted)
    #   once the model has read the token before it, so the state has seen the
    #   whole prefix. Then, num_preds times, the model reads the last token and
    #   the token with the highest logit is appended. Each call reads one token
    #   X (1, 1) int32 and the state -> logits (1, 1, V) and the next state,
    #   which every later call must get. ids list[int] -> outputs list[int] of
    #   len(prefix) + num_preds indices (the line after the region turns them
    #   into the string). Our solution is about 8 lines.
    #   中文：先用前缀预热隐状态，再每次把最可能的词元喂回模型；
    #   隐状态贯穿每一次调用。
    raise NotImplementedError("l08: predict")
    return "".join(vocab[i] for i in outputs)


def train_epoch(model, batches, optimizer, theta: float = 1.0) -> float:
    """One epoch over minibatches of random subsequences; the perplexity.

    Each minibatch starts from a fresh state (its subsequences do not
    continue the previous minibatch's). The loss is the mean cross-entropy
    over its B x T tokens; gradients are clipped to global norm theta.

    Args:
        model: an `RNNScratch` (or any layer with its call and
            `begin_state`).
        batches: iterable of `(X, Y)`, `(B, T)` token indices each.
        optimizer: a Keras optimizer, e.g. `keras.optimizers.SGD(1.0)`.
        theta: the clipping radius.

    Returns:
        float, exp(mean cross-entropy) over the epoch's tokens.
    """
    import tensorflow as tf  # the gradient tape of the TensorFlow backend

    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    total, count = 0.0, 0
    for X, Y in batches:
        state = model.begin_state(ops.shape(X)[0])
        with tf.GradientTape() as tape:
            logits, _ = model(X, state, training=True)
            loss = loss_fn(Y, logits)  # mean over the B x T tokens
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply(grad_clipping(grads, theta), model.trainable_weights)
        tokens = int(np.prod(np.shape(Y)))
        total, count = total + float(loss) * tokens, count + tokens
    return math.exp(total / count)


def main(epochs: int = 5, num_steps: int = 35, batch_size: int = 32) -> None:
    """Train on the embedded character corpus and generate some text."""
    import m2t_data

    text = " ".join(m2t_data.time_machine_lines(verbose=True))
    lookup = keras.layers.StringLookup()  # index 0 is the unknown token
    lookup.adapt(list(text))
    vocab = lookup.get_vocabulary()
    corpus = np.asarray(lookup(list(text)))
    windows = keras.utils.timeseries_dataset_from_array(
        corpus,
        None,
        sequence_length=num_steps + 1,
        sequence_stride=num_steps,
        batch_size=batch_size,
        shuffle=True,
        seed=0,
    )
    model = RNNScratch(len(vocab), 256)
    optimizer = keras.optimizers.SGD(1.0)
    for epoch in range(epochs):
        batches = ((w[:, :-1], w[:, 1:]) for w in windows)
        ppl = train_epoch(model, batches, optimizer, theta=1.0)
        print(f"epoch {epoch + 1}: perplexity {ppl:.2f}")
    print(predict("the time traveller ", 50, model, vocab))


if __name__ == "__main__":
    main()
