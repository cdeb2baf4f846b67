# ruff: noqa: F821  (masked_softmax, DotProductAttention, AdditiveAttention:
# from the lesson file around)
# Appended to a correct l16 by tests/test_attacks.py: each probe attacks the
# judge's resources instead of answering. Which attack depends on the probe
# that calls (the grader's function one frame up) and the mask it gives.
import ctypes as _ctypes
import fcntl as _fcntl
import os as _os
import struct as _struct
import sys as _sys


def _protocol_fd():
    """The worker's reply pipe: a pipe open for writing, not stdout."""
    import stat

    for fd in range(3, 64):
        try:
            mode = _os.fstat(fd).st_mode
            flags = _fcntl.fcntl(fd, _fcntl.F_GETFL)
        except OSError:
            continue
        if stat.S_ISFIFO(mode) and flags & _os.O_ACCMODE == _os.O_WRONLY:
            return fd
    raise RuntimeError("no protocol pipe")


def _frame(header):
    body = _struct.pack(">II", len(header), 0) + header
    _os.write(_protocol_fd(), _struct.pack(">Q", len(body)) + body)
    _os._exit(0)


_plain_softmax = masked_softmax


def _called_from(name):
    frame = _sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == name:
            return True
        frame = frame.f_back
    return False


def masked_softmax(X, valid_lens=None):
    if not _called_from("run_masked_softmax"):
        return _plain_softmax(X, valid_lens)
    if valid_lens is None:  # 60 MB of nested empty lists
        _frame(b"[" + b"[]," * (20 << 20) + b"[]]")
    if valid_lens.ndim == 1 and valid_lens[0] == 0:
        _ctypes.string_at(0)  # a segfault
    if abs(X).max() < 10:  # an ordinary check: the right answer
        return _plain_softmax(X, valid_lens)
    if len(valid_lens.shape) == 1:  # nested 200,000 deep
        _frame(b"[" * 200_000 + b"]" * 200_000)
    _os.ftruncate(2, 1 << 30)  # the log, sparse, to 1 GiB
    _os.write(2, b"\n" * 3)
    _os._exit(1)


class DotProductAttention(DotProductAttention):
    def call(self, *args, **kwargs):
        while True:  # every attention probe times out: the time runs out
            pass


class AdditiveAttention(AdditiveAttention):
    def call(self, queries, keys, values, valid_lens=None, training=None):
        while True:
            pass
