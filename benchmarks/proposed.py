"""A proposed change to solutions/l20_transformer.py, timed by the
benchmark before anyone applies it (see README.md, "Proposed changes").

l20 uses `keras.layers.MultiHeadAttention`. With the TensorFlow backend its
four projections are `EinsumDense` layers whose einsum becomes
`tf.matmul((B, T, D), (D, H*Dk))`: a broadcasting BatchMatMulV2, whose
gradient with respect to the kernel is B small matmuls and a sum over the
batch. `keras.layers.Dense` computes the same product as one 2-D MatMul
(tensordot), and so does its gradient. `MultiHeadAttention` below is
lesson 18's layer with Keras's call signature (query, value, key,
attention_mask), so l20 can use it in place of Keras's.
"""

from __future__ import annotations

import keras
from keras import ops


class MultiHeadAttention(keras.layers.Layer):
    """Multi-head attention from Dense layers, called like Keras's.

    Args:
        num_heads: int, H.
        key_dim: int, Dk, the size of each head.
        dropout: float, dropout on the attention weights.
        use_bias: bool, biases in the four projections.
        output_shape: int, the output size (H * Dk by default).

    Call arguments:
        query: `(B, T, Dq)`.
        value: `(B, S, Dv)`.
        key: `(B, S, Dk_in)`, `value` when None.
        attention_mask: None or `(B, T, S)` bool, True where query t may
            attend to key s; a query with no key gets all-zero weights.
        training: bool.
        return_attention_scores: also return the `(B, H, T, S)` weights.

    Returns:
        `(B, T, output_shape)`, and the weights when asked.
    """

    def __init__(
        self,
        num_heads: int,
        key_dim: int,
        dropout: float = 0.0,
        use_bias: bool = True,
        output_shape: int | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.key_dim = key_dim
        self.dropout = dropout
        self.use_bias = use_bias
        self.output_dim = output_shape or num_heads * key_dim
        dense = {"use_bias": use_bias, "dtype": self.dtype_policy}
        width = num_heads * key_dim
        self.query_dense = keras.layers.Dense(width, name="query", **dense)
        self.key_dense = keras.layers.Dense(width, name="key", **dense)
        self.value_dense = keras.layers.Dense(width, name="value", **dense)
        self.output_dense = keras.layers.Dense(
            self.output_dim, name="attention_output", **dense
        )
        self.weights_dropout = keras.layers.Dropout(
            dropout, dtype=self.dtype_policy
        )

    def build(self, query_shape, value_shape, key_shape=None):
        self.query_dense.build(query_shape)
        self.key_dense.build(key_shape or value_shape)
        self.value_dense.build(value_shape)
        self.output_dense.build((None, None, self.num_heads * self.key_dim))

    def _split_heads(self, X):
        batch, steps = ops.shape(X)[0], ops.shape(X)[1]
        X = ops.reshape(X, (batch, steps, self.num_heads, self.key_dim))
        return ops.transpose(X, (0, 2, 1, 3))  # (B, H, T, Dk)

    def call(
        self,
        query,
        value,
        key=None,
        attention_mask=None,
        training=None,
        return_attention_scores=False,
    ):
        key = value if key is None else key
        q = self._split_heads(self.query_dense(query))  # (B, H, T, Dk)
        k = self._split_heads(self.key_dense(key))  # (B, H, S, Dk)
        v = self._split_heads(self.value_dense(value))  # (B, H, S, Dk)
        scale = ops.sqrt(ops.cast(self.key_dim, q.dtype))
        scores = ops.matmul(q, ops.swapaxes(k, -1, -2)) / scale  # (B,H,T,S)
        if attention_mask is None:
            weights = ops.softmax(scores, axis=-1)
        else:
            keep = attention_mask[:, None]  # (B, 1, T, S): every head
            fill = ops.cast(-1e9, scores.dtype)
            weights = ops.softmax(ops.where(keep, scores, fill), axis=-1)
            weights = weights * ops.cast(keep, weights.dtype)
        dropped = self.weights_dropout(weights, training=training)
        heads = ops.transpose(ops.matmul(dropped, v), (0, 2, 1, 3))
        batch, steps = ops.shape(heads)[0], ops.shape(heads)[1]
        width = self.num_heads * self.key_dim
        merged = ops.reshape(heads, (batch, steps, width))  # (B, T, H*Dk)
        output = self.output_dense(merged)
        return (output, weights) if return_attention_scores else output


def attention(
    num_hiddens: int,
    num_heads: int,
    dropout: float,
    use_bias: bool,
    dtype,
    name: str,
) -> MultiHeadAttention:
    """What l20's `_attention` would return (same arguments)."""
    return MultiHeadAttention(
        num_heads,
        num_hiddens // num_heads,
        dropout=dropout,
        use_bias=use_bias,
        output_shape=num_hiddens,
        dtype=dtype,
        name=name,
    )
