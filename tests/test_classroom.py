"""The student edition's GitHub Classroom workflow, as GitHub and Classroom
read it: it validates against GitHub's workflow schema, it has what
Classroom needs, and its grading step, run here with GITHUB_OUTPUT and
GITHUB_STEP_SUMMARY pointing at files, hands the reporter the score
results.json has.

The reporter (classroom-resources/autograding-grading-reporter) is a node
program the runner starts with the step's `env:` and inputs in its
environment, through execve. `_exec_reporter` does the same: it resolves
the workflow's `env:` against the grading step's outputs, puts them and
`INPUT_RUNNERS` into a real child process's environment and decodes them
there as the reporter does (node where it is installed, else Python), so a
string over Linux's MAX_ARG_STRLEN fails here as it fails on GitHub."""

import base64
import dataclasses
import errno
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from ruamel.yaml import YAML  # check-jsonschema's YAML 1.2 parser (dev)

from m2t import ROOT
from m2t import curriculum
from m2t import settings
from m2t.authoring import release
from m2t.grading import classroom
from m2t.grading.runner import Check
from m2t.grading.runner import LessonResult

TEMPLATE = ROOT / "m2t" / "authoring" / "templates" / "classroom.yml"
REPORTER = "classroom-resources/autograding-grading-reporter@v1"
LIMIT = 131_072  # Linux's MAX_ARG_STRLEN: 32 pages of 4 KiB
RUNNERS = re.compile(r"^([a-zA-Z0-9]+,)*[a-zA-Z0-9]+$")  # the reporter's rule

# What the reporter computes from its environment (src/main.js,
# console-results.js, notify-classroom.js, helpers/test-helpers.js): each
# runner's `<ID>_RESULTS` is base64 of JSON; the console shows a runner as
# (tests passed / tests) x max_score; Classroom records the tests' scores
# over the max_scores of the runners that have one.
_DECODE_JS = """
const out = {shown: 0, recorded: 0, most: 0, runners: {}};
for (const id of process.env.INPUT_RUNNERS.split(",")) {
  const runner = id.trim();
  const text = process.env[`${runner.toUpperCase()}_RESULTS`];
  const results = JSON.parse(Buffer.from(text, "base64").toString("utf-8"));
  const passed = results.tests.filter((t) => t.status === "pass").length;
  out.shown += (passed / results.tests.length) * (results.max_score || 0);
  if (results.max_score) {
    out.most += results.max_score;
    for (const t of results.tests) out.recorded += t.score;
  }
  out.runners[runner] = results;
}
process.stdout.write(JSON.stringify(out));
"""

_DECODE_PY = """
import base64, json, os, sys
out = {"shown": 0, "recorded": 0, "most": 0, "runners": {}}
for runner in (r.strip() for r in os.environ["INPUT_RUNNERS"].split(",")):
    text = os.environ[runner.upper() + "_RESULTS"]
    results = json.loads(base64.b64decode(text).decode("utf-8"))
    passed = sum(t["status"] == "pass" for t in results["tests"])
    most = results.get("max_score") or 0
    out["shown"] += passed / len(results["tests"]) * most
    if most:
        out["most"] += most
        out["recorded"] += sum(t["score"] for t in results["tests"])
    out["runners"][runner] = results
sys.stdout.write(json.dumps(out))
"""


def _decoder() -> list[str]:
    node = shutil.which("node")
    if node:
        return [node, "-e", _DECODE_JS]
    return [sys.executable, "-c", _DECODE_PY]


def _load(path) -> dict:
    return YAML(typ="safe").load(path.read_text())


def _reporter(workflow: dict) -> dict:
    (job,) = workflow["jobs"].values()
    (step,) = [s for s in job["steps"] if s.get("uses") == REPORTER]
    return step


def _grading_step(workflow: dict) -> dict:
    (job,) = workflow["jobs"].values()
    (step,) = [s for s in job["steps"] if s.get("id") == "m2t"]
    return step


def _reporter_env(reporter: dict, outputs: dict[str, str]) -> dict[str, str]:
    """The reporter step's environment as the runner makes it: each `env:`
    value `${{ steps.m2t.outputs.NAME }}` replaced by that output (empty
    when the step wrote none), and the `with:` inputs as INPUT_<NAME>."""
    env = {}
    for name, value in reporter["env"].items():
        step, output = re.fullmatch(
            r"\$\{\{\s*steps\.([\w-]+)\.outputs\.([\w-]+)\s*\}\}", value
        ).groups()
        assert step == "m2t"  # the grading step's id
        env[name] = outputs.get(output, "")
    for name, value in reporter["with"].items():
        env[f"INPUT_{name.upper()}"] = str(value)
    return env


def _exec_reporter(reporter: dict, outputs: dict[str, str]) -> dict:
    """The decoded runners and totals, from a real exec whose environment
    holds the outputs as the reporter step's does."""
    env = {**os.environ, **_reporter_env(reporter, outputs)}
    done = subprocess.run(
        _decoder(), env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _read_outputs(path) -> dict[str, str]:
    return dict(
        line.split("=", 1) for line in path.read_text().splitlines() if line
    )


def _env_strings(outputs: dict[str, str]) -> dict[str, int]:
    """Bytes of each `NAME=value` string the reporter's environment gets,
    with its NUL, as execve counts them."""
    return {
        runner: len(f"{classroom.variable(runner)}={value}".encode()) + 1
        for runner, value in outputs.items()
    }


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("classroom") / "edition"
    assert release.build(out) == []
    return out


@pytest.fixture(scope="module")
def workflow(edition) -> dict:
    return _load(edition / ".github" / "workflows" / "grade.yml")


def test_the_workflow_validates_against_githubs_schema(edition):
    """The template as it is, and the edition's workflow rendered from it;
    check-jsonschema's vendored copy of GitHub's schema (offline)."""
    for path in (TEMPLATE, edition / ".github" / "workflows" / "grade.yml"):
        done = subprocess.run(
            [sys.executable, "-m", "check_jsonschema"]
            + ["--builtin-schema", "vendor.github-workflows", str(path)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_workflow_has_what_classroom_reads(workflow):
    # the reporter's conditions: this workflow name, this one job
    assert workflow["name"] == "Autograding Tests"
    assert list(workflow["jobs"]) == ["run-autograding-tests"]
    assert set(workflow["on"]) == {
        "push",
        "repository_dispatch",
        "workflow_dispatch",
    }
    assert workflow["permissions"] == {
        "checks": "write",
        "actions": "read",
        "contents": "read",
    }
    (job,) = workflow["jobs"].values()
    assert job["if"] == "github.actor != 'github-classroom[bot]'"
    (python,) = [
        s
        for s in job["steps"]
        if s.get("uses", "").startswith("actions/setup-python")
    ]
    assert python["with"]["cache"] == "pip"
    names = [s.get("uses") or s.get("name") for s in job["steps"]]
    assert names.index(REPORTER) > names.index("Grade")


def test_the_reporter_reads_one_runner_per_lesson(workflow):
    """Every lesson of the curriculum is a runner, in course order, under
    the variable the reporter looks up (`L16_RESULTS` for l16), read from
    the grading step's output of the same name."""
    reporter = _reporter(workflow)
    runners = reporter["with"]["runners"]
    assert RUNNERS.match(runners)
    tags = [lesson.tag for lesson in curriculum.lessons()]
    assert runners.split(",") == tags
    assert "l16" in tags and "questions" in tags
    assert reporter["env"]["L16_RESULTS"] == "${{ steps.m2t.outputs.l16 }}"
    assert reporter["env"] == {
        f"{t.upper()}_RESULTS": f"${{{{ steps.m2t.outputs.{t} }}}}"
        for t in tags
    }


def test_a_template_without_its_placeholder_is_refused():
    text = TEMPLATE.read_text()
    with pytest.raises(ValueError, match="m2tlesson"):
        classroom.workflow(text.replace("runners: m2tlesson", "runners: x"), [])


def test_one_string_past_max_arg_strlen_fails_the_exec():
    """The limit the layout is built for is this kernel's: a `NAME=value`
    string of 131,072 bytes (its NUL counted) execs, one byte more is
    E2BIG, whatever the total."""
    name = "L01_RESULTS"
    fits = "A" * (LIMIT - len(name) - 2)
    reporter = {"env": {name: "${{ steps.m2t.outputs.l01 }}"}, "with": {}}
    env = {**os.environ, **_reporter_env(reporter, {"l01": fits})}
    subprocess.run(["/usr/bin/env", "true"], env=env, check=True)
    env[name] += "A"
    with pytest.raises(OSError) as raised:
        subprocess.run(["/usr/bin/env", "true"], env=env, check=True)
    assert raised.value.errno == errno.E2BIG


def _run_step(folder, command, tmp_path):
    env = {
        **os.environ,
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}",
    }
    env = settings.quiet_env(env)
    env.pop("M2T_ROOT", None)
    return subprocess.run(
        ["bash", "-e", "-c", command],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )


@pytest.fixture(scope="module")
def untouched(edition, workflow, tmp_path_factory):
    """The workflow's grading step, run on the untouched edition (every
    lesson and the question list): its folder and its step's folder."""
    tmp = tmp_path_factory.mktemp("untouched")
    student = tmp / "student"
    shutil.copytree(edition, student)
    done = _run_step(student, _grading_step(workflow)["run"], tmp)
    assert done.returncode == 0, done.stdout + done.stderr
    return student, tmp


def _results(report: dict) -> list[LessonResult]:
    """The checks results.json lists, per lesson of the curriculum (its
    tags: the lesson's module, the check's status)."""
    by_module = {lesson.module: lesson for lesson in curriculum.lessons()}
    checks: dict[str, list[Check]] = {m: [] for m in by_module}
    for test in report["tests"]:
        module, status = test["tags"]
        tag = by_module[module].tag
        points = test["max_score"]
        assert status != "skipped"  # its points would read 0 here
        checks[module].append(
            Check(
                tag,
                test["name"].removeprefix(f"{tag} "),
                "",
                points,
                status,
                test["output"],
                0.5,
            )
        )
    return [LessonResult(by_module[m], c) for m, c in checks.items()]


def test_the_untouched_edition_reaches_the_reporter_through_exec(
    untouched, workflow
):
    student, tmp = untouched
    outputs = _read_outputs(tmp / "output")
    report = json.loads((student / "results.json").read_text())
    seen = _exec_reporter(_reporter(workflow), outputs)
    tags = [lesson.tag for lesson in curriculum.lessons()]
    assert list(seen["runners"]) == tags == list(outputs)
    assert report["score"] == 0 and report["max_score"] > 400
    assert seen["most"] == report["max_score"]
    assert seen["shown"] == seen["recorded"] == 0
    sizes = _env_strings(outputs)
    assert max(sizes.values()) < LIMIT // 2, sizes
    checks = sum(len(r["tests"]) for r in seen["runners"].values())
    assert checks >= len(report["tests"])  # n tests for a check of n points


def test_the_worst_case_stays_under_half_the_limit(untouched, workflow):
    """Every check of the whole course (those of the untouched edition)
    an error of the grader with a message and name past the caps, the
    widest JSON and UTF-8 allow: each runner's string is under half of
    MAX_ARG_STRLEN, all pass one exec together, nothing was dropped to fit
    (each failing check keeps its message), and the total shown is the
    total recorded."""
    student, _ = untouched
    report = json.loads((student / "results.json").read_text())
    worst = classroom.worst_case(_results(report))
    outputs = classroom.outputs(worst)
    sizes = _env_strings(outputs)
    assert max(sizes.values()) < LIMIT // 2, sizes
    seen = _exec_reporter(_reporter(workflow), outputs)
    for r in worst:
        runner = seen["runners"][r.lesson.tag]
        assert runner["status"] == "error" and runner["message"]
        messages = [t for t in runner["tests"] if t.get("message")]
        assert len(messages) == len(r.checks), r.lesson.tag
        assert all(t["status"] == "error" for t in runner["tests"])
    assert seen["shown"] == seen["recorded"] == 0
    assert seen["most"] == report["max_score"]
    passing = [
        LessonResult(
            r.lesson,
            [dataclasses.replace(c, status="passed") for c in r.checks],
        )
        for r in _results(report)
    ]
    seen = _exec_reporter(_reporter(workflow), classroom.outputs(passing))
    assert seen["shown"] == seen["recorded"] == report["max_score"]


def test_the_grading_step_hands_classroom_the_results_json_total(
    edition, workflow, tmp_path
):
    student = tmp_path / "student"
    shutil.copytree(edition, student)
    text = (ROOT / "solutions" / "l16_attention_scoring.py").read_text()
    (student / "lessons" / "l16_attention_scoring.py").write_text(
        text.replace("keep = positions < lens", "keep = positions <= lens")
    )
    command = "python -m m2t.grading.classroom 16 --report results.json"
    done = _run_step(student, command, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr  # green: a score
    outputs = _read_outputs(tmp_path / "output")
    assert list(outputs) == ["l16"]
    reporter = _reporter(workflow)
    reporter = {**reporter, "with": {"runners": "l16"}}
    seen = _exec_reporter(reporter, outputs)
    report = json.loads((student / "results.json").read_text())
    assert 0 < report["score"] < report["max_score"]
    # the points shown are the points recorded, and results.json's
    assert seen["shown"] == seen["recorded"] == report["score"]
    assert seen["most"] == report["max_score"]
    runner = seen["runners"]["l16"]
    assert runner["status"] == "pass"  # the reporter fails on fail/error
    names = [t["name"].removeprefix("l16 ") for t in report["tests"]]
    assert {
        re.sub(r" \(\d+/\d+\)$", "", t["name"]) for t in runner["tests"]
    } == set(names)
    summary = (tmp_path / "summary.md").read_text()
    assert f"**{report['score']:g}/{report['max_score']:g}**" in summary
    assert "grade of record" in summary
    failed = [t["name"] for t in report["tests"] if t["status"] == "failed"]
    assert failed and all(f"| {name} |" in summary for name in failed)


def test_a_broken_grader_is_red_and_says_so(edition, workflow, tmp_path):
    student = tmp_path / "student"
    shutil.copytree(edition, student)
    grader = student / "graders" / "test_l16_attention_scoring.py"
    grader.write_text(grader.read_text() + "\nthis is not python\n")
    done = _run_step(student, "python -m m2t.grading.classroom 16", tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the grader broke" in done.stderr
    reporter = {**_reporter(workflow), "with": {"runners": "l16"}}
    seen = _exec_reporter(reporter, _read_outputs(tmp_path / "output"))
    runner = seen["runners"]["l16"]
    assert runner["status"] == "error"
    assert "could not be collected" in runner["message"]
    assert runner["max_score"] == 0  # no grade recorded


L16 = next(x for x in curriculum.lessons() if x.tag == "l16")


def _check(name: str, points: float, status: str) -> Check:
    return Check("l16", name, "", points, status, f"{name}: {status}", 0.1)


def test_skipped_checks_count_in_neither_maximum_nor_tests():
    """A passed check of 2 points, a failed one of 1, a skipped one of 3
    (an answer left to the instructor), a passed one of 1: Classroom
    records 3 of 4 (as results.json), and the console shows (3 tests
    passed / 4) x 4 = 3; the skipped check is no test (the console would
    count it as passed)."""
    result = LessonResult(
        L16,
        [
            _check("test_a", 2.0, "passed"),
            _check("test_b", 1.0, "failed"),
            _check("test_c", 3.0, "skipped"),
            _check("test_d", 1.0, "passed"),
        ],
    )
    data = classroom.payload(result)
    assert data["max_score"] == 4.0
    assert [t["name"] for t in data["tests"]] == [
        "test_a (1/2)",
        "test_a (2/2)",
        "test_b",
        "test_d",
    ]
    assert [t["score"] for t in data["tests"]] == [1.0, 1.0, 0.0, 1.0]
    assert [t["status"] for t in data["tests"]] == [
        "pass",
        "pass",
        "fail",
        "pass",
    ]
    reporter = {"env": {"L16_RESULTS": "${{ steps.m2t.outputs.l16 }}"}}
    reporter["with"] = {"runners": "l16"}
    seen = _exec_reporter(reporter, {"l16": classroom.encode(data)})
    assert (seen["shown"], seen["recorded"], seen["most"]) == (3.0, 3.0, 4.0)


def test_only_skipped_checks_give_no_maximum():
    result = LessonResult(L16, [_check("test_c", 3.0, "skipped")])
    data = classroom.payload(result)
    assert data["max_score"] == 0.0
    assert [(t["status"], t["score"]) for t in data["tests"]] == [("pass", 0.0)]


def test_half_points_are_tests_of_half_a_point():
    result = LessonResult(
        L16,
        [_check("test_a", 1.5, "passed"), _check("test_b", 0.5, "failed")],
    )
    data = classroom.payload(result)
    assert data["max_score"] == 2.0
    assert [t["score"] for t in data["tests"]] == [0.5, 0.5, 0.5, 0.0]


@pytest.mark.parametrize(
    "text", ['"' * 500, "\\" * 500, "中" * 500, "\x01" * 500, "ab" * 500]
)
def test_cap_bounds_the_encoded_bytes(text):
    capped = classroom.cap(text, 160)
    assert len(json.dumps(capped, ensure_ascii=False).encode()) <= 160
    assert capped.endswith("…") and text.startswith(capped[:-1])
    assert classroom.cap("short", 160) == "short"


def test_the_payload_decodes_as_utf8_base64():
    data = classroom.payload(
        LessonResult(L16, [_check("test_中", 1, "failed")])
    )
    back = json.loads(base64.b64decode(classroom.encode(data)).decode("utf-8"))
    assert back == data
