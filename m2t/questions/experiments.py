"""The experiments' references: an experiment question's expected value is
computed here from the reference formula and the question's `params`, so
experiments are graded in every edition (no key needed).

Every function takes plain numbers and lists (a question's `params`) and
returns a float, computed in float64 with NumPy.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

import numpy as np

from m2t.questions.questionbank import Question


def perplexity(probs: list[float]) -> float:
    """exp of the mean negative log-likelihood of the true tokens."""
    return float(np.exp(-np.mean(np.log(np.asarray(probs, np.float64)))))


def grad_clipping(
    grads: list[list[float]], theta: float, pick: list[int]
) -> float:
    """One entry of the gradients after g <- min(1, theta / ||g||) g, with
    the norm taken over all parameters together."""
    norm = math.sqrt(sum(float(np.sum(np.square(g))) for g in grads))
    scale = min(1.0, theta / norm)
    return grads[pick[0]][pick[1]] * scale


def bleu(
    pred: str,
    label: str,
    k: int = 2,
    *,
    brevity_penalty: bool = True,
    clip: bool = True,
) -> float:
    """BLEU of `pred` against `label` (words split on blanks), d2l's form:
    exp(min(0, 1 - len_label / len_pred)) * prod_{n=1..k} p_n^(1/2^n).

    p_n is the n-gram precision, each label n-gram matched at most as often
    as it occurs in the label (clipping). A prediction shorter than k words
    has no k-gram and scores 0.0. `brevity_penalty=False` and `clip=False`
    give the two classic mistakes (the graders use them for diagnoses).
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got k={k}")
    p, ref = pred.split(), label.split()
    if len(p) < k:
        return 0.0
    score = 1.0
    if brevity_penalty:
        score = math.exp(min(0.0, 1.0 - len(ref) / len(p)))
    for n in range(1, k + 1):
        counts = Counter(tuple(ref[i : i + n]) for i in range(len(ref) - n + 1))
        grams = [tuple(p[i : i + n]) for i in range(len(p) - n + 1)]
        matches = 0
        for gram in grams:
            if counts[gram] > 0:
                matches += 1
                if clip:
                    counts[gram] -= 1
        score *= (matches / len(grams)) ** (0.5**n)
    return score


def nadaraya_watson(
    keys: list[float], values: list[float], query: float
) -> float:
    """sum_i softmax_i(-(q - k_i)^2 / 2) v_i."""
    scores = -((query - np.asarray(keys, np.float64)) ** 2) / 2
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    return float(weights @ np.asarray(values, np.float64))


def dot_product_variance(d: int) -> float:
    """Var(q^T k) = sum_i Var(q_i k_i) = d E[q_i^2] E[k_i^2] = d."""
    return float(d) * 1.0 * 1.0


def mha_parameters(
    num_hiddens: int,
    num_heads: int,
    query_size: int,
    key_size: int,
    value_size: int,
) -> float:
    """W_q, W_k, W_v (size x num_hiddens) and W_o, without biases; the
    heads split the columns, so num_heads does not enter the count."""
    if num_hiddens % num_heads:
        raise ValueError(
            f"num_hiddens={num_hiddens} is not a multiple of "
            f"num_heads={num_heads}"
        )
    inputs = query_size + key_size + value_size
    return float(inputs * num_hiddens + num_hiddens * num_hiddens)


def attention_weights_exponent(n1: int, n2: int) -> float:
    """The growth exponent of the attention weights' size: one n x n
    matrix per batch and head, so log(n2^2 / n1^2) / log(n2 / n1)."""
    if not 0 < n1 < n2:
        raise ValueError(f"need 0 < n1 < n2, got n1={n1}, n2={n2}")
    return math.log((n2 * n2) / (n1 * n1)) / math.log(n2 / n1)


def positional_encoding(max_len: int, d: int) -> np.ndarray:
    """Interleaved: P[i, 2j] = sin(i / 10000^(2j/d)), P[i, 2j+1] = cos."""
    angles = np.arange(max_len)[:, None] / np.power(
        10000.0, np.arange(0, d, 2)[None, :] / d
    )
    P = np.zeros((max_len, d))
    P[:, 0::2] = np.sin(angles)
    P[:, 1::2] = np.cos(angles)
    return P


def pe_cosine(d: int, i: int, delta: int) -> float:
    """Cosine similarity of the rows P[i] and P[i + delta]."""
    P = positional_encoding(i + delta + 1, d)
    a, b = P[i], P[i + delta]
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def layer_norm(
    x: list[list[float]], row: int, column: int, epsilon: float
) -> float:
    """(x - mean) / sqrt(var + eps) over the last axis, gamma=1, beta=0."""
    X = np.asarray(x, np.float64)
    mean = X.mean(axis=-1, keepdims=True)
    var = X.var(axis=-1, keepdims=True)
    return float(((X - mean) / np.sqrt(var + epsilon))[row, column])


EXPERIMENTS: dict[str, Callable[..., float]] = {
    "perplexity": perplexity,
    "grad_clipping": grad_clipping,
    "bleu": bleu,
    "nadaraya_watson": nadaraya_watson,
    "dot_product_variance": dot_product_variance,
    "mha_parameters": mha_parameters,
    "attention_weights_exponent": attention_weights_exponent,
    "pe_cosine": pe_cosine,
    "layer_norm": layer_norm,
}


def expected_value(question: Question) -> float | None:
    """An experiment's value from its reference formula (None otherwise)."""
    if question.kind != "experiment":
        return None
    return EXPERIMENTS[question.experiment](**question.params)
