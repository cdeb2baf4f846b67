"""Lesson 17: Bahdanau attention (Bahdanau 注意力), a GRU decoder that
looks back at the source at every step.

The sequence-to-sequence decoder of lesson 14 squeezes the whole source into
one context vector. Bahdanau's decoder recomputes the context at each step
t, as an attention pooling of the encoder outputs h_1 .. h_S, with the
decoder's previous state s_{t-1} as the query:

    c_t = sum_j alpha(s_{t-1}, h_j) h_j             keys = values = h_j
    alpha(s, h_j) = softmax_j(w_v^T tanh(W_q s + W_k h_j))    (additive)
    s_t = GRU([c_t, e(y_{t-1})], s_{t-1})           the context is
                                                    concatenated before the
                                                    input embedding
    logits_t = Dense(s_t)

The query s_{t-1} is the top GRU layer's state from the previous step (at
t = 1, the encoder's final state), never the state the step is about to
compute. Source positions at or past the source's valid length get weight
exactly 0 (掩蔽 masking), as in lesson 16.

Layouts: the hidden state is batch-first, `(B, L, Hd)` (one row per GRU
layer, bottom first; d2l's PyTorch layout is (L, B, Hd)). The GRU layers
are `keras.layers.GRUCell(Hd, reset_after=False)`: the reset gate before the
recurrent matmul, as in d2l's GRU equations; kernel (D, 3Hd), recurrent
kernel (Hd, 3Hd), blocks [z | r | h].

The initial state is the encoder's final states of its L layers, stacked:
`ops.stack([h_1, ..., h_L], axis=1)`; its outputs (B, S, Hd) are the keys
and values.

Reference: Bahdanau, Cho and Bengio 2015; d2l 10.4 (11.4).
"""

import keras
from keras import ops


def mask_fill_value(dtype: str) -> float:
    """The score given to masked keys: so negative that exp() is exactly 0.

    -1e9 in float32/float64; float16 cannot hold it, so -3e4 there.
    """
    return -3e4 if keras.backend.standardize_dtype(dtype) == "float16" else -1e9


class Seq2SeqAttentionDecoder(keras.layers.Layer):
    """A GRU decoder with additive (Bahdanau) attention over the encoder
    outputs.

    Args:
        vocab_size: int, V, the target vocabulary size.
        embed_size: int, E.
        num_hiddens: int, Hd: the GRU size, which is also the encoder
            outputs' size and the hidden size of the attention MLP.
        num_layers: int, L, stacked GRU layers.
        dropout: float in [0, 1): on the attention weights and between GRU
            layers.

    Call arguments:
        X: `(B, T)` integer target tokens (training: <bos> + the target
            shifted right; prediction: one token, T = 1).
        enc_outputs: `(B, S, Hd)`, the keys and values.
        hidden_state: `(B, L, Hd)`, the state before the first step.
        enc_valid_lens: None or `(B,)` integers, the source lengths.
        training: bool.

    Returns:
        `(logits, hidden_state, attention_weights)`: `logits (B, T, V)`, the
        state after the last step `(B, L, Hd)` (pass it to the next call to
        continue decoding), and the weights of every step `(B, T, S)`.

    Weights: `embedding (V, E)`; `W_q (Hd, Hd)`, `W_k (Hd, Hd)`,
    `w_v (Hd, 1)` (no biases); per GRU layer l a `GRUCell` (`gru{l}`); the
    output `dense (Hd, V)` with a bias.
    """

    def __init__(
        self,
        vocab_size: int,
        embed_size: int,
        num_hiddens: int,
        num_layers: int = 1,
        dropout: float = 0.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        for name, value in (
            ("vocab_size", vocab_size),
            ("embed_size", embed_size),
            ("num_hiddens", num_hiddens),
            ("num_layers", num_layers),
        ):
            if int(value) != value or value <= 0:
                raise ValueError(
                    f"`{name}` must be a positive int, got {value!r}"
                )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"`dropout` must be in [0, 1), got {dropout!r}")
        self.vocab_size = int(vocab_size)
        self.embed_size = int(embed_size)
        self.num_hiddens = int(num_hiddens)
        self.num_layers = int(num_layers)
        self.dropout = dropout
        policy = self.dtype_policy
        self.embedding = keras.layers.Embedding(
            vocab_size, embed_size, name="embedding", dtype=policy
        )
        # The additive attention's MLP, as in lesson 16.
        dense = {"use_bias": False, "dtype": policy}
        self.W_q = keras.layers.Dense(num_hiddens, name="W_q", **dense)
        self.W_k = keras.layers.Dense(num_hiddens, name="W_k", **dense)
        self.w_v = keras.layers.Dense(1, name="w_v", **dense)
        self.attention_dropout = keras.layers.Dropout(dropout, dtype=policy)
        self.cells = [
            keras.layers.GRUCell(
                num_hiddens, reset_after=False, name=f"gru{i}", dtype=policy
            )
            for i in range(num_layers)
        ]
        self.layer_dropout = keras.layers.Dropout(dropout, dtype=policy)
        self.dense = keras.layers.Dense(vocab_size, name="dense", dtype=policy)

    def build(
        self,
        X_shape,
        enc_outputs_shape,
        hidden_state_shape=None,
        enc_valid_lens_shape=None,
    ):
        self.embedding.build(X_shape)
        self.W_q.build((None, self.num_hiddens))
        self.W_k.build(enc_outputs_shape)
        self.w_v.build((None, None, self.num_hiddens))
        for i, cell in enumerate(self.cells):
            inputs = self.num_hiddens + (self.embed_size if i == 0 else 0)
            cell.build((None, inputs))
        self.dense.build((None, self.num_hiddens))

    def attend(self, query, keys, values, valid_lens=None, training=None):
        """Additive attention of one query per sequence.

        Args:
            query: `(B, Hd)`, the previous top-layer state.
            keys: `(B, S, Hd)`, the encoder outputs already through W_k.
            values: `(B, S, Hd)`, the encoder outputs.
            valid_lens: None or `(B,)`.
            training: bool, dropout on the weights.

        Returns:
            `(context (B, Hd), weights (B, S))`; weights exactly 0 at
            positions >= valid_len, summing to 1 over the rest.
        """
        # TODO(l17): query (B, Hd), keys and values (B, S, Hd) -> (B, Hd)
        #   context and (B, S) weights: the module docstring's c_t and alpha
        #   for one query per sequence. scores[b, j] = w_v^T th(W_q s_b +
        #   k_bj), th the hyperbolic tangent; the keys are already through
        #   W_k, so only the query goes through self.W_q, and self.w_v maps
        #   Hd features to one score. weights[b, j] = exp(scores[b, j]) /
        #   Σ_i exp(scores[b, i]) over the kept positions j < valid_lens[b]
        #   (all of them when valid_lens is None); masked positions weigh
        #   exactly 0 (score them mask_fill_value(dtype) first), and a row
        #   of valid length 0 is all zeros. context[b] = Σ_j
        #   drop(weights)[b, j] values[b, j], drop = self.attention_dropout
        #   (training only); return the weights before the dropout.
        #   Our solution is about 10 lines.
        #   中文：以一个查询做加性注意力并掩蔽源序列的填充，
        #   上下文变量是值的加权和。
        # BEGIN SOLUTION
        features = ops.tanh(self.W_q(query)[:, None, :] + keys)  # (B, S, Hd)
        scores = ops.squeeze(self.w_v(features), axis=-1)  # (B, S)
        if valid_lens is None:
            weights = ops.softmax(scores, axis=-1)
        else:
            lens = ops.cast(valid_lens, "int32")[:, None]  # (B, 1)
            keep = ops.arange(ops.shape(scores)[-1], dtype="int32") < lens
            fill = ops.cast(mask_fill_value(scores.dtype), scores.dtype)
            weights = ops.softmax(ops.where(keep, scores, fill), axis=-1)
            weights = weights * ops.cast(keep, scores.dtype)  # (B, S)
        dropped = self.attention_dropout(weights, training=training)
        context = ops.einsum("bs,bsh->bh", dropped, values)  # (B, Hd)
        return context, weights
        # END SOLUTION

    def step(
        self, embedded, hidden, keys, values, valid_lens=None, training=None
    ):
        """One decoding step.

        Args:
            embedded: `(B, E)`, the embedding of this step's input token.
            hidden: `(B, L, Hd)`, the state after the previous step.
            keys: `(B, S, Hd)`, the encoder outputs through W_k.
            values: `(B, S, Hd)`, the encoder outputs.
            valid_lens: None or `(B,)`.
            training: bool.

        Returns:
            `(output, hidden, weights)`: the top layer's new state
            `(B, Hd)`, the new state `(B, L, Hd)` and this step's attention
            weights `(B, S)`.
        """
        # TODO(l17): embedded (B, E), hidden (B, L, Hd) -> (B, Hd) output,
        #   (B, L, Hd) new hidden, (B, S) weights: one step of the module
        #   docstring. The query s_{t-1} is the top layer's PREVIOUS state,
        #   hidden[:, -1] (B, Hd), given to self.attend. Cell 0 of
        #   self.cells reads [c_t, e(y_{t-1})], (B, Hd + E), context
        #   first; cell l > 0 reads cell l - 1's new state through
        #   self.layer_dropout. Cell l starts from its own previous state,
        #   row l of hidden, passed as a one-item list; a
        #   keras.layers.GRUCell returns (new_state, [new_state]). Row l of
        #   the new hidden is cell l's new state; the output is the top
        #   layer's. Our solution is about 10 lines.
        #   中文：先用上一步的顶层隐状态做注意力，
        #   再把 [上下文变量, 嵌入] 逐层送进 GRU 单元。
        # BEGIN SOLUTION
        query = hidden[:, -1]  # (B, Hd): the top layer's previous state
        context, weights = self.attend(
            query, keys, values, valid_lens, training
        )
        x = ops.concatenate([context, embedded], axis=-1)  # (B, Hd + E)
        states = []
        for i, cell in enumerate(self.cells):
            if i > 0:
                x = self.layer_dropout(x, training=training)
            x, _ = cell(x, [hidden[:, i]], training=training)  # (B, Hd)
            states.append(x)
        return x, ops.stack(states, axis=1), weights
        # END SOLUTION

    def call(
        self,
        X,
        enc_outputs,
        hidden_state,
        enc_valid_lens=None,
        training=None,
    ):
        embedded = self.embedding(X)  # (B, T, E)
        # The keys do not change from step to step: project them once.
        keys = self.W_k(enc_outputs)  # (B, S, Hd)

        def body(carry, embedded_t):
            hidden = carry[0]
            output, hidden, weights = self.step(
                embedded_t, hidden, keys, enc_outputs, enc_valid_lens, training
            )
            # ops.scan stacks what the step returns; it must have the
            # structure of the carry, so the carry holds all three.
            return (hidden, output, weights), (hidden, output, weights)

        init = (
            ops.cast(hidden_state, enc_outputs.dtype),
            ops.zeros_like(enc_outputs[:, 0]),  # (B, Hd)
            ops.zeros_like(enc_outputs[:, :, 0]),  # (B, S)
        )
        steps = ops.swapaxes(embedded, 0, 1)  # (T, B, E): scan over time
        (hidden, _, _), (_, outputs, weights) = ops.scan(body, init, steps)
        logits = self.dense(ops.swapaxes(outputs, 0, 1))  # (B, T, V)
        return logits, hidden, ops.swapaxes(weights, 0, 1)  # (B, T, S)

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "embed_size": self.embed_size,
            "num_hiddens": self.num_hiddens,
            "num_layers": self.num_layers,
            "dropout": self.dropout,
        }
