"""Data for the mlp-to-transformer lessons and training recipes.

Real data (d2l's files, SHA-1 checked, cached) and embedded stand-ins
(generated from a seed, no network), as plain Python values or
``tf.data`` pipelines, plus TFDS builders registered on import:
``time_machine``, ``fra_eng``, ``noisy_sine``, ``toy_char_corpus``,
``toy_fra_eng``, ``toy_shapes``. See README.md.

Note: this package is named ``m2t_data`` and shadows Hugging Face's
package of that name wherever it comes first on ``sys.path``.
"""

from __future__ import annotations

from . import builders  # noqa: F401  (registers the TFDS builders)
from ._fetch import ChecksumError
from ._fetch import DataNotFoundError
from ._fetch import default_cache_dir
from ._fetch import fetch
from ._fetch import real_data_dir
from .images import images
from .text import fra_eng_text
from .text import time_machine_lines
from .text import translation_pairs
from .text import unseen_translation_pairs
from .toy_shapes import toy_shapes
from .toy_sine import noisy_sine

__all__ = [
    "ChecksumError",
    "DataNotFoundError",
    "default_cache_dir",
    "fetch",
    "fra_eng_text",
    "images",
    "noisy_sine",
    "real_data_dir",
    "time_machine_lines",
    "toy_shapes",
    "translation_pairs",
    "unseen_translation_pairs",
]

TFDS_BUILDERS = (
    "time_machine",
    "fra_eng",
    "noisy_sine",
    "toy_char_corpus",
    "toy_fra_eng",
    "toy_shapes",
)


def __getattr__(name: str):
    # Code written for Hugging Face's `m2t_data` (load_dataset, Dataset...)
    # reaches this module when it shadows that package: say so plainly.
    raise AttributeError(
        f"module 'm2t_data' has no attribute {name!r}. This is the "
        "mlp-to-transformer `m2t_data` package (TFDS builders and embedded "
        "data), not Hugging Face's `m2t_data`, which it shadows."
    )
