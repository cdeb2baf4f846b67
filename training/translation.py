"""English-to-French translation (lessons 14, 17, 20): seq2seq, Bahdanau
attention, the Transformer.

d2l's data pipeline: words split on spaces, vocabularies with min_freq 2
and `<pad> <bos> <eos>`, `<eos>` appended, truncated or padded to
num_steps; the decoder reads `<bos>` + the target shifted right (teacher
forcing). Loss: d2l's masked cross-entropy, each sequence's loss over its
valid tokens (`<eos>` included) averaged over its num_steps positions and
summed over the global batch's sequences (`data.sequence_weights`: the
gradient d2l clips at theta); the epoch's reported loss is per valid
token. Throughput counts those valid target tokens, as d2l does.

At the end: greedy translations of held-out sentences with their BLEU
(d2l's, k = 2), printed d2l-style (`go . => va !, bleu 1.000`), and the
pictures that teach: attention heatmaps (Bahdanau, Transformer), the
positional encoding (Transformer), BLEU by sentence length (all three:
the RNN encoder-decoder squeezes a whole sentence into one state).
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf
from keras import ops

import m2t_data

from . import plots
from .data import Examples
from .data import permutation
from .data import sequence_weights
from .recipes import D2L_ENGLISH
from .recipes import D2L_FRENCH
from .recipes import Recipe
from .task import Task
from .task import argmax_correct
from .task import cross_entropy

RESERVED = ["<pad>", "<bos>", "<eos>"]


def _lesson(name: str):
    return importlib.import_module(f"solutions.{name}")


@dataclass
class Corpus:
    """Token arrays of one side of the pairs and their vocabulary.

    Attributes:
        tokens: `(N, num_steps)` int32, `<eos>`-terminated, padded.
        lengths: `(N,)` int32, tokens before the padding (`<eos>` counted).
        vocab: the lesson-06 `Vocab`.
    """

    tokens: np.ndarray
    lengths: np.ndarray
    vocab: object


def encode(sentences: list[str], vocab, num_steps: int) -> tuple:
    """Sentences -> `(N, num_steps)` tokens and `(N,)` lengths (lesson 13)."""
    lines = [s.split(" ") for s in sentences]
    array, lengths = _lesson("l13_machine_translation_data").build_array_nmt(
        lines, vocab, num_steps
    )
    return (
        np.asarray(array, np.int32),
        np.asarray(lengths, np.int32),
    )


def corpus(sentences: list[str], num_steps: int) -> Corpus:
    vocab = _lesson("l06_text_preprocessing").Vocab(
        [s.split(" ") for s in sentences], min_freq=2, reserved_tokens=RESERVED
    )
    tokens, lengths = encode(sentences, vocab, num_steps)
    return Corpus(tokens, lengths, vocab)


def bleu(prediction: str, reference: str, k: int = 2) -> float:
    """d2l's BLEU (lesson 14), with k = 2 as in its translation samples."""
    return float(_lesson("l14_seq2seq").bleu(prediction, reference, k))


# -- the three models: build, greedy decoding, attention weights ----------


@dataclass
class Model:
    """How the family drives one architecture.

    build: `(hp, source vocab size, target vocab size) -> net` with
        `net((src (B, S), src_len (B,), dec_input (B, T)))` -> logits
        `(B, T, V)`.
    decode: `(net, src, src_len, bos, eos, num_steps) -> (tokens (B,
        num_steps), lengths (B,))`, greedy, NumPy.
    attention: `(net, src, src_len, dec_input) -> {title: (H, T, S)}`, or
        None when the model has no attention.
    """

    build: Callable
    decode: Callable
    attention: Callable | None = None


def _transformer() -> Model:
    m = _lesson("l20_transformer")

    def build(hp, src_size, tgt_size):
        return m.Transformer(
            src_size,
            tgt_size,
            num_hiddens=hp["num_hiddens"],
            ffn_num_hiddens=hp["ffn_num_hiddens"],
            num_heads=hp["num_heads"],
            num_blks=hp["num_layers"],
            dropout=hp["dropout"],
        )

    def attention(net, src, src_len, dec_input):
        # The blocks call keras MultiHeadAttention without asking for the
        # weights; ask for them for the length of one forward pass.
        layers = {
            "encoder self-attention, last block": net.encoder.blks[
                -1
            ].attention,
            "decoder-encoder attention, last block": net.decoder.blks[
                -1
            ].cross_attention,
        }
        with capture_attention(layers.values()) as seen:
            net((src, src_len, dec_input), training=False)
        return {
            title: np.asarray(seen[id(layer)][-1])[0]
            for title, layer in layers.items()
        }

    return Model(build, m.greedy_decode, attention)


class capture_attention:
    """Make keras MultiHeadAttention layers also keep their weights.

    `with capture_attention(layers) as seen:` ... `seen[id(layer)]` lists
    the `(B, H, T, S)` weights of each call.
    """

    def __init__(self, layers):
        self.layers = list(layers)
        self.seen: dict[int, list] = {id(layer): [] for layer in self.layers}

    def __enter__(self):
        for layer in self.layers:
            layer.call = self._keeping(layer.call, self.seen[id(layer)])
        return self.seen

    @staticmethod
    def _keeping(call, kept: list):
        def keeping(*args, **kwargs):
            kwargs["return_attention_scores"] = True
            output, scores = call(*args, **kwargs)
            kept.append(scores)
            return output

        return keeping

    def __exit__(self, *exc):
        for layer in self.layers:
            del layer.call  # back to the class's method
        return False


class EncoderDecoder(keras.Model):
    """Lesson 14's encoder with lesson 14's decoder, or lesson 17's
    attention decoder, as one model for `fit` (lesson 14 has no such class).

    Call arguments:
        inputs: `(src (B, S), src_len (B,), dec_input (B, T))`.

    Returns:
        `(B, T, V)` logits.
    """

    def __init__(self, encoder, decoder, attention: bool, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder
        self.decoder = decoder
        self.attention = attention

    def begin(self, src, src_len, training=None):
        """Encode; returns the decoder's first state (and what it reads)."""
        outputs, states = self.encoder(src, training=training)
        if self.attention:  # lesson 17: states stacked (B, L, U)
            return outputs, ops.stack(states, axis=1), src_len
        return self.decoder.init_state((outputs, states))

    def step(self, tokens, state, training=None):
        """Decode `tokens (B, T)` from `state`: (logits, next state,
        attention weights (B, T, S) or None)."""
        if self.attention:
            outputs, hidden, src_len = state
            logits, hidden, weights = self.decoder(
                tokens, outputs, hidden, src_len, training=training
            )
            return logits, (outputs, hidden, src_len), weights
        logits, state = self.decoder(tokens, state, training=training)
        return logits, state, None

    def call(self, inputs, training=None):
        src, src_len, dec_input = inputs
        state = self.begin(src, src_len, training=training)
        logits, _, _ = self.step(dec_input, state, training=training)
        return logits


def _rnn(attention: bool) -> Callable[[], Model]:
    def make() -> Model:
        m14 = _lesson("l14_seq2seq")
        decoder_class = (
            _lesson("l17_bahdanau_attention").Seq2SeqAttentionDecoder
            if attention
            else m14.Seq2SeqDecoder
        )

        def build(hp, src_size, tgt_size):
            sizes = (
                hp["embed_size"],
                hp["num_hiddens"],
                hp["num_layers"],
                hp["dropout"],
            )
            return EncoderDecoder(
                m14.Seq2SeqEncoder(src_size, *sizes, name="encoder"),
                decoder_class(tgt_size, *sizes, name="decoder"),
                attention,
            )

        def decode(net, src, src_len, bos, eos, num_steps):
            state = net.begin(src, src_len, training=False)

            def step(tokens):
                nonlocal state
                logits, state, _ = net.step(tokens, state, training=False)
                return logits[:, -1]

            return greedy(step, len(src), bos, eos, num_steps)

        def weights(net, src, src_len, dec_input):
            state = net.begin(src, src_len, training=False)
            _, _, attn = net.step(dec_input, state, training=False)
            return {"decoder attention over the source": np.asarray(attn)[0]}

        return Model(build, decode, weights if attention else None)

    return make


def greedy(step, batch: int, bos: int, eos: int, num_steps: int):
    """Greedy decoding of a batch, as lesson 20's `greedy_decode`.

    Args:
        step: `(tokens (B, 1)) -> logits (B, V)`, carrying its own state.

    Returns:
        `(tokens (B, num_steps), lengths (B,))`, int32 NumPy; `eos` from
        each sequence's first `<eos>` on.
    """
    tokens = np.full((batch, num_steps), eos, np.int32)
    done = np.zeros(batch, bool)
    token = np.full((batch, 1), bos, np.int32)
    for t in range(num_steps):
        best = np.argmax(np.asarray(step(token)), axis=-1)
        best = np.where(done, eos, best).astype(np.int32)  # (B,)
        tokens[:, t] = best
        done |= best == eos
        if done.all():
            break
        token = best[:, None]
    is_eos = tokens == eos
    lengths = np.where(is_eos.any(1), is_eos.argmax(1), num_steps)
    return tokens, lengths.astype(np.int32)


MODELS = {
    "seq2seq": _rnn(attention=False),
    "bahdanau": _rnn(attention=True),
    "transformer": _transformer,
}


# -- the task ---------------------------------------------------------------


def prepare(
    recipe: Recipe, hp: dict, source: str, seed: int, verbose: bool = True
) -> Task:
    num_steps = int(hp["num_steps"])
    real_dir = m2t_data.real_data_dir() if source == "real" else None
    pairs = m2t_data.translation_pairs(
        source,
        "train",
        real_dir,
        num_examples=hp.get("num_examples"),
        verbose=verbose,
    )
    src = corpus([s for s, _ in pairs], num_steps)
    tgt = corpus([t for _, t in pairs], num_steps)
    bos = tgt.vocab["<bos>"]
    eos = tgt.vocab["<eos>"]
    if source == "embedded":
        held_out = m2t_data.translation_pairs("embedded", "test")
        if hp.get("test_examples"):
            held_out = held_out[: hp["test_examples"]]
        held_name = f"{len(held_out)} held-out pairs"
    else:  # d2l's four test sentences
        held_out = list(zip(D2L_ENGLISH, D2L_FRENCH, strict=True))
        held_name = "d2l's 4 test sentences"
    architecture = MODELS[recipe.name]()

    def make_batch(parts, indices):
        x, x_len, y, y_len = parts
        start = tf.fill([tf.shape(y)[0], 1], tf.constant(bos, y.dtype))
        dec_input = tf.concat([start, y[:, :-1]], axis=1)  # (B, T)
        mask = tf.sequence_mask(y_len, num_steps)  # (B, T)
        return (x, x_len, dec_input), y, sequence_weights(mask)

    arrays = (src.tokens, src.lengths, tgt.tokens, tgt.lengths)
    n = len(pairs)
    data = (
        f"{'toy_fra_eng' if source == 'embedded' else 'fra_eng'} ({source}):"
        f" {n} training pairs, vocab {len(src.vocab)} -> {len(tgt.vocab)},"
        f" num_steps {num_steps}; BLEU on {held_name}"
    )

    def translate(net, sentences: list[str]) -> list[str]:
        x, x_len = encode(sentences, src.vocab, num_steps)
        with warnings.catch_warnings():
            # Keras warns of a softmax over one key at the first step.
            warnings.simplefilter("ignore", UserWarning)
            tokens, lengths = architecture.decode(
                net, x, x_len, bos, eos, num_steps
            )
        return [
            " ".join(tgt.vocab.to_tokens(list(row[:length])))
            for row, length in zip(
                np.asarray(tokens), np.asarray(lengths), strict=True
            )
        ]

    def finish(net, out: Path, history: list[dict]) -> dict:
        english = [s for s, _ in held_out]
        french = [t for _, t in held_out]
        predicted = translate(net, english)
        scores = [bleu(p, r) for p, r in zip(predicted, french, strict=True)]
        shown = range(len(english)) if source == "real" else range(6)
        samples = [
            f"{english[i]} => {predicted[i]}, bleu {scores[i]:.3f}"
            for i in shown
            if i < len(english)
        ]
        exact = [p == r for p, r in zip(predicted, french, strict=True)]
        quality = {
            "bleu": float(np.mean(scores)),
            "bleu_on": held_name,
            "exact": float(np.mean(exact)),
        }
        if source == "real":
            for e, s in zip(english, scores, strict=True):
                quality[f"bleu[{e}]"] = s
        by_length = _bleu_by_length(english, scores, exact, recipe.name, out)
        pngs = [by_length] if by_length else []
        if architecture.attention is not None:
            pngs += _attention_maps(
                net, architecture, english, predicted, src, tgt, recipe, out
            )
        if recipe.name == "transformer":
            pngs.append(_positional_encoding(hp["num_hiddens"], out))
        return {"quality": quality, "samples": samples, "plots": pngs}

    return Task(
        build=lambda: architecture.build(hp, len(src.vocab), len(tgt.vocab)),
        example=(src.tokens[:2], src.lengths[:2], tgt.tokens[:2]),
        loss=cross_entropy,
        train=Examples(arrays, make_batch, permutation(n), n),
        data=data,
        unit="tokens",
        correct=argmax_correct,
        curve="accuracy",
        finish=finish,
    )


# -- pictures ---------------------------------------------------------------


BARS_APART = 0.05
"""The least spread between the by-length picture's bars (mean BLEU, or
exact share) that it shows: closer than that, every bar stands at the same
height and the picture says nothing."""


def _bleu_by_length(english, scores, exact, name, out: Path) -> str | None:
    """Mean BLEU and the share translated exactly, per source length; None
    (no picture) when it would say nothing: fewer than two lengths with 5
    pairs each, or bars all within `BARS_APART` of one another (the
    Transformer's 0.999 to 1.000 on the embedded held-out pairs)."""
    lengths = np.array([len(s.split(" ")) for s in english])
    scores = np.asarray(scores, float)
    exact = np.asarray(exact, float)
    sizes = [n for n in sorted(set(lengths)) if (lengths == n).sum() >= 5]
    if len(sizes) < 2:
        return None
    means = [scores[lengths == n].mean() for n in sizes]
    exacts = [exact[lengths == n].mean() for n in sizes]
    if max(np.ptp(means), np.ptp(exacts)) < BARS_APART:
        return None
    return plots.shares_by_group(
        [str(n) for n in sizes],
        {"mean BLEU": means, "exact share": exacts},
        [int((lengths == n).sum()) for n in sizes],
        xlabel="source length (words, punctuation included)",
        title=f"{name}: held-out translations by length",
        path=out / "bleu_by_length.png",
    ).name


def _attention_maps(
    net, architecture, english, predicted, src, tgt, recipe, out
):
    # The longest held-out sentence shows alignment (and reordering) best.
    i = int(np.argmax([len(s.split(" ")) for s in english]))
    num_steps = src.tokens.shape[1]
    x, x_len = encode([english[i]], src.vocab, num_steps)
    out_words = predicted[i].split(" ") + ["<eos>"]
    dec = [tgt.vocab["<bos>"]] + tgt.vocab[out_words[:-1]]
    dec = np.asarray([dec + [tgt.vocab["<pad>"]] * (num_steps - len(dec))])
    dec = dec[:, :num_steps].astype(np.int32)
    maps = architecture.attention(net, x, x_len, dec)
    s_len, t_len = int(x_len[0]), min(len(out_words), num_steps)
    keys = english[i].split(" ") + ["<eos>"]
    pngs = []
    for n, (title, weights) in enumerate(maps.items()):
        weights = np.asarray(weights)
        if weights.ndim == 2:
            weights = weights[None]
        rows = keys if "self" in title else out_words
        rows_len = s_len if "self" in title else t_len
        heads = weights[:, :rows_len, :s_len]
        png = plots.heatmaps(
            list(heads),
            [f"head {h + 1}" for h in range(len(heads))]
            if len(heads) > 1
            else [""],
            out / f"attention_{n + 1}.png",
            xlabels=keys[:s_len],
            ylabels=rows[:rows_len],
            xlabel="source (keys)",
            ylabel="source (queries)" if "self" in title else "output",
            suptitle=f"{recipe.name}: {title}",
        )
        pngs.append(png.name)
    return pngs


def _positional_encoding(depth: int, out: Path) -> str:
    m = _lesson("l20_transformer")
    table = np.asarray(m.sinusoidal_positions(np.arange(60), depth))
    fig, (left, right) = plots.figure(12, 3.8, cols=2)
    image = left.imshow(
        table, cmap=plots.DIVERGING, aspect="auto", vmin=-1, vmax=1
    )
    left.set(
        xlabel="encoding dimension",
        ylabel="position",
        title=f"positional encoding P (D = {depth})",
    )
    fig.colorbar(image, ax=left)
    for j in (6, 7, 8, 9):
        right.plot(np.arange(60), table[:, j], label=f"column {j}")
    right.set(
        xlabel="position",
        title="columns: sines and cosines of falling frequency",
    )
    right.legend(fontsize=8)
    right.grid(alpha=0.3)
    return plots.save(fig, out / "positional_encoding.png").name
