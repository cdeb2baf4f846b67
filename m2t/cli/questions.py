"""The question list's commands.

m2t answers-template [--check]    write lessons/answers.toml (the questions)
m2t explain [ID ...]              explanations of your correct answers
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from m2t import i18n


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
            i18n.text("questions.holds_answers", path=questions.display(path)),
            file=sys.stderr,
        )
        return 2
    path.write_text(questions.template(), encoding="utf-8")
    print(i18n.text("questions.wrote", path=questions.display(path)))
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from m2t import questions
    from m2t.grading import impl as _impl

    bank = questions.bank()
    key = questions.load_key()
    chosen = questions.choose(args.ids, bank)
    if key is None:
        print(i18n.text("questions.no_key"))
        return 0
    answers = questions.read_answers(_impl.resolve(args.impl) / "answers.toml")
    chinese = i18n.language() == "zh"
    shown = 0
    for q in chosen:
        k = key.get(q.id)
        if k is None:
            continue
        verdict = questions.judge(
            q, answers.tables.get(q.id), k, questions.expected_value(q)
        )
        if not args.all and verdict.status != "correct":
            continue
        shown += 1
        print(
            i18n.text(
                "questions.heading", id=q.id, kind=q.kind, lesson=q.lesson
            )
        )
        # English shows both languages, as the notes do; Chinese its own
        texts = (q.zh,) if chinese else (q.en, q.zh)
        print(*map(questions.wrap, texts), sep="\n")
        if args.all:
            answer = (
                k.answer
                or k.defensible
                or k.range
                or i18n.text("questions.computed")
            )
            print(i18n.text("questions.key", answer=answer))
        if not chinese:
            print(questions.wrap(k.explanation_en))
        print(questions.wrap(k.explanation_zh), end="\n\n")
    if not shown:
        print(i18n.text("questions.none_yet"))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add `answers-template` and `explain` to the `m2t` parser."""
    tpl = sub.add_parser(
        "answers-template", help=i18n.text("help.answers_template.command")
    )
    tpl.add_argument(
        "--check",
        action="store_true",
        help=i18n.text("help.answers_template.check"),
    )
    tpl.add_argument("--output", help=i18n.text("help.answers_template.output"))
    tpl.add_argument(
        "--force",
        action="store_true",
        help=i18n.text("help.answers_template.force"),
    )
    tpl.set_defaults(func=cmd_answers_template)

    exp = sub.add_parser("explain", help=i18n.text("help.explain.command"))
    exp.add_argument("ids", nargs="*", help=i18n.text("help.explain.ids"))
    exp.add_argument(
        "--impl", default="lessons", help=i18n.text("help.explain.impl")
    )
    exp.add_argument(
        "--all", action="store_true", help=i18n.text("help.explain.all")
    )
    exp.set_defaults(func=cmd_explain)
