"""The book's real files: d2l's printed facts, checksums, caching."""

from __future__ import annotations

import collections
import hashlib
import shutil

import pytest

import m2t_data
from m2t_data import _fetch
from m2t_data import text


def make_vocab(tokens, min_freq=0, reserved=()):
    """token -> index, ordered as d2l's Vocab.

    ``<unk>`` is 0, then the reserved tokens, then the tokens seen at least
    ``min_freq`` times by descending count; equal counts keep the order of
    first appearance (a stable sort of the Counter's items).
    """
    counts = collections.Counter(tokens)
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    order = ["<unk>", *reserved]
    order += [t for t, n in ranked if n >= min_freq and t not in order]
    return {t: i for i, t in enumerate(order)}


def pad_to(ids, num_steps, pad):
    return (ids + [pad] * num_steps)[:num_steps]


# ---------------------------------------------------------------- facts


@pytest.fixture(scope="module")
def tm_lines(time_machine_file, tmp_path_factory):
    return m2t_data.time_machine_lines(
        "real",
        data_dir=time_machine_file.parent,
        cache_dir=tmp_path_factory.mktemp("cache"),
    )


@pytest.fixture(scope="module")
def fra_pairs(fra_eng_file, tmp_path_factory):
    return m2t_data.translation_pairs(
        "real",
        data_dir=fra_eng_file.parent,
        cache_dir=tmp_path_factory.mktemp("cache"),
    )


def test_time_machine_has_3221_lines(tm_lines):
    assert len(tm_lines) == 3221
    assert tm_lines[0] == "the time machine by h g wells"
    assert (
        tm_lines[10]
        == "twinkled and his usually pale face was flushed and animated the"
    )


def test_time_machine_char_corpus_170580_tokens_28_types(tm_lines):
    chars = [c for line in tm_lines for c in line]
    vocab = make_vocab(chars)
    assert len(chars) == 170_580
    assert set(chars) == set("abcdefghijklmnopqrstuvwxyz ")
    assert len(vocab) == 28  # 27 characters and <unk>


def test_time_machine_top_words(tm_lines):
    counts = collections.Counter(w for line in tm_lines for w in line.split())
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:3]
    assert top == [("the", 2261), ("i", 1267), ("and", 1245)]


def test_fra_eng_pairs_and_source_vocab_10012(fra_pairs):
    assert len(fra_pairs) == 167_130
    assert fra_pairs[0] == ("go .", "va !")
    assert fra_pairs[2] == ("run !", "cours !")  # \u202f became a space
    source = [s.split(" ") for s, _ in fra_pairs]
    vocab = make_vocab(
        [t for line in source for t in line],
        min_freq=2,
        reserved=("<pad>", "<bos>", "<eos>"),
    )
    assert len(vocab) == 10_012
    ids = [vocab.get(t, 0) for t in source[0]]
    # d2l's printout: truncate_pad(src_vocab[source[0]], 10, <pad>)
    assert pad_to(ids, 10, vocab["<pad>"]) == [47, 4, 1, 1, 1, 1, 1, 1, 1, 1]
    # build_array_nmt appends <eos> (3) first
    with_eos = pad_to(ids + [vocab["<eos>"]], 10, vocab["<pad>"])
    assert with_eos == [47, 4, 3, 1, 1, 1, 1, 1, 1, 1]


def test_fra_eng_text_is_raw(fra_eng_file, tmp_path):
    raw = m2t_data.fra_eng_text("real", data_dir=fra_eng_file.parent)
    assert raw.startswith("Go.\tVa !\nHi.\tSalut !\n")
    assert "\u202f" in raw  # untouched before preprocessing


def test_real_test_split_is_refused(fra_eng_file):
    with pytest.raises(ValueError, match="only split 'train'"):
        m2t_data.fra_eng_text(
            "real", data_dir=fra_eng_file.parent, split="test"
        )


def _preprocess_nmt_by_chars(text_in):
    """A character loop, as the d2l book writes preprocess_nmt."""
    t = text_in.replace("\u202f", " ").replace("\xa0", " ").lower()
    out = []
    for i, ch in enumerate(t):
        if i > 0 and ch in ",.!?" and t[i - 1] != " ":
            out.append(" ")
        out.append(ch)
    return "".join(out)


def test_preprocess_nmt_matches_a_character_loop(fra_eng_file):
    raw = m2t_data.fra_eng_text("real", data_dir=fra_eng_file.parent)
    sample = raw[:200_000] + "\n.Start,end!?x\xa0?"
    assert text.preprocess_nmt(sample) == _preprocess_nmt_by_chars(sample)


# ------------------------------------------------------- fetch and cache


def test_fetch_copies_verified_file_into_cache(time_machine_file, tmp_path):
    cache = tmp_path / "cache"
    path = m2t_data.fetch("timemachine.txt", time_machine_file.parent, cache)
    assert path == cache / "timemachine.txt"
    assert _fetch.sha1_of(path) == _fetch.RESOURCES["timemachine.txt"].sha1
    assert sorted(p.name for p in cache.iterdir()) == ["timemachine.txt"]
    # Now cached: found without a folder and without the network.
    assert m2t_data.fetch("timemachine.txt", cache_dir=cache) == path


@pytest.mark.parametrize(
    "filename,loader",
    [
        ("timemachine.txt", m2t_data.time_machine_lines),
        ("fra-eng.zip", m2t_data.fra_eng_text),
    ],
    ids=["time_machine", "fra_eng"],
)
def test_corrupt_file_names_file_and_both_hashes(
    real_dir, tmp_path, filename, loader
):
    src = real_dir / filename
    if not src.is_file():
        pytest.skip(f"{filename} absent from {real_dir}")
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    mirror.mkdir()
    data = bytearray(src.read_bytes())
    data[len(data) // 2] ^= 0x01  # flip one bit
    (mirror / filename).write_bytes(bytes(data))
    got = hashlib.sha1(bytes(data)).hexdigest()
    expected = _fetch.RESOURCES[filename].sha1

    with pytest.raises(m2t_data.ChecksumError) as info:
        loader("real", data_dir=mirror, cache_dir=cache)
    message = str(info.value)
    assert filename in message
    assert expected in message and got in message
    assert (info.value.expected, info.value.got) == (expected, got)
    assert list(cache.iterdir()) == []  # no partial or temp file left


def test_missing_file_names_file_and_folder(tmp_path):
    empty, cache = tmp_path / "empty", tmp_path / "cache"
    empty.mkdir()
    with pytest.raises(m2t_data.DataNotFoundError) as info:
        m2t_data.time_machine_lines("real", data_dir=empty, cache_dir=cache)
    assert "timemachine.txt" in str(info.value)
    assert str(empty) in str(info.value)
    assert not cache.exists() or list(cache.iterdir()) == []


def test_offline_without_folder_or_cache_is_a_clear_error(tmp_path):
    with pytest.raises(m2t_data.DataNotFoundError, match="fra-eng.zip.*off"):
        m2t_data.fra_eng_text("real", cache_dir=tmp_path)


def test_mirror_from_environment(monkeypatch, time_machine_file, tmp_path):
    monkeypatch.setenv("M2T_DATA_MIRROR", str(time_machine_file.parent))
    lines = m2t_data.time_machine_lines("real", cache_dir=tmp_path)
    assert len(lines) == 3221


def test_corrupt_cached_copy_is_replaced(time_machine_file, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "timemachine.txt").write_text("not the book")
    with pytest.raises(m2t_data.DataNotFoundError):
        m2t_data.fetch("timemachine.txt", cache_dir=cache)  # offline
    assert list(cache.iterdir()) == []  # the corrupt copy is gone
    path = m2t_data.fetch("timemachine.txt", time_machine_file.parent, cache)
    assert _fetch.sha1_of(path) == _fetch.RESOURCES["timemachine.txt"].sha1


# ------------------------------------- checksum logic without real data


@pytest.fixture
def tiny_resource(monkeypatch):
    body = b"hello, world\n"
    res = _fetch.Resource(
        "tiny.txt", "http://invalid.test/tiny.txt",
        hashlib.sha1(body).hexdigest(), len(body),
    )  # fmt: skip
    monkeypatch.setitem(_fetch.RESOURCES, "tiny.txt", res)
    return res, body


def test_fetch_logic_on_a_tiny_file(tiny_resource, tmp_path):
    res, body = tiny_resource
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    mirror.mkdir()
    (mirror / "tiny.txt").write_bytes(body)
    assert m2t_data.fetch("tiny.txt", mirror, cache).read_bytes() == body

    shutil.rmtree(cache)
    (mirror / "tiny.txt").write_bytes(body.upper())
    bad = hashlib.sha1(body.upper()).hexdigest()
    with pytest.raises(m2t_data.ChecksumError, match=f"tiny.txt.*{res.sha1}"):
        m2t_data.fetch("tiny.txt", mirror, cache)
    with pytest.raises(m2t_data.ChecksumError, match=bad):
        m2t_data.fetch("tiny.txt", mirror, cache)
    assert list(cache.iterdir()) == []


def test_unknown_file_name():
    with pytest.raises(ValueError, match="unknown data file 'nope.txt'"):
        m2t_data.fetch("nope.txt")


def test_real_data_dir_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("M2T_REAL_DATA", str(tmp_path))
    assert m2t_data.real_data_dir() == tmp_path
    monkeypatch.setenv("M2T_REAL_DATA", str(tmp_path / "absent"))
    assert m2t_data.real_data_dir() is None
