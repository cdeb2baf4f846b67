"""Which implementation is graded, and how its modules are loaded.

`lessons` (the default) is the student's tree, `solutions` the reference;
any other value is a folder holding `lNN_topic.py` files (a submission).
Modules load under private names from their files, fresh whenever a file
changes, so two implementations never share a module object.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from m2t import ROOT
from m2t import i18n


def resolve(impl: str | Path) -> Path:
    """The folder of an implementation: `lessons`, `solutions` or a path.

    Raises:
        ValueError: naming `impl` when it is no such folder.
    """
    if str(impl) in ("lessons", "solutions"):
        folder = ROOT / str(impl)
    else:
        folder = Path(impl).expanduser().resolve()
    if not folder.is_dir():
        raise ValueError(
            i18n.text("cli.no_impl", impl=repr(impl), folder=folder)
        )
    return folder


def confined(impl: str | Path, unconfined: bool = False) -> Path:
    """The folder of `impl` (`resolve`) for grading in this process: one
    inside the course folder, or anywhere with `unconfined`.

    A folder outside the course folder is someone else's work: `m2t grade
    --submission` grades it in a sandboxed worker; here it would run
    unconfined in the grader's own process.

    Raises:
        ValueError: naming `impl` when it is no such folder, or lies
            outside the course folder and `unconfined` is False.
    """
    folder = resolve(impl)
    root = ROOT.resolve()
    if not unconfined and not folder.is_relative_to(root):
        raise ValueError(
            i18n.text(
                "cli.impl_outside", impl=str(impl), folder=folder, root=root
            )
        )
    return folder


_CACHE: dict[Path, tuple[int, ModuleType]] = {}


def load(module: str, folder: Path) -> ModuleType:
    """Import `folder/module.py` under a private name.

    The module is re-executed only when the file changes (its mtime), so a
    long-lived grader sees a student's edits.

    Raises:
        FileNotFoundError: the file is not there.
    """
    path = (folder / f"{module}.py").resolve()
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such lesson file")
    stamp = path.stat().st_mtime_ns
    cached = _CACHE.get(path)
    if cached and cached[0] == stamp:
        return cached[1]
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    name = f"_m2t_impl_{digest}_{module}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: cannot be loaded as a module")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    _CACHE[path] = (stamp, mod)
    return mod
