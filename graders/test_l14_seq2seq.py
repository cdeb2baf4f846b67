"""Grader for lesson 14: sequence to sequence learning.

Sizes: B=2 sentences, S=5 source steps, T=3 target steps, E=4 embedding,
U=6 hidden units, L=2 layers, a source vocabulary of 7 and a target
vocabulary of V=11; every axis has its own size.
The encoder and decoder are checked against a float64 NumPy GRU (Keras's
reset_after=True form, as keras.layers.GRU); the searches run on scripted
decoders (tables of next-token probabilities) whose best answers the judge
knows, among them d2l's beam-search example (0.048 vs 0.054).
Conventions: the decoder's context is the encoder's top-layer final state
at every step; the loss is the sum over valid tokens divided by their
number; beam search scores sum(log p) / L**0.75, L counting the '<eos>'.
"""

import itertools
from functools import partial

import numpy as np
import pytest

from graders.lib.contract import centred_differences
from graders.lib.contract import contract_weights
from graders.lib.contract import expect_gradient
from graders.lib.contract import expect_layer_contract
from graders.lib.contract import expect_value_errors
from graders.lib.conventions import book_vs_course
from graders.lib.decoding import next_log_probs
from graders.lib.decoding import plain_table
from graders.lib.decoding import same_as_full_pass
from graders.lib.decoding import scripted_step
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import expect_shape
from graders.lib.judge import fail
from graders.lib.judge import mistake_outputs
from graders.lib.judge import stack_same_shape
from graders.lib.messages import say
from graders.lib.probes import build_on_first_step
from graders.lib.probes import layer_contract
from graders.lib.probes import tape_gradient
from graders.lib.probes import value_errors
from graders.lib.references import bleu
from graders.lib.references import sigmoid
from graders.lib.tolerances import EXACT
from graders.lib.tolerances import GRAD
from m2t.grading.probe import Lesson

lesson = Lesson("l14_seq2seq")
B, S, T, E, U, L = 2, 5, 3, 4, 6, 2
V_SRC, V = 7, 11
BOS_ID = 1  # target-side ids used with the real layers

# ---------------------------------------------------------------- mistakes
CONTEXT_FROM_DECODER = Mistake(
    "context_from_decoder_state",
    "the context is read from the decoder's current state, so it drifts "
    "from step to step when decoding one token at a time: it must stay the "
    "encoder's top-layer final state (carry it in the state unchanged).",
)
NOT_SHIFTED = Mistake(
    "teacher_forcing_not_shifted",
    "the decoder's input is the target itself, so it can copy the token it "
    "must predict: feed <bos>, y_1, ..., y_{T-1} (the target shifted right).",
)
MASK_OFF_BY_ONE = Mistake(
    "sequence_mask_off_by_one",
    "the position at index valid_len is kept: valid positions are 0 .. "
    "valid_len - 1 (compare with <, not <=).",
)
LOSS_NOT_MASKED = Mistake(
    "loss_not_masked",
    "the padding positions are summed into the loss: multiply the "
    "per-token cross-entropy by the sequence mask before summing.",
)
LOSS_EMPTY_NAN = Mistake(
    "loss_nan_without_valid_tokens",
    "the loss divides by the number of valid tokens even when there is "
    "none, so a batch of empty targets gives 0 / 0 = NaN; divide by "
    "max(count, 1): such a batch costs 0.",
)
LOSS_MEAN_ALL = Mistake(
    "loss_mean_over_all_positions",
    "the masked sum is divided by B*T, every position: divide by the number "
    "of valid tokens, so the padding does not dilute the loss.",
)
NO_BREVITY = Mistake(
    "bleu_no_brevity_penalty",
    "BLEU lacks the brevity penalty exp(min(0, 1 - len_label/len_pred)), "
    "so a short prediction with high precision scores too well.",
)
BREVITY_INVERTED = Mistake(
    "bleu_brevity_penalty_inverted",
    "the brevity penalty has its lengths swapped: it is exp(min(0, 1 - "
    "len_label/len_pred)), which punishes a prediction SHORTER than the "
    "label, never a longer one.",
)
NO_CLIPPING = Mistake(
    "bleu_no_clipping",
    "n-gram matches are not clipped: a label n-gram may match at most as "
    "many times as it occurs in the label (decrement its count).",
)
NO_LENGTH_NORM = Mistake(
    "beam_no_length_normalisation",
    "the final choice uses the raw sum of log-probabilities, which favours "
    "short sequences: divide by L**alpha (alpha = 0.75).",
)
GREEDY_NO_STOP = Mistake(
    "greedy_not_stopping_at_eos",
    "greedy decoding goes on after '<eos>': stop at '<eos>' and leave it "
    "out of the output.",
)
GREEDY_STATE = Mistake(
    "greedy_state_not_carried",
    "greedy decoding calls step_fn with the initial state at every step, so "
    "the decoder forgets the tokens it has written: feed each step the "
    "state the previous step returned.",
)
BEAM_STATE = Mistake(
    "beam_state_not_carried",
    "beam search extends every beam from the initial decoder state, so a "
    "beam forgets its own tokens: keep each beam's state beside its tokens "
    "and step from it.",
)
NOT_PRUNED = Mistake(
    "beam_not_pruned_across_beams",
    "every beam keeps its own beam_size best extensions, so the search "
    "holds beam_size**t hypotheses: pool the extensions of all the beams "
    "and keep the beam_size best of them.",
)
IGNORES_OPEN = Mistake(
    "beam_final_ignores_open",
    "the final pick looks only at the finished hypotheses: those still "
    "open at max_len compete too, by the same sum(log p) / L**alpha.",
)
START_AT_ONE = Mistake(
    "beam_score_starts_at_one",
    "the search starts from a score of 1, a product's start, but the score "
    "is a sum of log-probabilities, which starts at 0: the final pick "
    "divides that extra 1 by L**alpha too, so it favours short hypotheses.",
)
SHORT_BLEU = Mistake(
    "bleu_short_prediction_divides_by_zero",
    book_vs_course(
        "bleu divides by zero for a prediction shorter than k words",
        "(d2l-zh) divides by len_pred - n + 1, which is 0 once n exceeds the "
        "prediction's length",
        "scores a prediction shorter than k words 0.0: return it before the "
        "n-gram loop",
        "such a prediction has no n-grams of length k, so it matches none",
    ),
)
MISTAKES = (
    CONTEXT_FROM_DECODER,
    NOT_SHIFTED,
    MASK_OFF_BY_ONE,
    LOSS_NOT_MASKED,
    LOSS_MEAN_ALL,
    LOSS_EMPTY_NAN,
    NO_BREVITY,
    BREVITY_INVERTED,
    NO_CLIPPING,
    NO_LENGTH_NORM,
    GREEDY_NO_STOP,
    GREEDY_STATE,
    BEAM_STATE,
    NOT_PRUNED,
    IGNORES_OPEN,
    START_AT_ONE,
    SHORT_BLEU,
)


_diagnoses = partial(mistake_outputs, mistakes=MISTAKES, skip_right=True)
"""A mistake that gives the right answer here is left out."""


# ----------------------------------------- float64 references: the model


@reference
def ref_gru(x, h, kernel, recurrent, bias):
    """Keras GRU (reset_after=True): x (B, T, D), h (B, U) -> (B, T, U), h."""
    outputs = []
    for t in range(x.shape[1]):
        x_z, x_r, x_h = np.split(x[:, t] @ kernel + bias[0], 3, axis=-1)
        h_z, h_r, h_h = np.split(h @ recurrent + bias[1], 3, axis=-1)
        z, r = sigmoid(x_z + h_z), sigmoid(x_r + h_r)
        h = z * h + (1.0 - z) * np.tanh(x_h + r * h_h)
        outputs.append(h)
    return np.stack(outputs, axis=1), h


@reference
def ref_encoder(X, weights):
    """-> (outputs (B, S, U), [L x (B, U)])."""
    w = [np.asarray(a, np.float64) for a in weights]
    x = w[0][np.asarray(X)]  # (B, S, E)
    states = []
    for i in range(L):
        x, h = ref_gru(x, np.zeros((x.shape[0], U)), *w[1 + 3 * i : 4 + 3 * i])
        states.append(h)
    return x, states


@reference
def ref_decoder(Y, states, context, weights, stepwise=False, mistake=None):
    """-> (logits (B, T, V), [L x (B, U)]); stepwise feeds one step at a
    time, carrying the state, as prediction does."""
    w = [np.asarray(a, np.float64) for a in weights]
    Y = np.asarray(Y)
    states = [np.asarray(s, np.float64) for s in states]
    context = np.asarray(context, np.float64)
    chunks = [Y[:, t : t + 1] for t in range(Y.shape[1])] if stepwise else [Y]
    logits = []
    for chunk in chunks:
        ctx = states[-1] if mistake is CONTEXT_FROM_DECODER else context
        x = w[0][chunk]  # (B, t, E)
        x = np.concatenate(
            [x, np.repeat(ctx[:, None], chunk.shape[1], axis=1)], axis=-1
        )
        new_states = []
        for i in range(L):
            x, h = ref_gru(x, states[i], *w[1 + 3 * i : 4 + 3 * i])
            new_states.append(h)
        states = new_states
        logits.append(x @ w[-2] + w[-1])
    return np.concatenate(logits, axis=1), states


@reference
def ref_decoder_gradient(Y, states, context, weights, probe_weights):
    """d sum(logits * probe_weights) / d(context) (B, U): centred
    differences of the float64 `ref_decoder`."""
    return centred_differences(
        lambda c: np.sum(ref_decoder(Y, states, c, weights)[0] * probe_weights),
        context,
    )


# ------------------------------------ float64 references: loss and BLEU
@reference
def ref_sequence_mask(X, valid_len, value=0.0, mistake=None):
    X = np.asarray(X, np.float64)
    idx = np.arange(X.shape[1])[None, :]
    lens = np.asarray(valid_len)[:, None]
    keep = idx <= lens if mistake is MASK_OFF_BY_ONE else idx < lens
    keep = keep.reshape(keep.shape + (1,) * (X.ndim - 2))
    return np.where(keep, X, value)


@reference
def ref_loss(labels, logits, valid_len, mistake=None):
    logits = np.asarray(logits, np.float64)
    shifted = logits - logits.max(-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    ce = -np.take_along_axis(log_p, np.asarray(labels)[..., None], -1)[..., 0]
    weights = ref_sequence_mask(np.ones_like(ce), valid_len, mistake=mistake)
    total = ce.sum() if mistake is LOSS_NOT_MASKED else (ce * weights).sum()
    if mistake is LOSS_MEAN_ALL:
        return total / ce.size
    if mistake is LOSS_EMPTY_NAN:
        with np.errstate(invalid="ignore"):
            return total / weights.sum()
    return total / max(weights.sum(), 1.0)


@reference
def ref_loss_gradient(labels, logits, valid_len, mistake=None):
    """d(loss)/d(logits) (B, T, V): centred differences of the float64
    `ref_loss`, with `mistake` or without."""
    return centred_differences(
        lambda z: ref_loss(labels, z, valid_len, mistake=mistake), logits
    )


@reference
def ref_teacher_forcing(Y, bos_id, mistake=None):
    Y = np.asarray(Y)
    if mistake is NOT_SHIFTED:
        return Y
    return np.concatenate([np.full((Y.shape[0], 1), bos_id), Y[:, :-1]], 1)


@reference
def ref_bleu(pred, label, k=2, mistake=None):
    score = bleu(
        pred,
        label,
        k,
        brevity_penalty=mistake not in (NO_BREVITY, BREVITY_INVERTED),
        clip=mistake is not NO_CLIPPING,
    )
    if mistake is BREVITY_INVERTED and len(pred.split()) >= k:
        ratio = len(pred.split()) / len(label.split())
        score *= np.exp(min(0.0, 1.0 - ratio))
    return float(score)


@reference
def ref_bleu_pair(cases, mistake=None):
    """BLEU of each (prediction, label, k) of `cases`, as one array."""
    return np.array([ref_bleu(*case, mistake=mistake) for case in cases])


# ------------------------------- scripted decoders and reference searches
A_, B_, C_, EOS, BOS = 0, 1, 2, 3, 4  # scripted tokens: A, B, C, <eos>
NAMES = "ABC"

D2L_TABLE = {  # d2l's beam-search figures: P(next | prefix)
    (): [0.5, 0.2, 0.2, 0.1],
    (A_,): [0.1, 0.4, 0.3, 0.2],
    (A_, B_): [0.2, 0.2, 0.4, 0.2],
    (A_, B_, C_): [0.1, 0.1, 0.2, 0.6],
    (A_, C_): [0.1, 0.6, 0.2, 0.1],
    (A_, C_, B_): [0.1, 0.2, 0.1, 0.6],
}
LENGTH_TABLE = {  # raw log-probability prefers stopping at once
    (): [0.55, 0.03, 0.02, 0.40],
    (A_,): [0.02, 0.70, 0.08, 0.20],
    (A_, B_): [0.02, 0.08, 0.70, 0.20],
    (A_, B_, C_): [0.1, 0.1, 0.1, 0.7],
}


@reference
def ref_greedy(table, max_len, seed=None, vocab=4, mistake=None):
    prefix, out = [], []
    for _ in range(max_len):
        # Without the state, the decoder sees only the token just fed.
        seen = prefix[-1:] if mistake is GREEDY_STATE else prefix
        token = int(np.argmax(next_log_probs(table, seen, seed, vocab)))
        prefix.append(token)
        if token == EOS and mistake is not GREEDY_NO_STOP:
            break
        out.append(token)
    return out


@reference
def ref_beam(
    table, beam_size, max_len, alpha, seed=None, vocab=4, mistake=None
):
    """Beam search as beam_search's docstring states it (scores in
    float64), or with one of its mistakes."""
    start = 1.0 if mistake is START_AT_ONE else 0.0
    beams, finished = [(start, ())], []  # (sum of log p, tokens)
    for _ in range(max_len):
        candidates = []
        for score, seq in beams:
            seen = seq[-1:] if mistake is BEAM_STATE else seq
            log_p = next_log_probs(table, seen, seed, vocab)
            for token in np.argsort(-log_p, kind="stable")[:beam_size]:
                candidates.append((score + log_p[token], (*seq, int(token))))
        candidates.sort(key=lambda c: c[0], reverse=True)  # stable
        if mistake is not NOT_PRUNED:
            candidates = candidates[:beam_size]
        finished += [c for c in candidates if c[1][-1] == EOS]
        beams = [c for c in candidates if c[1][-1] != EOS]
        if not beams:
            break
    pool = (
        finished if mistake is IGNORES_OPEN and finished else finished + beams
    )
    power = 0.0 if mistake is NO_LENGTH_NORM else alpha
    _, best = max(pool, key=lambda c: c[0] / len(c[1]) ** power)
    return list(best[:-1] if best[-1] == EOS else best)


@reference
def ref_best_sequence(table, max_len, alpha, seed=None, vocab=4, mistake=None):
    """Exhaustive search: the best of every sequence ended by <eos> or
    reaching max_len, by sum(log p) / L**alpha."""
    if mistake is NO_LENGTH_NORM:
        alpha = 0.0
    best, best_score = None, -np.inf
    for length in range(1, max_len + 1):
        for seq in itertools.product(range(vocab), repeat=length):
            if EOS in seq[:-1] or (length < max_len and seq[-1] != EOS):
                continue
            log_p = sum(
                next_log_probs(table, seq[:i], seed, vocab)[seq[i]]
                for i in range(length)
            )
            score = log_p / length**alpha
            if score > best_score:
                best, best_score = list(seq), score
    return best[:-1] if best[-1] == EOS else best


def _spell(ids):
    """A scripted sequence for a message: `A B <eos>` in backticks, or the
    word for an empty one."""
    names = " ".join(NAMES[i] if i < 3 else "<eos>" for i in ids)
    return f"`{names}`" if names else say("l14.empty")


# ------------------------------------------------------------------ probes
def _build_encoder(m, X, weights, **kwargs):
    encoder = m.Seq2SeqEncoder(V_SRC, E, U, L, **kwargs)
    build_on_first_step(encoder, X)
    encoder.set_weights(weights)
    return encoder


def _build_decoder(m, Y, state, weights, **kwargs):
    decoder = m.Seq2SeqDecoder(V, E, U, L, **kwargs)
    build_on_first_step(decoder, Y, state)
    decoder.set_weights(weights)
    return decoder


@lesson.probe
def run_encoder(m, X, weights):
    outputs, states = _build_encoder(m, X, weights)(X)
    return outputs, list(states)


@lesson.probe
def run_decoder(m, Y, states, context, weights, stepwise=False):
    """The full pass and, with `stepwise`, the step-by-step pass from the
    same state."""
    decoder = _build_decoder(m, Y, (states, context), weights)
    logits, (full_states, full_context) = decoder(Y, (states, context))
    got = {
        "logits": logits,
        "states": list(full_states),
        "context": full_context,
    }
    if stepwise:
        state, steps = (states, context), []
        for t in range(Y.shape[1]):
            step_logits, state = decoder(Y[:, t : t + 1], state)
            steps.append(step_logits)
        got["step_logits"] = steps
    return got


@lesson.probe
def run_sequence_mask(m, X, valid_len, value):
    return m.sequence_mask(X, valid_len, value)


@lesson.probe
def run_loss(m, labels, logits, valid_len):
    return m.MaskedSoftmaxCELoss()(labels, logits, valid_len)


@lesson.probe
def run_loss_gradient(m, labels, logits, valid_len):
    """The tape gradient d(loss)/d(logits) (B, T, V) at float64 logits."""
    loss = m.MaskedSoftmaxCELoss()
    return tape_gradient(lambda z: loss(labels, z, valid_len), logits)


@lesson.probe
def run_teacher_forcing(m, Y, bos_id):
    return m.teacher_forcing_inputs(Y, bos_id)


@lesson.probe
def run_bleu(m, pred, label, k):
    try:
        return float(m.bleu(pred, label, k))
    except ZeroDivisionError as e:
        return {"error": f"ZeroDivisionError: {e}"}


@lesson.probe
def run_greedy(m, table, max_len, seed=None, vocab=4):
    step_fn = scripted_step(table, BOS, seed, vocab)
    return [int(t) for t in m.greedy_decode(step_fn, (), BOS, EOS, max_len)]


@lesson.probe
def run_beam(m, table, beam_size, max_len, alpha=0.75, seed=None, vocab=4):
    step_fn = scripted_step(table, BOS, seed, vocab)
    return [
        int(t)
        for t in m.beam_search(
            step_fn, (), BOS, EOS, beam_size, max_len, alpha=alpha
        )
    ]


@lesson.probe
def run_predict(m, src, enc_weights, dec_weights, max_len):
    X = np.asarray([src], dtype="int32")
    Y = np.zeros((1, 1), "int32")
    encoder = _build_encoder(m, X, enc_weights)
    outputs, states = encoder(X)
    decoder = _build_decoder(m, Y, (list(states), states[-1]), dec_weights)
    eos = V - 1
    greedy = m.predict_seq2seq(encoder, decoder, src, BOS_ID, eos, max_len)
    beam = m.predict_seq2seq(
        encoder, decoder, src, BOS_ID, eos, max_len, beam_size=1
    )
    forced = np.asarray([[BOS_ID, *greedy]], dtype="int32")
    logits, _ = decoder(forced, decoder.init_state((outputs, states)))
    return [int(t) for t in greedy], [int(t) for t in beam], logits


@lesson.probe
def run_contract(m, kind, X, Y, states, context):
    if kind == "encoder":
        facts = layer_contract(
            lambda: m.Seq2SeqEncoder(V_SRC, E, U, L, dropout=0.1),
            [X],
            symbolic=[(None,)],
            call_kwargs={"training": False},
        )
    else:
        facts = layer_contract(
            lambda: m.Seq2SeqDecoder(V, E, U, L, dropout=0.1),
            [Y, (states, context)],
            call_kwargs={"training": False},
        )
    decoder = m.Seq2SeqDecoder(V, E, U, L)
    facts["errors"] = value_errors(
        {
            "vocab_size": lambda: m.Seq2SeqEncoder(0, E, U, L),
            "embed_size": lambda: m.Seq2SeqDecoder(V, -1, U, L),
            "num_hiddens": lambda: m.Seq2SeqEncoder(V_SRC, E, 2.5, L),
            "num_layers": lambda: m.Seq2SeqDecoder(V, E, U, 0),
            "dropout": lambda: m.Seq2SeqEncoder(V_SRC, E, U, L, dropout=1.0),
            "enc_outputs": lambda: decoder.init_state((None, states[:1])),
            "valid_len": lambda: m.sequence_mask(
                np.ones((B, T)), np.ones((B, 1))
            ),
            "k": lambda: m.bleu("a b", "a b", k=0),
            "beam_size": lambda: m.beam_search(None, (), 0, 1, 0, 3),
            "max_len": lambda: m.greedy_decode(None, (), 0, 1, 0),
            "alpha": lambda: m.beam_search(None, (), 0, 1, 2, 3, alpha=-1.0),
        }
    )
    return facts


@lesson.probe
def run_decoder_gradient(m, Y, states, context, weights, probe_weights):
    """The tape gradient d sum(logits * probe_weights) / d(context) (B, U)
    of a float64 decoder."""
    import keras

    decoder = _build_decoder(m, Y, (states, context), weights, dtype="float64")

    def f(ctx):
        logits, _ = decoder(Y, (states, ctx))
        return keras.ops.sum(logits * probe_weights)

    return tape_gradient(f, context)


# ------------------------------------------------------------------ inputs
def _gru_weights(rng, d_in, scale=0.5):
    return [
        rng.standard_normal((d_in, 3 * U)) * scale,
        rng.standard_normal((U, 3 * U)) * scale,
        rng.standard_normal((2, 3 * U)) * scale,
    ]


def _encoder_weights(rng):
    weights = [rng.standard_normal((V_SRC, E))]
    for i in range(L):
        weights += _gru_weights(rng, E if i == 0 else U)
    return [w.astype("float32") for w in weights]


def _decoder_weights(rng):
    weights = [rng.standard_normal((V, E))]
    for i in range(L):
        weights += _gru_weights(rng, E + U if i == 0 else U)
    weights += [rng.standard_normal((U, V)), rng.standard_normal(V) * 0.1]
    return [w.astype("float32") for w in weights]


def _decoder_inputs(rng):
    Y = rng.integers(0, V, (B, T)).astype("int32")
    states = [
        rng.uniform(-0.9, 0.9, (B, U)).astype("float32") for _ in range(L)
    ]
    context = rng.uniform(-0.9, 0.9, (B, U)).astype("float32")
    return Y, states, context


# ------------------------------------------------------- checks: the model
@pytest.mark.points(2)
def test_encoder_matches_reference(rng):
    X = rng.integers(0, V_SRC, (B, S)).astype("int32")
    weights = _encoder_weights(rng)
    outputs, states = run_encoder(X, weights)
    expect_shape(outputs, (B, S, U), say("l14.encoder_outputs"))
    expect(
        len(states) == L,
        say("l14.encoder_state_count", layers=L, got=len(states)),
    )
    ref_outputs, ref_states = ref_encoder(X, weights)
    expect_close(
        outputs,
        ref_outputs,
        say("l14.encoder_outputs_all"),
        hint=say("l14.encoder_outputs_hint"),
    )
    expect_close(
        stack_same_shape(states, say("l14.encoder_states")),
        np.stack(ref_states),
        say("l14.encoder_states_all"),
        hint=say("l14.encoder_states_hint"),
    )


@pytest.mark.points(2)
def test_decoder_matches_reference(rng):
    Y, states, context = _decoder_inputs(rng)
    weights = _decoder_weights(rng)
    got = run_decoder(Y, states, context, weights)
    expect_shape(got["logits"], (B, T, V), say("l14.decoder_logits"))
    ref_logits, ref_states = ref_decoder(Y, states, context, weights)
    expect_close(
        got["logits"],
        ref_logits,
        say("l14.decoder_logits_all"),
        hint=say("l14.decoder_logits_hint"),
    )
    expect(
        len(got["states"]) == L,
        say("l14.decoder_state_count", layers=L, got=len(got["states"])),
    )
    expect_close(
        stack_same_shape(got["states"], say("l14.decoder_states")),
        np.stack(ref_states),
        say("l14.decoder_states_all"),
    )
    expect_close(
        got["context"],
        context,
        say("l14.context"),
        tol=EXACT,
        hint=say("l14.context_hint"),
    )


@pytest.mark.points(2)
def test_decoding_step_by_step_equals_the_full_pass(rng):
    """Prediction feeds one token at a time, carrying the state: it must
    give the same logits as one teacher-forced pass over the sequence."""
    Y, states, context = _decoder_inputs(rng)
    weights = _decoder_weights(rng)
    got = run_decoder(Y, states, context, weights, stepwise=True)
    steps = np.concatenate(got["step_logits"], axis=1)
    ref_steps, _ = ref_decoder(Y, states, context, weights, stepwise=True)
    expect_close(
        steps,
        ref_steps,
        say("l14.stepwise"),
        diagnoses=_diagnoses(
            ref_decoder,
            Y,
            states,
            context,
            weights,
            True,
            mistakes=(CONTEXT_FROM_DECODER,),
            pick=lambda out: out[0],
        ),
        properties=[same_as_full_pass(got["logits"])],
    )
    expect_close(steps, got["logits"], say("l14.stepwise_vs_full"))


def test_teacher_forcing_inputs(rng):
    Y = rng.integers(3, V, (B, 4)).astype("int32")
    got = run_teacher_forcing(Y, BOS_ID)
    expect_close(
        got,
        ref_teacher_forcing(Y, BOS_ID),
        say("l14.teacher_forcing", bos=BOS_ID, Y=Y.tolist()),
        tol=EXACT,
        diagnoses=_diagnoses(ref_teacher_forcing, Y, BOS_ID),
        hint=say("l14.teacher_forcing_hint"),
    )


def test_predict_greedy_equals_beam_of_one_on_a_model(rng):
    src = [int(i) for i in rng.integers(0, V_SRC, S)]
    greedy, beam, logits = run_predict(
        src, _encoder_weights(rng), _decoder_weights(rng), 3
    )
    expect(
        greedy == beam,
        say("l14.predict_beam_of_one", greedy=greedy, beam=beam),
    )
    stopped = len(greedy) < 3
    expected = [*greedy, V - 1] if stopped else greedy
    argmax = np.argmax(np.asarray(logits)[0], axis=-1).tolist()
    argmax = argmax[: len(expected)]  # past max_len nothing was decoded
    expect(
        argmax == expected,
        say("l14.predict_forced", expected=expected, got=argmax),
    )


# ------------------------------------------------ checks: mask and loss
def test_sequence_mask_d2l_example():
    got = run_sequence_mask(np.array([[1, 2, 3], [4, 5, 6]]), [1, 2], 0)
    expect_close(
        got,
        np.array([[1, 0, 0], [4, 5, 0]]),
        "sequence_mask([[1, 2, 3], [4, 5, 6]], [1, 2])",
        tol=EXACT,
        diagnoses=_diagnoses(
            ref_sequence_mask, [[1, 2, 3], [4, 5, 6]], [1, 2], 0
        ),
    )


def test_sequence_mask_on_three_axes(rng):
    X = rng.standard_normal((B, 4, 3)).astype("float32")
    got = run_sequence_mask(X, np.array([1, 3]), -1.0)
    expect_close(
        got,
        ref_sequence_mask(X, [1, 3], -1.0),
        "sequence_mask(X (2, 4, 3), [1, 3], value=-1)",
        tol=EXACT,
        diagnoses=_diagnoses(ref_sequence_mask, X, [1, 3], -1.0),
        hint=say("l14.mask_hint"),
    )


def _loss_inputs(rng):
    labels = rng.integers(0, V, (B, T)).astype("int32")
    logits = (rng.standard_normal((B, T, V)) * 2).astype("float32")
    return labels, logits


@pytest.mark.points(2)
@pytest.mark.parametrize(
    "valid_len",
    [[3, 1], [0, 2], [1, 0]],
    ids=["lens_3_1", "lens_0_2", "one_valid_token"],
)
def test_masked_loss_matches_reference(rng, valid_len):
    labels, logits = _loss_inputs(rng)
    valid_len = np.array(valid_len)
    got = run_loss(labels, logits, valid_len)
    expect_close(
        got,
        ref_loss(labels, logits, valid_len),
        say("l14.loss", valid_len=valid_len.tolist()),
        diagnoses=_diagnoses(ref_loss, labels, logits, valid_len),
        hint=say("l14.loss_hint"),
    )


def test_masked_loss_ignores_the_padding(rng):
    labels, logits = _loss_inputs(rng)
    valid_len = np.array([2, 1])
    padded = np.arange(T)[None, :] >= valid_len[:, None]  # (B, T)
    other_logits = logits.copy()
    other_logits[padded] = rng.standard_normal((padded.sum(), V)) * 5
    other_labels = labels.copy()
    other_labels[padded] = rng.integers(0, V, padded.sum())
    first = run_loss(labels, logits, valid_len)
    second = run_loss(other_labels, other_logits, valid_len)
    expect_close(
        second,
        first,
        say("l14.loss_padding"),
        diagnoses=_diagnoses(ref_loss, other_labels, other_logits, valid_len),
    )


def test_masked_loss_without_valid_tokens_is_zero(rng):
    """Every valid_len 0: no token to learn from, so the loss is 0 (the
    documented convention), never 0 / 0 = NaN."""
    labels, logits = _loss_inputs(rng)
    valid_len = np.array([0, 0])
    expect_close(
        run_loss(labels, logits, valid_len),
        0.0,
        say("l14.loss_empty"),
        diagnoses=_diagnoses(ref_loss, labels, logits, valid_len),
        hint=say("l14.loss_empty_hint"),
    )


def test_masked_loss_of_uniform_logits_is_log_vocab():
    """d2l's example: logits all 1 over 10 classes, valid lengths [4, 2, 0].
    Every valid token costs ln 10, so the loss is ln 10 = 2.3026 (d2l's
    per-sequence mean over steps prints [2.3026, 1.1513, 0.0000])."""
    labels = np.ones((3, 4), "int32")
    logits = np.ones((3, 4, 10), "float32")
    valid_len = np.array([4, 2, 0])
    expect_close(
        run_loss(labels, logits, valid_len),
        np.log(10.0),
        "MaskedSoftmaxCELoss(ones, ones (3, 4, 10), [4, 2, 0])",
        diagnoses=_diagnoses(ref_loss, labels, logits, valid_len),
    )


@pytest.mark.points(2)
def test_masked_loss_gradient_is_zero_on_padding(rng):
    labels, logits = _loss_inputs(rng)
    logits = logits.astype("float64")
    valid_len = np.array([2, 1])
    got = run_loss_gradient(labels, logits, valid_len)
    padded = np.arange(T)[None, :] >= valid_len[:, None]
    expect_close(
        got[padded],
        np.zeros((padded.sum(), V)),
        say("l14.padded_gradient"),
        tol=EXACT,
        diagnoses=_diagnoses(
            ref_loss_gradient,
            labels,
            logits,
            valid_len,
            pick=lambda grad: grad[padded],
        ),
        hint=say("l14.padded_gradient_hint"),
    )
    expect_gradient(
        got,
        ref_loss_gradient(labels, logits, valid_len),
        say("l14.loss_gradient"),
        tol=GRAD,
    )


# ------------------------------------------------------- checks: BLEU
BLEU_CASES = {  # (prediction, label, k)
    "perfect": ("il est calme .", "il est calme .", 2),
    "disjoint": ("a b c d", "e f g h", 2),
    "d2l_0.658": ("il est riche .", "il est calme .", 2),
    "d2l_0.447": ("je suis en retard ?", "je suis chez moi .", 2),
    "brevity": ("il est", "il est calme .", 2),
    "clipping": ("il est il est", "il est calme .", 2),
    "k3": ("le chat est sur le tapis", "le chat est sous le tapis", 3),
    "too_short": ("go", "go .", 2),
}


@pytest.mark.parametrize("case", list(BLEU_CASES), ids=str)
def test_bleu(case):
    pred, label, k = BLEU_CASES[case]
    expected = ref_bleu(pred, label, k)
    printed = {"perfect": 1.0, "disjoint": 0.0, "d2l_0.658": 0.658}
    printed["d2l_0.447"] = 0.447
    if case in printed:  # d2l's printouts, to 3 decimals
        assert round(expected, 3) == printed[case]
    got = run_bleu(pred, label, k)
    if isinstance(got, dict):
        words = len(pred.split())
        fail(
            [say("l14.bleu_raised", error=got["error"], words=words, k=k)],
            SHORT_BLEU,
        )
    expect_close(
        got,
        expected,
        f"`bleu({pred!r}, {label!r}, k={k})`",
        diagnoses=_diagnoses(ref_bleu, pred, label, k),
    )


BREVITY_PAIR = (  # a short and a long prediction of one label
    ("il est", "il est calme .", 2),
    ("il est calme . il est", "il est calme .", 2),
)


def test_bleu_brevity_penalty_punishes_only_short_predictions():
    """One prediction shorter and one longer than the label: no single
    input tells a missing penalty from a swapped one (on a short prediction
    both give 1), the pair does."""
    got = np.array([run_bleu(*case) for case in BREVITY_PAIR], dtype=object)
    if any(isinstance(g, dict) for g in got):
        expect(False, say("l14.bleu_raised_long"))
    expect_close(
        got.astype(np.float64),
        ref_bleu_pair(BREVITY_PAIR),
        say("l14.bleu_pair", cases=[case[:2] for case in BREVITY_PAIR]),
        diagnoses=_diagnoses(ref_bleu_pair, BREVITY_PAIR),
    )


# ---------------------------------------------------- checks: searching
def test_greedy_decode_stops_at_eos():
    got = run_greedy(plain_table(D2L_TABLE), 6)
    expected = ref_greedy(D2L_TABLE, 6)
    expect_close(
        np.array(got),
        np.array(expected),
        say("l14.greedy_d2l", expected=_spell(expected), got=_spell(got)),
        tol=EXACT,
        diagnoses=_diagnoses(ref_greedy, D2L_TABLE, 6, mistakes=MISTAKES),
    )


@pytest.mark.points(2)
def test_beam_search_finds_the_better_sequence():
    """d2l: greedy picks A, B, C, <eos> (0.5*0.4*0.4*0.6 = 0.048) but A, C,
    B, <eos> is more probable (0.5*0.3*0.6*0.6 = 0.054); a beam of 2 finds
    it."""
    table = plain_table(D2L_TABLE)
    greedy = run_greedy(table, 6)
    beam = run_beam(table, 2, 6)
    expect(
        greedy == [A_, B_, C_],
        say(
            "l14.greedy_d2l", expected=_spell([A_, B_, C_]), got=_spell(greedy)
        ),
        got=np.array(greedy),
        diagnoses=_diagnoses(ref_greedy, D2L_TABLE, 6),
    )
    expect(
        beam == [A_, C_, B_],
        say("l14.beam_d2l", got=_spell(beam)),
        got=np.array(beam),
        diagnoses=_diagnoses(ref_beam, D2L_TABLE, 2, 6, 0.75),
    )


# A scripted decoder on which greedy search and each of its mistakes write
# something different. P(next | tokens written so far); the right path is
# A B <eos>, the others are reached only by a mistake.
GREEDY_TABLE = {  #   A    B    C   <eos>
    (): [0.6, 0.2, 0.1, 0.1],  # -> A
    (A_,): [0.1, 0.5, 0.3, 0.1],  # -> B
    (A_, B_): [0.1, 0.1, 0.1, 0.7],  # -> <eos>: the output is A B
    (B_,): [0.1, 0.2, 0.6, 0.1],  # B alone (the state was lost) -> C
    (C_,): [0.2, 0.1, 0.1, 0.6],  # C alone -> <eos>
    (A_, B_, EOS): [0.1, 0.2, 0.6, 0.1],  # past <eos> -> C
    (A_, B_, EOS, C_): [0.1, 0.1, 0.1, 0.7],  # -> <eos>
}


def test_greedy_decode_carries_the_state():
    """Right: A (0.6), B (0.5 after A), <eos> (0.7 after A B): "A B".
    Restarting every step from the initial state, the decoder sees B
    alone at step 3 (-> C) and C alone at step 4 (-> <eos>): "A B C".
    Going on past <eos> for all 5 steps: "A B <eos> C <eos>"."""
    got = run_greedy(plain_table(GREEDY_TABLE), 5)
    expect_close(
        np.array(got),
        np.array([A_, B_]),
        say("l14.greedy_state", got=_spell(got)),
        tol=EXACT,
        diagnoses={
            GREEDY_STATE: np.array([A_, B_, C_]),
            GREEDY_NO_STOP: np.array([A_, B_, EOS, C_, EOS]),
        },
        hint=say("l14.greedy_state_hint"),
    )


# Beam search, beam_size 2, max_len 3, on a scripted decoder where the
# right search and each of its mistakes pick a different sequence.
BEAM_TABLE = {  #   A     B     C    <eos>
    (): [0.5, 0.3, 0.1, 0.1],
    (A_,): [0.55, 0.05, 0.35, 0.05],
    (B_,): [0.2, 0.1, 0.05, 0.65],
    (A_, A_): [0.03, 0.5, 0.02, 0.45],
    (A_, C_): [0.04, 0.9, 0.01, 0.05],
}


@pytest.mark.points(2)
def test_beam_search_prunes_over_all_beams_and_keeps_open_ones():
    """Step 1: beams A (0.5) and B (0.3). Step 2, each beam's 2 best:
    A A 0.275, A C 0.175 (0.5 * 0.35), B <eos> 0.195 (0.3 * 0.65), B A
    0.06; the 2 best of all four are A A (open) and B <eos> (finished).
    Step 3, the last: A A B 0.1375 (0.275 * 0.5) and A A <eos> 0.12375
    (0.275 * 0.45), both kept. Scores ln P / L**0.75 (2**0.75 = 1.6818,
    3**0.75 = 2.2795): B <eos> -1.6348 / 1.6818 = -0.9720, A A <eos>
    -2.0895 / 2.2795 = -0.9166, A A B (open at max_len) -1.9841 / 2.2795 =
    -0.8704, the best: "A A B".
    Mistakes: the finished ones only -> A A <eos> ("A A"); the raw sum ->
    B <eos> (ln 0.195, the largest: "B"), and so does a start at 1; no
    pruning keeps A C and extends it to A C B 0.1575, -1.8483 / 2.2795 =
    -0.8108 ("A C B");
    stepping every beam from the initial state, A A asks about A alone at
    step 3: A A A 0.15125 = 0.275 * 0.55, -0.8286 ("A A A")."""
    got = run_beam(plain_table(BEAM_TABLE), 2, 3)
    expect_close(
        np.array(got),
        np.array([A_, A_, B_]),
        say("l14.beam_prune", got=_spell(got)),
        tol=EXACT,
        diagnoses={
            IGNORES_OPEN: np.array([A_, A_]),
            NO_LENGTH_NORM: np.array([B_]),
            START_AT_ONE: np.array([B_]),  # the same: neither is named
            NOT_PRUNED: np.array([A_, C_, B_]),
            BEAM_STATE: np.array([A_, A_, A_]),
        },
        hint=say("l14.beam_prune_hint"),
    )


def test_beam_search_normalises_by_length():
    """Stopping at once has P = 0.40 (score ln 0.40 = -0.92); A B C <eos> has
    P = 0.189, less, but per token it is better: ln 0.189 / 4**0.75 = -0.59."""
    beam = run_beam(plain_table(LENGTH_TABLE), 2, 4)
    expected = ref_best_sequence(LENGTH_TABLE, 4, 0.75)
    expect_close(
        np.array(beam),
        np.array(expected),
        say("l14.beam_length", expected=_spell(expected), got=_spell(beam)),
        tol=EXACT,
        diagnoses=_diagnoses(ref_beam, LENGTH_TABLE, 2, 4, 0.75),
    )


# Finished hypotheses of lengths 1, 2 and 3 near in score: a search whose
# scores start at c instead of 0 moves each final score by c / L**alpha,
# more for a shorter one, and so changes the pick (a start shifts every
# score alike, so only here does it show). On the first table a start of
# -1 picks a longer sequence; on the second a start of 1 picks a shorter
# one, and not the one the raw sum picks.
START_TABLES = {  #             A     B     C    <eos>
    "shorter_wins": {
        (): [0.55, 0.05, 0.05, 0.35],
        (A_,): [0.05, 0.4, 0.05, 0.5],
        (A_, B_): [0.05, 0.05, 0.2, 0.7],
    },
    "longer_wins": {
        (): [0.5, 0.15, 0.15, 0.2],
        (A_,): [0.1, 0.45, 0.1, 0.35],
        (A_, B_): [0.05, 0.05, 0.4, 0.5],
        (B_,): [0.05, 0.05, 0.7, 0.2],  # B alone: the state was lost
    },
}
START_EXPECTED = {  # the sequence and its score, worked out below
    "shorter_wins": ([A_], -0.7676),
    "longer_wins": ([A_, B_], -0.9585),
}


@pytest.mark.parametrize("table", list(START_TABLES), ids=str)
def test_beam_scores_start_at_zero(table):
    """beam_size 2, max_len 3, scores ln P / L**0.75 (1, 1.6818 and 2.2795
    for L = 1, 2, 3).
    shorter_wins. Step 1: A 0.55 (open), <eos> 0.35 (finished). Step 2:
    A <eos> 0.275, A B 0.22. Step 3: A B <eos> 0.154, A B C 0.044 (open at
    max_len). Scores: <eos> -1.0498; A <eos> -1.2910 / 1.6818 = -0.7676,
    the best: "A"; A B <eos> -1.8708 / 2.2795 = -0.8207; A B C -3.1236 /
    2.2795 = -1.3703. Started at -1: A B <eos> -2.8708 / 2.2795 = -1.2594
    beats A <eos> -2.2910 / 1.6818 = -1.3622 ("A B").
    longer_wins. Step 1: A 0.5, <eos> 0.2. Step 2: A B 0.225, A <eos>
    0.175. Step 3: A B <eos> 0.1125, A B C 0.09. Scores: <eos> -1.6094; A
    <eos> -1.7430 / 1.6818 = -1.0364; A B <eos> -2.1848 / 2.2795 =
    -0.9585, the best: "A B"; A B C -2.4079 / 2.2795 = -1.0563. Started at
    1, a product's start: A <eos> -0.7430 / 1.6818 = -0.4418 beats A B
    <eos> -1.1848 / 2.2795 = -0.5198 and <eos> -0.6094 ("A"), while the
    raw sum picks <eos> ("")."""
    scripted = START_TABLES[table]
    expected, score = START_EXPECTED[table]
    got = run_beam(plain_table(scripted), 2, 3)
    expect_close(
        np.array(got),
        np.array(expected),
        say(
            "l14.beam_start",
            expected=_spell(expected),
            score=f"{score:.4f}",
            got=_spell(got),
        ),
        tol=EXACT,
        diagnoses=_diagnoses(ref_beam, scripted, 2, 3, 0.75),
        hint=say("l14.beam_start_hint"),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("alpha", [0.75, 0.0], ids=["alpha_0.75", "alpha_0"])
def test_wide_beam_is_exhaustive_search(alpha):
    """A beam as wide as the tree keeps every prefix: it must return the
    best of all sequences, which the judge finds by enumerating them."""
    # Seed 27: the best by sum(log p) / L**0.75 is A C C <eos>, by the raw
    # sum it is B <eos>, and greedy search gives A A A A.
    seed, max_len = 27, 4
    got = run_beam([], 4**max_len, max_len, alpha=alpha, seed=seed)
    expected = ref_best_sequence({}, max_len, alpha, seed=seed)
    expect_close(
        np.array(got),
        np.array(expected),
        say(
            "l14.beam_wide",
            beam_size=4**max_len,
            alpha=alpha,
            expected=_spell(expected),
            got=_spell(got),
        ),
        tol=EXACT,
        diagnoses=_diagnoses(ref_beam, {}, 4**max_len, max_len, alpha, seed, 4),
    )


@pytest.mark.parametrize("seed", [3, 11])
def test_beam_of_one_is_greedy(seed):
    greedy = run_greedy([], 5, seed=seed, vocab=4)
    beam = run_beam([], 1, 5, seed=seed, vocab=4)
    expected = ref_greedy({}, 5, seed=seed, vocab=4)
    expect(
        greedy == expected,
        say("l14.greedy_random", expected=_spell(expected), got=_spell(greedy)),
        got=np.array(greedy),
        diagnoses=_diagnoses(ref_greedy, {}, 5, seed, 4),
    )
    expect(
        beam == greedy,
        say("l14.beam_of_one", beam=_spell(beam), greedy=_spell(greedy)),
    )


# ---------------------------------------------- checks: layer contract
@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_keras_layer_contract(rng, kind):
    X = rng.integers(0, V_SRC, (B, S)).astype("int32")
    Y, states, context = _decoder_inputs(rng)
    facts = run_contract(kind, X, Y, states, context)
    encoder = kind == "encoder"
    name = "Seq2SeqEncoder" if encoder else "Seq2SeqDecoder"
    # bound to the reference on the weights the layer was built with: the
    # embedding, each GRU's kernel, recurrent kernel and (2, 3U) bias, and
    # the decoder's dense kernel and bias
    layout = [(V_SRC if encoder else V, E)]
    for i in range(L):
        d_in = U if i else E if encoder else E + U
        layout += [(d_in, 3 * U), (U, 3 * U), (2, 3 * U)]
    if not encoder:
        layout += [(U, V), (V,)]
    weights = contract_weights(facts, name, layout)
    expect_layer_contract(
        facts,
        name,
        output_shape=(B, S, U) if encoder else (B, T, V),
        symbolic_shape=(None, None, U) if encoder else None,
        on=say("l14.symbolic_on"),
        trainable=1 + 3 * L + (0 if encoder else 2),
        expected=(
            ref_encoder(X, weights)[0]
            if encoder
            else ref_decoder(Y, states, context, weights)[0]
        ),
    )
    expect_value_errors(facts["errors"])


@pytest.mark.points(2)
def test_decoder_gradient_matches_centred_differences(rng):
    Y, states, context = _decoder_inputs(rng)
    weights = [w.astype("float64") for w in _decoder_weights(rng)]
    probe_weights = rng.standard_normal((B, T, V))
    states = [s.astype("float64") for s in states]
    context = context.astype("float64")
    got = run_decoder_gradient(Y, states, context, weights, probe_weights)
    expect_gradient(
        got,
        ref_decoder_gradient(Y, states, context, weights, probe_weights),
        "Seq2SeqDecoder d(loss)/d(context) vs centred differences",
        tol=GRAD,
    )
