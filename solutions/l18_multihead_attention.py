"""Lesson 18: multi-head attention (多头注意力).

H heads each attend with their own projections of the queries, keys and
values, in parallel; their outputs are concatenated and projected once more:

    head_h = softmax(Q_h K_h^T / sqrt(Dk)) V_h,   Dk = D / H
    Q_h = queries W_q[:, h*Dk:(h+1)*Dk]   (the same for K_h with W_k, V_h
                                           with W_v)
    output = concat(head_1, ..., head_H) W_o

W_q, W_k, W_v are (Din, D) matrices and W_o is (D, D): head h owns the
columns h*Dk .. (h+1)*Dk - 1 of W_q, W_k, W_v and the same rows of W_o, so
one matmul projects for all heads at once. The heads are then computed in
parallel by reshaping, never by a loop:

    (B, T, D) -> (B, T, H, Dk) -> (B, H, T, Dk)      split_heads
    (B, H, T, Dk) -> (B, T, H, Dk) -> (B, T, D)      merge_heads

This is the layout of `keras.layers.MultiHeadAttention(num_heads=H,
key_dim=Dk)`: its query kernel (Din, H, Dk) is our `W_q.kernel` reshaped,
its output kernel (H, Dk, D) our `W_o.kernel` reshaped.

Masking (掩蔽), as in lesson 16: `valid_lens` (B,) or (B, T); keys at or
past the valid length get weight exactly 0 in every head, and a query whose
valid length is 0 gets all-zero weights.

Self-attention (自注意力) is this layer called with queries = keys = values.

Reference: Vaswani et al. 2017, section 3.2.2; d2l 10.5 (11.5).
"""

import keras
from keras import ops


def mask_fill_value(dtype: str) -> float:
    """The score given to masked keys: so negative that exp() is exactly 0.

    -1e9 in float32/float64; float16 cannot hold it, so -3e4 there.
    """
    return -3e4 if keras.backend.standardize_dtype(dtype) == "float16" else -1e9


def split_heads(X, num_heads: int):
    """Split the last axis into heads and move the heads forward.

    Args:
        X: `(B, T, D)`, D divisible by `num_heads`.
        num_heads: int, H.

    Returns:
        `(B, H, T, Dk)` with `Dk = D / H`; head h holds the features
        `h*Dk .. (h+1)*Dk - 1` of X.
    """
    # TODO(l18): X (B, T, D) -> (B, H, T, Dk), Dk = D / H, with
    #   out[b, h, t, j] = X[b, t, h*Dk + j]: head h gets features
    #   h*Dk .. (h+1)*Dk - 1, in order. No loop over heads. B and T may be
    #   unknown until run time; D (so Dk) is known when the layer is built.
    #   Our solution is about 4 lines.
    #   中文：(B, T, D) 拆成 H 个连续的 Dk 维块，再把头的轴移到时间轴前面。
    # BEGIN SOLUTION
    batch, steps = ops.shape(X)[0], ops.shape(X)[1]
    head_size = X.shape[-1] // num_heads
    X = ops.reshape(X, (batch, steps, num_heads, head_size))  # (B, T, H, Dk)
    return ops.transpose(X, (0, 2, 1, 3))  # (B, H, T, Dk)
    # END SOLUTION


def merge_heads(X):
    """The inverse of `split_heads`: concatenate the heads.

    Args:
        X: `(B, H, T, Dk)`.

    Returns:
        `(B, T, H * Dk)`; `merge_heads(split_heads(X, H))` equals X.
    """
    # TODO(l18): X (B, H, T, Dk) -> (B, T, H * Dk), the inverse of
    #   split_heads: out[b, t, h*Dk + j] = X[b, h, t, j]. B and T may be
    #   unknown until run time; H and Dk are known when the layer is built.
    #   Our solution is about 4 lines.
    #   中文：split_heads 的逆操作：头的轴移回时间轴后面，最后两个轴合并。
    # BEGIN SOLUTION
    batch, steps = ops.shape(X)[0], ops.shape(X)[2]
    features = X.shape[1] * X.shape[3]
    X = ops.transpose(X, (0, 2, 1, 3))  # (B, T, H, Dk)
    return ops.reshape(X, (batch, steps, features))  # (B, T, D)
    # END SOLUTION


def masked_softmax(scores, valid_lens=None):
    """Softmax over the keys (last axis) of every head, ignoring padded keys.

    Args:
        scores: `(B, H, T, S)`.
        valid_lens: None, `(B,)` (one length per sequence) or `(B, T)` (one
            per query); integers. The same lengths hold in every head.

    Returns:
        `(B, H, T, S)` weights: exactly 0 at key positions `>= valid_len`,
        each row summing to 1, all zeros where `valid_len` is 0.
    """
    scores = ops.convert_to_tensor(scores)
    if valid_lens is not None:
        valid_lens = ops.convert_to_tensor(valid_lens)
        if len(valid_lens.shape) not in (1, 2):
            raise ValueError(
                "`valid_lens` must have shape (B,) or (B, T), got shape "
                f"{tuple(valid_lens.shape)}"
            )
    # TODO(l18): scores (B, H, T, S) -> (B, H, T, S) weights, lesson 16's
    #   masked normalisation with a heads axis: weights[b, h, t, i] =
    #   exp(scores[b, h, t, i]) / Σ_j exp(scores[b, h, t, j]), j over the
    #   kept keys. Without valid_lens every key is kept; otherwise key i is
    #   kept iff i < valid_lens[b] ((B,) lengths) or i < valid_lens[b, t]
    #   ((B, T) lengths), integers of any dtype, the SAME in every head h.
    #   Masked keys weigh exactly 0 (score them
    #   mask_fill_value(scores.dtype) first), kept ones sum to 1, and a
    #   query of valid length 0 gets all zeros. Our solution is about 8
    #   lines.
    #   中文：第 16 课的掩蔽多了一个头的轴：所有头共用同一个掩码。
    # BEGIN SOLUTION
    if valid_lens is None:
        return ops.softmax(scores, axis=-1)
    lens = ops.cast(valid_lens, "int32")
    if len(lens.shape) == 1:
        lens = lens[:, None, None, None]  # (B, 1, 1, 1)
    else:
        lens = lens[:, None, :, None]  # (B, 1, T, 1)
    keep = ops.arange(ops.shape(scores)[-1], dtype="int32") < lens
    fill = ops.cast(mask_fill_value(scores.dtype), scores.dtype)
    weights = ops.softmax(ops.where(keep, scores, fill), axis=-1)
    return weights * ops.cast(keep, scores.dtype)  # (B, H, T, S)
    # END SOLUTION


class MultiHeadAttention(keras.layers.Layer):
    """Multi-head scaled dot-product attention.

    Args:
        num_hiddens: int, D, the size of the projections and of the output;
            must be divisible by `num_heads`.
        num_heads: int, H. Each head has size `Dk = D / H`.
        dropout: float in [0, 1), dropout on the attention weights.
        bias: bool, whether the four projections have biases (d2l: False).

    Call arguments:
        queries: `(B, T, Dq)`.
        keys: `(B, S, Dk_in)`.
        values: `(B, S, Dv)`.
        valid_lens: None, `(B,)` or `(B, T)` integers: the keys of sequence
            b (or of query (b, t)) past its valid length are masked.
        training: bool, dropout is active only when True.
        return_attention_weights: bool, also return the weights.

    Returns:
        `(B, T, D)`, or `((B, T, D), (B, H, T, S))` with the weights.

    Weights: `W_q.kernel (Dq, D)`, `W_k.kernel (Dk_in, D)`,
    `W_v.kernel (Dv, D)`, `W_o.kernel (D, D)`, and a `(D,)` bias each when
    `bias=True`. Head h owns columns `h*Dk:(h+1)*Dk` of W_q, W_k, W_v and
    rows `h*Dk:(h+1)*Dk` of W_o.
    """

    def __init__(
        self,
        num_hiddens: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        for name, value in (
            ("num_hiddens", num_hiddens),
            ("num_heads", num_heads),
        ):
            if int(value) != value or value <= 0:
                raise ValueError(
                    f"`{name}` must be a positive int, got {value!r}"
                )
        if num_hiddens % num_heads:
            raise ValueError(
                f"`num_hiddens` ({num_hiddens}) must be divisible by "
                f"`num_heads` ({num_heads})"
            )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"`dropout` must be in [0, 1), got {dropout!r}")
        self.num_hiddens = int(num_hiddens)
        self.num_heads = int(num_heads)
        self.head_size = self.num_hiddens // self.num_heads  # Dk
        self.dropout = dropout
        self.bias = bool(bias)
        # One (Din, D) matrix per projection serves all heads: one matmul
        # each. Created in a fixed order so seeded initialisation is stable.
        dense = {"use_bias": self.bias, "dtype": self.dtype_policy}
        self.W_q = keras.layers.Dense(num_hiddens, name="W_q", **dense)
        self.W_k = keras.layers.Dense(num_hiddens, name="W_k", **dense)
        self.W_v = keras.layers.Dense(num_hiddens, name="W_v", **dense)
        self.W_o = keras.layers.Dense(num_hiddens, name="W_o", **dense)
        self.attention_dropout = keras.layers.Dropout(
            dropout, dtype=self.dtype_policy
        )

    def build(
        self, queries_shape, keys_shape, values_shape, valid_lens_shape=None
    ):
        self.W_q.build(queries_shape)
        self.W_k.build(keys_shape)
        self.W_v.build(values_shape)
        self.W_o.build((None, None, self.num_hiddens))

    def call(
        self,
        queries,
        keys,
        values,
        valid_lens=None,
        training=None,
        return_attention_weights=False,
    ):
        # TODO(l18): queries (B, T, Din), keys and values (B, S, Din) ->
        #   (B, T, D) output and (B, H, T, S) weights, the module docstring's
        #   equations. Q_h, K_h, V_h: one projection each by self.W_q,
        #   self.W_k, self.W_v for all heads at once, then split_heads:
        #   q (B, H, T, Dk), k and v (B, H, S, Dk). scores = Q_h K_h^T / √Dk
        #   per head, (B, H, T, S), with Dk = self.head_size in q's dtype;
        #   weights = masked_softmax(scores, valid_lens); head_h =
        #   drop(weights) V_h, (B, H, T, Dk), drop = self.attention_dropout
        #   (training only); output = self.W_o of merge_heads(heads). Assign
        #   `weights` (before the dropout) and `output`.
        #   Our solution is about 8 lines.
        #   中文：投影、拆成多个头、各头做缩放点积注意力（除以 √(D/H)）、合并、
        #   输出投影 W_o。
        # BEGIN SOLUTION
        q = split_heads(self.W_q(queries), self.num_heads)  # (B, H, T, Dk)
        k = split_heads(self.W_k(keys), self.num_heads)  # (B, H, S, Dk)
        v = split_heads(self.W_v(values), self.num_heads)  # (B, H, S, Dk)
        scale = ops.sqrt(ops.cast(self.head_size, q.dtype))
        scores = ops.matmul(q, ops.swapaxes(k, -1, -2)) / scale  # (B, H, T, S)
        weights = masked_softmax(scores, valid_lens)  # (B, H, T, S)
        dropped = self.attention_dropout(weights, training=training)
        heads = ops.matmul(dropped, v)  # (B, H, T, Dk)
        output = self.W_o(merge_heads(heads))  # (B, T, D)
        # END SOLUTION
        if return_attention_weights:
            return output, weights
        return output

    def get_config(self):
        return {
            **super().get_config(),
            "num_hiddens": self.num_hiddens,
            "num_heads": self.num_heads,
            "dropout": self.dropout,
            "bias": self.bias,
        }
