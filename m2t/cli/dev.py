"""`m2t dev ...`: the authoring commands (the full repository only).

m2t dev make-lessons [--check]    regenerate lessons/ from solutions/
    [--markdown docs/specs.md]    (and the TODO and hint figures)
m2t dev check [LESSON ...]        the gate: every rule of
    [--rules-only]                m2t.authoring.rules, then the grades
m2t dev mutants [LESSON ...]      every known mistake caught and named
m2t dev mutation [LESSON ...]     cosmic-ray's mutants of the solutions
m2t dev release --out DIR         build the student edition
m2t dev release --gradescope autograder.zip [LESSON ...]  Gradescope's bundle
m2t dev new-lesson NN topic       write every file of a new lesson

The first four are also registered at the top level under their old names
(`m2t check`, `m2t make-lessons`, ...), so existing scripts and docs keep
working.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path

from m2t import i18n


def _full_repository(cmd: Callable[[argparse.Namespace], int]):
    """`cmd`, refused with a plain message where solutions/ (and so the
    authoring modules) are absent: the student edition."""

    @functools.wraps(cmd)
    def run(args: argparse.Namespace) -> int:
        from m2t import ROOT

        if not (ROOT / "solutions").is_dir():
            name = getattr(args, "dev_command", None) or args.command
            print(i18n.text("cli.full_repository", name=name), file=sys.stderr)
            return 2
        return cmd(args)

    return run


@_full_repository
def cmd_make_lessons(args: argparse.Namespace) -> int:
    from m2t import ROOT
    from m2t.authoring import make_lessons

    solutions = Path(args.solutions or ROOT / "solutions")
    lessons = Path(args.lessons or ROOT / "lessons")
    try:
        if args.markdown:
            found = make_lessons.specs(solutions, lessons / "hints")
            Path(args.markdown).write_text(make_lessons.specs_table(found))
            print(f"wrote {args.markdown}")
        if args.check:
            problems = make_lessons.stale(solutions, lessons)
            for problem in problems:
                print(problem, file=sys.stderr)
            if problems:
                print(
                    "lessons/ is stale: run `m2t make-lessons` and commit.",
                    file=sys.stderr,
                )
            found = make_lessons.specs(solutions, lessons / "hints")
            print("\n".join(make_lessons.spec_summary(found)))
            dictated = make_lessons.spec_problems(found)
            for problem in dictated:
                print(problem, file=sys.stderr)
            return 1 if problems or dictated else 0
        for path in make_lessons.write(solutions, lessons):
            print(f"wrote {path}")
    except ValueError as exc:  # a MarkerError, or a malformed hints file
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


@_full_repository
def cmd_check(args: argparse.Namespace) -> int:
    from m2t import curriculum
    from m2t.authoring import selfcheck
    from m2t.console import quiet_native_stderr

    with quiet_native_stderr(True):
        problems = selfcheck.run(
            curriculum.select(args.lessons),
            skeletons=Path(args.lessons_dir) if args.lessons_dir else None,
            say=print,
            rules_only=args.rules_only,
        )
    for problem in problems:
        print(problem)
    print("check: ok" if not problems else f"check: {len(problems)} problem(s)")
    return 1 if problems else 0


@_full_repository
def cmd_mutants(args: argparse.Namespace) -> int:
    from m2t import curriculum
    from m2t.authoring import mutants
    from m2t.console import quiet_native_stderr

    with quiet_native_stderr(True):
        outcomes = mutants.run(curriculum.select(args.lessons))
    table = mutants.markdown(outcomes)
    print(table, end="")
    if args.markdown:
        Path(args.markdown).write_text(
            mutants.MARKDOWN_HEADER + table, encoding="utf-8"
        )
    if args.json:
        rows = [dataclasses.asdict(o) for o in outcomes]
        Path(args.json).write_text(
            json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8"
        )
    return 0 if all(o.ok for o in outcomes) else 1


@_full_repository
def cmd_mutation(args: argparse.Namespace) -> int:
    from m2t.authoring import mutation

    out = Path(args.markdown) if args.markdown else mutation.MARKDOWN
    if args.reclassify or args.survivors:
        from m2t.console import quiet_native_stderr

        with quiet_native_stderr(True):
            text = mutation.reclassify(out.read_text(), regrade=args.survivors)
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}")
        return 0
    return mutation.command(args.lessons, out)


def cmd_make_fixtures(args: argparse.Namespace) -> int:
    from m2t.authoring import fixtures

    counts, failed = fixtures.make(lessons=args.lessons or None)
    for grader, n in counts.items():
        print(f"graders/fixtures/{grader}: {n} reference calls")
    if failed:
        print(
            f"m2t: error: {', '.join(sorted(failed))}: the solution does not "
            "get full marks, so its fixtures are left as they were"
        )
        return 1
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    from m2t import ROOT
    from m2t import curriculum
    from m2t.authoring import gradescope
    from m2t.authoring import release

    if not (ROOT / "solutions").is_dir():
        print("m2t: error: release needs the full repository", file=sys.stderr)
        return 2
    if not args.out and not args.gradescope:
        raise ValueError("release: give --out DIR, --gradescope ZIP or both")
    if args.lessons and not args.gradescope:
        raise ValueError("release: lessons choose what --gradescope grades")
    if args.out:
        problems = release.build(Path(args.out))
        for problem in problems:
            print(f"release: {problem}", file=sys.stderr)
        if problems:
            print(
                f"release FAILED: {len(problems)} problem(s); nothing written",
                file=sys.stderr,
            )
            return 1
        count = sum(1 for p in Path(args.out).rglob("*") if p.is_file())
        print(
            f"wrote the student edition to {args.out} ({count} files, scan ok)"
        )
    if args.gradescope:
        lessons = curriculum.select(args.lessons) if args.lessons else []
        target = Path(args.gradescope)
        if target.suffix.lower() != ".zip":  # a folder: one bundle a lesson
            zips = gradescope.build_each(
                target, lessons, lang=args.grading_lang
            )
            print(
                f"wrote {len(zips)} Gradescope autograders to {target}/ (one "
                "per lesson, lNN.zip: one assignment each)"
            )
            return 0
        names = gradescope.build(target, lessons, lang=args.grading_lang)
        what = " ".join(x.tag for x in lessons) or "every lesson"
        print(
            f"wrote the Gradescope autograder to {args.gradescope} "
            f"({len(names)} files; grades {what})"
        )
    return 0


@_full_repository
def cmd_new_lesson(args: argparse.Namespace) -> int:
    from m2t import ROOT
    from m2t.authoring import scaffold

    written = scaffold.new_lesson(args.number, args.topic, title=args.title)
    for path in written:
        print(f"wrote {path.relative_to(ROOT)}")
    lesson = written[0].stem
    print(
        f"\nNext: write the solution and the grader's reference (each "
        f"TODO(author) in the files above), then `m2t make-lessons` and "
        f"`m2t dev check {lesson[1:3]}` (`--rules-only` names what is left "
        "to write in a second); `m2t answers-template` once the lesson has "
        "questions."
    )
    return 0


def _make_lessons(sub: argparse._SubParsersAction, text: str) -> None:
    make = sub.add_parser("make-lessons", help=text)
    make.add_argument(
        "--check",
        action="store_true",
        help=i18n.text("help.make_lessons.check"),
    )
    make.add_argument(
        "--solutions", help=i18n.text("help.make_lessons.solutions")
    )
    make.add_argument("--lessons", help=i18n.text("help.make_lessons.lessons"))
    make.add_argument(
        "--markdown", help=i18n.text("help.make_lessons.markdown")
    )
    make.set_defaults(func=cmd_make_lessons)


def _check(sub: argparse._SubParsersAction, text: str) -> None:
    check = sub.add_parser("check", help=text)
    check.add_argument("lessons", nargs="*", help=i18n.text("help.dev.lessons"))
    check.add_argument(
        "--lessons-dir", help=i18n.text("help.check.lessons_dir")
    )
    check.add_argument(
        "--rules-only",
        action="store_true",
        help=i18n.text("help.check.rules_only"),
    )
    check.set_defaults(func=cmd_check)


def _mutants(sub: argparse._SubParsersAction, text: str) -> None:
    mut = sub.add_parser("mutants", help=text)
    mut.add_argument("lessons", nargs="*", help=i18n.text("help.dev.lessons"))
    mut.add_argument("--markdown", help=i18n.text("help.mutants.markdown"))
    mut.add_argument(
        "--json", metavar="PATH", help=i18n.text("help.mutants.json")
    )
    mut.set_defaults(func=cmd_mutants)


def _mutation(sub: argparse._SubParsersAction, text: str) -> None:
    mut = sub.add_parser("mutation", help=text)
    mut.add_argument("lessons", nargs="*", help=i18n.text("help.dev.lessons"))
    mut.add_argument("--markdown", help=i18n.text("help.mutation.markdown"))
    mut.add_argument(
        "--reclassify",
        action="store_true",
        help=i18n.text("help.mutation.reclassify"),
    )
    mut.add_argument(
        "--survivors",
        action="store_true",
        help=i18n.text("help.mutation.survivors"),
    )
    mut.set_defaults(func=cmd_mutation)


def _make_fixtures(sub: argparse._SubParsersAction, text: str) -> None:
    fix = sub.add_parser("make-fixtures", help=text)
    fix.add_argument("lessons", nargs="*", help=i18n.text("help.dev.lessons"))
    fix.set_defaults(func=cmd_make_fixtures)


def _release(sub: argparse._SubParsersAction, text: str) -> None:
    # registered in the full repository only (register): m2t.authoring
    from m2t.authoring.gradescope import GRADING_LANGS  # stdlib only

    rel = sub.add_parser("release", help=text)
    rel.add_argument(
        "lessons",
        nargs="*",
        help=i18n.text("help.release.lessons"),
    )
    rel.add_argument("--out", help=i18n.text("help.release.out"))
    rel.add_argument(
        "--gradescope",
        metavar="ZIP",
        help=i18n.text("help.release.gradescope"),
    )
    rel.add_argument(
        "--grading-lang",
        choices=GRADING_LANGS,
        default="submission",
        help=i18n.text("help.release.grading_lang"),
    )
    rel.set_defaults(func=cmd_release)


def cmd_merge_grades(args: argparse.Namespace) -> int:
    from m2t.grading import roster

    graded, everyone = roster.merge_into(
        [Path(x) for x in args.folders], Path(args.out)
    )
    print(
        f"merged {len(args.folders)} shard(s): {graded} of {everyone} "
        f"students graded: {Path(args.out) / 'gradebook.csv'}"
    )
    return 0 if graded == everyone else 1


def _merge_grades(sub: argparse._SubParsersAction, text: str) -> None:
    merge = sub.add_parser("merge-grades", help=text)
    merge.add_argument(
        "folders", nargs="+", help=i18n.text("help.merge_grades.folders")
    )
    merge.add_argument(
        "--out", required=True, help=i18n.text("help.merge_grades.out")
    )
    merge.set_defaults(func=cmd_merge_grades)


def _new_lesson(sub: argparse._SubParsersAction, text: str) -> None:
    new = sub.add_parser("new-lesson", help=text)
    new.add_argument("number", help=i18n.text("help.new_lesson.number"))
    new.add_argument("topic", help=i18n.text("help.new_lesson.topic"))
    new.add_argument("--title", help=i18n.text("help.new_lesson.title"))
    new.set_defaults(func=cmd_new_lesson)


COMMANDS: dict[str, Callable] = {
    "make-lessons": _make_lessons,
    "check": _check,
    "mutants": _mutants,
    "mutation": _mutation,
    "make-fixtures": _make_fixtures,
    "release": _release,
    "new-lesson": _new_lesson,
    "merge-grades": _merge_grades,
}
"""The authoring commands: name -> adds its parser (its help: m2t/messages
`help.dev.<name>`, dashes as underscores)."""

OLD_NAMES = ("make-lessons", "check", "mutants", "release")
"""The authoring commands that were top-level before `m2t dev`."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add `m2t dev` with the authoring commands, and each of them at the
    top level too under its old name; where the course folder is not the
    full repository (the student edition), each of those is hidden and
    says it needs the full repository."""
    from m2t.cli import scope

    if not scope.full_repository():
        for name in ("dev", *OLD_NAMES):
            scope.hide(sub, name, "cli.full_repository")
        return
    dev = sub.add_parser(
        "dev",
        help=i18n.text("help.dev.command"),
        description=i18n.text("help.dev.description"),
    )
    inner = dev.add_subparsers(
        dest="dev_command", required=True, title=i18n.text("help.commands")
    )
    for name, add in COMMANDS.items():
        add(inner, _help(name))
    for name in OLD_NAMES:
        text = i18n.text("help.dev.old_name", text=_help(name), name=name)
        COMMANDS[name](sub, text)


def _help(name: str) -> str:
    """The help of authoring command `name` in the run's language."""
    return i18n.text(f"help.dev.{name.replace('-', '_')}")
