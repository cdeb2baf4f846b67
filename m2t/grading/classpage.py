"""The class report as an instructor reads it: `markdown` (class-report.md:
per lesson its mean points and who did not run, a line per such student
and why, the question list summarised, each check's pass rate, the
mistakes diagnosed, the full question list last) and `chart`
(class-report.png, one picture sized for a 16:9 slide), both drawn from a
`m2t.grading.classreport.ClassReport`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from m2t.grading.classreport import QUESTION_LIST
from m2t.grading.classreport import ClassReport
from m2t.grading.classreport import question
from m2t.grading.reports import clean


def _rate(k: int, n: int) -> str:
    return f"{k} of {n} ({100 * k / n:.0f}%)" if n else f"{k} of 0"


HARDEST = 5
"""How many of the hardest questions the report's summary names."""

TOP = 10
"""How many checks and mistakes each panel of the picture shows."""


def _md(text: str) -> str:
    """`text` (a student's name, a roster's note) as the text of one
    markdown table cell: safe characters (`clean`), one line, and nothing
    a renderer reads as markup (a `|`, a backtick, HTML)."""
    text = re.sub(r"\s", " ", clean(text))
    for char, escaped in (
        ("\\", "\\\\"),
        ("|", "\\|"),
        ("`", "\\`"),
        ("*", "\\*"),
        ("_", "\\_"),
        ("[", "\\["),
        ("<", "&lt;"),
    ):
        text = text.replace(char, escaped)
    return text


def _spans(tags: Sequence[str], order: Sequence[str]) -> str:
    """Lesson tags as "l01-l05, l09": a run of three or more that follow
    one another in `order` is written as its ends."""
    place = {t: i for i, t in enumerate(order)}
    runs: list[list[str]] = []
    for tag in sorted(tags, key=lambda t: place.get(t, len(order))):
        if runs and place.get(tag) == place.get(runs[-1][-1], -2) + 1:
            runs[-1].append(tag)
        else:
            runs.append([tag])
    return ", ".join(
        f"{run[0]}-{run[-1]}" if len(run) >= 3 else ", ".join(run)
        for run in runs
    )


def did_not_run(report: ClassReport) -> dict[str, str]:
    """Student -> one line of the lessons that did not run (or had checks
    stopped at the time limit) and why, in roster order; students whose
    every lesson ran are left out."""
    lines = {}
    for student in report.students:
        by_reason: dict[str, list[str]] = {}
        for tag in report.lessons:
            why = report.no_answer.get((student, tag))
            if why is not None:
                text = why.text(questions=tag == QUESTION_LIST)
                by_reason.setdefault(text, []).append(tag)
        if by_reason:
            lines[student] = "; ".join(
                f"{_spans(tags, report.lessons)}: {why}"
                for why, tags in by_reason.items()
            )
    return lines


def _question_summary(report: ClassReport) -> list[str]:
    """A short section on the question list: how much of it the class
    answered and got right, and its hardest questions."""
    n = report.size
    questions = [
        (name, k)
        for (tag, name), k in report.checks.items()
        if tag == QUESTION_LIST
    ]
    if not questions or not n:
        return []
    answered = {
        name: report.answered.get((QUESTION_LIST, name), 0)
        for name, _ in questions
    }
    right = sum(k for _, k in questions) / n
    tried = sum(answered.values()) / n
    most = report.max_points.get(QUESTION_LIST, 0.0)
    got = [report.points.get((s, QUESTION_LIST), 0.0) for s in report.students]
    none = report.did_not_run(QUESTION_LIST)
    lines = [
        "## Question list",
        "",
        f"{len(questions)} questions, {most:g} points: a student answered "
        f"{tried:.1f} of them and got {right:.1f} right on average (mean "
        f"points {sum(got) / n:.1f}); {none} of {n} answered none. The full "
        "list closes this report.",
        "",
    ]
    hardest = sorted(
        (
            (k / answered[name], name, k)
            for name, k in questions
            if answered[name]
        ),
        key=lambda x: (x[0], -answered[x[1]]),
    )[:HARDEST]
    if hardest:
        lines.append("Hardest, among the students who answered them:")
        lines.append("")
        lines += [
            f"- `{question(name)}`: right for {_rate(k, answered[name])}"
            for _, name, k in hardest
        ]
        lines.append("")
    return lines


def markdown(report: ClassReport, failed: dict[str, str] | None = None) -> str:
    """The class report: per lesson the mean points and how many students'
    code did not run; a line per student whose lesson did not run, and
    why (and per student not graded at all, given `failed`); the question
    list summarised; per lesson check its pass rate; per known mistake
    how many students made it; the full question list last."""
    n = report.size
    lines = [f"# Class report: {n} students", ""]
    lines += [
        "| lesson | mean points | max | did not run |",
        "| --- | --- | --- | --- |",
    ]
    for tag in report.lessons:
        got = [report.points.get((s, tag), 0.0) for s in report.students]
        mean = sum(got) / n if n else 0.0
        lines.append(
            f"| {tag} | {mean:.1f} | {report.max_points[tag]:g} | "
            f"{report.did_not_run(tag)} of {n} |"
        )
    lines += ["", "## Students whose work did not run", ""]
    missing = did_not_run(report)
    failed = failed or {}
    if missing or failed:
        lines += [
            "| student | lessons, and why |",
            "| --- | --- |",
        ]
        lines += [f"| {_md(s)} | {_md(why)} |" for s, why in missing.items()]
        lines += [
            f"| {_md(s)} | {_md('not graded: ' + why)} |"
            for s, why in failed.items()
        ]
    else:
        lines.append("Every graded student's code ran in every lesson.")
    lines.append("")
    lines += _question_summary(report)
    lines += [
        "## Checks",
        "",
        "| lesson | check | passed by | of those whose code ran it |",
        "| --- | --- | --- | --- |",
    ]
    for (tag, name), k in report.checks.items():
        if tag != QUESTION_LIST:
            ran = report.answered.get((tag, name), 0)
            lines.append(
                f"| {tag} | `{clean(name)}` | {_rate(k, n)} | {_rate(k, ran)} |"
            )
    lines += [
        "",
        "## Known mistakes",
        "",
        "| lesson | known mistake | made by |",
        "| --- | --- | --- |",
    ]
    for (tag, mistake), k in sorted(
        report.mistakes.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][1])
    ):
        lines.append(f"| {tag} | `{mistake}` | {_rate(k, n)} |")
    questions = [
        (name, k)
        for (tag, name), k in report.checks.items()
        if tag == QUESTION_LIST
    ]
    if questions:
        lines += [
            "",
            f"<details><summary>All {len(questions)} questions</summary>",
            "",
            "| question | right for | of those who answered it |",
            "| --- | --- | --- |",
        ]
        for name, k in questions:
            ran = report.answered.get((QUESTION_LIST, name), 0)
            lines.append(
                f"| `{question(name)}` | {_rate(k, n)} | {_rate(k, ran)} |"
            )
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def hardest_checks(
    report: ClassReport, k: int = TOP
) -> list[tuple[tuple[str, str], int, int]]:
    """The `k` lesson checks (the question list's left out) passed by the
    smallest share of the students whose code ran them, as ((tag, check),
    passed, ran); a check every such student passed is not among them."""
    found = [
        (key, passed, report.answered.get(key, 0))
        for key, passed in report.checks.items()
        if key[0] != QUESTION_LIST
    ]
    found = [x for x in found if x[2] and x[1] < x[2]]
    order = {key: i for i, key in enumerate(report.checks)}
    found.sort(key=lambda x: (x[1] / x[2], -x[2], order[x[0]]))
    return found[:k]


def common_mistakes(
    report: ClassReport, k: int = TOP
) -> list[tuple[tuple[str, str], int]]:
    """The `k` known mistakes the most students made (each made by one at
    least), most first."""
    order = {tag: i for i, tag in enumerate(report.lessons)}
    made = [(key, m) for key, m in report.mistakes.items() if m]
    made.sort(key=lambda x: (-x[1], order.get(x[0][0], 0), x[0][1]))
    return made[:k]


SLIDE = (16.0, 9.0)
"""The picture's size in inches: a 16:9 slide."""

DPI = 120
"""The picture's resolution: 1920 x 1080 pixels."""


def chart(report: ClassReport, path: Path) -> Path:
    """One 16:9 picture for a slide (1920 x 1080 px): per lesson the mean
    share of its points and the share of students whose code did not run;
    the hardest checks (of the students whose code ran them); the known
    mistakes the most students made. Every check and mistake is in
    class-report.md."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    n = report.size
    fig = plt.figure(figsize=SLIDE, dpi=DPI, layout="constrained")
    upper, lower = fig.subfigures(2, 1, height_ratios=[1.0, 1.35])
    top = upper.subplots()
    left, right = lower.subplots(1, 2, width_ratios=[1.15, 1.0])
    stopped = {s for (s, _), why in report.no_answer.items() if not why.ran}
    title = f"Class report: {n} students"
    if stopped:
        title += (
            f"; {len(stopped)} with a lesson that did not run "
            "(class-report.md names them and why)"
        )
    fig.suptitle(title, fontsize=17)

    tags = report.lessons
    x = list(range(len(tags)))
    means = [
        100
        * sum(report.points.get((s, t), 0.0) for s in report.students)
        / (n * report.max_points[t])
        if n and report.max_points[t]
        else 0.0
        for t in tags
    ]
    absent = [100 * report.did_not_run(t) / n if n else 0.0 for t in tags]
    width = 0.4
    top.bar(
        [i - width / 2 for i in x],
        means,
        width,
        color="tab:green",
        label="mean share of the points",
    )
    top.bar(
        [i + width / 2 for i in x],
        absent,
        width,
        color="tab:gray",
        label="students whose code did not run",
    )
    names = ["Q" if t == QUESTION_LIST else t for t in tags]
    top.set_xticks(x, names, fontsize=12)
    top.set_xlim(-0.6, max(len(tags), 8) - 0.4)  # one lesson: a slim bar
    top.set_ylim(0, 100)
    top.set_ylabel("% of the class", fontsize=12)
    top.set_title("Lessons", fontsize=14, loc="left")
    top.legend(
        loc="lower right",
        bbox_to_anchor=(1.0, 1.0),
        fontsize=11,
        ncols=2,
        frameon=False,
    )
    top.grid(axis="y", alpha=0.3)
    if QUESTION_LIST in tags:
        top.set_xlabel("Q: the question list", fontsize=11)

    hard = hardest_checks(report)
    rates = [100 * passed / ran for _, passed, ran in hard]
    left.barh(range(len(hard)), rates, color="tab:orange")
    left.set_yticks(
        range(len(hard)),
        [f"{tag} {_short(name, 42)}" for (tag, name), _, _ in hard],
        fontsize=12,
    )
    left.set_xlim(0, 100)
    left.set_xlabel(
        "% of the students whose code ran it who passed", fontsize=12
    )
    left.set_title(
        f"The {len(hard)} hardest checks" if hard else "Hardest checks",
        fontsize=14,
    )
    for i, (rate, (_, passed, ran)) in enumerate(zip(rates, hard, strict=True)):
        left.text(rate + 1, i, f"{passed} of {ran}", va="center", fontsize=11)
    if not hard:
        left.text(
            50,
            0.5,
            "every check passed by every student whose code ran it",
            ha="center",
            va="center",
            fontsize=12,
        )
        left.set_ylim(0, 1)
        left.set_yticks([])

    made = common_mistakes(report)
    counts = [m for _, m in made]
    right.barh(range(len(made)), counts, color="tab:red")
    right.set_yticks(
        range(len(made)),
        [f"{tag} {mistake}" for (tag, mistake), _ in made],
        fontsize=12,
    )
    right.set_xlim(0, max(n, 1) * 1.12)
    right.set_xlabel("students who made it", fontsize=12)
    right.set_title(
        f"The {len(made)} most common mistakes" if made else "Mistakes",
        fontsize=14,
    )
    right.xaxis.set_major_locator(MaxNLocator(integer=True))
    for i, m in enumerate(counts):
        right.text(m + 0.01 * n, i, f"{m} of {n}", va="center", fontsize=11)
    if not made:
        right.text(
            0.5,
            0.5,
            "no known mistake diagnosed",
            ha="center",
            va="center",
            fontsize=12,
            transform=right.transAxes,
        )
        right.set_yticks([])
    for ax in (left, right):
        if ax.get_yticks().size:
            ax.invert_yaxis()
        ax.grid(axis="x", alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _short(name: str, width: int = 48) -> str:
    """A check's name cut to `width` characters for a chart label."""
    name = clean(name)
    return name if len(name) <= width else name[: width - 1] + "…"
