"""The worker's replies as the judge reads them (m2t/grading/frames.py): a
frame is refused by its lengths before its body is read."""

from __future__ import annotations

import os
import struct
import threading

import numpy as np
import pytest

from m2t.grading import frames


def _pipe_with(data: bytes) -> tuple[int, int]:
    """A pipe whose write end holds `data` (written from a thread, as the
    worker writes) and is then closed: (read end, bytes written)."""
    read, write = os.pipe()

    def feed() -> None:
        try:
            os.write(write, data)
        finally:
            os.close(write)

    threading.Thread(target=feed, daemon=True).start()
    return read, len(data)


def _left(fd: int) -> int:
    """How many bytes are still unread in the pipe."""
    left = 0
    while chunk := os.read(fd, 1 << 16):
        left += len(chunk)
    os.close(fd)
    return left


@pytest.mark.parametrize(
    "n, prefix, error",
    [
        (
            frames.MAX_FRAME,
            struct.pack(">II", frames.MAX_HEADER + 1, 0),
            "a reply header of",
        ),
        (
            frames.MAX_FRAME,
            struct.pack(">II", 64, frames.MAX_ARRAYS + 1),
            r"arrays \(limit",
        ),
        (1024, struct.pack(">II", 4096, 0), "a reply header of 4096"),
    ],
    ids=["header_too_long", "too_many_arrays", "header_past_frame"],
)
def test_a_frame_is_refused_by_its_header_before_its_body(n, prefix, error):
    """A frame of `n` bytes whose header is refused (too long, too many
    arrays, longer than the frame): recv raises after the 16 bytes of
    lengths, and the body stays unread."""
    body = b"\0" * 2048
    fd, _ = _pipe_with(struct.pack(">Q", n) + prefix + body)
    with pytest.raises(ValueError, match=error):
        frames.recv(fd)
    assert _left(fd) == len(body)


def test_a_frame_over_max_frame_is_refused_by_its_length():
    fd, _ = _pipe_with(struct.pack(">Q", frames.MAX_FRAME + 1) + b"\0" * 64)
    with pytest.raises(ValueError, match="limit"):
        frames.recv(fd)
    assert _left(fd) == 64


def test_a_good_frame_round_trips_and_a_cut_one_is_end_of_file():
    reply = {"ok": (np.arange(6.0).reshape(2, 3), [1, "two", None])}
    data = frames.encode(reply)
    fd, _ = _pipe_with(struct.pack(">Q", len(data)) + data)
    got = frames.recv(fd)
    np.testing.assert_array_equal(got["ok"][0], reply["ok"][0])
    assert got["ok"][1] == [1, "two", None]
    assert frames.recv(fd) is None  # the end of the stream
    os.close(fd)
    fd, _ = _pipe_with(struct.pack(">Q", len(data)) + data[:-5])
    assert frames.recv(fd) is None
    os.close(fd)
