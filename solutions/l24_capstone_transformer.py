"""Lesson 24, capstone B: your Transformer (Transformer), assembled from
your own parts and trained to translate.

Nothing here is new mathematics: lesson 20's encoder-decoder is put
together from the layers you wrote in earlier lessons, and trained on the
embedded English-French corpus. The grader first runs each part's own
grader on your files; a part that fails it is named ("your l18
MultiHeadAttention fails its own grader: fix l18 first") and nothing is
trained on it.

    part         lesson  what it gives
    text         l06     Vocab (the vocabularies, min_freq 2)
    nmt          l13     build_array_nmt (ids, <eos>, padding to num_steps)
    seq2seq      l14     beam_search (length penalty alpha = 0.75)
    attention    l18     MultiHeadAttention (with its masked softmax)
    positional   l19     PositionalEncoding (sinusoidal, interleaved)
    transformer  l20     TransformerEncoderBlock, TransformerDecoderBlock
                         (with their PositionWiseFFN and AddNorm)

The model (D model size, S source and T target steps, V target words):

    encode:  X = PE(Embedding_src(src) * sqrt(D))                (B, S, D)
             X = EncoderBlock_i(X, src_valid_len), i = 1 .. n     (B, S, D)
    decode:  Y = PE(Embedding_tgt(dec_input) * sqrt(D))          (B, T, D)
             Y = DecoderBlock_i(Y, enc, src_valid_len), no cache  (B, T, D)
             logits = Dense(Y)                                    (B, T, V)

PE is lesson 19's layer (X + P[:T], then dropout). The decoder blocks run
without a cache: in prediction the whole prefix <bos> y_1 .. y_t is
decoded again at each step and the last position's logits are read, so
lesson 19's PE (which always starts at position 0) serves both training
and prediction; with T <= 10 the repeated work is small.

Lesson 20's blocks call their attention the way keras's MultiHeadAttention
is called, `attention(query, value, attention_mask=(B, T, S) bool)`.
`YourAttention` puts lesson 18's layer behind that call: every mask the
blocks make (padding and causal) is True on a prefix of the keys, so its
row sums are lesson 18's `valid_lens`, shape (B, T).

Translating is lesson 14's beam search over the decoder: the search's
state is the prefix of target ids so far, and one step decodes the prefix
plus the new token and returns the log-probabilities of the next one.

Reference: Vaswani et al. 2017; d2l 10.7 (11.7) and 9.8 (10.8).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from types import ModuleType
from typing import NamedTuple

import keras
import numpy as np
from keras import ops

RESERVED = ["<pad>", "<bos>", "<eos>"]

HYPERPARAMETERS = {
    "num_steps": 10,
    "num_hiddens": 32,
    "ffn_num_hiddens": 64,
    "num_heads": 4,
    "num_blks": 2,
    "dropout": 0.1,
    "lr": 0.005,
    "batch_size": 64,
    "epochs": 12,
    "beam_size": 2,
}
"""What the grader trains with (d2l's settings, fewer epochs)."""


class Parts(NamedTuple):
    """Your lesson modules the capstone is built from (see the module
    docstring's table)."""

    text: ModuleType
    nmt: ModuleType
    seq2seq: ModuleType
    attention: ModuleType
    positional: ModuleType
    transformer: ModuleType


def valid_lens_of(attention_mask, batch):
    """The valid lengths of a prefix mask.

    Args:
        attention_mask: `(B, T, S)` or `(1, T, S)` bool, True on a prefix
            of the keys of every query (padding and causal masks are).
        batch: B (an int or a scalar tensor).

    Returns:
        `(B, T)` int32: the number of keys each query may attend to.
    """
    lens = ops.sum(ops.cast(attention_mask, "int32"), axis=-1)  # (1|B, T)
    return ops.broadcast_to(lens, (batch, ops.shape(lens)[1]))


class YourAttention(keras.layers.Layer):
    """Lesson 18's `MultiHeadAttention` called as lesson 20's blocks call
    keras's.

    Args:
        attention_class: your lesson-18 `MultiHeadAttention`.
        num_hiddens: int, D.
        num_heads: int, H.
        dropout: float in [0, 1), on the attention weights.
        bias: bool, biases in the projections.

    Call arguments:
        query: `(B, T, D)`.
        value: `(B, S, D)` (also the keys).
        attention_mask: None or `(B, T, S)` / `(1, T, S)` bool prefix mask.
        training: bool.

    Returns:
        `(B, T, D)`. With `keep_weights` set, `kept` holds the last
        call's `(B, H, T, S)` weights (for the attention maps).
    """

    def __init__(
        self,
        attention_class: type,
        num_hiddens: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.inner = attention_class(
            num_hiddens,
            num_heads,
            dropout,
            bias,
            name="multihead",
            dtype=self.dtype_policy,
        )
        self.keep_weights = False
        self.kept = None

    def build(self, query_shape, value_shape):
        self.inner.build(query_shape, value_shape, value_shape)

    def call(self, query, value, attention_mask=None, training=None):
        valid_lens = None
        if attention_mask is not None:
            valid_lens = valid_lens_of(attention_mask, ops.shape(query)[0])
        output, weights = self.inner(
            query,
            value,
            value,
            valid_lens,
            training=training,
            return_attention_weights=True,
        )
        if self.keep_weights:
            self.kept = weights
        return output


def your_attention(attention_class: type) -> Callable:
    """The `attention` argument of lesson 20's blocks that builds
    `YourAttention` around `attention_class`."""

    def make(num_hiddens, num_heads, dropout, bias, dtype, name):
        return YourAttention(
            attention_class,
            num_hiddens,
            num_heads,
            dropout,
            bias,
            dtype=dtype,
            name=name,
        )

    return make


def embedding_initializer(num_hiddens: int) -> keras.initializers.Initializer:
    """N(0, 1/D): the Transformer's embeddings, drawn so that scaled by
    sqrt(D) each entry has a standard deviation of 1, about the size of the
    positional encoding added to them (its entries, sines and cosines, have
    a root mean square of sqrt(1/2) = 0.71). Keras's default, uniform in
    [-0.05, 0.05], would leave the scaled embeddings at 0.16 for D = 32,
    under a quarter of the encoding's size."""
    return keras.initializers.RandomNormal(stddev=num_hiddens**-0.5)


class CapstoneTransformer(keras.Model):
    """The encoder-decoder of the module docstring, from your parts.

    Args:
        parts: your lesson modules (`Parts`).
        src_vocab_size: int, the source vocabulary size.
        tgt_vocab_size: int, the target vocabulary size V.
        num_hiddens: int, D (even, divisible by num_heads).
        ffn_num_hiddens: int, F.
        num_heads: int, H.
        num_blks: int, blocks in the encoder and in the decoder.
        dropout: float in [0, 1).
        max_len: int, the longest sequence the positional encodings take.

    Call arguments:
        inputs: `(src (B, S) int, src_valid_len (B,) int, dec_input (B, T)
            int)`; dec_input is <bos> + the target without its last token.
        training: bool.

    Returns:
        `(B, T, V)` logits.
    """

    def __init__(
        self,
        parts: Parts,
        src_vocab_size: int,
        tgt_vocab_size: int,
        num_hiddens: int = 32,
        ffn_num_hiddens: int = 64,
        num_heads: int = 4,
        num_blks: int = 2,
        dropout: float = 0.1,
        max_len: int = 64,
        **kwargs,
    ):
        super().__init__(**kwargs)
        for name, value in (
            ("src_vocab_size", src_vocab_size),
            ("tgt_vocab_size", tgt_vocab_size),
            ("num_blks", num_blks),
        ):
            if int(value) != value or value <= 0:
                raise ValueError(
                    f"`{name}` must be a positive int, got {value!r}"
                )
        self.num_hiddens = int(num_hiddens)
        attention = your_attention(parts.attention.MultiHeadAttention)
        sizes = (num_hiddens, ffn_num_hiddens, num_heads, dropout)
        self.src_embedding = keras.layers.Embedding(
            src_vocab_size,
            num_hiddens,
            embeddings_initializer=embedding_initializer(num_hiddens),
            name="src_embedding",
        )
        self.src_positions = parts.positional.PositionalEncoding(
            num_hiddens, dropout, max_len, name="src_positions"
        )
        self.encoder_blks = [
            parts.transformer.TransformerEncoderBlock(
                *sizes, attention=attention, name=f"encoder_block{i}"
            )
            for i in range(num_blks)
        ]
        self.tgt_embedding = keras.layers.Embedding(
            tgt_vocab_size,
            num_hiddens,
            embeddings_initializer=embedding_initializer(num_hiddens),
            name="tgt_embedding",
        )
        self.tgt_positions = parts.positional.PositionalEncoding(
            num_hiddens, dropout, max_len, name="tgt_positions"
        )
        self.decoder_blks = [
            parts.transformer.TransformerDecoderBlock(
                *sizes, attention=attention, name=f"decoder_block{i}"
            )
            for i in range(num_blks)
        ]
        self.dense = keras.layers.Dense(tgt_vocab_size, name="dense")

    def build(self, inputs_shape):
        src_shape, _, dec_shape = inputs_shape
        D = self.num_hiddens
        source, target = (*src_shape, D), (*dec_shape, D)
        # Sublayer by sublayer, eagerly: lesson 19 computes its table P in
        # `build`, which must not run inside a traced graph. (A direct
        # call of encode or decode may have built some already.)
        todo = [
            (self.src_embedding, (src_shape,)),
            (self.src_positions, (source,)),
            *((blk, (source,)) for blk in self.encoder_blks),
            (self.tgt_embedding, (dec_shape,)),
            (self.tgt_positions, (target,)),
            *((blk, (target, source)) for blk in self.decoder_blks),
            (self.dense, (target,)),
        ]
        for layer, shapes in todo:
            if not layer.built:
                layer.build(*shapes)

    def encode(self, src, src_valid_len, training=None):
        """`src (B, S)`, `src_valid_len (B,)` -> `(B, S, D)`."""
        # TODO(l24): src (B, S) ids -> (B, S, D), the module docstring's
        #   encode. Each source word's embedding is scaled by √D (a scalar
        #   in the embeddings' dtype), which brings it to the size of the
        #   positional encoding added next (embedding_initializer says why);
        #   lesson 19's layer adds the positions, without which
        #   self-attention cannot tell word order. Then the encoder's blocks
        #   run one after the other, each on the previous one's output, and
        #   each is told the source lengths, so that no block attends to
        #   padding. Our solution is about 5 lines.
        #   中文：源词嵌入乘以 √D，与随后加上的位置编码一样大；
        #   没有位置编码，自注意力分不出词序。编码器块依次作用，
        #   每块读前一块的输出，并知道源序列的有效长度，不关注填充。
        # BEGIN SOLUTION
        X = self.src_embedding(src)  # (B, S, D)
        X = X * ops.sqrt(ops.cast(self.num_hiddens, X.dtype))
        X = self.src_positions(X, training=training)
        for blk in self.encoder_blks:
            X = blk(X, src_valid_len, training=training)  # (B, S, D)
        return X
        # END SOLUTION

    def decode(self, dec_input, enc_outputs, src_valid_len, training=None):
        """`dec_input (B, T)`, `enc_outputs (B, S, D)`, `src_valid_len (B,)`
        -> `(B, T, V)` logits."""
        # TODO(l24): dec_input (B, T) ids -> (B, T, V) logits, the module
        #   docstring's decode. The target side starts as the source side
        #   does (embeddings scaled by √D, then the positions). The
        #   decoder's blocks run one after the other, each on the previous
        #   one's output, each also attending to enc_outputs within
        #   src_valid_len, with no cache (a block then returns a pair whose
        #   first element is its (B, T, D) result). The output layer maps
        #   the last block's result to scores over the target words. Our
        #   solution is about 6 lines.
        #   中文：目标序列的开头与源序列相同；解码器块依次作用，
        #   每块还关注有效长度以内的编码器输出，不用缓存；
        #   输出层把最后一块的结果变成目标词表上的评分。
        # BEGIN SOLUTION
        Y = self.tgt_embedding(dec_input)  # (B, T, D)
        Y = Y * ops.sqrt(ops.cast(self.num_hiddens, Y.dtype))
        Y = self.tgt_positions(Y, training=training)
        for blk in self.decoder_blks:
            Y, _ = blk(Y, enc_outputs, src_valid_len, training=training)
        return self.dense(Y)  # (B, T, V)
        # END SOLUTION

    def call(self, inputs, training=None):
        src, src_valid_len, dec_input = inputs
        enc_outputs = self.encode(src, src_valid_len, training=training)
        return self.decode(
            dec_input, enc_outputs, src_valid_len, training=training
        )

    def attention_maps(self, src, src_valid_len, dec_input) -> dict:
        """The weights of the last encoder block's self-attention and of
        the last decoder block's encoder-decoder attention, for one pair.

        Args:
            src: `(1, S)`; src_valid_len: `(1,)`; dec_input: `(1, T)`.

        Returns:
            `{"encoder self-attention": (H, S, S), "decoder-encoder
            attention": (H, T, S)}` NumPy arrays.
        """
        layers = {
            "encoder self-attention": self.encoder_blks[-1].attention,
            "decoder-encoder attention": self.decoder_blks[-1].cross_attention,
        }
        for layer in layers.values():
            layer.keep_weights = True
        try:
            self((src, src_valid_len, dec_input), training=False)
        finally:
            for layer in layers.values():
                layer.keep_weights = False
        return {
            title: ops.convert_to_numpy(layer.kept)[0]
            for title, layer in layers.items()
        }


_DECODERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""{model: its compiled inference decoder}."""


def inference_decoder(model: CapstoneTransformer) -> Callable:
    """`model.decode` in inference mode, compiled once per model for every
    shape: every later call (every `translate` of the same model) gets the
    same compiled function back instead of tracing the decoder again.

    Returns:
        `decode(dec_input (B, T) int32, enc_outputs (B, S, D),
        src_valid_len (B,) int32) -> (B, T, V)` logits. Run eagerly, one
        call dispatches some 350 TensorFlow ops one by one; a translation
        makes hundreds of calls.
    """
    import tensorflow as tf  # the graph compiler keras.ops does not wrap

    if model in _DECODERS:
        return _DECODERS[model]
    if not model.built:  # never inside the trace (lesson 19's table)
        model.build(((None, None), (None,), (None, None)))

    def decode(dec_input, enc_outputs, src_valid_len):
        return model.decode(
            dec_input, enc_outputs, src_valid_len, training=False
        )

    _DECODERS[model] = tf.function(
        decode,
        input_signature=[
            tf.TensorSpec((None, None), "int32"),
            tf.TensorSpec((None, None, model.num_hiddens), model.compute_dtype),
            tf.TensorSpec((None,), "int32"),
        ],
    )
    return _DECODERS[model]


def translate(
    model: CapstoneTransformer,
    beam_search: Callable,
    src,
    src_valid_len,
    bos_id: int,
    eos_id: int,
    max_len: int,
    beam_size: int = 2,
    alpha: float = 0.75,
) -> list[list[int]]:
    """Translate a batch of sources, one beam search each.

    Args:
        model: a trained `CapstoneTransformer`.
        beam_search: your lesson-14 `beam_search(step_fn, state, bos_id,
            eos_id, beam_size, max_len, alpha)`.
        src: `(B, S)` int source ids; src_valid_len: `(B,)` int.
        bos_id, eos_id: the target's '<bos>' and '<eos>' ids.
        max_len: int, at most this many target tokens.
        beam_size: int, k (1 is greedy search).
        alpha: float, the length-penalty exponent.

    Returns:
        B lists of target ids, without '<bos>' and '<eos>'.
    """
    src = np.asarray(src, dtype="int32")
    src_valid_len = np.asarray(src_valid_len, dtype="int32")
    enc_outputs = model.encode(src, src_valid_len, training=False)
    decode = inference_decoder(model)  # decode(ids, enc, lens) -> logits

    # TODO(l24): src (B, S) -> list[list[int]], B lists of target ids:
    #   lesson 14's beam_search once per sentence b, on the decoder of
    #   that sentence's encoding (enc_outputs[b:b+1], (1, S, D), and
    #   src_valid_len[b:b+1]). The search's state is the list of target
    #   ids fed so far (empty at the start); step_fn(token, prefix)
    #   decodes the (1, len + 1) int32 ids prefix + [token] with `decode`
    #   and returns the (V,) log-softmax of the last position's logits,
    #   as NumPy, and prefix + [token]. Our solution is about 12 lines.
    #   中文：每个句子各做一次束搜索，状态是已解码的前缀，
    #   每步重新解码整个前缀。
    # BEGIN SOLUTION
    def search(enc, lens):
        def step_fn(token, prefix):
            prefix = [*prefix, int(token)]
            ids = np.asarray([prefix], dtype="int32")  # (1, len + 1)
            logits = decode(ids, enc, lens)  # (1, len + 1, V)
            log_probs = ops.log_softmax(logits[0, -1])  # (V,)
            return ops.convert_to_numpy(log_probs), prefix

        return beam_search(
            step_fn, [], bos_id, eos_id, beam_size, max_len, alpha
        )

    return [
        search(enc_outputs[b : b + 1], src_valid_len[b : b + 1])
        for b in range(len(src))
    ]
    # END SOLUTION


# -- the data and the training (given) ------------------------------------


class Corpus(NamedTuple):
    """One side of the pairs: `tokens (N, num_steps)` int32 ids,
    `<eos>`-terminated and padded; `lengths (N,)` int32 (`<eos>` counted);
    `vocab`, your lesson-06 `Vocab`."""

    tokens: np.ndarray
    lengths: np.ndarray
    vocab: object


def corpus(parts: Parts, sentences: list[str], num_steps: int) -> Corpus:
    """Sentences -> their `Corpus`, with a vocabulary of their own (words
    split on spaces, min_freq 2, `<pad> <bos> <eos>` reserved)."""
    lines = [s.split(" ") for s in sentences]
    vocab = parts.text.Vocab(lines, min_freq=2, reserved_tokens=RESERVED)
    tokens, lengths = encode_sentences(parts, sentences, vocab, num_steps)
    return Corpus(tokens, lengths, vocab)


def encode_sentences(parts: Parts, sentences, vocab, num_steps: int):
    """Sentences -> `(N, num_steps)` ids and `(N,)` lengths (lesson 13)."""
    lines = [s.split(" ") for s in sentences]
    tokens, lengths = parts.nmt.build_array_nmt(lines, vocab, num_steps)
    return np.asarray(tokens, np.int32), np.asarray(lengths, np.int32)


def train(
    model: CapstoneTransformer,
    src: Corpus,
    tgt: Corpus,
    epochs: int,
    batch_size: int,
    lr: float,
) -> list[float]:
    """Teacher forcing with keras `fit`: the decoder reads `<bos>` + the
    target shifted right; cross-entropy over the valid target tokens
    (`<eos>` included), Adam with the gradient norm clipped at 1.

    Returns:
        The mean training loss of each epoch.
    """
    bos = tgt.vocab["<bos>"]
    start = np.full((len(tgt.tokens), 1), bos, np.int32)
    dec_input = np.concatenate([start, tgt.tokens[:, :-1]], axis=1)
    steps = tgt.tokens.shape[1]
    weights = (np.arange(steps)[None] < tgt.lengths[:, None]).astype("f4")
    inputs = (src.tokens, src.lengths, dec_input)
    model(tuple(x[:1] for x in inputs), training=False)  # built eagerly
    model.compile(
        optimizer=keras.optimizers.Adam(lr, clipnorm=1.0),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    history = model.fit(
        inputs,
        tgt.tokens,
        sample_weight=weights,
        batch_size=batch_size,
        epochs=epochs,
        shuffle=True,
        verbose=0,
    )
    return [float(x) for x in history.history["loss"]]


def run(
    parts: Parts,
    pairs: list[tuple[str, str]],
    sources: list[str],
    hp: dict | None = None,
) -> dict:
    """Build, train on `pairs`, translate `sources`: the whole capstone.

    Args:
        parts: your lesson modules.
        pairs: (English, French) training pairs, preprocessed.
        sources: English sentences to translate (held out).
        hp: the settings (`HYPERPARAMETERS` by default).

    Returns:
        `{"translations": [str, ...], "losses": [float, ...] per epoch,
        "seconds": training seconds, "model", "src", "tgt"}`.
    """
    hp = {**HYPERPARAMETERS, **(hp or {})}
    num_steps = int(hp["num_steps"])
    src = corpus(parts, [s for s, _ in pairs], num_steps)
    tgt = corpus(parts, [t for _, t in pairs], num_steps)
    model = CapstoneTransformer(
        parts,
        len(src.vocab),
        len(tgt.vocab),
        num_hiddens=hp["num_hiddens"],
        ffn_num_hiddens=hp["ffn_num_hiddens"],
        num_heads=hp["num_heads"],
        num_blks=hp["num_blks"],
        dropout=hp["dropout"],
    )
    start = time.perf_counter()
    losses = train(model, src, tgt, hp["epochs"], hp["batch_size"], hp["lr"])
    seconds = time.perf_counter() - start
    x, x_len = encode_sentences(parts, sources, src.vocab, num_steps)
    ids = translate(
        model,
        parts.seq2seq.beam_search,
        x,
        x_len,
        tgt.vocab["<bos>"],
        tgt.vocab["<eos>"],
        num_steps,
        beam_size=hp["beam_size"],
    )
    translations = [" ".join(tgt.vocab.to_tokens(list(row))) for row in ids]
    return {
        "translations": translations,
        "losses": losses,
        "seconds": seconds,
        "model": model,
        "src": src,
        "tgt": tgt,
    }
