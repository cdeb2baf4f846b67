"""Grader for lesson 06: `tokenize` and `Vocab`.

The corpus below has ties in frequency whose first-seen order is not
alphabetical, tokens at exactly `min_freq`, reserved tokens and unknown
tokens, so each ordering rule shows; lines with a tab and a Windows line
end, and a corpus that holds `<unk>` itself (as PTB's text does), are the
edge cases. Conventions: `<unk>` is index 0, then
the reserved tokens, then the corpus tokens by descending count (ties: first
seen first); tokens seen fewer than `min_freq` times map to 0.
"""

import collections

import numpy as np
import pytest

from graders.lib.contract import expect_value_errors
from graders.lib.conventions import book_vs_course
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import fail
from graders.lib.messages import say
from graders.lib.probes import value_errors
from m2t.grading.probe import Lesson

lesson = Lesson("l06_text_preprocessing")
UNK = "<unk>"

LINES = [
    "the cat sat on the mat",
    "the dog  sat on a log ",
    "",
    " a cat and a dog",
]
# Counts: the 3, a 3, cat 2, sat 2, on 2, dog 2, mat 1, log 1, and 1.
PROSE = [
    "the time traveller for so it will be convenient to speak of him",
    "was expounding a recondite matter to us",
]
RESERVED = ["<pad>", "<bos>", "<eos>"]
UNKNOWN = ["zebra", "Cat", ""]
# Whitespace other than the space: a tab, the "\r" that splitting Windows
# text on "\n" leaves, a line of whitespace only.
WHITESPACE = ["go\tnow", "a tab\tand  spaces ", "a windows line\r", " \t"]
# PTB's text (d2l's word2vec chapter) writes its rare words as <unk>.
UNK_LINES = ["the <unk> sat on the mat", "a <unk> and a <unk> dog"]

# ---------------------------------------------------------------- mistakes
SPLIT_ON_SPACE = Mistake(
    "split_on_single_space",
    "words are split with split(' '), so runs of spaces and leading or "
    "trailing spaces give empty tokens: split() with no argument splits on "
    "any run of whitespace.",
)
CHARS_DROP_SPACES = Mistake(
    "chars_drop_spaces",
    "character tokens leave the spaces out: a space is a token of a "
    "character-level corpus (d2l's 28 types: 26 letters, ' ' and <unk>).",
)
ASCENDING = Mistake(
    "vocab_ascending",
    "the tokens are sorted by ascending frequency: the most frequent token "
    "comes first, right after <unk> and the reserved tokens.",
)
UNK_NOT_AT_ZERO = Mistake(
    "unk_not_at_zero",
    "<unk> is not index 0 (the reserved tokens come first), yet unknown "
    "tokens look up 0: start idx_to_token with <unk>, then the reserved "
    "tokens.",
)
MIN_FREQ_OFF_BY_ONE = Mistake(
    "min_freq_off_by_one",
    "tokens seen exactly min_freq times are dropped: keep every token with "
    "count >= min_freq.",
)
TIES_ALPHABETICAL = Mistake(
    "ties_alphabetical",
    "tokens of equal frequency are ordered alphabetically: they keep the "
    "order in which they first appear (a stable sort by count only).",
)
FLAT_TO_TOKENS = Mistake(
    "to_tokens_flat_only",
    book_vs_course(
        "to_tokens raises a TypeError on nested indices",
        "'s to_tokens takes one flat list (int(index) for each index)",
        "maps lists, tuples and arrays of indices, nested to any depth, "
        "element by element, as vocab[...] maps tokens",
        "so vocab.to_tokens(vocab[x]) gives x back for every x vocab[...] "
        "takes, a batch of lines (B, T) included",
    ),
)
MISTAKES = (
    SPLIT_ON_SPACE,
    CHARS_DROP_SPACES,
    ASCENDING,
    UNK_NOT_AT_ZERO,
    MIN_FREQ_OFF_BY_ONE,
    TIES_ALPHABETICAL,
    FLAT_TO_TOKENS,
)
VOCAB_MISTAKES = (
    ASCENDING,
    UNK_NOT_AT_ZERO,
    MIN_FREQ_OFF_BY_ONE,
    TIES_ALPHABETICAL,
)


# ------------------------------------------------------------- references
@reference
def ref_tokenize(lines, token, mistake=None):
    if token == "word":
        if mistake is SPLIT_ON_SPACE:
            return [line.split(" ") for line in lines]
        return [line.split() for line in lines]
    if mistake is CHARS_DROP_SPACES:
        return [[c for c in line if c != " "] for line in lines]
    return [list(line) for line in lines]


def _flat(tokens):
    if tokens and isinstance(tokens[0], list):
        return [t for line in tokens for t in line]
    return list(tokens)


@reference
def ref_token_freqs(tokens, mistake=None):
    counts = collections.Counter(_flat(tokens))
    pairs = list(counts.items())  # first-seen order
    if mistake is ASCENDING:
        return sorted(pairs, key=lambda p: p[1])
    if mistake is TIES_ALPHABETICAL:
        return sorted(pairs, key=lambda p: (-p[1], p[0]))
    return sorted(pairs, key=lambda p: -p[1])


@reference
def ref_idx_to_token(tokens, min_freq=0, reserved=(), mistake=None):
    head = [*reserved, UNK] if mistake is UNK_NOT_AT_ZERO else [UNK, *reserved]
    out = list(head)
    for tok, freq in ref_token_freqs(tokens, mistake):
        keep = (
            freq > min_freq
            if mistake is MIN_FREQ_OFF_BY_ONE
            else (freq >= min_freq)
        )
        if keep and tok not in out:
            out.append(tok)
    return out


@reference
def ref_lookup(tokens, queries, min_freq=0, reserved=(), mistake=None):
    """Indices of `queries` (unknown -> 0) in the reference vocabulary."""
    index = {
        t: i
        for i, t in enumerate(
            ref_idx_to_token(tokens, min_freq, reserved, mistake)
        )
    }
    return np.array([index.get(q, 0) for q in queries], dtype=np.float64)


def _vocab_diagnoses(tokens, queries, min_freq=0, reserved=()):
    return {
        m: (lambda m=m: ref_lookup(tokens, queries, min_freq, reserved, m))
        for m in VOCAB_MISTAKES
    }


def _word_tokens():
    return [line.split() for line in LINES]


def _queries(tokens, reserved=()):
    return sorted(set(_flat(tokens))) + list(reserved) + [UNK] + UNKNOWN


# ------------------------------------------------------------------ probes
@lesson.probe
def run_tokenize(m, lines, token):
    return m.tokenize(lines, token)


@lesson.probe
def run_vocab(m, tokens, queries, min_freq=0, reserved=None):
    vocab = m.Vocab(tokens, min_freq=min_freq, reserved_tokens=reserved)
    return {
        "idx_to_token": list(vocab.idx_to_token),
        "len": len(vocab),
        "lookup": [int(vocab[q]) for q in queries],
        "token_freqs": [(str(t), int(f)) for t, f in vocab.token_freqs],
    }


def _or_error(call):
    """call() or, where it raises TypeError, {"error": its first line}."""
    try:
        return call()
    except TypeError as e:
        return {"error": f"TypeError: {str(e).splitlines()[0]}"}


@lesson.probe
def run_nested(m, tokens):
    vocab = m.Vocab(tokens, reserved_tokens=["<pad>"])
    nested = vocab[[["the", "cat"], ("zebra", "dog"), []]]
    flat = vocab[("a", "log")]
    return {
        "nested": nested,
        "flat": flat,
        "single": vocab["the"],
        "back": _or_error(lambda: vocab.to_tokens([[2, 4], [0, 7], []])),
        "back_array": _or_error(
            lambda: vocab.to_tokens(np.array([[2, 3], [4, 0]]))
        ),
        "back_scalar": vocab.to_tokens(np.int64(2)),
    }


@lesson.probe
def run_errors(m, lines):
    m.Vocab(m.tokenize(lines, "word"))  # the lesson is started
    return value_errors(
        {
            "token": lambda: m.tokenize(lines, "sentence"),
            "min_freq": lambda: m.Vocab([["a"]], min_freq=-1),
            "reserved_tokens": lambda: m.Vocab([["a"]], reserved_tokens=[UNK]),
        }
    )


# ------------------------------------------------------------------ checks
def _token_codes(outputs):
    """Lists of lines of tokens as float arrays of one shape, equal exactly
    when the tokens are: per line a flag (1: the line is there), then one id
    per distinct token, -1 past the line's end."""
    ids: dict[str, int] = {}
    rows = max(len(o) for o in outputs)
    width = max((len(line) for o in outputs for line in o), default=0)
    codes = []
    for o in outputs:
        code = np.full((rows, width + 1), -1.0)
        for i, line in enumerate(o):
            code[i, 0] = 1.0
            for j, tok in enumerate(line):
                code[i, j + 1] = ids.setdefault(repr(tok), len(ids))
        codes.append(code)
    return codes


def _expect_tokens(lines, token, message):
    """tokenize(lines, token) must be the reference; a catalogued mistake
    is named only when its tokens are exactly the student's."""
    got = run_tokenize(lines, token)
    expected = ref_tokenize(lines, token)
    mistakes = (SPLIT_ON_SPACE,) if token == "word" else (CHARS_DROP_SPACES,)
    outputs = [ref_tokenize(lines, token, mistake) for mistake in mistakes]
    readable = isinstance(got, list) and all(
        isinstance(line, (list, tuple)) for line in got
    )
    codes = _token_codes([got if readable else [], expected, *outputs])
    expect(
        readable and [list(line) for line in got] == expected,
        say(message, token=repr(token), expected=expected, got=got),
        got=codes[0] if readable else None,
        diagnoses=dict(zip(mistakes, codes[2:], strict=True)),
        expected=codes[1],
    )


@pytest.mark.parametrize("token", ["word", "char"])
def test_tokenize(token):
    _expect_tokens(LINES, token, "l06.tokenize")


def test_tokenize_other_whitespace():
    """Words are separated by any run of whitespace, not by spaces only."""
    _expect_tokens(WHITESPACE, "word", "l06.tokenize_whitespace")


@pytest.mark.points(2)
@pytest.mark.parametrize(
    "reserved", [[], RESERVED], ids=["no_reserved", "reserved"]
)
def test_vocab_order(reserved):
    tokens = _word_tokens()
    queries = _queries(tokens, reserved)
    facts = run_vocab(tokens, queries, 0, reserved or None)
    expected = ref_idx_to_token(tokens, 0, reserved)
    expect(
        facts["idx_to_token"] == expected,
        say("l06.idx_to_token", expected=expected, got=facts["idx_to_token"]),
        got=np.array(facts["lookup"]),
        diagnoses=_vocab_diagnoses(tokens, queries, 0, reserved),
    )
    expect(
        facts["lookup"] == ref_lookup(tokens, queries, 0, reserved).tolist(),
        say(
            "l06.lookups",
            queries=queries,
            expected=ref_lookup(tokens, queries, 0, reserved)
            .astype(int)
            .tolist(),
            got=facts["lookup"],
        ),
        got=np.array(facts["lookup"]),
        diagnoses=_vocab_diagnoses(tokens, queries, 0, reserved),
    )
    expect(
        facts["len"] == len(expected),
        say("l06.length", expected=len(expected), got=facts["len"]),
    )


def test_unknown_tokens_are_index_zero():
    tokens = _word_tokens()
    queries = UNKNOWN + [UNK, "the"]
    facts = run_vocab(tokens, queries, 0, RESERVED)
    expect(
        facts["idx_to_token"][:1] == [UNK]
        and facts["lookup"][: len(UNKNOWN) + 1] == [0] * (len(UNKNOWN) + 1),
        say(
            "l06.unknown",
            unknown=UNKNOWN,
            head=facts["idx_to_token"][:4],
            lookups=facts["lookup"],
        ),
        got=np.array(facts["lookup"]),
        diagnoses=_vocab_diagnoses(tokens, queries, 0, RESERVED),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("min_freq", [2, 3], ids=["min_freq2", "min_freq3"])
def test_min_freq(min_freq):
    tokens = _word_tokens()
    queries = _queries(tokens)
    facts = run_vocab(tokens, queries, min_freq)
    expected = ref_idx_to_token(tokens, min_freq)
    expect(
        facts["idx_to_token"] == expected,
        say(
            "l06.min_freq",
            min_freq=min_freq,
            expected=expected,
            got=facts["idx_to_token"],
        ),
        got=np.array(facts["lookup"]),
        diagnoses=_vocab_diagnoses(tokens, queries, min_freq),
    )
    expect(
        facts["lookup"] == ref_lookup(tokens, queries, min_freq).tolist(),
        say(
            "l06.min_freq_lookups",
            min_freq=min_freq,
            queries=queries,
            expected=ref_lookup(tokens, queries, min_freq).astype(int).tolist(),
            got=facts["lookup"],
        ),
        got=np.array(facts["lookup"]),
        diagnoses=_vocab_diagnoses(tokens, queries, min_freq),
    )


def test_ties_keep_first_seen_order():
    """'dog' and 'cat' are seen twice each, 'dog' first; 'b' and 'a' once."""
    tokens = [["dog", "cat", "b"], ["cat", "dog", "a"]]
    queries = ["a", "b", "cat", "dog"]
    facts = run_vocab(tokens, queries)
    expect(
        facts["idx_to_token"] == [UNK, "dog", "cat", "b", "a"],
        say(
            "l06.ties",
            expected=[UNK, "dog", "cat", "b", "a"],
            got=facts["idx_to_token"],
        ),
        got=np.array(facts["lookup"]),
        diagnoses=_vocab_diagnoses(tokens, queries),
    )


def test_a_corpus_that_holds_unk():
    """A corpus may hold <unk> itself: it stays index 0, once."""
    tokens = [line.split() for line in UNK_LINES]
    queries = _queries(tokens, RESERVED)
    facts = run_vocab(tokens, queries, 0, RESERVED)
    expected = ref_idx_to_token(tokens, 0, RESERVED)
    lookups = ref_lookup(tokens, queries, 0, RESERVED)
    expect(
        facts["idx_to_token"] == expected and facts["len"] == len(expected),
        say(
            "l06.unk_in_corpus",
            reserved=RESERVED,
            expected=expected,
            got=facts["idx_to_token"],
        ),
        got=np.array(facts["lookup"]),
        diagnoses=_vocab_diagnoses(tokens, queries, 0, RESERVED),
        expected=lookups,
    )
    expect(
        facts["lookup"] == lookups.tolist(),
        say(
            "l06.lookups",
            queries=queries,
            expected=lookups.astype(int).tolist(),
            got=facts["lookup"],
        ),
        got=np.array(facts["lookup"]),
        diagnoses=_vocab_diagnoses(tokens, queries, 0, RESERVED),
        expected=lookups,
    )


def test_token_freqs_list_every_token():
    tokens = _word_tokens()
    facts = run_vocab(tokens, ["the"], 3)
    expected = ref_token_freqs(tokens)
    expect(
        facts["token_freqs"] == expected,
        say("l06.token_freqs", expected=expected, got=facts["token_freqs"]),
    )


def test_character_vocab_of_prose():
    """As in d2l: the space is the most frequent character, then 'e'."""
    tokens = ref_tokenize(PROSE, "char")
    queries = _queries(tokens)
    facts = run_vocab(tokens, queries)
    expected = ref_idx_to_token(tokens)
    expect(
        facts["idx_to_token"] == expected and expected[1:3] == [" ", "e"],
        say("l06.char_vocab", expected=expected, got=facts["idx_to_token"]),
        got=np.array(facts["lookup"]),
        diagnoses=_vocab_diagnoses(tokens, queries),
    )


def test_flat_corpus_and_reserved_token_in_corpus():
    """A flat list of tokens gives the same vocabulary as its lines; a
    reserved token that the corpus also holds is not added twice."""
    tokens = [*_flat(_word_tokens()), "<pad>", "<pad>", "<pad>", "<pad>"]
    queries = _queries(tokens, ["<pad>"])
    facts = run_vocab(tokens, queries, 0, ["<pad>"])
    expected = ref_idx_to_token(tokens, 0, ["<pad>"])
    expect(
        facts["idx_to_token"] == expected,
        say("l06.flat_corpus", expected=expected, got=facts["idx_to_token"]),
        got=np.array(facts["lookup"]),
        diagnoses=_vocab_diagnoses(tokens, queries, 0, ["<pad>"]),
    )


def test_nested_lookups_and_to_tokens():
    facts = run_nested(_word_tokens())
    # <unk> 0, <pad> 1, the 2, a 3, cat 4, sat 5, on 6, dog 7, ...
    expected = {
        "nested": [[2, 4], [0, 7], []],
        "flat": [3, 9],
        "single": 2,
        "back": [["the", "cat"], [UNK, "dog"], []],
        "back_array": [["the", "a"], ["cat", UNK]],
        "back_scalar": "the",
    }
    for key, want in expected.items():
        if isinstance(facts[key], dict):
            error = facts[key]["error"]
            fail([say("l06.to_tokens_raised", error=error)], FLAT_TO_TOKENS)
        expect(
            facts[key] == want,
            say(
                "l06.nested",
                key=key,
                expected=repr(want),
                got=repr(facts[key]),
            ),
        )


def test_bad_arguments_raise_value_error():
    errors = run_errors(LINES)
    expect_value_errors(errors)
