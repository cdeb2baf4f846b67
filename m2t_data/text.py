"""Text data: The Time Machine, English-French pairs, and their stand-ins.

Two sources for each loader:

* ``"real"``: the book's file (``timemachine.txt``, ``fra-eng.zip``),
  fetched and SHA-1 checked by ``m2t_data.fetch``;
* ``"embedded"``: text generated here from a fixed seed (no network):
  ``toy_char_corpus`` for the language-model lessons and ``toy_fra_eng``
  for translation.

Preprocessing follows d2l so the book's printed facts hold on real data:

* Time Machine: each run of non-letters becomes one space, then strip and
  lower-case the line.
* fra-eng: narrow no-break and no-break spaces become spaces, lower-case,
  and a space goes before ``, . ! ?`` unless one is already there.
"""

from __future__ import annotations

import io
import os
import re
import zipfile

from . import _fetch
from . import toy_chars
from . import toy_translation
from ._log import announce

_NON_LETTERS = re.compile(r"[^A-Za-z]+")
# A punctuation mark preceded by a character that is not a space.
_PUNCT_NEEDS_SPACE = re.compile(r"(?<=[^ ])([,.!?])")


def _check_source(source: str) -> None:
    if source not in ("embedded", "real"):
        raise ValueError(
            f"`source` must be 'embedded' or 'real', got {source!r}"
        )


def preprocess_time_machine(lines: list[str]) -> list[str]:
    """Letters only, one space between words, lower case (d2l's rule)."""
    return [_NON_LETTERS.sub(" ", line).strip().lower() for line in lines]


def preprocess_nmt(text: str) -> str:
    """d2l's ``preprocess_nmt``: spaces, lower case, space before , . ! ?"""
    text = text.replace("\u202f", " ").replace("\xa0", " ").lower()
    return _PUNCT_NEEDS_SPACE.sub(r" \1", text)


def split_pairs(text: str) -> list[tuple[str, str]]:
    """Tab-separated lines -> (source, target); short lines are skipped."""
    pairs = []
    for line in text.split("\n"):
        parts = line.split("\t")
        if len(parts) >= 2:
            pairs.append((parts[0], parts[1]))
    return pairs


def time_machine_lines(
    source: str = "embedded",
    data_dir: str | os.PathLike | None = None,
    *,
    cache_dir: str | os.PathLike | None = None,
    download: bool = True,
    seed: int = 0,
    verbose: bool = False,
) -> list[str]:
    """Preprocessed lines of a character corpus, in order.

    Args:
        source: ``"real"``: H. G. Wells, *The Time Machine* (3,221 lines,
            170,580 characters, 27 distinct: a-z and space).
            ``"embedded"``: ``toy_char_corpus``, prose generated from a
            small grammar (about 250,000 characters, same alphabet).
        data_dir: real only: a local folder holding ``timemachine.txt``.
        cache_dir: real only: where the verified copy is kept.
        download: real only: may the book's URL be used.
        seed: embedded only: generator seed.
        verbose: print a ``data: ...`` line saying which data this is.

    Returns:
        list of str, each only ``a-z`` and single spaces (may be empty).
    """
    _check_source(source)
    if source == "embedded":
        announce(f"data: toy_char_corpus (embedded, seed {seed})", verbose)
        return preprocess_time_machine(toy_chars.raw_lines(seed))
    path = _fetch.fetch("timemachine.txt", data_dir, cache_dir, download)
    announce(f"data: time_machine (real, {path})", verbose)
    return read_time_machine(path)


def read_time_machine(path: str | os.PathLike) -> list[str]:
    """Preprocessed lines of a local ``timemachine.txt``."""
    with open(path, encoding="utf-8") as f:
        return preprocess_time_machine(f.readlines())


def read_fra_eng_zip(path: str | os.PathLike) -> str:
    """Raw text of ``fra-eng/fra.txt`` inside a local ``fra-eng.zip``."""
    with zipfile.ZipFile(path) as zf, zf.open("fra-eng/fra.txt") as raw:
        # Universal newlines, as d2l's open(..., encoding="utf-8").read().
        return io.TextIOWrapper(raw, encoding="utf-8").read()


def fra_eng_text(
    source: str = "embedded",
    data_dir: str | os.PathLike | None = None,
    *,
    split: str = "train",
    cache_dir: str | os.PathLike | None = None,
    download: bool = True,
    seed: int = 0,
    verbose: bool = False,
) -> str:
    """Raw tab-separated English-French text, before preprocessing.

    One pair a line, ``English<TAB>French``, with capitals and punctuation
    as in ``fra.txt`` (d2l's ``read_data_nmt`` returns this string).

    Args:
        source: ``"real"``: Tatoeba pairs from manythings.org/anki,
            CC-BY 2.0 (France), 167,130 pairs, ``split`` must be
            ``"train"`` (all pairs, as d2l uses them).
            ``"embedded"``: ``toy_fra_eng``, generated pairs;
            ``split`` ``"train"`` (3,000) or ``"test"`` (300, disjoint).
        data_dir: real only: a local folder holding ``fra-eng.zip``.
        split: ``"train"`` or ``"test"`` (embedded only).
        cache_dir: real only: where the verified copy is kept.
        download: real only: may the book's URL be used.
        seed: embedded only: generator seed.
        verbose: print a ``data: ...`` line saying which data this is.

    Returns:
        str, lines separated by ``"\\n"``, ending with ``"\\n"``.
    """
    _check_source(source)
    if source == "embedded":
        announce(
            f"data: toy_fra_eng (embedded, seed {seed}, split {split})",
            verbose,
        )
        return toy_translation.raw_text(split, seed)
    if split != "train":
        raise ValueError(
            "the real fra_eng data has only split 'train' (all pairs, as "
            f"d2l uses them), got split={split!r}"
        )
    path = _fetch.fetch("fra-eng.zip", data_dir, cache_dir, download)
    announce(f"data: fra_eng (real, {path})", verbose)
    return read_fra_eng_zip(path)


def translation_pairs(
    source: str = "embedded",
    split: str = "train",
    data_dir: str | os.PathLike | None = None,
    *,
    num_examples: int | None = None,
    cache_dir: str | os.PathLike | None = None,
    download: bool = True,
    seed: int = 0,
    verbose: bool = False,
) -> list[tuple[str, str]]:
    """Preprocessed (English, French) pairs, e.g. ``("go .", "va !")``.

    The text of ``fra_eng_text`` after ``preprocess_nmt``, split on tabs
    (first two fields). Words are separated by single spaces, so
    ``s.split(" ")`` gives d2l's tokens.

    Args:
        source, split, data_dir, cache_dir, download, seed, verbose: as in
            ``fra_eng_text``.
        num_examples: keep only the first ``num_examples`` pairs.

    Returns:
        list of ``(source_sentence, target_sentence)`` str tuples.
    """
    text = fra_eng_text(
        source,
        data_dir,
        split=split,
        cache_dir=cache_dir,
        download=download,
        seed=seed,
        verbose=verbose,
    )
    pairs = split_pairs(preprocess_nmt(text))
    return pairs if num_examples is None else pairs[:num_examples]


def unseen_translation_pairs(
    num: int, draw: int, seed: int = 0
) -> list[tuple[str, str]]:
    """Preprocessed pairs of the embedded corpus's grammar that occur in
    neither of its splits (``toy_translation.unseen_pairs``): a held-out
    set only whoever knows ``draw`` can list, as ``translation_pairs``
    gives them, e.g. ``("the big red car is heavy .", ...)``.

    Args:
        num: how many pairs (positive).
        draw: their generator seed (a judge draws it for each grade).
        seed: the embedded corpus they avoid.

    Returns:
        list of ``(source_sentence, target_sentence)`` str tuples.
    """
    raw = toy_translation.unseen_pairs(num, draw, seed)
    return split_pairs(preprocess_nmt("".join(f"{e}\t{f}\n" for e, f in raw)))
