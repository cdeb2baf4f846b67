"""Fetching the book's real data files: local folder or URL, SHA-1 checked.

Every file is written to a temporary name next to its destination, checked
against the book's SHA-1, and only then renamed into place (an atomic
``os.replace``), so a failed or corrupt transfer never leaves a half-written
cache behind.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

log = logging.getLogger("m2t.datasets")

_REPO_ROOT = Path(__file__).resolve().parent.parent
_CHUNK = 1 << 20


class DataNotFoundError(FileNotFoundError):
    """A data file is neither in the given folder, the cache nor reachable."""


class ChecksumError(ValueError):
    """A data file does not have the book's SHA-1.

    Attributes:
        filename: the file's name, e.g. ``"fra-eng.zip"``.
        origin: where the bytes came from (a path or a URL).
        expected: the book's SHA-1, hex.
        got: the SHA-1 of the bytes read, hex.
    """

    def __init__(self, filename: str, origin: str, expected: str, got: str):
        self.filename = filename
        self.origin = origin
        self.expected = expected
        self.got = got
        super().__init__(
            f"checksum mismatch for {filename} (read from {origin}): "
            f"expected sha1 {expected}, got sha1 {got}. The file is corrupt "
            "or is not the book's version; nothing was cached."
        )


@dataclasses.dataclass(frozen=True)
class Resource:
    """One file of d2l's data hub."""

    filename: str
    url: str
    sha1: str
    size: int


_HUB = "http://d2l-data.s3-accelerate.amazonaws.com/"
RESOURCES: dict[str, Resource] = {
    "timemachine.txt": Resource(
        "timemachine.txt",
        _HUB + "timemachine.txt",
        "090b5e7e70c295757f55df93cb0a180b9691891a",
        178_979,
    ),
    "fra-eng.zip": Resource(
        "fra-eng.zip",
        _HUB + "fra-eng.zip",
        "94646ad1522d915e7b0f9296181140edcf86a4f5",
        3_420_152,
    ),
}


def real_data_dir() -> Path | None:
    """The shared folder holding the book's real files, or None when absent.

    ``$M2T_REAL_DATA`` when set, else ``<repo root>/../shared/data/real``.
    It is read-only: loaders copy from it into a cache, never write to it.
    """
    env = os.environ.get("M2T_REAL_DATA")
    path = Path(env) if env else _REPO_ROOT.parent / "shared" / "data" / "real"
    return path if path.is_dir() else None


def default_cache_dir() -> Path:
    """``$M2T_CACHE_DIR``, else ``$XDG_CACHE_HOME/m2t`` (``~/.cache/m2t``)."""
    env = os.environ.get("M2T_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "m2t"


def downloads_allowed() -> bool:
    """False when ``$M2T_OFFLINE`` is set to a non-empty value other than 0."""
    return os.environ.get("M2T_OFFLINE", "") in ("", "0")


def sha1_of(path: str | os.PathLike) -> str:
    """Hex SHA-1 of a file, read in 1 MiB chunks."""
    with open(path, "rb") as f:
        return _sha1_chunks(iter(lambda: f.read(_CHUNK), b""))


def _sha1_chunks(chunks: Iterable[bytes]) -> str:
    h = hashlib.sha1()
    for chunk in chunks:
        h.update(chunk)
    return h.hexdigest()


def resource(filename: str) -> Resource:
    """The data-hub entry for ``filename``; ValueError for an unknown name."""
    try:
        return RESOURCES[filename]
    except KeyError:
        known = ", ".join(sorted(RESOURCES))
        raise ValueError(
            f"unknown data file {filename!r}; known: {known}"
        ) from None


def verify(path: str | os.PathLike, res: Resource) -> None:
    """Raise ChecksumError unless ``path`` has the SHA-1 of ``res``."""
    got = sha1_of(path)
    if got != res.sha1:
        raise ChecksumError(res.filename, str(path), res.sha1, got)


def fetch(
    filename: str,
    data_dir: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
    download: bool = True,
) -> Path:
    """Return the path of a verified copy of one of the book's data files.

    Order of look-up:

    1. ``data_dir`` (or ``$M2T_DATA_MIRROR``): a local folder holding the
       file, e.g. ``real_data_dir()``. The file must be there; it is copied
       into the cache and checked on every call.
    2. the cache, ``cache_dir`` or ``default_cache_dir()``, if its copy has
       the right SHA-1 (a corrupt copy is removed and fetched again);
    3. the book's URL, unless ``download`` is False or ``$M2T_OFFLINE`` is
       set.

    Args:
        filename: ``"timemachine.txt"`` or ``"fra-eng.zip"``.
        data_dir: local folder (mirror) holding the file.
        cache_dir: where verified copies are kept.
        download: whether step 3 may use the network.

    Returns:
        Path of the verified file inside the cache.

    Raises:
        DataNotFoundError: the file is in none of the places tried.
        ChecksumError: the bytes found do not have the book's SHA-1 (names
            the file and both hashes); the cache is left untouched.
    """
    res = resource(filename)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = cache / res.filename
    mirror = (
        data_dir if data_dir is not None else os.environ.get("M2T_DATA_MIRROR")
    )
    if mirror:
        src = Path(mirror) / res.filename
        if not src.is_file():
            raise DataNotFoundError(
                f"{res.filename}: not found in the local data folder {mirror} "
                f"(expected {src}). Put the book's file there "
                f"(sha1 {res.sha1}, from {res.url})."
            )
        with open(src, "rb") as f:
            return _write_verified(f, target, res, origin=str(src))
    if target.is_file():
        if sha1_of(target) == res.sha1:
            return target
        log.warning("removing corrupt cached copy %s", target)
        target.unlink()
    if not (download and downloads_allowed()):
        raise DataNotFoundError(
            f"{res.filename}: not cached in {cache} and downloading is off. "
            "Pass data_dir=<folder holding the file> (e.g. "
            "m2t_data.real_data_dir()) or set $M2T_DATA_MIRROR."
        )
    log.info("downloading %s", res.url)
    try:
        with urllib.request.urlopen(res.url, timeout=60) as resp:
            return _write_verified(resp, target, res, origin=res.url)
    except urllib.error.URLError as e:
        raise DataNotFoundError(
            f"{res.filename}: download from {res.url} failed ({e.reason}). "
            "Offline? Pass data_dir=<folder holding the file>."
        ) from e


def _write_verified(
    stream: BinaryIO, target: Path, res: Resource, origin: str
) -> Path:
    """Copy ``stream`` to a temp file beside ``target``, check, rename."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(
        dir=target.parent, prefix=f".{res.filename}.", suffix=".part"
    )
    tmp = Path(tmp_name)
    try:
        h = hashlib.sha1()
        with os.fdopen(fd, "wb") as out:
            for chunk in iter(lambda: stream.read(_CHUNK), b""):
                h.update(chunk)
                out.write(chunk)
        got = h.hexdigest()
        if got != res.sha1:
            raise ChecksumError(res.filename, origin, res.sha1, got)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
    return target
