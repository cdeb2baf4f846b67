"""Terminal plumbing shared by the commands and the benchmarks."""

from __future__ import annotations

import os
import sys


class quiet_native_stderr:
    """Silence TensorFlow's C++ start-up lines (they bypass Python's
    `sys.stderr`, writing to file descriptor 2) while keeping Python's own
    stderr; `enabled=False` makes it a no-op."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled

    def __enter__(self) -> quiet_native_stderr:
        if not self.enabled:
            return self
        sys.stderr.flush()
        self.saved = os.dup(2)
        self.python_stderr = sys.stderr
        sys.stderr = os.fdopen(os.dup(self.saved), "w", buffering=1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
        return self

    def __exit__(self, *exc: object) -> bool:
        if not self.enabled:
            return False
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        sys.stderr.close()
        sys.stderr = self.python_stderr
        return False
