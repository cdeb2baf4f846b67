"""A class split across machines, and the pieces merged back.

`m2t grade --roster DIR --shard I/N --out OUT_I` grades only the students
of shard I of N; the N output folders, made on as many machines (a GitHub
Actions matrix, a Slurm array, several shells), are merged by
`m2t dev merge-grades OUT_1 ... OUT_N --out FINAL` into one gradebook and
one class report, the same bytes `m2t grade --roster DIR` writes when it
grades the whole class at once.

A student's shard depends on their name alone (SHA-256 of it, modulo N), so
a roster that gains or loses a student moves no one else, every machine
computes the same split without talking to the others, and a rerun of one
shard grades the same students.

Each shard's folder holds `shard.json` (its manifest): the whole roster in
order, the shard, the lessons asked and the students it could not grade
with the reason; the merge checks that the manifests agree and that every
shard is there before it writes anything.
"""

from __future__ import annotations

import csv
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MANIFEST = "shard.json"
"""The file in a shard's output folder that describes it."""


def parse(text: str) -> tuple[int, int]:
    """`"I/N"` -> (I, N), 1 <= I <= N.

    Raises:
        ValueError: naming --shard and the value when it is not I/N with
            whole numbers 1 <= I <= N.
    """
    index, sep, count = str(text).partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i = n = 0
    if not sep or n < 1 or not 1 <= i <= n:
        raise ValueError(
            f"--shard {text!r}: expected I/N with whole numbers "
            "1 <= I <= N (e.g. 2/8, the second of eight shards)"
        )
    return i, n


def index_of(name: str, count: int) -> int:
    """The shard (1..count) that grades the student called `name`."""
    h = hashlib.sha256(name.encode("utf-8")).digest()
    return int.from_bytes(h[:8], "big") % count + 1


def pick(students: dict[str, Any], shard: tuple[int, int]) -> dict[str, Any]:
    """The students of `shard` (I, N), in roster order."""
    i, n = shard
    return {k: v for k, v in students.items() if index_of(k, n) == i}


def write_manifest(
    out: Path,
    roster: Sequence[str],
    shard: tuple[int, int],
    lessons: Sequence[str],
    failed: dict[str, str],
) -> Path:
    """Write `out/shard.json` (atomically) and return its path."""
    path = Path(out) / MANIFEST
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {
        "shard": list(shard),
        "roster": list(roster),
        "lessons": list(lessons),
        "failed": dict(failed),
    }
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(body, indent=1), encoding="utf-8")
    tmp.replace(path)
    return path


def lessons_of(out: Path) -> list[str]:
    """The lesson tags a shard's run graded."""
    return list(_manifest(Path(out))["lessons"])


def _manifest(out: Path) -> dict[str, Any]:
    path = Path(out) / MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(
            f"{str(out)!r}: no {MANIFEST}; is it the --out of "
            "`m2t grade --roster ... --shard I/N`, and did that run finish?"
        ) from None


def merge(
    outs: Sequence[Path],
) -> tuple[list[str], dict[str, Path], dict[str, str]]:
    """Where each student of the shards `outs` was graded.

    Returns:
        (the roster in order, {student: the shard folder holding their
        record} for those graded, {student: why not graded} in roster
        order).

    Raises:
        ValueError: naming the folder when a manifest is missing, the
            shards disagree (roster, count, lessons), a shard is given
            twice or is missing.
    """
    if not outs:
        raise ValueError("merge-grades: name the shards' output folders")
    listed = [(Path(o), _manifest(Path(o))) for o in outs]
    manifests = dict(listed)
    first_out, first = listed[0]
    count = first["shard"][1]
    seen: dict[int, Path] = {}
    for out, m in listed:
        for key in ("roster", "lessons"):
            if m[key] != first[key]:
                raise ValueError(
                    f"{str(out)!r} and {str(first_out)!r}: the shards were "
                    f"graded with different {key}; merge shards of one run"
                )
        i, n = m["shard"]
        if n != count:
            raise ValueError(
                f"{str(out)!r} is shard {i}/{n}, {str(first_out)!r} one of "
                f"{count}: merge shards of one split"
            )
        if i in seen:
            raise ValueError(
                f"{str(out)!r} and {str(seen[i])!r} are both shard {i}/{n}"
            )
        seen[i] = out
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise ValueError(
            f"shard(s) {', '.join(f'{i}/{count}' for i in missing)} missing: "
            "grade them (same roster, --shard I/N) and merge all of them"
        )
    graded: dict[str, Path] = {}
    failed: dict[str, str] = {}
    for name in first["roster"]:
        out = seen[index_of(name, count)]
        why = manifests[out]["failed"].get(name)
        if why is None:
            graded[name] = out
        else:
            failed[name] = why
    return list(first["roster"]), graded, failed


def members_main(argv: Sequence[str]) -> int:
    """`python -m m2t.grading.shards ROSTER.csv I/N`: print the rows of
    the CSV roster that shard I/N grades (a CI job clones only those)."""
    if len(argv) != 2:
        print(
            "usage: python -m m2t.grading.shards ROSTER.csv I/N",
            file=sys.stderr,
        )
        return 2
    shard = parse(argv[1])
    with open(argv[0], newline="", encoding="utf-8") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    out = csv.writer(sys.stdout, lineterminator="\n")
    for i, row in enumerate(rows):
        if i == 0 and row[0].strip().lower() == "name":
            out.writerow(row)
            continue
        if index_of(row[0].strip(), shard[1]) == shard[0]:
            out.writerow(row)
    return 0


if __name__ == "__main__":
    sys.exit(members_main(sys.argv[1:]))
