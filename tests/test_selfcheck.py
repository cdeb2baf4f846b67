"""The self-check: every grader passes on solutions/ and every check fails as
not started on the untouched lessons/; and it fails when it should."""

import shutil

from m2t import ROOT


def test_self_check_passes_on_the_repository(m2t):
    result = m2t("check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("check: ok")


def test_self_check_fails_when_a_solution_leaks_into_a_skeleton(m2t, tmp_path):
    shutil.copy(ROOT / "solutions" / "l16_attention_scoring.py", tmp_path)
    result = m2t("check", "16", "--lessons-dir", str(tmp_path))
    assert result.returncode == 1
    assert "passed on the untouched lessons" in result.stdout


def test_self_check_fails_when_a_skeleton_crashes(m2t, tmp_path):
    skeleton = (ROOT / "lessons" / "l16_attention_scoring.py").read_text()
    (tmp_path / "l16_attention_scoring.py").write_text(
        skeleton + "\nimport nothing_here_at_all\n"
    )
    result = m2t("check", "16", "--lessons-dir", str(tmp_path))
    assert result.returncode == 1
    assert "error on the untouched lessons" in result.stdout
