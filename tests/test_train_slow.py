"""d2l's printed results on the real data (slow: `pytest -m slow`), and
their short form, which CI runs (the real files are beside its clone).

seq2seq, Bahdanau attention and the Transformer on d2l's 600-pair fra-eng
setting translate `go .`, `i lost .` and `i'm home .` with BLEU 1.000 (the
book's printouts); the character GRU on the first 10,000 characters of The
Time Machine reaches perplexity <= 1.3 (the book: 1.1). Each runs the
recipe's full d2l settings on CPU (minutes each; see docs/training.md).

Like the book's, these are single runs, and a seed can miss a sentence:
the Transformer's seed 2 translates all four of d2l's sentences, as its
printout; seq2seq and Bahdanau at seed 0 translate the three and miss
`he's calm .` as d2l's own seq2seq printout does (measured on
2026-12-01, since they train on d2l's loss scale, docs/training.md). The
seeds below are the ones measured, with
TensorFlow's default threads (`op_threads=0`), which these runs keep: the
thread count changes the rounding of the sums and so the whole run (with
one thread per op, seq2seq's seed 0 gives `i lost . => je suis <unk> .`).
"""

from __future__ import annotations

import pytest

import m2t_data

real_data = pytest.mark.skipif(
    m2t_data.real_data_dir() is None,
    reason="the real data folder (../shared/data/real) is absent",
)
pytestmark = [real_data]

SENTENCES = ["go .", "i lost .", "i'm home ."]
MEASURED_WITH = {"op_threads": 0}  # TensorFlow's default threads


# The short form: d2l's real files through the same pipelines, a few
# steps each: the data is what the book uses and the models learn from it.
D2L_SIZES = {
    # d2l's 600 first pairs of fra-eng, words seen twice or more, with
    # <unk>, <pad>, <bos> and <eos>.
    "translation": "600 training pairs, vocab 184 -> 201",
    "language": "time_machine (real)",
}


@pytest.mark.parametrize("name", ["seq2seq", "transformer", "gru"])
def test_the_real_data_trains_in_short_form(name, tmp_path):
    from training import Options
    from training import train

    family = "language" if name == "gru" else "translation"
    settings = {"num_examples": 600} if family == "translation" else {}
    report = train(
        Options(
            name,
            data="real",
            smoke=True,
            out=str(tmp_path),
            verbose=0,
            settings=settings,
        )
    )
    assert report["data"]["source"] == "real"
    assert D2L_SIZES[family] in report["data"]["name"], report["data"]
    losses = [h["loss"] for h in report["history"]]
    assert losses[-1] < losses[0], losses
    if family == "translation":
        assert report["quality"]["bleu_on"] == "d2l's 4 test sentences"


@pytest.mark.slow
@pytest.mark.parametrize(
    "name,seed",
    [
        ("seq2seq", 0),
        ("bahdanau", 0),
        ("transformer", 2),
    ],
)
def test_d2l_translations_reach_bleu_1(name, seed, tmp_path):
    from training import Options
    from training import train

    report = train(
        Options(
            name,
            data="real",
            seed=seed,
            out=str(tmp_path),
            verbose=0,
            settings=MEASURED_WITH,
        )
    )
    got = {s: report["quality"][f"bleu[{s}]"] for s in SENTENCES}
    print(name, report["samples"], report["wall_time_s"])
    assert got == {s: 1.0 for s in SENTENCES}, report["samples"]


@pytest.mark.slow
def test_d2l_character_gru_perplexity(tmp_path):
    from training import Options
    from training import train

    report = train(
        Options(
            "gru",
            data="real",
            out=str(tmp_path),
            verbose=0,
            settings=MEASURED_WITH,
        )
    )
    print("gru", report["quality"], report["samples"])
    assert report["quality"]["perplexity"] <= 1.3
