# ruff: noqa: F821  (CONFIG and masked_softmax: from the lesson file around)
# Appended to a correct l16 by tests/test_attacks.py: at import time (in the
# grading worker) try every way out of the sandbox, then make the no-mask
# checks fail with one line that says which attempts got through ("name=1").
# CONFIG is set by the test: listener addresses, the secret, paths.
import ctypes as _ctypes
import os as _os
import socket as _socket
import time as _time

_R = {}


def _try(name):
    def wrap(fn):
        try:
            _R[name] = int(bool(fn()))
        except Exception:  # noqa: BLE001  a refusal is the expected outcome
            _R[name] = 0
        return fn

    return wrap


def _recv_secret(sock, address):
    sock.settimeout(3)
    sock.connect(address)
    return CONFIG["secret"].encode() in sock.recv(200)


@_try("unix")  # a pathname unix socket of a server outside the sandbox
def _unix():
    return _recv_secret(
        _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM), CONFIG["unix"]
    )


@_try("abstract")  # an abstract unix socket
def _abstract():
    return _recv_secret(
        _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM),
        "\0" + CONFIG["abstract"],
    )


@_try("tcp")  # a TCP server on 127.0.0.1
def _tcp():
    return _recv_secret(_socket.socket(), ("127.0.0.1", CONFIG["tcp"]))


@_try("udp")  # a datagram out (the test's listener says if it came)
def _udp():
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    return sock.sendto(CONFIG["secret"].encode(), ("127.0.0.1", CONFIG["udp"]))


@_try("families")  # any socket at all, of any family and type
def _families():
    made = 0
    for family in {v for k, v in vars(_socket).items() if k.startswith("AF_")}:
        for kind in (_socket.SOCK_STREAM, _socket.SOCK_DGRAM, _socket.SOCK_RAW):
            try:
                _socket.socket(family, kind).close()
                made += 1
            except OSError:
                pass
    try:
        _socket.socketpair()
        made += 1
    except OSError:
        pass
    return made


def _pids():
    return [int(p) for p in _os.listdir("/proc") if p.isdigit()]


@_try("environ")  # the grader's environment (CI tokens live there)
def _environ():
    found = False
    for pid in _pids():
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                found |= CONFIG["secret"].encode() in f.read()
        except OSError:
            pass
    return found


@_try("maps")  # the memory maps of processes outside the worker
def _maps():
    got = 0
    for pid in _pids():
        if pid == _os.getpid():
            continue
        for what in ("maps", "smaps"):
            try:
                with open(f"/proc/{pid}/{what}", "rb") as f:
                    got += len(f.read(100)) > 0
            except OSError:
                pass
    return got


@_try("grader")  # any process of the grade visible from here
def _grader():
    seen = 0
    for pid in _pids():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                seen += b"grade" in f.read()
        except OSError:
            pass
    return seen


@_try("blockdev")  # raw disks
def _blockdev():
    import stat

    opened = 0
    for name in _os.listdir("/dev"):
        path = "/dev/" + name
        try:
            if stat.S_ISBLK(_os.stat(path).st_mode):
                _os.close(_os.open(path, _os.O_RDONLY))
                opened += 1
        except OSError:
            pass
    return opened


@_try("devices")  # /dev beyond null, zero and urandom
def _devices():
    return set(_os.listdir("/dev")) - {"null", "zero", "urandom"}


@_try("ptrace")  # attach to the grader or any other process
def _ptrace():
    libc = _ctypes.CDLL(None, use_errno=True)
    attached = 0
    for pid in [_os.getppid(), *_pids()]:
        if pid != _os.getpid() and libc.ptrace(16, pid, 0, 0) == 0:
            attached += 1
            libc.ptrace(17, pid, 0, 0)
    return attached


@_try("signal")  # may we signal a process outside (signal 0 only probes)
def _signal():
    sent = 0
    for pid in _pids():
        if pid != _os.getpid():
            try:
                _os.kill(pid, 0)
                sent += 1
            except OSError:
                pass
    return sent


@_try("solutions")  # the instructor's solutions and keys
def _solutions():
    with open(CONFIG["root"] + "/solutions/l16_attention_scoring.py") as f:
        return f.read(1)


@_try("write")  # a file beside the grader's report
def _write():
    with open(CONFIG["beside_report"], "w") as f:
        f.write("written by the submission")
    return True


@_try("memory")  # more address space than the 8 GB limit
def _memory():
    import numpy

    return numpy.empty(9 << 30, "uint8").size


@_try("fsize")  # one file far larger than the limit (sparse: no disk used)
def _fsize():
    path = _os.path.join(_os.environ.get("TMPDIR", "/tmp"), "big")
    try:
        with open(path, "wb") as f:
            f.truncate(2 << 30)
        return True
    finally:
        _os.unlink(path)


@_try("tmpspace")  # fill the temporary folder (files each under the limit)
def _tmpspace():
    folder = _os.environ.get("TMPDIR", "/tmp")
    chunk, written, names = b"\1" * (4 << 20), 0, []
    try:
        for i in range(CONFIG["tmp_files"]):
            names.append(_os.path.join(folder, f"fill{i}"))
            with open(names[-1], "wb") as f:
                for _ in range(8):
                    f.write(chunk)
                    written += len(chunk)
        return True
    finally:
        for name in names:
            _os.unlink(name)


@_try("nproc")  # many processes (a fork bomb, held back to a count)
def _nproc():
    children = []
    try:
        for _ in range(CONFIG["nproc"]):
            pid = _os.fork()
            if pid == 0:
                _time.sleep(30)
                _os._exit(0)
            children.append(pid)
        return True
    finally:
        for pid in children:
            _os.kill(pid, 9)
            _os.waitpid(pid, 0)


@_try("setsid")  # a grandchild in its own session that outlives the grade
def _setsid():
    pid = _os.fork()
    if pid == 0:
        _os.setsid()
        if _os.fork() == 0:
            libc = _ctypes.CDLL(None)
            libc.prctl(15, CONFIG["survivor"].encode(), 0, 0, 0)
            for _ in range(60):
                _time.sleep(1)
                try:
                    with open(CONFIG["report"], "w") as f:
                        f.write('{"score": 999, "tests": []}')
                except OSError:
                    pass
            _os._exit(0)
        _os._exit(0)
    _os.waitpid(pid, 0)
    return True


@_try("forked")  # a worker forked from a process that had TensorFlow loaded
def _forked():
    with open("/proc/self/cmdline", "rb") as f:
        return b"worker_main" not in f.read()


@_try("shared")  # state left by the previous lesson's code (l15)
def _shared():
    import keras

    return getattr(keras, "_left_by_l15", False)


@_try("root")  # running as root, in any user namespace
def _root():
    return _os.getuid() == 0 or _os.geteuid() == 0


REPORT = "escapes: " + " ".join(f"{k}={v}" for k, v in _R.items())
_masked_softmax = masked_softmax


def masked_softmax(X, valid_lens=None):
    if valid_lens is None:
        raise RuntimeError(REPORT)
    return _masked_softmax(X, valid_lens)
