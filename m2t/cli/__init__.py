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
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence

from m2t import i18n
from m2t import settings
from m2t.cli import dev
from m2t.cli import grade
from m2t.cli import questions
from m2t.cli import student
from m2t.cli import train

settings.quiet_tensorflow()

GROUPS = (grade, questions, student, train, dev)
"""The command modules, in the order `m2t --help` lists them."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="m2t",
        description="mlp-to-transformer: lessons, graders, training.",
    )
    parser.add_argument(
        "--lang", choices=i18n.LANGUAGES, help=i18n.text("cli.lang_help")
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        try:
            parser = build_parser()
            args = parser.parse_args(argv)
            if args.lang:
                i18n.choose(args.lang)
            with i18n.using(args.lang):
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
