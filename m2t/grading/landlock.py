"""Linux Landlock: let a process read and write only where it is told.

The grading worker calls `restrict` before it loads student code. Landlock
is unprivileged and irreversible: after `restrict`, the process (and every
child) can read only the listed trees, write only the writable ones, open no
TCP connection, and signal or ptrace no process outside its sandbox (the
judge included).
"""

from __future__ import annotations

import ctypes
import os
import platform
from collections.abc import Iterable

_SYS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
_WRITE_TREE = (1 << 13) - 1 - EXECUTE - READ_FILE - READ_DIR  # make/remove
REFER, TRUNCATE = 1 << 13, 1 << 14
READ = EXECUTE | READ_FILE | READ_DIR
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [
        ("allowed_access", ctypes.c_uint64),
        ("parent_fd", ctypes.c_int32),
    ]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI (0 where Landlock is unavailable)."""
    numbers = _SYS.get(platform.machine())
    if numbers is None:
        return 0
    version = _libc().syscall(numbers[0], None, ctypes.c_size_t(0), 1)
    return max(int(version), 0)


def restrict(read: Iterable[str], write: Iterable[str]) -> int:
    """Confine this process: `read` trees read-only, `write` trees
    read-write, no TCP, no signals or ptrace outside.

    Returns:
        the ABI used (0 means Landlock is unavailable and nothing changed).
    """
    abi = abi_version()
    if abi == 0:
        return 0
    create, add_rule, restrict_self = _SYS[platform.machine()]
    libc = _libc()
    fs = READ | WRITE_FILE | _WRITE_TREE
    if abi >= 2:
        fs |= REFER
    if abi >= 3:
        fs |= TRUNCATE
    attr = _RulesetAttr(fs, 0, 0)
    size = 8
    if abi >= 4:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
        size = 16
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
    ruleset = libc.syscall(create, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for paths, access in ((read, READ), (write, fs)):
            for path in paths:
                if not os.path.exists(path):
                    continue
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                try:
                    allowed = access
                    if not os.path.isdir(path):
                        allowed &= EXECUTE | READ_FILE | WRITE_FILE | TRUNCATE
                    rule = _PathBeneath(allowed, fd)
                    if libc.syscall(
                        add_rule, ruleset, _PATH_BENEATH, ctypes.byref(rule), 0
                    ):
                        raise OSError(
                            ctypes.get_errno(), f"landlock_add_rule {path}"
                        )
                finally:
                    os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
            raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS) failed")
        if libc.syscall(restrict_self, ruleset, 0):
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return abi
