"""`m2t grade` and `m2t list`: grade lessons, list them with their status.

m2t grade [LESSON ...]            grade your lessons (all by default)
m2t grade --impl solutions        grade the reference solutions
m2t grade 16 --report results.json --junit junit.xml
m2t grade --submission DIR        grade untrusted files in a sandbox
m2t grade 06 13 --roster DIR -j 2 grade a class: gradebook, class report
m2t list                          the lessons, in order, with their status
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path

from m2t import i18n
from m2t import settings


def cmd_grade(args: argparse.Namespace) -> int:
    from m2t import curriculum
    from m2t.console import quiet_native_stderr
    from m2t.grading import reports
    from m2t.grading import runner as grading

    lessons = curriculum.select(args.lessons)
    start = time.perf_counter()
    if args.roster:
        from m2t.grading import roster

        return roster.main(args, lessons)
    impl, on_check, notes = args.impl, None, []
    if not args.submission:  # one clear line, never pytest's traceback
        from m2t.grading import impl as _impl

        _impl.confined(args.impl, args.unconfined)
    with contextlib.ExitStack() as stack:
        if args.submission and args.lang_of_submission:
            chosen = i18n.of_submission(Path(args.submission))
            stack.enter_context(i18n.using(chosen))
        if args.submission:
            from m2t.grading import submission

            refused = submission.refusal(args.allow_weaker_sandbox)
            if refused:
                print(i18n.text("cli.error", error=refused))
                return 2
            impl, notes = stack.enter_context(
                submission.staged(Path(args.submission), lessons)
            )
            # a seed the student edition never saw; the public one refused
            args.seed = submission.submission_seed(args.seed)
            notes = [*notes, submission.seed_note(args.seed)]
            for note in notes:
                print(reports.clean(note))
            if args.report:  # partial results survive a global kill
                on_check = _partial_report(
                    Path(args.report), lessons, start, notes
                )
        if args.seed is not None:
            from m2t.grading.submission import judged_on

            stack.enter_context(judged_on(args.seed))
        with quiet_native_stderr(not args.verbose):
            results = grading.grade(
                lessons,
                impl=impl,
                timeout=args.timeout,
                show_pytest=args.verbose,
                on_check=on_check,
                sandbox=bool(args.submission),
                lesson_timeout=args.lesson_timeout,
                allow_weaker_sandbox=args.allow_weaker_sandbox,
            )
        seconds = time.perf_counter() - start
        if not args.submission:
            grading.save_state(results, args.impl)
        print(reports.table(results, verbose=args.verbose))
        total = sum(r.score for r in results)
        most = sum(r.max_score for r in results)
        what = (
            i18n.text("grade.what_submission", path=args.submission)
            if args.submission
            else args.impl
        )
        score = i18n.text(
            "grade.score",
            total=f"{total:g}",
            most=f"{most:g}",
            seconds=f"{seconds:.1f}",
            what=what,
        )
        print(f"\n{score}")
        if args.report:
            reports.write_gradescope(Path(args.report), results, seconds, notes)
        if args.junit:
            reports.write_junit(Path(args.junit), results)
    graded = [r for r in results if r.checks]
    ok = bool(graded) and all(r.status == "passed" for r in graded)
    return 0 if ok else 1


def _partial_report(
    path: Path, lessons: Sequence, start: float, notes: Sequence[str] = ()
) -> Callable[[object], None]:
    """An `on_check` that rewrites results.json after every check."""
    from m2t.grading import reports
    from m2t.grading import runner as grading

    done: list = []

    def write(check) -> None:
        done.append(check)
        results = [
            grading.LessonResult(x, [c for c in done if c.lesson == x.tag])
            for x in lessons
        ]
        reports.write_gradescope(
            path, results, time.perf_counter() - start, notes
        )

    return write


def cmd_list(args: argparse.Namespace) -> int:
    from m2t import ROOT
    from m2t.grading import impl as _impl
    from m2t.grading import runner as grading
    from m2t.student import progress

    state = grading.load_state()
    folder = ROOT / "lessons"
    if args.impl != "lessons" or folder.is_dir():
        folder = _impl.resolve(args.impl)
    else:  # an installed m2t run outside a course folder
        print(i18n.text("list.no_lessons", root=ROOT), file=sys.stderr)
    rows = progress.statuses(folder, state)
    current = progress.here(rows)
    width = max((len(lesson.tag) for lesson, _ in rows), default=0)
    for lesson, status in rows:
        label = status.label
        if lesson is current:
            label += i18n.text("list.here")
        # the question list has no module: its file instead
        name = lesson.filename if lesson.is_question_list else lesson.module
        print(f"{lesson.tag:<{width}}  {name:<40} {label}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add `grade` and `list` to the `m2t` parser."""

    def say(key: str, **fields: str) -> str:
        return i18n.text(f"help.grade.{key}", **fields)

    grade = sub.add_parser("grade", help=say("command"))
    grade.add_argument("lessons", nargs="*", help=i18n.text("help.lesson"))
    grade.add_argument("--impl", default="lessons", help=say("impl"))
    grade.add_argument("--submission", help=say("submission"))
    grade.add_argument(
        "--unconfined", action="store_true", help=say("unconfined")
    )
    grade.add_argument("--roster", help=say("roster"))
    grade.add_argument("-j", "--jobs", type=int, default=1, help=say("jobs"))
    grade.add_argument("--out", help=say("out"))
    grade.add_argument("--shard", metavar="I/N", help=say("shard"))
    grade.add_argument(
        "--allow-weaker-sandbox",
        action="store_true",
        help=say("allow_weaker_sandbox"),
    )
    grade.add_argument("--seed", type=int, help=say("seed"))
    grade.add_argument(
        "--lang-of-submission",
        action="store_true",
        help=say("lang_of_submission"),
    )
    grade.add_argument("--report", help=say("report"))
    grade.add_argument("--junit", help=say("junit"))
    grade.add_argument(
        "--lesson-timeout",
        type=float,
        default=settings.LESSON_TIMEOUT,
        help=say("lesson_timeout", seconds=f"{settings.LESSON_TIMEOUT:g}"),
    )
    grade.add_argument(
        "--timeout",
        type=float,
        default=settings.CHECK_TIMEOUT,
        help=i18n.text("help.timeout", seconds=f"{settings.CHECK_TIMEOUT:g}"),
    )
    grade.add_argument(
        "-v", "--verbose", action="store_true", help=say("verbose")
    )
    grade.set_defaults(func=cmd_grade)

    lst = sub.add_parser("list", help=i18n.text("help.list.command"))
    lst.add_argument(
        "--impl", default="lessons", help=i18n.text("help.list.impl")
    )
    lst.set_defaults(func=cmd_list)
