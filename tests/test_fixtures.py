"""The judge's references stay with the judge: `@reference` marks them,
`m2t.grading.strip` withholds them from every copy a student's code can
read (the grading worker's)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from m2t import ROOT
from m2t import settings
from m2t.grading import strip

GRADERS = sorted((ROOT / "graders").glob("test_l*.py"))
# That each grader's `ref_*`, `tape_*` and `keras_*` is marked `@reference`
# is a lesson rule (m2t.authoring.rules.references_marked), which
# tests/test_rules.py runs for every lesson.


def _marked(node: ast.FunctionDef) -> bool:
    return any(
        ast.unparse(d) in ("reference", "fixtures.reference")
        for d in node.decorator_list
    )


def _functions(path: Path) -> list[ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n for n in tree.body if isinstance(n, ast.FunctionDef)]


SAMPLE = textwrap.dedent(
    '''
    import numpy as np

    from graders.lib.fixtures import reference

    LIMIT = 3  # kept


    @reference
    def ref_double(x, mistake=None):
        """Twice x, in float64."""
        y = np.asarray(x, np.float64)
        return 2 * y


    def _inputs(rng):
        return rng.standard_normal(3)


    class Holder:
        @reference
        def ref_method(self):
            return 1
    '''
)


def test_strip_keeps_signatures_docstrings_and_the_rest():
    out = strip.strip_source(SAMPLE)
    tree = ast.parse(out)
    (ref,) = [n for n in tree.body if getattr(n, "name", "") == "ref_double"]
    assert ast.get_docstring(ref) == "Twice x, in float64."
    assert [type(s).__name__ for s in ref.body] == ["Expr", "Raise"]
    assert "ref_double is withheld" in out and "2 * y" not in out
    assert "return 1" not in out and "ref_method is withheld" in out
    assert "LIMIT = 3  # kept" in out
    assert "return rng.standard_normal(3)" in out  # unmarked: untouched
    # a reference module: every top-level function goes, classes stay
    whole = strip.strip_source(SAMPLE, whole=True)
    assert "return rng.standard_normal(3)" not in whole
    assert "class Holder" in whole


def test_strip_refuses_what_it_cannot_cut():
    with pytest.raises(ValueError, match="one-line body"):
        strip.strip_source("@reference\ndef ref_f(x): return x\n", where="f")
    with pytest.raises(ValueError, match="does not parse"):
        strip.strip_source("def (:\n")


def _bodies(path: Path, whole: bool) -> dict[str, str]:
    """name -> dump of the body (docstring left out) of each function the
    strip withholds in `path` (in a reference module, every top-level
    function but those it calls while loading)."""
    found = {}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    at_load = {
        n.func.id
        for stmt in tree.body
        if not isinstance(stmt, (ast.FunctionDef, ast.ClassDef))
        for n in ast.walk(stmt)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and (
            _marked(node)
            or (whole and node.col_offset == 0 and node.name not in at_load)
        ):
            body = node.body
            if ast.get_docstring(node) is not None:
                body = body[1:]
            found[node.name] = "\n".join(ast.dump(s) for s in body)
    return found


REFERENCE_FILES = (
    "graders/lib/references.py",
    "graders/lib/cnn_references.py",
    "graders/lib/tapes.py",
    "m2t/questions/experiments.py",
)
"""The modules made of references only, written here rather than read from
`strip.REFERENCE_MODULES`: a module dropped from that list must fail a
test, not silently leave the checks below with less to check."""


def test_every_function_of_the_reference_modules_is_withheld(tmp_path):
    """In the worker's copy, each top-level function of each module of
    REFERENCE_FILES (but those it calls while loading) raises: the float64
    references, the judge's tape gradients, the experiments."""
    from m2t.grading import sandbox

    code = sandbox.copy_trusted(tmp_path / "code")
    for rel in REFERENCE_FILES:
        kept = _bodies(ROOT / rel, whole=True)
        stubs = _bodies(code / rel, whole=True)
        assert kept and set(stubs) == set(kept), rel
        answering = [n for n, b in stubs.items() if not b.startswith("Raise(")]
        assert not answering, f"{rel}: {answering} answer in the worker"
        # a function added there without the decorator is withheld too
        added = tmp_path / "added" / rel
        added.parent.mkdir(parents=True, exist_ok=True)
        added.write_text(
            (ROOT / rel).read_text(encoding="utf-8")
            + "\n\ndef added_later(x):\n    return 2.0 * x\n",
            encoding="utf-8",
        )
        assert strip.strip_file(added, rel), rel
        body = _bodies(added, whole=True)["added_later"]
        assert body.startswith("Raise("), f"{rel}: added_later answers"


def test_the_workers_copy_holds_no_reference(tmp_path):
    """Every marked function and every function of a reference module is
    a stub in the worker's copy, and the copy imports: each grader loads
    and its references raise."""
    from m2t.grading import sandbox

    code = sandbox.copy_trusted(tmp_path / "code")
    checked = 0
    for path in sorted(code.rglob("*.py")):
        rel = path.relative_to(code).as_posix()
        original = ROOT / rel
        whole = rel in strip.REFERENCE_MODULES
        kept = _bodies(original, whole)
        stubs = _bodies(path, whole)
        assert set(stubs) == set(kept), rel
        for name, body in stubs.items():
            assert body.startswith("Raise("), f"{rel} {name}"
            checked += 1
    assert checked > 100
    assert not (code / "graders" / "fixtures").exists()  # no public answers
    for rel in strip.REFERENCE_MODULES:
        assert (code / rel).exists(), rel
    script = textwrap.dedent(
        """
        import importlib, inspect, sys
        sys.path.insert(0, sys.argv[1])
        from graders.lib import references
        from graders.lib.fixtures import is_reference
        names = [p.split("/")[-1][:-3] for p in sys.argv[2:]]
        withheld = 0
        for name in names:
            module = importlib.import_module("graders." + name)
            assert module.__file__.startswith(sys.argv[1]), module.__file__
            for key, fn in vars(module).items():
                if callable(fn) and is_reference(fn):
                    params = inspect.signature(fn).parameters.values()
                    args = [None for p in params if p.default is p.empty
                            and p.kind is p.POSITIONAL_OR_KEYWORD]
                    try:
                        fn(*args)
                    except RuntimeError as e:
                        assert "withheld" in str(e), (key, e)
                        withheld += 1
                    else:
                        raise AssertionError(f"{name}.{key} answered")
        try:
            references.softmax([1.0])
        except RuntimeError as e:
            assert "runs in the judge only" in str(e)
        else:
            raise AssertionError("softmax answered")
        assert withheld > 80, withheld
        print("withheld", withheld)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(code), *map(str, GRADERS)],
        capture_output=True,
        text=True,
        timeout=300,
        env=settings.quiet_env({"PATH": "/usr/bin:/bin"}),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "withheld" in result.stdout


# ------------------------------------------------------------- fixtures
def test_the_codec_keeps_what_the_references_take_and_give():
    from graders.lib import fixtures
    from graders.lib.judge import Mistake

    wrong = Mistake("no_scale", "x")
    value = (
        np.arange(6, dtype="float32").reshape(2, 3),
        [1, 2.5, float("nan"), None, "s", True],
        {("a", 1): np.int64(3), "b": (np.array([True]),)},
        wrong,
    )
    arrays: dict = {}
    tree = fixtures.to_tree(value, arrays)
    json.dumps(tree)  # plain JSON
    back = fixtures.from_tree(tree, arrays, {"no_scale": wrong})
    np.testing.assert_array_equal(back[0], value[0])
    assert back[0].dtype == np.float32
    assert back[1][:2] == [1, 2.5] and np.isnan(back[1][2])
    assert back[1][3:] == [None, "s", True]
    assert back[2][("a", 1)] == 3 and back[2]["b"][0].dtype == bool
    assert back[3] is wrong
    with pytest.raises(TypeError, match="cannot keep a function"):
        fixtures.to_tree(lambda: 0, {})


def test_a_key_names_the_reference_and_its_inputs_exactly():
    from graders.lib import fixtures

    x = np.linspace(0, 1, 6).reshape(2, 3)
    k = fixtures.key("m.ref_f", (x, 2), {"mistake": None})
    assert k == fixtures.key("m.ref_f", (x.copy(), 2), {"mistake": None})
    for other in [
        fixtures.key("m.ref_g", (x, 2), {"mistake": None}),
        fixtures.key("m.ref_f", (x.astype("float32"), 2), {"mistake": None}),
        fixtures.key("m.ref_f", (x.reshape(3, 2), 2), {"mistake": None}),
        fixtures.key("m.ref_f", (x + 1e-12, 2), {"mistake": None}),
        fixtures.key("m.ref_f", (x, 2.0), {"mistake": None}),
        fixtures.key("m.ref_f", (x, 2), {}),
    ]:
        assert other != k


FIXTURES = sorted((ROOT / "graders" / "fixtures").glob("test_l*.json"))


REPRODUCIBLE = {"rtol": 1e-8, "atol": 1e-8}
"""How near a float64 reference's output comes to its fixture on another
machine: NumPy's SIMD paths differ in the last bit from one CPU to
another, and centred differences divide that by their step (1e-6): up to
4e-9 measured between the recording machine and an AMD EPYC. A changed
reference moves its output far more; the checks judge at 1e-9 only
float64 forward passes, which reproduce to 1e-15."""
FLOAT32_REPRODUCIBLE = {"rtol": 1e-6, "atol": 1e-6}
"""The same for Keras's own float32 layers (`keras_*` references): their
rounding moves with the CPU's kernels and TensorFlow's build (4e-7
measured); the checks judge them at 1e-5 (`F32`)."""


def _same(a, b, tol: dict) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
            return False
        if a.dtype.kind == "f":
            return bool(np.allclose(a, b, equal_nan=True, **tol))
        return bool(np.array_equal(a, b))
    if isinstance(a, (list, tuple)):
        return (
            type(a) is type(b)
            and len(a) == len(b)
            and all(_same(x, y, tol) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], tol) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        return bool(np.isclose(a, b, equal_nan=True, **tol))
    return a == b


def test_every_grader_with_references_has_fixtures():
    """`m2t dev make-fixtures` was run for every grader with a reference
    (the student edition's graders judge with nothing else)."""
    with_references = {
        p.stem for p in GRADERS if any(_marked(n) for n in _functions(p))
    }
    have = {p.stem for p in FIXTURES}
    assert with_references - have == set(), "run m2t dev make-fixtures"


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_the_fixtures_are_what_the_references_give_now(path):
    """Each fixture's reference, called again on the inputs stored beside
    its output, gives that output: a reference changed since `m2t dev
    make-fixtures` fails here (and needs no grade to be found)."""
    import importlib

    from graders.lib import fixtures

    entries = json.loads(path.read_text())
    arrays = np.load(path.with_suffix(".npz"), allow_pickle=False)
    stale, checked = [], 0
    for k, entry in entries.items():
        if entry["inputs"] is None:
            continue
        module_name, _, qualname = entry["name"].rpartition(".")
        module = importlib.import_module(module_name)
        fn = getattr(module, qualname)
        mistakes = {m.name: m for m in getattr(module, "MISTAKES", ())}
        try:
            args, kwargs = fixtures.from_tree(entry["inputs"], arrays, mistakes)
        except TypeError:  # a closure in an architecture's spec: named only
            continue
        assert fixtures.key(entry["name"], tuple(args), kwargs) == k
        expected = fixtures.from_tree(entry["output"], arrays, mistakes)
        tol = (
            FLOAT32_REPRODUCIBLE
            if qualname.startswith("keras_")
            else (REPRODUCIBLE)
        )
        if not _same(fn(*args, **kwargs), expected, tol):
            stale.append(qualname)
        checked += 1
    assert checked > 0
    assert stale == [], (
        f"stale (run m2t dev make-fixtures): {sorted(set(stale))}"
    )
