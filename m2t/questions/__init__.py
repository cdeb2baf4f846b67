"""The question list: the bank, the student's answers file, and the judge.

Three files, three audiences:

* `graders/questions/lNN.toml` -- the public bank, one file per lesson: each
  question's id, text in Chinese and English, kind, options and points.
  It ships with the student edition.
* `solutions/questions_key.toml` -- the instructor's key: the answer and an
  explanation in both languages per question. It is *not* in the student
  edition (small answer spaces can be brute-forced, so no hashes either).
* `answers.toml` in the graded folder (`lessons/answers.toml` for a student,
  `solutions/answers.toml` for the reference answers): one table per id,

      [q16_2]
      answer = "B"
      text = "optional free text, read by the instructor"

  `m2t answers-template` writes the empty file with every question as
  comments.

Kinds, and what an answer may look like (forgiving where the meaning is
unambiguous, strict otherwise):

* `one_of`: one letter -- "b", "(B)", ["B"].
* `several_of`: letters -- "a, c", "A C", "AC", ["A", "C"]; the exact set
  unless the question is `open`, where any non-empty set of defensible
  options passes (its free text is never judged).
* `number`: 0.75, "3/4", "7.5e-1"; within the bank's tolerance, or inside
  the key's `range`.
* `shape`: [2, 3, 4], "(2, 3, 4)", "2x3x4", "2 × 3 × 4".
* `expression`: big-O, "O(n^2 d)" = "O(d n^2)" = "O(n²d)" = "n*n*d";
  constants and dominated terms drop out.
* `experiment`: the number the student measured with their own code; the
  grader computes the expected value from the reference formula.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
import unicodedata
from collections.abc import Mapping
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from m2t import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

BANK_DIR = ROOT / "graders" / "questions"
KEY_FILE = ROOT / "solutions" / "questions_key.toml"
ANSWERS = "answers.toml"
TEMPLATE = ROOT / "lessons" / ANSWERS
KINDS = ("one_of", "several_of", "number", "shape", "expression", "experiment")
SEEDS = range(1, 17)
_ID = re.compile(r"q(\d\d)_(\d+)")

FORMATS = {
    "one_of": 'one letter, e.g. answer = "B"',
    "several_of": 'one or more letters, e.g. answer = "A, C" or ["A", "C"]',
    "number": 'a number, e.g. answer = 0.25 or answer = "1/4"',
    "shape": 'a shape, e.g. answer = [4, 5, 6] or "(4, 5, 6)" or "4x5x6"',
    "expression": 'a big-O expression, e.g. answer = "O(m k^2)"',
    "experiment": "the number your experiment gives, e.g. answer = 0.25",
}


# ------------------------------------------------------------------- bank
@dataclasses.dataclass(frozen=True)
class Option:
    en: str
    zh: str


@dataclasses.dataclass(frozen=True)
class Question:
    """One question of the public bank (no answer in here)."""

    id: str
    lesson: str  # "16"
    kind: str
    points: float
    en: str
    zh: str
    options: tuple[Option, ...] = ()
    seed: int | None = None
    open: bool = False
    free_text: bool = False
    tolerance: float = 0.0
    rel_tolerance: float = 0.0
    experiment: str | None = None
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def letters(self) -> str:
        return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[: len(self.options)]

    @property
    def format(self) -> str:
        text = FORMATS[self.kind]
        if self.kind in ("number", "experiment"):
            parts = []
            if self.tolerance:
                parts.append(f"±{self.tolerance:g}")
            if self.rel_tolerance:
                parts.append(f"±{self.rel_tolerance:.0%}")
            if parts:
                text += f" (graded within {' or '.join(parts)})"
        if self.open:
            text += "; every defensible choice counts"
        return text


_QUESTION_KEYS = {
    "kind",
    "points",
    "en",
    "zh",
    "option",
    "seed",
    "open",
    "free_text",
    "tolerance",
    "rel_tolerance",
    "experiment",
    "params",
}


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in "WF"


def _flow(text: str) -> str:
    """Join the lines of a TOML multi-line string into one paragraph per
    blank-line-separated block (no space between two Chinese characters)."""
    paragraphs = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        joined = lines[0] if lines else ""
        for line in lines[1:]:
            glue = "" if _wide(joined[-1]) and _wide(line[0]) else " "
            joined += glue + line
        paragraphs.append(joined)
    return "\n".join(paragraphs)


def bank(folder: Path = BANK_DIR) -> dict[str, Question]:
    """Every question, in lesson order then file order.

    Raises:
        ValueError: naming the file and the question that is malformed.
    """
    questions: dict[str, Question] = {}
    for path in sorted(folder.glob("l[0-9][0-9].toml")):
        lesson = path.stem[1:]
        with open(path, "rb") as f:
            data = tomllib.load(f)
        for qid, entry in data.items():
            where = f"{path.name} [{qid}]"
            match = _ID.fullmatch(qid)
            if not match or match.group(1) != lesson:
                raise ValueError(f"{where}: ids in {path.name} are q{lesson}_N")
            if qid in questions:
                raise ValueError(f"{where}: id {qid} is used twice")
            unknown = set(entry) - _QUESTION_KEYS
            if unknown:
                raise ValueError(f"{where}: unknown field(s) {sorted(unknown)}")
            if entry.get("kind") not in KINDS:
                raise ValueError(f"{where}: kind must be one of {KINDS}")
            questions[qid] = Question(
                id=qid,
                lesson=lesson,
                kind=entry["kind"],
                points=float(entry.get("points", 1)),
                en=_flow(entry["en"]),
                zh=_flow(entry["zh"]),
                options=tuple(
                    Option(_flow(o["en"]), _flow(o["zh"]))
                    for o in entry.get("option", ())
                ),
                seed=entry.get("seed"),
                open=bool(entry.get("open", False)),
                free_text=bool(entry.get("free_text", False)),
                tolerance=float(entry.get("tolerance", 0.0)),
                rel_tolerance=float(entry.get("rel_tolerance", 0.0)),
                experiment=entry.get("experiment"),
                params=dict(entry.get("params", {})),
            )
    return questions


# -------------------------------------------------------------------- key
@dataclasses.dataclass(frozen=True)
class Key:
    """The instructor's key for one question."""

    id: str
    answer: Any = None
    range: tuple[float, float] | None = None
    defensible: tuple[str, ...] = ()
    explanation_en: str = ""
    explanation_zh: str = ""


def load_key(path: Path = KEY_FILE) -> dict[str, Key] | None:
    """The key, or None where it is not shipped (the student edition)."""
    if not path.exists():
        return None
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return {
        qid: Key(
            id=qid,
            answer=entry.get("answer"),
            range=tuple(entry["range"]) if "range" in entry else None,
            defensible=tuple(entry.get("defensible", ())),
            explanation_en=_flow(entry.get("explanation_en", "")),
            explanation_zh=_flow(entry.get("explanation_zh", "")),
        )
        for qid, entry in data.items()
    }


# ------------------------------------------------------------ normalisers
class AnswerError(ValueError):
    """An answer that cannot be read (as opposed to a wrong one)."""


_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_SUPERSCRIPT_RUN = re.compile(r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+")


def _text(value: str) -> str:
    """Superscripts to ^n, then full-width forms to ASCII (NFKC)."""
    value = _SUPERSCRIPT_RUN.sub(
        lambda m: "^" + m.group(0).translate(_SUPERSCRIPTS), value
    )
    value = unicodedata.normalize("NFKC", value)
    return value.replace("·", "*").replace("×", "*").replace("−", "-").strip()


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def parse_letters(value: Any, question: Question) -> tuple[str, ...]:
    """Letters of `question`'s options, sorted and without repeats.

    "a, c", "A C", "(a) (c)", "AC" and ["A", "c"] all read as ("A", "C").
    """
    if isinstance(value, str):
        text = _text(value).strip("[]{} ")
        parts = [p for p in re.split(r"[\s,;/&+，、和及]+", text) if p]
        tokens = [p.strip("()[].:'\"") for p in parts]
        if len(tokens) == 1 and len(tokens[0]) > 1 and tokens[0].isalpha():
            tokens = list(tokens[0])  # "AC"
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        tokens = [_text(v).strip("()[].: ") for v in value]
    else:
        raise AnswerError('expected letters, e.g. "A" or ["A", "C"]')
    letters = set()
    for token in tokens:
        upper = token.upper()
        if len(upper) != 1 or upper not in question.letters:
            raise AnswerError(
                f"{token!r} is not an option; the options are "
                f"{', '.join(question.letters)}"
            )
        letters.add(upper)
    return tuple(sorted(letters))


def parse_number(value: Any) -> float:
    """A finite number: 0.75, "0.75", "3/4", "7.5e-1", "40_000"."""
    if _is_number(value):
        number = float(value)
    elif isinstance(value, str):
        text = _text(value).replace("_", "").replace(" ", "")
        if "," in text:
            raise AnswerError(
                f"{value!r}: write decimals with a dot and no thousands "
                "separators"
            )
        if text.endswith("%"):
            raise AnswerError(f"{value!r}: write a plain number, not a percent")
        try:
            if re.fullmatch(r"[-+]?\d+(\.\d*)?/[-+]?\d+(\.\d*)?", text):
                top, bottom = text.split("/")
                number = float(top) / float(bottom)
            else:
                number = float(text)
        except (ValueError, ZeroDivisionError):
            raise AnswerError(f"{value!r} is not a number") from None
    else:
        raise AnswerError(f"expected a number, got {value!r}")
    if not math.isfinite(number):
        raise AnswerError(f"{value!r} is not a finite number")
    return number


def parse_shape(value: Any) -> tuple[int, ...]:
    """(2, 3, 4) from [2, 3, 4], "(2, 3, 4)", "[2,3,4]", "2x3x4", "2 × 3 × 4"
    or "2 * 3 * 4"; every axis a whole number."""
    if isinstance(value, list):
        items = value
    elif isinstance(value, str):
        text = _text(value).strip()
        if text[:1] in "([" and text[-1:] in ")]":
            text = text[1:-1]
        text = re.sub(r"(?<=\d)\s*[xX*]\s*(?=\d)", ",", text)
        items = [p for p in re.split(r"\s*,\s*|\s+", text.strip()) if p]
    else:
        raise AnswerError('expected a shape, e.g. [4, 5, 6] or "(4, 5, 6)"')
    dims: list[int] = []
    for item in items:
        if isinstance(item, int) and not isinstance(item, bool) and item >= 0:
            dims.append(item)
        elif isinstance(item, str) and re.fullmatch(r"\d+", item):
            dims.append(int(item))
        else:
            raise AnswerError(f"{item!r} is not an axis size")
    if not dims:
        raise AnswerError("the shape has no axes")
    return tuple(dims)


def show_shape(shape: Sequence[int]) -> str:
    inner = ", ".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


# Big-O expressions: a sum of monomials; a monomial maps a variable to its
# exponent. Coefficients drop out, as do terms another term dominates
# (every variable is at least 1, so n d <= n^2 d).
Monomial = frozenset  # of (variable, Fraction) pairs
Poly = frozenset  # of Monomial

_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d+)?)|(?P<log>log|ln|lg)(?:_(?P<base>\w))?"
    r"|(?P<var>[A-Za-z](?:_[A-Za-z0-9]+)?)|(?P<op>\*\*|[-+*/^()]))"
)


def _mono(pairs: Mapping[str, Fraction]) -> Monomial:
    return frozenset((v, e) for v, e in pairs.items() if e != 0)


def _times(a: Monomial, b: Monomial, sign: int = 1) -> Monomial:
    exps = dict(a)
    for v, e in b:
        exps[v] = exps.get(v, Fraction(0)) + sign * e
    return _mono(exps)


def _reduce(terms: set[Monomial]) -> Poly:
    def dominated(a: Monomial, b: Monomial) -> bool:
        da, db = dict(a), dict(b)
        return a != b and all(
            da.get(v, 0) <= db.get(v, 0) for v in set(da) | set(db)
        )

    return frozenset(
        t for t in terms if not any(dominated(t, u) for u in terms)
    )


class _Parser:
    def __init__(self, text: str):
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise AnswerError(f"cannot read {text[pos:]!r}")
            kind = m.lastgroup if m.lastgroup != "base" else "log"
            if m.group("log"):
                kind = "log"
            self.tokens.append((kind, m.group(0).strip()))
            pos = m.end()
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def parse(self) -> Poly:
        poly = self.sum()
        if self.peek() is not None:
            raise AnswerError(f"unexpected {self.peek()[1]!r}")
        return poly

    def sum(self) -> Poly:
        terms = set(self.product())
        while self.peek() == ("op", "+"):
            self.take()
            terms |= self.product()
        if self.peek() == ("op", "-"):
            raise AnswerError("a big-O expression has no '-'")
        return _reduce(terms)

    def product(self) -> Poly:
        poly = self.power()
        while True:
            token = self.peek()
            if token in (("op", "*"), ("op", "/")):
                self.take()
                right = self.power()
                if token[1] == "/":
                    if len(right) != 1:
                        raise AnswerError("cannot divide by a sum")
                    (divisor,) = right
                    poly = frozenset(_times(t, divisor, -1) for t in poly)
                    continue
                poly = frozenset(_times(a, b) for a in poly for b in right)
            elif token is not None and (
                token[0] in ("num", "var", "log") or token == ("op", "(")
            ):
                right = self.power()  # implicit product: "n^2 d", "knd"
                poly = frozenset(_times(a, b) for a in poly for b in right)
            else:
                return _reduce(set(poly))

    def power(self) -> Poly:
        base = self.atom()
        if self.peek() in (("op", "^"), ("op", "**")):
            self.take()
            exponent = self.exponent()
            if len(base) == 1:
                (mono,) = base
                return frozenset({_mono({v: e * exponent for v, e in mono})})
            if exponent.denominator != 1 or exponent < 0:
                raise AnswerError("a sum can only be raised to a whole power")
            result: Poly = frozenset({frozenset()})
            for _ in range(int(exponent)):
                result = frozenset(_times(a, b) for a in result for b in base)
            return result
        return base

    def exponent(self) -> Fraction:
        token = self.take() if self.peek() else ("end", "")
        if token == ("op", "("):
            sign = -1 if self.peek() == ("op", "-") else 1
            if sign < 0:
                self.take()
            top = self.take()
            value = Fraction(top[1])
            if self.peek() == ("op", "/"):
                self.take()
                value /= Fraction(self.take()[1])
            if self.take() != ("op", ")"):
                raise AnswerError("expected ')' after the exponent")
            return sign * value
        if token == ("op", "-") and self.peek() and self.peek()[0] == "num":
            return -Fraction(self.take()[1])
        if token[0] != "num":
            raise AnswerError("an exponent must be a number")
        return Fraction(token[1])

    def atom(self) -> Poly:
        if self.peek() is None:
            raise AnswerError("the expression ends too early")
        kind, text = self.take()
        if kind == "num":
            return frozenset({frozenset()})  # a constant factor drops out
        if kind == "var":
            return frozenset({_mono({text.lower(): Fraction(1)})})
        if kind == "log":
            base = text.partition("_")[2].lower()
            base = "" if not base or base.isdigit() else f"_{base}"
            parens = self.peek() == ("op", "(")
            if parens:
                self.take()
            arg = self.take() if self.peek() else ("end", "")
            if arg[0] != "var":
                raise AnswerError("log takes one variable, e.g. log(n)")
            if parens and self.take() != ("op", ")"):
                raise AnswerError("expected ')' after log's argument")
            return frozenset({_mono({f"log{base}({arg[1].lower()})": 1})})
        if (kind, text) == ("op", "("):
            inner = self.sum()
            if self.peek() != ("op", ")"):
                raise AnswerError("a '(' is not closed")
            self.take()
            return inner
        raise AnswerError(f"unexpected {text!r}")


def parse_expression(value: Any) -> Poly:
    """The big-O class of `value`: "O(n^2 d)", "O(d n²)", "n*n*d", "Θ(n²d)"."""
    if not isinstance(value, str):
        raise AnswerError('expected a big-O expression, e.g. "O(m k^2)"')
    text = _text(value)
    outer = re.fullmatch(r"(?:O|Θ|θ|Theta|Ο)\s*\((.*)\)", text, re.S)
    if outer:
        text = outer.group(1)
    if not text.strip():
        raise AnswerError("the expression is empty")
    return _Parser(text).parse()


def show_expression(poly: Poly) -> str:
    """The canonical text of a big-O class: O(d n^2 + d^2 n)."""

    def mono(m: Monomial) -> str:
        up = [(v, e) for v, e in sorted(m) if e > 0]
        down = [(v, -e) for v, e in sorted(m) if e < 0]

        def part(v: str, e: Fraction) -> str:
            if e == 1:
                return v
            return f"{v}^{e}" if e.denominator == 1 else f"{v}^({e})"

        top = " ".join(part(v, e) for v, e in up) or "1"
        if down:
            bottom = " ".join(part(v, e) for v, e in down)
            return f"{top}/{bottom}" if len(down) == 1 else f"{top}/({bottom})"
        return top

    def order(m: Monomial) -> tuple:
        return (-sum(e for _, e in m), mono(m))

    return "O(" + " + ".join(mono(m) for m in sorted(poly, key=order)) + ")"


# ---------------------------------------------------------- answers file
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


def _toml_error(exc: Exception, path: Path, first_line: int) -> str:
    """tomllib's message with the line counted in the whole file."""
    message = str(exc)
    match = _AT.search(message)
    if match:
        line = int(match.group(1)) + first_line - 1
        where = f"line {line}, column {match.group(2)}"
        message = message[: match.start()]
    else:
        where = f"line {first_line}"
        message = message.replace("(at end of document)", "").strip()
    return f"{display(path)} {where}: {message}"


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
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        result.syntax_error = _toml_error(exc, path, 1)
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
            result.errors[qid] = (
                f"{display(path)} line {start + 1}: [{qid}] is declared "
                f"twice (first at line {result.lines[qid]})"
            )
            result.tables.pop(qid)
            continue
        if qid is not None and qid in result.errors:
            continue
        try:
            data = tomllib.loads(chunk)
        except tomllib.TOMLDecodeError as exc:
            if qid is not None:
                result.errors[qid] = _toml_error(exc, path, first)
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


# ------------------------------------------------------------------ judge
@dataclasses.dataclass(frozen=True)
class Verdict:
    """How one answer fares.

    status: "correct", "wrong", "malformed" (cannot be read),
    "not_answered", "ungraded" (readable, but the key is not here) or
    "recorded" (free text only, for the instructor).
    """

    status: str
    message: str
    text: str = ""


def _reading(question: Question, value: Any) -> tuple[Any, str]:
    """(the normalised answer, how it reads) or AnswerError."""
    kind = question.kind
    if kind in ("one_of", "several_of"):
        letters = parse_letters(value, question)
        if kind == "one_of" and len(letters) != 1:
            raise AnswerError(f"choose one letter, got {', '.join(letters)}")
        return letters, ", ".join(letters)
    if kind in ("number", "experiment"):
        number = parse_number(value)
        return number, f"{number:g}"
    if kind == "shape":
        shape = parse_shape(value)
        return shape, show_shape(shape)
    poly = parse_expression(value)
    return poly, show_expression(poly)


def expected_reading(question: Question, key: Key) -> Any:
    """The key's answer, normalised as a student's would be."""
    if question.kind == "several_of" and question.open:
        return parse_letters(list(key.defensible), question)
    if question.kind == "number" and key.range is not None:
        return tuple(float(x) for x in key.range)
    return _reading(question, key.answer)[0]


def _close(question: Question, got: float, expected: float) -> bool:
    tol = question.tolerance + question.rel_tolerance * abs(expected)
    return abs(got - expected) <= max(tol, 1e-12 * max(1.0, abs(expected)))


def judge(
    question: Question,
    table: Mapping[str, Any] | None,
    key: Key | None,
    expected: float | None = None,
) -> Verdict:
    """Judge one answer table against the key.

    Args:
        question: from the bank.
        table: the answer's table (`answer`, optional `text`), or None.
        key: the key of this question, or None where the key is absent.
        expected: an experiment's value, computed by the grader.
    """
    qid = question.id
    table = dict(table or {})
    unknown = sorted(set(table) - {"answer", "text"})
    if unknown:
        return Verdict(
            "malformed",
            f"{qid}: unknown key(s) {', '.join(map(repr, unknown))} in "
            f"[{qid}]; write answer = ... (and text = ... where asked)",
        )
    text = table.get("text", "")
    if not isinstance(text, str):
        return Verdict("malformed", f"{qid}: text must be a string")
    value = table.get("answer")
    if is_empty(value):
        if question.free_text and text.strip():
            return Verdict(
                "recorded",
                f"{qid}: your free text is recorded for your instructor; "
                "choose letters too for the automatic grade",
                text,
            )
        return Verdict("not_answered", f"{qid}: not answered", text)
    try:
        got, reading = _reading(question, value)
    except AnswerError as exc:
        return Verdict(
            "malformed",
            f"{qid}: cannot read your answer ({exc}); expected "
            f"{question.format}",
            text,
        )
    if question.kind == "experiment":
        if expected is None:
            raise ValueError(f"{qid}: the experiment's value is missing")
        ok = _close(question, got, expected)
    elif key is None:
        return Verdict(
            "ungraded",
            f"{qid}: answer recorded ({reading}); graded by your instructor",
            text,
        )
    else:
        want = expected_reading(question, key)
        if question.kind == "several_of" and question.open:
            ok = bool(got) and set(got) <= set(want)
        elif question.kind == "number" and key.range is not None:
            ok = want[0] <= got <= want[1]
        elif question.kind == "number":
            ok = _close(question, got, want)
        elif question.kind == "shape":
            ok = got == want
        else:
            ok = got == want
    if ok:
        return Verdict("correct", "", text)
    extra = ""
    if question.open:
        extra = " (at least one choice is not defensible)"
    return Verdict(
        "wrong",
        f"{qid}: not correct{extra}; your answer reads as {reading}",
        text,
    )


# --------------------------------------------------------------- template
def _width(text: str) -> int:
    return sum(2 if _wide(c) else 1 for c in text)


_CLOSING = set("，。、；：！？）》」』”’")
_OPENING = set("（《「『“‘")


def _lines(text: str, limit: int) -> list[str]:
    """Lines of at most `limit` columns (a Chinese character takes two);
    words stay whole, lines may break between Chinese characters."""
    out = []
    for paragraph in text.splitlines() or [""]:
        line = ""
        for token in re.findall(r"[\x21-\x7e]+|\s+|.", paragraph):
            if token.isspace():
                token = " "
            closing = token in _CLOSING or line[-1:] in _OPENING
            if line and _width(line + token) > limit and not closing:
                out.append(line.rstrip())
                line = "" if token == " " else token
            else:
                line += token
        out.append(line.rstrip())
    return out


def wrap(text: str, indent: str = "  ", width: int = 78) -> str:
    """`text` wrapped to `width` columns, every line indented."""
    return "\n".join(
        (indent + line).rstrip() for line in _lines(text, width - len(indent))
    )


def _wrap(prefix: str, text: str, width: int = 78) -> list[str]:
    """Comment lines: `# prefix` on the first, aligned after it."""
    lines = _lines(text, width - 2 - len(prefix))
    return [
        f"# {prefix if i == 0 else ' ' * len(prefix)}{line}".rstrip()
        for i, line in enumerate(lines)
    ]


def template(questions: Mapping[str, Question] | None = None) -> str:
    """The empty answers file: every question as comments, then its table."""
    from m2t import curriculum

    questions = bank() if questions is None else questions
    titles = {lesson.id: lesson.title for lesson in curriculum.lessons()}
    out = [
        "# The question list / 问题列表 -- your answers.",
        "# Generated by `m2t answers-template`; fill in each `answer = ...`.",
        "# Grade with `m2t grade questions`; `m2t explain` shows the",
        "# explanations of the questions you got right.",
        "#",
        '# Letters: answer = "B" or "A, C" or ["A", "C"]. Numbers:',
        '# answer = 0.25. Shapes: answer = [4, 5, 6] or "(4, 5, 6)".',
        '# Big-O: answer = "O(m k^2)". Where a question asks for free text,',
        '# text = "..." goes to your instructor and is never marked wrong.',
        "# Lines starting with # are comments.",
    ]
    lesson = None
    for q in questions.values():
        if q.lesson != lesson:
            lesson = q.lesson
            out += ["", "", f"# {'=' * 76}"]
            out += [f"# Lesson {lesson}: {titles.get(lesson, '')}"]
            out += [f"# {'=' * 76}"]
        seed = f" | seed question {q.seed}" if q.seed else ""
        points = f"{q.points:g} point{'s' if q.points != 1 else ''}"
        out += ["", f"# --- {q.id} | {q.kind} | {points}{seed}"]
        out += _wrap("zh: ", q.zh)
        out += _wrap("en: ", q.en)
        for letter, option in zip(q.letters, q.options, strict=True):
            out += _wrap(f"  {letter}. ", option.en)
            out += _wrap("     ", option.zh)
        out += _wrap("format: ", q.format)
        if q.free_text:
            out += _wrap("text: ", "optional free text for your instructor")
        out += [f"[{q.id}]", 'answer = ""']
        if q.free_text:
            out += ['text = ""']
    return "\n".join(out) + "\n"


def stale(path: Path = TEMPLATE) -> list[str]:
    """Problems when `path` is not what `m2t answers-template` writes."""
    want = template()
    if not path.exists():
        return [f"{display(path)} is missing: run `m2t answers-template`"]
    if path.read_text(encoding="utf-8") != want:
        return [f"{display(path)} is stale: run `m2t answers-template`"]
    return []


def any_answered(path: Path) -> bool:
    """Whether an answers file has at least one answer filled in."""
    answers = read_answers(path)
    return any(
        not is_empty(t.get("answer")) for t in answers.tables.values()
    ) or bool(answers.errors)


# ------------------------------------------------------------- self-check
def problems(
    questions: Mapping[str, Question] | None = None,
    key: Mapping[str, Key] | None = None,
    experiments: Mapping[str, Any] | None = None,
) -> list[str]:
    """What is wrong with the bank and the key (the self-check runs this)."""
    from m2t import curriculum

    out = []
    try:
        questions = bank() if questions is None else questions
    except (ValueError, KeyError, tomllib.TOMLDecodeError) as exc:
        return [f"questions: the bank cannot be read: {exc}"]
    key = load_key() if key is None else key
    lessons = {lesson.id for lesson in curriculum.lessons()}
    seeds: dict[int, list[str]] = {}
    for q in questions.values():
        where = f"questions: {q.id}"
        if q.lesson not in lessons:
            out.append(f"{where}: lesson {q.lesson} is not in curriculum.toml")
        if not q.en or not q.zh:
            out.append(f"{where}: the text needs English and Chinese")
        if q.points <= 0:
            out.append(f"{where}: points must be positive")
        if q.seed is not None:
            seeds.setdefault(q.seed, []).append(q.id)
        choice = q.kind in ("one_of", "several_of")
        if choice and len(q.options) < 2:
            out.append(f"{where}: a {q.kind} question needs options")
        if not choice and q.options:
            out.append(f"{where}: a {q.kind} question has no options")
        if any(not o.en or not o.zh for o in q.options):
            out.append(f"{where}: every option needs English and Chinese")
        if q.open and q.kind != "several_of":
            out.append(f"{where}: only several_of questions can be open")
        tolerant = bool(q.tolerance or q.rel_tolerance)
        if q.kind == "experiment" and not tolerant:
            out.append(f"{where}: an experiment needs a tolerance")
        if (q.kind == "experiment") != bool(q.experiment):
            out.append(f"{where}: `experiment` names the grader's reference")
        if experiments is not None and q.experiment:
            if q.experiment not in experiments:
                out.append(f"{where}: no reference {q.experiment!r}")
    for seed in SEEDS:
        ids = seeds.get(seed, [])
        if len(ids) != 1:
            out.append(
                f"questions: seed question {seed} must be in the bank once "
                f"(found {ids or 'none'})"
            )
    if key is None:
        return out
    for qid in sorted(set(key) - set(questions)):
        out.append(f"questions: the key has {qid}, which the bank has not")
    for q in questions.values():
        k = key.get(q.id)
        where = f"questions: {q.id}"
        if k is None:
            out.append(f"{where}: no key in {display(KEY_FILE)}")
            continue
        if not k.explanation_en or not k.explanation_zh:
            out.append(f"{where}: the key needs explanations (en and zh)")
        if q.kind == "experiment":
            if k.answer is not None:
                out.append(
                    f"{where}: an experiment's value is computed by the "
                    "grader, not written in the key"
                )
            continue
        if q.open and (k.answer is not None or not k.defensible):
            out.append(f"{where}: an open question's key lists `defensible`")
            continue
        if not q.open and k.answer is None and k.range is None:
            out.append(f"{where}: the key has no answer")
            continue
        try:
            expected_reading(q, k)
        except AnswerError as exc:
            out.append(f"{where}: the key's answer cannot be read: {exc}")
    return out
