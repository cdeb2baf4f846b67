# Your exercise file: replace each `raise NotImplementedError` below its
# TODO with your code, then run `m2t grade l20`.
# (Generated from solutions/l20_transformer.py by `m2t make-lessons`.)
"""Lesson 20: the Transformer (Transformer), an encoder-decoder built from
attention alone.

Encoder block (编码器块), post-norm as in the paper and d2l:

    Y = AddNorm(X, MHA(X, X, X; keys past the source valid length masked))
    out = AddNorm(Y, FFN(Y))

Decoder block (解码器块), three sublayers:

    Y = AddNorm(X, MHA(X, KV, KV; causal))         masked self-attention
    Z = AddNorm(Y, MHA(Y, enc, enc; source mask))  encoder-decoder attention
    out = AddNorm(Z, FFN(Z))                       (编码器-解码器注意力)

    FFN(X) = relu(X W_1 + b_1) W_2 + b_2           position-wise FFN
                                                   (基于位置的前馈网络)
    AddNorm(X, Y) = LayerNorm(X + Dropout(Y))      over the last axis, with
                                                   epsilon 1e-5 (加法和规范化)

Embeddings are multiplied by sqrt(D) before the sinusoidal positional
encoding (位置编码) is added, so the two have comparable scales:

    X = Dropout(Embedding(tokens) * sqrt(D) + P[positions])
    P[i, 2j] = sin(i / 10000^(2j/D)),  P[i, 2j+1] = cos(i / 10000^(2j/D))

Masks follow `keras.layers.MultiHeadAttention`: `attention_mask` (B, T, S)
booleans, True where query t may attend to key s. The decoder's causal mask
lets the query at position i see keys 0 .. i, the same as d2l's training
`dec_valid_lens` = [[1, 2, ..., T], ...].

Decoding with a cache: in training the decoder sees the whole target at
once and the causal mask hides the future. In prediction it takes one token
per step; each decoder block keeps the inputs of its self-attention from the
earlier steps (its keys and values) and appends the new one, so a step costs
one query, and step-by-step decoding equals the full pass. The new token's
positional encoding is that of its absolute position (the cache length).

Model API (what a training recipe uses):

    model = Transformer(src_vocab_size, tgt_vocab_size, num_hiddens=32,
                        ffn_num_hiddens=64, num_heads=4, num_blks=2,
                        dropout=0.1)
    logits = model((src, src_valid_len, dec_input), training=True)
        src: (B, S) int source tokens, padded;
        src_valid_len: (B,) int, the number of real source tokens;
        dec_input: (B, T) int, <bos> followed by the target without its last
            token (teacher forcing);
        logits: (B, T, V_tgt), before the softmax.
    tokens, lengths = greedy_decode(model, src, src_valid_len, bos_id,
                                    eos_id, num_steps)
        tokens: (B, num_steps) int32 NumPy, eos_id after each sequence's
            end; lengths: (B,) int32, the tokens before the first <eos>.

Reference: Vaswani et al. 2017; d2l 10.7 (11.7).
"""

from collections.abc import Callable

import keras
import numpy as np
from keras import ops

LAYER_NORM_EPSILON = 1e-5
"""The epsilon of AddNorm's layer norm (the paper's implementations, d2l's
PyTorch LayerNorm and keras-hub use 1e-5; keras's default is 1e-3)."""


def _check_positive(**values) -> None:
    for name, value in values.items():
        if int(value) != value or value <= 0:
            raise ValueError(f"`{name}` must be a positive int, got {value!r}")


def _check_dropout(dropout: float) -> None:
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"`dropout` must be in [0, 1), got {dropout!r}")


def _check_model_size(num_hiddens: int, num_heads: int) -> None:
    if num_hiddens % num_heads:
        raise ValueError(
            f"`num_hiddens` ({num_hiddens}) must be divisible by "
            f"`num_heads` ({num_heads})"
        )
    _check_even(num_hiddens)


def _check_even(num_hiddens: int) -> None:
    if num_hiddens % 2:
        raise ValueError(
            "`num_hiddens` must be even for the sin/cos positional encoding, "
            f"got {num_hiddens}"
        )


def sinusoidal_positions(positions, depth: int, dtype="float32"):
    """The sinusoidal positional encoding at the given positions.

    Args:
        positions: `(T,)` integer positions (0, 1, ... in the encoder; the
            absolute positions of the new tokens when decoding with a cache).
        depth: int, D, even.
        dtype: the result's dtype.

    Returns:
        `(T, D)`: `P[t, 2j] = sin(positions[t] / 10000^(2j/D))` and
        `P[t, 2j+1] = cos(positions[t] / 10000^(2j/D))` (interleaved).
    """
    if depth % 2:
        raise ValueError(f"`depth` must be even, got {depth}")
    # TODO(l20): positions (T,) -> (T, D), lesson 19's table at arbitrary
    #   integer positions p_t: P[t, 2j] = sin(p_t w_j), P[t, 2j+1] =
    #   cos(p_t w_j), w_j = 1 / 10000^(2j/D), j = 0 .. D/2 - 1; sin in the
    #   even columns, cos in the odd ones (interleaved). T may be known
    #   only at run time. Compute in float32, return in `dtype`.
    #   Our solution is about 5 lines.
    #   中文：给定位置的正弦位置编码，sin 和 cos 交错排列。
    raise NotImplementedError("l20: sinusoidal_positions")


def padding_mask(valid_lens, num_queries, num_keys):
    """The attention mask of padded keys.

    Args:
        valid_lens: `(B,)` (one length per sequence) or `(B, T)` (one per
            query) integers.
        num_queries: T (an int, or a scalar tensor from ops.shape).
        num_keys: S.

    Returns:
        `(B, T, S)` bool, True where key s < the valid length (attend).
    """
    valid_lens = ops.convert_to_tensor(valid_lens)
    if len(valid_lens.shape) not in (1, 2):
        raise ValueError(
            "`valid_lens` must have shape (B,) or (B, T), got shape "
            f"{tuple(valid_lens.shape)}"
        )
    # TODO(l20): valid_lens (B,) or (B, T) -> (B, T, S) bool, the
    #   `attention_mask` convention of the module docstring: entry
    #   [b, t, s] is True (query t may attend to key s) iff s <
    #   valid_lens[b] ((B,) lengths, the same for every query) or s <
    #   valid_lens[b, t] ((B, T) lengths); lengths of any integer dtype.
    #   B, T and S may be known only at run time (T and S can be scalar
    #   tensors). Our solution is about 5 lines.
    #   中文：填充掩码：键的位置小于查询的有效长度时为 True。
    raise NotImplementedError("l20: padding_mask")


def causal_mask(num_queries, num_keys):
    """The decoder's self-attention mask: no query sees a later position.

    The T queries are the last T of the S positions (S - T earlier ones are
    cached), so query t sits at position S - T + t.

    Args:
        num_queries: T (an int, or a scalar tensor from ops.shape).
        num_keys: S >= T.

    Returns:
        `(1, T, S)` bool, True where key s <= S - T + t: each query sees
        itself and everything before it (broadcasts over the batch).
    """
    # TODO(l20): T, S: int -> (1, T, S) bool: the T queries are the last T
    #   of S positions, so query t sits at position S - T + t, and entry
    #   [0, t, s] is True iff s <= S - T + t (each query sees itself and
    #   everything earlier; with T = S, the lower triangle and diagonal).
    #   The leading axis of size 1 broadcasts over the batch. T and S may
    #   be scalar tensors. Our solution is about 3 lines.
    #   中文：因果掩蔽：每个查询只能看到它自己及之前的位置，
    #   位置要加上已缓存的步数。
    raise NotImplementedError("l20: causal_mask")


class PositionWiseFFN(keras.layers.Layer):
    """Position-wise feed-forward network: the same 2-layer MLP at every
    position.

    Args:
        ffn_num_hiddens: int, F, the hidden size.
        ffn_num_outputs: int, the output size (D in a Transformer).

    Call arguments:
        X: `(B, T, D)`.

    Returns:
        `(B, T, ffn_num_outputs)`: `relu(X W_1 + b_1) W_2 + b_2`.
    """

    def __init__(self, ffn_num_hiddens: int, ffn_num_outputs: int, **kwargs):
        super().__init__(**kwargs)
        _check_positive(
            ffn_num_hiddens=ffn_num_hiddens, ffn_num_outputs=ffn_num_outputs
        )
        self.ffn_num_hiddens = int(ffn_num_hiddens)
        self.ffn_num_outputs = int(ffn_num_outputs)
        self.dense1 = keras.layers.Dense(
            ffn_num_hiddens, name="dense1", dtype=self.dtype_policy
        )
        self.dense2 = keras.layers.Dense(
            ffn_num_outputs, name="dense2", dtype=self.dtype_policy
        )

    def build(self, X_shape):
        self.dense1.build(X_shape)
        self.dense2.build((*X_shape[:-1], self.ffn_num_hiddens))

    def call(self, X):
        # TODO(l20): X (B, T, D) -> (B, T, ffn_num_outputs), FFN(X) =
        #   max(0, X W_1 + b_1) W_2 + b_2 of the docstring, through a hidden
        #   layer (B, T, F): one MLP shared by every position, each position
        #   on its own (attention already mixed them). Both affine maps were
        #   made in __init__. Our solution is 1 line.
        #   中文：基于位置的前馈网络：同一个两层 MLP（中间 ReLU，隐藏层
        #   (B, T, F)）独立作用于每个位置（位置之间的交流已由注意力完成）；
        #   两个仿射变换已在 __init__ 中建好。
        raise NotImplementedError("l20: PositionWiseFFN.call")

    def get_config(self):
        return {
            **super().get_config(),
            "ffn_num_hiddens": self.ffn_num_hiddens,
            "ffn_num_outputs": self.ffn_num_outputs,
        }


class AddNorm(keras.layers.Layer):
    """Residual connection then layer normalisation (post-norm).

    `LayerNorm(X + Dropout(Y))`, normalising each position's D features:
    `(Z - mean) / sqrt(var + epsilon) * gamma + beta`, mean and variance
    over the last axis. Equals `keras.layers.LayerNormalization(epsilon)`
    applied to `X + Y` (without dropout).

    Args:
        dropout: float in [0, 1), dropout on Y.
        epsilon: float, added to the variance (1e-5).

    Call arguments:
        X: `(B, T, D)`, the sublayer's input (the residual).
        Y: `(B, T, D)`, the sublayer's output.
        training: bool, dropout is active only when True.

    Returns:
        `(B, T, D)`.

    Weights: `gamma (D,)` (ones) and `beta (D,)` (zeros).
    """

    def __init__(
        self,
        dropout: float = 0.0,
        epsilon: float = LAYER_NORM_EPSILON,
        **kwargs,
    ):
        super().__init__(**kwargs)
        _check_dropout(dropout)
        if not epsilon > 0:
            raise ValueError(f"`epsilon` must be positive, got {epsilon!r}")
        self.dropout = dropout
        self.epsilon = float(epsilon)
        self.residual_dropout = keras.layers.Dropout(
            dropout, dtype=self.dtype_policy
        )

    def build(self, X_shape, Y_shape=None):
        self.gamma = self.add_weight(
            shape=(X_shape[-1],), initializer="ones", name="gamma"
        )
        self.beta = self.add_weight(
            shape=(X_shape[-1],), initializer="zeros", name="beta"
        )

    def call(self, X, Y, training=None):
        # TODO(l20): X, Y (B, T, D) -> (B, T, D), AddNorm(X, Y) =
        #   LayerNorm(Z), Z = X + Dropout(Y) with self.residual_dropout
        #   (training only). For each position, with μ and σ² the mean and
        #   the (biased, 1/D) variance of its D features of Z:
        #   (Z - μ) / √(σ² + self.epsilon) · self.gamma + self.beta; μ and
        #   σ² are (B, T, 1). Our solution is about 3 lines.
        #   中文：残差连接后做层规范化：LayerNorm(X + Dropout(Y))，
        #   只在最后一个轴上统计。
        raise NotImplementedError("l20: AddNorm.call")

    def get_config(self):
        return {
            **super().get_config(),
            "dropout": self.dropout,
            "epsilon": self.epsilon,
        }


def keras_attention(
    num_hiddens: int,
    num_heads: int,
    dropout: float,
    bias: bool,
    dtype,
    name: str,
):
    """Keras multi-head attention with D / H per head and a D output: the
    blocks' attention when none is given.

    A block's `attention` argument is any callable with these arguments
    that returns a layer called as this one is: `layer(query (B, T, D),
    value (B, S, D), attention_mask=(B or 1, T, S) bool or None,
    training=...) -> (B, T, D)`, built by `layer.build(query_shape,
    value_shape)`.
    """
    return keras.layers.MultiHeadAttention(
        num_heads=num_heads,
        key_dim=num_hiddens // num_heads,
        dropout=dropout,
        use_bias=bias,
        output_shape=num_hiddens,
        dtype=dtype,
        name=name,
    )


class TransformerEncoderBlock(keras.layers.Layer):
    """Multi-head self-attention and a position-wise FFN, each followed by
    AddNorm. Keeps the input shape.

    Args:
        num_hiddens: int, D (divisible by num_heads).
        ffn_num_hiddens: int, F.
        num_heads: int, H.
        dropout: float in [0, 1), in the attention weights and the AddNorms.
        bias: bool, biases in the attention projections.
        attention: builds each attention sublayer (see `keras_attention`,
            the default; a capstone passes its own).

    Call arguments:
        X: `(B, S, D)`.
        valid_lens: None, `(B,)` or `(B, S)`: keys past it are masked.
        training: bool.

    Returns:
        `(B, S, D)`.
    """

    def __init__(
        self,
        num_hiddens: int,
        ffn_num_hiddens: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = False,
        attention: Callable | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        _check_positive(
            num_hiddens=num_hiddens,
            ffn_num_hiddens=ffn_num_hiddens,
            num_heads=num_heads,
        )
        if attention is not None and not callable(attention):
            raise ValueError(
                f"`attention` must be callable or None, got {attention!r}"
            )
        self.make_attention = attention or keras_attention
        _check_model_size(num_hiddens, num_heads)
        _check_dropout(dropout)
        self.num_hiddens = int(num_hiddens)
        self.ffn_num_hiddens = int(ffn_num_hiddens)
        self.num_heads = int(num_heads)
        self.dropout = dropout
        self.bias = bool(bias)
        policy = self.dtype_policy
        self.attention = self.make_attention(
            num_hiddens, num_heads, dropout, bias, policy, "attention"
        )
        self.addnorm1 = AddNorm(dropout, name="addnorm1", dtype=policy)
        self.ffn = PositionWiseFFN(
            ffn_num_hiddens, num_hiddens, name="ffn", dtype=policy
        )
        self.addnorm2 = AddNorm(dropout, name="addnorm2", dtype=policy)

    def build(self, X_shape, valid_lens_shape=None):
        shape = (*X_shape[:-1], self.num_hiddens)
        self.attention.build(X_shape, X_shape)
        self.addnorm1.build(shape)
        self.ffn.build(shape)
        self.addnorm2.build(shape)

    def call(self, X, valid_lens=None, training=None):
        # TODO(l20): X (B, S, D) -> (B, S, D), the encoder block of the
        #   module docstring: Y = AddNorm(X, MHA(X, X, X)) with
        #   self.attention and self.addnorm1, then AddNorm(Y, FFN(Y)) with
        #   self.ffn and self.addnorm2. The attention's mask is
        #   padding_mask(valid_lens, S, S) (none when valid_lens is None; S
        #   known at run time). Keras's MultiHeadAttention takes (query,
        #   value) positionally (the key defaults to the value) and
        #   attention_mask and training by keyword; the AddNorms take
        #   training too. Our solution is about 6 lines.
        #   中文：多头自注意力（方形的填充掩码）和基于位置的前馈网络，
        #   各接一个 AddNorm。
        raise NotImplementedError("l20: TransformerEncoderBlock.call")

    def get_config(self):
        return {
            **super().get_config(),
            "num_hiddens": self.num_hiddens,
            "ffn_num_hiddens": self.ffn_num_hiddens,
            "num_heads": self.num_heads,
            "dropout": self.dropout,
            "bias": self.bias,
        }


class TransformerEmbedding(keras.layers.Layer):
    """The input of the encoder and of the decoder, the module docstring's
    X: token embeddings times sqrt(D), plus the sinusoidal positional
    encoding of their positions, then dropout.

    Args:
        vocab_size: int, the vocabulary size.
        num_hiddens: int, D (even).
        dropout: float in [0, 1), on the sum.

    Call arguments:
        tokens: `(B, T)` integer token ids.
        start: int or scalar int tensor, the position of the first token
            (0; when the decoder predicts step by step, the number of
            cached steps).
        training: bool.

    Returns:
        `(B, T, D)`.
    """

    def __init__(
        self,
        vocab_size: int,
        num_hiddens: int,
        dropout: float = 0.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        _check_positive(vocab_size=vocab_size, num_hiddens=num_hiddens)
        _check_even(num_hiddens)
        _check_dropout(dropout)
        self.vocab_size = int(vocab_size)
        self.num_hiddens = int(num_hiddens)
        self.dropout = dropout
        policy = self.dtype_policy
        self.token_embedding = keras.layers.Embedding(
            vocab_size, num_hiddens, name="token_embedding", dtype=policy
        )
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=policy)

    def build(self, tokens_shape, start_shape=None):
        self.token_embedding.build(tokens_shape)

    def call(self, tokens, start=0, training=None):
        # TODO(l20): tokens (B, T) -> (B, T, D), the module docstring's
        #   X = Dropout(Embedding(tokens) * √D + P[start .. start + T - 1])
        #   with self.token_embedding, √D in the embedding's dtype, P from
        #   sinusoidal_positions (one (T, D) table, the same for every
        #   sequence) and self.dropout_layer (training only). T is known
        #   only at run time. Our solution is about 5 lines.
        #   中文：词元嵌入乘以 √D，加上从 start 起的位置编码，再做暂退法。
        raise NotImplementedError("l20: TransformerEmbedding.call")

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "num_hiddens": self.num_hiddens,
            "dropout": self.dropout,
        }


class TransformerEncoder(keras.layers.Layer):
    """`TransformerEmbedding` (positions from 0), then `num_blks` encoder
    blocks.

    Args:
        vocab_size: int, the source vocabulary size.
        num_hiddens: int, D (even, divisible by num_heads).
        ffn_num_hiddens: int, F.
        num_heads: int, H.
        num_blks: int, the number of encoder blocks.
        dropout: float in [0, 1).
        bias: bool, biases in the attention projections.

    Call arguments:
        tokens: `(B, S)` integer token ids.
        valid_lens: None or `(B,)`: the number of real (unpadded) tokens.
        training: bool.

    Returns:
        `(B, S, D)`, the encoder outputs.
    """

    def __init__(
        self,
        vocab_size: int,
        num_hiddens: int,
        ffn_num_hiddens: int,
        num_heads: int,
        num_blks: int,
        dropout: float = 0.0,
        bias: bool = False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        _check_positive(
            vocab_size=vocab_size,
            num_hiddens=num_hiddens,
            ffn_num_hiddens=ffn_num_hiddens,
            num_heads=num_heads,
            num_blks=num_blks,
        )
        _check_model_size(num_hiddens, num_heads)
        _check_dropout(dropout)
        self.vocab_size = int(vocab_size)
        self.num_hiddens = int(num_hiddens)
        self.ffn_num_hiddens = int(ffn_num_hiddens)
        self.num_heads = int(num_heads)
        self.num_blks = int(num_blks)
        self.dropout = dropout
        self.bias = bool(bias)
        policy = self.dtype_policy
        self.embedding = TransformerEmbedding(
            vocab_size, num_hiddens, dropout, name="embedding", dtype=policy
        )
        self.blks = [
            TransformerEncoderBlock(
                num_hiddens,
                ffn_num_hiddens,
                num_heads,
                dropout,
                bias,
                name=f"block{i}",
                dtype=policy,
            )
            for i in range(num_blks)
        ]

    def build(self, tokens_shape, valid_lens_shape=None):
        self.embedding.build(tokens_shape)
        for blk in self.blks:
            blk.build((*tokens_shape, self.num_hiddens))

    def call(self, tokens, valid_lens=None, training=None):
        # TODO(l20): tokens (B, S) -> (B, S, D): X = self.embedding of the
        #   tokens (positions 0 .. S-1) with training, then the blocks of
        #   self.blks in order, each given valid_lens and training.
        #   Our solution is about 4 lines.
        #   中文：先做词元嵌入（位置从 0 开始），再依次经过各个编码器块。
        raise NotImplementedError("l20: TransformerEncoder.call")

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "num_hiddens": self.num_hiddens,
            "ffn_num_hiddens": self.ffn_num_hiddens,
            "num_heads": self.num_heads,
            "num_blks": self.num_blks,
            "dropout": self.dropout,
            "bias": self.bias,
        }


class TransformerDecoderBlock(keras.layers.Layer):
    """Masked self-attention, encoder-decoder attention and a position-wise
    FFN, each followed by AddNorm.

    Args:
        num_hiddens: int, D (divisible by num_heads).
        ffn_num_hiddens: int, F.
        num_heads: int, H.
        dropout: float in [0, 1).
        bias: bool, biases in the attention projections.
        attention: builds each attention sublayer (see `keras_attention`,
            the default; a capstone passes its own).

    Call arguments:
        X: `(B, T, D)`, the new target positions.
        enc_outputs: `(B, S, D)`, the encoder's outputs.
        enc_valid_lens: None or `(B,)`: the source lengths (masks the
            encoder-decoder attention).
        cache: None (training: T positions from 0) or `(B, T0, D)`, this
            block's inputs at the T0 earlier positions (prediction).
        training: bool.

    Returns:
        `(out, kv)`: `out (B, T, D)` and `kv (B, T0 + T, D)`, the cache to
        pass at the next step (the keys and values of the self-attention).
    """

    def __init__(
        self,
        num_hiddens: int,
        ffn_num_hiddens: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = False,
        attention: Callable | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        _check_positive(
            num_hiddens=num_hiddens,
            ffn_num_hiddens=ffn_num_hiddens,
            num_heads=num_heads,
        )
        if attention is not None and not callable(attention):
            raise ValueError(
                f"`attention` must be callable or None, got {attention!r}"
            )
        self.make_attention = attention or keras_attention
        _check_model_size(num_hiddens, num_heads)
        _check_dropout(dropout)
        self.num_hiddens = int(num_hiddens)
        self.ffn_num_hiddens = int(ffn_num_hiddens)
        self.num_heads = int(num_heads)
        self.dropout = dropout
        self.bias = bool(bias)
        policy = self.dtype_policy
        self.self_attention = self.make_attention(
            num_hiddens, num_heads, dropout, bias, policy, "self_attention"
        )
        self.addnorm1 = AddNorm(dropout, name="addnorm1", dtype=policy)
        self.cross_attention = self.make_attention(
            num_hiddens, num_heads, dropout, bias, policy, "cross_attention"
        )
        self.addnorm2 = AddNorm(dropout, name="addnorm2", dtype=policy)
        self.ffn = PositionWiseFFN(
            ffn_num_hiddens, num_hiddens, name="ffn", dtype=policy
        )
        self.addnorm3 = AddNorm(dropout, name="addnorm3", dtype=policy)

    def build(
        self,
        X_shape,
        enc_outputs_shape,
        enc_valid_lens_shape=None,
        cache_shape=None,
    ):
        self.self_attention.build(X_shape, X_shape)
        self.addnorm1.build(X_shape)
        self.cross_attention.build(X_shape, enc_outputs_shape)
        self.addnorm2.build(X_shape)
        self.ffn.build(X_shape)
        self.addnorm3.build(X_shape)

    def call(
        self, X, enc_outputs, enc_valid_lens=None, cache=None, training=None
    ):
        # TODO(l20): X (B, T, D) -> (B, T, D) out and (B, T0 + T, D) kv, the
        #   decoder block of the module docstring. kv = X without a cache,
        #   else the cached (B, T0, D) inputs followed by X along time.
        #   Y = AddNorm(X, MHA(X, kv, kv)) (self.self_attention,
        #   self.addnorm1) with the causal mask of T queries over T0 + T
        #   keys (causal_mask); Z = AddNorm(Y, MHA(Y, enc, enc))
        #   (self.cross_attention, self.addnorm2) with the padding mask of
        #   enc_valid_lens over the S encoder positions (none without
        #   lengths); out = AddNorm(Z, FFN(Z)) (self.ffn, self.addnorm3).
        #   Sizes are known only at run time; the attentions take (query,
        #   value) positionally, attention_mask and training by keyword;
        #   the AddNorms take training. Return (out, kv).
        #   Our solution is about 12 lines.
        #   中文：掩蔽自注意力（键和值含缓存）、编码器-解码器注意力、前馈网络，
        #   三个 AddNorm。
        raise NotImplementedError("l20: TransformerDecoderBlock.call")

    def get_config(self):
        return {
            **super().get_config(),
            "num_hiddens": self.num_hiddens,
            "ffn_num_hiddens": self.ffn_num_hiddens,
            "num_heads": self.num_heads,
            "dropout": self.dropout,
            "bias": self.bias,
        }


class TransformerDecoder(keras.layers.Layer):
    """`TransformerEmbedding` (positions from the cache's length),
    `num_blks` decoder blocks, and a dense layer to the vocabulary.

    Args:
        vocab_size: int, the target vocabulary size V.
        num_hiddens: int, D (even, divisible by num_heads).
        ffn_num_hiddens: int, F.
        num_heads: int, H.
        num_blks: int, the number of decoder blocks.
        dropout: float in [0, 1).
        bias: bool, biases in the attention projections.

    Call arguments:
        tokens: `(B, T)` integer target ids (training: <bos> + the target
            shifted right; prediction: the newest token, T = 1).
        enc_outputs: `(B, S, D)`.
        enc_valid_lens: None or `(B,)`, the source lengths.
        cache: None, or the list returned by the previous call (one
            `(B, T0, D)` tensor per block).
        training: bool.

    Returns:
        `(logits, cache)`: `logits (B, T, V)` and the list of `num_blks`
        `(B, T0 + T, D)` tensors to pass at the next step.
    """

    def __init__(
        self,
        vocab_size: int,
        num_hiddens: int,
        ffn_num_hiddens: int,
        num_heads: int,
        num_blks: int,
        dropout: float = 0.0,
        bias: bool = False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        _check_positive(
            vocab_size=vocab_size,
            num_hiddens=num_hiddens,
            ffn_num_hiddens=ffn_num_hiddens,
            num_heads=num_heads,
            num_blks=num_blks,
        )
        _check_model_size(num_hiddens, num_heads)
        _check_dropout(dropout)
        self.vocab_size = int(vocab_size)
        self.num_hiddens = int(num_hiddens)
        self.ffn_num_hiddens = int(ffn_num_hiddens)
        self.num_heads = int(num_heads)
        self.num_blks = int(num_blks)
        self.dropout = dropout
        self.bias = bool(bias)
        policy = self.dtype_policy
        self.embedding = TransformerEmbedding(
            vocab_size, num_hiddens, dropout, name="embedding", dtype=policy
        )
        self.blks = [
            TransformerDecoderBlock(
                num_hiddens,
                ffn_num_hiddens,
                num_heads,
                dropout,
                bias,
                name=f"block{i}",
                dtype=policy,
            )
            for i in range(num_blks)
        ]
        self.dense = keras.layers.Dense(vocab_size, name="dense", dtype=policy)

    def build(
        self,
        tokens_shape,
        enc_outputs_shape,
        enc_valid_lens_shape=None,
        cache_shape=None,
    ):
        self.embedding.build(tokens_shape)
        shape = (*tokens_shape, self.num_hiddens)
        for blk in self.blks:
            blk.build(shape, enc_outputs_shape)
        self.dense.build(shape)

    def call(
        self,
        tokens,
        enc_outputs,
        enc_valid_lens=None,
        cache=None,
        training=None,
    ):
        # TODO(l20): tokens (B, T) -> (B, T, V) logits and the new cache, a
        #   list of num_blks (B, T0 + T, D). The new tokens sit at positions
        #   T0 .. T0 + T - 1, T0 = the number of cached steps (0 without a
        #   cache; the time size of cache[0] otherwise). X = self.embedding
        #   of the tokens from position T0, with training;
        #   then block i of self.blks on X with enc_outputs, enc_valid_lens
        #   and its own cache (cache[i], or None) and training, collecting
        #   the kv each returns, in order. The logits are self.dense of the
        #   last block's output. Our solution is about 8 lines.
        #   中文：嵌入的位置从已缓存的步数开始；每个块用自己的缓存。
        raise NotImplementedError("l20: TransformerDecoder.call")

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "num_hiddens": self.num_hiddens,
            "ffn_num_hiddens": self.ffn_num_hiddens,
            "num_heads": self.num_heads,
            "num_blks": self.num_blks,
            "dropout": self.dropout,
            "bias": self.bias,
        }


class Transformer(keras.Model):
    """The encoder-decoder Transformer, for `fit` with teacher forcing.

    Args:
        src_vocab_size: int, the source vocabulary size.
        tgt_vocab_size: int, the target vocabulary size V.
        num_hiddens: int, D.
        ffn_num_hiddens: int, F.
        num_heads: int, H.
        num_blks: int, blocks in the encoder and in the decoder.
        dropout: float in [0, 1).
        bias: bool, biases in the attention projections.

    Call arguments:
        inputs: `(src (B, S) int, src_valid_len (B,) int, dec_input (B, T)
            int)`; dec_input is <bos> + the target without its last token.
        training: bool.

    Returns:
        `(B, T, V)` logits.
    """

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        num_hiddens: int = 32,
        ffn_num_hiddens: int = 64,
        num_heads: int = 4,
        num_blks: int = 2,
        dropout: float = 0.1,
        bias: bool = False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.src_vocab_size = int(src_vocab_size)
        self.tgt_vocab_size = int(tgt_vocab_size)
        self.num_hiddens = int(num_hiddens)
        self.ffn_num_hiddens = int(ffn_num_hiddens)
        self.num_heads = int(num_heads)
        self.num_blks = int(num_blks)
        self.dropout = dropout
        self.bias = bool(bias)
        sizes = (num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout)
        self.encoder = TransformerEncoder(
            src_vocab_size,
            *sizes,
            bias=bias,
            name="encoder",
            dtype=self.dtype_policy,
        )
        self.decoder = TransformerDecoder(
            tgt_vocab_size,
            *sizes,
            bias=bias,
            name="decoder",
            dtype=self.dtype_policy,
        )

    def build(self, inputs_shape):
        # Built part by part, as the blocks are: without a build of its own,
        # Keras would first trace the whole model on symbolic inputs.
        src_shape, valid_shape, dec_shape = inputs_shape
        self.encoder.build(src_shape, valid_shape)
        enc_shape = (*src_shape, self.num_hiddens)
        self.decoder.build(dec_shape, enc_shape, valid_shape)

    def call(self, inputs, training=None):
        src, src_valid_len, dec_input = inputs
        enc_outputs = self.encoder(src, src_valid_len, training=training)
        logits, _ = self.decoder(
            dec_input, enc_outputs, src_valid_len, training=training
        )
        return logits

    def get_config(self):
        return {
            **super().get_config(),
            "src_vocab_size": self.src_vocab_size,
            "tgt_vocab_size": self.tgt_vocab_size,
            "num_hiddens": self.num_hiddens,
            "ffn_num_hiddens": self.ffn_num_hiddens,
            "num_heads": self.num_heads,
            "num_blks": self.num_blks,
            "dropout": self.dropout,
            "bias": self.bias,
        }


def greedy_decode(
    model: Transformer,
    src,
    src_valid_len,
    bos_id: int,
    eos_id: int,
    num_steps: int,
):
    """Greedy decoding with the decoder's cache (eager; one token a step).

    Args:
        model: a `Transformer`.
        src: `(B, S)` int source tokens.
        src_valid_len: `(B,)` int source lengths.
        bos_id: int, the <bos> token that starts every target.
        eos_id: int, the <eos> token that ends one.
        num_steps: int, the most tokens to generate.

    Returns:
        `(tokens, lengths)`: `tokens (B, num_steps)` int32 NumPy, the argmax
        token of each step, `eos_id` from each sequence's first <eos> on;
        `lengths (B,)` int32, the number of tokens before that <eos>
        (num_steps if none came). Stops early once every sequence has ended.
    """
    _check_positive(num_steps=num_steps)
    # TODO(l20): src (B, S), src_valid_len (B,) -> (B, num_steps) int32
    #   tokens, (B,) int32 lengths, both NumPy, as the docstring above
    #   states. Encode once; every call in inference mode
    #   (training=False). Step 1 feeds a (B, 1) int32 column of bos_id and
    #   no cache; each step feeds the previous step's tokens, (B, 1), and
    #   the cache model.decoder returned. The token of a step is the most
    #   probable one at the last position (the highest logit; ties to the
    #   lowest id); a sequence that already produced eos_id keeps emitting
    #   eos_id. Stop once every sequence is done; steps never run hold
    #   eos_id. lengths[b] = the tokens before the first eos_id of row b
    #   (num_steps if none). Our solution is about 16 lines.
    #   中文：编码一次，逐个词元解码并带上缓存；已完成的序列一直输出 <eos>，
    #   长度是第一个 <eos> 的下标。
    raise NotImplementedError("l20: greedy_decode")
