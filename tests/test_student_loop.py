"""The student loop as a student meets it: `m2t hint`, `watch`, `progress`,
`reset`, in a scratch copy of the repository (its own lessons/ and .m2t/),
through real subprocesses and real file saves."""

import ast
import itertools
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from m2t import ROOT
from m2t import curriculum
from m2t import settings
from m2t.authoring import make_lessons
from m2t.student import hints

COPIED = ("m2t", "graders", "lessons", "solutions", "m2t_data", "notebooks")
ENV = settings.quiet_env(
    {**os.environ, "PYTHONHASHSEED": "0", "M2T_NO_CLEAR": "1"}
)
L16 = curriculum.find("16")


@pytest.fixture
def repo(tmp_path):
    """A scratch copy of the repository: `python -m m2t.cli` run there
    imports its m2t, so ROOT, lessons/ and .m2t/ are the copy's."""
    ignore = shutil.ignore_patterns("__pycache__", "*.ipynb")
    for name in COPIED:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, tmp_path / name, ignore=ignore)
    for name in ("curriculum.toml", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    skeleton = make_lessons.cut(
        (ROOT / "solutions" / f"{L16.module}.py").read_text(),
        f"{L16.module}.py",
    )
    (tmp_path / "lessons" / f"{L16.module}.py").write_text(skeleton)
    return tmp_path


def python_in(repo, *args, stdin="", timeout=900):
    """`python ARGS` in the scratch copy `repo`, as a student runs it."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=repo,
        env=ENV,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def m2t_in(repo, *args, stdin="", timeout=900):
    return python_in(repo, "-m", "m2t", *args, stdin=stdin, timeout=timeout)


# ------------------------------------------------------------------ hints
def test_hint_starts_fast_without_tensorflow(repo):
    code = (
        "import sys; from m2t.cli import main; main(['hint', '16']); "
        "assert 'tensorflow' not in sys.modules, 'hint imported TensorFlow'"
    )
    result = python_in(repo, "-c", code, timeout=120)
    assert result.returncode == 0, result.stderr


MIN_NODES = 6
"""An expression of at least this many AST nodes (names, attributes, calls,
constants, ...; not operators or contexts, and `-1` is one constant) is
specific enough to be the answer: `ops.matmul(inputs, self.kernel)` has 6,
`hidden[:, -1]` 5."""
_NOT_COUNTED = (
    ast.expr_context,
    ast.operator,
    ast.unaryop,
    ast.cmpop,
    ast.boolop,
)


def _size(node):
    return sum(
        not isinstance(n, _NOT_COUNTED)
        and not (
            isinstance(n, ast.UnaryOp) and isinstance(n.operand, ast.Constant)
        )
        for n in ast.walk(node)
    )


def _normal(text):
    """Code or prose without whitespace, with one kind of quote."""
    return re.sub(r"\s+", "", text).replace('"', "'")


def _solution_expressions(path):
    """Every expression of MIN_NODES or more inside the solution regions of
    `path`, normalised (`ast.unparse`, then `_normal`)."""
    for region in make_lessons.regions(path.read_text(), path.name):
        for node in ast.walk(ast.parse(region.code)):
            if isinstance(node, ast.expr) and _size(node) >= MIN_NODES:
                yield _normal(ast.unparse(node))


@pytest.mark.parametrize(
    "lesson",
    [x for x in curriculum.lessons() if hints.ladder(x.module)],
    ids=lambda x: x.tag,
)
def test_hints_never_give_the_solution_away(lesson):
    solution = ROOT / "solutions" / f"{lesson.module}.py"
    if not solution.exists():
        pytest.skip(f"no solutions/{lesson.module}.py yet")
    text = _normal(
        " ".join(" ".join(t.rungs) for t in hints.ladder(lesson.module))
    )
    given = sorted(e for e in set(_solution_expressions(solution)) if e in text)
    assert not given, f"{lesson.tag} hints hold solution code: {given}"


# --------------------------------------------------------------- progress
def _state(repo, **lessons):
    path = repo / ".m2t" / "state.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(lessons))


def _graded(status="passed", passed=3, checks=3, score=5.0, max_score=5.0):
    """One lesson's entry in .m2t/state.json, graded after its files were
    written."""
    return dict(
        status=status,
        passed=passed,
        checks=checks,
        score=score,
        max_score=max_score,
        time=time.time() + 60,
    )


def test_progress_counts_and_list_agree(repo):
    graded = [
        x
        for x in curriculum.graded()
        if (ROOT / "lessons" / f"{x.module}.py").exists()
    ]
    done, going = graded[0], graded[1]
    _state(
        repo,
        **{
            done.module: _graded(),
            going.module: _graded("failed", 1, 4, 2.0, 6.0),
        },
    )
    result = m2t_in(repo, "progress")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    first = out.splitlines()[0]
    assert first.startswith("progress [#")
    assert f"1/{len(curriculum.lessons())} done, 1 in progress" in first
    assert "points   7/11" in out
    rows = {
        line.split()[0]: line for line in out.splitlines() if line[:1] == "l"
    }
    assert "done" in rows[done.tag] and "3/3" in rows[done.tag]
    assert "in progress" in rows[going.tag] and "2/6" in rows[going.tag]
    listed = m2t_in(repo, "list").stdout
    status = {line.split()[0]: line for line in listed.splitlines()}
    assert status[done.tag].endswith("done (5/5)")  # not where you are
    assert "in progress (1/4 checks)" in status[going.tag]


# ------------------------------------------------------ list and progress
def test_list_says_where_you_are(repo):
    def here(listed):
        return [
            x.split()[0] for x in listed.splitlines() if "you are here" in x
        ]

    first, second = curriculum.graded()[:2]
    assert here(m2t_in(repo, "list").stdout) == [first.tag]
    _state(repo, **{first.module: _graded()})
    assert here(m2t_in(repo, "list").stdout) == [second.tag]


def test_progress_on_a_fresh_clone_says_nothing_is_graded_yet(repo):
    result = m2t_in(repo, "progress")
    assert result.returncode == 0, result.stderr
    points = next(x for x in result.stdout.splitlines() if x[:6] == "points")
    assert "0/0" not in points
    assert "none yet" in points and "m2t watch" in points, points


@pytest.mark.parametrize(
    "args", [["hint", "16"], ["list"], ["progress"]], ids=" ".join
)
def test_a_closed_pipe_ends_quietly(repo, args):
    """`m2t hint 16 | head`: the reader goes before m2t writes."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "m2t", *args],
        cwd=repo,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc.stdout.close()  # before the interpreter has even started
    _, err = proc.communicate(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert proc.returncode == 141, err  # as if killed by SIGPIPE


def test_notebook_without_jupytext_names_the_extra(repo):
    code = (
        "import sys; sys.modules['jupytext'] = None  # not installed\n"
        "from m2t.cli import main; sys.exit(main(['notebook', '16']))"
    )
    result = python_in(repo, "-c", code, timeout=120)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert 'pip install -e ".[notebooks]"' in result.stderr, result.stderr
    assert not (repo / "notebooks" / f"{L16.module}.ipynb").exists()


# ------------------------------------------------------------------ reset
def test_reset_asks_first_and_keeps_a_backup(repo):
    path = repo / "lessons" / f"{L16.module}.py"
    skeleton = path.read_text()
    mine = skeleton.replace("raise NotImplementedError", "return 0  # mine", 1)
    path.write_text(mine)
    refused = m2t_in(repo, "reset", "16", stdin="n\n")
    assert refused.returncode == 1 and "nothing changed" in refused.stdout
    assert path.read_text() == mine
    agreed = m2t_in(repo, "reset", "16", stdin="y\n")
    assert agreed.returncode == 0, agreed.stderr
    assert path.read_text() == skeleton
    (backup,) = (repo / ".m2t" / "backups").glob(f"{L16.module}-*.py")
    assert backup.read_text() == mine
    again = m2t_in(repo, "reset", "16", "--yes")
    assert "already the skeleton" in again.stdout


def test_reset_in_the_student_edition_uses_the_pristine_copy(repo):
    from m2t.student import reset

    reset.write_skeletons(repo / "solutions", repo / ".m2t" / "skeletons")
    shutil.rmtree(repo / "solutions")
    path = repo / "lessons" / f"{L16.module}.py"
    skeleton = path.read_text()
    path.write_text(skeleton + "\nx = 1\n")
    result = m2t_in(repo, "reset", "16", "--yes")
    assert result.returncode == 0, result.stderr
    assert ".m2t/skeletons/" in result.stdout
    assert path.read_text() == skeleton
    (repo / ".m2t" / "skeletons" / f"{L16.module}.py").unlink()
    missing = m2t_in(repo, "reset", "16", "--yes")
    assert missing.returncode == 2 and "no skeleton" in missing.stderr


# ------------------------------------------------------------------ watch
@pytest.mark.parametrize("events", [True, False], ids=["events", "polling"])
def test_changes_notice_a_save(tmp_path, events):
    from m2t.student.watch import Changes

    path = tmp_path / "l16_attention_scoring.py"
    path.write_text("x = 1\n")
    other = tmp_path / "l10_gru.py"
    other.write_text("y = 1\n")
    changes = Changes(tmp_path, interval=0.05, events=events)
    try:
        if events:
            pytest.importorskip("watchdog")
            assert changes.using_events
        assert changes.wait(timeout=0.3) == []
        saver = threading.Timer(0.2, path.write_text, ("x = 2\n",))
        saver.start()
        start = time.monotonic()
        assert changes.wait(timeout=10) == [path]
        assert time.monotonic() - start < 5
        assert not changes.pending()
    finally:
        changes.close()


class _Reader:
    def __init__(self, stream):
        self.lines = queue.Queue()
        self.seen = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for line in stream:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def until(self, text, timeout=600):
        deadline = time.monotonic() + timeout
        while True:
            line = self.lines.get(timeout=max(deadline - time.monotonic(), 1))
            if line is None:
                raise AssertionError(
                    f"watch ended before {text!r}:\n" + "\n".join(self.seen)
                )
            self.seen.append(line)
            if text in line:
                return line


def m2t_started(repo, *args):
    """`python -m m2t ARGS` started in the scratch copy `repo`: the process
    and a `_Reader` of its output."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "m2t", *args],
        cwd=repo,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, _Reader(proc.stdout)


def test_scripted_session_watch_pass_move_on_progress_reset(repo):
    """Start on the skeleton, save the solution, see it pass and the watch
    move on; then progress shows it done and reset puts it back."""
    path = repo / "lessons" / f"{L16.module}.py"
    skeleton = path.read_text()
    proc, out = m2t_started(repo, "watch", "16", "--max-grades", "3")
    try:
        out.until("== l16 Attention scoring functions")
        assert "not started (TODO at lessons/l16_attention_scoring.py:" in (
            out.until("[todo]")
        )
        out.until("Watching")
        solution = (ROOT / "solutions" / f"{L16.module}.py").read_text()
        path.write_text(solution)  # the student saves
        out.until("== l16 Attention scoring functions")
        passed = out.until("ok  l16 passes")
        assert re.search(r" (\d+)/\1 checks, ([\d.]+)/\2 points", passed)
        following = out.until("next: l")
        tag = following.split()[1]
        out.until(f"== {tag} ")
        assert proc.wait(timeout=600) == 0, proc.stderr.read()
    finally:
        proc.kill()
    transcript = "\n".join(out.seen)
    assert "Traceback" not in transcript
    noise = proc.stderr.read()  # TensorFlow's C++ start-up lines: hidden
    assert "absl" not in noise and "cuda" not in noise, noise

    progress = m2t_in(repo, "progress").stdout
    row = next(x for x in progress.splitlines() if x.startswith("l16 "))
    assert " done " in row, progress
    listed = m2t_in(repo, "list").stdout
    assert "done (" in next(x for x in listed.splitlines() if x[:4] == "l16 ")

    reset = m2t_in(repo, "reset", "16", "--yes")
    assert reset.returncode == 0, reset.stderr
    assert path.read_text() == skeleton
    (backup,) = (repo / ".m2t" / "backups").glob(f"{L16.module}-*.py")
    assert backup.read_text() == solution
    row = next(
        x
        for x in m2t_in(repo, "progress").stdout.splitlines()
        if x[:4] == "l16 "
    )
    assert "not started" in row


def test_watch_starts_at_the_first_unfinished_lesson_and_polls(repo):
    """No lesson named: watch starts where you are (every lesson before
    l16 in the course passes, and the one after it); `--poll` sees the save
    without file events; a pass moves on to the next lesson not done."""
    passed = _graded("passed", 1, 1, 1.0, 1.0)
    order = list(curriculum.graded())  # the course's order
    before = order[: order.index(L16)]
    skipped, following = order[order.index(L16) + 1 : order.index(L16) + 3]
    _state(repo, **{x.module: passed for x in [*before, skipped]})
    proc, out = m2t_started(repo, "watch", "--poll", "--max-grades", "2")
    try:
        assert out.until("== l").startswith(f"== {L16.tag} ")
        assert "(polling every 0.25 s;" in out.until("Watching lessons/")
        solution = (ROOT / "solutions" / L16.filename).read_text()
        (repo / "lessons" / L16.filename).write_text(solution)
        out.until(f"ok  {L16.tag} passes")
        assert out.until("next: ").startswith(f"next: {following.tag} ")
        assert proc.wait(timeout=600) == 0, proc.stderr.read()
    finally:
        proc.kill()


def test_pytest_grades_lessons_solutions_or_a_folder(repo, tmp_path):
    """The README's `pytest graders/test_l16_attention_scoring.py`, with
    `--impl`: lessons/ by default, solutions, or a folder."""
    from m2t.authoring import mutants

    grader = f"graders/test_{L16.module}.py"

    def pytest_in(*args):
        return subprocess.run(
            [sys.executable, "-m", "pytest", grader, "-q", "-p", "no:xdist"]
            + list(args),
            cwd=repo,
            env=ENV,
            capture_output=True,
            text=True,
            timeout=900,
        )

    skeleton = pytest_in()
    assert skeleton.returncode == 1, skeleton.stdout
    assert "l16 masked_softmax: not started (TODO at lessons/" in (
        skeleton.stdout
    ), skeleton.stdout
    assert " passed" not in skeleton.stdout.splitlines()[-1]
    solution = pytest_in("--impl", "solutions")
    assert solution.returncode == 0, solution.stdout
    assert " failed" not in solution.stdout.splitlines()[-1]
    name, edits = next(iter(mutants.catalogue(L16.module).items()))
    text = (ROOT / "solutions" / L16.filename).read_text()
    (tmp_path / L16.filename).write_text(mutants.mutate(text, edits, name))
    folder = pytest_in(f"--impl={tmp_path}")
    assert folder.returncode == 1, folder.stdout
    assert f"Likely mistake [{name}]" in folder.stdout, folder.stdout


def test_in_process_regrades_see_each_save_and_agree(tmp_path):
    """What `m2t watch` relies on: pytest run again in one process grades
    the file as saved now, and the same file grades the same way."""
    from m2t.authoring import mutants
    from m2t.grading import runner as grading

    solution = (ROOT / "solutions" / f"{L16.module}.py").read_text()
    skeleton = make_lessons.cut(solution, f"{L16.module}.py")
    name, edits = next(iter(mutants.catalogue(L16.module).items()))
    path = tmp_path / f"{L16.module}.py"
    path.write_text(skeleton)
    (untouched,) = grading.grade([L16], impl=str(tmp_path))
    assert untouched.status == "not_started"
    path.write_text(mutants.mutate(solution, edits, name))
    (wrong,) = grading.grade([L16], impl=str(tmp_path))
    assert wrong.status == "failed"
    assert f"Likely mistake [{name}]" in "".join(
        c.message for c in wrong.checks
    )
    path.write_text(skeleton + "\n# saved again\n")
    (again,) = grading.grade([L16], impl=str(tmp_path))
    assert [(c.name, c.status, c.message) for c in again.checks] == [
        (c.name, c.status, c.message) for c in untouched.checks
    ]


# --------------------------------------------------------------- messages
STUDENT = """\
import keras
import numpy as np
from keras import ops


class NumPyInside(keras.layers.Layer):
    def call(self, x):
        return np.tanh(x)  # NumPy on a tensor


class WrongShape(keras.layers.Layer):
    def call(self, x):
        return x + ops.ones((5,))  # (B, 3, 4) + (5,)


def todo(x):
    # TODO(l99): compute it
    raise NotImplementedError("l99: todo")
"""


@pytest.fixture
def student(tmp_path):
    """A student's module in its own folder, imported the way the probes
    import one, with the probes' TensorFlow settings."""
    from m2t.grading import impl as _impl
    from m2t.grading import probe

    probe.configure_tensorflow()
    (tmp_path / "l99_student.py").write_text(STUDENT)
    return _impl.load("l99_student", tmp_path), tmp_path


def _line(text):
    return 1 + STUDENT.splitlines().index(
        next(x for x in STUDENT.splitlines() if text in x)
    )


def _explain(call, folder):
    from m2t.grading.probe import explain_exception

    with pytest.raises(Exception) as info:
        call()
    return explain_exception(info.value, "l99", folder)


def test_an_untouched_todo_is_not_started(student):
    module, folder = student
    failure = _explain(lambda: module.todo(1), folder)
    assert failure.status == "not_started"
    where = f"l99_student.py:{_line('# TODO(l99)')})"
    assert str(failure).startswith("l99 todo: not started (TODO at ")
    assert str(failure).endswith(where), failure


def test_numpy_on_a_symbolic_tensor_is_an_error_not_not_started(student):
    import keras

    module, folder = student
    failure = _explain(
        lambda: module.NumPyInside()(keras.Input((3, 4))), folder
    )
    assert failure.status == "error", failure
    text = str(failure)
    assert "not started" not in text
    assert f"l99_student.py:{_line('np.tanh')} (in call)" in text, text
    assert "Cannot convert a symbolic tf.Tensor" in text, text
    assert "use keras.ops, not NumPy" in text, text


def test_keras_output_shape_error_keeps_its_cause(student):
    import keras

    module, folder = student
    failure = _explain(lambda: module.WrongShape()(keras.Input((3, 4))), folder)
    text = str(failure)
    assert "(calling WrongShape on keras.Input)" in text, text
    assert "Error encountered" not in text and "compute_output_spec" not in text
    assert f"l99_student.py:{_line('ops.ones')} (in call)" in text, text
    # the cause, with its shapes: what Keras put after "Error encountered:"
    assert "Dimensions must be equal, but are 4 and 5" in text, text
    assert "[?,3,4], [5]" in text, text


def test_eager_shape_error_keeps_its_shapes_without_tensorflow_noise(student):
    module, folder = student
    x = np.zeros((2, 3, 4), "float32")
    failure = _explain(lambda: module.WrongShape()(x), folder)
    text = str(failure)
    assert "Incompatible shapes: [2,3,4] vs. [5]" in text, text
    assert "{{function_node" not in text and not text.endswith("name:")


def test_a_float32_result_in_a_float64_check_names_the_dtype():
    import keras

    from graders.lib.probes import tape_gradient
    from m2t.grading.probe import ProbeFailure

    x = np.linspace(-1, 1, 6).reshape(2, 3)
    grad = tape_gradient(lambda v: keras.ops.sum(v**3), x)
    np.testing.assert_allclose(grad, 3 * x**2, rtol=1e-12)

    def in_float32(v):
        return keras.ops.sum(keras.ops.cast(v, "float32") ** 3)

    with pytest.raises(ProbeFailure) as info:
        tape_gradient(in_float32, x)
    assert info.value.status == "error"
    assert "float32 result" in str(info.value)
    assert "dtype='float64'" in str(info.value)


# ----------------------------------------------------------------- readmes
STUDENT_COMMANDS = ("watch", "hint", "grade", "progress", "list", "reset")


@pytest.mark.parametrize(
    "readme",
    [
        ROOT / "README.md",
        ROOT / "m2t" / "authoring" / "templates" / "README.student.md",
    ],
    ids=["README", "student edition"],
)
def test_readmes_teach_the_student_loop_with_real_commands(readme):
    """Each README's student commands exist, with the options it shows; the
    student edition's names the whole loop and the notebooks extra."""
    from m2t.cli import build_parser

    text = readme.read_text()
    commands = re.findall(r"^m2t ([a-z-]+)([^#\n]*)", text, re.M)
    assert {name for name, _ in commands} >= set(STUDENT_COMMANDS), commands
    parser = build_parser()
    for name, rest in commands:
        args = [name, *rest.split()]
        try:
            parser.parse_args(args)
        except SystemExit:
            pytest.fail(f"{readme.name}: `m2t {' '.join(args)}` does not parse")
    assert 'pip install -e ".[notebooks]"' in text and "m2t notebook 16" in text


# ------------------------------------------------------------------ order
def test_quick_checks_run_first_and_the_report_keeps_the_file_order(
    tmp_path, monkeypatch
):
    """The runner runs a lesson's checks that never passed first, then the
    others by their seconds when they last passed, a test function's later
    cases weighing SECOND_CASE_WEIGHT times theirs (so the quickest of every
    function goes before the second of any as costly, but a cheap second
    case before a slow first one: the first failure shows sooner in watch),
    and reports them in the file's order."""
    from m2t import settings
    from m2t.grading import order
    from m2t.grading import runner as grading

    costs = tmp_path / "check-costs.json"
    monkeypatch.setattr(settings, "CHECK_COSTS", costs)
    folder = tmp_path / "impl"
    folder.mkdir()
    path = folder / L16.filename
    solution = (ROOT / "solutions" / L16.filename).read_text()
    path.write_text(make_lessons.cut(solution, L16.filename))
    ran = []

    def grade():
        ran.clear()
        (result,) = grading.grade(
            [L16], impl=str(folder), on_check=lambda c: ran.append(c.nodeid)
        )
        return [c.nodeid for c in result.checks]

    in_file = grade()
    assert ran == in_file  # nothing passed yet: the file's order
    assert grading.load_costs() == {}  # a failing check's time says nothing
    path.write_text(solution)
    assert grade() == in_file
    passed = grading.load_costs()
    assert set(passed) == set(in_file) and all(t > 0 for t in passed.values())
    last_time = {nodeid: 1.0 for nodeid in in_file}
    last_time[in_file[-1]] = 0.01  # the file's last check was the quickest
    del last_time[in_file[-2]]  # and this one never passed
    costs.write_text(json.dumps(last_time))
    assert grade() == in_file
    assert ran[:2] == [in_file[-2], in_file[-1]]
    # then the quickest of every other test function, then the rest
    function = {nodeid: nodeid.partition("[")[0] for nodeid in in_file}
    seen, firsts = {function[in_file[-1]]}, []
    for nodeid in in_file[:-2]:
        if function[nodeid] not in seen:
            seen.add(function[nodeid])
            firsts.append(nodeid)
    assert len(firsts) < len(in_file) - 2  # l16 has parametrized checks
    assert ran[2:] == firsts + [n for n in in_file[:-2] if n not in firsts]
    # a cheap second case goes before the slow first case of another function
    first, second = next(
        (a, b)
        for a, b in itertools.pairwise(in_file)
        if function[a] == function[b] and a != in_file[-1] and b != in_file[-2]
    )
    last_time[first], last_time[second] = 0.1, 0.2
    costs.write_text(json.dumps(last_time))
    assert grade() == in_file
    assert ran[1:4] == [in_file[-1], first, second]
    assert 0.2 * order.SECOND_CASE_WEIGHT < 1.0
