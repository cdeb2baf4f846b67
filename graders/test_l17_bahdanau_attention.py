"""Grader for lesson 17: the Bahdanau attention decoder.

Sizes: B=2 sequences, T=3 target steps, S=5 source steps, E=7 embedding,
Hd=8 hidden, L=2 GRU layers, V=11 target words. Every axis has its own size,
so a transpose cannot pass unnoticed.
Conventions: the query of step t is the previous state of the top GRU layer;
the first GRU layer's input is [context, embedding]; GRU cells are Keras's
with reset_after=False (blocks [z | r | h]); the state is batch-first
(B, L, Hd); source positions >= valid_len get weight exactly 0.
"""

from functools import partial

import numpy as np
import pytest

from graders.lib import properties
from graders.lib.contract import contract_sublayer_weights
from graders.lib.contract import expect_dropout_only_in_training
from graders.lib.contract import expect_layer_contract
from graders.lib.contract import expect_value_errors
from graders.lib.dropout import nearest_dropped
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import mistake_outputs
from graders.lib.messages import say
from graders.lib.probes import dropout_outputs
from graders.lib.probes import layer_contract
from graders.lib.probes import value_errors
from graders.lib.references import sigmoid
from graders.lib.references import softmax
from m2t.grading.probe import Lesson

lesson = Lesson("l17_bahdanau_attention")
B, T, S, E, HD, L, V = 2, 3, 5, 7, 8, 2, 11
VALID = np.array([2, 4], dtype="int32")

# ---------------------------------------------------------------- mistakes
QUERY_CURRENT_STATE = Mistake(
    "query_current_state",
    "the attention of step t uses the state step t computes (s_t) as its "
    "query: Bahdanau's query is the previous state s_{t-1}, which decides "
    "the context that produces step t.",
)
QUERY_BOTTOM_LAYER = Mistake(
    "query_bottom_layer",
    "the query is the bottom GRU layer's state: use the top layer's, "
    "hidden[:, -1].",
)
NO_SOURCE_MASK = Mistake(
    "no_source_mask",
    "the attention ignores enc_valid_lens, so the decoder attends to the "
    "source's padding.",
)
CONCAT_ORDER_SWAPPED = Mistake(
    "concat_order_swapped",
    "the GRU input is [embedding, context]; this course (and d2l) "
    "concatenates the context first: [context, embedding].",
)
DROPPED_WEIGHTS_RETURNED = Mistake(
    "dropped_weights_returned",
    "attend returns the attention weights after dropout; return them "
    "before it, so that they sum to 1 in training too (only the context "
    "uses the dropped ones).",
)
DROPOUT_ON_CONTEXT = Mistake(
    "dropout_on_context",
    "dropout acts on the context vector; it belongs on the attention "
    "weights: context = Σ_j Dropout(weights)_j values_j.",
)
MISTAKES = (
    QUERY_CURRENT_STATE,
    QUERY_BOTTOM_LAYER,
    NO_SOURCE_MASK,
    CONCAT_ORDER_SWAPPED,
    DROPPED_WEIGHTS_RETURNED,
    DROPOUT_ON_CONTEXT,
)


# --------------------------------------------------- float64 references


@reference
def ref_gru(x, h, kernel, recurrent, bias):
    """One GRU step, Keras layout, reset gate before the recurrent matmul."""
    u = h.shape[-1]
    xz, xr, xh = np.split(x @ kernel + bias, 3, axis=-1)
    z = sigmoid(xz + h @ recurrent[:, :u])
    r = sigmoid(xr + h @ recurrent[:, u : 2 * u])
    candidate = np.tanh(xh + (r * h) @ recurrent[:, 2 * u :])
    return z * h + (1 - z) * candidate


@reference
def ref_attend(query, enc, valid_lens, p, mistake=None):
    """(context (B, Hd), weights (B, S)) of additive attention."""
    features = np.tanh((query @ p["W_q"])[:, None, :] + enc @ p["W_k"])
    scores = (features @ p["w_v"])[..., 0]  # (B, S)
    if valid_lens is None or mistake is NO_SOURCE_MASK:
        weights = softmax(scores)
    else:
        keep = np.arange(scores.shape[-1]) < np.asarray(valid_lens)[:, None]
        weights = softmax(np.where(keep, scores, -1e9)) * keep
    return np.einsum("bs,bsh->bh", weights, enc), weights


@reference
def ref_decoder(tokens, enc, hidden, valid_lens, p, mistake=None):
    """(logits (B, T, V), final state (B, L, Hd), weights (B, T, S))."""
    enc = np.asarray(enc, np.float64)
    layers = np.shape(hidden)[1]  # L, or another depth
    states = [np.asarray(hidden[:, i], np.float64) for i in range(layers)]
    embedded = np.asarray(p["embedding"], np.float64)[tokens]  # (B, T, E)
    outputs, all_weights = [], []
    for t in range(tokens.shape[1]):
        query = states[0 if mistake is QUERY_BOTTOM_LAYER else -1]
        context, weights = ref_attend(query, enc, valid_lens, p, mistake)
        parts = [context, embedded[:, t]]
        if mistake is CONCAT_ORDER_SWAPPED:
            parts = parts[::-1]
        x = np.concatenate(parts, axis=-1)
        for i in range(layers):
            x = ref_gru(x, states[i], *p["gru"][i])
            states[i] = x
        if mistake is QUERY_CURRENT_STATE:
            _, weights = ref_attend(states[-1], enc, valid_lens, p, mistake)
        outputs.append(x)
        all_weights.append(weights)
    kernel, bias = p["dense"]
    logits = np.stack(outputs, axis=1) @ kernel + bias
    return logits, np.stack(states, axis=1), np.stack(all_weights, axis=1)


_diagnoses = partial(mistake_outputs, mistakes=MISTAKES)


# ------------------------------------------------------------------ probes
def _randomize(layer, seed):
    """Random weights with unit-variance outputs (biases near 0)."""
    rng = np.random.default_rng(seed)
    for w in layer.weights:
        shape = tuple(w.shape)
        if w.name == "bias":
            value = 0.2 * rng.standard_normal(shape)
        elif w.name == "embeddings":
            value = rng.standard_normal(shape)
        else:
            value = rng.standard_normal(shape) / np.sqrt(shape[0])
        w.assign(value.astype(w.dtype))


def _params(dec):
    def arrays(layer):
        return [np.array(w) for w in layer.weights]

    return {
        "embedding": np.array(dec.embedding.embeddings),
        "W_q": np.array(dec.W_q.kernel),
        "W_k": np.array(dec.W_k.kernel),
        "w_v": np.array(dec.w_v.kernel),
        "gru": [arrays(cell) for cell in dec.cells],
        "dense": arrays(dec.dense),
    }


def _decoder(m, tokens, enc, hidden, valid_lens, dropout=0.0):
    layers = int(hidden.shape[1])  # L, or another depth
    dec = m.Seq2SeqAttentionDecoder(V, E, HD, layers, dropout=dropout)
    dec(tokens, enc, hidden, valid_lens)
    _randomize(dec, 1)
    return dec


@lesson.probe
def run_decoder(m, tokens, enc, hidden, valid_lens):
    dec = _decoder(m, tokens, enc, hidden, valid_lens)
    logits, state, weights = dec(tokens, enc, hidden, valid_lens)
    return logits, state, weights, _params(dec)


@lesson.probe
def run_changed_token(m, tokens, changed, enc, hidden, valid_lens):
    dec = _decoder(m, tokens, enc, hidden, valid_lens)
    first = dec(tokens, enc, hidden, valid_lens)
    return first, dec(changed, enc, hidden, valid_lens), _params(dec)


@lesson.probe
def run_steps(m, tokens, enc, hidden, valid_lens, longer):
    """The full pass; one token at a time, passing the state on; and the
    same layer on a longer target."""
    dec = _decoder(m, tokens, enc, hidden, valid_lens)
    full = dec(tokens, enc, hidden, valid_lens)
    state, steps = hidden, []
    for t in range(tokens.shape[1]):
        logits, state, _ = dec(tokens[:, t : t + 1], enc, state, valid_lens)
        steps.append(logits)
    longer_logits = dec(longer, enc, hidden, valid_lens)[0]
    return full, steps, state, longer_logits, _params(dec)


@lesson.probe
def run_dropout(m, tokens, enc, hidden, valid_lens):
    dec = _decoder(m, tokens, enc, hidden, valid_lens, dropout=0.5)
    outputs = dropout_outputs(
        lambda training: dec(
            tokens, enc, hidden, valid_lens, training=training
        )[0]
    )
    return outputs, _params(dec)


@lesson.probe
def run_attend_training(m, tokens, enc, hidden, valid_lens):
    """attend of the top layer's state, dropout=0.5, training=True."""
    dec = _decoder(m, tokens, enc, hidden, valid_lens, dropout=0.5)
    context, weights = dec.attend(
        hidden[:, -1], dec.W_k(enc), enc, valid_lens, training=True
    )
    return context, weights, _params(dec)


@lesson.probe
def run_contract(m, tokens, enc, hidden, valid_lens):
    facts = layer_contract(
        lambda: m.Seq2SeqAttentionDecoder(V, E, HD, L, dropout=0.1),
        [tokens, enc, hidden, valid_lens],
        symbolic=[(None,), (None, HD), (L, HD), None],
    )
    facts["errors"] = value_errors(
        {
            "num_hiddens": lambda: m.Seq2SeqAttentionDecoder(V, E, 0),
            "num_layers": lambda: m.Seq2SeqAttentionDecoder(V, E, HD, 1.5),
            "dropout": lambda: m.Seq2SeqAttentionDecoder(V, E, HD, dropout=1.0),
        }
    )
    return facts


# ------------------------------------------------------------------ inputs
def _inputs(rng, steps=T):
    tokens = rng.integers(0, V, (B, steps)).astype("int32")
    enc = rng.standard_normal((B, S, HD)).astype("float32")
    hidden = rng.standard_normal((B, L, HD)).astype("float32")
    return tokens, enc, hidden


# ------------------------------------------------------------------ checks
@pytest.mark.points(4)
@pytest.mark.parametrize("masked", [True, False], ids=["valid_lens", "no_mask"])
def test_decoder_matches_reference(rng, masked):
    tokens, enc, hidden = _inputs(rng)
    valid = VALID if masked else None
    logits, state, weights, params = run_decoder(tokens, enc, hidden, valid)
    args = (tokens, enc, hidden, valid, params)
    ref_logits, ref_state, ref_weights = ref_decoder(*args)
    expect_close(
        weights,
        ref_weights,
        say("l17.weights"),
        diagnoses=_diagnoses(ref_decoder, *args, part=2),
        hint=say("l17.weights_hint"),
        properties=[properties.rows_sum_to_one()]
        + ([properties.masked_keys(valid)] if masked else []),
    )
    expect_close(
        logits,
        ref_logits,
        say("l17.logits"),
        diagnoses=_diagnoses(ref_decoder, *args, part=0),
        hint=say("l17.logits_hint"),
    )
    expect_close(
        state,
        ref_state,
        say("l17.final_state"),
        diagnoses=_diagnoses(ref_decoder, *args, part=1),
    )


def test_three_layers_query_the_top_one(rng):
    """With 3 layers the query is still the top layer's state, row -1 (a
    decoder that hard-codes row 1, right for L=2, fails here)."""
    tokens, enc, _ = _inputs(rng)
    hidden = rng.standard_normal((B, 3, HD)).astype("float32")
    logits, state, weights, params = run_decoder(tokens, enc, hidden, VALID)
    args = (tokens, enc, hidden, VALID, params)
    ref_logits, ref_state, ref_weights = ref_decoder(*args)
    expect_close(
        weights,
        ref_weights,
        say("l17.deep_weights"),
        diagnoses=_diagnoses(ref_decoder, *args, part=2),
        hint=say("l17.deep_hint"),
    )
    expect_close(
        logits,
        ref_logits,
        say("l17.deep_logits"),
        diagnoses=_diagnoses(ref_decoder, *args, part=0),
    )


def test_masked_source_positions_get_zero_weight(rng):
    tokens, enc, hidden = _inputs(rng)
    _, _, weights, params = run_decoder(tokens, enc, hidden, VALID)
    weights = np.asarray(weights, np.float64)
    masked = np.arange(S)[None, None, :] >= VALID[:, None, None]
    masked = np.broadcast_to(masked, weights.shape)
    expect(
        np.all(weights[masked] == 0.0)
        and np.allclose(weights.sum(-1), 1.0, atol=1e-5),
        say(
            "l17.masked",
            valid=VALID.tolist(),
            largest=f"{np.abs(weights[masked]).max():.3g}",
            sums=np.round(weights.sum(-1), 4).tolist(),
        ),
        got=weights,
        diagnoses=_diagnoses(
            ref_decoder, tokens, enc, hidden, VALID, params, part=2
        ),
    )


@pytest.mark.points(2)
def test_query_is_the_previous_state(rng):
    """Changing the token at step 1 changes nothing at step 0, and leaves the
    attention of step 1 alone (its query s_0 came before the token); the
    attention of step 2 does change."""
    tokens, enc, hidden = _inputs(rng)
    changed = tokens.copy()
    changed[:, 1] = (changed[:, 1] + 3) % V
    (logits, _, weights), (logits2, _, weights2), params = run_changed_token(
        tokens, changed, enc, hidden, VALID
    )
    moved = np.abs(weights2 - weights).astype(np.float64).max(axis=(0, 2))
    expect_close(
        logits2[:, 0],
        logits[:, 0],
        say("l17.step0_logits"),
    )
    expect(
        moved[0] <= 1e-6 and moved[1] <= 1e-6 and moved[2] > 1e-4,
        say("l17.query_previous", moved=np.round(moved, 6).tolist()),
        got=weights2,
        diagnoses=_diagnoses(
            ref_decoder, changed, enc, hidden, VALID, params, part=2
        ),
    )


@pytest.mark.points(2)
def test_step_by_step_equals_full_pass_and_any_length(rng):
    tokens, enc, hidden = _inputs(rng)
    longer = rng.integers(0, V, (B, 7)).astype("int32")
    (logits, state, _), steps, step_state, long_logits, params = run_steps(
        tokens, enc, hidden, VALID, longer
    )
    expect_close(
        np.concatenate(steps, axis=1),
        logits,
        say("l17.stepwise"),
    )
    expect_close(step_state, state, say("l17.stepwise_state"))
    expect_close(
        long_logits,
        ref_decoder(longer, enc, hidden, VALID, params)[0],
        say("l17.longer", steps=longer.shape[1]),
        diagnoses=_diagnoses(
            ref_decoder, longer, enc, hidden, VALID, params, part=0
        ),
        hint=say("l17.longer_hint"),
    )


def test_dropout_only_in_training(rng):
    tokens, enc, hidden = _inputs(rng)
    outputs, params = run_dropout(tokens, enc, hidden, VALID)
    expect_dropout_only_in_training(
        outputs,
        "Seq2SeqAttentionDecoder",
        dropout=say("l17.dropout_layers"),
        expected=ref_decoder(tokens, enc, hidden, VALID, params)[0],
    )


def test_layer_dropout_acts_between_layers_only(rng):
    """With zero encoder outputs the context is 0 whatever the attention
    dropout does, so only the dropout between GRU layers can act: none in
    a one-layer decoder (its input [c_t, e(y)] is never dropped), some in
    a two-layer one."""
    tokens, enc, _ = _inputs(rng)
    enc = np.zeros_like(enc)
    for layers in (1, 2):
        hidden = rng.standard_normal((B, layers, HD)).astype("float32")
        (first, _, trained), params = run_dropout(tokens, enc, hidden, VALID)
        expect_close(
            first,
            ref_decoder(tokens, enc, hidden, VALID, params)[0],
            say("contract.inference_value", name=f"{layers}-layer decoder"),
        )
        if layers == 1:
            expect_close(
                trained,
                first,
                say("l17.one_layer_dropout"),
                hint=say("l17.one_layer_hint"),
            )
        else:
            expect(
                not np.allclose(trained, first),
                say("l17.two_layer_dropout"),
            )


@pytest.mark.points(2)
def test_dropout_acts_on_the_attention_weights(rng):
    """dropout=0.5, training: attend returns the weights before the
    dropout (rows sum to 1), and its context is Σ_j Dropout(weights)_j
    values_j for some keep-mask of each row's keys."""
    tokens, enc, hidden = _inputs(rng)
    context, weights, params = run_attend_training(tokens, enc, hidden, VALID)
    query = np.asarray(hidden[:, -1], np.float64)
    values = np.asarray(enc, np.float64)
    ref_context, ref_weights = ref_attend(query, values, VALID, params)
    expect_close(
        weights,
        ref_weights,
        say("l17.attend_weights"),
        diagnoses={
            DROPPED_WEIGHTS_RETURNED: lambda: nearest_dropped(
                weights, ref_weights, 0.5
            )
        },
    )
    expect_close(
        context,
        nearest_dropped(
            context,
            ref_weights,
            0.5,
            then=lambda d: np.einsum("bms,bsh->bmh", d, values),
        ),
        say("l17.attend_context"),
        diagnoses={
            DROPOUT_ON_CONTEXT: lambda: nearest_dropped(
                np.asarray(context)[..., None], ref_context[..., None], 0.5
            )[..., 0]
        },
        hint=say("l17.attend_hint"),
    )


def test_keras_layer_contract(rng):
    tokens, enc, hidden = _inputs(rng)
    facts = run_contract(tokens, enc, hidden, VALID)
    name = "Seq2SeqAttentionDecoder"
    # bound to the reference on the weights the layer was built with, read
    # from its named sublayers
    gru = ("kernel", "recurrent_kernel", "bias")
    layout = {"embedding": ("embeddings",), "W_q": ("kernel",)}
    layout |= {"W_k": ("kernel",), "w_v": ("kernel",)}
    layout |= {f"gru{i}": gru for i in range(L)} | {"dense": ("kernel", "bias")}
    w = contract_sublayer_weights(facts, name, layout)
    params = {k: w[k][0] for k in ("embedding", "W_q", "W_k", "w_v")}
    params |= {"gru": [w[f"gru{i}"] for i in range(L)], "dense": w["dense"]}
    expect_layer_contract(
        facts,
        name,
        output_shape=(B, T, V),
        symbolic_shape=(None, None, V),
        on=say("l17.symbolic_on"),
        trainable=1 + 3 + 3 * L + 2,
        detail=say("l17.trainable_detail"),
        expected=ref_decoder(tokens, enc, hidden, VALID, params)[0],
    )
    expect_value_errors(facts["errors"], quoted=True)
