"""A counting baseline for a character language model: interpolated
Kneser-Ney n-grams, computed by the judge on the same split it scores the
student's model on.

For a context h of n - 1 characters and a next character c (Chen and
Goodman's interpolated Kneser-Ney, one discount D):

    P_n(c | h) = max(N(h c) - D, 0) / N(h)
                 + D * R(h) / N(h) * P_{n-1}(c | h')

with N the counts of the training text, R(h) the number of distinct
characters seen after h, and h' = h without its first character; a context
never seen (N(h) = 0) gives P_{n-1} alone. Below the top order, N counts
*continuations* (how many distinct characters precede h c), and order 1
interpolates with the uniform 1 / V, so no character gets probability 0.

The held-out text is read as the judge sends it: `(B, L)` streams, each
from its first character (a stream's context never reaches into another
stream), so position t of a stream sees at most its own t + 1 characters.
"""

from __future__ import annotations

import numpy as np

DISCOUNT = 0.75
"""Kneser-Ney's usual single discount."""


def _codes(ids: np.ndarray, n: int, V: int) -> np.ndarray:
    """Base-V codes of every window of n ids: `(N - n + 1,)` int64."""
    code = np.zeros(len(ids) - n + 1, dtype=np.int64)
    for k in range(n):
        code = code * V + ids[k : len(ids) - n + 1 + k]
    return code


def _lookup(keys: np.ndarray, values: np.ndarray, queries: np.ndarray):
    """values[keys == q] for each query (0 where absent); keys sorted."""
    at = np.searchsorted(keys, queries)
    at = np.minimum(at, len(keys) - 1)
    return np.where(keys[at] == queries, values[at], 0).astype(np.float64)


def _table(grams: np.ndarray, counts: np.ndarray, V: int) -> tuple:
    """The n-grams (sorted codes) and their counts, with per context its
    total and how many distinct characters follow it."""
    context = grams // V
    ctx, first = np.unique(context, return_index=True)
    totals = np.add.reduceat(counts, first)
    kinds = np.diff(np.append(first, len(context)))
    return grams, counts, ctx, totals, kinds


class KneserNey:
    """Counts of `train_ids` (1-D ints in [0, V)) for orders 1..order."""

    def __init__(self, train_ids: np.ndarray, V: int, order: int):
        if order < 1:
            raise ValueError(f"`order` must be >= 1, got {order!r}")
        ids = np.asarray(train_ids, dtype=np.int64)
        self.V, self.order = int(V), int(order)
        self.tables: dict[tuple[int, bool], tuple] = {}
        for n in range(1, order + 1):
            raw = np.unique(_codes(ids, n, V), return_counts=True)
            self.tables[n, True] = _table(*raw, V)
            if n < order:  # continuation counts: distinct left neighbours
                left = np.unique(_codes(ids, n + 1, V)) % V**n
                cont = np.unique(left, return_counts=True)
                self.tables[n, False] = _table(*cont, V)

    def log_probs(self, streams: np.ndarray) -> np.ndarray:
        """`(B, L)` ids -> `(B, L - 1, V)` log P(next | the stream so far,
        its last order - 1 characters at most)."""
        streams = np.asarray(streams, dtype=np.int64)
        B, L = streams.shape
        V = self.V
        chars = np.arange(V, dtype=np.int64)
        out = np.empty((B, L - 1, V))
        for t in range(L - 1):
            prob = np.full((B, V), 1.0 / V)  # order 0: uniform
            top = min(self.order, t + 2)
            for n in range(1, top + 1):
                grams, counts, ctx, totals, kinds = self.tables[n, n == top]
                h = np.zeros(B, dtype=np.int64)
                for k in range(t + 2 - n, t + 1):
                    h = h * V + streams[:, k]
                seen = _lookup(ctx, totals, h)  # (B,)
                kind = _lookup(ctx, kinds, h)
                hc = _lookup(grams, counts, h[:, None] * V + chars)  # (B, V)
                safe = np.maximum(seen, 1.0)[:, None]
                mixed = (
                    np.maximum(hc - DISCOUNT, 0.0) / safe
                    + DISCOUNT * kind[:, None] / safe * prob
                )
                prob = np.where(seen[:, None] > 0, mixed, prob)
            out[:, t] = np.log(prob)
        return out


def perplexity(log_probs: np.ndarray, streams: np.ndarray) -> float:
    """exp(-mean log P(actual next id)) over every stream position."""
    streams = np.asarray(streams)
    picked = np.take_along_axis(log_probs, streams[:, 1:, None], -1)
    return float(np.exp(-picked.mean()))


def best(
    train_ids: np.ndarray, streams: np.ndarray, V: int, orders=range(1, 9)
) -> tuple[int, float, dict[int, float]]:
    """The counting baseline: the order with the lowest held-out
    perplexity on `streams` (chosen on the held-out text itself, in the
    baseline's favour). Returns `(order, perplexity, {order: perplexity})`.
    """
    orders = list(orders)
    model = KneserNey(train_ids, V, max(orders))
    each = {}
    for n in orders:
        model.order = n
        each[n] = perplexity(model.log_probs(streams), streams)
    n = min(each, key=each.get)
    return n, each[n], each
