"""What a grade looks like: a terminal table, Gradescope's results.json and
JUnit XML."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from m2t import curriculum
from m2t import i18n
from m2t.grading.runner import LessonResult
from m2t.i18n import text

# Characters a message may not carry to a terminal, JSON or XML: C0 and C1
# controls but newline and tab (a carriage return or an escape sequence
# rewrites what the instructor sees; most are invalid XML), lone surrogates,
# the bidirectional overrides, the line separators and U+FFFE/U+FFFF.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e"
    "\u2066-\u2069\ud800-\udfff\ufffe\uffff]"
)


def clean(text: str) -> str:
    """`text` safe for a terminal, JSON and XML: each unsafe character
    (see `_UNSAFE`) is shown as its escape, e.g. `\\x1b`."""
    return _UNSAFE.sub(lambda m: ascii(m.group())[1:-1], str(text))


def table(results: Sequence[LessonResult], verbose: bool = False) -> str:
    """Lesson, checks passed / total, points, status; then the first
    message of each failing check (not-started messages once per TODO), in
    the run's language."""
    rows = [
        tuple(
            text(f"table.{c}")
            for c in ("lesson", "checks", "points", "time", "status")
        )
    ]
    for r in results:
        if not r.checks:
            status = text(
                "status.no_checks"
                if r.lesson.grader.exists()
                else "status.no_grader"
            )
            rows.append((r.lesson.tag, "-", "-", "-", status))
            continue
        rows.append(
            (
                r.lesson.tag,
                f"{r.passed}/{len(r.checks)}",
                f"{r.score:g}/{r.max_score:g}",
                f"{r.seconds:.1f}s",
                text(f"status.{r.status}"),
            )
        )
    widths = [
        max(i18n.columns(row[i]) for row in rows) for i in range(len(rows[0]))
    ]
    lines = [
        "  ".join(i18n.ljust(c, w) for c, w in zip(row, widths, strict=True))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for r in results:
        seen: set[str] = set()
        failing = [c for c in r.checks if c.status != "passed"]
        if not failing:
            continue
        lines.append("")
        lines.append(f"{r.lesson.tag} {i18n.title(r.lesson)}:")
        for check in failing:
            message = clean(check.message)
            first = message.splitlines()[0] if message else ""
            if check.status == "not_started":
                if first in seen:
                    continue
                seen.add(first)
                lines.append(f"  [{text('mark.not_started')}] {first}")
                continue
            body = message if verbose else "\n".join(message.splitlines()[:4])
            body = body.replace("\n", "\n      ")
            lines.append(
                f"  [{text('mark.' + check.status)}] {clean(check.name)}: "
                f"{body}"
            )
    return "\n".join(lines)


def gradescope(
    results: Sequence[LessonResult], seconds: float, notes: Sequence[str] = ()
) -> dict:
    """Gradescope's autograder `results.json` (tests[] with name, number,
    score, max_score, status, output, visibility); `notes` (e.g. how the
    sandbox was confined) lead the summary in `output`."""
    tests = []
    for r in results:
        for i, check in enumerate(r.checks, 1):
            tests.append(
                {
                    "name": clean(f"{r.lesson.tag} {check.name}"),
                    "number": f"{curriculum.number(r.lesson)}.{i}",
                    "score": check.score,
                    "max_score": 0.0
                    if check.status == "skipped"
                    else check.points,
                    "status": "passed"
                    if check.status == "passed"
                    else "failed",
                    "output": clean(check.message),
                    "tags": [r.lesson.module, check.status],
                    "visibility": "visible",
                }
            )
    score = sum(r.score for r in results)
    max_score = sum(r.max_score for r in results)
    summary = ", ".join(
        f"{r.lesson.tag} {r.score:g}/{r.max_score:g}"
        for r in results
        if r.checks
    )
    return {
        "score": score,
        "max_score": max_score,
        "execution_time": round(seconds, 3),
        "output": "\n".join([*map(clean, notes), summary]),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def write_gradescope(
    path: Path,
    results: Sequence[LessonResult],
    seconds: float,
    notes: Sequence[str] = (),
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(gradescope(results, seconds, notes), indent=2))
    tmp.replace(path)


def junit(results: Sequence[LessonResult]) -> ET.ElementTree:
    """JUnit XML: one testsuite per lesson, one testcase per check."""
    suites = ET.Element("testsuites", name="m2t")
    for r in results:
        failures = sum(c.status in ("failed", "not_started") for c in r.checks)
        errors = sum(c.status == "error" for c in r.checks)
        skipped = sum(c.status == "skipped" for c in r.checks)
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=r.lesson.module,
            tests=str(len(r.checks)),
            failures=str(failures),
            errors=str(errors),
            skipped=str(skipped),
            time=f"{r.seconds:.3f}",
        )
        for check in r.checks:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"graders.test_{r.lesson.module}",
                name=clean(check.name),
                time=f"{check.seconds:.3f}",
            )
            message = clean(check.message)
            first = message.splitlines()[0] if message else ""
            if check.status in ("failed", "not_started"):
                node = ET.SubElement(
                    case, "failure", message=first, type=check.status
                )
                node.text = message
            elif check.status == "error":
                node = ET.SubElement(case, "error", message=first, type="error")
                node.text = message
            elif check.status == "skipped":
                ET.SubElement(case, "skipped", message=first)
    return ET.ElementTree(suites)


def write_junit(path: Path, results: Sequence[LessonResult]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    junit(results).write(path, encoding="utf-8", xml_declaration=True)
