"""The student edition's GitHub Classroom workflow, as GitHub and Classroom
read it: it validates against GitHub's workflow schema, it has what
Classroom needs, and its grading step, run here with GITHUB_OUTPUT and
GITHUB_STEP_SUMMARY pointing at files, hands the reporter the score
results.json has."""

import base64
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from ruamel.yaml import YAML  # check-jsonschema's YAML 1.2 parser (dev)

from m2t import ROOT
from m2t import settings
from m2t.authoring import release

WORKFLOW = ROOT / "m2t" / "authoring" / "templates" / "classroom.yml"
REPORTER = "classroom-resources/autograding-grading-reporter@v1"


def _workflow() -> dict:
    return YAML(typ="safe").load(WORKFLOW.read_text())


def _job() -> dict:
    (job,) = _workflow()["jobs"].values()
    return job


def _step(uses: str | None = None, step_id: str | None = None) -> dict:
    (step,) = [
        s
        for s in _job()["steps"]
        if (uses and s.get("uses") == uses)
        or (step_id and s.get("id") == step_id)
    ]
    return step


def test_the_workflow_validates_against_githubs_schema():
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema"]
        + ["--builtin-schema", "vendor.github-workflows", str(WORKFLOW)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_workflow_has_what_classroom_reads():
    workflow = _workflow()
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
    job = _job()
    assert job["if"] == "github.actor != 'github-classroom[bot]'"
    (python,) = [
        s
        for s in job["steps"]
        if s.get("uses", "").startswith("actions/setup-python")
    ]
    assert python["with"]["cache"] == "pip"
    reporter = _step(uses=REPORTER)
    assert reporter["with"]["runners"] == "m2t"
    assert set(reporter["env"]) == {"M2T_RESULTS"}
    names = [s.get("uses") or s.get("name") for s in job["steps"]]
    assert names.index(REPORTER) > names.index("Grade")


def _decode_as_the_reporter_does(
    output_file, reporter
) -> tuple[float, float, list]:
    """src/main.js and src/notify-classroom.js of the reporter: for each id
    in `runners`, the env var `<ID>_RESULTS` is base64 of JSON; a runner
    with a max_score adds it to the maximum and its tests' scores to the
    total. The env values here are `${{ steps.<id>.outputs.<name> }}`,
    looked up in the step's GITHUB_OUTPUT file."""
    outputs = dict(
        line.split("=", 1)
        for line in output_file.read_text().splitlines()
        if line
    )
    total = most = 0.0
    runners = []
    for runner in filter(None, re.split(r"[\s,]", reporter["with"]["runners"])):
        value = reporter["env"][f"{runner.strip().upper()}_RESULTS"]
        step, name = re.fullmatch(
            r"\$\{\{\s*steps\.([\w-]+)\.outputs\.([\w-]+)\s*\}\}", value
        ).groups()
        assert step == "m2t"  # the grading step's id
        results = json.loads(base64.b64decode(outputs[name]).decode("utf-8"))
        runners.append(results)
        if not results["max_score"]:
            continue
        most += results["max_score"]
        total += sum(test["score"] for test in results["tests"])
    return total, most, runners


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("classroom") / "edition"
    assert release.build(out) == []
    return out


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


def test_the_grading_step_hands_classroom_the_results_json_total(
    edition, tmp_path
):
    student = tmp_path / "student"
    shutil.copytree(edition, student)
    text = (ROOT / "solutions" / "l16_attention_scoring.py").read_text()
    (student / "lessons" / "l16_attention_scoring.py").write_text(
        text.replace("keep = positions < lens", "keep = positions <= lens")
    )
    done = _run_step(student, _step(step_id="m2t")["run"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr  # green: a score
    total, most, (runner,) = _decode_as_the_reporter_does(
        tmp_path / "output", _step(uses=REPORTER)
    )
    report = json.loads((student / "results.json").read_text())
    assert 0 < report["score"] < report["max_score"]
    assert (total, most) == (report["score"], report["max_score"])
    assert runner["status"] == "pass"  # the reporter fails on fail/error
    assert [t["name"] for t in runner["tests"]] == [
        t["name"] for t in report["tests"]
    ]
    summary = (tmp_path / "summary.md").read_text()
    assert f"**{report['score']:g}/{report['max_score']:g}**" in summary
    assert "grade of record" in summary


def test_a_broken_grader_is_red_and_says_so(edition, tmp_path):
    student = tmp_path / "student"
    shutil.copytree(edition, student)
    grader = student / "graders" / "test_l16_attention_scoring.py"
    grader.write_text(grader.read_text() + "\nthis is not python\n")
    done = _run_step(student, "python -m m2t.grading.classroom 16", tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the grader broke" in done.stderr
    _, _, (runner,) = _decode_as_the_reporter_does(
        tmp_path / "output", _step(uses=REPORTER)
    )
    assert runner["status"] == "error"
    assert "could not be collected" in runner["message"]
