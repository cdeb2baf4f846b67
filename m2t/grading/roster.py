"""`m2t grade --roster DIR -j N`: a whole class, graded in parallel, with a
gradebook and a class report.

A roster is a folder whose sub-folders are the submissions (the folder's
name is the student's), or a CSV of `name,path` rows (a relative path is
relative to the CSV). Each submission is graded by a process of its own,
exactly as `m2t grade --submission` grades one (`m2t.grading.submission`:
staged, then every lesson in its own sandboxed worker, on a seed of the
judge's inputs drawn for it alone, which its record and report name);
`-j N` of them run at once. `--seed S` judges every submission on S (to
grade the same inputs again).

The output folder (`--out`, default `DIR-grades`) holds
`students/<name>.json`, each student's record, written atomically when the
student's grading ended, with their Gradescope `results.json` and log
beside it. A batch that is killed keeps every finished student; the rerun
grades only the others (and anyone whose files changed since: a record
names the digest of what was graded). Then `gradebook.csv`,
`class-report.md` and `class-report.png` (`m2t.grading.classreport`).
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import glob
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from m2t import ROOT
from m2t import curriculum
from m2t import settings
from m2t.grading import classpage
from m2t.grading import classreport
from m2t.grading import shards
from m2t.grading import submission

POLL_SECONDS = 0.2
"""How often the batch looks for a finished submission."""


# --------------------------------------------------------------- roster
def read(roster: Path) -> dict[str, Path]:
    """Student name -> submission folder, in roster order.

    Raises:
        ValueError: naming `--roster` and the value when it is neither a
            folder nor a CSV, a row is not `name,path`, or a name repeats.
    """
    roster = Path(roster)
    if roster.is_dir():
        return {
            p.name: p
            for p in sorted(roster.iterdir())
            if p.is_dir() and not p.name.startswith(".")
        }
    if roster.suffix.lower() != ".csv" or not roster.is_file():
        raise ValueError(
            f"--roster {str(roster)!r}: neither a folder of submissions nor "
            "a CSV of name,path"
        )
    students: dict[str, Path] = {}
    with open(roster, newline="", encoding="utf-8") as f:
        for i, row in enumerate(csv.reader(f), 1):
            if not row or row[0].startswith("#"):
                continue
            if i == 1 and [x.strip().lower() for x in row] == ["name", "path"]:
                continue
            if len(row) != 2 or not row[0].strip() or not row[1].strip():
                raise ValueError(
                    f"--roster {str(roster)!r}: line {i} is {row!r}, not "
                    "name,path"
                )
            name, path = row[0].strip(), Path(row[1].strip())
            if name in students:
                raise ValueError(
                    f"--roster {str(roster)!r}: line {i}: {name!r} twice"
                )
            students[name] = (
                path if path.is_absolute() else roster.parent / path
            )
    return students


def default_out(roster: Path) -> Path:
    """`DIR-grades` beside the roster folder (`class-grades` for
    class.csv)."""
    roster = Path(roster)
    stem = roster.stem if roster.is_file() else roster.name
    return roster.parent / f"{stem}-grades"


def slug(name: str) -> str:
    """A student's name as a file name (percent-escaped)."""
    return urllib.parse.quote(name, safe=" @+-_,") or "%00"


def digest(folder: Path, lessons: Sequence[curriculum.Lesson]) -> str:
    """SHA-256 of what grading `folder` reads: its staged files (the lesson
    files and answers, and the refusals)."""
    from m2t.grading import staging

    h = hashlib.sha256()
    with tempfile.TemporaryDirectory(prefix="m2t-digest-") as temp:
        try:
            staged = staging.stage(
                Path(folder), [x.module for x in lessons], Path(temp)
            )
        except ValueError as err:
            return f"error: {err}"
        for path in sorted(staged.iterdir()):
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


# ---------------------------------------------------- one student, a child
def grade_one(
    folder: Path,
    lessons: Sequence[curriculum.Lesson],
    out: Path,
    timeout: float,
    lesson_timeout: float,
    allow_weaker_sandbox: bool,
    name: str,
    expected_digest: str,
    seed: int,
) -> None:
    """Grade one submission as `m2t grade --submission` does, its judge's
    inputs drawn from `seed`; write its record to `out` (`<out
    stem>.results.json` beside it: Gradescope's format), the record last
    and atomically; both name the seed."""
    from m2t.console import quiet_native_stderr
    from m2t.grading import reports
    from m2t.grading import runner

    start = time.perf_counter()
    with (
        submission.staged(folder, lessons) as (impl, notes),
        submission.judged_on(seed),
    ):
        notes = [*notes, submission.seed_note(seed)]
        with quiet_native_stderr():
            results = runner.grade(
                lessons,
                impl=impl,
                timeout=timeout,
                sandbox=True,
                lesson_timeout=lesson_timeout,
                allow_weaker_sandbox=allow_weaker_sandbox,
            )
    seconds = time.perf_counter() - start
    reports.write_gradescope(
        out.with_suffix(".results.json"), results, seconds, notes
    )
    rec = classreport.record(name, results, seconds)
    rec.update(
        digest=expected_digest,
        lessons_asked=[x.tag for x in lessons],
        notes=notes,
        seed=seed,
    )
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(rec, indent=1), encoding="utf-8")
    tmp.replace(out)


def _child_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m m2t.grading.roster")
    parser.add_argument("folder")
    parser.add_argument("out")
    parser.add_argument("--name", required=True)
    parser.add_argument("--digest", required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--lessons", nargs="*", default=[])
    parser.add_argument("--timeout", type=float, required=True)
    parser.add_argument("--lesson-timeout", type=float, required=True)
    parser.add_argument("--allow-weaker-sandbox", action="store_true")
    args = parser.parse_args(argv)
    grade_one(
        Path(args.folder),
        curriculum.select(args.lessons),
        Path(args.out),
        args.timeout,
        args.lesson_timeout,
        args.allow_weaker_sandbox,
        args.name,
        args.digest,
        args.seed,
    )
    return 0


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the batch dies (Linux
    prctl PR_SET_PDEATHSIG), so a killed batch leaves no grading behind."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


# ------------------------------------------------------------- the batch
def load(path: Path) -> dict[str, Any] | None:
    """A student's record, or None when there is none (or it is broken)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def grade_roster(
    roster: Path,
    lessons: Sequence[curriculum.Lesson],
    out: Path,
    jobs: int = 1,
    timeout: float = settings.PROBE_TIMEOUT,
    lesson_timeout: float = settings.LESSON_TIMEOUT,
    allow_weaker_sandbox: bool = False,
    echo=print,
    seed: int | None = None,
    shard: tuple[int, int] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Grade every submission of `roster` not graded yet, `jobs` at once,
    each on a fresh seed of its own (`submission.fresh_seed`), or all on
    `seed` when it is given; only shard (I, N)'s students when `shard` is
    given (`m2t.grading.shards`).

    Returns:
        (the records of the graded students in roster order, {student:
        why not graded} for the others, in roster order).

    Raises:
        ValueError: `jobs` < 1, or a bad roster (see `read`).
    """
    if jobs < 1:
        raise ValueError(f"-j {jobs}: at least 1 submission at a time")
    if seed is not None:  # never the public seed (its fixtures ship)
        submission.submission_seed(seed)
    here = Path(out).resolve()
    students = {  # an output folder inside the roster is no submission
        name: path
        for name, path in read(roster).items()
        if Path(path).resolve() != here
    }
    if shard is not None:
        students = shards.pick(students, shard)
    folder = Path(out) / "students"
    folder.mkdir(parents=True, exist_ok=True)
    tags = [x.tag for x in lessons]
    digests = {name: digest(path, lessons) for name, path in students.items()}
    todo = []
    for name in students:
        rec = load(folder / f"{slug(name)}.json")
        if not (
            rec
            and rec.get("digest") == digests[name]
            and rec.get("lessons_asked") == tags
            and not rec.get("grader_errors")
            and (seed is None or rec.get("seed") == seed)
        ):
            todo.append(name)
    part = f" (shard {shard[0]}/{shard[1]})" if shard else ""
    echo(
        f"roster {roster}{part}: {len(students)} submissions, "
        f"{len(students) - len(todo)} already graded, grading {len(todo)} "
        f"with -j {jobs}"
    )
    failed: dict[str, str] = {}
    running: dict[str, tuple[subprocess.Popen, float]] = {}
    queue = list(todo)

    def stop(signum, frame):  # a SIGTERM ends the batch as Ctrl-C does
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        while queue or running:
            while queue and len(running) < jobs:
                name = queue.pop(0)
                target = folder / f"{slug(name)}.json"
                target.unlink(missing_ok=True)
                log = open(target.with_suffix(".log"), "wb")  # noqa: SIM115
                drawn = submission.fresh_seed() if seed is None else seed
                command = [
                    sys.executable,
                    "-m",
                    "m2t.grading.roster",
                    str(Path(students[name]).resolve()),
                    str(target.resolve()),
                    "--name",
                    name,
                    "--digest",
                    digests[name],
                    "--seed",
                    str(drawn),
                    "--timeout",
                    f"{timeout:g}",
                    "--lesson-timeout",
                    f"{lesson_timeout:g}",
                    "--lessons",
                    *tags,
                ]
                if allow_weaker_sandbox:
                    command.append("--allow-weaker-sandbox")
                with log:
                    proc = subprocess.Popen(
                        command,
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        env=settings.quiet_env(),
                        cwd=ROOT,  # imports the course's m2t, not the roster's
                        start_new_session=True,
                        preexec_fn=_die_with_parent,
                    )
                running[name] = (proc, time.perf_counter())
            for name, (proc, began) in list(running.items()):
                if proc.poll() is None:
                    continue
                del running[name]
                target = folder / f"{slug(name)}.json"
                rec = load(target)
                seconds = time.perf_counter() - began
                if rec is not None and rec["grader_errors"]:
                    first = rec["grader_errors"][0]
                    failed[name] = f"the grader broke: {first}"
                    echo(f"  {name}: NOT GRADED ({failed[name]})")
                elif proc.returncode == 0 and rec is not None:
                    got = sum(x["points"] for x in rec["lessons"])
                    most = sum(x["max_points"] for x in rec["lessons"])
                    echo(
                        f"  {name}: {got:g}/{most:g} ({seconds:.1f}s, seed "
                        f"{rec.get('seed')})"
                    )
                else:
                    why = _last_line(target.with_suffix(".log"))
                    failed[name] = f"exit {proc.returncode}: {why}"
                    echo(f"  {name}: NOT GRADED ({failed[name]})")
            if running:
                time.sleep(POLL_SECONDS)
    finally:
        signal.signal(signal.SIGTERM, previous)
        for proc, _ in running.values():  # interrupted: stop the rest
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
    records = []
    for name in students:
        rec = load(folder / f"{slug(name)}.json")
        if rec is not None and name not in failed:
            records.append(rec)
        elif name not in failed:
            failed[name] = "no record"
    # roster order, not the order the children ended in: the gradebook of
    # one run and of merged shards are the same bytes
    return records, {name: failed[name] for name in students if name in failed}


def _last_line(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "no log"
    return lines[-1][:300] if lines else "no output"


def write_report(
    out: Path, records: Sequence[dict[str, Any]], failed: dict[str, str]
) -> classreport.ClassReport:
    """gradebook.csv, class-report.md and class-report.png in `out`."""
    report = classreport.build(records)
    classreport.write_gradebook(out / "gradebook.csv", report, failed)
    (out / "class-report.md").write_text(
        classpage.markdown(report, failed), encoding="utf-8"
    )
    classpage.chart(report, out / "class-report.png")
    return report


def merge_into(outs: Sequence[Path], final: Path) -> tuple[int, int]:
    """`m2t dev merge-grades`: the shards `outs` merged into `final`: the
    students' records and results, gradebook.csv, class-report.md and
    class-report.png, as one run over the whole roster writes them.

    Returns:
        (students graded, students in the roster).

    Raises:
        ValueError: as `shards.merge`, or naming the shard folder and the
            student whose record is missing.
    """
    names, graded, failed = shards.merge(outs)
    folder = Path(final) / "students"
    folder.mkdir(parents=True, exist_ok=True)
    records = []
    for name, out in graded.items():
        path = Path(out) / "students" / f"{slug(name)}.json"
        rec = load(path)
        if rec is None:
            raise ValueError(
                f"{str(out)!r}: no record for {name!r} ({path.name}); grade "
                "that shard again"
            )
        records.append(rec)
        for part in Path(out, "students").glob(f"{glob.escape(slug(name))}.*"):
            if not part.name.endswith(".tmp"):
                shutil.copy2(part, folder / part.name)
    write_report(Path(final), records, failed)
    shards.write_manifest(
        final, names, (1, 1), shards.lessons_of(outs[0]), failed
    )
    return len(records), len(names)


def main(args: argparse.Namespace, lessons: Sequence[curriculum.Lesson]) -> int:
    """`m2t grade --roster`: 0 when every submission was graded, 1 when
    some could not be, 2 when untrusted code may not be graded here."""
    if args.submission:
        raise ValueError("--roster and --submission: give one of them")
    refused = submission.refusal(args.allow_weaker_sandbox)
    if refused:
        print(f"m2t: error: {refused}")
        return 2
    roster = Path(args.roster)
    out = Path(args.out) if args.out else default_out(roster)
    shard = shards.parse(args.shard) if getattr(args, "shard", None) else None
    start = time.perf_counter()
    try:
        records, failed = grade_roster(
            roster,
            lessons,
            out,
            jobs=args.jobs,
            timeout=args.timeout,
            lesson_timeout=args.lesson_timeout,
            allow_weaker_sandbox=args.allow_weaker_sandbox,
            seed=args.seed,
            shard=shard,
        )
    except KeyboardInterrupt:
        print(
            "\ninterrupted: the finished students are kept; run the same "
            "command again to grade the others",
            file=sys.stderr,
        )
        return 130
    report = write_report(out, records, failed)
    everyone = [
        n for n, p in read(roster).items() if p.resolve() != out.resolve()
    ]
    shards.write_manifest(
        out, everyone, shard or (1, 1), [x.tag for x in lessons], failed
    )
    print()
    print(classpage.markdown(report, failed), end="")
    print(
        f"\n{report.size} of {report.size + len(failed)} graded in "
        f"{time.perf_counter() - start:.1f}s: {out / 'gradebook.csv'}, "
        f"{out / 'class-report.md'}, {out / 'class-report.png'}"
    )
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1:]))
