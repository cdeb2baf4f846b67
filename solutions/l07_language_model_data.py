"""Lesson 07: language models and their data (语言模型和数据集).

A language model (语言模型) estimates P(x_1, ..., x_T) = prod_t
P(x_t | x_1, ..., x_{t-1}). It is trained on minibatches of subsequences
cut from one long corpus (语料库) of token indices: X holds num_steps tokens
and Y the same subsequence shifted by one token, the next token at each
position:

    X = corpus[s : s + num_steps],   Y = corpus[s + 1 : s + 1 + num_steps]

Both iterators first drop a random number of tokens, `offset` in
[0, num_steps), so different epochs cut the corpus at different places.

Random sampling (随机采样): the subsequences start at offset + k * num_steps
(k = 0, 1, ...), never overlap, and each is used once per epoch in a random
order; two neighbouring minibatches have nothing to do with each other, so a
model must start each minibatch from a fresh hidden state.

Sequential partitioning (顺序分区): the corpus (after the offset) is cut into
batch_size long rows; minibatch i takes columns [i * num_steps,
(i + 1) * num_steps) of every row, so row b of minibatch i + 1 continues row
b of minibatch i: a model may carry its hidden state across minibatches.

Perplexity (困惑度): the exponential of the mean cross-entropy over the n
predicted tokens, exp(-(1/n) sum_t log P(x_t | x_<t)). A perfect model has
perplexity 1; a uniform guess over V tokens has perplexity V.

Reference: d2l 8.3 (9.3), "Language Models".
"""

from collections.abc import Iterator
from collections.abc import Sequence

import keras
import numpy as np
from keras import ops


def _check(
    corpus: Sequence[int],
    batch_size: int,
    num_steps: int,
    seed: int | np.random.Generator | None,
) -> tuple[np.ndarray, np.random.Generator]:
    for name, value in (("batch_size", batch_size), ("num_steps", num_steps)):
        if int(value) != value or value <= 0:
            raise ValueError(f"`{name}` must be a positive int, got {value!r}")
    corpus = np.asarray(corpus)
    if corpus.ndim != 1:
        raise ValueError(
            f"`corpus` must be a 1-D sequence of token indices, got shape "
            f"{corpus.shape}"
        )
    if len(corpus) < (batch_size + 1) * num_steps:
        raise ValueError(
            f"`corpus` has {len(corpus)} tokens; one minibatch of "
            f"batch_size={batch_size} x num_steps={num_steps} needs at least "
            f"{(batch_size + 1) * num_steps} whatever the offset"
        )
    return corpus, np.random.default_rng(seed)


def seq_data_iter_random(
    corpus: Sequence[int],
    batch_size: int,
    num_steps: int,
    seed: int | np.random.Generator | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Minibatches of random, non-overlapping subsequences (one epoch).

    Args:
        corpus: `(N,)` token indices.
        batch_size: int, B, subsequences per minibatch.
        num_steps: int, T, tokens per subsequence.
        seed: int, `np.random.Generator` or None: the randomness (offset and
            order). The same seed gives the same minibatches.

    Yields:
        `(X, Y)`, each `(B, T)` NumPy arrays of token indices, `Y` being `X`
        shifted one token on. With `offset` drawn from [0, T), the
        subsequences start at `offset + k * T` for
        k = 0 .. (N - offset - 1) // T - 1; each is used at most once, in a
        random order; the ones that do not fill a last minibatch are left
        out.

    Raises:
        ValueError (when iterated): a bad `batch_size` or `num_steps`, or a
            `corpus` too short for one minibatch.
    """
    corpus, rng = _check(corpus, batch_size, num_steps, seed)
    # TODO(l07): the docstring's random sampling. The offset, uniform in [0, T),
    #   and the order come from rng alone, so the same seed gives the same
    #   minibatches. The subsequences start at s_k = offset + k T for k = 0 ..
    #   K-1, K = (N - offset - 1) // T (the -1 leaves room for the last Y
    #   token), each used once, in a random order; minibatch i takes the next B
    #   starts and gives X[b] = corpus[s : s + T] and Y[b] = corpus[s + 1 : s +
    #   1 + T]: corpus (N,) -> X (B, T) and Y (B, T) NumPy ints per minibatch, K
    #   // B minibatches, yielded; starts left over after the last full
    #   minibatch are dropped. Our solution is about 9 lines.
    #   中文：随机采样：随机偏移后切成互不重叠的子序列，打乱后每个只用一次；
    #   Y 是 X 后移一个词元。
    # BEGIN SOLUTION
    offset = int(rng.integers(num_steps))
    num_subseqs = (len(corpus) - offset - 1) // num_steps
    starts = offset + num_steps * rng.permutation(num_subseqs)  # shuffled
    for i in range(num_subseqs // batch_size):
        batch = starts[i * batch_size : (i + 1) * batch_size]  # (B,)
        X = np.stack([corpus[s : s + num_steps] for s in batch])  # (B, T)
        Y = np.stack([corpus[s + 1 : s + 1 + num_steps] for s in batch])
        yield X, Y
    # END SOLUTION


def seq_data_iter_sequential(
    corpus: Sequence[int],
    batch_size: int,
    num_steps: int,
    seed: int | np.random.Generator | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Minibatches that continue each other row by row (one epoch).

    Args:
        corpus: `(N,)` token indices.
        batch_size: int, B, rows.
        num_steps: int, T, tokens per row per minibatch.
        seed: int, `np.random.Generator` or None: the random offset in
            [0, T). The same seed gives the same minibatches.

    Yields:
        `(X, Y)`, each `(B, T)` NumPy arrays of token indices, `Y` being `X`
        shifted one token on. After the offset, the corpus is cut into B
        contiguous rows of L = (N - offset - 1) // B tokens; minibatch i is
        columns [i*T, (i+1)*T) of those rows, for i < L // T. So
        `X[b, 0]` of minibatch i + 1 comes right after `X[b, -1]` of
        minibatch i in the corpus.

    Raises:
        ValueError (when iterated): a bad `batch_size` or `num_steps`, or a
            `corpus` too short for one minibatch.
    """
    corpus, rng = _check(corpus, batch_size, num_steps, seed)
    # TODO(l07): the docstring's sequential partitioning. The offset, uniform in
    #   [0, T), comes from rng. After it the corpus is B contiguous rows of L =
    #   (N - offset - 1) // B tokens, Xs (B, L), and Ys (B, L) holds the same
    #   rows one token later; minibatch i is columns [i T, (i + 1) T) of both,
    #   for i < L // T: corpus (N,) -> X (B, T) and Y (B, T) per minibatch, L //
    #   T minibatches, yielded, where X[b, 0] of minibatch i + 1 comes right
    #   after X[b, -1] of minibatch i in the corpus. Our solution is about 8
    #   lines.
    #   中文：顺序分区：语料排成 batch_size 行，
    #   每个小批量的第 b 行接着上一个小批量的第 b 行。
    # BEGIN SOLUTION
    offset = int(rng.integers(num_steps))
    num_tokens = ((len(corpus) - offset - 1) // batch_size) * batch_size
    Xs = corpus[offset : offset + num_tokens].reshape(batch_size, -1)
    Ys = corpus[offset + 1 : offset + 1 + num_tokens].reshape(batch_size, -1)
    for i in range(Xs.shape[1] // num_steps):
        columns = slice(i * num_steps, (i + 1) * num_steps)
        yield Xs[:, columns], Ys[:, columns]  # (B, T) each
    # END SOLUTION


def perplexity(losses):
    """exp(mean cross-entropy): the perplexity of a language model.

    Args:
        losses: per-token cross-entropies -log P(x_t | x_<t), any shape
            (e.g. `(B, T)`), a NumPy array or a tensor. For
            log-probabilities, pass their negatives.

    Returns:
        A scalar tensor: exp of the mean over every token. 1 for a perfect
        model, V for a uniform guess over V tokens.
    """
    losses = ops.convert_to_tensor(losses)
    if "float" not in keras.backend.standardize_dtype(losses.dtype):
        losses = ops.cast(losses, "float32")
    # TODO(l07): PPL = e^(average loss): e to the power of the average of all n
    #   per-token losses (their average, not their total, so PPL does not depend
    #   on how many tokens were scored): losses (...) -> () a scalar tensor; 1
    #   for a perfect model, V for a uniform guess over V tokens. Our solution
    #   is about 1 line.
    #   中文：困惑度是平均交叉熵的指数：取平均而不是求和。
    # BEGIN SOLUTION
    return ops.exp(ops.mean(losses))
    # END SOLUTION


def main() -> None:
    """d2l's toy example: the corpus 0..34, 2 rows of 5 steps."""
    corpus = list(range(35))
    for name, fn in (
        ("random", seq_data_iter_random),
        ("sequential", seq_data_iter_sequential),
    ):
        print(f"{name} sampling:")
        for X, Y in fn(corpus, batch_size=2, num_steps=5, seed=0):
            print("X:", X.tolist(), "\nY:", Y.tolist())


if __name__ == "__main__":
    main()
