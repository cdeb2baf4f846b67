"""The student edition: what it holds, what the scanner refuses, and that a
submission graded with --submission scores as the edition grades itself."""

import json
import shutil

import pytest

from m2t import ROOT
from m2t.authoring import release


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "edition"
    assert release.build(out) == []
    return out


def test_edition_holds_the_student_files_and_nothing_of_the_instructor(edition):
    files = {
        p.relative_to(edition).as_posix()
        for p in edition.rglob("*")
        if p.is_file()
    }
    assert "lessons/l16_attention_scoring.py" in files
    assert "graders/test_l16_attention_scoring.py" in files
    assert ".github/workflows/grade.yml" in files
    assert (
        "m2t grade --submission ."
        in (edition / ".github/workflows/grade.yml").read_text()
    )
    assert "student edition" in (edition / "README.md").read_text()
    skeleton = (edition / "lessons" / "l16_attention_scoring.py").read_text()
    assert (
        edition / ".m2t" / "skeletons" / "l16_attention_scoring.py"
    ).read_text() == skeleton
    assert "!/.m2t/skeletons/" in (edition / ".gitignore").read_text()
    assert "m2t/student/reset.py" in files
    for name in files:
        assert not name.startswith(
            ("solutions/", "tests/", ".ci/", "benchmarks/", "m2t/authoring/")
        )
        assert "__pycache__" not in name
    assert release.scan(edition) == []


def test_release_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "x").write_text("")
    with pytest.raises(ValueError, match="not empty"):
        release.build(tmp_path)


def test_scanner_finds_a_solution_body_even_reformatted(edition, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(edition, copy)
    lesson = copy / "lessons" / "l16_attention_scoring.py"
    # the student region of DotProductAttention.call, reindented, other comments
    body = [
        "d = ops.cast(ops.shape(queries)[-1], queries.dtype)  # size",
        "scores = ops.matmul(queries, ops.swapaxes(keys, -1, -2)) / ops.sqrt(d)",
        "weights = masked_softmax(scores, valid_lens)",
        "dropped = self.attention_dropout(weights, training=training)",
        "output = ops.matmul(dropped, values)",
    ]
    lesson.write_text(
        lesson.read_text()
        + "\n\ndef leaked(self, queries, keys, values, valid_lens, training):\n"
        + "".join(f"    {line}\n" for line in body)
        + "    return output\n"
    )
    problems = release.scan(copy)
    assert any(
        p.startswith("lessons/l16_attention_scoring.py: line")
        and "solutions/l16_attention_scoring.py" in p
        for p in problems
    ), problems


def test_scanner_refuses_compiled_unknown_and_key_files(edition, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(edition, copy)
    (copy / "graders" / "__pycache__").mkdir()
    (copy / "graders" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (copy / "notes.txt").write_text("hello")
    shutil.copy(
        ROOT / "solutions" / "mutants" / "l16_attention_scoring.toml",
        copy / "graders" / "mistakes.toml",
    )
    keys = tmp_path / "solutions"
    shutil.copytree(ROOT / "solutions", keys)
    explanation = (
        "Each head has its own projections, one matrix split in H slices."
    )
    (keys / "answers_key.toml").write_text(
        f'[q18_1]\nexplanation = "{explanation}"\n'
    )
    (copy / "lessons" / "notes" / "l18.md").write_text(f"Hint: {explanation}\n")
    problems = "\n".join(release.scan(copy, solutions=keys))
    assert "graders/__pycache__/x.cpython-311.pyc: compiled Python" in problems
    assert "notes.txt: not on the release allow-list" in problems
    assert (
        "graders/mistakes.toml: identical to solutions/mutants/l16_attention_scoring.toml"
        in problems
    )
    assert "lessons/notes/l18.md: holds an answer-key text" in problems


def test_submission_scores_as_the_edition_grades_itself(m2t, edition, tmp_path):
    copy = tmp_path / "student"
    shutil.copytree(edition, copy)
    shutil.copy(
        ROOT / "solutions" / "l16_attention_scoring.py", copy / "lessons"
    )
    text = (copy / "lessons" / "l16_attention_scoring.py").read_text()
    # one wrong answer, so the comparison covers failures too
    (copy / "lessons" / "l16_attention_scoring.py").write_text(
        text.replace("keep = positions < lens", "keep = positions <= lens")
    )
    inside = m2t(
        "grade", "16", "--report", str(tmp_path / "inside.json"), cwd=copy
    )
    outside = m2t(
        "grade",
        "16",
        "--submission",
        str(copy),
        "--report",
        str(tmp_path / "outside.json"),
    )
    assert inside.returncode == outside.returncode == 1, (
        inside.stdout + outside.stdout
    )
    a = json.loads((tmp_path / "inside.json").read_text())
    b = json.loads((tmp_path / "outside.json").read_text())
    assert 0 < a["score"] < a["max_score"]
    assert [(t["name"], t["score"], t["status"]) for t in a["tests"]] == [
        (t["name"], t["score"], t["status"]) for t in b["tests"]
    ]


def test_the_edition_refuses_the_authoring_commands_plainly(m2t, edition):
    result = m2t("check", "16", cwd=edition)
    assert result.returncode == 2
    assert "check needs the full repository" in result.stderr
    assert "Traceback" not in result.stderr
    assert m2t("list", cwd=edition).returncode == 0
