"""Grader for lesson 13: preparing the machine translation data.

Pure Python and NumPy: every expectation is exact. The inputs are small
hand-made and generated corpora (no download); the vocabularies are plain
dicts, so the expected ids are known in advance.
Conventions: '<eos>' is appended before truncating or padding; padding goes
on the right; valid_len counts the non-'<pad>' tokens ('<eos>' included).
"""

from functools import partial

import numpy as np
import pytest

from graders.lib.contract import expect_value_errors
from graders.lib.conventions import book_vs_course
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import expect_shape
from graders.lib.judge import fail
from graders.lib.judge import mistake_outputs
from graders.lib.messages import say
from graders.lib.probes import value_errors
from graders.lib.tolerances import EXACT
from m2t.grading.probe import Lesson

lesson = Lesson("l13_machine_translation_data")

# ---------------------------------------------------------------- mistakes
SPACE_DOUBLED = Mistake(
    "space_before_every_mark",
    "a space is inserted before every , . ! ? even when one is already "
    "there, so 'va !' becomes 'va  !' and splitting gives empty tokens: "
    "insert it only when the previous character is not a space.",
)
EXAMPLES_OFF_BY_ONE = Mistake(
    "num_examples_off_by_one",
    "one pair more than num_examples is kept: stop as soon as "
    "num_examples pairs are in the lists.",
)
TRUNCATE_OFF_BY_ONE = Mistake(
    "truncate_pad_off_by_one",
    "a long line is cut to num_steps - 1 tokens: keep line[:num_steps], "
    "exactly num_steps.",
)
PADS_ON_LEFT = Mistake(
    "pads_on_left",
    "the padding goes before the tokens: pad on the right, so the first "
    "valid_len positions are the real tokens.",
)
NO_EOS = Mistake(
    "eos_not_appended",
    "'<eos>' is not appended to each line: the decoder must learn to emit "
    "it to stop, so every target ends with it (before padding).",
)
VALID_LEN_COUNTS_PADS = Mistake(
    "valid_len_counts_pads",
    "valid_len counts the padding too (it is num_steps everywhere): count "
    "only the entries that are not '<pad>'.",
)
LINE_LOOKUP = Mistake(
    "whole_line_lookup",
    book_vs_course(
        "build_array_nmt looks a whole line up, which a plain dict "
        "vocabulary refuses",
        "looks a whole line up at once, vocab[line], which its Vocab class "
        "allows",
        "passes any mapping of token -> id, a plain dict too: look each "
        "token up, [vocab[token] for token in line]",
        "build_array_nmt's contract is a mapping, and a dict cannot take a "
        "list as a key",
    ),
)
MISTAKES = (
    SPACE_DOUBLED,
    EXAMPLES_OFF_BY_ONE,
    TRUNCATE_OFF_BY_ONE,
    PADS_ON_LEFT,
    NO_EOS,
    VALID_LEN_COUNTS_PADS,
    LINE_LOOKUP,
)


# --------------------------------------------------------- references
@reference
def ref_preprocess(text, mistake=None):
    text = text.replace("\u202f", " ").replace("\xa0", " ").lower()
    out = []
    for i, char in enumerate(text):
        glued = mistake is SPACE_DOUBLED or text[i - 1] != " "
        out.append(" " + char if i > 0 and char in ",.!?" and glued else char)
    return "".join(out)


@reference
def ref_tokenize(text, num_examples=None, mistake=None):
    limit = num_examples
    if limit is not None and mistake is EXAMPLES_OFF_BY_ONE:
        limit += 1
    pairs = [line.split("\t") for line in text.split("\n")]
    pairs = [p for p in pairs if len(p) >= 2][:limit]
    return [p[0].split(" ") for p in pairs], [p[1].split(" ") for p in pairs]


@reference
def ref_truncate_pad(line, num_steps, pad, mistake=None):
    line = list(line)
    if len(line) > num_steps:
        keep = num_steps - 1 if mistake is TRUNCATE_OFF_BY_ONE else num_steps
        return line[:keep]
    padding = [pad] * (num_steps - len(line))
    return padding + line if mistake is PADS_ON_LEFT else line + padding


@reference
def ref_build_array(lines, vocab, num_steps, mistake=None):
    rows = []
    for line in lines:
        ids = [vocab[t] for t in line]
        if mistake is not NO_EOS:
            ids.append(vocab["<eos>"])
        rows.append(ref_truncate_pad(ids, num_steps, vocab["<pad>"], mistake))
    array = np.array(rows, dtype=np.int64).reshape(len(rows), num_steps)
    if mistake is VALID_LEN_COUNTS_PADS:
        return array, np.full(len(rows), num_steps)
    return array, (array != vocab["<pad>"]).sum(axis=1)


def _codes(text):
    """A string as an array of code points, so the judge can compare it."""
    return np.array([ord(c) for c in text], dtype=np.int64)


_diagnoses = partial(mistake_outputs, mistakes=MISTAKES, skip_right=True)
"""A mistake that gives the right answer here is left out."""


def _flat(array_and_valid_len):
    """(array, valid_len) -> one vector, to diagnose both at once."""
    array, valid_len = array_and_valid_len
    return np.concatenate([np.ravel(array), np.ravel(valid_len)])


# ------------------------------------------------------------------ probes
@lesson.probe
def run_preprocess(m, text):
    return m.preprocess_nmt(text)


@lesson.probe
def run_tokenize(m, text, num_examples=None):
    source, target = m.tokenize_nmt(text, num_examples)
    return [list(s) for s in source], [list(t) for t in target]


@lesson.probe
def run_truncate_pad(m, line, num_steps, pad):
    return list(m.truncate_pad(line, num_steps, pad))


@lesson.probe
def caller_line_after_truncate_pad(m, line, num_steps, pad):
    """The caller's list after `truncate_pad` returned."""
    m.truncate_pad(line, num_steps, pad)
    return list(line)


@lesson.probe
def run_build_array(m, lines, vocab, num_steps):
    try:
        array, valid_len = m.build_array_nmt(lines, vocab, num_steps)
    except TypeError as e:
        if "unhashable" not in str(e):
            raise
        return {"error": f"TypeError: {str(e).splitlines()[0]}"}
    return (
        np.asarray(array),
        str(np.asarray(array).dtype),
        np.asarray(valid_len),
    )


def build_array(lines, vocab, num_steps):
    """run_build_array, failing with LINE_LOOKUP where d2l's vocab[line]
    meets a dict."""
    got = run_build_array(lines, vocab, num_steps)
    if isinstance(got, dict):
        fail(
            [say("l13.plain_dict", error=got["error"])],
            LINE_LOOKUP,
        )
    return got


@lesson.probe
def run_pipeline(m, raw, num_steps):
    """preprocess -> tokenize -> the module's Vocab -> arrays -> back."""
    text = m.preprocess_nmt(raw)
    source, target = m.tokenize_nmt(text)
    vocab = m.Vocab(target, reserved_tokens=["<pad>", "<bos>", "<eos>"])
    array, valid_len = m.build_array_nmt(target, vocab, num_steps)
    decoded = [
        vocab.to_tokens(list(row[: int(n)]))
        for row, n in zip(array, valid_len, strict=True)
    ]
    return [list(t) for t in target], decoded


@lesson.probe
def run_errors(m):
    m.truncate_pad([1, 2], 3, 0)  # reaches the exercise first
    m.tokenize_nmt("a\tb", 1)
    return value_errors(
        {
            "num_steps": lambda: m.truncate_pad([1, 2], 0, 0),
            "num_examples": lambda: m.tokenize_nmt("a\tb", -1),
        }
    )


# ------------------------------------------------------------------ inputs
PREPROCESS_CASES = {
    "glued_marks": ("Go.\tVa !", "go .\tva !"),
    "comma_and_bang": ("Hello,World!", "hello ,world !"),
    "nbsp": ("Je\u202fsuis\xa0là ?", "je suis là ?"),
    "nbsp_before_mark": ("Attends\u202f!\tWait!", "attends !\twait !"),
    "mark_first": (".Start. Now!!", ".start . now ! !"),
    "mark_second": ("I.\tOk!", "i .\tok !"),  # index 1 follows index 0
}

CORPUS = (  # as the Tatoeba files have it: a third column, stray lines
    "go .\tva !\n"
    "\n"  # lines without a tab count as no pair (not as a line of the
    "\n"  # limit: with num_examples=2, two pairs still come back)
    "i lost .\tj'ai perdu .\tCC-BY 2.0 (France) Attribution: tatoeba.org\n"
    "he's calm .\til est calme .\n"
    "i'm home .\tje suis chez moi .\n"
)

VOCAB = {
    "<unk>": 0,
    "<pad>": 1,
    "<bos>": 2,
    "<eos>": 3,
    **{w: i + 4 for i, w in enumerate("a b c d e f g h".split())},
}
LINES = [
    ["a", "b"],  # short: padded
    ["c", "d", "e", "f"],  # + <eos> is exactly num_steps
    ["g", "h", "a", "b", "c"],  # num_steps: <eos> cut off
    ["a", "b", "c", "d", "e", "f", "g"],  # longer: truncated
    [],  # empty: just <eos>
]
NUM_STEPS = 5


# ------------------------------------------------------------------ checks
@pytest.mark.parametrize("case", list(PREPROCESS_CASES), ids=str)
def test_preprocess_nmt(case):
    raw, expected = PREPROCESS_CASES[case]
    got = run_preprocess(raw)
    expect(
        got == expected,
        say(
            "l13.preprocess",
            raw=repr(raw),
            expected=repr(expected),
            got=repr(got),
        ),
        got=_codes(got),
        diagnoses=_diagnoses(ref_preprocess, raw, pick=_codes),
    )


@pytest.mark.parametrize("num_examples", [None, 2, 0], ids=str)
def test_tokenize_nmt(num_examples):
    source, target = run_tokenize(CORPUS, num_examples)
    ref_source, ref_target = ref_tokenize(CORPUS, num_examples)
    expect(
        len(source) == len(target),
        say("l13.pairs", source=len(source), target=len(target)),
    )
    expect(
        len(source) == len(ref_source),
        say(
            "l13.num_pairs",
            num_examples=num_examples,
            expected=len(ref_source),
            got=len(source),
        ),
        got=np.array([len(source)]),
        diagnoses=_diagnoses(
            ref_tokenize,
            CORPUS,
            num_examples,
            pick=lambda out: np.array([len(out[0])]),
        ),
    )
    expect(
        source == ref_source and target == ref_target,
        say(
            "l13.tokenized",
            ref_source=ref_source,
            ref_target=ref_target,
            source=source,
            target=target,
        ),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize(
    "line,num_steps",
    [
        ([47, 4], 10),
        ([5, 6, 7], 3),
        ([5, 6, 7, 8, 9, 10, 11], 4),
        ([], 2),
    ],
    ids=["pad", "exact", "truncate", "empty"],
)
def test_truncate_pad(line, num_steps):
    got = run_truncate_pad(line, num_steps, 1)
    expected = ref_truncate_pad(line, num_steps, 1)
    expect_close(
        np.array(got),
        np.array(expected),
        say("l13.truncate_pad", line=line, num_steps=num_steps),
        tol=EXACT,
        diagnoses=_diagnoses(
            ref_truncate_pad, line, num_steps, 1, pick=np.array
        ),
        hint=say("l13.truncate_pad_hint"),
    )


@pytest.mark.parametrize(
    "line,num_steps", [([47, 4], 5), ([5, 6, 7, 8], 2)], ids=["pad", "cut"]
)
def test_truncate_pad_leaves_the_callers_line_alone(line, num_steps):
    after = caller_line_after_truncate_pad(list(line), num_steps, 1)
    expect(
        after == line,
        say("l13.caller_line", line=line, num_steps=num_steps, after=after),
    )


def test_truncate_pad_keeps_any_token_type():
    got = run_truncate_pad(["go", "."], 4, "<pad>")
    expect(
        got == ["go", ".", "<pad>", "<pad>"],
        say(
            "l13.token_types",
            expected=["go", ".", "<pad>", "<pad>"],
            got=got,
        ),
    )


@pytest.mark.points(2)
def test_build_array_nmt():
    array, dtype, valid_len = build_array(LINES, VOCAB, NUM_STEPS)
    ref_array, ref_valid = ref_build_array(LINES, VOCAB, NUM_STEPS)
    expect_shape(array, (len(LINES), NUM_STEPS), say("l13.array"))
    expect(
        dtype == "int32",
        say("l13.int32", dtype=dtype),
    )
    expect_close(
        array,
        ref_array,
        say("l13.array_values"),
        tol=EXACT,
        diagnoses=_diagnoses(
            ref_build_array, LINES, VOCAB, NUM_STEPS, pick=lambda o: o[0]
        ),
        hint=say("l13.array_hint"),
    )
    expect_close(
        valid_len,
        ref_valid,
        say("l13.valid_len_values"),
        tol=EXACT,
        diagnoses=_diagnoses(
            ref_build_array, LINES, VOCAB, NUM_STEPS, pick=lambda o: o[1]
        ),
    )


def test_go_dot_becomes_go_dot_eos_then_padding():
    """d2l's "go ." -> [47, 4, 1, 1, ...], with '<eos>' (3) appended."""
    vocab = {"<unk>": 0, "<pad>": 1, "<bos>": 2, "<eos>": 3, ".": 4, "go": 47}
    array, _, valid_len = build_array([["go", "."]], vocab, 10)
    expected = np.array([[47, 4, 3, 1, 1, 1, 1, 1, 1, 1]])
    expect_close(
        array,
        expected,
        say("l13.go_dot"),
        tol=EXACT,
        diagnoses=_diagnoses(
            ref_build_array, [["go", "."]], vocab, 10, pick=lambda o: o[0]
        ),
    )
    expect_close(
        valid_len,
        np.array([3]),
        say("l13.go_dot_valid_len"),
        tol=EXACT,
        diagnoses=_diagnoses(
            ref_build_array, [["go", "."]], vocab, 10, pick=lambda o: o[1]
        ),
    )


def test_valid_len_marks_exactly_the_real_tokens(rng):
    words = list(VOCAB)[4:]
    # every length from 0 to 8 at least once, so the lines at and around
    # num_steps = 7 (6 tokens and <eos> fill it exactly) are always there
    lengths = rng.permutation(np.r_[np.arange(9), rng.integers(0, 9, 3)])
    lines = [
        [words[i] for i in rng.integers(0, len(words), n)] for n in lengths
    ]
    array, _, valid_len = build_array(lines, VOCAB, 7)
    expect_shape(array, (len(lines), 7), say("l13.array"))
    expect_shape(valid_len, (len(lines),), say("l13.valid_len"))
    real = np.arange(7)[None, :] < np.asarray(valid_len)[:, None]
    expect(
        np.all((array != VOCAB["<pad>"]) == real),
        say("l13.real_tokens"),
        got=_flat((array, valid_len)),
        diagnoses=_diagnoses(ref_build_array, lines, VOCAB, 7, pick=_flat),
    )
    ends = [
        row[n - 1]
        for row, n, line in zip(array, valid_len, lines, strict=True)
        if len(line) < 7
    ]
    expect(
        all(e == VOCAB["<eos>"] for e in ends),
        say("l13.ends_with_eos"),
    )


def test_pipeline_round_trip(rng):
    """Generated pairs -> ids -> tokens again: nothing lost but padding."""
    words = ["Chat", "chien", "Rouge", "grand", "petit", "noir"]
    lines = []
    for _ in range(8):
        n = int(rng.integers(1, 5))
        sentence = " ".join(rng.choice(words, n)) + rng.choice([".", "!", "?"])
        lines.append(f"{sentence.lower()}\t{sentence}")
    target, decoded = run_pipeline("\n".join(lines), 8)
    expected = [t + ["<eos>"] for t in target]
    expect(
        decoded == expected,
        say("l13.round_trip", expected=expected[:2], got=decoded[:2]),
    )


def test_bad_arguments_raise_value_error():
    errors = run_errors()
    expect_value_errors(errors)
