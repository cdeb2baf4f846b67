"""`m2t grade` and `m2t list` as a user runs them: the table, exit codes,
Gradescope JSON and JUnit XML."""

import json
import xml.etree.ElementTree as ET

import pytest

from m2t import curriculum


@pytest.mark.parametrize("name", ["16", "l16", "l16_attention_scoring", "L16"])
def test_lesson_names(name):
    assert curriculum.find(name).module == "l16_attention_scoring"


def test_unknown_lesson_is_a_clear_error(m2t):
    result = m2t("grade", "99")
    assert result.returncode == 2
    assert "unknown lesson '99'" in result.stderr


def test_grade_solutions_writes_valid_reports(m2t, tmp_path):
    report, junit = tmp_path / "results.json", tmp_path / "junit.xml"
    result = m2t(
        "grade",
        "16",
        "--impl",
        "solutions",
        "--report",
        str(report),
        "--junit",
        str(junit),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "l16" in result.stdout and "passed" in result.stdout
    data = json.loads(report.read_text())
    assert data["score"] == data["max_score"] > 0
    assert isinstance(data["execution_time"], float)
    for test in data["tests"]:
        assert set(test) >= {
            "name",
            "number",
            "score",
            "max_score",
            "status",
            "output",
            "visibility",
        }
        assert test["status"] == "passed" and test["score"] == test["max_score"]
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("name") == "l16_attention_scoring"
    assert (
        int(suite.get("tests")) == len(data["tests"])
        and suite.get("failures") == "0"
    )


def test_grade_untouched_lessons_reports_not_started(m2t, tmp_path):
    report, junit = tmp_path / "results.json", tmp_path / "junit.xml"
    result = m2t("grade", "l16", "--report", str(report), "--junit", str(junit))
    assert result.returncode == 1
    assert (
        "l16 masked_softmax: not started (TODO at lessons/l16_attention_scoring.py:"
        in result.stdout
    )
    assert "Traceback" not in result.stdout + result.stderr
    data = json.loads(report.read_text())
    assert data["score"] == 0 and data["tests"]
    assert all(
        t["status"] == "failed" and "not started" in t["output"]
        for t in data["tests"]
    )
    failures = ET.parse(junit).getroot().findall(".//failure")
    assert len(failures) == len(data["tests"])
    assert {f.get("type") for f in failures} == {"not_started"}


def test_a_syntax_error_costs_only_that_lesson(m2t, tmp_path):
    (tmp_path / "l16_attention_scoring.py").write_text("def broken(:\n")
    result = m2t("grade", "16", "--unconfined", "--impl", str(tmp_path))
    assert result.returncode == 1
    assert "l16: syntax error at" in result.stdout


def test_list_shows_every_lesson_in_order(m2t):
    result = m2t("list")
    assert result.returncode == 0
    tags = [line.split()[0] for line in result.stdout.splitlines()]
    assert tags == [lesson.tag for lesson in curriculum.lessons()]


def test_check_numbers_follow_the_course_not_the_ids():
    """Gradescope sorts the checks by `number`: lesson 21 (backpropagation
    by hand) sits right after lesson 01, the question list last."""
    lessons = curriculum.lessons()
    numbers = [curriculum.number(x) for x in lessons]
    assert numbers == list(range(1, len(lessons) + 1))
    first, backprop = curriculum.find("01"), curriculum.find("21")
    assert curriculum.number(backprop) == curriculum.number(first) + 1


@pytest.mark.parametrize(
    "argv",
    [
        ["make-lessons", "--check"],
        ["check", "16"],
        ["mutants", "16"],
        ["release", "--out", "x"],
    ],
)
def test_authoring_commands_live_under_dev_and_keep_their_old_names(argv):
    from m2t.cli import build_parser

    parser = build_parser()
    new, old = parser.parse_args(["dev", *argv]), parser.parse_args(argv)
    assert new.func is old.func
    assert vars(new) | {"command": None, "dev_command": None} == vars(old) | {
        "command": None,
        "dev_command": None,
    }


def test_every_command_group_registers_itself():
    import m2t.cli

    parser = m2t.cli.build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    for group in m2t.cli.GROUPS:
        names = {
            name
            for name, p in sub.choices.items()
            if getattr(p.get_default("func"), "__module__", "")
            == group.__name__
        }
        assert names, f"{group.__name__} registered no command"


def test_lang_alone_switches_and_remembers(m2t, tmp_path, monkeypatch):
    # a course folder of its own: the language is saved in its .m2t/lang
    monkeypatch.setenv("M2T_ROOT", str(tmp_path))
    result = m2t("--lang", "zh")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / ".m2t" / "lang").read_text().strip() == "zh"
    assert ".m2t/lang" in result.stdout and "输出" in result.stdout
    assert m2t("--lang", "en").returncode == 0
    assert (tmp_path / ".m2t" / "lang").read_text().strip() == "en"
    nothing = m2t()  # no command and no --lang is still an error
    assert nothing.returncode == 2
    assert "required: command" in nothing.stderr


def test_an_impl_that_is_no_folder_is_one_line(m2t):
    result = m2t("grade", "01", "--impl", "nowhere")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        result.stderr.strip()
    ] and result.stderr.startswith("m2t: error: --impl 'nowhere': no such")
    assert "INTERNALERROR" not in result.stderr


def test_an_impl_outside_the_course_is_refused_unless_unconfined(m2t, tmp_path):
    from m2t import ROOT

    lesson = curriculum.find("01")
    (tmp_path / lesson.filename).write_text(
        (ROOT / "solutions" / lesson.filename).read_text()
    )
    refused = m2t("grade", "01", "--impl", str(tmp_path))
    assert refused.returncode == 2
    assert f"m2t grade --submission {tmp_path}" in refused.stderr
    assert "--unconfined" in refused.stderr
    assert "Traceback" not in refused.stderr and refused.stdout == ""
    trusted = m2t("grade", "01", "--unconfined", "--impl", str(tmp_path))
    assert trusted.returncode == 0, trusted.stdout + trusted.stderr


@pytest.mark.parametrize(
    "readme",
    [
        "README.md",
        "README.zh.md",
        "m2t/authoring/templates/README.student.md",
        "m2t/authoring/templates/README.student.zh.md",
    ],
)
def test_readmes_grade_students_work_with_submission(readme):
    from m2t import ROOT

    text = (ROOT / readme).read_text(encoding="utf-8")
    assert "--impl path/to/submission" not in text
    for line in text.splitlines():
        if "--impl" in line and "m2t grade" in line:
            assert "--impl solutions" in line or "--unconfined" in line, line
