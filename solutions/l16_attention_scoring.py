"""Lesson 16: attention scoring functions (注意力评分函数).

Attention pools the values with weights computed from a query and the keys:

    f(q, (k_1, v_1), ..., (k_S, v_S)) = sum_i alpha(q, k_i) v_i,
    alpha(q, k_i) = softmax_i(a(q, k_i))

Two scoring functions a(q, k):

    additive (加性注意力):  a(q, k) = w_v^T tanh(W_q q + W_k k)
        q in R^{Dq}, k in R^{Dk}, W_q (Dq, H), W_k (Dk, H), w_v (H, 1):
        queries and keys may have different sizes.
    scaled dot-product (缩放点积注意力):  a(q, k) = q^T k / sqrt(d)
        q, k in R^d: same size; dividing by sqrt(d) keeps the scores' variance
        at 1 when q and k have independent unit-variance entries.

Masking (掩蔽): a sequence padded to S keys has `valid_len` real ones.
Keys at or past the valid length get weight exactly 0 and the rest sum to 1;
a row whose valid length is 0 is all zeros (never NaN, never uniform).

Reference: Bahdanau et al. 2015; Vaswani et al. 2017; d2l 10.3 (11.3).
"""

import keras
from keras import ops


def mask_fill_value(dtype: str) -> float:
    """The score given to masked keys: so negative that exp() is exactly 0.

    -1e9 in float32/float64; float16 cannot hold it, so -3e4 there.
    """
    return -3e4 if keras.backend.standardize_dtype(dtype) == "float16" else -1e9


def masked_softmax(X, valid_lens=None):
    """Softmax over the last axis, ignoring keys past each valid length.

    Args:
        X: `(B, T, S)` scores.
        valid_lens: None (no mask), `(B,)` (one length per sequence, the same
            for all its T queries) or `(B, T)` (one per query); integers.

    Returns:
        `(B, T, S)` weights: exactly 0 at positions `>= valid_len`, each row
        summing to 1, and all zeros where `valid_len` is 0.
    """
    X = ops.convert_to_tensor(X)
    if valid_lens is not None:
        valid_lens = ops.convert_to_tensor(valid_lens)
        if len(valid_lens.shape) == 1:
            valid_lens = ops.expand_dims(valid_lens, -1)  # (B, 1)
        elif len(valid_lens.shape) != 2:
            raise ValueError(
                "`valid_lens` must have shape (B,) or (B, T), got shape "
                f"{tuple(valid_lens.shape)}"
            )
    # TODO(l16): X: (B, T, S) -> (B, T, S) weights, normalised over the keys
    #   (the last axis): weights[b, t, i] = exp(X_bti) / Σ_j exp(X_btj),
    #   j over the kept keys only. Without valid_lens every key is kept;
    #   otherwise key i of row (b, t) is kept iff i < valid_lens[b, t]
    #   (valid_lens is (B, 1) or (B, T) by now, integers of any dtype). A
    #   masked key weighs exactly 0: its score becomes
    #   mask_fill_value(X.dtype) first, so no NaN and no overflow. The
    #   kept weights of a row sum to 1, and a row of valid length 0 is all
    #   zeros, not uniform. Our solution is about 6 lines.
    #   中文：在键（最后一个轴）上把评分规范化成权重：
    #   有效长度及之后的键权重恰为 0，有效长度为 0 的行全为零。
    # BEGIN SOLUTION
    if valid_lens is None:
        return ops.softmax(X, axis=-1)
    positions = ops.arange(ops.shape(X)[-1], dtype="int32")  # (S,)
    lens = ops.cast(valid_lens, "int32")[..., None]  # (B, T or 1, 1)
    keep = positions < lens  # (B, T or 1, S)
    scores = ops.where(keep, X, ops.cast(mask_fill_value(X.dtype), X.dtype))
    return ops.softmax(scores, axis=-1) * ops.cast(keep, X.dtype)
    # END SOLUTION


def _check_dropout(dropout: float) -> None:
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"`dropout` must be in [0, 1), got {dropout!r}")


class AdditiveAttention(keras.layers.Layer):
    """Additive attention: scores `w_v^T tanh(W_q q + W_k k)`.

    Args:
        num_hiddens: int, H, the size of the hidden layer of the scoring MLP.
        dropout: float in [0, 1), dropout on the attention weights.

    Call arguments:
        queries: `(B, T, Dq)`.
        keys: `(B, S, Dk)` (Dk may differ from Dq).
        values: `(B, S, V)`.
        valid_lens: None, `(B,)` or `(B, T)` integers (see `masked_softmax`).
        training: bool, dropout is active only when True.
        return_attention_weights: bool, also return the `(B, T, S)` weights.

    Returns:
        `(B, T, V)`, or `((B, T, V), (B, T, S))` with the weights.

    Weights: `W_q.kernel (Dq, H)`, `W_k.kernel (Dk, H)`, `w_v.kernel (H, 1)`,
    no biases.
    """

    def __init__(self, num_hiddens: int, dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        if int(num_hiddens) != num_hiddens or num_hiddens <= 0:
            raise ValueError(
                f"`num_hiddens` must be a positive int, got {num_hiddens!r}"
            )
        _check_dropout(dropout)
        self.num_hiddens = int(num_hiddens)
        self.dropout = dropout
        # Sublayers share this layer's dtype policy, so a float64 (or mixed
        # precision) layer computes in that dtype all the way through.
        dense = {"use_bias": False, "dtype": self.dtype_policy}
        self.W_q = keras.layers.Dense(num_hiddens, name="W_q", **dense)
        self.W_k = keras.layers.Dense(num_hiddens, name="W_k", **dense)
        self.w_v = keras.layers.Dense(1, name="w_v", **dense)
        self.attention_dropout = keras.layers.Dropout(
            dropout, dtype=self.dtype_policy
        )

    def build(
        self, queries_shape, keys_shape, values_shape, valid_lens_shape=None
    ):
        self.W_q.build(queries_shape)
        self.W_k.build(keys_shape)
        self.w_v.build((None, self.num_hiddens))

    def call(
        self,
        queries,
        keys,
        values,
        valid_lens=None,
        training=None,
        return_attention_weights=False,
    ):
        # TODO(l16): queries (B, T, Dq), keys (B, S, Dk), values (B, S, V) ->
        #   (B, T, V) output and (B, T, S) weights. scores[b, t, i] =
        #   w_v^T th(W_q q_bt + W_k k_bi), th the hyperbolic tangent:
        #   self.W_q and self.W_k map to H features, every (query, key) pair
        #   is combined into (B, T, S, H), and self.w_v maps H to one score.
        #   weights = masked_softmax(scores, valid_lens); output[b, t] =
        #   Σ_i drop(weights)[b, t, i] v_bi, drop = self.attention_dropout
        #   (active only when training); the weights returned are those
        #   before the dropout. Assign `weights` and `output`.
        #   Our solution is about 6 lines.
        #   中文：加性注意力：评分 w_v^T th(W_q q + W_k k)（th 为双曲正切），
        #   掩蔽后规范化成权重，再对值加权平均。
        # BEGIN SOLUTION
        q = self.W_q(queries)  # (B, T, H)
        k = self.W_k(keys)  # (B, S, H)
        features = ops.tanh(q[:, :, None, :] + k[:, None, :, :])  # (B, T, S, H)
        scores = ops.squeeze(self.w_v(features), axis=-1)  # (B, T, S)
        weights = masked_softmax(scores, valid_lens)  # (B, T, S)
        dropped = self.attention_dropout(weights, training=training)
        output = ops.matmul(dropped, values)  # (B, T, V)
        # END SOLUTION
        if return_attention_weights:
            return output, weights
        return output

    def get_config(self):
        return {
            **super().get_config(),
            "num_hiddens": self.num_hiddens,
            "dropout": self.dropout,
        }


class DotProductAttention(keras.layers.Layer):
    """Scaled dot-product attention: scores `Q K^T / sqrt(d)`.

    Args:
        dropout: float in [0, 1), dropout on the attention weights.

    Call arguments:
        queries: `(B, T, D)`.
        keys: `(B, S, D)` (same D as the queries).
        values: `(B, S, V)`.
        valid_lens: None, `(B,)` or `(B, T)` integers (see `masked_softmax`).
        training: bool, dropout is active only when True.
        return_attention_weights: bool, also return the `(B, T, S)` weights.

    Returns:
        `(B, T, V)`, or `((B, T, V), (B, T, S))` with the weights.
    """

    def __init__(self, dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        _check_dropout(dropout)
        self.dropout = dropout
        self.attention_dropout = keras.layers.Dropout(
            dropout, dtype=self.dtype_policy
        )

    def call(
        self,
        queries,
        keys,
        values,
        valid_lens=None,
        training=None,
        return_attention_weights=False,
    ):
        dq, dk = queries.shape[-1], keys.shape[-1]
        if dq is not None and dk is not None and dq != dk:
            raise ValueError(
                "dot-product attention needs queries and keys of the same "
                f"size, got `queries` (..., {dq}) and `keys` (..., {dk})"
            )
        # TODO(l16): queries (B, T, D), keys (B, S, D), values (B, S, V) ->
        #   (B, T, V) output and (B, T, S) weights. scores[b, t, i] =
        #   q_bt · k_bi / √d, with d = D in the queries' dtype (D read at
        #   run time); weights = masked_softmax(scores, valid_lens);
        #   output[b, t] = Σ_i drop(weights)[b, t, i] v_bi, drop =
        #   self.attention_dropout (active only when training); the weights
        #   returned are those before the dropout. Assign `weights` and
        #   `output`. Our solution is about 5 lines.
        #   中文：缩放点积注意力：评分 q·k / √d，掩蔽后规范化成权重，
        #   再对值加权平均。
        # BEGIN SOLUTION
        d = ops.cast(ops.shape(queries)[-1], queries.dtype)
        scores = ops.matmul(queries, ops.swapaxes(keys, -1, -2)) / ops.sqrt(d)
        weights = masked_softmax(scores, valid_lens)  # (B, T, S)
        dropped = self.attention_dropout(weights, training=training)
        output = ops.matmul(dropped, values)  # (B, T, V)
        # END SOLUTION
        if return_attention_weights:
            return output, weights
        return output

    def get_config(self):
        return {**super().get_config(), "dropout": self.dropout}
