"""The embedded (generated) data: determinism, content, shapes, speed."""

from __future__ import annotations

import collections
import time

import numpy as np
import pytest

import m2t_data
from m2t_data import toy_translation

# ---------------------------------------------------------- noisy sine


def test_noisy_sine_shapes_and_formula():
    t, x = m2t_data.noisy_sine()
    assert t.shape == x.shape == (1000,)
    assert t.dtype == x.dtype == np.float32
    np.testing.assert_array_equal(t, np.arange(1, 1001))
    noise = x - np.sin(0.01 * t.astype(np.float64))
    assert abs(noise.mean()) < 0.03
    assert 0.18 < noise.std() < 0.22


def test_noisy_sine_is_deterministic_per_seed():
    a, b = m2t_data.noisy_sine(seed=0)[1], m2t_data.noisy_sine(seed=0)[1]
    c = m2t_data.noisy_sine(seed=1)[1]
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert m2t_data.noisy_sine(T=7)[0].shape == (7,)
    with pytest.raises(ValueError, match="`T` must be positive, got 0"):
        m2t_data.noisy_sine(T=0)


# ------------------------------------------------------ char corpus


def test_char_corpus_looks_like_time_machine_lines():
    lines = m2t_data.time_machine_lines()
    chars = "".join(lines)
    assert 200_000 < len(chars) < 400_000
    assert set(chars) == set("abcdefghijklmnopqrstuvwxyz ")
    assert all(line == line.strip() and "  " not in line for line in lines)
    assert "" in lines  # paragraph breaks, as in the book
    words = collections.Counter(" ".join(lines).split())
    assert words.most_common(1)[0][0] == "the"
    assert 150 < len(words) < 1000


def test_char_corpus_is_deterministic_per_seed():
    assert m2t_data.time_machine_lines() == m2t_data.time_machine_lines()
    assert m2t_data.time_machine_lines(seed=1) != m2t_data.time_machine_lines()


# -------------------------------------------------- translation corpus


@pytest.fixture(scope="module")
def train():
    return m2t_data.translation_pairs("embedded", "train")


@pytest.fixture(scope="module")
def test():
    return m2t_data.translation_pairs("embedded", "test")


def test_translation_sizes_and_format(train, test):
    assert len(train) == 3000 and len(test) == 300
    for en, fr in train + test:
        assert en == en.lower() and fr == fr.lower()
        assert en[-2:] in (" .", " !") and fr[-2:] == en[-2:]
        assert len(en.split(" ")) <= 9 and len(fr.split(" ")) <= 9
    raw = m2t_data.fra_eng_text()
    first = raw.split("\n")[0]
    assert first[0].isupper() and "\t" in first and first[-1] in ".!"
    assert raw.endswith("\n") and raw.count("\n") == 3000


def test_translation_heldout_is_disjoint_from_train(train, test):
    def key(en):
        return en[:-2]  # words without the final punctuation

    assert not {key(en) for en, _ in test} & {key(en) for en, _ in train}
    assert len({key(en) for en, _ in train}) == 3000


def test_translation_is_a_function_of_the_source(train, test):
    seen = {}
    for en, fr in train + test:
        assert seen.setdefault(en, fr) == fr


def test_translation_is_deterministic_per_seed(train):
    assert m2t_data.translation_pairs() == train
    assert m2t_data.translation_pairs(seed=1) != train


def test_unseen_pairs_are_in_neither_split_and_fixed_by_their_draw(train, test):
    """A capstone's judge-side held-out set: the grammar's pairs, none of
    whose English sentences (punctuation aside) occurs in train or test."""
    unseen = m2t_data.unseen_translation_pairs(100, draw=7)
    assert len({en for en, _ in unseen}) == 100
    known = {en[:-2] for en, _ in train + test}
    assert not {en[:-2] for en, _ in unseen} & known
    assert m2t_data.unseen_translation_pairs(100, draw=7) == unseen
    assert m2t_data.unseen_translation_pairs(100, draw=8) != unseen
    for en, fr in unseen:  # formatted as translation_pairs gives them
        assert en == en.lower() and en[-2:] in (" .", " !")
        assert fr[-2:] == en[-2:]
    with pytest.raises(ValueError, match="`num` must be a positive int"):
        toy_translation.unseen_pairs(0, draw=7)


def _french_for(pairs, english_part):
    hits = [fr for en, fr in pairs if f" {english_part} " in f" {en} "]
    assert hits, f"no pair contains {english_part!r}"
    return hits


@pytest.mark.parametrize(
    "english,french",
    [
        ("red car", "voiture rouge"),
        ("red cars", "voitures rouges"),
        ("green apple", "pomme verte"),
        ("green apples", "pommes vertes"),
        ("green book", "livre vert"),
        ("white house", "maison blanche"),
        ("white houses", "maisons blanches"),
        ("big blue car", "grande voiture bleue"),
        ("old cat", "vieux chat"),
        ("old cows", "vieilles vaches"),
        ("the horses", "les chevaux"),
    ],
    ids=lambda s: s.replace(" ", "_"),
)
def test_adjectives_move_and_agree(train, english, french):
    for fr in _french_for(train, english):
        assert f" {french} " in f" {fr} ", fr


@pytest.mark.parametrize(
    "english,french",
    [
        ("i see", "je vois"),
        ("you see", "tu vois"),
        ("he sees", "il voit"),
        ("she sees", "elle voit"),
        ("we see", "nous voyons"),
        ("you all see", "vous voyez"),
        ("they see", "ils voient"),
        ("i do not see", "je ne vois pas"),
        ("she is not", "elle n'est pas"),
        ("we look for", "nous cherchons"),
        ("she looks for", "elle cherche"),
        ("the cats push", "les chats poussent"),
        ("the dog does not", "le chien ne"),
        ("my horses do not", "mes chevaux ne"),
    ],
    ids=lambda s: s.replace(" ", "_"),
)
def test_verbs_conjugate(train, english, french):
    starts = [fr for en, fr in train if en.startswith(english + " ")]
    assert starts, f"no pair starts with {english!r}"
    assert all(fr.startswith(french + " ") for fr in starts)


def test_gender_and_number_agreement(train):
    def has(words, sentence):
        return f" {words} " in f" {sentence} "

    french = [fr for _, fr in train]
    for fem in ("voiture", "pomme", "maison", "fille"):
        assert any(has(f"la {fem}", f) for f in french)
        assert not any(
            has(f"le {fem}", f) or has(f"un {fem}", f) for f in french
        )
    for masc in ("chat", "livre", "cheval", "garçon"):
        assert any(has(f"le {masc}", f) for f in french)
        assert not any(
            has(f"la {masc}", f) or has(f"une {masc}", f) for f in french
        )
    # predicate adjectives agree with the subject
    for en, fr in train:
        if en.startswith("the girls are ") or en.startswith("the cars are "):
            assert fr.split(" ")[-2].endswith("es"), (en, fr)  # f. plural
        if en.startswith("she is small"):
            assert fr.startswith("elle est petite "), fr
    # des -> de before a plural adjective in front of the noun
    assert any(has("de grandes", f) or has("de petits", f) for f in french)
    assert not any(has("des grandes", f) for f in french)


def test_word_order_differs_often(train):
    post = {a[0] for a in toy_translation.POST_ADJECTIVES}
    reordered = sum(any(w in post for w in en.split()) for en, _ in train)
    assert reordered > 0.3 * len(train)


# ---------------------------------------------------------- images


def test_toy_shapes_shapes_dtypes_balance():
    for split, n in (("train", 6000), ("test", 1000)):
        x, y = m2t_data.toy_shapes(split)
        assert x.shape == (n, 28, 28, 1) and x.dtype == np.uint8
        assert y.shape == (n,) and y.dtype == np.int32
        np.testing.assert_array_equal(np.bincount(y), [n // 10] * 10)


def test_toy_shapes_is_deterministic_and_varied():
    x0, y0 = m2t_data.toy_shapes("test", seed=0)
    x1, y1 = m2t_data.toy_shapes("test", seed=0)
    np.testing.assert_array_equal(x0, x1)
    np.testing.assert_array_equal(y0, y1)
    assert not np.array_equal(m2t_data.toy_shapes("test", seed=1)[0], x0)
    assert not np.array_equal(m2t_data.toy_shapes("train")[0][:1000], x0)
    disks = x0[y0 == 0].astype(np.float32)
    assert disks.std(axis=0).mean() > 30  # position/size/noise vary


def test_toy_shapes_classes_differ_on_average():
    x, y = m2t_data.toy_shapes("train")
    means = np.stack([x[y == c].mean(axis=0).ravel() for c in range(10)])
    dist = np.linalg.norm(means[:, None] - means[None], axis=-1)
    assert dist[~np.eye(10, dtype=bool)].min() > 50


def test_images_pipeline_resize_and_batch():
    ds = m2t_data.images(resize=32, batch_size=16)
    x, y = next(iter(ds))
    assert tuple(x.shape) == (16, 32, 32, 1) and x.dtype.name == "float32"
    assert tuple(y.shape) == (16,) and y.dtype.name == "int32"
    assert 0.0 <= float(np.min(x)) and float(np.max(x)) <= 1.0
    x, _ = next(iter(m2t_data.images(split="test", resize=(20, 24))))
    assert tuple(x.shape) == (20, 24, 1)
    x, y = next(iter(m2t_data.images()))
    raw_x, raw_y = m2t_data.toy_shapes("train")
    np.testing.assert_allclose(x.numpy()[..., 0], raw_x[0, ..., 0] / 255.0)
    assert int(y) == raw_y[0]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="`source` must be"):
        m2t_data.images("mnist")
    with pytest.raises(ValueError, match="`split` must be"):
        m2t_data.toy_shapes("val")
    with pytest.raises(ValueError, match="`source` must be"):
        m2t_data.time_machine_lines("book")


# -------------------------------------------------- announcements, speed


def test_verbose_says_which_data(capsys):
    m2t_data.translation_pairs(verbose=True)
    m2t_data.noisy_sine(verbose=True)
    m2t_data.time_machine_lines(seed=3, verbose=True)
    m2t_data.images(verbose=True)
    assert capsys.readouterr().out.splitlines() == [
        "data: toy_fra_eng (embedded, seed 0, split train)",
        "data: noisy_sine (embedded, seed 0, T 1000)",
        "data: toy_char_corpus (embedded, seed 3)",
        "data: toy_shapes (embedded, seed 0, split train)",
    ]


def _first_batch(ds):
    return next(iter(ds))


LOADERS = {
    "noisy_sine": lambda: m2t_data.noisy_sine(),
    "toy_char_corpus": lambda: m2t_data.time_machine_lines(),
    "toy_fra_eng_text": lambda: m2t_data.fra_eng_text(),
    "toy_fra_eng_pairs": lambda: (
        m2t_data.translation_pairs("embedded", "train"),
        m2t_data.translation_pairs("embedded", "test"),
    ),
    "toy_shapes_arrays": lambda: (
        m2t_data.toy_shapes("train"),
        m2t_data.toy_shapes("test"),
    ),
    "toy_shapes_pipeline": lambda: _first_batch(
        m2t_data.images(resize=96, batch_size=128)
    ),
}


@pytest.mark.parametrize("name", list(LOADERS))
def test_embedded_loads_in_under_2s(name):
    """Under 2 s of this process's CPU time (every thread's, tf.data's
    too), which the machine's load does not stretch as it does the wall
    clock (2-13 s of wall for 0.02-0.56 s of CPU at load 20 here)."""
    import tensorflow  # noqa: F401  (import time is not load time)

    start = time.process_time()
    LOADERS[name]()
    cpu = time.process_time() - start
    print(f"load {name}: {cpu:.3f} s of CPU")
    assert cpu < 2.0, f"{name} took {cpu:.2f} s of CPU"
