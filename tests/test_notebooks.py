"""Every lesson notebook executes, top to bottom, in a real Jupyter kernel
against the reference solutions (`M2T_IMPL=solutions`, short heavy cells
with `M2T_SHORT=1`), draws its pictures, and its grader cell passes."""

import re

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t import settings
from m2t.student import notebooks

jupytext = pytest.importorskip("jupytext")
nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")

SOURCES = sorted(notebooks.FOLDER.glob("l[0-9][0-9]_*.py"))


def _lesson(path):
    return curriculum.find(path.stem)


def test_every_notebook_is_a_lesson_and_grades_it():
    assert SOURCES, "no notebooks/lNN_topic.py"
    for path in SOURCES:
        lesson = _lesson(path)  # the file name is a lesson module
        nb = jupytext.read(path)
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        assert f'notebooks.load("{lesson.id}")' in code, path.name
        assert f'notebooks.grade("{lesson.id}")' in code, path.name
        assert nb.metadata["kernelspec"]["name"] == "python3"


def test_m2t_notebook_writes_the_ipynb(m2t, tmp_path):
    lesson = _lesson(SOURCES[0])
    target = notebooks.source(lesson).with_suffix(".ipynb")
    existed = target.exists()
    result = m2t("notebook", lesson.id)
    try:
        assert result.returncode == 0, result.stderr
        written = jupytext.read(target)
        source = jupytext.read(notebooks.source(lesson))
        assert [c.source for c in written.cells] == [
            c.source for c in source.cells
        ]
    finally:
        if not existed:
            target.unlink(missing_ok=True)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem.split("_")[0])
def test_notebook_executes_against_the_solutions(path, monkeypatch):
    lesson = _lesson(path)
    if not (ROOT / "solutions" / f"{lesson.module}.py").exists():
        pytest.skip(f"no solutions/{lesson.module}.py")
    monkeypatch.setenv("M2T_IMPL", "solutions")
    monkeypatch.setenv("M2T_SHORT", "1")
    for name, value in settings.quiet_env({}).items():  # TensorFlow's logs
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    nb = jupytext.read(path)
    # what the kernel itself loaded (not this process's environment)
    nb.cells.append(
        nbformat.v4.new_code_cell(
            "from m2t.student import notebooks as _nb\n"
            f'print("kernel impl:", _nb.impl(), _nb.load("{lesson.id}").__file__)'
        )
    )
    client = nbclient.NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(ROOT)}},
    )
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    text = "".join(
        o.get("text", "") for o in outputs if o.get("output_type") == "stream"
    )
    assert any("image/png" in o.get("data", {}) for o in outputs), (
        f"{path.name} drew no picture"
    )
    assert "not started yet" not in text
    last = nb.cells[-2]
    graded = "".join(o.get("text", "") for o in last.outputs)
    assert f"{lesson.tag} " in graded and "passed" in graded, graded
    loaded = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    want = f"kernel impl: solutions {ROOT / 'solutions' / lesson.module}.py"
    assert loaded.strip() == want


NOISE = re.compile(
    r"cuda|cuInit|cuDNN|cuFFT|cuBLAS|oneDNN|TF-TRT|computation placer|"
    r"absl::InitializeLog|This TensorFlow binary is optimized",
    re.IGNORECASE,
)
"""TensorFlow's start-up lines on a machine with or without a GPU."""


def test_a_notebook_runs_headless_without_tensorflows_start_up_lines(
    monkeypatch,
):
    """`m2t notebook 01 --execute`'s path: l01's notebook in a real kernel
    (short cells), its outputs free of TensorFlow's C++ start-up lines
    although this process sets no log level for the kernel."""
    lesson = curriculum.find("01")
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    monkeypatch.setenv("M2T_IMPL", "solutions")
    monkeypatch.setenv("M2T_SHORT", "1")
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    target = notebooks.source(lesson).with_suffix(".ipynb")
    existed = target.exists()
    try:
        nb = notebooks.execute(lesson)
        assert target.exists()
    finally:
        if not existed:
            target.unlink(missing_ok=True)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    text = "".join(
        o.get("text", "") + "".join(o.get("traceback", [])) for o in outputs
    )
    assert not NOISE.search(text), NOISE.search(text)[0] + "\n" + text[:3000]
    graded = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert f"{lesson.tag} " in graded and "passed" in graded, graded
