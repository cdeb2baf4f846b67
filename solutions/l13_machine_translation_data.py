"""Lesson 13: the machine translation data set (机器翻译数据集).

A translation corpus is a list of sentence pairs, one pair per line, source
and target separated by a tab ("Go.\\tVa !"). Before a model can read it:

1. Preprocess: replace the non-breaking spaces ('\\u202f', '\\xa0') by
   ordinary spaces, lower-case everything, and put a space before each
   punctuation mark , . ! ? that is glued to a word ("go." -> "go .").
2. Tokenize (词元化) at word level: split each line at the tab into source
   and target, then each side at spaces. Punctuation marks are tokens.
3. Build a vocabulary (词表) per language; here rare words (seen fewer than
   min_freq times) map to '<unk>', and three reserved tokens are added:
   '<pad>' (padding), '<bos>' (begin of sequence, the decoder's first
   input) and '<eos>' (end of sequence, what the decoder emits to stop).
4. Make every sequence the same length num_steps so that sequences can be
   batched (通过截断和填充文本序列，可以保证所有的文本序列都具有相同的长度，
   以便以小批量的方式加载): append '<eos>', then truncate a longer sequence
   to its first num_steps tokens, or pad a shorter one on the RIGHT with
   '<pad>' up to num_steps. valid_len counts the tokens that are not
   '<pad>' (the '<eos>' included): it is what later masks the padding out
   of the loss and out of attention.

    "go ."  -> ['go', '.', '<eos>', '<pad>', ..., '<pad>'], valid_len 3

On d2l's fra-eng data (the full corpus, min_freq 2) the source vocabulary
has 10,012 tokens and "go ." becomes [47, 4, 1, 1, 1, 1, 1, 1, 1, 1] with
num_steps 10: 47 is "go", 4 is ".", 1 is '<pad>'. Here `build_array_nmt`
appends '<eos>' (3) first: [47, 4, 3, 1, 1, 1, 1, 1, 1, 1], valid_len 3.

Everything here is plain Python and NumPy: data preparation happens once,
outside the model.

Reference: d2l 9.5 (10.5).
"""

from __future__ import annotations

import collections
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence

import numpy as np

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"


class Vocab:
    """A minimal word vocabulary (given: lesson 06 builds one in full).

    Index 0 is '<unk>', then the reserved tokens in the order given, then
    every token seen at least `min_freq` times, most frequent first (ties
    in order of first appearance).

    Args:
        tokens: a list of tokens, or a list of token lists.
        min_freq: int, rarer tokens map to '<unk>'.
        reserved_tokens: e.g. ['<pad>', '<bos>', '<eos>'].

    `vocab[token]` is an int and `vocab[list_of_tokens]` a list of ints;
    `len(vocab)` is the number of tokens; `vocab.to_tokens(ids)` inverts.
    """

    def __init__(
        self,
        tokens: Iterable = (),
        min_freq: int = 0,
        reserved_tokens: Sequence[str] = (),
    ):
        tokens = list(tokens)
        if tokens and isinstance(tokens[0], list):
            tokens = [token for line in tokens for token in line]
        counts = collections.Counter(tokens)
        # sorted() is stable: equal counts keep their first-seen order.
        by_freq = sorted(counts.items(), key=lambda kv: kv[1], reverse=True)
        self.idx_to_token = [UNK, *reserved_tokens]
        self.token_to_idx = {t: i for i, t in enumerate(self.idx_to_token)}
        for token, freq in by_freq:
            if freq < min_freq:
                break
            if token not in self.token_to_idx:
                self.token_to_idx[token] = len(self.idx_to_token)
                self.idx_to_token.append(token)

    def __len__(self) -> int:
        return len(self.idx_to_token)

    def __getitem__(self, tokens):
        if isinstance(tokens, (list, tuple)):
            return [self[token] for token in tokens]
        return self.token_to_idx.get(tokens, 0)

    def to_tokens(self, indices):
        if isinstance(indices, (list, tuple, np.ndarray)):
            return [self.idx_to_token[int(i)] for i in indices]
        return self.idx_to_token[int(indices)]


def preprocess_nmt(text: str) -> str:
    """Normalise raw tab-separated text.

    Replaces '\\u202f' and '\\xa0' by ' ', lower-cases, and inserts a space
    before ',', '.', '!' and '?' when the character before it is not
    already a space (a mark at the very start gets none).

        >>> preprocess_nmt("Go.\\tVa !")
        'go .\\tva !'
    """
    # TODO(l13): step 1 of the module docstring, text: str -> str. In the
    #   result both non-breaking spaces ('\u202f', '\xa0') are ordinary
    #   spaces and every letter is lower case; a punctuation mark , . ! ?
    #   that is not the first character and follows a character other
    #   than a space gets one space inserted before it ("go." -> "go .",
    #   "go ." and ".go" stay as they are). Nothing else changes: the tab
    #   stays. Our solution is about 6 lines.
    #   中文：不间断空格换成空格、转小写，
    #   只在紧贴前一个非空格字符的标点前补一个空格。
    # BEGIN SOLUTION
    text = text.replace("\u202f", " ").replace("\xa0", " ").lower()
    out = [
        " " + char if i > 0 and char in ",.!?" and text[i - 1] != " " else char
        for i, char in enumerate(text)
    ]
    return "".join(out)
    # END SOLUTION


def tokenize_nmt(
    text: str, num_examples: int | None = None
) -> tuple[list[list[str]], list[list[str]]]:
    """Split preprocessed text into source and target token lists.

    Args:
        text: lines "source<TAB>target", separated by '\\n'.
        num_examples: None for every pair, or keep only the first
            `num_examples` pairs.

    Returns:
        `(source, target)`: two lists of the same length, one token list per
        pair (lines without a tab, such as a final empty line, are skipped).

        >>> tokenize_nmt("go .\\tva !\\nhi .\\tsalut .\\n")
        ([['go', '.'], ['hi', '.']], [['va', '!'], ['salut', '.']])
    """
    if num_examples is not None and num_examples < 0:
        raise ValueError(
            f"`num_examples` must be None or >= 0, got {num_examples!r}"
        )
    source, target = [], []
    # TODO(l13): step 2 of the module docstring, text: str ->
    #   list[list[str]] twice: fill the given lists `source` and `target`,
    #   one token list per line "source<TAB>target" (lines end at '\n';
    #   tokens are separated by single spaces, so "go .\tva !" gives
    #   ['go', '.'] and ['va', '!']). A line without a tab is skipped; when
    #   num_examples is not None, only the first num_examples pairs are
    #   kept. Our solution is about 7 lines.
    #   中文：每行一对，用制表符分开源语言和目标语言，按空格切成词元；
    #   够 num_examples 对就停。
    # BEGIN SOLUTION
    for line in text.split("\n"):
        if num_examples is not None and len(source) >= num_examples:
            break
        parts = line.split("\t")
        if len(parts) >= 2:
            source.append(parts[0].split(" "))
            target.append(parts[1].split(" "))
    # END SOLUTION
    return source, target


def truncate_pad(line: list, num_steps: int, padding_token) -> list:
    """A sequence of exactly `num_steps` items.

    A longer line keeps its first `num_steps` items; a shorter one gets
    `padding_token` appended (on the right) up to `num_steps`.

        >>> truncate_pad([47, 4], 5, 1)
        [47, 4, 1, 1, 1]
        >>> truncate_pad(list("abcdefg"), 3, "<pad>")
        ['a', 'b', 'c']
    """
    if int(num_steps) != num_steps or num_steps <= 0:
        raise ValueError(
            f"`num_steps` must be a positive int, got {num_steps!r}"
        )
    line = list(line)
    # TODO(l13): line, L items: list[item] -> list[item], a new list of
    #   num_steps items: the first num_steps items when L > num_steps,
    #   else the L items followed by num_steps - L copies of
    #   padding_token (padding on the RIGHT). Our solution is about 3
    #   lines.
    #   中文：长于 num_steps 的截断，短的在右边填充，长度正好是 num_steps。
    # BEGIN SOLUTION
    if len(line) > num_steps:
        return line[:num_steps]  # truncate
    return line + [padding_token] * (num_steps - len(line))  # pad
    # END SOLUTION


def build_array_nmt(
    lines: Sequence[Sequence[str]], vocab: Mapping, num_steps: int
) -> tuple[np.ndarray, np.ndarray]:
    """Token lists -> a padded id array and the valid lengths.

    Args:
        lines: N token lists.
        vocab: maps a token to its id: `vocab[token]` (a `Vocab`, or a dict
            holding every token used plus '<eos>' and '<pad>').
        num_steps: int, the length of every row.

    Returns:
        `(array, valid_len)`: array `(N, num_steps)` int32, each line's ids
        followed by the id of '<eos>', truncated or padded with the id of
        '<pad>'; valid_len `(N,)` int32, the number of non-'<pad>' ids in
        each row.

        >>> vocab = {"<pad>": 0, "<eos>": 1, "go": 2, ".": 3}
        >>> array, valid_len = build_array_nmt([["go", "."]], vocab, 4)
        >>> array.tolist(), valid_len.tolist()
        ([[2, 3, 1, 0]], [3])
    """
    # TODO(l13): step 4 of the module docstring, lines
    #   list[list[str]] (N lines) -> (N, num_steps) int32 ids and (N,)
    #   int32 valid_len. Row n holds the ids vocab[token] of line n, then
    #   the id of '<eos>' (EOS), made num_steps long by truncate_pad with
    #   the id of '<pad>' (PAD). valid_len[n] = the number of entries of
    #   row n that are not the '<pad>' id. With N = 0 the ids still have
    #   shape (0, num_steps). Return (ids, valid_len).
    #   Our solution is about 5 lines.
    #   中文：每行末尾加 <eos>，截断或填充成 num_steps，
    #   valid_len 数出不是填充的词元（含 <eos>）。
    # BEGIN SOLUTION
    pad = vocab[PAD]
    rows = [[vocab[token] for token in line] + [vocab[EOS]] for line in lines]
    array = np.array(
        [truncate_pad(row, num_steps, pad) for row in rows], dtype="int32"
    ).reshape(len(rows), num_steps)  # (N, num_steps), also when N is 0
    valid_len = (array != pad).sum(axis=1).astype("int32")  # (N,)
    return array, valid_len
    # END SOLUTION


def load_data_nmt(
    num_steps: int, num_examples: int | None = 600, source: str = "embedded"
):
    """The whole pipeline on the course's data (given; uses the above).

    Args:
        num_steps: int, the length of every row.
        num_examples: None for every pair, else the first ones.
        source: "embedded" (generated, no network) or "real" (d2l's
            fra-eng), see `m2t_data.fra_eng_text`.

    Returns:
        `(src_array, src_valid_len, tgt_array, tgt_valid_len, src_vocab,
        tgt_vocab)`, arrays `(N, num_steps)` and `(N,)`.
    """
    import m2t_data  # the course's own package (see README)

    text = preprocess_nmt(m2t_data.fra_eng_text(source=source))
    src_lines, tgt_lines = tokenize_nmt(text, num_examples)
    reserved = [PAD, BOS, EOS]
    src_vocab = Vocab(src_lines, min_freq=2, reserved_tokens=reserved)
    tgt_vocab = Vocab(tgt_lines, min_freq=2, reserved_tokens=reserved)
    src_array, src_valid = build_array_nmt(src_lines, src_vocab, num_steps)
    tgt_array, tgt_valid = build_array_nmt(tgt_lines, tgt_vocab, num_steps)
    return src_array, src_valid, tgt_array, tgt_valid, src_vocab, tgt_vocab
