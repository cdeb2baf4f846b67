"""A secret renaming of a translation task's words, drawn by the judge.

Capstone B trains on pairs of a grammar that ships with the course
(m2t_data/toy_translation.py), which the grading worker can read: held-out
pairs of that grammar are translated by a parser over its tables, with no
model at all. So the judge renames every word of both languages with
made-up words drawn from the grade's seed (fresh for each `m2t grade
--submission`) and hands the worker only renamed pairs; the held-out
references are renamed the same way and never leave the judge. The task's
structure is unchanged (one word for one word, the same word order, the
same vocabulary sizes), so a model learns it exactly as well, but no table
the worker can read maps a source to its target: the mapping is in the
training pairs only.

A parser of the original grammar meets sources it cannot read. Renaming the
target side alone would not do: a parser of the English could line its own
French up with the renamed targets of the training pairs and learn the
renaming without any model (tests/attacks/capstone_b_parses_grammar).
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence

import numpy as np

CONSONANTS = "bdfgklmnprstvz"
VOWELS = "aeiou"


def secret_words(count: int, rng: np.random.Generator) -> list[str]:
    """`count` distinct made-up words of two to three syllables ("kabo",
    "tesunu"), none a word of English or French the course uses, drawn
    from `rng`."""
    if int(count) != count or count < 0:
        raise ValueError(f"`count` must be a non-negative int, got {count!r}")
    syllables = [c + v for c in CONSONANTS for v in VOWELS]  # 70
    words: dict[str, None] = {}
    while len(words) < count:
        length = int(rng.integers(2, 4))
        picks = rng.integers(len(syllables), size=length)
        words.setdefault("".join(syllables[i] for i in picks), None)
    return list(words)


class Renaming:
    """One-to-one renamings of the source words and of the target words.

    Args:
        sentences: every (source, target) pair the renaming must cover
            (words split on single spaces).
        rng: the judge's generator (the grade's seed).
    """

    def __init__(
        self,
        sentences: Iterable[Sequence[str]],
        rng: np.random.Generator,
    ):
        pairs = list(sentences)
        source = sorted({w for s, _ in pairs for w in s.split(" ")})
        target = sorted({w for _, t in pairs for w in t.split(" ")})
        words = secret_words(len(source) + len(target), rng)
        order = rng.permutation(len(words))
        names = [words[i] for i in order]
        self.source = dict(zip(source, names[: len(source)], strict=True))
        self.target = dict(zip(target, names[len(source) :], strict=True))

    def source_sentence(self, sentence: str) -> str:
        """`sentence` with each source word renamed."""
        return " ".join(self.source[w] for w in sentence.split(" "))

    def target_sentence(self, sentence: str) -> str:
        """`sentence` with each target word renamed."""
        return " ".join(self.target[w] for w in sentence.split(" "))

    def pairs(self, pairs: Iterable[Sequence[str]]) -> list[tuple[str, str]]:
        """`pairs` with both sides renamed."""
        return [
            (self.source_sentence(s), self.target_sentence(t)) for s, t in pairs
        ]
