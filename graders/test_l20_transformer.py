"""Grader for lesson 20: the Transformer.

Sizes: B=2 sequences, T=3 target steps, S=5 source steps, H=4 heads of
Dk=6 (D=24), FFN hidden F=10, source vocabulary 11, target vocabulary 13,
2 blocks. Every axis has its own size, so a transpose cannot pass unnoticed.
Conventions: post-norm AddNorm = LayerNorm(X + Dropout(Y)) over the last
axis, epsilon 1e-5; embeddings times sqrt(D) plus the interleaved sin/cos
encoding; masks are keras `attention_mask`s, True = attend; the causal mask
lets position i see 0 .. i; decoding with a cache equals the full pass.

The float64 references below compute attention exactly as
`keras.layers.MultiHeadAttention` does (kernels (D, H, Dk), output kernel
(H, Dk, D); masked scores set to -1e9 before the softmax).
"""

from functools import partial

import numpy as np
import pytest

from graders.lib import properties
from graders.lib.contract import centred_differences
from graders.lib.contract import contract_sublayer_weights
from graders.lib.contract import expect_gradient
from graders.lib.contract import expect_layer_contract
from graders.lib.contract import expect_value_errors
from graders.lib.conventions import KERAS_LAYER_NORM_EPSILON
from graders.lib.conventions import LAYER_NORM_EPSILON
from graders.lib.conventions import MASK_FILL
from graders.lib.conventions import book_vs_course
from graders.lib.decoding import fed_histories
from graders.lib.decoding import plain_table
from graders.lib.decoding import same_as_full_pass
from graders.lib.decoding import scripted_transformer
from graders.lib.dropout import nearest_dropped
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import expect_shape
from graders.lib.judge import fail
from graders.lib.judge import mistake_outputs
from graders.lib.messages import say
from graders.lib.probes import in_float64
from graders.lib.probes import layer_contract
from graders.lib.probes import tape_gradient
from graders.lib.probes import value_errors
from graders.lib.references import softmax
from graders.lib.tolerances import EXACT
from graders.lib.tolerances import F64
from graders.lib.tolerances import GRAD
from m2t.grading.probe import Lesson

lesson = Lesson("l20_transformer")
B, T, S, H, DK, F = 2, 3, 5, 4, 6, 10
D = H * DK
SRC_VOCAB, TGT_VOCAB, BLOCKS = 11, 13, 2
EPSILON = LAYER_NORM_EPSILON

VALID_LENS = {
    "1d": np.array([5, 3], dtype="int32"),
    "2d": np.array([[1, 4, 5], [3, 2, 1]], dtype="int32"),
}

# ---------------------------------------------------------------- mistakes
CAUSAL_EXCLUDES_SELF = Mistake(
    "causal_excludes_self",
    "the causal mask hides the query's own position: position i may attend "
    "to keys 0 .. i, itself included (keep s <= i, not s < i).",
)
CAUSAL_SEES_NEXT = Mistake(
    "causal_sees_next",
    "the causal mask lets position i see position i + 1, a token it has "
    "to predict: keep keys s <= i only.",
)
RESIDUAL_MISSING = Mistake(
    "residual_missing",
    "AddNorm normalises Dropout(Y) alone: the residual X + Dropout(Y) is "
    "missing.",
)
LAYER_NORM_WRONG_AXIS = Mistake(
    "layer_norm_wrong_axis",
    "the layer norm's mean and variance are taken over the time axis; "
    "layer normalisation normalises each position's D features (the last "
    "axis), unlike batch norm.",
)
EMBEDDING_NOT_SCALED = Mistake(
    "embedding_not_scaled",
    "the embeddings are not multiplied by sqrt(D) before the positional "
    "encoding is added, so the encoding (values in [-1, 1]) swamps them.",
)
DECODER_POSITIONS_RESTART = Mistake(
    "decoder_positions_restart",
    "decoding with a cache, every new token gets the positional encoding "
    "of position 0: it sits at position start = the number of cached "
    "steps.",
)
KERAS_EPSILON = Mistake(
    "layer_norm_keras_epsilon",
    book_vs_course(
        f"the layer norm's epsilon is {KERAS_LAYER_NORM_EPSILON:g}",
        "(TensorFlow) keeps keras.layers.LayerNormalization()'s default "
        f"epsilon={KERAS_LAYER_NORM_EPSILON:g}",
        f"uses epsilon={EPSILON:g}: pass LayerNormalization(epsilon="
        f"{EPSILON:g})",
        "the paper's code, PyTorch's LayerNorm (d2l's other frameworks) "
        "and keras-hub use it",
    ),
)
NO_SOURCE_MASK = Mistake(
    "no_source_mask",
    "the encoder-decoder attention ignores enc_valid_lens, so the decoder "
    "attends to the source's padding.",
)
DROPOUT_ON_SUM = Mistake(
    "dropout_on_sum",
    "dropout acts on the sum X + Y; it belongs on the sublayer's output Y "
    "alone, LayerNorm(X + Dropout(Y)), so the residual X always passes.",
)
GREEDY_NO_CACHE = Mistake(
    "greedy_ignores_cache",
    "greedy_decode calls the decoder without the cache it returned, so each "
    "step sees only its newest token (at position 0) and forgets the "
    "sentence so far: pass the previous step's cache back in.",
)
GREEDY_AFTER_EOS = Mistake(
    "greedy_emits_after_eos",
    "a row that has produced <eos> goes on emitting tokens: from a row's "
    "first <eos> on, its tokens are eos_id.",
)
GREEDY_NOT_FED_BACK = Mistake(
    "greedy_not_fed_back",
    "every step feeds <bos> again: the input of a step is the token the "
    "previous step chose.",
)
GREEDY_UNFINISHED_LENGTH = Mistake(
    "greedy_length_of_unfinished_row",
    "a row that never produced <eos> gets length 0 (the argmax of a row of "
    "False): its length is num_steps.",
)
GREEDY_UNRUN_STEPS = Mistake(
    "greedy_unrun_steps_not_eos",
    "when every row has ended early, the steps never run hold 0: they hold "
    "eos_id, like every step after a row's end.",
)
MISTAKES = (
    CAUSAL_EXCLUDES_SELF,
    CAUSAL_SEES_NEXT,
    RESIDUAL_MISSING,
    LAYER_NORM_WRONG_AXIS,
    EMBEDDING_NOT_SCALED,
    DECODER_POSITIONS_RESTART,
    NO_SOURCE_MASK,
    KERAS_EPSILON,
    DROPOUT_ON_SUM,
    GREEDY_NO_CACHE,
    GREEDY_AFTER_EOS,
    GREEDY_NOT_FED_BACK,
    GREEDY_UNFINISHED_LENGTH,
    GREEDY_UNRUN_STEPS,
)


# --------------------------------------------------- float64 references


@reference
def ref_positions(positions, depth=D):
    angles = np.asarray(positions, np.float64)[:, None] / 10000.0 ** (
        np.arange(0, depth, 2) / depth
    )
    table = np.zeros((len(angles), depth))
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    return table


@reference
def ref_padding_keep(valid_lens, num_queries, num_keys):
    lens = np.asarray(valid_lens)
    lens = np.broadcast_to(
        lens[:, None] if lens.ndim == 1 else lens, (len(lens), num_queries)
    )
    return np.arange(num_keys) < lens[..., None]  # (B, T, S)


@reference
def ref_causal_keep(num_queries, num_keys, mistake=None):
    rows = np.arange(num_queries)[:, None] + (num_keys - num_queries)
    rows = rows + {CAUSAL_EXCLUDES_SELF: -1, CAUSAL_SEES_NEXT: 1}.get(
        mistake, 0
    )
    return (np.arange(num_keys)[None, :] <= rows)[None]  # (1, T, S)


@reference
def ref_attention(Xq, Xkv, keep, params):
    """Keras MHA in float64; `keep` (B or 1, T, S) or None. A fully masked
    row comes out uniform, as Keras's fused attention gives it. The head
    size Dk is the kernels' last axis."""
    wq, wk, wv, wo = (np.asarray(p, np.float64) for p in params)
    q = np.einsum("btd,dhk->bhtk", Xq, wq)
    k = np.einsum("bsd,dhk->bhsk", Xkv, wk)
    v = np.einsum("bsd,dhk->bhsk", Xkv, wv)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(wq.shape[-1])  # (B,H,T,S)
    if keep is not None:
        scores = np.where(keep[:, None], scores, MASK_FILL)
    heads = np.einsum("bhts,bhsk->bthk", softmax(scores), v)
    return np.einsum("bthk,hkd->btd", heads, wo)


@reference
def ref_ffn(X, params):
    w1, b1, w2, b2 = params
    return np.maximum(X @ w1 + b1, 0.0) @ w2 + b2


@reference
def ref_addnorm(X, Y, params, mistake=None):
    gamma, beta = params
    Z = np.asarray(Y, np.float64)
    if mistake is not RESIDUAL_MISSING:
        Z = np.asarray(X, np.float64) + Z
    axis = 1 if mistake is LAYER_NORM_WRONG_AXIS else -1
    mean = Z.mean(axis, keepdims=True)
    var = Z.var(axis, keepdims=True)
    eps = KERAS_LAYER_NORM_EPSILON if mistake is KERAS_EPSILON else EPSILON
    return (Z - mean) / np.sqrt(var + eps) * gamma + beta


@reference
def ref_encoder_block(X, valid_lens, p, mistake=None):
    steps = X.shape[1]
    keep = None
    if valid_lens is not None:
        keep = ref_padding_keep(valid_lens, steps, steps)
    Y = ref_addnorm(
        X, ref_attention(X, X, keep, p["attention"]), p["addnorm1"], mistake
    )
    return ref_addnorm(Y, ref_ffn(Y, p["ffn"]), p["addnorm2"], mistake)


@reference
def ref_decoder_block(X, enc, enc_valid_lens, p, cache=None, mistake=None):
    kv = X if cache is None else np.concatenate([cache, X], axis=1)
    steps = X.shape[1]
    keep = ref_causal_keep(steps, kv.shape[1], mistake)
    attended = ref_attention(X, kv, keep, p["self_attention"])
    Y = ref_addnorm(X, attended, p["addnorm1"], mistake)
    source = None
    if enc_valid_lens is not None and mistake is not NO_SOURCE_MASK:
        source = ref_padding_keep(enc_valid_lens, steps, enc.shape[1])
    attended = ref_attention(Y, enc, source, p["cross_attention"])
    Z = ref_addnorm(Y, attended, p["addnorm2"], mistake)
    return ref_addnorm(Z, ref_ffn(Z, p["ffn"]), p["addnorm3"], mistake), kv


def _embed(tokens, table, positions, mistake):
    scale = 1.0 if mistake is EMBEDDING_NOT_SCALED else np.sqrt(D)
    return np.asarray(table, np.float64)[tokens] * scale + ref_positions(
        positions
    )


@reference
def ref_embedding(tokens, table, start, mistake=None):
    """TransformerEmbedding in float64, dropout off: (B, T, D)."""
    return _embed(tokens, table, np.arange(tokens.shape[1]) + start, mistake)


@reference
def ref_encoder(tokens, valid_lens, p, mistake=None):
    X = _embed(tokens, p["embedding"], np.arange(tokens.shape[1]), mistake)
    for blk in p["blocks"]:
        X = ref_encoder_block(X, valid_lens, blk, mistake)
    return X


@reference
def ref_decoder(tokens, enc, enc_valid_lens, p, cache=None, mistake=None):
    """(logits (B, T, V), new cache) of the decoder in float64."""
    start = 0 if cache is None else cache[0].shape[1]
    if mistake is DECODER_POSITIONS_RESTART:
        start = 0
    positions = np.arange(tokens.shape[1]) + start
    X = _embed(tokens, p["embedding"], positions, mistake)
    new_cache = []
    for i, blk in enumerate(p["blocks"]):
        X, kv = ref_decoder_block(
            X,
            enc,
            enc_valid_lens,
            blk,
            None if cache is None else cache[i],
            mistake,
        )
        new_cache.append(kv)
    w, b = p["dense"]
    return X @ w + b, new_cache


@reference
def ref_decoder_steps(tokens, enc, enc_valid_lens, p, mistake=None):
    """The decoder called one token at a time with its cache."""
    cache, logits = None, []
    for t in range(tokens.shape[1]):
        out, cache = ref_decoder(
            tokens[:, t : t + 1], enc, enc_valid_lens, p, cache, mistake
        )
        logits.append(out)
    return np.concatenate(logits, axis=1)


@reference
def ref_greedy(src, src_valid, p, bos, eos, num_steps, mistake=None):
    enc = ref_encoder(src, src_valid, p["encoder"], mistake)
    tokens = np.full((len(src), num_steps), eos, dtype=np.int64)
    done = np.zeros(len(src), dtype=bool)
    token, cache = np.full((len(src), 1), bos), None
    for step in range(num_steps):
        logits, cache = ref_decoder(
            token, enc, src_valid, p["decoder"], cache, mistake
        )
        best = np.where(done, eos, logits[:, -1].argmax(-1))
        tokens[:, step] = best
        done |= best == eos
        token = best[:, None]
    is_eos = tokens == eos
    lengths = np.where(is_eos.any(1), is_eos.argmax(1), num_steps)
    return tokens, lengths


@reference
def ref_block_gradient(X, valid_lens, params, probe_weights):
    """d sum(block(X) * probe_weights) / dX, of X's shape: centred
    differences of the float64 encoder block with `params`."""

    def loss(x):
        out = ref_encoder_block(x, valid_lens, params)
        return np.sum(out * probe_weights)

    return centred_differences(loss, X)


_diagnoses = partial(mistake_outputs, mistakes=MISTAKES)


# ------------------------------------------------------------------ probes
def _randomize(layer, seed):
    """Give every weight a random value (gamma near 1, beta and biases near
    0, kernels with unit-variance outputs), so each one matters."""
    rng = np.random.default_rng(seed)
    for w in layer.weights:
        shape = tuple(w.shape)
        if w.name == "gamma":
            value = 1.0 + 0.2 * rng.standard_normal(shape)
        elif w.name in ("beta", "bias"):
            value = 0.2 * rng.standard_normal(shape)
        elif w.name == "embeddings":
            value = 0.3 * rng.standard_normal(shape)
        else:  # (Din, Dout), (Din, H, Dk), or the output kernel (H, Dk, D)
            output = "attention_output" in w.path
            fan_in = shape[0] * shape[1] if output else shape[0]
            value = rng.standard_normal(shape) / np.sqrt(fan_in)
        w.assign(value.astype(w.dtype))


def _weights(layer):
    return [np.array(w) for w in layer.weights]


def _ffn_params(ffn):
    return _weights(ffn.dense1) + _weights(ffn.dense2)


def _encoder_block_params(blk):
    return {
        "attention": _weights(blk.attention),
        "addnorm1": _weights(blk.addnorm1),
        "ffn": _ffn_params(blk.ffn),
        "addnorm2": _weights(blk.addnorm2),
    }


def _decoder_block_params(blk):
    return {
        "self_attention": _weights(blk.self_attention),
        "addnorm1": _weights(blk.addnorm1),
        "cross_attention": _weights(blk.cross_attention),
        "addnorm2": _weights(blk.addnorm2),
        "ffn": _ffn_params(blk.ffn),
        "addnorm3": _weights(blk.addnorm3),
    }


def _encoder_params(enc):
    return {
        "embedding": np.array(enc.embedding.token_embedding.embeddings),
        "blocks": [_encoder_block_params(b) for b in enc.blks],
    }


def _decoder_params(dec):
    return {
        "embedding": np.array(dec.embedding.token_embedding.embeddings),
        "blocks": [_decoder_block_params(b) for b in dec.blks],
        "dense": _weights(dec.dense),
    }


@lesson.probe
def run_positions(m, positions):
    return m.sinusoidal_positions(positions, D)


@lesson.probe
def run_padding_mask(m, valid_lens, num_queries, num_keys):
    return m.padding_mask(valid_lens, num_queries, num_keys)


@lesson.probe
def run_causal_mask(m, num_queries, num_keys):
    return m.causal_mask(num_queries, num_keys)


@lesson.probe
def run_ffn(m, X):
    ffn = m.PositionWiseFFN(F, 7)
    ffn(X)
    _randomize(ffn, 1)
    return ffn(X), _ffn_params(ffn)


@lesson.probe
def run_addnorm(m, X, Y, dropout=0.0):
    layer = m.AddNorm(dropout)
    layer(X, Y)
    _randomize(layer, 2)
    return (
        layer(X, Y, training=False),
        layer(X, Y, training=False),
        layer(X, Y, training=True),
        _weights(layer),
    )


@lesson.probe
def run_encoder_block(m, X, valid_lens):
    blk = m.TransformerEncoderBlock(D, F, H, dropout=0.2)
    blk(X, valid_lens)
    _randomize(blk, 3)
    return blk(X, valid_lens, training=False), _encoder_block_params(blk)


@lesson.probe
def run_seed_004_block(m, X, changed, valid_lens):
    blk = m.TransformerEncoderBlock(24, 48, 8, 0.5)
    return blk(X, valid_lens), blk(changed, valid_lens)


@lesson.probe
def run_encoder_block_two_lengths(m, first, second):
    blk = m.TransformerEncoderBlock(D, F, H)
    blk(*first)
    _randomize(blk, 4)
    return blk(*first), blk(*second), _encoder_block_params(blk)


@lesson.probe
def run_embedding(m, tokens, start):
    """The embedding's output at `start` (training=False, so its dropout
    of 0.5 must not act) and its token table."""
    emb = m.TransformerEmbedding(TGT_VOCAB, D, dropout=0.5)
    out = emb(tokens, start=start, training=False)
    return out, np.array(emb.token_embedding.embeddings)


@lesson.probe
def run_encoder(m, tokens, valid_lens):
    enc = m.TransformerEncoder(SRC_VOCAB, D, F, H, BLOCKS, dropout=0.1)
    enc(tokens, valid_lens)
    _randomize(enc, 5)
    return enc(tokens, valid_lens, training=False), _encoder_params(enc)


@lesson.probe
def run_decoder_block(m, X, enc, enc_valid_lens, changed):
    """The block's output and cache on X, its parameters, and its output
    on `changed` (X with later positions changed: causality)."""
    blk = m.TransformerDecoderBlock(D, F, H, dropout=0.1)
    blk(X, enc, enc_valid_lens)
    _randomize(blk, 6)
    out, kv = blk(X, enc, enc_valid_lens, training=False)
    other, _ = blk(changed, enc, enc_valid_lens, training=False)
    return out, kv, _decoder_block_params(blk), other


@lesson.probe
def run_decoder(m, tokens, enc, enc_valid_lens, changed=None):
    """The full pass, then either the full pass with `changed` tokens or
    the decoder called one token at a time with its cache."""
    dec = m.TransformerDecoder(TGT_VOCAB, D, F, H, BLOCKS)
    dec(tokens, enc, enc_valid_lens)
    _randomize(dec, 7)
    full, _ = dec(tokens, enc, enc_valid_lens)
    if changed is not None:
        other, _ = dec(changed, enc, enc_valid_lens)
        return full, other, _decoder_params(dec)
    cache, steps = None, []
    for t in range(tokens.shape[1]):
        logits, cache = dec(tokens[:, t : t + 1], enc, enc_valid_lens, cache)
        steps.append(logits)
    sizes = [tuple(int(d) for d in c.shape) for c in cache]
    return full, steps, sizes, _decoder_params(dec)


def _transformer(m, src, src_valid, dec_input):
    model = m.Transformer(SRC_VOCAB, TGT_VOCAB, D, F, H, 1, dropout=0.1)
    model((src, src_valid, dec_input))
    _randomize(model, 8)
    return model


@lesson.probe
def run_transformer(m, src, src_valid, dec_input, bos, eos, num_steps):
    """Teacher-forced logits, the weights, and greedy_decode on the same
    model (one model built: the Transformer is the costly part)."""
    model = _transformer(m, src, src_valid, dec_input)
    logits = model((src, src_valid, dec_input), training=False)
    params = {
        "encoder": _encoder_params(model.encoder),
        "decoder": _decoder_params(model.decoder),
    }
    greedy = m.greedy_decode(model, src, src_valid, bos, eos, num_steps)
    return logits, params, greedy


@lesson.probe
def run_scripted_greedy(m, tables, num_steps):
    """greedy_decode on a scripted Transformer (graders/lib/decoding.py):
    its tokens, lengths and what each decoder call saw."""
    model = scripted_transformer(tables, SCRIPT_VOCAB)
    src = np.zeros((len(tables), S), "int32")
    src_valid = np.full(len(tables), S, "int32")
    tokens, lengths = m.greedy_decode(
        model, src, src_valid, BOS_, EOS_, num_steps
    )
    return tokens, lengths, model.decoder.calls


def _contract_inputs(rng_seed):
    """X (B, T, D), enc (B, S, D), src (B, S) and tgt (B, T) tokens of the
    contract, drawn alike by its probe and by the judge."""
    rng = np.random.default_rng(rng_seed)
    X = rng.standard_normal((B, T, D)).astype("float32")
    enc = rng.standard_normal((B, S, D)).astype("float32")
    src = rng.integers(0, SRC_VOCAB, (B, S)).astype("int32")
    tgt = rng.integers(0, TGT_VOCAB, (B, T)).astype("int32")
    return X, enc, src, tgt


@lesson.probe
def run_contract(m, kind, rng_seed):
    X, enc, src, tgt = _contract_inputs(rng_seed)
    lens = VALID_LENS["1d"]
    # Only the encoder and the decoder are also called on keras.Input: that
    # call runs each part inside them (block, FFN, AddNorm) on symbolic
    # tensors too, and a part that fails there fails it with the part's
    # line; a symbolic call of each part on its own would trace the same
    # code again (a third of a block's contract).
    cases = {
        "ffn": (lambda: m.PositionWiseFFN(F, D), [X], None),
        "addnorm": (lambda: m.AddNorm(0.1), [X, X], None),
        "encoder_block": (
            lambda: m.TransformerEncoderBlock(D, F, H, 0.1),
            [enc, lens],
            None,
        ),
        "decoder_block": (
            lambda: m.TransformerDecoderBlock(D, F, H, 0.1),
            [X, enc, lens],
            None,
        ),
        "encoder": (
            lambda: m.TransformerEncoder(SRC_VOCAB, D, F, H, 1, 0.1),
            [src, lens],
            [(None,), None],
        ),
        "decoder": (
            lambda: m.TransformerDecoder(TGT_VOCAB, D, F, H, 1, 0.1),
            [tgt, enc, lens],
            [(None,), (None, D), None],
        ),
    }
    make, inputs, symbolic = cases[kind]
    facts = layer_contract(make, inputs, symbolic=symbolic)
    facts["errors"] = value_errors(
        {
            "num_hiddens": lambda: m.TransformerEncoderBlock(10, F, 4),
            "num_heads": lambda: m.TransformerDecoderBlock(D, F, 0),
            "dropout": lambda: m.AddNorm(1.5),
            "valid_lens": lambda: m.padding_mask(np.zeros((B, T, 1)), T, S),
        }
    )
    return facts


@lesson.probe
def run_gradient(m, X, valid_lens, probe_weights):
    """A small float64 encoder block with random weights: its output, the
    tape gradient of sum(block(X) * probe_weights) with respect to X and
    the weights; where float64 fails inside the block, its error. Either way
    the (class, compute dtype) of each sublayer that does not compute in
    float64 (a Keras layer made without dtype= computes in float32)."""
    import keras

    from m2t.grading.probe import StudentError

    blk = m.TransformerEncoderBlock(8, 5, 2, dtype="float64")

    def f(x):
        return keras.ops.sum(blk(x, valid_lens) * probe_weights)

    error = None
    try:
        in_float64(blk, X, valid_lens)  # build
        _randomize(blk, 9)
        output = in_float64(blk, X, valid_lens)
        gradient = tape_gradient(f, X)
    except (StudentError, TypeError, ValueError) as e:
        error = e
    narrow = [
        (type(sub).__name__, str(sub.compute_dtype))
        for sub in blk._flatten_layers(include_self=False)
        if sub.compute_dtype != "float64"
    ]
    if error is None:
        params = _encoder_block_params(blk)
        return {
            "output": output,
            "gradient": gradient,
            "params": params,
            "narrow": narrow,
        }
    if not narrow:
        raise error
    return {"error": f"{type(error).__name__}: {error}", "narrow": narrow}


# ------------------------------------------------------------------ inputs
def _tokens(rng, vocab, steps):
    return rng.integers(0, vocab, (B, steps)).astype("int32")


# ------------------------------------------------------------------ checks
@pytest.mark.parametrize(
    "positions", [np.arange(7), np.array([5, 6, 7])], ids=["from_0", "offset"]
)
def test_sinusoidal_positions(positions):
    expect_close(
        run_positions(positions),
        ref_positions(positions),
        say("l20.positions", depth=D),
        hint=say("l20.positions_hint"),
    )


@pytest.mark.parametrize(
    "lens", ["1d", "2d"], ids=["valid_lens_B", "valid_lens_BT"]
)
def test_padding_mask(lens):
    valid = VALID_LENS[lens]
    got = run_padding_mask(valid, T, S)
    expect_close(
        np.asarray(got, dtype=np.int64),
        ref_padding_keep(valid, T, S).astype(np.int64),
        say("l20.padding", T=T, S=S),
        tol=EXACT,
        hint=say("l20.padding_hint"),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize(
    "num_queries,num_keys",
    [(4, 4), (1, 4), (2, 5)],
    ids=["training_T4", "one_new_step_after_3", "two_new_steps_after_3"],
)
def test_causal_mask(num_queries, num_keys):
    got = np.asarray(run_causal_mask(num_queries, num_keys), dtype=np.int64)
    expect_close(
        got,
        ref_causal_keep(num_queries, num_keys).astype(np.int64),
        say("l20.causal", T=num_queries, S=num_keys),
        tol=EXACT,
        diagnoses={
            m: ref_causal_keep(num_queries, num_keys, m).astype(np.int64)
            for m in (CAUSAL_EXCLUDES_SELF, CAUSAL_SEES_NEXT)
        },
        hint=say("l20.causal_hint"),
    )


def test_causal_mask_is_training_valid_lens():
    """d2l trains the decoder with dec_valid_lens = [[1, 2, ..., T], ...]:
    the causal mask is that padding mask."""
    lens = np.tile(np.arange(1, T + 2), (B, 1)).astype("int32")  # (B, T+1)
    causal = np.asarray(run_causal_mask(T + 1, T + 1), dtype=np.int64)
    padded = np.asarray(run_padding_mask(lens, T + 1, T + 1), dtype=np.int64)
    expect_shape(causal, (1, T + 1, T + 1), say("l20.causal_square"))
    expect_close(
        np.broadcast_to(causal, padded.shape),
        padded,
        say("l20.causal_vs_padding"),
        tol=EXACT,
        diagnoses={
            m: np.broadcast_to(ref_causal_keep(T + 1, T + 1, m), padded.shape)
            for m in (CAUSAL_EXCLUDES_SELF, CAUSAL_SEES_NEXT)
        },
    )


def test_position_wise_ffn(rng):
    X = rng.standard_normal((B, T, D)).astype("float32")
    out, params = run_ffn(X)
    expect_close(
        out,
        ref_ffn(X.astype(np.float64), params),
        say("l20.ffn"),
        hint=say("l20.ffn_hint"),
    )


@pytest.mark.points(2)
def test_addnorm_matches_reference_and_keras_layer_norm(rng):
    import keras

    X = rng.standard_normal((B, T, D)).astype("float32")
    Y = rng.standard_normal((B, T, D)).astype("float32")
    out, _, _, params = run_addnorm(X, Y)
    expect_close(
        out,
        ref_addnorm(X, Y, params),
        say("l20.addnorm"),
        diagnoses=_diagnoses(
            ref_addnorm,
            X,
            Y,
            params,
            mistakes=(RESIDUAL_MISSING, LAYER_NORM_WRONG_AXIS, KERAS_EPSILON),
        ),
    )
    norm = keras.layers.LayerNormalization(epsilon=EPSILON)
    norm(X)
    norm.set_weights(params)  # [gamma, beta]
    expect_close(
        out,
        np.asarray(norm(X + Y), np.float64),
        say("l20.addnorm_keras", epsilon=f"{EPSILON:g}"),
        diagnoses=_diagnoses(
            ref_addnorm, X, Y, params, mistakes=(KERAS_EPSILON,)
        ),
    )


def test_addnorm_dropout_only_in_training(rng):
    X = rng.standard_normal((B, T, D)).astype("float32")
    Y = rng.standard_normal((B, T, D)).astype("float32")
    first, second, trained, params = run_addnorm(X, Y, dropout=0.5)
    # the inference output is the judge's: two that merely agree are no
    # evidence of a layer that drops only in training
    expect_close(
        first,
        ref_addnorm(X, Y, params),
        say("contract.inference_value", name="AddNorm(0.5)"),
    )
    expect_close(second, first, say("l20.addnorm_twice"))
    expect(not np.allclose(trained, first), say("l20.addnorm_dropout"))


def test_addnorm_of_zero_y_is_the_norm_of_x_in_training(rng):
    """Dropout acts on Y only: AddNorm(X, 0) = LayerNorm(X) in training
    too, whatever the mask. X is nonzero in 8 of its D features, so the
    judge can try every mask of a dropout on the sum."""
    cols = np.sort(rng.choice(D, 8, replace=False))
    X = np.zeros((B, T, D), "float32")
    X[..., cols] = rng.standard_normal((B, T, len(cols)))
    _, _, trained, params = run_addnorm(X, np.zeros_like(X), dropout=0.5)

    def norm_of_dropped_sum(dropped):  # (B, T, 2**8, 8) -> (B, T, 2**8, D)
        Z = np.zeros((*dropped.shape[:-1], D))
        Z[..., cols] = dropped
        return ref_addnorm(np.zeros_like(Z), Z, params)

    expect_close(
        trained,
        ref_addnorm(X, np.zeros_like(X), params),
        say("l20.addnorm_zero_y"),
        diagnoses={
            DROPOUT_ON_SUM: lambda: nearest_dropped(
                trained,
                X[..., cols].astype(np.float64),
                0.5,
                then=norm_of_dropped_sum,
            ),
            # LayerNorm(0), which a mask that drops all 8 also gives
            RESIDUAL_MISSING: lambda: ref_addnorm(
                X, np.zeros_like(X), params, RESIDUAL_MISSING
            ),
        },
        hint=say("l20.addnorm_zero_y_hint"),
    )


@pytest.mark.points(3)
@pytest.mark.parametrize(
    "lens", ["1d", "2d", None], ids=["valid_lens_B", "valid_lens_BT", "no_mask"]
)
def test_encoder_block_matches_reference(rng, lens):
    X = rng.standard_normal((B, S, D)).astype("float32")
    valid = None if lens is None else VALID_LENS[lens]
    if lens == "2d":
        X = X[:, :T]
    out, params = run_encoder_block(X, valid)
    expect_close(
        out,
        ref_encoder_block(X.astype(np.float64), valid, params),
        say("l20.encoder_block"),
        diagnoses=_diagnoses(ref_encoder_block, X, valid, params),
        hint=say("l20.encoder_block_hint"),
    )


@pytest.mark.points(2)
def test_encoder_block_seed_004(rng):
    """The seed's example: ones((2, 100, 24)) with valid_lens [3, 2], 8 heads,
    FFN 48 -> (2, 100, 24); here random inputs, and the padded positions must
    not change the valid ones."""
    X = rng.standard_normal((2, 100, 24)).astype("float32")
    changed = X.copy()
    changed[0, 3:] += 1.0
    changed[1, 2:] -= 1.0
    out, other = run_seed_004_block(X, changed, np.array([3, 2], "int32"))
    expect_shape(out, (2, 100, 24), say("l20.seed_block"))
    expect_close(
        np.concatenate([other[0, :3], other[1, :2]]),
        np.concatenate([out[0, :3], out[1, :2]]),
        say("l20.seed_padded"),
        hint=say("l20.seed_padded_hint"),
    )


def test_encoder_block_variable_lengths(rng):
    first = (rng.standard_normal((B, T, D)).astype("float32"), None)
    second = (
        rng.standard_normal((B, 7, D)).astype("float32"),
        np.array([7, 4], "int32"),
    )
    out1, out2, params = run_encoder_block_two_lengths(first, second)
    expect_close(
        out1,
        ref_encoder_block(*first, params),
        say("l20.first_length"),
        diagnoses=_diagnoses(ref_encoder_block, *first, params),
    )
    expect_close(
        out2,
        ref_encoder_block(*second, params),
        say("l20.second_length"),
        diagnoses=_diagnoses(ref_encoder_block, *second, params),
        hint=say("l20.length_hint"),
    )


@pytest.mark.parametrize("start", [0, 3], ids=["start_0", "start_3"])
def test_embedding_matches_reference(rng, start):
    tokens = _tokens(rng, TGT_VOCAB, T)
    out, table = run_embedding(tokens, start)
    expect_close(
        out,
        ref_embedding(tokens, table, start),
        say("l20.embedding", start=start),
        diagnoses=_diagnoses(ref_embedding, tokens, table, start),
        hint=say("l20.embedding_hint"),
    )


@pytest.mark.points(2)
def test_encoder_matches_reference(rng):
    tokens = _tokens(rng, SRC_VOCAB, S)
    valid = VALID_LENS["1d"]
    out, params = run_encoder(tokens, valid)
    expect_close(
        out,
        ref_encoder(tokens, valid, params),
        say("l20.encoder"),
        diagnoses=_diagnoses(ref_encoder, tokens, valid, params),
        hint=say("l20.encoder_hint"),
    )


@pytest.mark.points(3)
def test_decoder_block_matches_reference(rng):
    X = rng.standard_normal((B, T, D)).astype("float32")
    enc = rng.standard_normal((B, S, D)).astype("float32")
    valid = np.array([2, 4], "int32")
    changed = X.copy()
    changed[:, -1] += 1.0
    out, kv, params, other = run_decoder_block(X, enc, valid, changed)
    ref_out, _ = ref_decoder_block(X, enc, valid, params)
    expect_close(
        out,
        ref_out,
        say("l20.decoder_block"),
        diagnoses=_diagnoses(
            ref_decoder_block, X, enc, valid, params, None, part=0
        ),
        hint=say("l20.decoder_block_hint"),
        properties=[properties.causal(other, T - 1)],
    )
    expect_close(kv, X, say("l20.decoder_block_cache"))


@pytest.mark.points(2)
def test_decoder_is_causal(rng):
    tokens = _tokens(rng, TGT_VOCAB, T)
    changed = tokens.copy()
    changed[:, -1] = (changed[:, -1] + 5) % TGT_VOCAB
    enc = rng.standard_normal((B, S, D)).astype("float32")
    valid = np.array([2, 4], "int32")
    full, other, params = run_decoder(tokens, enc, valid, changed)
    expect_close(
        other[:, :-1],
        full[:, :-1],
        say("l20.decoder_causal"),
        diagnoses={
            m: (
                lambda m=m: ref_decoder(changed, enc, valid, params, None, m)[
                    0
                ][:, :-1]
            )
            for m in (CAUSAL_SEES_NEXT,)
        },
        hint=say("l20.decoder_causal_hint"),
        properties=[properties.causal(full[:, :-1], T - 1)],
    )


@pytest.mark.points(3)
def test_step_by_step_decoding_with_cache_equals_full_pass(rng):
    tokens = _tokens(rng, TGT_VOCAB, T)
    enc = rng.standard_normal((B, S, D)).astype("float32")
    valid = np.array([2, 4], "int32")
    full, steps, sizes, params = run_decoder(tokens, enc, valid)
    ref_full, _ = ref_decoder(tokens, enc, valid, params)
    expect_close(
        full,
        ref_full,
        say("l20.decoder_full"),
        diagnoses=_diagnoses(
            ref_decoder, tokens, enc, valid, params, None, part=0
        ),
    )
    expect(
        sizes == [(B, T, D)] * BLOCKS,
        say("l20.cache_sizes", steps=T, expected=(B, T, D), got=sizes),
    )
    expect_close(
        np.concatenate(steps, axis=1),
        ref_full,
        say("l20.decoder_steps", steps=T),
        diagnoses=_diagnoses(ref_decoder_steps, tokens, enc, valid, params),
        properties=[same_as_full_pass(full)],
        hint=say("l20.decoder_steps_hint"),
    )


@pytest.mark.points(3)
def test_transformer_and_greedy_decode(rng):
    src = _tokens(rng, SRC_VOCAB, S)
    src_valid = np.array([5, 2], "int32")
    dec_input = _tokens(rng, TGT_VOCAB, T)
    # eos is an id the model never emits, so every row decodes all
    # num_steps steps: the cache and the argmax on a real model. Where
    # decoding stops is checked on a scripted model (next check).
    bos, eos, num_steps = 1, TGT_VOCAB, 4
    logits, params, (tokens, lengths) = run_transformer(
        src, src_valid, dec_input, bos, eos, num_steps
    )
    expect_close(
        logits,
        ref_decoder(
            dec_input,
            ref_encoder(src, src_valid, params["encoder"]),
            src_valid,
            params["decoder"],
        )[0],
        say("l20.transformer"),
        diagnoses=_diagnoses(
            lambda mistake: ref_decoder(
                dec_input,
                ref_encoder(src, src_valid, params["encoder"], mistake),
                src_valid,
                params["decoder"],
                mistake=mistake,
            )[0]
        ),
    )
    want_tokens, want_lengths = ref_greedy(
        src, src_valid, params, bos, eos, num_steps
    )
    expect_close(
        tokens,
        want_tokens,
        say("l20.greedy_tokens", bos=bos, eos=eos, steps=num_steps),
        tol=EXACT,
        diagnoses=_diagnoses(
            ref_greedy, src, src_valid, params, bos, eos, num_steps, part=0
        ),
        hint=say("l20.greedy_hint"),
    )
    expect_close(
        lengths,
        want_lengths,
        say("l20.greedy_lengths", eos=eos),
        tol=EXACT,
    )


# greedy_decode on a scripted Transformer (graders/lib/decoding.py): row b
# decodes by GREEDY_TABLES[b], P(next | the tokens fed so far, <bos>
# first), so the right tokens and each mistake's are known by hand.
A_, B_, C_, EOS_, BOS_ = range(5)
SCRIPT_VOCAB = 4  # A B C <eos>; <bos> is only ever fed
SCRIPT_NAMES = {A_: "A", B_: "B", C_: "C", EOS_: "<eos>", BOS_: "<bos>"}
GREEDY_TABLES = [
    {  #                      A    B    C   <eos>
        (BOS_,): [0.7, 0.1, 0.1, 0.1],  # -> A
        (BOS_, A_): [0.1, 0.1, 0.2, 0.6],  # -> <eos>: row 0 is "A"
        (BOS_, A_, EOS_): [0.1, 0.2, 0.5, 0.2],  # past its end -> C
        (A_,): [0.1, 0.6, 0.1, 0.2],  # A alone (no cache) -> B
        (B_,): [0.1, 0.1, 0.1, 0.7],  # B alone -> <eos>
        (BOS_, BOS_): [0.1, 0.2, 0.6, 0.1],  # <bos> fed again -> C
        (BOS_, BOS_, BOS_): [0.1, 0.1, 0.1, 0.7],  # -> <eos>
    },
    {
        (BOS_,): [0.1, 0.6, 0.1, 0.2],  # -> B
        (BOS_, B_): [0.2, 0.1, 0.5, 0.2],  # -> C
        (BOS_, B_, C_): [0.1, 0.05, 0.05, 0.8],  # -> <eos>: row 1 is "B C"
        (B_,): [0.5, 0.2, 0.2, 0.1],  # B alone (no cache) -> A
        (A_,): [0.1, 0.1, 0.1, 0.7],  # A alone -> <eos>
        (BOS_, BOS_): [0.1, 0.1, 0.1, 0.7],  # <bos> fed again -> <eos>
    },
]
E_ = EOS_


@pytest.mark.points(2)
def test_greedy_decode_on_a_scripted_model():
    """4 steps. Row 0: A (0.7), then <eos> (0.6 after <bos> A): "A",
    length 1. Row 1: B (0.6), C (0.5), <eos> (0.8 after <bos> B C): "B C",
    length 2. Both have ended after step 3, so step 4 never runs and holds
    <eos>. Mistakes: without the cache step 2 sees A alone (-> B) and B
    alone (-> A), step 3 B alone and A alone (-> <eos>, <eos>); feeding
    <bos> again, step 2 sees <bos> <bos> (-> C; -> <eos>) and step 3
    <bos> <bos> <bos> (-> <eos>); row 0 emitting past its end writes C at
    step 3; unrun steps left at 0 write A at step 4. With 2 steps, row 1
    has not ended: its length is 2, not 0."""
    tables = [plain_table(table) for table in GREEDY_TABLES]
    tokens, lengths, calls = run_scripted_greedy(tables, 4)
    seen = [
        [[BOS_], [BOS_]],
        [[BOS_, A_], [BOS_, B_]],
        [[BOS_, A_, EOS_], [BOS_, B_, C_]],
    ]
    fed = fed_histories(calls, seen, SCRIPT_NAMES)
    expect_close(
        tokens,
        np.array([[A_, E_, E_, E_], [B_, C_, E_, E_]]),
        say("l20.scripted_tokens", eos=EOS_, bos=BOS_),
        tol=EXACT,
        diagnoses={
            GREEDY_NO_CACHE: np.array([[A_, B_, E_, E_], [B_, A_, E_, E_]]),
            GREEDY_NOT_FED_BACK: np.array([[A_, C_, E_, E_], [B_, E_, E_, E_]]),
            GREEDY_AFTER_EOS: np.array([[A_, E_, C_, E_], [B_, C_, E_, E_]]),
            GREEDY_UNRUN_STEPS: np.array([[A_, E_, E_, A_], [B_, C_, E_, A_]]),
        },
        properties=[lambda _: fed],
    )
    expect_close(
        lengths,
        np.array([1, 2]),
        say("l20.scripted_lengths"),
        tol=EXACT,
    )
    tokens, lengths, _ = run_scripted_greedy(tables, 2)
    expect_close(
        tokens,
        np.array([[A_, E_], [B_, C_]]),
        say("l20.scripted_short_tokens"),
        tol=EXACT,
    )
    expect_close(
        lengths,
        np.array([1, 2]),
        say("l20.scripted_short_lengths"),
        tol=EXACT,
        diagnoses={GREEDY_UNFINISHED_LENGTH: np.array([1, 0])},
    )


CONTRACT_LAYERS = [
    "ffn",
    "addnorm",
    "encoder_block",
    "decoder_block",
    "encoder",
    "decoder",
]
CONTRACT_SHAPES = {  # output, on keras.Input (see run_contract), trainable
    "ffn": ((B, T, D), None, 4),
    "addnorm": ((B, T, D), None, 2),
    "encoder_block": ((B, S, D), None, 4 + 2 + 4 + 2),
    "decoder_block": ((B, T, D), None, 4 + 2 + 4 + 2 + 4 + 2),
    "encoder": ((B, S, D), (None, None, D), 1 + 12),  # one block
    "decoder": ((B, T, TGT_VOCAB), (None, None, TGT_VOCAB), 3 + 18),
}


MHA_PARTS = ("query", "key", "value", "attention_output")
"""Keras MultiHeadAttention's sublayers, in `ref_attention`'s order."""


def _contract_params(facts, kind):
    """The weights the contract's layer was built with, read from its named
    sublayers, as the references take them (see `_encoder_params`)."""

    def ffn(prefix):
        return {f"{prefix}ffn/dense{i}": ("kernel", "bias") for i in (1, 2)}

    def parts(decoder):
        if decoder:
            attentions = ("self_attention", "cross_attention")
            return attentions, ("addnorm1", "addnorm2", "addnorm3")
        return ("attention",), ("addnorm1", "addnorm2")

    def block_layout(prefix, decoder):
        attentions, norms = parts(decoder)
        layout = {
            f"{prefix}{a}/{part}": ("kernel",)
            for a in attentions
            for part in MHA_PARTS
        }
        layout |= ffn(prefix)
        return layout | {prefix + n: ("gamma", "beta") for n in norms}

    def block_params(w, prefix, decoder):
        attentions, norms = parts(decoder)
        params = {
            a: [w[f"{prefix}{a}/{part}"][0] for part in MHA_PARTS]
            for a in attentions
        }
        params["ffn"] = w[f"{prefix}ffn/dense1"] + w[f"{prefix}ffn/dense2"]
        return params | {n: w[prefix + n] for n in norms}

    if kind == "ffn":
        dense = {f"dense{i}": ("kernel", "bias") for i in (1, 2)}
        w = contract_sublayer_weights(facts, kind, dense)
        return w["dense1"] + w["dense2"]
    if kind == "addnorm":
        layout = {"": ("gamma", "beta")}
        return contract_sublayer_weights(facts, kind, layout)[""]
    decoder = kind.startswith("decoder")
    if kind.endswith("block"):
        w = contract_sublayer_weights(facts, kind, block_layout("", decoder))
        return block_params(w, "", decoder)
    layout = {"embedding/token_embedding": ("embeddings",)}
    layout |= block_layout("block0/", decoder)
    if decoder:
        layout["dense"] = ("kernel", "bias")
    w = contract_sublayer_weights(facts, kind, layout)
    params = {
        "embedding": w["embedding/token_embedding"][0],
        "blocks": [block_params(w, "block0/", decoder)],
    }
    return params | ({"dense": w["dense"]} if decoder else {})


def contract_expected(facts, kind, rng_seed):
    """The judge's output of the contract's layer (dropout off: called
    without training) on its inputs and the weights it was built with."""
    X, enc, src, tgt = _contract_inputs(rng_seed)
    lens = VALID_LENS["1d"]
    p = _contract_params(facts, kind)
    return {
        "ffn": lambda: ref_ffn(X, p),
        "addnorm": lambda: ref_addnorm(X, X, p),
        "encoder_block": lambda: ref_encoder_block(enc, lens, p),
        "decoder_block": lambda: ref_decoder_block(X, enc, lens, p)[0],
        "encoder": lambda: ref_encoder(src, lens, p),
        "decoder": lambda: ref_decoder(tgt, enc, lens, p)[0],
    }[kind]()


@pytest.mark.parametrize("kind", CONTRACT_LAYERS)
def test_keras_layer_contract(kind):
    facts = run_contract(kind, 11)
    shape, symbolic, weights = CONTRACT_SHAPES[kind]
    expect_layer_contract(
        facts,
        kind,
        output_shape=shape,
        symbolic_shape=symbolic,
        on=say("l20.symbolic_on"),
        trainable=weights,
        expected=contract_expected(facts, kind, 11),
    )
    expect_value_errors(facts["errors"], quoted=True)


@pytest.mark.points(2)
def test_encoder_block_gradient_matches_centred_differences(rng):
    """A small float64 block: X (1, 3, 8), 2 heads of 4, FFN 5. Its
    output must match the float64 reference to 1e-9 (a sublayer computing
    in float32 misses by ~1e-7), its tape gradient the centred differences
    of that reference."""
    X = rng.standard_normal((1, 3, 8))
    valid = np.array([2], "int32")
    probe_weights = rng.standard_normal((1, 3, 8))
    got = run_gradient(X, valid, probe_weights)
    what = say("l20.gradient")
    narrow = ", ".join(
        say("l20.narrow", name=name, dtype=dtype)
        for name, dtype in got["narrow"]
    )
    hint = say("l20.narrow_hint", narrow=narrow)
    if "error" in got:
        error = got["error"].splitlines()[0]
        fail([say("l20.raised", what=what, error=error), hint])
    expect_close(
        got["output"],
        ref_encoder_block(X, valid, got["params"]),
        say("l20.float64_output"),
        tol=F64,
        diagnoses=_diagnoses(ref_encoder_block, X, valid, got["params"]),
        hint=hint if got["narrow"] else "",
    )
    expect_gradient(
        got["gradient"],
        ref_block_gradient(X, valid, got["params"], probe_weights),
        what,
        tol=GRAD,
        hint=hint if got["narrow"] else "",
    )
