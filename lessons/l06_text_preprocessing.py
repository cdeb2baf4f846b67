# Your exercise file: replace each `raise NotImplementedError` below its
# TODO with your code, then run `m2t grade l06`.
# (Generated from solutions/l06_text_preprocessing.py by `m2t make-lessons`.)
"""Lesson 06: text preprocessing (文本预处理): tokens and a vocabulary.

Text becomes numbers in two steps:

1. Tokenize (词元化): split each line into tokens (词元), words or
   characters. Words are separated by any run of whitespace; characters
   keep every character, spaces included (a space is a token too).
2. Build a vocabulary (词表, vocabulary): a map token <-> index, from 0.
   Index 0 is the unknown token `<unk>` (未知词元), then the reserved tokens
   (e.g. `<pad>`, `<bos>`, `<eos>`) in the order given, then the tokens of
   the corpus (语料库) by descending frequency; tokens with the same
   frequency keep the order in which they first appear. Tokens seen fewer
   than `min_freq` times are left out and map to `<unk>`, as does any token
   never seen.

d2l's facts on *The Time Machine* (after keeping only letters, lowercased):
3,221 lines; as characters, 170,580 tokens of 28 types (26 letters, the
space and `<unk>`); the most frequent words are "the", "i", "and", "of".

Plain Python: no Keras layer here. (Keras's `StringLookup` does the same
job; its index 0 is also the out-of-vocabulary token.)

Reference: d2l 8.2 (9.2), "Converting Raw Text into Sequence Data".
"""

import collections
from collections.abc import Iterable
from collections.abc import Sequence

UNK = "<unk>"


def tokenize(lines: Sequence[str], token: str = "word") -> list[list[str]]:
    """Split each line into tokens.

    Args:
        lines: the text, one string per line.
        token: "word" (split on runs of whitespace, no empty tokens) or
            "char" (every character, spaces included).

    Returns:
        One list of tokens per line (an empty line gives `[]`).

    Raises:
        ValueError: naming `token` when it is neither "word" nor "char".
    """
    if token not in ("word", "char"):
        raise ValueError(f"`token` must be 'word' or 'char', got {token!r}")
    # TODO(l06): lines list[str] -> list[list[str]], one list of tokens per line
    #   (an empty line gives []). token == "word": the line's words, separated
    #   by any run of whitespace, never an empty string ("a b" gives ["a",
    #   "b"]); token == "char": every character, spaces included ("a b" gives
    #   ["a", " ", "b"]). Our solution is about 3 lines.
    #   中文：每行一个列表：按单词切分时任何空白都不能变成词元，
    #   按字符切分时空格也是词元。
    raise NotImplementedError("l06: tokenize")


def _flatten(tokens: Iterable) -> list[str]:
    """A corpus as one flat list: a list of lines of tokens is flattened."""
    tokens = list(tokens)
    if tokens and isinstance(tokens[0], (list, tuple)):
        return [tok for line in tokens for tok in line]
    return tokens


class Vocab:
    """A vocabulary: tokens <-> indices.

    Args:
        tokens: the corpus, a list of tokens or a list of lines of tokens.
        min_freq: int >= 0, tokens seen fewer times are left out.
        reserved_tokens: tokens placed right after `<unk>`, in this order,
            whether or not the corpus has them.

    Attributes:
        idx_to_token: list, the token of each index; `idx_to_token[0]` is
            `<unk>`.
        token_to_idx: dict, the index of each token.

    `vocab[token]` is the token's index (0 for unknown tokens);
    `vocab[[...]]` looks up a (nested) list or tuple and returns nested
    lists. `vocab.to_tokens(i)` is the inverse. `len(vocab)` counts `<unk>`
    and the reserved tokens. `vocab.token_freqs` lists every corpus token
    with its count, by descending count (ties: first seen first),
    `min_freq` notwithstanding.
    """

    def __init__(
        self,
        tokens: Iterable | None = None,
        min_freq: int = 0,
        reserved_tokens: Sequence[str] | None = None,
    ):
        if int(min_freq) != min_freq or min_freq < 0:
            raise ValueError(
                f"`min_freq` must be an int >= 0, got {min_freq!r}"
            )
        reserved_tokens = list(reserved_tokens or [])
        if UNK in reserved_tokens or len(set(reserved_tokens)) != len(
            reserved_tokens
        ):
            raise ValueError(
                "`reserved_tokens` must be distinct and must not hold "
                f"{UNK!r} (it is always index 0), got {reserved_tokens!r}"
            )
        corpus = _flatten(tokens if tokens is not None else [])
        # TODO(l06): corpus list[str] -> self._token_freqs list[tuple[str,
        #   int]]: every distinct corpus token with its count, by descending
        #   count, ties in the order in which the tokens first appear (never by
        #   the token text); then self.idx_to_token list[str]: UNK, the
        #   reserved_tokens in their order, then each token of _token_freqs seen
        #   at least min_freq times and not already there, in that order; and
        #   self.token_to_idx dict[str, int], its inverse. Our solution is about
        #   9 lines.
        #   中文：先计数再稳定排序（频率高的在前，并列保持首次出现的顺序）；
        #   索引依次是 <unk>、保留词元、出现至少 min_freq 次的词元。
        raise NotImplementedError("l06: Vocab.__init__")
        self.min_freq = int(min_freq)
        self.reserved_tokens = reserved_tokens

    def __len__(self) -> int:
        return len(self.idx_to_token)

    def __getitem__(self, tokens):
        """The index of a token (0 if unknown), or nested lists of indices
        for a (nested) list or tuple of tokens."""
        # TODO(l06): tokens str -> int: the token's index, self.unk (0) for a
        #   token the vocabulary does not hold; a list or tuple of tokens,
        #   nested to any depth -> lists with the same nesting, each token
        #   looked up: [["a", "b"], ["zz"]] gives [[index of a, index of b],
        #   [0]]. Our solution is about 3 lines.
        #   中文：词元查索引，未知词元给 self.unk；列表（可以嵌套）
        #   逐个元素递归查找。
        raise NotImplementedError("l06: Vocab.__getitem__")

    def to_tokens(self, indices):
        """The token of an index, or nested lists of tokens for a (nested)
        list, tuple or array of indices."""
        if hasattr(indices, "tolist"):  # NumPy arrays and scalars, tensors
            indices = indices.tolist()
        # TODO(l06): indices int -> str: the token at that index; a list or
        #   tuple, nested to any depth -> lists with the same nesting, each
        #   index looked up: the inverse of __getitem__. An index may be a NumPy
        #   integer. Our solution is about 3 lines.
        #   中文：__getitem__ 的反方向：索引查词元，列表逐个元素递归。
        raise NotImplementedError("l06: Vocab.to_tokens")

    @property
    def unk(self) -> int:
        """The index of `<unk>`: always 0."""
        return 0

    @property
    def token_freqs(self) -> list[tuple[str, int]]:
        """(token, count) of every corpus token, most frequent first."""
        return list(self._token_freqs)


def main() -> None:
    """The vocabularies of the character-level corpus."""
    import m2t_data

    lines = m2t_data.time_machine_lines(verbose=True)
    for kind in ("word", "char"):
        tokens = tokenize(lines, kind)
        vocab = Vocab(tokens)
        corpus = [vocab[tok] for line in tokens for tok in line]
        print(
            f"{kind}: {len(corpus)} tokens, {len(vocab)} types; most "
            f"frequent: {vocab.token_freqs[:5]}"
        )


if __name__ == "__main__":
    main()
