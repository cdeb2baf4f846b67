"""Scripted decoders: stand-ins for a trained decoder whose next-token
distributions are fixed tables, so the right greedy output and the right
beams are known by hand (lessons 14 and 20).

A table maps what the decoder has been fed so far (a tuple of token ids)
to the next token's probabilities, `(V,)`; a history the table does not
hold gets the uniform distribution (its argmax is token 0: ties go to the
lowest id). Tables travel to the probe as plain data, a list of
`[history, probabilities]` pairs (`plain_table`).

Probe side: `scripted_step` (lesson 14's `step_fn(token, state)`, the state
being the history) and `scripted_transformer` (lesson 20: a Keras model
with `encoder` and `decoder` called exactly as the course's Transformer is,
the decoder's cache holding the fed tokens). Judge side: `fed_histories`
(what each decoding step showed the decoder, as a line) and
`same_as_full_pass` (from which step a step-by-step pass departs from the
full pass, and by how much).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np

from graders.lib.messages import say

Table = Mapping[tuple[int, ...], Sequence[float]]
"""History (the ids fed so far) -> the next token's probabilities (V,)."""


def plain_table(table: Table) -> list[list[Any]]:
    """`table` as `[[history, probabilities], ...]`, for a probe."""
    return [[list(history), list(probs)] for history, probs in table.items()]


def from_plain(pairs: Sequence[Sequence[Any]]) -> dict[tuple[int, ...], list]:
    """The inverse of `plain_table`."""
    return {tuple(int(t) for t in history): probs for history, probs in pairs}


def next_log_probs(
    table: Table,
    history: Sequence[int],
    seed: int | None = None,
    vocab: int = 4,
) -> np.ndarray:
    """The scripted decoder's log-probabilities (vocab,) after `history`.

    Args:
        table: history -> probabilities (a missing history: uniform).
        history: the ids fed so far.
        seed: instead of the table, a random distribution seeded by `seed`
            and the history (the same history, the same distribution).
        vocab: V, the number of tokens.
    """
    if seed is None:
        uniform = np.full(vocab, 1.0 / vocab)
        return np.log(np.asarray(table.get(tuple(history), uniform)))
    rng = np.random.default_rng([seed, *history])
    logits = rng.standard_normal(vocab) * 1.5
    return logits - np.log(np.exp(logits).sum())


def scripted_step(
    pairs: Sequence[Sequence[Any]],
    bos_id: int,
    seed: int | None = None,
    vocab: int = 4,
):
    """Lesson 14's `step_fn(token, state) -> (log_probs (V,), state)`.

    The state is the history of tokens fed after <bos> (start from `()`),
    so a search that carries the wrong state asks the table about the
    wrong history; `bos_id` itself is never part of it.
    """
    table = from_plain(pairs)

    def step_fn(token, history):
        token = int(token)
        history = tuple(history) if token == bos_id else (*history, token)
        return next_log_probs(table, history, seed, vocab), history

    return step_fn


def scripted_transformer(tables: Sequence[Sequence[Sequence[Any]]], vocab: int):
    """Lesson 20's `Transformer`, scripted: row b of a batch decodes by
    `tables[b]` (plain pairs, histories counting the <bos>).

    `model.encoder(src, src_valid_len, training=...)` returns `(B, S, 1)`
    holding each row's index; `model.decoder(tokens (B, T), enc_outputs,
    enc_valid_lens, cache, training=...)` returns `(logits (B, T, V), [kv
    (B, T0 + T, 1)])`: position t of row b gets the log-probabilities after
    the tokens fed so far (the cache's, then tokens[:, :t + 1]), and the new
    cache holds them all. `model((src, src_valid_len, dec_input))` is the
    full pass. `model.decoder.calls` records each call: the histories it
    saw and its `training` argument.
    """
    import keras
    from keras import ops

    scripts = [from_plain(pairs) for pairs in tables]
    records = []  # outside the layer: Keras would wrap it in a TrackedList

    class ScriptedEncoder(keras.layers.Layer):
        def call(self, src, src_valid_len=None, training=None):
            rows = ops.arange(ops.shape(src)[0], dtype="float32")
            return (
                ops.zeros(ops.shape(src), "float32")[..., None]
                + rows[:, None, None]
            )  # (B, S, 1)

    class ScriptedDecoder(keras.layers.Layer):
        @property
        def calls(self) -> list[dict]:
            return [dict(record) for record in records]

        def call(
            self,
            tokens,
            enc_outputs,
            enc_valid_lens=None,
            cache=None,
            training=None,
        ):
            fed = np.asarray(ops.convert_to_numpy(tokens)).astype(int)
            rows = np.asarray(ops.convert_to_numpy(enc_outputs))[:, 0, 0]
            past = np.zeros((len(fed), 0), int)
            if cache is not None:
                past = np.asarray(ops.convert_to_numpy(cache[0]))
                past = np.rint(past[..., 0]).astype(int)
            seen = np.concatenate([past, fed], axis=1)  # (B, T0 + T)
            start = past.shape[1]
            logits = np.array(
                [
                    [
                        next_log_probs(
                            scripts[int(r)], seen[b, : t + 1], None, vocab
                        )
                        for t in range(start, seen.shape[1])
                    ]
                    for b, r in enumerate(rows)
                ]
            )  # (B, T, V)
            records.append({"seen": seen.tolist(), "training": bool(training)})
            kv = ops.convert_to_tensor(seen[..., None].astype("float32"))
            return ops.convert_to_tensor(logits.astype("float32")), [kv]

    class ScriptedTransformer(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.encoder = ScriptedEncoder(name="encoder")
            self.decoder = ScriptedDecoder(name="decoder")

        def call(self, inputs, training=None):
            src, src_valid_len, dec_input = inputs
            enc = self.encoder(src, src_valid_len, training=training)
            logits, _ = self.decoder(
                dec_input, enc, src_valid_len, training=training
            )
            return logits

    return ScriptedTransformer()


# ------------------------------------------------------------ judge side


def fed_histories(
    calls: Sequence[Mapping[str, Any]],
    expected: Sequence[Sequence[Sequence[int]]],
    names: Mapping[int, str],
) -> str | None:
    """The first decoding step whose decoder saw another history than
    `expected[step][row]` (the cache's tokens and the new one), as a line;
    or a call made with training=True; None when every step saw the right
    history in inference mode.

    Args:
        calls: `model.decoder.calls` of `scripted_transformer`, in order.
        expected: per step, per row, the ids fed so far (<bos> first).
        names: id -> the name to print.
    """

    def spell(ids: Sequence[int]) -> str:
        return " ".join(names.get(int(i), str(i)) for i in ids)

    for step, call in enumerate(calls, start=1):
        if call["training"]:
            return say("decoding.training", step=step)
        if step > len(expected):
            break
        for row, (seen, want) in enumerate(
            zip(call["seen"], expected[step - 1], strict=False)
        ):
            if list(seen) != list(want):
                return say(
                    "decoding.fed",
                    step=step,
                    seen=spell(seen),
                    row=row,
                    want=spell(want),
                )
    return None


def same_as_full_pass(full: Any, axis: int = 1, atol: float = 1e-5):
    """A property (graders/lib/properties.py) of a step-by-step pass: it
    equals `full`, the full pass, at every step along `axis`; else the line
    names the first step that departs and by how much, and says whether
    the steps after it depart too."""
    full = np.asarray(full, dtype=np.float64)

    def check(steps: np.ndarray) -> str | None:
        steps = np.asarray(steps, dtype=np.float64)
        if steps.shape != full.shape:
            return None
        other = tuple(i for i in range(steps.ndim) if i != axis)
        gap = np.abs(steps - full)
        scale = atol + atol * np.abs(full)
        per_step = (gap > scale).any(axis=other)
        if not per_step.any():
            return None
        first = int(np.argmax(per_step))
        worst = gap.max(axis=other)
        agree = (
            ""
            if first == 0
            else say("decoding.agrees_at", position=0)
            if first == 1
            else say("decoding.agrees_up_to", last=first - 1)
        )
        return say(
            "decoding.departs",
            agree=agree,
            first=first,
            steps=len(per_step),
            by=f"{worst[first]:.3g}",
            count=int(per_step.sum()),
            largest=f"{worst.max():.3g}",
        )

    return check
