"""Lesson 14: sequence to sequence learning (序列到序列学习, seq2seq).

Encoder-decoder (编码器-解码器). The encoder reads the source sentence
x_1 ... x_S and summarises it; the decoder writes the target sentence one
token at a time, each conditioned on the summary and on the tokens before:

    encoder:  h_s = f(embed(x_s), h_{s-1})        (an L-layer GRU)
              context c = h_S of the top layer     (B, U)
    decoder:  s_t = g([embed(y_{t-1}), c], s_{t-1}), s_0 = the encoder's
              final states (all L layers)
              P(y_t | y_<t, x) = softmax(W s_t + b)  over the V target tokens

The context c is concatenated (拼接) to the decoder's input at EVERY step,
and it stays the encoder's: the decoder state carries it along unchanged,
so decoding step by step gives exactly what one pass over the whole target
gives.

Training: teacher forcing (强制教学). The decoder's input is the true target
shifted right by one, <bos> y_1 ... y_{T-1}, and it must predict
y_1 ... y_T. Targets are padded to T (lesson 13); the padding is masked
(掩蔽) out of the loss:

    loss = sum over valid (b, t) of -log P(y_bt) / number of valid (b, t)

(every real token weighs 1 / (number of valid tokens in the batch); d2l v2
does the same. d2l v1 takes each sequence's mean over the padded length T,
then sums over the batch: every real token weighs 1/T, whatever its
sentence's length, so the two differ only by a batch-dependent scale, an
effective learning rate. Dividing each sentence by its own valid length is
what would under-weight the tokens of long sentences.)

Prediction: greedy search takes the most probable token at each step until
<eos>. It does not find the most probable sequence: beam search (束搜索)
keeps the k best prefixes at each step, and finally picks, among the
finished ones (ended by <eos>) and those still open at max_len,

    argmax  (1 / L^alpha) * sum_{t=1..L} log P(y_t | y_<t, x),  alpha = 0.75

where L counts the tokens scored, the <eos> included. This is the course's
choice, not d2l's: d2l drops the <eos> and what follows it from L and from
the sum. Counting it scores a finished sentence by the probability of the
whole output, its ending included, the same terms the decoder was trained
on. Without the 1/L^alpha the shortest candidates would win: every extra
token adds a negative log. Beam size 1 is greedy search.

Evaluation: BLEU compares the n-grams of a prediction with a label:

    BLEU = exp(min(0, 1 - len_label / len_pred)) * prod_{n=1..k} p_n^(1/2^n)

p_n is the n-gram precision, clipped: an n-gram of the label can match at
most as many times as it occurs in the label. The first factor, the brevity
penalty, punishes predictions shorter than the label (a short prediction
has high precision cheaply).

Reference: Sutskever et al. 2014; Cho et al. 2014; Papineni et al. 2002;
d2l 9.6-9.8 (10.6-10.8).
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable
from collections.abc import Sequence

import keras
import numpy as np
from keras import ops


def _check_positive_int(name: str, value) -> None:
    if int(value) != value or value <= 0:
        raise ValueError(f"`{name}` must be a positive int, got {value!r}")


def _check_dropout(dropout: float) -> None:
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"`dropout` must be in [0, 1), got {dropout!r}")


def _gru_layers(num_layers, num_hiddens, dropout, dtype_policy):
    """L Keras GRUs returning their whole sequence and their last state."""
    return [
        keras.layers.GRU(
            num_hiddens,
            return_sequences=True,
            return_state=True,
            dropout=dropout,
            name=f"gru_{i}",
            dtype=dtype_policy,
        )
        for i in range(num_layers)
    ]


class Seq2SeqEncoder(keras.layers.Layer):
    """The RNN encoder: embedding, then an L-layer GRU.

    Args:
        vocab_size: int, the source vocabulary size.
        embed_size: int, E.
        num_hiddens: int, U.
        num_layers: int, L.
        dropout: float in [0, 1), input dropout of each GRU.

    Call arguments:
        inputs: `(B, S)` int source token ids.
        training: bool, dropout is active only when True.

    Returns:
        `(outputs, states)`: outputs `(B, S, U)`, the top layer's state at
        every source position; states, a list of L last states `(B, U)`,
        bottom layer first.

    Weights: `embedding` (vocab_size, E); `rnn_layers[i]` Keras GRUs
    (reset_after=True: kernel, recurrent_kernel, bias (2, 3U)).
    """

    def __init__(
        self,
        vocab_size: int,
        embed_size: int,
        num_hiddens: int,
        num_layers: int,
        dropout: float = 0.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        for name, value in [
            ("vocab_size", vocab_size),
            ("embed_size", embed_size),
            ("num_hiddens", num_hiddens),
            ("num_layers", num_layers),
        ]:
            _check_positive_int(name, value)
        _check_dropout(dropout)
        self.vocab_size = int(vocab_size)
        self.embed_size = int(embed_size)
        self.num_hiddens = int(num_hiddens)
        self.num_layers = int(num_layers)
        self.dropout = dropout
        self.embedding = keras.layers.Embedding(
            vocab_size, embed_size, name="embedding", dtype=self.dtype_policy
        )
        self.rnn_layers = _gru_layers(
            num_layers, num_hiddens, dropout, self.dtype_policy
        )

    def build(self, inputs_shape):
        self.embedding.build(inputs_shape)
        shape = tuple(inputs_shape) + (self.embed_size,)
        for layer in self.rnn_layers:
            layer.build(shape)
            shape = shape[:-1] + (self.num_hiddens,)

    def call(self, inputs, training=None):
        # TODO(l14): the encoder of the module docstring, inputs (B, S) ->
        #   (B, S, U) outputs and L last states (B, U). The first layer
        #   reads embed(x_s), (B, S, E), from self.embedding; layer l of
        #   self.rnn_layers (bottom first) reads the whole sequence of layer
        #   l - 1, starts from zeros and sees training. A GRU here returns
        #   [outputs (B, S, U), last state (B, U)]. Return (outputs of the
        #   top layer, the list of the L last states, bottom layer first).
        #   Our solution is about 6 lines.
        #   中文：嵌入后经过堆叠的 GRU，返回顶层的输出和每一层最后的隐状态。
        # BEGIN SOLUTION
        x = self.embedding(inputs)  # (B, S, E)
        states = []
        for layer in self.rnn_layers:
            x, state = layer(x, training=training)  # (B, S, U), (B, U)
            states.append(state)
        return x, states
        # END SOLUTION

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "embed_size": self.embed_size,
            "num_hiddens": self.num_hiddens,
            "num_layers": self.num_layers,
            "dropout": self.dropout,
        }


class Seq2SeqDecoder(keras.layers.Layer):
    """The RNN decoder: [embedding, context] -> L-layer GRU -> Dense(V).

    Args:
        vocab_size: int, V, the target vocabulary size.
        embed_size: int, E.
        num_hiddens: int, U (the encoder's U: its states start the decoder).
        num_layers: int, L (the encoder's L).
        dropout: float in [0, 1), input dropout of each GRU.

    Call arguments:
        inputs: `(B, T)` int target-side ids (with teacher forcing:
            <bos> y_1 ... y_{T-1}; when predicting: the last token, T = 1).
        state: `(layer_states, context)` as made by `init_state` or returned
            by the previous call: a list of L `(B, U)` GRU states and the
            `(B, U)` context (the encoder's top-layer final state).
        training: bool, dropout is active only when True.

    Returns:
        `(logits, state)`: logits `(B, T, V)` (before the softmax), and the
        next state `(new layer_states, the same context)`.
    """

    def __init__(
        self,
        vocab_size: int,
        embed_size: int,
        num_hiddens: int,
        num_layers: int,
        dropout: float = 0.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        for name, value in [
            ("vocab_size", vocab_size),
            ("embed_size", embed_size),
            ("num_hiddens", num_hiddens),
            ("num_layers", num_layers),
        ]:
            _check_positive_int(name, value)
        _check_dropout(dropout)
        self.vocab_size = int(vocab_size)
        self.embed_size = int(embed_size)
        self.num_hiddens = int(num_hiddens)
        self.num_layers = int(num_layers)
        self.dropout = dropout
        self.embedding = keras.layers.Embedding(
            vocab_size, embed_size, name="embedding", dtype=self.dtype_policy
        )
        self.rnn_layers = _gru_layers(
            num_layers, num_hiddens, dropout, self.dtype_policy
        )
        self.dense = keras.layers.Dense(
            vocab_size, name="output", dtype=self.dtype_policy
        )

    def build(self, inputs_shape, state_shape=None):
        self.embedding.build(inputs_shape)
        # The first GRU reads [embedding, context]: E + U features.
        shape = tuple(inputs_shape) + (self.embed_size + self.num_hiddens,)
        for layer in self.rnn_layers:
            layer.build(shape)
            shape = shape[:-1] + (self.num_hiddens,)
        self.dense.build(shape)

    def init_state(self, enc_outputs):
        """The encoder's `(outputs, states)` -> the decoder's first state:
        `(the L encoder states, context = the top layer's state)`."""
        _, states = enc_outputs
        if len(states) != self.num_layers:
            raise ValueError(
                f"`enc_outputs` must hold {self.num_layers} states (one per "
                f"layer), got {len(states)}"
            )
        return list(states), states[-1]

    def call(self, inputs, state, training=None):
        # TODO(l14): the decoder of the module docstring, inputs (B, T) ->
        #   (B, T, V) logits. state = (layer_states, context): L states
        #   (B, U) and the context c (B, U). Step t reads [embed(y_{t-1}),
        #   c], so the first layer reads (B, T, E + U), embedding features
        #   first and the same c at each of the T steps (T is known only at
        #   run time). Layer i of self.rnn_layers starts from
        #   layer_states[i] (as initial_state=[h]) and sees training; it
        #   returns [outputs (B, T, U), last state (B, U)]. self.dense maps
        #   the top outputs to the logits. Return (logits, (the list of the
        #   L new states, context)): c passes on unchanged.
        #   Our solution is about 10 lines.
        #   中文：上下文变量复制到每个时间步并与嵌入连结；
        #   每层从自己的隐状态出发，上下文变量原样返回。
        # BEGIN SOLUTION
        layer_states, context = state
        x = self.embedding(inputs)  # (B, T, E)
        steps = ops.shape(inputs)[1]
        context_seq = ops.repeat(context[:, None, :], steps, axis=1)  # (B,T,U)
        x = ops.concatenate([x, context_seq], axis=-1)  # (B, T, E + U)
        new_states = []
        for layer, h in zip(self.rnn_layers, layer_states, strict=True):
            x, h = layer(x, initial_state=[h], training=training)
            new_states.append(h)  # (B, U)
        logits = self.dense(x)  # (B, T, V)
        return logits, (new_states, context)
        # END SOLUTION

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "embed_size": self.embed_size,
            "num_hiddens": self.num_hiddens,
            "num_layers": self.num_layers,
            "dropout": self.dropout,
        }


def sequence_mask(X, valid_len, value=0.0):
    """Replace the entries at or past each row's valid length by `value`.

    Args:
        X: `(B, T)` or `(B, T, ...)`.
        valid_len: `(B,)` integers.
        value: the fill value.

    Returns:
        X's shape and dtype: `X[b, t, ...]` where `t < valid_len[b]`, else
        `value`.

        >>> ops.convert_to_numpy(sequence_mask([[1, 2, 3], [4, 5, 6]], [1, 2]))
        array([[1, 0, 0],
               [4, 5, 0]], dtype=int32)
    """
    X = ops.convert_to_tensor(X)
    valid_len = ops.convert_to_tensor(valid_len)
    if len(X.shape) < 2:
        raise ValueError(
            f"`X` must have shape (B, T, ...), got shape {tuple(X.shape)}"
        )
    if len(valid_len.shape) != 1:
        raise ValueError(
            "`valid_len` must have shape (B,), got shape "
            f"{tuple(valid_len.shape)}"
        )
    # TODO(l14): X (B, T, ...) -> (B, T, ...) in X's dtype: entry
    #   [b, t, ...] is X's at positions t < valid_len[b] (valid_len (B,),
    #   integers of any dtype) and `value`, in X's dtype, elsewhere, over
    #   every trailing axis. Positions count from 0: a valid length 0
    #   replaces the whole row, one >= T nothing.
    #   Our solution is about 5 lines.
    #   中文：有效长度及之后的位置替换成 value，前面的保持不变。
    # BEGIN SOLUTION
    positions = ops.arange(ops.shape(X)[1], dtype="int32")  # (T,)
    keep = positions[None, :] < ops.cast(valid_len, "int32")[:, None]  # (B, T)
    for _ in range(len(X.shape) - 2):
        keep = keep[..., None]  # (B, T, 1, ...)
    return ops.where(keep, X, ops.cast(value, X.dtype))
    # END SOLUTION


class MaskedSoftmaxCELoss:
    """Softmax cross-entropy over the valid (non-padding) tokens only.

    `loss(labels, logits, valid_len)` is the sum of -log softmax(logits)
    at the label over every position t < valid_len[b], divided by the number
    of such positions (0 when there are none). Padding never contributes,
    to the value or to the gradient.

    Call arguments:
        labels: `(B, T)` int target ids.
        logits: `(B, T, V)` unnormalised scores.
        valid_len: `(B,)` integers.

    Returns:
        A scalar.
    """

    def __call__(self, labels, logits, valid_len):
        labels = ops.convert_to_tensor(labels)
        logits = ops.convert_to_tensor(logits)
        # TODO(l14): the masked loss of the module docstring, labels (B, T),
        #   logits (B, T, V), valid_len (B,) -> scalar. ce[b, t] =
        #   -log P(labels[b, t]), P the softmax of logits[b, t] over the V
        #   tokens (computed stably from the logits), (B, T); w[b, t] = 1
        #   where t < valid_len[b], else 0 (sequence_mask above). Return
        #   Σ ce·w / max(Σ w, 1): 0 when no token is valid, and padding
        #   moves neither the value nor the gradient.
        #   Our solution is about 5 lines.
        #   中文：掩蔽后的交叉熵之和除以有效词元的个数（至少为 1）。
        # BEGIN SOLUTION
        ce = keras.losses.sparse_categorical_crossentropy(
            labels, logits, from_logits=True
        )  # (B, T)
        weights = sequence_mask(ops.ones_like(ce), valid_len)  # (B, T)
        total = ops.sum(ce * weights)
        count = ops.sum(weights)  # the number of real tokens
        return total / ops.maximum(count, 1.0)
        # END SOLUTION


def teacher_forcing_inputs(Y, bos_id: int):
    """The decoder's input for teacher forcing: the target shifted right.

    Args:
        Y: `(B, T)` int target ids (y_1 ... y_T, padded).
        bos_id: int, the id of '<bos>'.

    Returns:
        `(B, T)`: <bos>, y_1, ..., y_{T-1}.

        >>> ops.convert_to_numpy(teacher_forcing_inputs([[5, 6, 3]], 2))
        array([[2, 5, 6]], dtype=int32)
    """
    Y = ops.convert_to_tensor(Y)
    # TODO(l14): Y (B, T) -> (B, T) in Y's dtype: column 0 holds bos_id and
    #   column t > 0 holds Y[:, t - 1]; the last target token drops out.
    #   B is known only at run time. Our solution is about 2 lines.
    #   中文：强制教学：前面放一列 <bos>，去掉最后一列（目标序列右移一位）。
    # BEGIN SOLUTION
    bos = ops.full((ops.shape(Y)[0], 1), bos_id, dtype=Y.dtype)  # (B, 1)
    return ops.concatenate([bos, Y[:, :-1]], axis=1)  # (B, T)
    # END SOLUTION


def _tokens(seq) -> list:
    return seq.split() if isinstance(seq, str) else list(seq)


def bleu(pred_seq, label_seq, k: int = 2) -> float:
    """BLEU of one prediction against one label, n-grams up to k.

    Args:
        pred_seq, label_seq: strings (split at spaces) or token lists.
        k: int, the longest n-gram.

    Returns:
        `exp(min(0, 1 - len_label/len_pred)) * prod_n p_n^(1/2^n)`, in
        [0, 1]; 0 for an empty prediction or one shorter than k.

        >>> round(bleu("il est riche .", "il est calme ."), 3)
        0.658
    """
    _check_positive_int("k", k)
    pred, label = _tokens(pred_seq), _tokens(label_seq)
    # TODO(l14): pred, label: list[str] -> float, the BLEU of the module
    #   docstring for n = 1..k, with len_pred = len(pred), len_label =
    #   len(label): the brevity penalty times Π p_n^(1/2^n). It is 0.0
    #   when len_pred < k (some p_n would have no n-gram). p_n = matches /
    #   (len_pred - n + 1) over the prediction's n-grams, clipped: a
    #   prediction n-gram matches while the label still has an unused
    #   copy of it, so each label n-gram matches at most as often as it
    #   occurs there. Our solution is about 12 lines.
    #   中文：BLEU：过短惩罚乘以各个 n 的截断精度的 1/2^n 次幂。
    # BEGIN SOLUTION
    len_pred, len_label = len(pred), len(label)
    if len_pred < k:
        return 0.0
    score = math.exp(min(0.0, 1.0 - len_label / len_pred))  # brevity
    for n in range(1, k + 1):
        label_counts = collections.Counter(
            tuple(label[i : i + n]) for i in range(len_label - n + 1)
        )
        matches = 0
        for i in range(len_pred - n + 1):
            gram = tuple(pred[i : i + n])
            if label_counts[gram] > 0:
                matches += 1
                label_counts[gram] -= 1  # clipping: each label n-gram once
        score *= (matches / (len_pred - n + 1)) ** (0.5**n)
    return score
    # END SOLUTION


StepFn = Callable[[int, object], tuple[np.ndarray, object]]
"""`step_fn(token, state) -> (log_probs (V,), next_state)`: one decoder step
from the last token and the decoder state, for a single sequence."""


def _check_search(max_len: int, **ints: int) -> None:
    _check_positive_int("max_len", max_len)
    for name, value in ints.items():
        _check_positive_int(name, value)


def greedy_decode(
    step_fn: StepFn, state, bos_id: int, eos_id: int, max_len: int
) -> list[int]:
    """Greedy search: the most probable token at each step.

    Args:
        step_fn: one decoder step, see `StepFn`.
        state: the decoder's initial state.
        bos_id, eos_id: ids of '<bos>' (the first input) and '<eos>'.
        max_len: int, at most this many steps.

    Returns:
        The predicted ids, without '<bos>' and without the '<eos>' that
        ended them (at most `max_len` of them).
    """
    _check_search(max_len)
    # TODO(l14): a step_fn, int -> (V,) log-probabilities, and its state
    #   -> list[int]. The first input is bos_id; step_fn(last token, state)
    #   gives the log-probabilities of the next token and the next state;
    #   the next token is the most probable one (a tie goes to the lowest
    #   id) and is the next input. At most max_len steps; eos_id ends the
    #   output and is not part of it. Our solution is about 7 lines.
    #   中文：贪心搜索：每步取对数概率最大的词元，遇到 <eos> 停下，
    #   输出不含 <eos>。
    # BEGIN SOLUTION
    token, output = bos_id, []
    for _ in range(max_len):
        log_probs, state = step_fn(token, state)
        token = int(np.argmax(log_probs))
        if token == eos_id:
            break
        output.append(token)
    return output
    # END SOLUTION


def beam_search(
    step_fn: StepFn,
    state,
    bos_id: int,
    eos_id: int,
    beam_size: int,
    max_len: int,
    alpha: float = 0.75,
) -> list[int]:
    """Beam search with the length-normalised score.

    At each step every open beam is extended by its `beam_size` most
    probable tokens, and the `beam_size` best extensions (by the sum of
    log-probabilities) are kept; those that end with '<eos>' are finished
    and leave the beam. The search stops when no beam is open or after
    `max_len` steps. Of the finished and the still open sequences, the
    one with the highest `sum(log p) / L**alpha` wins, L = its length
    counting the '<eos>' (a deviation from d2l, which drops the '<eos>'
    from L and from the sum; see the module docstring). `beam_size=1` is
    greedy search.

    Args:
        step_fn: one decoder step, see `StepFn`.
        state: the decoder's initial state.
        bos_id, eos_id: ids of '<bos>' and '<eos>'.
        beam_size: int, k.
        max_len: int, at most this many steps.
        alpha: float >= 0, the length-penalty exponent.

    Returns:
        The best sequence's ids, without '<bos>' and '<eos>'.
    """
    _check_search(max_len, beam_size=beam_size)
    if alpha < 0:
        raise ValueError(f"`alpha` must be >= 0, got {alpha!r}")
    # TODO(l14): a step_fn, int -> (V,) log-probabilities, and its state
    #   -> list[int], the search the docstring above describes, with
    #   Σ log p as a beam's score. A beam is (score, tokens,
    #   decoder state); the search starts from (0.0, [], state), and a beam
    #   without tokens feeds bos_id to step_fn. Each step, every open beam,
    #   in order, proposes its beam_size most probable next tokens (ties:
    #   lower id first) as candidates (score + log p, tokens + [token], next
    #   state); of all candidates the beam_size best scores survive (ties:
    #   the earlier candidate). Survivors ending in eos_id are finished,
    #   the others stay open. The winner, over the finished and then the
    #   open beams, has the highest score / len(tokens)**alpha (ties: the
    #   first); return its tokens without a final eos_id. Scores in
    #   float64. Our solution is about 20 lines.
    #   中文：束搜索：每步保留 beam_size 个最好的候选，
    #   最后按 sum(log p) / L**alpha 选出最好的。
    # BEGIN SOLUTION
    beams = [(0.0, [], state)]  # (sum of log p, tokens, decoder state)
    finished = []  # (sum of log p, tokens ending with <eos>)
    for _ in range(max_len):
        candidates = []
        for score, tokens, beam_state in beams:
            last = tokens[-1] if tokens else bos_id
            log_probs, next_state = step_fn(last, beam_state)
            log_probs = np.asarray(log_probs, dtype=np.float64)
            for token in np.argsort(-log_probs, kind="stable")[:beam_size]:
                candidates.append(
                    (
                        score + log_probs[token],
                        [*tokens, int(token)],
                        next_state,
                    )
                )
        candidates.sort(key=lambda c: c[0], reverse=True)  # stable
        beams = []
        for score, tokens, next_state in candidates[:beam_size]:
            if tokens[-1] == eos_id:
                finished.append((score, tokens))
            else:
                beams.append((score, tokens, next_state))
        if not beams:
            break
    pool = finished + [(score, tokens) for score, tokens, _ in beams]
    _, best = max(pool, key=lambda c: c[0] / len(c[1]) ** alpha)
    return best[:-1] if best[-1] == eos_id else best
    # END SOLUTION


def predict_seq2seq(
    encoder: Seq2SeqEncoder,
    decoder: Seq2SeqDecoder,
    src_ids: Sequence[int],
    bos_id: int,
    eos_id: int,
    max_len: int,
    beam_size: int = 1,
    alpha: float = 0.75,
) -> list[int]:
    """Translate one source sentence (given; uses the functions above).

    Args:
        encoder, decoder: a trained pair.
        src_ids: the source ids, prepared as in training (e.g. with
            '<eos>' and padded to num_steps, lesson 13).
        bos_id, eos_id: target-side ids of '<bos>' and '<eos>'.
        max_len: int, at most this many target tokens.
        beam_size: int, 1 for greedy search.
        alpha: float, the length-penalty exponent of beam search.

    Returns:
        The predicted target ids, without '<bos>' and '<eos>'.
    """
    enc_outputs = encoder(np.asarray([src_ids], dtype="int32"), training=False)
    state = decoder.init_state(enc_outputs)

    def step_fn(token, state):
        logits, state = decoder(
            np.array([[token]], dtype="int32"), state, training=False
        )  # (1, 1, V)
        return ops.convert_to_numpy(ops.log_softmax(logits[0, -1])), state

    if beam_size == 1:
        return greedy_decode(step_fn, state, bos_id, eos_id, max_len)
    return beam_search(
        step_fn, state, bos_id, eos_id, beam_size, max_len, alpha
    )
