"""The worker's protocol: frames of plain data, pickle-free and bounded.

A frame is an 8-byte length, then a JSON header (lists, tuples and dicts
as tagged JSON) and the arrays it names as `.npy` blobs beside it. The
judge reads a reply only within its limits (`MAX_FRAME`, `MAX_HEADER`,
`MAX_DEPTH`, `MAX_ARRAYS`), checked before anything is parsed, so a reply
costs the judge memory and time bounded by its size.
"""

from __future__ import annotations

import io
import json
import os
import select
import struct
import time
from typing import Any

import numpy as np

MAX_FRAME = 16 << 20
"""The largest reply (arrays included) the judge reads: 16 MiB, 200 times
the largest reply of the reference solutions (83 kB, l20's layer
contract; then l20's decoder, 52 kB: every probe's reply encoded while
grading l01-l22 with `--impl solutions`). The capstones' replies (a
training curve, one character's log-probabilities, translations of the
held-out sentences) are of the same order."""
MAX_HEADER = 1 << 20
"""The largest JSON part of a reply (the arrays travel beside it)."""
MAX_DEPTH = 32
"""The deepest nesting of lists, tuples and dicts in a reply."""
MAX_ARRAYS = 4096


def encode(obj: Any) -> bytes:
    """Plain data -> bytes: a JSON tree whose arrays are `.npy` blobs."""
    arrays: list[np.ndarray] = []

    def walk(x: Any) -> Any:
        if isinstance(x, np.ndarray):
            arrays.append(x)
            return {"$a": len(arrays) - 1}
        if isinstance(x, np.generic):  # NumPy scalars travel as Python ones
            return x.item()
        if isinstance(x, tuple):
            return {"$t": [walk(v) for v in x]}
        if isinstance(x, list):
            return [walk(v) for v in x]
        if isinstance(x, dict):
            return {"$d": {str(k): walk(v) for k, v in x.items()}}
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        raise TypeError(f"cannot send a {type(x).__name__}")

    header = json.dumps(walk(obj)).encode()
    blobs = []
    for array in arrays:
        buf = io.BytesIO()
        np.save(buf, array, allow_pickle=False)
        blobs.append(buf.getvalue())
    parts = [struct.pack(">II", len(header), len(blobs)), header]
    for blob in blobs:
        parts += [struct.pack(">Q", len(blob)), blob]
    return b"".join(parts)


def decode(data: bytes) -> Any:
    """The inverse of `encode`; never unpickles. Raises ValueError for a
    header over `MAX_HEADER`, nesting deeper than `MAX_DEPTH`, more than
    `MAX_ARRAYS` arrays or a malformed frame: the judge's memory and time
    stay bounded by the frame's size."""
    if len(data) < 8:
        raise ValueError(f"a reply of {len(data)} bytes (its header takes 8)")
    check_prefix(len(data), bytes(data[:8]))
    hlen, count = struct.unpack_from(">II", data, 0)
    offset = 8
    raw = bytes(data[offset : offset + hlen])
    if _depth(raw) > MAX_DEPTH:
        raise ValueError(f"a reply nested deeper than {MAX_DEPTH}")
    header = json.loads(raw)
    offset += hlen
    arrays = []
    for _ in range(count):
        (n,) = struct.unpack_from(">Q", data, offset)
        offset += 8
        if n > len(data) - offset:
            raise ValueError("an array runs past the end of the reply")
        arrays.append(
            np.load(
                io.BytesIO(memoryview(data)[offset : offset + n]),
                allow_pickle=False,
            )
        )
        offset += n

    def walk(x: Any) -> Any:
        if isinstance(x, dict):
            if "$a" in x:
                return arrays[x["$a"]]
            if "$t" in x:
                return tuple(walk(v) for v in x["$t"])
            return {k: walk(v) for k, v in x["$d"].items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    return walk(header)


def _depth(raw: bytes) -> int:
    """The deepest bracket nesting in JSON text `raw` (brackets inside
    strings do not count); linear in its length, no parsing."""
    text = raw.decode("utf-8", errors="replace")
    # Drop the strings (escaped quotes first), then count what is left.
    text = text.replace("\\\\", "").replace('\\"', "")
    depth = deepest = 0
    for i, part in enumerate(text.split('"')):
        if i % 2:
            continue
        for char in part:
            if char in "[{":
                depth += 1
                deepest = max(deepest, depth)
            elif char in "]}":
                depth -= 1
    return deepest


def send(stream, obj: Any) -> None:
    data = encode(obj)
    stream.write(struct.pack(">Q", len(data)) + data)
    stream.flush()


def read_into(fd: int, view: memoryview, deadline: float | None) -> bool:
    """Fill `view` from `fd`; False at end of file; TimeoutError past
    `deadline`."""
    got, n = 0, len(view)
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        count = os.readv(fd, [view[got : got + min(n - got, 1 << 20)]])
        if not count:
            return False
        got += count
    return True


def read_exact(fd: int, n: int, deadline: float | None) -> bytes | None:
    """`n` bytes from `fd`, or None at end of file."""
    buf = bytearray(n)
    return bytes(buf) if read_into(fd, memoryview(buf), deadline) else None


def check_prefix(n: int, prefix: bytes) -> None:
    """Refuse a frame of `n` bytes by its first 8 (the header's length and
    the count of arrays), before its body is read: ValueError for a header
    over `MAX_HEADER` or past the frame, or more than `MAX_ARRAYS`
    arrays."""
    hlen, count = struct.unpack(">II", prefix)
    if hlen > MAX_HEADER or hlen > n - 8:
        raise ValueError(f"a reply header of {hlen} bytes (limit {MAX_HEADER})")
    if count > MAX_ARRAYS:
        raise ValueError(f"a reply of {count} arrays (limit {MAX_ARRAYS})")


def recv(fd: int, deadline: float | None = None) -> Any:
    """One frame from `fd`; None at end of file; TimeoutError past deadline;
    ValueError for a frame over `MAX_FRAME`, or one `decode` refuses. The
    frame's length and its header's length are checked before the body is
    read (a refused reply costs the judge 16 bytes), and the body is read
    into one buffer of its size."""
    head = read_exact(fd, 8, deadline)
    if head is None:
        return None
    (n,) = struct.unpack(">Q", head)
    if n > MAX_FRAME:
        raise ValueError(f"a reply of {n} bytes (limit {MAX_FRAME})")
    if n < 8:
        raise ValueError(f"a reply of {n} bytes (its header takes 8)")
    frame = bytearray(n)
    view = memoryview(frame)
    if not read_into(fd, view[:8], deadline):
        return None
    check_prefix(n, bytes(view[:8]))
    if not read_into(fd, view[8:], deadline):
        return None
    return decode(frame)
