"""The student's answers file, `answers.toml` in the graded folder
(`lessons/answers.toml` for a student, `solutions/answers.toml` for the
reference answers): one table per id,

    [q16_2]
    answer = "B"
    text = "optional free text, read by the instructor"

An error in the file costs only the table it sits in, whatever the error
(bad TOML, a value nested too deeply, a table declared twice).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from m2t import ROOT
from m2t.i18n import text as _text
from m2t.settings import tomllib

ANSWERS = "answers.toml"


@dataclasses.dataclass
class AnswersFile:
    """The student's answers: one table per question id.

    `tables` holds the tables that could be read, `errors` a message per id
    whose table could not (a TOML error in it, or declared twice), and
    `syntax_error` the whole file's first TOML error, if any.
    """

    path: Path
    exists: bool = True
    tables: dict[str, Any] = dataclasses.field(default_factory=dict)
    lines: dict[str, int] = dataclasses.field(default_factory=dict)
    errors: dict[str, str] = dataclasses.field(default_factory=dict)
    syntax_error: str | None = None


_HEADER = re.compile(r"^[ \t]*\[[ \t]*([A-Za-z0-9_-]+)[ \t]*\][ \t]*(#.*)?$")
_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


def display(path: Path) -> str:
    """`path` relative to the repository where it is inside it."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


_ASSIGNMENT = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=\s*(.*?)\s*$")


def _hint(lines: list[str], line: int) -> str:
    """What to write instead, where an unquoted value is the likely cause:
    `answer = (2, 3, 6)` -> `answer = "(2, 3, 6)"`."""
    if not 1 <= line <= len(lines):
        return ""
    match = _ASSIGNMENT.match(lines[line - 1])
    if not match or match.group(2)[:1] in ('"', "'", "[", ""):
        return ""
    if len(match.group(2)) > 80:
        return _text("answers.quote_long")
    key, value = match.groups()
    quoted = value.replace("\\", "\\\\").replace('"', '\\"')
    return _text("answers.quote", key=key, value=quoted)


def _toml_error(
    exc: Exception, path: Path, first_line: int, lines: list[str]
) -> str:
    """tomllib's message (its own words, quoted in Chinese) with the line
    counted in the whole file, and a hint where a value is not quoted; any
    other error (a value nested too deeply, say) by its kind; in the run's
    language."""
    if not isinstance(exc, tomllib.TOMLDecodeError):
        reason = (
            _text("answers.nested")
            if isinstance(exc, RecursionError)
            else type(exc).__name__
        )
        return _text(
            "answers.unreadable_table",
            path=display(path),
            line=first_line,
            reason=reason,
        )
    message = str(exc)
    match = _AT.search(message)
    if not match:
        message = message.replace("(at end of document)", "").strip()
        return _text(
            "answers.toml_error",
            path=display(path),
            line=first_line,
            message=message,
        )
    line = int(match.group(1)) + first_line - 1
    message = message[: match.start()]
    hint = _hint(lines, line) if message.startswith("Invalid value") else ""
    return _text(
        "answers.toml_error_at",
        path=display(path),
        line=line,
        column=match.group(2),
        message=message,
        hint=hint,
    )


def read_answers(path: Path) -> AnswersFile:
    """Read an answers file, forgiving a TOML error where it can.

    The whole file is parsed first; on a TOML error it is split at its
    `[id]` headers and each table is parsed on its own, so an error costs
    only the table (the question) it sits in.
    """
    result = AnswersFile(path=path)
    if not path.exists():
        result.exists = False
        return result
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines(keepends=True)
    headers = [
        (i, m.group(1))
        for i, line in enumerate(lines)
        if (m := _HEADER.match(line))
    ]
    for i, qid in headers:
        result.lines.setdefault(qid, i + 1)
    plain = [line.rstrip("\r\n") for line in lines]
    try:
        data = tomllib.loads(text)
    except Exception as exc:  # noqa: BLE001 - any error costs its table only
        result.syntax_error = _toml_error(exc, path, 1, plain)
    else:
        result.tables = {
            k: v if isinstance(v, dict) else {"answer": v}
            for k, v in data.items()
        }
        return result
    # Table by table: the preamble (top-level keys) and each [id] chunk.
    bounds = [(0, None)] + [(i, qid) for i, qid in headers]
    for n, (start, qid) in enumerate(bounds):
        end = bounds[n + 1][0] if n + 1 < len(bounds) else len(lines)
        chunk = "".join(lines[start + (qid is not None) : end])
        first = start + 1 + (qid is not None)
        if qid is not None and qid in result.tables:
            result.errors[qid] = _text(
                "answers.twice",
                path=display(path),
                line=start + 1,
                qid=qid,
                first=result.lines[qid],
            )
            result.tables.pop(qid)
            continue
        if qid is not None and qid in result.errors:
            continue
        try:
            data = tomllib.loads(chunk)
        except Exception as exc:  # noqa: BLE001 - costs this table only
            if qid is not None:
                result.errors[qid] = _toml_error(exc, path, first, plain)
            continue  # a broken preamble breaks no question
        if qid is None:
            for key, value in data.items():
                result.tables[key] = (
                    value if isinstance(value, dict) else {"answer": value}
                )
        else:
            result.tables[qid] = data
    return result


def is_empty(value: Any) -> bool:
    """No answer: missing, "" (or blanks) or []."""
    if isinstance(value, str):
        return not value.strip()
    return value is None or value == []
