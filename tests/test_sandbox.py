"""Grading untrusted submissions: the grade is right and the grader survives
whatever the student's code does (issue: isolation, limits, tampering)."""

import json
import shutil
import time

import numpy as np
import pytest

from m2t import ROOT
from m2t.grading.frames import decode
from m2t.grading.frames import encode
from m2t.grading.sandbox import stage
from m2t.grading.staging import refusals

SOLUTION = (ROOT / "solutions" / "l16_attention_scoring.py").read_text()

ATTACKS = """
import json as _json
import os as _os
import signal as _signal

STOLEN = None
try:  # read the instructor's solution (and so its keys' folder)
    STOLEN = open("{root}/solutions/l16_attention_scoring.py").read()
except OSError:
    pass
try:  # write a perfect score where the grader writes its report
    with open("{report}", "w") as _f:
        _json.dump({{"score": 999, "tests": []}}, _f)
except OSError:
    pass
try:  # kill the grader
    _os.kill(_os.getppid(), _signal.SIGKILL)
except OSError:
    pass
import numpy as _np
import numpy.testing as _npt
import pytest as _pytest

_npt.assert_allclose = lambda *a, **k: None
_np.allclose = lambda *a, **k: True
_np.isclose = lambda a, b, **k: _np.ones(_np.shape(a), bool)
_pytest.fail = lambda *a, **k: None


class AlwaysEqual:
    def __eq__(self, other):
        return True

    shape = (2, 3, 5)
"""


def _submission(root, report, hostile: bool) -> str:
    """l16 with a wrong scale, plus misbehaviour in given places: real
    attacks when `hostile`, a plain RuntimeError in the benign twin."""

    def act(attack: str) -> str:
        return attack if hostile else 'raise RuntimeError("twin")'

    text = SOLUTION.replace(
        "/ ops.sqrt(d)",
        "",  # a wrong answer the patched judge must still see
    )
    text = text.replace(
        "    if valid_lens is None:\n        return ops.softmax(X, axis=-1)\n    positions",
        "    if valid_lens is None:\n        "
        + act("return AlwaysEqual()")
        + "\n    positions",
    )
    text = text.replace(
        "        d = ops.cast(ops.shape(queries)[-1], queries.dtype)",
        "        if queries.shape[1] == 1:\n            "
        + act("import numpy; numpy.ones(int(50e9 / 8))")
        + "\n        d = ops.cast(ops.shape(queries)[-1], queries.dtype)",
    )
    text = text.replace(
        "        q = self.W_q(queries)  # (B, T, H)",
        "        if training:\n            "
        + act("while True: pass")
        + "\n        if queries.dtype == 'float64':\n            "
        + act("_os._exit(0)")
        + "\n        if self.dropout == 0.1:\n            "
        + act("import sys; sys.exit(0)")
        + "\n        q = self.W_q(queries)  # (B, T, H)",
    )
    if hostile:
        head, _, tail = text.partition("\n\n\ndef mask_fill_value")
        text = (
            head
            + ATTACKS.format(root=root, report=report)
            + "\n\ndef mask_fill_value"
            + tail
            + "\n\nif STOLEN:\n    exec(compile(STOLEN, 'stolen', 'exec'))\n"
        )
    return text


def _tamper(folder):
    """Files a student might add to change the grading: all ignored."""
    (folder / "graders").mkdir()
    (folder / "graders" / "test_l16_attention_scoring.py").write_text(
        "def test_everything():\n    pass\n"
    )
    (folder / "test_extra.py").write_text("def test_free_points():\n    pass\n")
    (folder / "conftest.py").write_text(
        "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    out = yield\n    out.get_result().outcome = 'passed'\n"
    )
    (folder / "pytest.ini").write_text("[pytest]\naddopts = -p no:terminal\n")


def _statuses(report):
    data = json.loads(report.read_text())
    return {t["name"]: (t["status"], t["output"]) for t in data["tests"]}, data


def test_codec_round_trip_never_pickles():
    value = {
        "a": np.arange(6, dtype="float32").reshape(2, 3),
        "b": (1, 2.5, None, "x", [True, np.zeros(0, "int32")]),
        "c": np.int32(7),
    }
    back = decode(encode(value))
    np.testing.assert_array_equal(back["a"], value["a"])
    assert back["b"][:4] == (1, 2.5, None, "x") and back["b"][4][0] is True
    assert back["c"] == 7 and type(back["c"]) is int
    with pytest.raises(TypeError):
        encode({"x": object()})
    with pytest.raises(ValueError):  # an object array would need pickle
        decode(encode({"x": np.array([object()], dtype=object)}))


def test_the_log_tail_reads_only_the_end_of_a_huge_log(tmp_path):
    """A worker log made sparse to 1 GiB (when the file-size limit is not
    there to stop it) costs the judge one small read."""
    import tracemalloc

    from m2t.grading.worker import log_tail

    log = tmp_path / "worker.log"
    with open(log, "wb") as f:
        f.truncate(1 << 30)
        f.seek(1 << 30)
        f.write(b"\nthe last line\n")
    tracemalloc.start()
    try:
        assert log_tail(log) == "the last line"
        assert tracemalloc.get_traced_memory()[1] < 8 << 20
    finally:
        tracemalloc.stop()


def test_staging_copies_only_graded_files(tmp_path):
    sub = tmp_path / "sub"
    (sub / "lessons").mkdir(parents=True)
    (sub / "lessons" / "l16_attention_scoring.py").write_text("x = 1\n")
    (sub / "lessons" / "answers.toml").write_text("")
    (sub / "lessons" / "l99_unknown.py").write_text("x = 1\n")
    (sub / "lessons" / "conftest.py").write_text("x = 1\n")
    (sub / "lessons" / "l01_mlp.py").write_text("#" * (1 << 21))  # too big
    out = stage(sub, ["l16_attention_scoring", "l01_mlp"], tmp_path / "out")
    assert sorted(p.name for p in out.iterdir()) == [
        "answers.toml",
        "l16_attention_scoring.py",
        "missing.json",
        "refused.json",
    ]
    assert "over the" in refusals(out)["l01_mlp.py"]


def test_hostile_submission_gets_the_right_grade_and_the_grader_survives(
    m2t, tmp_path
):
    twin, hostile = tmp_path / "twin", tmp_path / "hostile"
    twin.mkdir()
    hostile.mkdir()
    report = tmp_path / "results.json"
    (twin / "l16_attention_scoring.py").write_text(
        _submission(ROOT, report, hostile=False)
    )
    beside = tmp_path / "beside.json"  # the report is rewritten at the end
    (hostile / "l16_attention_scoring.py").write_text(
        _submission(ROOT, beside, hostile=True)
    )
    _tamper(hostile)

    expected = m2t(
        "grade",
        "16",
        "--unconfined",
        "--impl",
        str(twin),
        "--report",
        str(tmp_path / "twin.json"),
    )
    assert expected.returncode == 1
    want, _ = _statuses(tmp_path / "twin.json")
    assert 0 < sum(s == "passed" for s, _ in want.values()) < len(want)

    start = time.monotonic()
    result = m2t(
        "grade",
        "16",
        "--submission",
        str(hostile),
        "--report",
        str(report),
        "--timeout",
        "5",
    )
    seconds = time.monotonic() - start
    assert result.returncode == 1, result.stdout + result.stderr  # alive
    got, data = _statuses(report)
    assert not beside.exists()  # it wrote only its own temporary folder
    assert data["output"].startswith(
        "sandbox: namespaces, unprivileged, landlock, seccomp in force"
    )
    assert {k: s for k, (s, _) in got.items()} == {
        k: s for k, (s, _) in want.items()
    }
    out = {k.split(" ", 1)[1]: o for k, (_, o) in got.items()}
    assert (
        "timed out after 5 s" in out["test_dropout_only_in_training[additive]"]
    )
    assert (
        "exited with code 0"
        in out["test_gradient_matches_centred_differences[additive]"]
    )
    assert "SystemExit" in out["test_keras_layer_contract[additive]"]
    assert (
        "MemoryError"
        in out["test_identical_keys_average_the_valid_values[dot]"]
    )
    assert "expected an array" in out["test_masked_softmax_values[no_mask]"]
    assert (
        "Likely mistake [no_scale]"
        in out["test_dot_product_attention_matches_reference[valid_lens_B]"]
    )
    assert seconds < 120


def test_correct_submission_is_graded_the_same_every_time(m2t, tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    shutil.copy(ROOT / "solutions" / "l16_attention_scoring.py", sub)
    runs = []
    for i in range(2):
        report = tmp_path / f"r{i}.json"
        result = m2t(
            "grade", "16", "--submission", str(sub), "--report", str(report)
        )
        assert result.returncode == 0, result.stdout + result.stderr
        got, data = _statuses(report)
        assert data["score"] == data["max_score"] > 0
        runs.append(got)
    assert runs[0] == runs[1]


@pytest.mark.parametrize(
    "layout, found_at",
    [
        ("m2t-2026/lessons", "m2t-2026/lessons/"),
        ("m2t-2026", "m2t-2026/"),
        ("lessons", "lessons/"),
        ("", ""),
    ],
    ids=["wrapped-edition", "wrapped-files", "edition", "files"],
)
def test_staging_finds_an_upload_wrapped_in_one_folder(
    tmp_path, layout, found_at
):
    """Gradescope's upload of a folder (`submission/m2t-2026/lessons/...`,
    with the archiver's __MACOSX beside it) is staged as the folder itself;
    a file not there is recorded with where it was expected in the upload,
    never a temporary folder."""
    from m2t.grading.staging import missing

    sub = tmp_path / "submission"
    (sub / layout).mkdir(parents=True, exist_ok=True)
    (sub / layout / "l16_attention_scoring.py").write_text("x = 1\n")
    (sub / "__MACOSX").mkdir()
    out = stage(
        sub,
        ["l16_attention_scoring", "l15_attention_pooling"],
        tmp_path / "out",
    )
    assert (out / "l16_attention_scoring.py").read_text() == "x = 1\n"
    where = missing(out)["l15_attention_pooling.py"]
    if found_at:
        assert where == f"{found_at}l15_attention_pooling.py"
    else:
        assert where == (
            "l15_attention_pooling.py (or lessons/l15_attention_pooling.py)"
        )
    assert "l16_attention_scoring.py" not in missing(out)


def test_staging_follows_no_wrapper_that_is_a_link(tmp_path):
    """A submission whose only entry is a link to a folder (the
    instructor's solutions) is refused, never followed."""
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    (solutions / "l16_attention_scoring.py").write_text("THE SOLUTION\n")
    sub = tmp_path / "submission"
    sub.mkdir()
    (sub / "m2t-2026").symlink_to(solutions)
    out = stage(sub, ["l16_attention_scoring"], tmp_path / "out")
    assert not (out / "l16_attention_scoring.py").exists()
    assert "symbolic link" in refusals(out)["l16_attention_scoring.py"]
