"""`m2t`: the course's command line.

m2t list                          the lessons, in order, with their status
m2t grade [LESSON ...]            grade your lessons (all by default)
m2t grade --impl solutions        grade the reference solutions
m2t grade 16 --report results.json --junit junit.xml
m2t make-lessons [--check]        regenerate lessons/ from solutions/
m2t answers-template [--check]    write lessons/answers.toml (the questions)
m2t explain [ID ...]              explanations of your correct answers
m2t hint 16 / watch / progress / reset 16 / notebook 16: the student loop
m2t train MODEL / m2t train --list  train a reference model (instructors)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _lessons(names: Sequence[str]):
    from m2t import curriculum

    if not names:
        return list(curriculum.lessons())
    return [curriculum.find(name) for name in names]


def cmd_grade(args: argparse.Namespace) -> int:
    from m2t.grading import reports
    from m2t.grading import runner as grading

    lessons = _lessons(args.lessons)
    start = time.perf_counter()
    impl, staged, on_check = args.impl, None, None
    if args.submission:
        import tempfile

        from m2t.grading import sandbox

        staged = Path(tempfile.mkdtemp(prefix="m2t-submission-"))
        impl = str(
            sandbox.stage(
                Path(args.submission), [x.module for x in lessons], staged
            )
        )
        if args.report:  # partial results survive a global kill
            on_check = _partial_report(Path(args.report), lessons, start)
    try:
        with _quiet_native_stderr(not args.verbose):
            results = grading.grade(
                lessons,
                impl=impl,
                timeout=args.timeout,
                show_pytest=args.verbose,
                on_check=on_check,
                sandbox=bool(args.submission),
                lesson_timeout=args.lesson_timeout,
            )
    finally:
        if staged is not None:
            import shutil

            shutil.rmtree(staged, ignore_errors=True)
    seconds = time.perf_counter() - start
    if not args.submission:
        grading.save_state(results, args.impl)
    print(reports.table(results, verbose=args.verbose))
    total = sum(r.score for r in results)
    most = sum(r.max_score for r in results)
    what = f"submission {args.submission}" if args.submission else args.impl
    print(f"\nscore {total:g}/{most:g} in {seconds:.1f}s ({what})")
    if args.report:
        reports.write_gradescope(Path(args.report), results, seconds)
    if args.junit:
        reports.write_junit(Path(args.junit), results)
    graded = [r for r in results if r.checks]
    ok = bool(graded) and all(r.status == "passed" for r in graded)
    return 0 if ok else 1


def _partial_report(path: Path, lessons, start: float):
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
        reports.write_gradescope(path, results, time.perf_counter() - start)

    return write


def cmd_release(args: argparse.Namespace) -> int:
    from m2t import ROOT
    from m2t.authoring import release

    if not (ROOT / "solutions").is_dir():
        print("m2t: error: release needs the full repository", file=sys.stderr)
        return 2
    problems = release.build(Path(args.out))
    for problem in problems:
        print(f"release: {problem}", file=sys.stderr)
    if problems:
        print(f"release FAILED: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    count = sum(1 for p in Path(args.out).rglob("*") if p.is_file())
    print(f"wrote the student edition to {args.out} ({count} files, scan ok)")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from m2t import curriculum
    from m2t.grading import impl as _impl
    from m2t.grading import runner as grading
    from m2t.student import progress

    state = grading.load_state()
    folder = _impl.resolve(args.impl)
    for lesson in curriculum.lessons():
        status = progress.status(lesson, folder, state).label
        print(f"{lesson.tag}  {lesson.module:<40} {status}")
    return 0


def cmd_make_lessons(args: argparse.Namespace) -> int:
    from m2t import ROOT
    from m2t.authoring import make_lessons

    solutions = Path(args.solutions or ROOT / "solutions")
    lessons = Path(args.lessons or ROOT / "lessons")
    try:
        if args.check:
            problems = make_lessons.stale(solutions, lessons)
            for problem in problems:
                print(problem, file=sys.stderr)
            if problems:
                print(
                    "lessons/ is stale: run `m2t make-lessons` and commit.",
                    file=sys.stderr,
                )
            return 1 if problems else 0
        for path in make_lessons.write(solutions, lessons):
            print(f"wrote {path}")
    except make_lessons.MarkerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from m2t.authoring import selfcheck

    with _quiet_native_stderr(True):
        problems = selfcheck.run(
            _lessons(args.lessons),
            skeletons=Path(args.lessons_dir) if args.lessons_dir else None,
        )
    for problem in problems:
        print(problem)
    print("check: ok" if not problems else f"check: {len(problems)} problem(s)")
    return 1 if problems else 0


def cmd_mutants(args: argparse.Namespace) -> int:
    from m2t.authoring import mutants

    with _quiet_native_stderr(True):
        outcomes = mutants.run(_lessons(args.lessons))
    table = mutants.markdown(outcomes)
    print(table, end="")
    if args.markdown:
        Path(args.markdown).write_text(
            mutants.MARKDOWN_HEADER + table, encoding="utf-8"
        )
    return 0 if all(o.ok for o in outcomes) else 1


def cmd_answers_template(args: argparse.Namespace) -> int:
    from m2t import questions

    path = Path(args.output) if args.output else questions.TEMPLATE
    if args.check:
        problems = questions.stale(path)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    if path.exists() and questions.any_answered(path) and not args.force:
        print(
            f"m2t: error: {questions.display(path)} holds answers; "
            "use --output for a fresh copy or --force to overwrite",
            file=sys.stderr,
        )
        return 2
    path.write_text(questions.template(), encoding="utf-8")
    print(f"wrote {questions.display(path)}")
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from graders.test_questions import expected_value
    from m2t import questions
    from m2t.grading import impl as _impl

    bank = questions.bank()
    key = questions.load_key()
    wanted = [w.lower() for w in args.ids]
    chosen = [
        q
        for q in bank.values()
        if not wanted
        or q.id in wanted
        or any(w.lstrip("l").zfill(2) == q.lesson for w in wanted)
    ]
    if not chosen:
        raise ValueError(f"no question matches {' '.join(args.ids)}")
    if key is None:
        print(
            "The explanations come with the key, which your instructor "
            "releases (solutions/questions_key.toml)."
        )
        return 0
    answers = questions.read_answers(_impl.resolve(args.impl) / "answers.toml")
    shown = 0
    for q in chosen:
        k = key.get(q.id)
        if k is None:
            continue
        verdict = questions.judge(
            q, answers.tables.get(q.id), k, expected_value(q)
        )
        if not args.all and verdict.status != "correct":
            continue
        shown += 1
        print(f"{q.id} ({q.kind}, lesson {q.lesson})")
        print(questions.wrap(q.en), questions.wrap(q.zh), sep="\n")
        if args.all:
            answer = k.answer or k.defensible or k.range or "(computed)"
            print(f"  key: {answer}")
        print(questions.wrap(k.explanation_en))
        print(questions.wrap(k.explanation_zh), end="\n\n")
    if not shown:
        print("No explanation to show yet: answer correctly first.")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    try:  # instructor side: solutions/ is not in the student edition
        from training import recipes
        from training import run
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("solutions"):
            raise
        print(
            "m2t train: training needs the full repository (the reference "
            "solutions/ are not in the student edition).",
            file=sys.stderr,
        )
        return 2
    if args.list:
        print(recipes.table(args.data))
        return 0
    if not args.model:
        raise ValueError("name a model to train, or pass --list")
    settings = dict(_setting(text) for text in args.set)
    with _quiet_native_stderr(True):  # TensorFlow's C++ start-up lines
        import keras  # noqa: F401
        import tensorflow  # noqa: F401
    options = run.Options(
        model=args.model,
        data=args.data,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        strategy=args.strategy,
        mixed_precision=args.mixed_precision,
        jit={"auto": None, "on": True, "off": False}[args.jit],
        out=args.out,
        resume=args.resume,
        seed=args.seed,
        smoke=args.smoke,
        settings=settings,
        verbose=args.verbose,
    )
    try:
        run.train(options)
    except FileNotFoundError as exc:  # e.g. Fashion-MNIST not prepared
        print(f"m2t train: {exc}", file=sys.stderr)
        return 2
    return 0


def _setting(text: str) -> tuple[str, object]:
    """`--set key=value`: the value as a Python literal, else a string."""
    import ast

    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(f"--set wants KEY=VALUE, got {text!r}")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value


def _add_train(sub) -> None:
    train = sub.add_parser(
        "train",
        help="train a reference model with tf.distribute (instructors)",
        description="Train a reference model (solutions/) on CPU, GPUs, a "
        "TPU or several workers; writes report.json, plots, TensorBoard "
        "logs and checkpoints to --out.",
    )
    train.add_argument("model", nargs="?", help="e.g. transformer (--list)")
    train.add_argument(
        "--list", action="store_true", help="the models and their settings"
    )
    train.add_argument(
        "--data",
        choices=("embedded", "real"),
        default="embedded",
        help="embedded: generated, no network (default); real: d2l's data",
    )
    train.add_argument("--epochs", type=int)
    train.add_argument(
        "--batch-size", type=int, help="global, split across replicas"
    )
    train.add_argument("--lr", type=float, help="used as given (not scaled)")
    train.add_argument(
        "--strategy",
        choices=("auto", "default", "mirrored", "multiworker", "tpu"),
        default="auto",
        help="auto: TPU, else TF_CONFIG workers, else several GPUs, else one "
        "device",
    )
    train.add_argument(
        "--mixed-precision",
        action="store_true",
        help="float16 compute (bfloat16 on TPU)",
    )
    train.add_argument(
        "--jit",
        nargs="?",
        const="on",
        default="auto",
        choices=("auto", "on", "off"),
        help="XLA; auto: on GPU/TPU only (slower on CPU for most models)",
    )
    train.add_argument("--out", help="output folder (runs/MODEL-DATA)")
    train.add_argument(
        "--resume",
        action="store_true",
        help="continue the unfinished run in --out, if any",
    )
    train.add_argument("--seed", type=int, default=0)
    train.add_argument(
        "--smoke", action="store_true", help="tiny sizes, a few steps"
    )
    train.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a setting, e.g. --set num_hiddens=64",
    )
    train.add_argument(
        "--verbose",
        type=int,
        default=1,
        choices=(0, 1, 2),
        help="0 silent, 1 progress bar (default), 2 a line per epoch",
    )
    train.set_defaults(func=cmd_train)


class _quiet_native_stderr:
    """Silence TensorFlow's C++ start-up lines (they bypass Python's
    sys.stderr) while keeping Python's own stderr."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __enter__(self):
        if not self.enabled:
            return self
        sys.stderr.flush()
        self.saved = os.dup(2)
        self.python_stderr = sys.stderr
        sys.stderr = os.fdopen(os.dup(self.saved), "w", buffering=1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return False
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        sys.stderr.close()
        sys.stderr = self.python_stderr
        return False


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="m2t",
        description="mlp-to-transformer: lessons, graders, training.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    grade = sub.add_parser("grade", help="grade lessons (all by default)")
    grade.add_argument(
        "lessons", nargs="*", help="e.g. 16, l16, l16_attention_scoring"
    )
    grade.add_argument(
        "--impl",
        default="lessons",
        help="lessons (default), solutions, or a folder of lesson files",
    )
    grade.add_argument(
        "--submission",
        help="grade the lesson files (and answers.toml) in this folder or "
        "student edition, in a sandboxed worker: untrusted code",
    )
    grade.add_argument("--report", help="write Gradescope results.json here")
    grade.add_argument("--junit", help="write JUnit XML here")
    grade.add_argument(
        "--lesson-timeout",
        type=float,
        default=600.0,
        help="with --submission: seconds all probes of a lesson may take",
    )
    grade.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per check (120)"
    )
    grade.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="full messages and pytest output",
    )
    grade.set_defaults(func=cmd_grade)

    rel = sub.add_parser(
        "release", help="build the student edition (no solutions, no keys)"
    )
    rel.add_argument("--out", required=True, help="an empty or new folder")
    rel.set_defaults(func=cmd_release)

    lst = sub.add_parser("list", help="the lessons in order with their status")
    lst.add_argument("--impl", default="lessons")
    lst.set_defaults(func=cmd_list)

    make = sub.add_parser(
        "make-lessons", help="regenerate lessons/ from solutions/"
    )
    make.add_argument(
        "--check", action="store_true", help="fail if lessons/ is stale"
    )
    make.add_argument("--solutions", help="the solutions folder (solutions/)")
    make.add_argument("--lessons", help="the lessons folder (lessons/)")
    make.set_defaults(func=cmd_make_lessons)

    check = sub.add_parser(
        "check",
        help="self-check: lessons up to date, every check passes on "
        "solutions and fails as not started on the skeletons",
    )
    check.add_argument("lessons", nargs="*")
    check.add_argument(
        "--lessons-dir", help="grade this folder as the untouched skeletons"
    )
    check.set_defaults(func=cmd_check)

    mut = sub.add_parser(
        "mutants",
        help="grade every known mistake: each must be caught and named",
    )
    mut.add_argument("lessons", nargs="*")
    mut.add_argument("--markdown", help="also write the table to this file")
    mut.set_defaults(func=cmd_mutants)

    tpl = sub.add_parser(
        "answers-template",
        help="write lessons/answers.toml, every question of the bank",
    )
    tpl.add_argument(
        "--check", action="store_true", help="fail if the file is stale"
    )
    tpl.add_argument("--output", help="write here instead")
    tpl.add_argument(
        "--force", action="store_true", help="overwrite answers already there"
    )
    tpl.set_defaults(func=cmd_answers_template)

    exp = sub.add_parser(
        "explain",
        help="the explanations of the questions you answered correctly",
    )
    exp.add_argument("ids", nargs="*", help="question ids or lessons")
    exp.add_argument("--impl", default="lessons")
    exp.add_argument(
        "--all",
        action="store_true",
        help="every question, with its key (the instructor's release)",
    )
    exp.set_defaults(func=cmd_explain)

    from m2t.cli import student

    student.add_commands(sub)
    _add_train(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ValueError as exc:
        print(f"m2t: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
