"""Attacks on `m2t grade --submission`, each a real submission graded by the
real command, with real listeners on 127.0.0.1 where the attack needs one.

Each attack is a class (every link, every socket family, every process
outside the worker), tried from inside the grading worker; the submission
reports through its own failure message which attempts got through, and the
test also looks from outside (the listeners, the files, the processes).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from m2t import ROOT

ATTACKS = Path(__file__).parent / "attacks"
SOLUTION = {
    n: (ROOT / "solutions" / f"{n}.py").read_text()
    for n in ("l15_attention_pooling", "l16_attention_scoring")
}


def grade(*args: str, env: dict | None = None, timeout: float = 600):
    """`m2t grade ARGS` in a fresh process: (completed process, seconds,
    the judge's peak memory in MB)."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", **(env or {})}
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "m2t", "grade", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.communicate(timeout=timeout)
    seconds = time.monotonic() - start
    # The judge's own peak (ru_maxrss of the last child waited for: m2t).
    import resource

    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), (
        seconds,
        peak,
    )


def outputs(report: Path) -> dict[str, str]:
    data = json.loads(report.read_text())
    return {t["name"]: t["output"] for t in data["tests"]}


def processes_named(comm: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            if Path(f"/proc/{entry}/comm").read_text().strip() == comm:
                found.append(int(entry))
        except (OSError, ValueError):
            pass
    return found


class Listeners:
    """A TCP, a UDP, a pathname and an abstract unix server on this
    machine, each handing out `secret` to whoever connects."""

    def __init__(self, folder: Path, secret: str):
        self.secret = secret.encode()
        self.udp_got: list[bytes] = []
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        folder.mkdir(mode=0o777)
        folder.chmod(0o777)  # reachable by any uid: only the sandbox stops it
        self.unix_path = str(folder / "server.sock")
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.unix_path)
        os.chmod(self.unix_path, 0o777)
        self.abstract_name = f"m2t-attack-{secrets.token_hex(4)}"
        self.abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.abstract.bind("\0" + self.abstract_name)
        for server in (self.tcp, self.unix, self.abstract):
            server.listen()
            threading.Thread(
                target=self._serve, args=(server,), daemon=True
            ).start()
        threading.Thread(target=self._datagrams, daemon=True).start()

    def _serve(self, server: socket.socket) -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(self.secret)

    def _datagrams(self) -> None:
        while True:
            try:
                self.udp_got.append(self.udp.recv(200))
            except OSError:
                return

    def close(self) -> None:
        for s in (self.tcp, self.udp, self.unix, self.abstract):
            s.close()


def test_no_way_out_of_the_worker(tmp_path):
    """Sockets of every kind, other processes' /proc, raw devices, ptrace,
    signals, the solutions, files outside, memory, file size, temp space,
    processes, a setsid grandchild, state left by another lesson."""
    secret = "s3cret-" + secrets.token_hex(8)
    survivor = "m2tsurv" + secrets.token_hex(3)
    listeners = Listeners(tmp_path / "srv", secret)
    report = tmp_path / "out" / "results.json"
    report.parent.mkdir()
    config = {
        "secret": secret,
        "unix": listeners.unix_path,
        "abstract": listeners.abstract_name,
        "tcp": listeners.tcp.getsockname()[1],
        "udp": listeners.udp.getsockname()[1],
        "root": str(ROOT),
        "report": str(report),
        "beside_report": str(report.parent / "extra.txt"),
        "tmp_files": 10,  # 10 x 32 MB, over the 256 MB of temp space
        "nproc": 1000,
        "survivor": survivor,
    }
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "l15_attention_pooling.py").write_text(
        SOLUTION["l15_attention_pooling"]
        + "\nimport keras as _k\n\n_k._left_by_l15 = True\n"
    )
    (sub / "l16_attention_scoring.py").write_text(
        SOLUTION["l16_attention_scoring"]
        + f"\nCONFIG = {config!r}\n"
        + (ATTACKS / "escape.py").read_text()
    )
    try:
        result, _ = grade(
            "15",
            "16",
            "--submission",
            str(sub),
            "--report",
            str(report),
            env={"M2T_ATTACK_SECRET": secret},
        )
        assert result.returncode in (0, 1), (
            result.stdout + result.stderr[-3000:]
        )
        assert report.exists(), result.stdout + result.stderr[-3000:]
        got = outputs(report)
        time.sleep(3)  # time for a survivor to act
        survivors = processes_named(survivor)
        assert json.loads(report.read_text())["score"] != 999
    finally:
        listeners.close()
        for pid in processes_named(survivor):
            os.kill(pid, signal.SIGKILL)
    reports = [
        dict(kv.split("=") for kv in re.search(r"escapes: (.*)", o)[1].split())
        for o in got.values()
        if "escapes:" in o
    ]
    assert reports, got
    for escapes in reports:  # one per worker that loaded the module
        print(escapes)
        assert len(escapes) == 22, escapes
        # setsid=1 says the grandchild started; that it died is seen below.
        assert {k for k, v in escapes.items() if v != "0"} == {"setsid"}
    assert listeners.udp_got == []
    assert not (report.parent / "extra.txt").exists()
    assert survivors == []
    l15 = [o for n, o in got.items() if n.startswith("l15")]
    assert l15 and all(o == "" for o in l15)
