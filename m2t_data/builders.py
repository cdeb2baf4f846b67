"""TFDS builders, registered when ``m2t_data`` is imported.

Real data (the book's files, SHA-1 checked):

* ``time_machine``: one example per preprocessed line, in order.
* ``fra_eng``: one example per (English, French) pair, preprocessed.

Embedded data (generated, seed 0, no network):

* ``noisy_sine``: one example holding the whole series.
* ``toy_char_corpus``: one example per preprocessed line, in order.
* ``toy_fra_eng``: splits ``train`` (3,000) and ``test`` (300).
* ``toy_shapes``: splits ``train`` (6,000) and ``test`` (1,000).

Offline, the real builders read their file from TFDS's ``manual_dir``::

    tfds.load("fra_eng", split="train", data_dir=tmp,
              download_and_prepare_kwargs={"download_config":
                  tfds.download.DownloadConfig(manual_dir=folder)})

Otherwise they use ``$M2T_DATA_MIRROR``, then the book's URL (through the
TFDS download manager, unless ``$M2T_OFFLINE`` is set). A file with the
wrong SHA-1 raises ``ChecksumError`` naming the file and both hashes; TFDS
prepares into a temporary folder and removes it on error, so no partial
dataset is left.
"""

from __future__ import annotations

import importlib.resources
import importlib.resources.abc
import os
import sys

import numpy as np
import tensorflow_datasets as tfds
from etils import epath

from . import _fetch
from . import text
from . import toy_chars
from . import toy_shapes
from . import toy_sine
from . import toy_translation

try:
    import importlib_resources  # noqa: F401
except ImportError:
    # TFDS 4.9.x uses `importlib_resources.abc.Traversable` to locate a
    # builder's code (DatasetBuilder.code_path) but declares the package
    # only for Python < 3.9 (tensorflow/datasets#11212), so preparing any
    # builder outside TFDS fails with ModuleNotFoundError. The standard
    # library's `importlib.resources` has the same `abc.Traversable`.
    # Declaring `importlib_resources` as a dependency makes this a no-op.
    sys.modules["importlib_resources"] = importlib.resources

_D2L = "https://d2l.ai"
_D2L_CITATION = """@book{zhang2023dive,
  title={Dive into Deep Learning},
  author={Zhang, Aston and Lipton, Zachary C. and Li, Mu and Smola,
          Alexander J.},
  publisher={Cambridge University Press},
  year={2023}
}"""


def _manual_instructions(filename: str) -> str:
    res = _fetch.resource(filename)
    return (
        f"Put the book's `{filename}` (sha1 {res.sha1}, {res.size:,} bytes, "
        f"from {res.url}) in the manual_dir, e.g. "
        "tfds.download.DownloadConfig(manual_dir=m2t_data.real_data_dir())."
    )


def _locate(dl_manager, filename: str) -> epath.Path:
    """Find ``filename`` for a real builder and check its SHA-1.

    manual_dir (when it exists and is not empty) -> $M2T_DATA_MIRROR ->
    the book's URL through ``dl_manager``.
    """
    res = _fetch.resource(filename)
    try:
        manual = dl_manager.manual_dir
    except AssertionError:  # TFDS: manual_dir missing or empty
        manual = None
    mirror = os.environ.get("M2T_DATA_MIRROR")
    folder = manual or (epath.Path(mirror) if mirror else None)
    if folder is not None:
        path = folder / filename
        if not path.exists():
            raise _fetch.DataNotFoundError(
                f"{filename}: not found in the manual_dir {folder} "
                f"(expected {path}). {_manual_instructions(filename)}"
            )
        _fetch.verify(path, res)
        return path
    if not _fetch.downloads_allowed():
        raise _fetch.DataNotFoundError(
            f"{filename}: no manual_dir and $M2T_OFFLINE is set. "
            + _manual_instructions(filename)
        )
    path = epath.Path(dl_manager.download(res.url))
    got = _fetch.sha1_of(path)
    if got != res.sha1:
        path.unlink()
        raise _fetch.ChecksumError(filename, res.url, res.sha1, got)
    return path


def _text_info(builder, description: str, features: dict, homepage: str):
    return tfds.core.DatasetInfo(
        builder=builder,
        description=description,
        features=tfds.features.FeaturesDict(features),
        homepage=homepage,
        citation=_D2L_CITATION,
        disable_shuffling=True,  # keep the corpus order
    )


class TimeMachine(tfds.core.GeneratorBasedBuilder):
    """H. G. Wells, The Time Machine, as d2l preprocesses it."""

    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "d2l's timemachine.txt, d2l's preprocessing."}
    MANUAL_DOWNLOAD_INSTRUCTIONS = _manual_instructions("timemachine.txt")

    def _info(self) -> tfds.core.DatasetInfo:
        return _text_info(
            self,
            "The Time Machine (public domain), 3,221 lines: each run of "
            "non-letters replaced by one space, stripped, lower case.",
            {"text": tfds.features.Text()},
            "https://www.gutenberg.org/ebooks/35",
        )

    def _split_generators(self, dl_manager):
        path = _locate(dl_manager, "timemachine.txt")
        return {"train": self._generate_examples(path)}

    def _generate_examples(self, path):
        for i, line in enumerate(text.read_time_machine(path)):
            yield i, {"text": line}


class FraEng(tfds.core.GeneratorBasedBuilder):
    """English-French pairs from Tatoeba (manythings.org/anki), as d2l."""

    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "d2l's fra-eng.zip, d2l's preprocess_nmt."}
    MANUAL_DOWNLOAD_INSTRUCTIONS = _manual_instructions("fra-eng.zip")

    def _info(self) -> tfds.core.DatasetInfo:
        return _text_info(
            self,
            "167,130 English-French sentence pairs from the Tatoeba project "
            "(tatoeba.org) as packaged by manythings.org/anki, licensed "
            "CC-BY 2.0 (France); preprocessed as d2l's preprocess_nmt.",
            {"source": tfds.features.Text(), "target": tfds.features.Text()},
            "https://www.manythings.org/anki/",
        )

    def _split_generators(self, dl_manager):
        path = _locate(dl_manager, "fra-eng.zip")
        return {"train": self._generate_examples(path)}

    def _generate_examples(self, path):
        raw = text.read_fra_eng_zip(path)
        for i, (src, tgt) in enumerate(
            text.split_pairs(text.preprocess_nmt(raw))
        ):
            yield i, {"source": src, "target": tgt}


class NoisySine(tfds.core.GeneratorBasedBuilder):
    """d2l's noisy sine, x_t = sin(0.01 t) + N(0, 0.2^2), T = 1000."""

    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "T = 1000, seed 0."}

    def _info(self) -> tfds.core.DatasetInfo:
        t = 1000
        return tfds.core.DatasetInfo(
            builder=self,
            description="One example: the whole series, time 1..1000.",
            features=tfds.features.FeaturesDict(
                {
                    "time": tfds.features.Tensor(shape=(t,), dtype=np.float32),
                    "x": tfds.features.Tensor(shape=(t,), dtype=np.float32),
                }
            ),
            homepage=_D2L,
            citation=_D2L_CITATION,
        )

    def _split_generators(self, dl_manager):
        del dl_manager  # generated, nothing to download
        return {"train": self._generate_examples()}

    def _generate_examples(self):
        time, x = toy_sine.noisy_sine(1000, seed=0)
        yield 0, {"time": time, "x": x}


class ToyCharCorpus(tfds.core.GeneratorBasedBuilder):
    """Generated prose for the character language-model lessons."""

    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "seed 0."}

    def _info(self) -> tfds.core.DatasetInfo:
        return _text_info(
            self,
            "Prose generated from a small grammar (seed 0), preprocessed as "
            "time_machine: a-z and single spaces, one example per line.",
            {"text": tfds.features.Text()},
            _D2L,
        )

    def _split_generators(self, dl_manager):
        del dl_manager
        return {"train": self._generate_examples()}

    def _generate_examples(self):
        lines = text.preprocess_time_machine(toy_chars.raw_lines(seed=0))
        for i, line in enumerate(lines):
            yield i, {"text": line}


class ToyFraEng(tfds.core.GeneratorBasedBuilder):
    """Generated English-to-French-like pairs with reordering, agreement."""

    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "seed 0, 3,000 train and 300 test pairs."}

    def _info(self) -> tfds.core.DatasetInfo:
        info = _text_info(
            self,
            "Generated pairs (seed 0), preprocessed as fra_eng; test "
            "sentences never occur in train.",
            {"source": tfds.features.Text(), "target": tfds.features.Text()},
            _D2L,
        )
        return info

    def _split_generators(self, dl_manager):
        del dl_manager
        return {
            "train": self._generate_examples("train"),
            "test": self._generate_examples("test"),
        }

    def _generate_examples(self, split):
        raw = toy_translation.raw_text(split, seed=0)
        for i, (src, tgt) in enumerate(
            text.split_pairs(text.preprocess_nmt(raw))
        ):
            yield i, {"source": src, "target": tgt}


class ToyShapes(tfds.core.GeneratorBasedBuilder):
    """Ten procedurally drawn shapes, 28 x 28 x 1, a Fashion-MNIST stand-in."""

    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "seed 0, 6,000 train and 1,000 test images."}

    def _info(self) -> tfds.core.DatasetInfo:
        return tfds.core.DatasetInfo(
            builder=self,
            description="Shapes drawn with numpy at a random position, "
            "size and rotation, with pixel noise; balanced classes.",
            features=tfds.features.FeaturesDict(
                {
                    "image": tfds.features.Image(shape=(28, 28, 1)),
                    "label": tfds.features.ClassLabel(
                        names=list(toy_shapes.CLASS_NAMES)
                    ),
                }
            ),
            supervised_keys=("image", "label"),
            homepage=_D2L,
            citation=_D2L_CITATION,
        )

    def _split_generators(self, dl_manager):
        del dl_manager
        return {
            "train": self._generate_examples("train"),
            "test": self._generate_examples("test"),
        }

    def _generate_examples(self, split):
        x, y = toy_shapes.toy_shapes(split, seed=0)
        for i in range(len(y)):
            yield i, {"image": x[i], "label": int(y[i])}
