"""Which commands the course folder can run.

The authoring commands (`m2t dev ...` and their old top-level names) need
solutions/ and m2t/authoring/, `m2t train` also training/; the student
edition has none of them. There each of those commands is registered
hidden: left out of `m2t --help` (and of its list of commands), and
answering one line, "... needs the full repository", with exit status 2,
whatever arguments it is given. Nothing here imports m2t.authoring.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import sys

from m2t import i18n

HIDDEN = "m2t_hidden"
"""The attribute that marks a hidden command's parser."""


def full_repository() -> bool:
    """True in a checkout of the full repository: solutions/ beside the
    harness and m2t.authoring importable (the student edition has
    neither)."""
    from m2t import ROOT

    if not (ROOT / "solutions").is_dir():
        return False
    return importlib.util.find_spec("m2t.authoring") is not None


def training() -> bool:
    """True where `m2t train` can run: the full repository with
    training/."""
    from m2t import ROOT

    return full_repository() and (ROOT / "training").is_dir()


def hide(sub: argparse._SubParsersAction, name: str, message: str) -> None:
    """Register command `name` on `sub` hidden: no help line, any
    arguments accepted (`m2t.cli.main` lets a hidden command's extra
    arguments through), and running it prints `message` (an m2t/messages
    key with a `{name}` field) to stderr and exits 2."""
    parser = sub.add_parser(name, add_help=False)
    setattr(parser, HIDDEN, True)
    parser.set_defaults(func=functools.partial(_refuse, name, message))


def _refuse(name: str, message: str, args: argparse.Namespace) -> int:
    print(i18n.text(message, name=name), file=sys.stderr)
    return 2


def shown(sub: argparse._SubParsersAction) -> list[str]:
    """The names of the commands on `sub` that are not hidden, in the
    order they were registered."""
    return [
        name
        for name, parser in sub.choices.items()
        if not getattr(parser, HIDDEN, False)
    ]


def is_hidden(args: argparse.Namespace) -> bool:
    """True when `args` runs a hidden command."""
    func = getattr(args, "func", None)
    return isinstance(func, functools.partial) and func.func is _refuse
