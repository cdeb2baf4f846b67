# Your exercise file: replace each `raise NotImplementedError` below its
# TODO with your code, then run `m2t grade l19`.
# (Generated from solutions/l19_self_attention_positional_encoding.py by `m2t make-lessons`.)
"""Lesson 19: self-attention and positional encoding (自注意力和位置编码).

Self-attention is attention whose queries, keys and values all come from
the same sequence X (B, T, D): every token attends to every token, in
parallel. It has no notion of order (permute the tokens and the outputs are
permuted alike), so the order is added to the input: X + P.

Sinusoidal positional encoding (位置编码), interleaved sin and cos:

    P[i, 2j]   = sin(i * w_j),   w_j = 1 / 10000^(2j/D)
    P[i, 2j+1] = cos(i * w_j),   j = 0 .. D/2 - 1

Each pair of columns (2j, 2j+1) is a point on a circle turning with the
position at frequency w_j; the frequencies fall from 1 to about 1/10000
along the encoding dimension, like the bits of a binary counter.
Position 0 is [0, 1, 0, 1, ...].

Relative positions: a fixed offset delta is a rotation. For each frequency,

    [P[i+d, 2j], P[i+d, 2j+1]] = [P[i, 2j], P[i, 2j+1]] @ R_j(d),
    R_j(d) = [[ cos(d w_j), -sin(d w_j)],
              [ sin(d w_j),  cos(d w_j)]]

so P[i + d] = P[i] @ M(d) with M(d) block diagonal (the R_j(d)), the same
matrix for every position i: a linear map that depends only on the offset.

Comparing layers over a sequence of n tokens of size d (kernel k for CNNs):

    layer            compute     sequential ops   maximum path length
    CNN              O(k n d^2)  O(1)             O(n / k)
    RNN              O(n d^2)    O(n)             O(n)
    self-attention   O(n^2 d)    O(1)             O(1)

Reference: Vaswani et al. 2017, section 3.5; d2l 10.6 (11.6).
"""

import keras
from keras import ops


def _check_even(num_hiddens: int) -> None:
    if int(num_hiddens) != num_hiddens or num_hiddens <= 0 or num_hiddens % 2:
        raise ValueError(
            f"`num_hiddens` must be a positive even int, got {num_hiddens!r}"
        )


def positional_encoding_table(max_len: int, num_hiddens: int, dtype="float32"):
    """The sinusoidal positional encoding of positions 0 .. max_len - 1.

    Args:
        max_len: int, the number of positions.
        num_hiddens: int, D, even.
        dtype: the table's dtype.

    Returns:
        `(max_len, D)`: `P[i, 2j] = sin(i / 10000^(2j/D))`,
        `P[i, 2j+1] = cos(i / 10000^(2j/D))`.
    """
    _check_even(num_hiddens)
    # TODO(l19): max_len, D: int -> (max_len, D), the table P of the module
    #   docstring: P[i, 2j] = sin(i w_j) and P[i, 2j+1] = cos(i w_j), with
    #   w_j = 1 / 10000^(2j/D), i = 0 .. max_len - 1, j = 0 .. D/2 - 1.
    #   sin fills the even columns and cos the odd ones, interleaved (not
    #   a sin half then a cos half); the angles i w_j form a (max_len, D/2)
    #   table. Compute in float32, return in `dtype`.
    #   Our solution is about 5 lines.
    #   中文：正弦位置编码表：sin 放第 2j 列，cos 放第 2j+1 列，交错排列。
    raise NotImplementedError("l19: positional_encoding_table")


def relative_shift(delta: int, num_hiddens: int, dtype="float32"):
    """The matrix M(delta) with `P[i + delta] = P[i] @ M(delta)` for all i.

    Args:
        delta: int, the offset (may be negative).
        num_hiddens: int, D, even.
        dtype: the matrix's dtype.

    Returns:
        `(D, D)`, block diagonal: block j (rows and columns 2j, 2j+1) is
        `[[cos(delta w_j), -sin(delta w_j)], [sin(delta w_j),
        cos(delta w_j)]]` with `w_j = 1 / 10000^(2j/D)`; zeros elsewhere.
    """
    _check_even(num_hiddens)
    # TODO(l19): delta, D: int -> (D, D), the matrix M(delta) of the module
    #   docstring with P[i + delta] = P[i] @ M(delta). Block j (rows and
    #   columns 2j, 2j+1) is R_j(delta) = [[cos(delta w_j), -sin(delta
    #   w_j)], [sin(delta w_j), cos(delta w_j)]], w_j = 1 / 10000^(2j/D);
    #   every entry outside the blocks is 0. The angles delta w_j are
    #   (D/2,). Compute in float32, return in `dtype`; no Python loop over
    #   j is needed. Our solution is about 7 lines.
    #   中文：把 D/2 个 2x2 旋转块放在块对角线上，
    #   得到 P[i] @ M = P[i + delta] 的 (D, D) 矩阵。
    raise NotImplementedError("l19: relative_shift")


class PositionalEncoding(keras.layers.Layer):
    """Adds the sinusoidal positional encoding, then dropout.

    Args:
        num_hiddens: int, D, even.
        dropout: float in [0, 1), applied to X + P.
        max_len: int, the longest sequence the layer accepts.

    Call arguments:
        X: `(B, T, D)`, T <= max_len (e.g. embeddings).
        training: bool, dropout is active only when True.

    Returns:
        `(B, T, D)`: `Dropout(X + P[:T])`, the same P for every sequence.
    """

    def __init__(
        self,
        num_hiddens: int,
        dropout: float = 0.0,
        max_len: int = 1000,
        **kwargs,
    ):
        super().__init__(**kwargs)
        _check_even(num_hiddens)
        if int(max_len) != max_len or max_len <= 0:
            raise ValueError(
                f"`max_len` must be a positive int, got {max_len!r}"
            )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"`dropout` must be in [0, 1), got {dropout!r}")
        self.num_hiddens = int(num_hiddens)
        self.dropout = dropout
        self.max_len = int(max_len)
        self.encoding_dropout = keras.layers.Dropout(
            dropout, dtype=self.dtype_policy
        )

    def build(self, X_shape):
        if X_shape[-1] != self.num_hiddens:
            raise ValueError(
                f"`X` must have {self.num_hiddens} features (num_hiddens), "
                f"got shape {X_shape}"
            )
        # A constant, not a weight: nothing to train or to save.
        self.P = positional_encoding_table(
            self.max_len, self.num_hiddens, self.compute_dtype
        )

    def call(self, X, training=None):
        # TODO(l19): X (B, T, D) -> (B, T, D): Dropout(X + P[:T]), P =
        #   self.P (max_len, D), the same T rows for every sequence of the
        #   batch; T is known only at run time. The dropout is
        #   self.encoding_dropout, active only when training.
        #   Our solution is about 2 lines.
        #   中文：加上位置编码表的前 T 行（在批量上广播），再做暂退法。
        raise NotImplementedError("l19: PositionalEncoding.call")

    def get_config(self):
        return {
            **super().get_config(),
            "num_hiddens": self.num_hiddens,
            "dropout": self.dropout,
            "max_len": self.max_len,
        }
