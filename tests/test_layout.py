"""The house plan's arrows, read from the source (no module is imported):

* the harness (m2t/) imports neither graders/ (pytest loads them) nor
  lessons/ or solutions/ (`m2t.grading.impl` loads those by path);
* graders/ use only the harness's public modules and names, never lessons/
  or solutions/; so do training/ and benchmarks/ (m2t's private helpers
  are not an API);
* lessons/ and solutions/ import neither m2t nor graders;
* no import cycle among m2t's modules (imports inside functions count: a
  lazy import is still an arrow).

Each rule is also run once on a small planted tree, so a rule that cannot
fail is caught here too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN = {
    "m2t": {"graders", "lessons", "solutions"},
    "graders": {"lessons", "solutions"},
    "lessons": {"m2t", "graders"},
    "solutions": {"m2t", "graders"},
}
"""Top-level folder -> the top-level packages its modules must not import."""

PUBLIC_ONLY = ("graders", "training", "benchmarks")
"""Folders that may use m2t through its public modules and names only."""


def module_name(path: Path, root: Path) -> str:
    """`m2t/grading/runner.py` -> "m2t.grading.runner"; a package's
    `__init__.py` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources(root: Path, folder: str) -> Iterator[Path]:
    yield from sorted((root / folder).rglob("*.py"))


def imports(path: Path, root: Path) -> Iterator[tuple[int, str, str]]:
    """Every import in `path`: (line, module, imported name or "").

    `from a.b import c` yields ("a.b", "c"); `import a.b` yields ("a.b",
    ""); relative imports are resolved; `importlib.import_module("x")` and
    `__import__("x")` with a literal (or an f-string's literal start) count.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module_name(path, root)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ""
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[
                    : len(package.split(".")) - node.level + 1
                ]
                base = ".".join([*up, base] if base else up)
            for alias in node.names:
                yield node.lineno, base, alias.name
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = getattr(func, "attr", None) or getattr(func, "id", None)
            if called not in ("import_module", "__import__"):
                continue
            arg = node.args[0]
            if isinstance(arg, ast.JoinedStr) and arg.values:
                arg = arg.values[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                yield node.lineno, arg.value.rstrip("._"), ""


def _private(dotted: str) -> bool:
    return any(
        part.startswith("_") and not part.startswith("__")
        for part in dotted.split(".")
        if part
    )


def _m2t_aliases(tree: ast.AST) -> set[str]:
    """Local names bound to an m2t module (`from m2t.grading import probe
    as _probe`, `import m2t.settings as s`)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "m2t"
        ):
            for alias in node.names:
                names.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "m2t" and alias.asname:
                    names.add(alias.asname)
    return names


def layering_problems(root: Path) -> list[str]:
    """Every import in `root`'s tree that breaks one of the rules above."""
    problems = []
    for folder, banned in FORBIDDEN.items():
        for path in sources(root, folder):
            where = path.relative_to(root).as_posix()
            for line, module, _ in imports(path, root):
                top = module.split(".")[0]
                if top in banned:
                    problems.append(
                        f"{where}:{line}: {folder}/ imports {module}"
                    )
    for folder in PUBLIC_ONLY:
        for path in sources(root, folder):
            where = path.relative_to(root).as_posix()
            for line, module, name in imports(path, root):
                if module.split(".")[0] != "m2t":
                    continue
                used = f"{module}.{name}" if name else module
                if _private(used):
                    problems.append(
                        f"{where}:{line}: {folder}/ uses m2t's private {used}"
                    )
            tree = ast.parse(path.read_text(encoding="utf-8"))
            aliases = _m2t_aliases(tree)
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id in aliases
                    and _private(node.attr)
                ):
                    problems.append(
                        f"{where}:{node.lineno}: {folder}/ uses m2t's "
                        f"private {node.value.id}.{node.attr}"
                    )
    return problems


def import_graph(root: Path, package: str = "m2t") -> dict[str, set[str]]:
    """Module -> the modules of `package` it imports (anywhere in it)."""
    paths = {module_name(p, root): p for p in sources(root, package)}
    graph: dict[str, set[str]] = {name: set() for name in paths}
    for name, path in paths.items():
        for _, module, imported in imports(path, root):
            target = f"{module}.{imported}" if imported else module
            if target not in paths:  # `from m2t import ROOT`: the package
                target = module
            if target in paths and target != name:
                graph[name].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of `graph` as [a, b, ..., a], or [] when it has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_every_folder_imports_only_what_the_plan_allows():
    assert layering_problems(ROOT) == []


def test_no_import_cycle_among_m2t_modules():
    graph = import_graph(ROOT)
    assert len(graph) > 20 and any(graph.values())  # the tree was read
    assert find_cycle(graph) == []


PLANTED = {
    "m2t/__init__.py": "",
    "m2t/a.py": "def f():\n    from m2t import b\n",
    "m2t/b.py": "from . import a\n",
    "m2t/c.py": "import importlib\nimportlib.import_module(f'graders.test_{1}')\n",
    "graders/test_x.py": "from m2t.grading.probe import _display\n",
    "graders/test_y.py": "from m2t.grading import probe as p\np._configure()\n",
    "lessons/l01_x.py": "import graders\n",
    "solutions/l01_x.py": "from m2t import settings\n",
    "training/run.py": "from m2t.cli import _quiet\n",
}


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    for name, text in PLANTED.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_the_rules_catch_planted_imports(planted):
    problems = "\n".join(layering_problems(planted))
    for expected in (
        "m2t/c.py:2: m2t/ imports graders.test",
        "graders/test_x.py:1: graders/ uses m2t's private "
        "m2t.grading.probe._display",
        "graders/test_y.py:2: graders/ uses m2t's private p._configure",
        "lessons/l01_x.py:1: lessons/ imports graders",
        "solutions/l01_x.py:1: solutions/ imports m2t",
        "training/run.py:1: training/ uses m2t's private m2t.cli._quiet",
    ):
        assert expected in problems
    assert find_cycle(import_graph(planted)) == ["m2t.a", "m2t.b", "m2t.a"]


SETTINGS_ONLY = {
    "TF_CPP_MIN_LOG_LEVEL": "settings.quiet_tensorflow() or quiet_env()",
    "l[0-9][0-9]_*.py": "settings.LESSON_GLOB",
    ".m2t": "settings.STATE_DIR and the paths under it",
}
"""String constants that only m2t/settings.py spells out -> what to use."""


def settings_problems(root: Path) -> list[str]:
    """Where code outside m2t/settings.py spells out one of its settings,
    or reads TOML without `m2t.settings.tomllib`."""
    problems = []
    for folder in ("m2t", "graders", "training", "benchmarks"):
        for path in sources(root, folder):
            where = path.relative_to(root).as_posix()
            if where == "m2t/settings.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Constant)
                    and node.value in SETTINGS_ONLY
                ):
                    problems.append(
                        f"{where}:{node.lineno}: {node.value!r}: use "
                        f"{SETTINGS_ONLY[node.value]}"
                    )
            for line, module, _ in imports(path, root):
                if module in ("tomllib", "tomli"):
                    problems.append(
                        f"{where}:{line}: import {module}: use "
                        "`from m2t.settings import tomllib`"
                    )
    return problems


def test_settings_are_spelled_out_in_one_place():
    assert settings_problems(ROOT) == []


def test_the_settings_rule_catches_a_planted_copy(tmp_path):
    (tmp_path / "m2t").mkdir()
    (tmp_path / "m2t" / "settings.py").write_text(
        "X = 'TF_CPP_MIN_LOG_LEVEL'\n"
    )
    (tmp_path / "m2t" / "a.py").write_text(
        "import tomllib\nimport os\nos.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'\n"
    )
    assert settings_problems(tmp_path) == [
        "m2t/a.py:3: 'TF_CPP_MIN_LOG_LEVEL': use settings.quiet_tensorflow() "
        "or quiet_env()",
        "m2t/a.py:1: import tomllib: use `from m2t.settings import tomllib`",
    ]


MAX_LINES = 500
"""The most lines a module of the project may have, but for LARGE."""
LARGE = {
    "solutions/l??_*.py": "one lesson, one file: a lesson's layers are read "
    "in order beside its notes, and its skeleton is cut from it",
    "lessons/l??_*.py": "generated from the lesson's solution file",
    "graders/test_l??_*.py": "one grader per lesson, beside its lesson "
    "(pytest graders/test_lNN_*.py is how a student runs it)",
    "benchmarks/cases.py": "each timed pair, ours beside Keras's, in one "
    "table of builders",
}
"""Files allowed past MAX_LINES, each with the reason (CONTRIBUTING says
the same)."""


def oversized(root: Path) -> list[str]:
    """`path: N lines` for every module of the project over MAX_LINES that
    no LARGE pattern covers (tests/ is a suite of checks, not a module
    anyone imports: it is not counted)."""
    found = []
    for folder in (
        "m2t",
        "graders",
        "m2t_data",
        "training",
        "benchmarks",
        "solutions",
        "lessons",
    ):
        for path in sources(root, folder):
            rel = path.relative_to(root)
            if any(rel.match(pattern) for pattern in LARGE):
                continue
            count = len(path.read_text(encoding="utf-8").splitlines())
            if count > MAX_LINES:
                found.append(f"{rel.as_posix()}: {count} lines")
    return found


def test_no_module_is_larger_than_its_reason():
    assert oversized(ROOT) == []


def test_the_size_rule_catches_a_planted_module(tmp_path):
    (tmp_path / "m2t").mkdir()
    (tmp_path / "m2t" / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "l99_demo.py").write_text("x = 1\n" * 900)
    assert oversized(tmp_path) == [f"m2t/big.py: {MAX_LINES + 1} lines"]
