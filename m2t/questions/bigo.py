"""Big-O answers: "O(n^2 d)" = "O(d n^2)" = "O(n²d)" = "n*n*d".

An expression is read as a sum of monomials, a monomial maps a variable to
its exponent; constants and dominated terms drop out. The parser is bounded
so that a short answer cannot cost the judge time or memory: at most
`MAX_LENGTH` characters, exponents of at most `MAX_EXPONENT`, at most
`MAX_TERMS` terms at any step and `MAX_DEPTH` nested parentheses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from m2t.i18n import text as _text
from m2t.questions.forms import AnswerError
from m2t.questions.forms import plain_text

MAX_LENGTH = 200
"""Characters of an answer, O( ) included."""
MAX_EXPONENT = 16
"""Largest |exponent| (and largest denominator of a fractional one)."""
MAX_TERMS = 64
"""Most terms a sum may have at any step (while expanding products too)."""
MAX_DEPTH = 16
"""Most nested parentheses."""
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
    for v, e in pairs.items():
        if abs(e) > MAX_EXPONENT:
            raise AnswerError(
                _text(
                    "answer.exponent_above", term=f"{v}^{e}", most=MAX_EXPONENT
                )
            )
    return frozenset((v, e) for v, e in pairs.items() if e != 0)


def _bounded(poly: Poly) -> Poly:
    if len(poly) > MAX_TERMS:
        raise AnswerError(_text("answer.too_many_terms", most=MAX_TERMS))
    return poly


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


def _product(a: Poly, b: Poly) -> Poly:
    if len(a) * len(b) > MAX_TERMS:  # before expanding: no quadratic reduce
        raise AnswerError(_text("answer.too_many_terms", most=MAX_TERMS))
    return _reduce({_times(x, y) for x in a for y in b})


def _exponent(value: Fraction) -> Fraction:
    if abs(value) > MAX_EXPONENT or value.denominator > MAX_EXPONENT:
        raise AnswerError(
            _text("answer.exponent_not_read", value=value, most=MAX_EXPONENT)
        )
    return value


class _Parser:
    def __init__(self, text: str):
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise AnswerError(
                    _text("answer.cannot_read", text=repr(text[pos:]))
                )
            kind = m.lastgroup if m.lastgroup != "base" else "log"
            if m.group("log"):
                kind = "log"
            self.tokens.append((kind, m.group(0).strip()))
            pos = m.end()
        self.i = 0
        self.depth = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        if self.i >= len(self.tokens):
            raise AnswerError(_text("answer.ends_early"))
        token = self.tokens[self.i]
        self.i += 1
        return token

    def parse(self) -> Poly:
        poly = self.sum()
        if self.peek() is not None:
            raise AnswerError(
                _text("answer.unexpected", token=repr(self.peek()[1]))
            )
        return poly

    def sum(self) -> Poly:
        terms = set(self.product())
        while self.peek() == ("op", "+"):
            self.take()
            terms |= self.product()
            _bounded(terms)
        if self.peek() == ("op", "-"):
            raise AnswerError(_text("answer.no_minus"))
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
                        raise AnswerError(_text("answer.divide_by_sum"))
                    (divisor,) = right
                    poly = frozenset(_times(t, divisor, -1) for t in poly)
                    continue
                poly = _product(poly, right)
            elif token is not None and (
                token[0] in ("num", "var", "log") or token == ("op", "(")
            ):
                right = self.power()  # implicit product: "n^2 d", "knd"
                poly = _product(poly, right)
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
                raise AnswerError(_text("answer.sum_power"))
            result: Poly = frozenset({frozenset()})
            for _ in range(int(exponent)):
                result = _product(result, base)
            return result
        return base

    def exponent(self) -> Fraction:
        token = self.take() if self.peek() else ("end", "")
        if token == ("op", "("):
            sign = -1 if self.peek() == ("op", "-") else 1
            if sign < 0:
                self.take()
            value = self.number()
            if self.peek() == ("op", "/"):
                self.take()
                bottom = self.number()
                if bottom == 0:
                    raise AnswerError(_text("answer.divide_by_zero"))
                value /= bottom
            if self.take() != ("op", ")"):
                raise AnswerError(_text("answer.close_exponent"))
            return _exponent(sign * value)
        if token == ("op", "-") and self.peek() and self.peek()[0] == "num":
            return _exponent(-self.number())
        if token[0] != "num":
            raise AnswerError(_text("answer.exponent_number"))
        return _exponent(Fraction(token[1]))

    def number(self) -> Fraction:
        kind, text = self.take()
        if kind != "num":
            raise AnswerError(_text("answer.exponent_number"))
        return Fraction(text)

    def atom(self) -> Poly:
        if self.peek() is None:
            raise AnswerError(_text("answer.ends_early"))
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
                raise AnswerError(_text("answer.log_one"))
            if parens and self.take() != ("op", ")"):
                raise AnswerError(_text("answer.close_log"))
            return frozenset({_mono({f"log{base}({arg[1].lower()})": 1})})
        if (kind, text) == ("op", "("):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise AnswerError(_text("answer.too_deep", most=MAX_DEPTH))
            inner = self.sum()
            if self.peek() != ("op", ")"):
                raise AnswerError(_text("answer.not_closed"))
            self.take()
            self.depth -= 1
            return inner
        raise AnswerError(_text("answer.unexpected", token=repr(text)))


def parse_expression(value: Any) -> Poly:
    """The big-O class of `value`: "O(n^2 d)", "O(d n²)", "n*n*d", "Θ(n²d)"."""
    if not isinstance(value, str):
        raise AnswerError(_text("answer.expression_expected"))
    if len(value) > MAX_LENGTH:
        raise AnswerError(_text("answer.too_long", most=MAX_LENGTH))
    text = plain_text(value)
    outer = re.fullmatch(r"(?:O|Θ|θ|Theta|Ο)\s*\((.*)\)", text, re.S)
    if outer:
        text = outer.group(1)
    if not text.strip():
        raise AnswerError(_text("answer.empty"))
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
