"""The pairs we time: a model built on our solution layers, and the same
model built on Keras's (or keras-hub's) layers, at the same size, with the
same inputs, loss and optimizer.

Each builder returns `(ours, theirs)`, two `timing.Side`s, or raises
`Unavailable` when a solution module or keras-hub is not installed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import keras
import numpy as np
import tensorflow as tf

from benchmarks.timing import Side
from benchmarks.timing import count_flops
from benchmarks.timing import param_count
from benchmarks.timing import train_step


class Unavailable(Exception):
    """A side cannot be built here (a missing module or package)."""


def solution(module: str):
    """Import `solutions.<module>`, or say it is not there yet."""
    try:
        return importlib.import_module(f"solutions.{module}")
    except ImportError as error:
        raise Unavailable(f"solutions.{module}: {error}") from error


def keras_hub():
    try:
        return importlib.import_module("keras_hub")
    except ImportError as error:
        raise Unavailable(
            "keras-hub is not installed (pip install -e '.[bench]')"
        ) from error


@dataclass
class Case:
    """A comparison at one size.

    Attributes:
        name: short id, e.g. "gru_lm/d2l".
        what: one line saying what is compared.
        size: the sizes, for the report.
        build: `(size) -> (ours, theirs)`.
    """

    name: str
    what: str
    size: dict
    build: Callable[[dict], tuple[Side, Side]]


# Shared pieces ----------------------------------------------------------


def mean_cross_entropy(labels, logits):
    """Mean token (or image) cross-entropy from logits."""
    return tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
    )


def mean_squared_error(targets, outputs):
    return tf.reduce_mean(tf.square(outputs - targets))


def side(
    label: str,
    model,
    inputs: tuple,
    targets,
    loss_fn: Callable,
    units: int,
    flops: bool,
) -> Side:
    """A compiled step of `model` with Adam, and what to report about it."""
    keras.utils.set_random_seed(0)
    step = train_step(
        model, inputs, targets, loss_fn, keras.optimizers.Adam(1e-3)
    )
    return Side(
        label=label,
        step=step,
        units=units,
        params=param_count(model),
        flops=count_flops(step) if flops else None,
    )


def padding_mask(valid_lens, steps: int):
    """`(B,)` valid lengths -> `(B, S)` booleans, True where a key counts."""
    return tf.range(steps)[None, :] < tf.cast(valid_lens, "int32")[:, None]


def valid_lengths(batch: int, steps: int, seed: int = 0) -> np.ndarray:
    """Lengths in [1, steps], about a quarter of the keys padding."""
    rng = np.random.default_rng(seed)
    return rng.integers(max(1, steps // 2), steps + 1, batch).astype("int32")


# Recurrent language models (d2l 9.5-10.2: one-hot -> RNN -> Dense) -----


class OneHot(keras.layers.Layer):
    """Token ids `(B, T)` -> one-hot `(B, T, V)`, as d2l feeds its RNNs."""

    def __init__(self, vocab: int, **kwargs):
        super().__init__(**kwargs)
        self.vocab = vocab

    def call(self, tokens):
        return tf.one_hot(tf.cast(tokens, "int32"), self.vocab)


def language_model(rnn: keras.layers.Layer, vocab: int) -> keras.Model:
    return keras.Sequential([OneHot(vocab), rnn, keras.layers.Dense(vocab)])


def rnn_lm_pair(
    cell_name: str, fused: bool = False
) -> Callable[[dict], tuple[Side, Side]]:
    """Our cell in `keras.layers.RNN` (or, `fused`, in fused_rnn.Fused:
    the same cell's weights, BPTT written out) vs Keras's layer."""

    def build(size: dict) -> tuple[Side, Side]:
        batch, steps = size["batch"], size["steps"]
        vocab, units = size["vocab"], size["hidden"]
        unroll = size.get("unroll", False)
        rng = np.random.default_rng(0)
        tokens = rng.integers(0, vocab, (batch, steps)).astype("int32")
        labels = rng.integers(0, vocab, (batch, steps)).astype("int32")
        if cell_name == "gru":
            cell = solution("l10_gru").GRUCell(units)
            builtin = keras.layers.GRU(
                units, reset_after=False, return_sequences=True, unroll=unroll
            )
            keras_label = "keras.layers.GRU(reset_after=False)"
        else:
            cell = solution("l11_lstm").LSTMCell(units)
            builtin = keras.layers.LSTM(
                units, return_sequences=True, unroll=unroll
            )
            keras_label = "keras.layers.LSTM"
        if fused:
            from benchmarks.fused_rnn import Fused

            ours, wrapper = Fused(cell), "Fused"
        else:
            ours = keras.layers.RNN(cell, return_sequences=True, unroll=unroll)
            wrapper = "RNN"
        suffix = ", unroll=True" if unroll else ""
        args = ((tokens,), labels, mean_cross_entropy, batch * steps, False)
        return (
            side(
                f"{wrapper}({type(cell).__name__}{suffix})",
                language_model(ours, vocab),
                *args,
            ),
            side(keras_label + suffix, language_model(builtin, vocab), *args),
        )

    return build


# Multi-head self-attention with a padding mask ---------------------------


class OurSelfAttention(keras.layers.Layer):
    def __init__(self, d_model: int, heads: int, **kwargs):
        super().__init__(**kwargs)
        module = solution("l18_multihead_attention")
        self.attention = module.MultiHeadAttention(d_model, heads)

    def call(self, x, valid_lens, training=None):
        return self.attention(x, x, x, valid_lens, training=training)


class KerasSelfAttention(keras.layers.Layer):
    def __init__(self, d_model: int, heads: int, **kwargs):
        super().__init__(**kwargs)
        self.attention = keras.layers.MultiHeadAttention(
            heads, d_model // heads, use_bias=False
        )

    def call(self, x, valid_lens, training=None):
        keep = padding_mask(valid_lens, tf.shape(x)[1])  # (B, S)
        mask = tf.broadcast_to(  # (B, T, S): the form Keras documents
            keep[:, None, :], [tf.shape(x)[0], tf.shape(x)[1], tf.shape(x)[1]]
        )
        return self.attention(x, x, x, attention_mask=mask, training=training)


def attention_pair(size: dict) -> tuple[Side, Side]:
    batch, steps, d = size["batch"], size["steps"], size["d_model"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, steps, d)).astype("float32")
    y = rng.standard_normal((batch, steps, d)).astype("float32")
    lens = valid_lengths(batch, steps)
    args = ((x, lens), y, mean_squared_error, batch * steps, True)
    heads = size["heads"]
    return (
        side("MultiHeadAttention", OurSelfAttention(d, heads), *args),
        side(
            "keras.layers.MultiHeadAttention",
            KerasSelfAttention(d, heads),
            *args,
        ),
    )


# Transformer: one encoder block, the encoder, the encoder-decoder ------


class KerasEncoderBlock(keras.layers.Layer):
    """d2l's post-norm encoder block from Keras layers: MultiHeadAttention,
    Dropout, LayerNormalization(epsilon=1e-5) and two Dense layers."""

    def __init__(self, d: int, ffn: int, heads: int, dropout: float, **kw):
        super().__init__(**kw)
        self.attention = keras.layers.MultiHeadAttention(
            heads, d // heads, dropout=dropout, use_bias=False
        )
        self.dropout1 = keras.layers.Dropout(dropout)
        self.norm1 = keras.layers.LayerNormalization(epsilon=1e-5)
        self.dense1 = keras.layers.Dense(ffn, activation="relu")
        self.dense2 = keras.layers.Dense(d)
        self.dropout2 = keras.layers.Dropout(dropout)
        self.norm2 = keras.layers.LayerNormalization(epsilon=1e-5)

    def call(self, x, valid_lens, training=None):
        steps = tf.shape(x)[1]
        mask = padding_mask(valid_lens, steps)[:, None, :]  # (B, 1, S)
        mask = tf.broadcast_to(mask, [tf.shape(x)[0], steps, steps])
        y = self.attention(x, x, attention_mask=mask, training=training)
        y = self.norm1(x + self.dropout1(y, training=training))
        z = self.dense2(self.dense1(y))
        return self.norm2(y + self.dropout2(z, training=training))


class HubEmbedding(keras.layers.Layer):
    """Embedding x sqrt(D) + keras-hub's sinusoidal positions + dropout:
    our encoder's and decoder's front end, from keras-hub layers."""

    def __init__(self, vocab: int, d: int, dropout: float, **kw):
        super().__init__(**kw)
        self.scale = float(np.sqrt(d))
        self.embedding = keras.layers.Embedding(vocab, d)
        self.positions = keras_hub().layers.SinePositionEncoding()
        self.dropout = keras.layers.Dropout(dropout)

    def call(self, tokens, training=None):
        x = self.embedding(tokens) * self.scale
        return self.dropout(x + self.positions(x), training=training)


def _hub_blocks(kind: str, size: dict) -> list:
    layer = getattr(keras_hub().layers, kind)
    return [
        layer(
            size["ffn"],
            size["heads"],
            dropout=size["dropout"],
            layer_norm_epsilon=1e-5,
        )
        for _ in range(size["blocks"])
    ]


class HubEncoder(keras.layers.Layer):
    """keras-hub's TransformerEncoder stack, with our front end."""

    def __init__(self, size: dict, **kw):
        super().__init__(**kw)
        d = size["d_model"]
        self.embed = HubEmbedding(size["src_vocab"], d, size["dropout"])
        self.blocks = _hub_blocks("TransformerEncoder", size)

    def call(self, tokens, valid_lens, training=None):
        x = self.embed(tokens, training=training)
        mask = padding_mask(valid_lens, tf.shape(tokens)[1])  # (B, S)
        for block in self.blocks:
            x = block(x, padding_mask=mask, training=training)
        return x


class HubTransformer(keras.Model):
    """keras-hub's TransformerEncoder and TransformerDecoder stacks in
    d2l's encoder-decoder: our Transformer's inputs and outputs."""

    def __init__(self, size: dict, **kw):
        super().__init__(**kw)
        d = size["d_model"]
        self.encoder = HubEncoder(size)
        self.embed = HubEmbedding(size["tgt_vocab"], d, size["dropout"])
        self.blocks = _hub_blocks("TransformerDecoder", size)
        self.dense = keras.layers.Dense(size["tgt_vocab"])

    def call(self, src, src_valid_len, dec_input, training=None):
        enc = self.encoder(src, src_valid_len, training=training)
        mask = padding_mask(src_valid_len, tf.shape(src)[1])  # (B, S)
        x = self.embed(dec_input, training=training)
        for block in self.blocks:
            x = block(
                x,
                enc,
                encoder_padding_mask=mask,
                use_causal_mask=True,
                training=training,
            )
        return self.dense(x)


class OurTransformer(keras.layers.Layer):
    """`l20_transformer.Transformer` with its inputs as three arguments."""

    def __init__(self, size: dict, **kw):
        super().__init__(**kw)
        self.net = solution("l20_transformer").Transformer(
            size["src_vocab"],
            size["tgt_vocab"],
            size["d_model"],
            size["ffn"],
            size["heads"],
            size["blocks"],
            size["dropout"],
        )

    def call(self, src, src_valid_len, dec_input, training=None):
        return self.net((src, src_valid_len, dec_input), training=training)


def _tokens(size: dict, vocab_key: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    shape = (size["batch"], size["steps"])
    return rng.integers(3, size[vocab_key], shape).astype("int32")


def encoder_block_pair(size: dict) -> tuple[Side, Side]:
    batch, steps, d = size["batch"], size["steps"], size["d_model"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, steps, d)).astype("float32")
    y = rng.standard_normal((batch, steps, d)).astype("float32")
    lens = valid_lengths(batch, steps)
    sizes = (d, size["ffn"], size["heads"], size["dropout"])
    ours = solution("l20_transformer").TransformerEncoderBlock(*sizes)
    args = ((x, lens), y, mean_squared_error, batch * steps, True)
    return (
        side("TransformerEncoderBlock", ours, *args),
        side("block of Keras layers", KerasEncoderBlock(*sizes), *args),
    )


def encoder_pair(size: dict) -> tuple[Side, Side]:
    batch, steps, d = size["batch"], size["steps"], size["d_model"]
    tokens = _tokens(size, "src_vocab", 0)
    lens = valid_lengths(batch, steps)
    y = np.random.default_rng(1).standard_normal((batch, steps, d))
    ours = solution("l20_transformer").TransformerEncoder(
        size["src_vocab"],
        d,
        size["ffn"],
        size["heads"],
        size["blocks"],
        size["dropout"],
    )
    theirs = HubEncoder(size)
    args = ((tokens, lens), y.astype("float32"), mean_squared_error)
    return (
        side("TransformerEncoder", ours, *args, batch * steps, True),
        side(
            "keras_hub TransformerEncoder x2",
            theirs,
            *args,
            batch * steps,
            True,
        ),
    )


def transformer_pair(size: dict) -> tuple[Side, Side]:
    batch, steps = size["batch"], size["steps"]
    src = _tokens(size, "src_vocab", 0)
    dec_input = _tokens(size, "tgt_vocab", 1)
    labels = _tokens(size, "tgt_vocab", 2)
    lens = valid_lengths(batch, steps)
    ours = OurTransformer(size)
    theirs = HubTransformer(size)
    args = ((src, lens, dec_input), labels, mean_cross_entropy)
    return (
        side("Transformer", ours, *args, batch * steps, True),
        side("keras_hub encoder-decoder", theirs, *args, batch * steps, True),
    )


def keras_resnet18(shape: tuple, classes: int, widths: tuple) -> keras.Model:
    """d2l's ResNet-18 as a functional model of Keras layers."""
    layers = keras.layers

    def residual(x, channels: int, strides: int, project: bool):
        y = layers.Conv2D(channels, 3, strides=strides, padding="same")(x)
        y = layers.ReLU()(layers.BatchNormalization()(y))
        y = layers.Conv2D(channels, 3, padding="same")(y)
        y = layers.BatchNormalization()(y)
        if project:
            x = layers.Conv2D(channels, 1, strides=strides)(x)
        return layers.ReLU()(layers.Add()([y, x]))

    inputs = keras.Input(shape)
    x = layers.Conv2D(widths[0], 7, strides=2, padding="same")(inputs)
    x = layers.ReLU()(layers.BatchNormalization()(x))
    x = layers.MaxPooling2D(3, strides=2, padding="same")(x)
    for stage, channels in enumerate(widths):
        first = stage > 0  # stages after the first halve the size
        x = residual(x, channels, 2 if first else 1, first)
        x = residual(x, channels, 1, False)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, layers.Dense(classes)(x))


def resnet_pair(size: dict) -> tuple[Side, Side]:
    batch, pixels = size["batch"], size["pixels"]
    shape = (pixels, pixels, size["channels"])
    widths = tuple(size["widths"])
    rng = np.random.default_rng(0)
    images = rng.standard_normal((batch, *shape)).astype("float32")
    labels = rng.integers(0, 10, batch).astype("int32")
    ours = solution("l03_inception_resnet").resnet18(10, widths)
    ours.build((None, *shape))
    args = ((images,), labels, mean_cross_entropy, batch, True)
    return (
        side("resnet18()", ours, *args),
        side(
            "ResNet-18 of Keras layers",
            keras_resnet18(shape, 10, widths),
            *args,
        ),
    )


# The cases, at the lesson sizes and one larger size ----------------------

D2L_LM = {"vocab": 28, "steps": 35, "batch": 32, "hidden": 256}
LARGE_LM = {"vocab": 28, "steps": 35, "batch": 128, "hidden": 512}
TINY_LM = {"vocab": 7, "steps": 4, "batch": 2, "hidden": 8}
MHA = {"batch": 64, "d_model": 256, "heads": 8}
TINY_MHA = {"batch": 2, "steps": 3, "d_model": 8, "heads": 2}
# d2l trains ResNet-18 on Fashion-MNIST resized to 96x96 (batch 256; 32
# here so that a timing takes seconds, not minutes), and the seed's table
# uses 224x224.
D2L_RESNET = {"batch": 32, "pixels": 96, "channels": 1}
D2L_RESNET["widths"] = [64, 128, 256, 512]
LARGE_RESNET = {**D2L_RESNET, "batch": 16, "pixels": 224}
TINY_RESNET = {"batch": 2, "pixels": 16, "channels": 1, "widths": [4, 4, 8, 8]}
# d2l's fra-eng Transformer (vocabularies about toy_fra_eng's).
FRA_ENG = {
    "batch": 128,
    "steps": 10,
    "d_model": 32,
    "ffn": 64,
    "heads": 4,
    "blocks": 2,
    "dropout": 0.1,
    "src_vocab": 200,
    "tgt_vocab": 300,
}
LARGE_TRANSFORMER = {
    **FRA_ENG,
    "batch": 32,
    "steps": 64,
    "d_model": 256,
    "ffn": 1024,
    "heads": 8,
    "src_vocab": 4000,
    "tgt_vocab": 4000,
}
TINY_TRANSFORMER = {
    **FRA_ENG,
    "batch": 2,
    "steps": 3,
    "d_model": 8,
    "ffn": 16,
    "heads": 2,
    "blocks": 1,
    "src_vocab": 11,
    "tgt_vocab": 13,
}


def cases(smoke: bool = False) -> list[Case]:
    """Every comparison, or the same ones at tiny sizes (`smoke`)."""
    lm = [("d2l", D2L_LM), ("large", LARGE_LM)]
    mha = [("seq10", {**MHA, "steps": 10}), ("seq128", {**MHA, "steps": 128})]
    transformer = [("fra_eng", FRA_ENG), ("large", LARGE_TRANSFORMER)]
    resnet = [("d2l96", D2L_RESNET), ("large224", LARGE_RESNET)]
    if smoke:
        resnet = [("tiny", TINY_RESNET)]
        lm, mha = [("tiny", TINY_LM)], [("tiny", TINY_MHA)]
        transformer = [("tiny", TINY_TRANSFORMER)]
    out = []
    for tag, size in lm:
        out.append(
            Case(
                f"gru_lm/{tag}",
                "GRU language model: RNN(GRUCell) vs GRU(reset_after=False)",
                size,
                rnn_lm_pair("gru"),
            )
        )
        out.append(
            Case(
                f"lstm_lm/{tag}",
                "LSTM language model: RNN(LSTMCell) vs LSTM",
                size,
                rnn_lm_pair("lstm"),
            )
        )
        for cell, keras_name in (("gru", "GRU"), ("lstm", "LSTM")):
            out.append(
                Case(
                    f"{cell}_fused/{tag}",
                    f"{keras_name} language model, BPTT by hand "
                    f"(fused_rnn.py) vs keras.layers.{keras_name}",
                    size,
                    rnn_lm_pair(cell, fused=True),
                )
            )
    for tag, size in mha:
        out.append(
            Case(
                f"mha/{tag}",
                "self-attention with a padding mask: ours vs Keras MHA",
                size,
                attention_pair,
            )
        )
    for tag, size in transformer:
        out.append(
            Case(
                f"encoder_block/{tag}",
                "post-norm encoder block: ours vs the same of Keras layers",
                size,
                encoder_block_pair,
            )
        )
        out.append(
            Case(
                f"encoder/{tag}",
                "embedding + 2 encoder blocks: ours vs keras-hub's",
                size,
                encoder_pair,
            )
        )
        out.append(
            Case(
                f"transformer/{tag}",
                "encoder-decoder: ours vs keras-hub's encoder and decoder",
                size,
                transformer_pair,
            )
        )
    for tag, size in resnet:
        out.append(
            Case(
                f"resnet18/{tag}",
                "ResNet-18: resnet18() vs the same of Keras layers",
                size,
                resnet_pair,
            )
        )
    return out
