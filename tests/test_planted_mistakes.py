"""Mistakes written here, not taken from the catalogue
(solutions/mutants/), each the way a student could plausibly make it from
the book or the TODO, graded in full: each must fail the check named
beside it, a check that runs on small inputs.

They pin the edge cases in the graders' inputs (docs/edge-cases.md lists
them per lesson): a corpus with stray lines and a third column, a caller's
list that must be left alone, a series that is a strided column, a single
window, tabs and a Windows line end, a corpus holding <unk>, corpus lengths
whose minibatch counts depend on the offset. Being outside the catalogue,
none may get a "Likely mistake" label on its check; and where one used to
coincide with a catalogued mistake on what a label was drawn from, the
catalogued mistake is graded too and must still get its label there."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t.authoring.mutants import catalogue
from m2t.authoring.mutants import mutate

TOKENIZE = """    for line in text.split("\\n"):
        if num_examples is not None and len(source) >= num_examples:
            break
        parts = line.split("\\t")
        if len(parts) >= 2:
            source.append(parts[0].split(" "))
            target.append(parts[1].split(" "))"""

PLANTED: dict[str, tuple[str, list[tuple[str, str]], str]] = {
    # d2l's loop: counts lines, tab-less ones included, against the limit
    "l13_counts_lines_not_pairs": (
        "l13",
        [
            (
                TOKENIZE,
                """    for i, line in enumerate(text.split("\\n")):
        if num_examples is not None and i >= num_examples:
            break
        parts = line.split("\\t")
        if len(parts) >= 2:
            source.append(parts[0].split(" "))
            target.append(parts[1].split(" "))""",
            )
        ],
        "test_tokenize_nmt[2]",
    ),
    # the attribution column kept in the target
    "l13_keeps_the_third_column": (
        "l13",
        [
            (
                TOKENIZE,
                """    for line in text.split("\\n"):
        if num_examples is not None and len(source) >= num_examples:
            break
        if "\\t" in line:
            src, tgt = line.split("\\t", 1)
            source.append(src.split(" "))
            target.append(tgt.split(" "))""",
            )
        ],
        "test_tokenize_nmt[None]",
    ),
    # pads the caller's list in place (the given copy removed)
    "l13_pads_in_place": (
        "l13",
        [
            ("    line = list(line)\n", ""),
            (
                "    return line + [padding_token] * (num_steps - len(line))",
                "    line += [padding_token] * (num_steps - len(line))\n"
                "    return line",
            ),
        ],
        "test_truncate_pad_leaves_the_callers_line_alone[pad]",
    ),
    # np.squeeze of the model's (n, 1) output: a 0-d array when n = 1
    "l05_k_step_squeezes": (
        "l05",
        [
            (
                "pred = ops.convert_to_numpy(model(window)).reshape(n)",
                "pred = np.squeeze(ops.convert_to_numpy(model(window)))",
            )
        ],
        "test_k_step_predict_of_a_single_window[k_last]",
    ),
    # windows by strides of one item: right only for a contiguous series
    "l05_windows_by_item_strides": (
        "l05",
        [
            (
                "    columns = [x[i : i + n] for i in range(tau)]  # tau x (n,)\n"
                "    features = np.stack(columns, axis=1)  # (n, tau)\n",
                "    features = np.lib.stride_tricks.as_strided(\n"
                "        x, shape=(n, tau), strides=(x.itemsize, x.itemsize)\n"
                "    )\n",
            )
        ],
        "test_lagged_features_of_a_column",
    ),
    # each window rebuilt from the observations, the prediction only its
    # newest value: far-ahead errors as small as one-step ones, as when the
    # true values are fed back, yet not that mistake
    "l05_k_step_rebuilds_windows_from_x": (
        "l05",
        [
            ("    for _ in range(k):", "    for step in range(k):"),
            (
                "window = np.concatenate([window[:, 1:], pred[:, None]], axis=1)",
                "window = np.stack(\n"
                "            [x[step + 1 + i : step + 1 + i + n]"
                " for i in range(tau - 1)] + [pred],\n"
                "            axis=1,\n"
                "        )",
            ),
        ],
        "test_training_smoke_and_error_accumulation",
    ),
    # words split on spaces, the empty strings dropped: a tab or a "\r"
    # stays inside a word
    "l06_words_split_on_spaces_only": (
        "l06",
        [
            (
                "return [line.split() for line in lines]",
                'return [[w for w in line.split(" ") if w] for line in lines]',
            )
        ],
        "test_tokenize_other_whitespace",
    ),
    # only the reserved tokens are skipped: a corpus's own <unk> is added
    # a second time
    "l06_unk_in_corpus_added_again": (
        "l06",
        [
            (
                "if freq >= min_freq and tok not in known:",
                "if freq >= min_freq and tok not in reserved_tokens:",
            )
        ],
        "test_a_corpus_that_holds_unk",
    ),
    # the number of subsequences as if the offset cut nothing: the last one
    # is dropped when N is no multiple of T
    "l07_random_count_ignores_offset": (
        "l07",
        [
            (
                "    num_subseqs = (len(corpus) - offset - 1) // num_steps\n",
                "    num_subseqs = len(corpus) // num_steps - 1\n",
            )
        ],
        "test_random_minibatch_shapes_and_count[B1_T4_N55]",
    ),
    # the number of minibatches from the whole corpus, not from the rows
    # after the offset: one too many when N - 1 is a multiple of B T
    "l07_sequential_count_ignores_offset": (
        "l07",
        [
            (
                "    for i in range(Xs.shape[1] // num_steps):\n",
                "    for i in range((len(corpus) - 1)"
                " // (batch_size * num_steps)):\n",
            )
        ],
        "test_sequential_shapes_and_count[B3_T4_N49]",
    ),
    # starts drawn with replacement: a start repeats, none overlaps
    "l07_random_starts_drawn_with_replacement": (
        "l07",
        [
            (
                "rng.permutation(num_subseqs)",
                "rng.integers(num_subseqs, size=num_subseqs)",
            )
        ],
        "test_random_covers_each_subsequence_once[seed0-d2l_B2_T5_N35]",
    ),
}

COINCIDES = {
    # the 64-step MSE no worse than the one-step MSE, the label once drawn
    # from that alone
    "l05_k_step_rebuilds_windows_from_x": "k_step_uses_true_values",
    # two starts closer than T, the label once drawn from that alone
    "l07_random_starts_drawn_with_replacement": (
        "random_overlapping_subsequences"
    ),
}
"""Planted mistake -> the catalogued mistake it coincided with, on what
its check's label used to be drawn from."""


def _grade(lesson, replacements, name):
    """The checks of `lesson` graded on its solution edited so, by name."""
    from m2t.grading import runner

    solution = ROOT / "solutions" / f"{lesson.module}.py"
    text = mutate(solution.read_text(encoding="utf-8"), replacements, name)
    folder = Path(tempfile.mkdtemp(prefix=f"m2t-planted-{name}-"))
    try:
        (folder / solution.name).write_text(text, encoding="utf-8")
        (result,) = runner.grade([lesson], impl=str(folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {c.name: c for c in result.checks}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_planted_mistake_fails_its_check(name):
    tag, replacements, check = PLANTED[name]
    (lesson,) = [x for x in curriculum.lessons() if x.tag == tag]
    checks = _grade(lesson, replacements, name)
    failed = {n for n, c in checks.items() if c.status == "failed"}
    assert check in failed, sorted(failed)
    assert checks[check].mistake == "", checks[check].message
    if name in COINCIDES:  # the catalogued one keeps its label there
        known = COINCIDES[name]
        checks = _grade(lesson, catalogue(lesson.module)[known], known)
        assert checks[check].status == "failed", checks[check].message
        assert checks[check].mistake == known, checks[check].message
