"""Lesson 09: a concise RNN (循环神经网络的简洁实现) on Keras's SimpleRNN.

The language model of lesson 08, with Keras's layers doing the work:

    token indices (B, T)
      -> one-hot (B, T, V)            (or an Embedding: (B, T, E))
      -> SimpleRNN(U, return_sequences=True, return_state=True)
           outputs (B, T, U): H_1 .. H_T,   state (B, U): H_T
      -> Dense(V): logits (B, T, V)

`keras.layers.SimpleRNN` computes `H_t = tanh(X_t K + H_{t-1} R + b)` with
`kernel` K (V or E, U), `recurrent_kernel` R (U, U) and `bias` b (U,): lesson
08's W_xh, W_hh and b_h, so weights copy across one to one. Without
`return_sequences` it would return only H_T; without `return_state` the
caller could not carry the state to the next minibatch.

Gradient clipping is built into Keras optimizers: `global_clipnorm=theta` is
lesson 08's `grad_clipping` (one norm over all gradients); `clipnorm` clips
each gradient by its own norm, which is not the same.

Reference: d2l 8.6 (9.6), "Concise Implementation of Recurrent Neural
Networks".
"""

import math

import keras
import numpy as np
from keras import ops


class RNNModel(keras.layers.Layer):
    """An RNN language model: one-hot (or embedding) -> SimpleRNN -> Dense.

    Args:
        vocab_size: int, V.
        num_hiddens: int, U.
        embedding_dim: None (one-hot inputs, d2l) or int E (a learned
            `keras.layers.Embedding(V, E)`).

    Call arguments:
        inputs: `(B, T)` token indices.
        state: `(B, U)` initial hidden state, or None for zeros.
        training: bool, passed to the recurrent layer.

    Returns:
        `(logits, state)`: `(B, T, V)` and the state after the last step
        `(B, U)`.

    Sublayers: `embedding` (only with `embedding_dim`), `rnn`
    (`SimpleRNN`, weights kernel, recurrent_kernel, bias), `dense`
    (`Dense(V)`, weights kernel (U, V), bias (V,)).
    """

    def __init__(
        self,
        vocab_size: int,
        num_hiddens: int,
        embedding_dim: int | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        for name, value in (
            ("vocab_size", vocab_size),
            ("num_hiddens", num_hiddens),
            ("embedding_dim", 1 if embedding_dim is None else embedding_dim),
        ):
            if int(value) != value or value <= 0:
                raise ValueError(
                    f"`{name}` must be a positive int, got {value!r}"
                )
        self.vocab_size = int(vocab_size)
        self.num_hiddens = int(num_hiddens)
        self.embedding_dim = embedding_dim
        policy = {"dtype": self.dtype_policy}
        self.embedding = (
            keras.layers.Embedding(
                vocab_size, embedding_dim, name="embedding", **policy
            )
            if embedding_dim is not None
            else None
        )
        self.rnn = keras.layers.SimpleRNN(
            num_hiddens,
            return_sequences=True,
            return_state=True,
            name="rnn",
            **policy,
        )
        self.dense = keras.layers.Dense(vocab_size, name="dense", **policy)

    def build(self, inputs_shape, state_shape=None):
        batch, steps = inputs_shape[0], inputs_shape[1]
        features = self.vocab_size
        if self.embedding is not None:
            self.embedding.build(inputs_shape)
            features = self.embedding_dim
        self.rnn.build((batch, steps, features))
        self.dense.build((batch, steps, self.num_hiddens))

    def begin_state(self, batch_size):
        """The initial hidden state: zeros `(batch_size, U)`."""
        return ops.zeros(
            (batch_size, self.num_hiddens), dtype=self.compute_dtype
        )

    def call(self, inputs, state=None, training=None):
        inputs = ops.cast(inputs, "int32")
        # TODO(l09): the module docstring's pipeline: inputs (B, T) -> features
        #   (B, T, E) from self.embedding when there is one, else the one-hot
        #   vectors (B, T, V) in self.compute_dtype -> self.rnn, started from
        #   `state` and given `training`: every step's output (B, T, U) and the
        #   last state (B, U) -> self.dense on every step: logits (B, T, V), no
        #   softmax (the loss takes logits). Return (logits, the new state). The
        #   state passed in must reach the RNN, or nothing carries across
        #   minibatches. Our solution is about 8 lines.
        #   中文：嵌入（或独热编码）、从给定的隐状态出发的循环层、
        #   再把每一步映射成 logits。
        # BEGIN SOLUTION
        if self.embedding is not None:
            features = self.embedding(inputs)  # (B, T, E)
        else:
            features = ops.one_hot(
                inputs, self.vocab_size, dtype=self.compute_dtype
            )  # (B, T, V)
        outputs, new_state = self.rnn(
            features, initial_state=state, training=training
        )  # (B, T, U), (B, U)
        return self.dense(outputs), new_state  # (B, T, V), (B, U)
        # END SOLUTION

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "num_hiddens": self.num_hiddens,
            "embedding_dim": self.embedding_dim,
        }


def language_model(
    vocab_size: int, num_hiddens: int, embedding_dim: int | None = None
) -> keras.Model:
    """A trainable `keras.Model` (B, T) -> logits (B, T, V) around RNNModel
    (each minibatch starts from a zero state: random sampling)."""
    inputs = keras.Input(shape=(None,), dtype="int32")
    logits, _ = RNNModel(vocab_size, num_hiddens, embedding_dim, name="lm")(
        inputs
    )
    return keras.Model(inputs, logits)


def main(epochs: int = 5, num_steps: int = 35, batch_size: int = 32) -> None:
    """Train on the embedded character corpus with Keras's fit."""
    import m2t_data

    text = " ".join(m2t_data.time_machine_lines(verbose=True))
    lookup = keras.layers.StringLookup()  # index 0 is the unknown token
    lookup.adapt(list(text))
    corpus = np.asarray(lookup(list(text)))
    windows = keras.utils.timeseries_dataset_from_array(
        corpus,
        None,
        sequence_length=num_steps + 1,
        sequence_stride=num_steps,
        batch_size=batch_size,
        shuffle=True,
        seed=0,
    ).map(lambda w: (w[:, :-1], w[:, 1:]))
    model = language_model(lookup.vocabulary_size(), 256)
    model.compile(
        # global_clipnorm: one norm over all gradients, as grad_clipping
        optimizer=keras.optimizers.SGD(1.0, global_clipnorm=1.0),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    history = model.fit(windows, epochs=epochs, verbose=2)
    for epoch, loss in enumerate(history.history["loss"], start=1):
        print(f"epoch {epoch}: perplexity {math.exp(loss):.2f}")


if __name__ == "__main__":
    main()
