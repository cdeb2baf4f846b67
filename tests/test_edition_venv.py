"""The student edition as a student receives it (DESIGN principle 10):
built by `m2t release`, installed by the command of its own README into a
fresh virtual environment of its own, and run from the edition's folder,
outside this checkout, in an environment that names nothing of it (no
PYTHONPATH, no M2T_ROOT, no activated virtual environment). There the
student's loop runs end to end: `m2t --help`, `m2t list`, `m2t hint`,
`m2t grade` on the untouched lesson, `m2t watch` in a pseudo-terminal for
one save of the solution, and `m2t grade` with full marks.

It installs TensorFlow into a new environment for each Python, so it runs
only where `M2T_EDITION_PYTHONS` names the interpreters (paths separated
by `:`): `.ci/edition.sh` sets it to the oldest and the newest Python the
project supports, and `M2T_EDITION_WHEELS` to a folder of the wheels the
install needs (then pip installs from that folder only)."""

from __future__ import annotations

import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t import settings
from tests.test_watch_tty import Terminal
from tests.test_watch_tty import _controlling_terminal

PYTHONS = [p for p in os.environ.get("M2T_EDITION_PYTHONS", "").split(":") if p]
WHEELS = os.environ.get("M2T_EDITION_WHEELS", "")
LESSON = curriculum.find("16")
HIDDEN = ("dev", "train", "make-lessons", "check", "mutants", "release")
"""The commands that need the full repository: not in the edition's help."""

pytestmark = pytest.mark.skipif(
    not PYTHONS,
    reason="M2T_EDITION_PYTHONS names no interpreter (.ci/edition.sh sets it)",
)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "edition"
    result = subprocess.run(
        [sys.executable, "-m", "m2t", "release", "--out", str(out)],
        cwd=ROOT,
        env=settings.quiet_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def _readme_install(edition: Path) -> str:
    """The first command of the edition's README: how a student installs."""
    readme = (edition / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", readme, re.S)
    assert block, "the edition's README has no install command"
    command = block[1].splitlines()[0]
    assert "venv" in command and "pip install" in command, command
    return command


def _student_env(shims: Path, venv: Path | None = None) -> dict[str, str]:
    """A student's shell: PATH with `python3` the chosen interpreter (and
    the venv's bin/ once activated), HOME, pip's own settings of this
    machine, and nothing else of this checkout's environment."""
    env = {
        "PATH": os.pathsep.join(
            [*([str(venv / "bin")] if venv else []), str(shims), "/usr/bin"]
            + ["/bin"]
        ),
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "TERM": "xterm",
        "M2T_LANG": "en",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }
    env |= {k: v for k, v in os.environ.items() if k.startswith("PIP_")}
    if WHEELS:
        env["PIP_FIND_LINKS"] = WHEELS
        env["PIP_NO_INDEX"] = "1"
    if venv:
        env["VIRTUAL_ENV"] = str(venv)
    return env


def _run(args, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800
    )


@pytest.fixture
def edition(built, tmp_path):
    """A copy of the built edition for one install; removed afterwards
    (its virtual environment holds 2.5 GB of TensorFlow)."""
    copy = tmp_path / "edition"
    shutil.copytree(built, copy)
    yield copy
    shutil.rmtree(copy, ignore_errors=True)


# a hang guard: the install alone may take minutes at a high load
@pytest.mark.timeout(2400)
@pytest.mark.parametrize("python", PYTHONS, ids=lambda p: Path(p).name)
def test_the_student_loop_in_a_fresh_venv(python, edition, tmp_path):
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python3").symlink_to(python)
    install = _run(
        ["bash", "-c", _readme_install(edition)], edition, _student_env(shims)
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr
    venv = edition / ".venv"
    env = _student_env(shims, venv)

    where = _run(
        [
            "python",
            "-c",
            "import importlib.util, sys, m2t;"
            "print(m2t.__file__); print(m2t.ROOT); print(sys.prefix);"
            "print(importlib.util.find_spec('m2t.authoring'));"
            "print(any(p.startswith(sys.argv[1]) for p in sys.path))",
            str(ROOT),
        ],
        edition,
        env,
    )
    assert where.returncode == 0, where.stderr
    module, root, prefix, authoring, on_path = where.stdout.split("\n")[:5]
    assert Path(module).is_relative_to(edition), module
    assert not Path(module).is_relative_to(ROOT), module
    assert Path(root) == edition.resolve(), where.stdout
    assert Path(prefix) == venv, where.stdout
    assert authoring == "None" and on_path == "False", where.stdout

    helped = _run(["m2t", "--help"], edition, env)
    assert helped.returncode == 0, helped.stderr
    usage = helped.stdout.split("\n\n")[0]  # also holds --lang's {en,zh}
    (commands,) = [
        x for x in re.findall(r"\{([a-z,-]+)\}", usage) if "grade" in x
    ]
    assert {"grade", "list", "hint", "watch"} <= set(commands.split(","))
    assert not set(HIDDEN) & set(commands.split(",")), helped.stdout
    for name in HIDDEN:
        assert not re.search(rf"^    {name} ", helped.stdout, re.M), name

    listed = _run(["m2t", "list"], edition, env)
    assert listed.returncode == 0, listed.stderr
    assert re.match(r"l01\s+l01_mlp\s+not started", listed.stdout), listed

    hint = _run(["m2t", "hint", LESSON.id], edition, env)
    assert hint.returncode == 0, hint.stderr
    assert LESSON.tag in hint.stdout, hint.stdout

    untouched = _run(["m2t", "grade", LESSON.id], edition, env)
    assert untouched.returncode == 1, untouched.stdout + untouched.stderr
    assert "not started" in untouched.stdout, untouched.stdout
    assert "Traceback" not in untouched.stdout + untouched.stderr

    _watch_one_save(edition, env)

    graded = _run(["m2t", "grade", LESSON.id], edition, env)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    score = re.search(r"score (\d+)/(\d+)", graded.stdout)
    assert score and score[1] == score[2] != "0", graded.stdout


def _watch_one_save(edition: Path, env: dict) -> None:
    """`m2t watch 16` in a pseudo-terminal: the untouched lesson, then one
    save of the solution, graded with full marks; Ctrl-C ends it."""
    path = edition / "lessons" / LESSON.filename
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        ["m2t", "watch", LESSON.id],
        cwd=edition,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        preexec_fn=_controlling_terminal,
    )
    os.close(slave)
    screen = Terminal(master)
    try:
        first = screen.until(r"Watching lessons/", timeout=900)
        assert f"{LESSON.tag} " in first and "not started" in first, first
        shutil.copy(ROOT / "solutions" / LESSON.filename, path)
        graded = screen.until(rf"ok  {LESSON.tag} passes", timeout=900)
        assert re.search(
            rf"ok  {LESSON.tag} passes: (\d+)/\1 checks", graded
        ), graded
        # it goes on to the next lesson: Ctrl-C once that is graded (a
        # Ctrl-C mid-grade can land in a finalizer and be lost)
        screen.until(r"Watching lessons/", timeout=900)
        screen.type("\x03")  # Ctrl-C, typed
        screen.until(r"stopped; `m2t progress`", timeout=300)
        assert proc.wait(timeout=300) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert "Traceback" not in screen.text, screen.text
