"""`m2t release --gradescope autograder.zip`: the bundle an instructor
uploads as a Gradescope programming assignment's autograder.

The zip holds, at its top, `setup.sh` (Gradescope runs it once on its
Ubuntu image: a virtual environment with the course installed) and
`run_autograder` (run per submission: `m2t grade --submission
/autograder/submission`, writing `/autograder/results/results.json`), and
the course's instructor side that grading needs: `m2t/`, `m2t_data/`,
`graders/`, `curriculum.toml`, `pyproject.toml`, `README.md` and the answer
key `solutions/questions_key/` (never the solutions themselves: the
graders judge against their own references). Gradescope unpacks it in
`/autograder/source`; `M2T_AUTOGRADER_ROOT` moves that root for a trial.

`run_autograder` grades only where the container offers the course's
minimum sandbox (`m2t.grading.confine.MINIMUM`: the students' code runs as
a uid of its own, never root, its files confined by namespaces or
Landlock); elsewhere it refuses (`preflight`: a results.json saying why,
to the instructor, and the same on stderr) rather than grade weaker. It
makes the bundle, the submission and the results readable by root only
(Gradescope's best practices: `chmod o=`), and at its end kills whatever
a worker's uid left running (`reap`). `setup.sh` registers the workers'
uids for a system user `m2t-worker`.

The language of the results (`--grading-lang`, the instructor's choice):
`en` or `zh` for the whole course, or `submission` (the default): each
submission's own `.m2t/lang` (what the student chose with `m2t --lang`;
the student edition commits it), English when it has none.
"""

from __future__ import annotations

import os
import shlex
import stat
import tempfile
import zipfile
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path

from m2t import ROOT
from m2t import curriculum

FILES = ("pyproject.toml", "curriculum.toml", "README.md")
FOLDERS = ("m2t", "m2t_data", "graders", "solutions/questions_key")
"""What of the repository the bundle holds (compiled files left out)."""

TEMPLATES = ROOT / "m2t" / "authoring" / "templates"
SCRIPTS = {
    "setup.sh": "gradescope_setup.sh",
    "run_autograder": "gradescope_run_autograder",
}
"""Name in the bundle -> its template."""

GRADING_LANGS = ("submission", "en", "zh")
"""`--grading-lang`: each submission's own language, or one for all."""


def _course_files() -> Iterator[tuple[str, Path]]:
    for name in FILES:
        yield name, ROOT / name
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            rel = path.relative_to(ROOT).as_posix()
            if (
                path.is_file()
                and not path.is_symlink()
                and "__pycache__" not in rel.split("/")
                and not rel.endswith((".pyc", ".pyo"))
            ):
                yield rel, path


def setup_sh() -> str:
    """The `setup.sh` script (the workers' uid range filled in)."""
    from m2t.grading.uids import WORKER_UIDS

    text = (TEMPLATES / SCRIPTS["setup.sh"]).read_text("utf-8")
    return text.replace("@WORKER_UIDS@", f"{WORKER_UIDS[0]}-{WORKER_UIDS[-1]}")


def run_autograder(
    lessons: Sequence[curriculum.Lesson] = (), lang: str = "submission"
) -> str:
    """The `run_autograder` script, grading `lessons` (all when empty) in
    `lang` (see GRADING_LANGS).

    Raises:
        ValueError: `lang` is not one of GRADING_LANGS.
    """
    if lang not in GRADING_LANGS:
        raise ValueError(
            f"--grading-lang {lang!r}: use one of {', '.join(GRADING_LANGS)}"
        )
    text = (TEMPLATES / SCRIPTS["run_autograder"]).read_text("utf-8")
    own = lang == "submission"
    return (
        text.replace("@LESSONS@", " ".join(shlex.quote(x.tag) for x in lessons))
        .replace("@LANG@", "en" if own else lang)
        .replace("@LANG_ARGS@", "--lang-of-submission" if own else "")
    )


def build(
    path: Path,
    lessons: Sequence[curriculum.Lesson] = (),
    lang: str = "submission",
) -> list[str]:
    """Write the Gradescope autograder zip to `path` (atomically); returns
    the names it holds.

    Args:
        path: the zip to write (its folder is made).
        lessons: the lessons this assignment grades (all when empty), e.g.
            one Gradescope assignment per lesson.
        lang: the results' language (GRADING_LANGS): `en` or `zh` for the
            course, `submission` for each submission's own.

    Raises:
        ValueError: `path` does not end in `.zip`, or `lang` is not one of
            GRADING_LANGS.
    """
    run_autograder(lessons, lang)  # refuse a bad `lang` before writing
    path = Path(path)
    if path.suffix != ".zip":
        raise ValueError(f"--gradescope {str(path)!r}: not a .zip file name")
    path.parent.mkdir(parents=True, exist_ok=True)
    names = []
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        with zipfile.ZipFile(temp, "w", zipfile.ZIP_DEFLATED) as bundle:
            for name in SCRIPTS:
                text = (
                    run_autograder(lessons, lang)
                    if name == "run_autograder"
                    else setup_sh()
                )
                info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
                info.external_attr = (stat.S_IFREG | 0o755) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                bundle.writestr(info, text)
                names.append(name)
            for name, source in _course_files():
                bundle.write(source, name)
                names.append(name)
        os.replace(temp, path)
    finally:
        if os.path.exists(temp):
            os.unlink(temp)
    return names


def build_each(
    folder: Path,
    lessons: Sequence[curriculum.Lesson] = (),
    lang: str = "submission",
) -> list[Path]:
    """One bundle per lesson (the recommended layout: one Gradescope
    assignment per lesson, each within Gradescope's default memory and
    time), `folder/lNN.zip` for each of `lessons` (every lesson when
    empty); returns the zips written.

    Raises:
        ValueError: `lang` is not one of GRADING_LANGS.
    """
    run_autograder((), lang)  # refuse a bad `lang` before writing
    written = []
    for lesson in lessons or curriculum.lessons():
        path = Path(folder) / f"{lesson.tag}.zip"
        build(path, [lesson], lang)
        written.append(path)
    return written


def preflight(report: Path) -> str:
    """Before grading: '' where this machine offers the course's minimum
    sandbox; else the refusal (in the run's language), also written to
    `report` as Gradescope's results.json (no test, score 0, the refusal
    as its output) and to stderr."""
    import json
    import sys

    from m2t import i18n
    from m2t.grading import confine

    short = confine.short_of_minimum(confine.missing_layers())
    if not short:
        return ""
    message = i18n.text("gradescope.refused", short="; ".join(short))
    report = Path(report)
    report.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "score": 0.0,
        "output": message,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [],
        "extra_data": {"m2t": "refused", "short_of_minimum": short},
    }
    report.write_text(json.dumps(data, indent=2, ensure_ascii=False))
    print(f"m2t: {message}", file=sys.stderr)
    return message


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m m2t.authoring.gradescope preflight RESULTS` (exit 3 when
    the container is short of the minimum, the refusal written) or `reap`
    (kill every process a worker's uid left, as root)."""
    import argparse

    from m2t.grading import uids

    parser = argparse.ArgumentParser(prog="m2t.authoring.gradescope")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("preflight").add_argument("report", type=Path)
    sub.add_parser("reap")
    args = parser.parse_args(argv)
    if args.command == "preflight":
        return 3 if preflight(args.report) else 0
    if os.geteuid() == 0:
        uids.reap_workers()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
