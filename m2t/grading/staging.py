"""Staging a submission: copy only what is graded, following no link.

Every component below the submission folder is opened relative to its
parent's descriptor with `O_NOFOLLOW`, so a symbolic link anywhere (a
linked `lessons/` folder, a linked file, or a file swapped for a link while
staging runs) is refused, never followed; each file is checked with `fstat`
on the open descriptor (a regular file, one link, at most `MAX_BYTES`) and
copied from that descriptor.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from m2t import i18n

MAX_BYTES = 1 << 20
"""The largest lesson file or answers.toml that is graded."""

REFUSED = "refused.json"
"""Written beside the staged files: {file name: why it was not staged}."""

MISSING = "missing.json"
"""Written beside the staged files: {file name: where in the submission it
was expected}, for each graded file the submission does not have."""

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _why_not(err: OSError, what: str) -> str:
    if err.errno == 40:  # ELOOP: the last component is a symbolic link
        return f"{what} is a symbolic link"
    if err.errno == 20:  # ENOTDIR: a link to a folder, or a file
        return f"{what} is a symbolic link or not a folder"
    return f"{what} cannot be opened ({os.strerror(err.errno)})"


IGNORED = ("__MACOSX",)
"""Folders an archiver adds beside the one a student zipped."""


def _open_source(submission: Path) -> tuple[int, str, str]:
    """(descriptor, display prefix, refusal) of the folder holding the
    lesson files: `submission/lessons` when there is one, else
    `submission` itself (which the instructor names, so it may be a link);
    where `submission` holds no lesson file but one folder (an upload
    wrapped in its folder: `m2t-2026/lessons/...`), the same inside it. The
    prefix is where the files are in the submission (`m2t-2026/lessons/`)."""
    root = os.open(submission, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    wrapper = _only_folder(root)
    if wrapper:
        try:
            inner = os.open(wrapper, _DIR, dir_fd=root)
        except OSError as err:
            return root, f"{wrapper}/", _why_not(err, f"{wrapper}/")
        os.close(root)
        root = inner
    fd, prefix, why = _lessons_in(root)
    return fd, (f"{wrapper}/" if wrapper else "") + prefix, why


def _only_folder(root: int) -> str:
    """The one folder (or link) of a submission that has no `lessons/`, no
    lesson file and no answers, else ''."""
    names = [
        n
        for n in os.listdir(root)
        if not n.startswith(".") and n not in IGNORED
    ]
    if "lessons" in names or any(
        n == "answers.toml" or n.endswith(".py") for n in names
    ):
        return ""
    if len(names) != 1:
        return ""
    info = os.stat(names[0], dir_fd=root, follow_symlinks=False)
    # a link is named too, so that opening it is refused, never followed
    wraps = stat.S_ISDIR(info.st_mode) or stat.S_ISLNK(info.st_mode)
    return names[0] if wraps else ""


def _lessons_in(root: int) -> tuple[int, str, str]:
    """`root/lessons` when there is one, else `root` (see _open_source)."""
    try:
        info = os.stat("lessons", dir_fd=root, follow_symlinks=False)
    except FileNotFoundError:
        return root, "", ""
    if stat.S_ISLNK(info.st_mode):
        return root, "lessons/", "lessons/ is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return root, "", ""
    try:
        fd = os.open("lessons", _DIR, dir_fd=root)
    except OSError as err:
        return root, "lessons/", _why_not(err, "lessons/")
    os.close(root)
    return fd, "lessons/", ""


def _read(folder: int, name: str) -> bytes:
    """The bytes of regular file `name` in `folder`; ValueError saying why
    it is refused."""
    try:
        fd = os.open(name, _FILE, dir_fd=folder)
    except FileNotFoundError:
        raise
    except OSError as err:
        raise ValueError(_why_not(err, name)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{name} is not a regular file")
        if info.st_nlink != 1:
            raise ValueError(f"{name} has {info.st_nlink} hard links")
        if info.st_size > MAX_BYTES:
            raise ValueError(
                f"{name} is {info.st_size} bytes, over the {MAX_BYTES} limit"
            )
        data = os.read(fd, MAX_BYTES + 1)
        if len(data) > MAX_BYTES:  # grew since fstat
            raise ValueError(f"{name} is over the {MAX_BYTES}-byte limit")
        return data
    finally:
        os.close(fd)


def stage(submission: Path, modules: list[str], dest: Path) -> Path:
    """Copy only what is graded from a submission: `lNN_topic.py` files of
    known lessons and `answers.toml`, each at most `MAX_BYTES`; everything
    else (tests, conftest.py, pytest.ini, graders) is ignored.

    `submission` is a folder holding the lesson files, or a student edition
    (or its clone) with a `lessons/` folder, or a folder holding only one
    of those (an upload wrapped in its folder). A file that is a link, not a
    regular file, or too big is not staged; `refusals(dest)` says why.

    Raises:
        ValueError: `submission` is no folder.
    """
    submission = Path(submission)
    if not submission.is_dir():
        raise ValueError(
            i18n.text("cli.no_submission", path=repr(str(submission)))
        )
    dest.mkdir(parents=True, exist_ok=True)
    dest.chmod(0o755)  # a worker that dropped root reads it
    names = [f"{m}.py" for m in modules] + ["answers.toml"]
    refused: dict[str, str] = {}
    missing: dict[str, str] = {}
    folder, prefix, why = _open_source(submission)
    try:
        for name in names:
            if why:
                refused[name] = why
                continue
            try:
                data = _read(folder, name)
            except FileNotFoundError:
                missing[name] = f"{prefix}{name}"
                if not prefix:
                    missing[name] += f" (or lessons/{name})"
                continue
            except ValueError as err:
                refused[name] = f"{prefix}{err}"
                continue
            (dest / name).write_bytes(data)
            (dest / name).chmod(0o644)
    finally:
        os.close(folder)
    (dest / REFUSED).write_text(json.dumps(refused, indent=1))
    (dest / MISSING).write_text(json.dumps(missing, indent=1))
    return dest


def refusals(staged: Path) -> dict[str, str]:
    """{file name: why it was not staged} for a folder `stage` wrote."""
    return _record(staged, REFUSED)


def missing(staged: Path) -> dict[str, str]:
    """{file name: where the submission should have had it} for a folder
    `stage` wrote."""
    return _record(staged, MISSING)


def _record(staged: Path, name: str) -> dict[str, str]:
    try:
        return json.loads((Path(staged) / name).read_text())
    except (OSError, ValueError):
        return {}
