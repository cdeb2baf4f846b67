"""`m2t`: the course's command line.

m2t list                          the lessons, in order, with their status
m2t grade [LESSON ...]            grade your lessons (all by default)
m2t grade --impl solutions        grade the reference solutions
m2t answers-template [--check]    write lessons/answers.toml (the questions)
m2t explain [ID ...]              explanations of your correct answers
m2t hint 16 / watch / progress / reset 16 / notebook 16: the student loop
m2t train MODEL / m2t train --list  train a reference model (instructors)
m2t dev make-lessons / check / mutants / release: authoring (also under
                                  their old top-level names)
m2t --lang zh ...                 print in Chinese (or en); remembered

Each command group is a module here with a `register(subparsers)`; the
commands import what they need when they run, so `m2t --help` is quick.
Every help text comes from m2t/messages (`help.*`), and argparse's own
words (usage, its section titles, its errors) from `argparse.*` there, so
`m2t --lang zh --help` is Chinese throughout.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

from m2t import i18n
from m2t import settings
from m2t.cli import dev
from m2t.cli import grade
from m2t.cli import questions
from m2t.cli import scope
from m2t.cli import student
from m2t.cli import train

settings.quiet_tensorflow()

GROUPS = (grade, questions, student, train, dev)
"""The command modules, in the order `m2t --help` lists them."""


class _Formatter(argparse.HelpFormatter):
    """argparse's help, its "usage:" in the run's language and its lines
    wrapped by terminal columns (a Chinese character takes two)."""

    def add_usage(self, usage, actions, groups, prefix=None) -> None:
        prefix = prefix if prefix is not None else i18n.text("argparse.usage")
        super().add_usage(usage, actions, groups, prefix)

    def _split_lines(self, text: str, width: int) -> list[str]:
        return i18n.wrap(" ".join(text.split()), width).splitlines()


class Parser(argparse.ArgumentParser):
    """An `ArgumentParser` that speaks the run's language: its section
    titles, `-h`'s help and its error messages from m2t/messages
    (`argparse.*`); each subcommand's parser is one too."""

    def __init__(self, *args, add_help: bool = True, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, add_help=False, **kwargs)
        # argparse names its two default groups itself (no public way in)
        self._positionals.title = i18n.text("argparse.positionals")
        self._optionals.title = i18n.text("argparse.options")
        if add_help:
            self.add_argument(
                "-h",
                "--help",
                action="help",
                default=argparse.SUPPRESS,
                help=i18n.text("argparse.help"),
            )

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        line = i18n.text(
            "argparse.error", prog=self.prog, message=_translated(message)
        )
        self.exit(2, line + "\n")


_ARGPARSE_ERRORS = (
    "required",
    "one_required",
    "unrecognized",
    "invalid_choice",
    "invalid_value",
    "expected_one",
    "not_allowed",
)
"""argparse's error messages that m2t/messages has, as `argparse.<key>`
(its English template is the one argparse writes)."""


def _pattern(template: str) -> re.Pattern[str]:
    """An English template of m2t/messages as a pattern whose groups are
    its fields."""
    parts = re.split(r"\{(\w+)\}", template)
    return re.compile(
        "".join(
            f"(?P<{x}>.+?)" if i % 2 else re.escape(x)
            for i, x in enumerate(parts)
        )
    )


def _translated(message: str) -> str:
    """argparse's error `message` in the run's language: its English read
    back through `argparse.*`'s English templates ("argument --lang:
    invalid choice: 'fr' (choose from 'en', 'zh')"); one it does not know
    stays as argparse wrote it."""
    en = i18n.MESSAGES.entries("en")
    outer = _pattern(en["argparse.argument"]).fullmatch(message)
    if outer:
        inner = _translated(outer["message"])
        return i18n.text(
            "argparse.argument", argument=outer["argument"], message=inner
        )
    for key in _ARGPARSE_ERRORS:
        found = _pattern(en[f"argparse.{key}"]).fullmatch(message)
        if found:
            return i18n.text(f"argparse.{key}", **found.groupdict())
    return message


def _lang_in(argv: Sequence[str] | None) -> str | None:
    """The language `--lang` gives in `argv`, read before the parser is
    built (its help texts are in it), or None: no flag, or a bad value
    (which the parser then refuses)."""
    args = list(sys.argv[1:] if argv is None else argv)
    for i, arg in enumerate(args):
        if arg == "--":
            break
        value = arg.partition("=")[2] if arg.startswith("--lang=") else None
        if arg == "--lang" and i + 1 < len(args):
            value = args[i + 1]
        if value is not None:
            return value if value in i18n.LANGUAGES else None
    return None


def build_parser() -> argparse.ArgumentParser:
    """The `m2t` parser, its texts in the run's language."""
    parser = Parser(prog="m2t", description=i18n.text("help.m2t"))
    parser.add_argument(
        "--lang", choices=i18n.LANGUAGES, help=i18n.text("cli.lang_help")
    )
    sub = parser.add_subparsers(
        dest="command", required=False, title=i18n.text("help.commands")
    )
    for group in GROUPS:
        group.register(sub)
    shown = scope.shown(sub)
    if len(shown) < len(sub.choices):  # help lists none of scope.hide's
        sub.metavar = "{" + ",".join(shown) + "}"
    return parser


def _parse(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None
) -> argparse.Namespace:
    """`argv` parsed; a hidden command (scope.hide) takes any arguments,
    every other refuses one it does not know as `parse_args` would. No
    command is an error too, except `m2t --lang zh` alone, which only
    switches the language."""
    args, extra = parser.parse_known_args(argv)
    if extra and not scope.is_hidden(args):
        parser.error(
            i18n.MESSAGES.entries("en")["argparse.unrecognized"].format(
                args=" ".join(extra)
            )
        )
    if args.command is None and not args.lang:
        parser.error(
            i18n.MESSAGES.entries("en")["argparse.required"].format(
                names="command"
            )
        )
    return args


def main(argv: Sequence[str] | None = None) -> int:
    try:
        try:
            with i18n.using(_lang_in(argv)):
                parser = build_parser()
                args = _parse(parser, argv)
            if args.lang:
                i18n.choose(args.lang)
            with i18n.using(args.lang):
                if args.command is None:  # `m2t --lang zh`: switched
                    print(i18n.text("cli.lang_saved", language=args.lang))
                    return 0
                return int(args.func(args) or 0)
        except ValueError as exc:
            print(_error(exc), file=sys.stderr)
            return 2
    except BrokenPipeError:  # `m2t hint 16 | head`: the reader has gone
        # Point stdout at /dev/null so the final flush at exit is quiet, and
        # end as a process killed by SIGPIPE would (`yes | head`).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 128 + signal.SIGPIPE


def _error(exc: ValueError) -> str:
    """`m2t: error: ...` in the run's language (in English when the
    language setting itself is what is wrong)."""
    try:
        return i18n.text("cli.error", error=exc)
    except ValueError:
        return i18n.text("cli.error", lang="en", error=exc)
