"""The student loop's commands: `m2t hint`, `watch`, `progress`, `reset`
and `notebook` (registered on the `m2t` parser by `register`).

m2t hint 16 [--all | --reset]     the next hint for lesson 16's next TODO
m2t watch [16] [--poll]           regrade the lesson you edit on every save
m2t progress                      done / in progress / not started, points
m2t reset 16 [--yes]              back to the skeleton (a backup is kept)
m2t notebook 16                   write notebooks/l16_*.ipynb
"""

from __future__ import annotations

import argparse
import sys

from m2t import i18n
from m2t import settings


def cmd_hint(args: argparse.Namespace) -> int:
    from m2t import curriculum
    from m2t.student import hints

    lesson = curriculum.find(args.lesson)
    if args.reset:
        hints.reset(lesson)
        print(i18n.text("hint.locked", tag=lesson.tag, arg=lesson.arg))
        return 0
    print(hints.show(lesson, repeat=args.all))
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    from m2t.console import quiet_native_stderr
    from m2t.student import watch

    with quiet_native_stderr(True):
        return watch.main(
            args.lesson,
            impl=args.impl,
            interval=args.interval,
            events=not args.poll,
            max_grades=args.max_grades,
            timeout=args.timeout,
        )


def cmd_progress(args: argparse.Namespace) -> int:
    from m2t.grading import impl as _impl
    from m2t.grading import runner as grading
    from m2t.student import progress

    rows = progress.statuses(_impl.resolve(args.impl), grading.load_state())
    print(progress.render(rows))
    return 0


def cmd_reset(args: argparse.Namespace) -> int:
    from m2t import ROOT
    from m2t import curriculum
    from m2t.grading import runner as grading
    from m2t.student import reset

    lesson = curriculum.find(args.lesson)
    if lesson.is_question_list:
        raise ValueError(i18n.text("reset.answers"))
    path = ROOT / "lessons" / lesson.filename
    text, origin = reset.skeleton(lesson)
    shown = path.relative_to(ROOT)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        print(i18n.text("reset.already", path=shown))
        return 0
    if not args.yes:
        print(
            i18n.text(
                "reset.ask",
                path=shown,
                origin=origin,
                backups=settings.BACKUPS.relative_to(ROOT),
            ),
            end="",
            flush=True,
        )
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            print(i18n.text("reset.unchanged"))
            return 1
    kept = reset.backup(path) if path.exists() else None
    reset.restore(lesson, text)
    grading.save_state([grading.LessonResult(lesson, [])], "lessons")
    if kept:
        print(i18n.text("reset.kept", path=kept.relative_to(ROOT)))
    print(i18n.text("reset.restored", path=shown, origin=origin))
    return 0


def cmd_notebook(args: argparse.Namespace) -> int:
    from m2t import ROOT
    from m2t import curriculum
    from m2t.student import notebooks

    lesson = curriculum.find(args.lesson)
    try:
        if args.execute:
            notebooks.execute(lesson)
            target = notebooks.source(lesson).with_suffix(".ipynb")
        else:
            target = notebooks.write_ipynb(lesson)
    except ModuleNotFoundError as exc:
        if exc.name not in ("jupytext", "nbclient"):
            raise
        print(i18n.text("notebook.needs_jupytext"), file=sys.stderr)
        return 2
    print(i18n.text("notebook.wrote", path=target.relative_to(ROOT)))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Register the student loop's subcommands on the `m2t` parser."""
    hint = sub.add_parser("hint", help=i18n.text("help.hint.command"))
    hint.add_argument("lesson", help=i18n.text("help.lesson"))
    group = hint.add_mutually_exclusive_group()
    group.add_argument(
        "--all", action="store_true", help=i18n.text("help.hint.all")
    )
    group.add_argument(
        "--reset", action="store_true", help=i18n.text("help.hint.reset")
    )
    hint.set_defaults(func=cmd_hint)

    watch = sub.add_parser("watch", help=i18n.text("help.watch.command"))
    watch.add_argument("lesson", nargs="?", help=i18n.text("help.watch.lesson"))
    watch.add_argument(
        "--impl", default="lessons", help=i18n.text("help.watch.impl")
    )
    watch.add_argument(
        "--poll", action="store_true", help=i18n.text("help.watch.poll")
    )
    watch.add_argument(
        "--interval",
        type=float,
        default=0.25,
        help=i18n.text("help.watch.interval"),
    )
    watch.add_argument(
        "--max-grades", type=int, help=i18n.text("help.watch.max_grades")
    )
    watch.add_argument(
        "--timeout",
        type=float,
        default=settings.CHECK_TIMEOUT,
        help=i18n.text("help.timeout", seconds=f"{settings.CHECK_TIMEOUT:g}"),
    )
    watch.set_defaults(func=cmd_watch)

    prog = sub.add_parser("progress", help=i18n.text("help.progress.command"))
    prog.add_argument(
        "--impl", default="lessons", help=i18n.text("help.progress.impl")
    )
    prog.set_defaults(func=cmd_progress)

    rst = sub.add_parser("reset", help=i18n.text("help.reset.command"))
    rst.add_argument("lesson", help=i18n.text("help.lesson"))
    rst.add_argument(
        "--yes", action="store_true", help=i18n.text("help.reset.yes")
    )
    rst.set_defaults(func=cmd_reset)

    nb = sub.add_parser("notebook", help=i18n.text("help.notebook.command"))
    nb.add_argument("lesson", help=i18n.text("help.lesson"))
    nb.add_argument(
        "--execute",
        action="store_true",
        help=i18n.text("help.notebook.execute"),
    )
    nb.set_defaults(func=cmd_notebook)
