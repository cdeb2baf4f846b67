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
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from m2t import ROOT
from m2t import settings

ATTACKS = Path(__file__).parent / "attacks"
SOLUTION = {
    n: (ROOT / "solutions" / f"{n}.py").read_text()
    for n in ("l15_attention_pooling", "l16_attention_scoring")
}


def grade(*args: str, env: dict | None = None, timeout: float = 600):
    """`m2t grade ARGS` in a fresh process: (completed process, (seconds,
    the judge's own peak memory in MB, its workers not included))."""
    env = settings.quiet_env({**os.environ, **(env or {})})
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "m2t", "grade", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = [0.0]

    def watch() -> None:  # VmHWM: the judge's high-water mark, alone
        while proc.poll() is None:
            try:
                status = Path(f"/proc/{proc.pid}/status").read_text()
                kb = re.search(r"VmHWM:\s+(\d+)", status)[1]
                peak[0] = max(peak[0], int(kb) / 1024)
            except (OSError, TypeError):
                pass
            time.sleep(0.1)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    out, err = proc.communicate(timeout=timeout)
    seconds = time.monotonic() - start
    watcher.join()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), (
        seconds,
        peak[0],
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


@pytest.mark.parametrize(
    "without, lessons, getting_through",
    [
        ("", ("15", "16"), {"setsid"}),
        # bubblewrap's namespaces and the limits alone: sockets can be made
        # (the filter is off) but reach nothing outside the namespace.
        ("landlock,seccomp", ("16",), {"setsid", "families", "udp"}),
    ],
    ids=["every-layer", "namespaces-alone"],
)
def test_no_way_out_of_the_worker(tmp_path, without, lessons, getting_through):
    """Sockets of every kind, other processes' /proc, raw devices, ptrace,
    signals, the solutions, files outside, memory, file size, temp space,
    processes, a setsid grandchild, state left by another lesson; with
    every layer, and with the namespaces alone (each layer must hold by
    itself: Landlock alone also hides /proc and /dev, for one)."""
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
            *lessons,
            "--submission",
            str(sub),
            "--report",
            str(report),
            *(["--allow-weaker-sandbox"] if without else []),
            env={"M2T_ATTACK_SECRET": secret, "M2T_SANDBOX_WITHOUT": without},
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
        # setsid=1 says the grandchild started; that it died is seen below;
        # udp=1 that a datagram was sent; that none came is seen below.
        assert {k for k, v in escapes.items() if v != "0"} == getting_through
    assert listeners.udp_got == []
    assert not (report.parent / "extra.txt").exists()
    assert survivors == []
    l15 = [o for n, o in got.items() if n.startswith("l15")]
    assert all(o == "" for o in l15) and len(l15) == 10 * ("15" in lessons)


def test_links_are_refused_not_followed(tmp_path):
    """Gradescope's layout: the instructor's repository at
    /autograder/source, the student's upload at /autograder/submission,
    whose `lessons` links to ../source/solutions."""
    autograder = tmp_path / "autograder"
    autograder.mkdir()
    (autograder / "source").symlink_to(ROOT)
    sub = autograder / "submission"
    sub.mkdir()
    (sub / "lessons").symlink_to("../source/solutions")
    report = tmp_path / "results.json"
    result, _ = grade("15", "--submission", str(sub), "--report", str(report))
    assert result.returncode == 1, result.stdout + result.stderr[-2000:]
    data = json.loads(report.read_text())
    assert data["score"] == 0 < data["max_score"]
    assert "lessons/ is a symbolic link" in result.stdout
    assert all(
        "not graded: lessons/ is a symbolic link" in t["output"]
        for t in data["tests"]
    )


@pytest.mark.parametrize(
    "make, why",
    [
        (
            lambda s, t: (s / "l16_attention_scoring.py").symlink_to(t),
            "symbolic",
        ),
        (
            lambda s, t: os.link(t, s / "l16_attention_scoring.py"),
            "2 hard links",
        ),
        (
            lambda s, t: os.mkfifo(s / "l16_attention_scoring.py"),
            "not a regular file",
        ),
        (
            lambda s, t: (s / "l16_attention_scoring.py").mkdir(),
            "not a regular file",
        ),
        (
            lambda s, t: (s / "l16_attention_scoring.py").write_text(
                "#" * (2 << 20)
            ),
            "over the",
        ),
        (
            lambda s, t: (
                (s / "lessons").mkdir(),
                (s / "lessons" / "l16_attention_scoring.py").symlink_to(t),
            ),
            "lessons/l16_attention_scoring.py is a symbolic link",
        ),
        (
            lambda s, t: (s / "lessons").symlink_to(t.parent),
            "lessons/ is a symbolic link",
        ),
    ],
    ids=[
        "file-link",
        "hard-link",
        "fifo",
        "folder",
        "too-big",
        "link-in-lessons",
        "lessons-link",
    ],
)
def test_staging_refuses_every_kind_of_link(tmp_path, make, why):
    from m2t.grading import staging

    instructor = tmp_path / "instructor"
    instructor.mkdir()
    target = instructor / "l16_attention_scoring.py"
    target.write_text("THE SOLUTION\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    make(sub, target)
    out = staging.stage(sub, ["l16_attention_scoring"], tmp_path / "out")
    assert not (out / "l16_attention_scoring.py").exists()
    assert why in staging.refusals(out)["l16_attention_scoring.py"]


SWAPPER = """
import os, sys
folder, target = sys.argv[1:3]
name = os.path.join(folder, "l16_attention_scoring.py")
while True:
    os.symlink(target, name + ".link")
    os.rename(name + ".link", name)  # the name is a link to the solution
    with open(name + ".file", "w") as f:
        f.write("mine")
    os.rename(name + ".file", name)  # the name is the student's file
"""


def test_a_file_swapped_for_a_link_is_never_followed(tmp_path):
    """A process keeps replacing the lesson file by a link to the
    solution and back while staging runs again and again."""
    from m2t.grading import staging

    secret = tmp_path / "solution.py"
    secret.write_text("THE SOLUTION\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "real").write_text("mine\n")
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(sub), str(secret)]
    )
    copied = refused = 0
    try:
        end = time.monotonic() + 3
        i = 0
        while time.monotonic() < end:
            out = staging.stage(
                sub, ["l16_attention_scoring"], tmp_path / f"o{i % 4}"
            )
            staged = out / "l16_attention_scoring.py"
            if staged.exists():
                assert "SOLUTION" not in staged.read_text()
                copied += 1
                staged.unlink()
            else:
                refused += 1
            i += 1
    finally:
        swapper.kill()
        swapper.wait()
    assert copied > 0 and refused > 0  # the race was really run


def test_the_judge_keeps_its_memory_its_time_and_its_report(tmp_path):
    """Replies of nested empty lists (60 MB) and nesting 200,000 deep, a
    log made sparse to 1 GiB, a segfault, probes that time out or exit
    every time (each restart charged once to --lesson-timeout), and
    control characters that forge a score line and break junit.xml."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "l15_attention_pooling.py").write_text(
        'raise RuntimeError("\\r\\x1b[2Kscore 29/29 in 1.0s \\x00\\x07\\ud800")\n'
    )
    (sub / "l16_attention_scoring.py").write_text(
        SOLUTION["l16_attention_scoring"] + (ATTACKS / "judge.py").read_text()
    )
    report, junit = tmp_path / "results.json", tmp_path / "junit.xml"
    lesson_limit, probe_limit = 45, 4
    result, (seconds, peak_mb) = grade(
        "15",
        "16",
        "--submission",
        str(sub),
        "--report",
        str(report),
        "--junit",
        str(junit),
        "--timeout",
        str(probe_limit),
        "--lesson-timeout",
        str(lesson_limit),
    )
    assert result.returncode == 1, result.stdout + result.stderr[-2000:]
    # Control characters reach no report.
    import xml.etree.ElementTree as ET

    for text in (result.stdout, report.read_text(), junit.read_text()):
        assert not re.search("[\\x00-\\x08\\x0b-\\x1f\\x7f]", text)
    assert "\\x1b[2Kscore 29/29" in result.stdout
    suites = {s.get("name"): s for s in ET.parse(junit).getroot()}
    got = outputs(report)
    by = {n.split(" ", 1)[1]: o for n, o in got.items() if n.startswith("l16")}
    assert (  # over MAX_FRAME: refused by its length, before its header
        "(ValueError: a reply of" in by["test_masked_softmax_values[no_mask]"]
    )
    weights = "test_masked_weights_are_exactly_zero_and_rows_sum_to_one"
    assert "nested deeper than 32" in by[f"{weights}[valid_lens_B]"]
    assert "File too large" in by[f"{weights}[valid_lens_BT]"]
    dot = "test_dot_product_attention_matches_reference[valid_lens_B]"
    assert "timed out after 4 s" in by[dot]
    segfault = "test_zero_valid_length_gives_all_zero_row"
    assert "code 139 (SIGSEGV)" in by[segfault]
    print(f"judge peak {peak_mb:.0f} MB, {seconds:.1f} s")
    assert peak_mb < 1500
    # The budget: charged once, restarts included, never over the wall time.
    used = [o for o in by.values() if "is used up" in o]
    assert used, by
    probes, restarts = map(
        float,
        re.search(
            r"\(([\d.]+) s in probes, ([\d.]+) s restarting", used[0]
        ).groups(),
    )
    wall = float(suites["l16_attention_scoring"].get("time"))
    print(f"l16: {wall:.1f} s wall, charged {probes:.1f} + {restarts:.1f} s")
    assert lesson_limit <= probes + restarts <= wall + 1
    assert wall < lesson_limit + probe_limit + 30


def test_a_killed_grade_leaves_partial_results_and_no_worker(tmp_path):
    """The grade is killed (as a CI or Gradescope time limit kills it) while
    a probe sleeps: results.json holds the checks done so far, and no
    process of the grade outlives it."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "l16_attention_scoring.py").write_text(
        SOLUTION["l16_attention_scoring"]
        + "\nimport time as _t\n\n_plain = masked_softmax\n\n\n"
        "def masked_softmax(X, valid_lens=None):\n"
        "    if valid_lens is not None and valid_lens.ndim == 2:\n"
        "        _t.sleep(600)\n"
        "    return _plain(X, valid_lens)\n"
    )
    report = tmp_path / "results.json"
    temp = tmp_path / "temp"  # the grade's folders, so its processes are ours
    temp.mkdir()
    env = settings.quiet_env({**os.environ, "TMPDIR": str(temp)})
    proc = subprocess.Popen(
        [sys.executable, "-m", "m2t", "grade", "16", "--submission", str(sub)]
        + ["--report", str(report), "--timeout", "60"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:  # the first check is done, the
            time.sleep(0.5)  # second sleeps in the worker
            if report.exists() and json.loads(report.read_text())["tests"]:
                break
        time.sleep(2)
        assert proc.poll() is None
        proc.kill()
        proc.wait()
        data = json.loads(report.read_text())
        assert 1 <= len(data["tests"]) < 20
        assert data["tests"][0]["status"] == "passed"
        time.sleep(2)
        ours = []
        for entry in os.listdir("/proc"):
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if str(temp).encode() in cmdline:
                ours.append(int(entry))
        assert ours == []
    finally:
        proc.kill()
        for entry in os.listdir("/proc"):
            try:
                if (
                    str(temp).encode()
                    in Path(f"/proc/{entry}/cmdline").read_bytes()
                ):
                    os.kill(int(entry), signal.SIGKILL)
            except (OSError, ValueError):
                pass


def test_a_missing_layer_is_refused_and_reported(tmp_path):
    """Without bubblewrap's namespaces (left out as on a machine that lacks
    them) the grade is refused, naming the layer; with
    --allow-weaker-sandbox it runs and the report says what was missing."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "l16_attention_scoring.py").write_text(
        SOLUTION["l16_attention_scoring"]
    )
    report = tmp_path / "results.json"
    env = {"M2T_SANDBOX_WITHOUT": "namespaces,seccomp"}
    args = ("16", "--submission", str(sub), "--report", str(report))
    refused, _ = grade(*args, env=env)
    assert refused.returncode == 2
    assert "namespaces: left out by M2T_SANDBOX_WITHOUT" in refused.stdout
    assert "--allow-weaker-sandbox" in refused.stdout
    assert not report.exists()
    weaker, _ = grade(*args, "--allow-weaker-sandbox", env=env)
    assert weaker.returncode == 0, weaker.stdout + weaker.stderr[-2000:]
    output = json.loads(report.read_text())["output"].splitlines()
    assert output[0] == "sandbox: landlock in force" or output[0] == (
        "sandbox: unprivileged, landlock in force"
    )
    assert (
        "sandbox WEAKER: no namespaces: left out by M2T_SANDBOX_WITHOUT"
        in output
    )
    assert (
        "sandbox WEAKER: no seccomp: left out by M2T_SANDBOX_WITHOUT" in output
    )


def _skeleton(lesson: str) -> str:
    """The untouched skeleton of `lesson`, as `m2t make-lessons` writes it."""
    from m2t.authoring import make_lessons

    return make_lessons.expected(ROOT / "solutions")[f"{lesson}.py"]


def _score(report: Path) -> float:
    return json.loads(report.read_text())["score"]


def test_the_graders_hand_out_no_reference(tmp_path):
    """A submission whose lessons compute nothing: each function calls every
    public function of the graders the worker can import with the check's
    inputs and returns the first answer of the right shape. It scores no
    more than the untouched skeleton."""
    scores = {}
    for name, text in {
        "skeleton": _skeleton("l16_attention_scoring"),
        "oracle": _skeleton("l16_attention_scoring")
        + (ATTACKS / "references.py").read_text(),
    }.items():
        sub = tmp_path / name
        sub.mkdir()
        (sub / "l16_attention_scoring.py").write_text(text)
        report = tmp_path / f"{name}.json"
        result, _ = grade(
            "16", "--submission", str(sub), "--report", str(report)
        )
        assert result.returncode == 1, result.stdout + result.stderr[-2000:]
        scores[name] = _score(report)
        outputs_of = outputs(report)
    print(scores)
    assert scores["oracle"] <= scores["skeleton"], scores
    withheld = [o for o in outputs_of.values() if "withheld" in o]
    assert not withheld or all("runs in the judge only" in o for o in withheld)


RECORDER = """
import hashlib as _hashlib

import numpy as _np

_solved = masked_softmax


def _key(X):
    try:
        data = _np.asarray(ops.convert_to_numpy(X), "float32")
    except Exception:  # noqa: BLE001  (a symbolic tensor has no values)
        return None
    return _hashlib.sha256(_np.ascontiguousarray(data).tobytes()).hexdigest()
"""

RECORD = (
    RECORDER
    + """

def masked_softmax(X, valid_lens=None):
    key = _key(X)
    if key is not None:
        with open(SEEN, "a") as f:
            f.write(key + "\\n")
    return _solved(X, valid_lens)
"""
)

REPLAY = (
    RECORDER
    + """

def masked_softmax(X, valid_lens=None):
    key = _key(X)
    if key is None or key in KNOWN:  # an input it has an answer for
        return _solved(X, valid_lens)
    return ops.zeros_like(ops.convert_to_tensor(X))
"""
)


def test_a_fresh_seed_per_grade_defeats_recorded_answers(tmp_path):
    """`m2t grade --submission` judges inputs drawn from a seed of its own
    (a fresh one per run, written in the report; `--seed` repeats it): a
    correct submission scores full marks under two seeds, one that answers
    only the inputs recorded at the public seed loses the checks whose
    inputs the seed draws."""
    from graders.conftest import PUBLIC_SEED

    lesson = "l16_attention_scoring"
    solution = SOLUTION[lesson]
    seen = tmp_path / "seen.txt"
    record = tmp_path / "record"
    record.mkdir()
    (record / f"{lesson}.py").write_text(
        solution + f"\nSEEN = {str(seen)!r}\n" + RECORD
    )
    recorded, _ = grade(
        "16", "--unconfined", "--impl", str(record), "--seed", str(PUBLIC_SEED)
    )
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr[-2000:]
    known = set(seen.read_text().split())
    assert len(known) > 5
    replay = tmp_path / "replay"
    replay.mkdir()
    (replay / f"{lesson}.py").write_text(
        solution + f"\nKNOWN = {sorted(known)!r}\n" + REPLAY
    )
    correct = tmp_path / "correct"
    correct.mkdir()
    (correct / f"{lesson}.py").write_text(solution)

    def graded(folder: Path, *seed: str) -> dict:
        report = tmp_path / f"{folder.name}{'-'.join(seed)}.json"
        result, _ = grade(
            "16", "--submission", str(folder), "--report", str(report), *seed
        )
        assert report.exists(), result.stdout + result.stderr[-2000:]
        return json.loads(report.read_text())

    drawn = graded(correct)
    number = int(re.search(r"judged on seed (\d+)", drawn["output"])[1])
    assert number != PUBLIC_SEED
    other = str(number + 1)
    again = graded(correct, "--seed", other)
    assert f"judged on seed {other} " in again["output"]
    for data in (drawn, again):
        assert data["score"] == data["max_score"] > 0, data["output"]
    refused, _ = grade(
        "16", "--submission", str(replay), "--seed", str(PUBLIC_SEED)
    )
    assert refused.returncode != 0
    said = refused.stdout + refused.stderr
    assert "is the public seed" in said, said
    fresh = graded(replay, "--seed", other)
    failed = {t["name"] for t in fresh["tests"] if t["status"] == "failed"}
    print(fresh["score"], "/", fresh["max_score"], sorted(failed))
    assert "l16 test_masked_softmax_values[valid_lens_B]" in failed
    assert fresh["score"] <= fresh["max_score"] - 10


def test_a_forged_gradient_fails(tmp_path):
    """The worker's gradient helpers patched to report a made-up gradient
    (zeros): the probe finds the grader's helpers changed
    (m2t.grading.guard) and, were it not to, the judge compares the
    gradient with its own reference's: every gradient check fails, and
    every other check too, since a module that patched the grader is
    trusted with nothing."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "l16_attention_scoring.py").write_text(
        SOLUTION["l16_attention_scoring"]
        + (ATTACKS / "gradients.py").read_text()
    )
    report = tmp_path / "results.json"
    result, _ = grade("16", "--submission", str(sub), "--report", str(report))
    assert report.exists(), result.stdout + result.stderr[-2000:]
    tests = json.loads(report.read_text())["tests"]
    gradient = [t for t in tests if "gradient" in t["name"]]
    assert len(gradient) == 2
    for t in gradient:
        assert t["status"] == "failed", t
        assert (
            "changed the grader's own" in t["output"]
            or "centred differences of the reference" in t["output"]
        ), t
    others = [t for t in tests if t not in gradient]
    assert all(t["status"] == "failed" for t in others), others
    assert all("changed the grader's own" in t["output"] for t in others)


ALONE = {
    # what each layer, alone, is there to stop; the rest gets through
    "namespaces": {
        # ptrace, maps and signal reach only the worker's own PID namespace
        # (bubblewrap's init and the worker's children): root inside, with
        # no capability but to switch uid, and no process limit
        "through": {
            "families",
            "udp",
            "root",
            "setsid",
            "signal",
            "ptrace",
            "maps",
            "nproc",
        },
        "udp_arrives": False,
        "report_safe": True,
        "survivors": False,
    },
    "unprivileged": {
        "through": {
            "unix",  # a socket open to every uid is open to the worker's
            "abstract",
            "tcp",
            "udp",
            "families",
            "grader",
            "devices",
            "tmpspace",
            "setsid",
        },
        "udp_arrives": True,
        "report_safe": True,
        "survivors": False,
    },
    "landlock": {
        "through": {
            "unix",
            "udp",
            "families",
            "tmpspace",
            "nproc",
            "setsid",
            "root",
        },
        "udp_arrives": True,
        "report_safe": True,
        "survivors": True,
    },
    "seccomp": {
        "through": {
            "environ",
            "maps",
            "grader",
            "blockdev",
            "devices",
            "signal",
            "solutions",
            "write",
            "tmpspace",
            "nproc",
            "setsid",
            "root",
        },
        "udp_arrives": False,
        "report_safe": False,
        "survivors": True,
    },
}


@pytest.mark.skipif(os.geteuid() != 0, reason="each layer alone needs root")
@pytest.mark.parametrize("layer", list(ALONE))
def test_each_layer_holds_alone(layer):
    """One layer of the sandbox at a time, the three others left out
    (`M2T_SANDBOX_WITHOUT`), against the attacks of tests/attacks/escape.py:
    each must stop by itself what it is there to stop. The key is a file
    only root reads, in a folder every uid may enter (as Gradescope's
    bundle is); the report's folder is root's, open to read."""
    from m2t.grading import confine
    from tests.reachable_python import reachable_python

    python = reachable_python()
    if python is None:
        pytest.skip("no Python here that another uid can run")
    expect = ALONE[layer]
    secret = "s3cret-" + secrets.token_hex(8)
    survivor = "m2tone" + secrets.token_hex(3)
    import tempfile

    open_folder = Path(tempfile.mkdtemp(prefix="m2t-alone-"))
    open_folder.chmod(0o755)
    locked = open_folder / "course"
    (locked / "solutions").mkdir(parents=True)
    (locked / "solutions" / "l16_attention_scoring.py").write_text("KEY\n")
    locked.chmod(0o700)
    out = open_folder / "out"
    out.mkdir(mode=0o755)
    report = out / "results.json"
    junit = open_folder / "junit.xml"  # the messages: no daemon writes it
    listeners = Listeners(open_folder / "srv", secret)
    config = {
        "secret": secret,
        "unix": listeners.unix_path,
        "abstract": listeners.abstract_name,
        "tcp": listeners.tcp.getsockname()[1],
        "udp": listeners.udp.getsockname()[1],
        "root": str(locked),
        "report": str(report),
        "beside_report": str(out / "extra.txt"),
        "tmp_files": 10,
        # past the worker's process limit; a root worker has none (the
        # kernel exempts root), so fewer forks show it as well
        "nproc": 1000 if layer == "unprivileged" else 50,
        "survivor": survivor,
    }
    sub = open_folder / "sub"
    sub.mkdir()
    (sub / "l16_attention_scoring.py").write_text(
        SOLUTION["l16_attention_scoring"]
        + f"\nCONFIG = {config!r}\n"
        + (ATTACKS / "escape.py").read_text()
    )
    without = ",".join(x for x in confine.LAYERS if x != layer)
    env = settings.quiet_env(
        {
            **os.environ,
            "M2T_ATTACK_SECRET": secret,
            "M2T_SANDBOX_WITHOUT": without,
        }
    )
    try:
        result = subprocess.run(
            [python, "-m", "m2t", "grade", "16", "--submission", str(sub)]
            + ["--report", str(report), "--allow-weaker-sandbox"]
            + ["--junit", str(junit)]
            + ["--timeout", "900", "--lesson-timeout", "3600"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        log = result.stdout + result.stderr[-3000:]
        assert result.returncode in (0, 1), log
        import xml.etree.ElementTree as ET

        got = {
            case.get("name"): node.text or ""
            for case in ET.parse(junit).getroot().iter("testcase")
            for node in case
        }
        time.sleep(3)  # time for a survivor to act
        survivors = processes_named(survivor)
        score = json.loads(report.read_text())["score"]
    finally:
        listeners.close()
        for pid in processes_named(survivor):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(open_folder, ignore_errors=True)
    assert f"sandbox: {layer} in force" in result.stdout, log
    reports = [
        dict(kv.split("=") for kv in re.search(r"escapes: (.*)", o)[1].split())
        for o in got.values()
        if "escapes:" in o
    ]
    assert reports, got
    for escapes in reports:
        print(layer, {k for k, v in escapes.items() if v != "0"})
        assert len(escapes) == 22, escapes
        assert {k for k, v in escapes.items() if v != "0"} == expect["through"]
    print(layer, "udp", listeners.udp_got, "survivors", survivors, score)
    assert bool(listeners.udp_got) == expect["udp_arrives"]
    assert bool(survivors) == expect["survivors"]
    assert (score != 999) == expect["report_safe"]
