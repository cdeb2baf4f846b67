"""A generated character corpus with long-range echoes (``toy_inventory``).

Capstone A's default text: "the keeper's inventory", sentences drawn from
a small grammar in which a list of two or three things is named and then
named again, in the same order, a clause later::

    the pilot packed a compass a jug and a sail and then lost the compass
    the jug and the sail

Which thing comes after "lost the " was decided 20 to 40 characters
earlier, further back than a counting n-gram model of order 8 can see; a
recurrent model can carry it in its state. Everything else is short-range
(spelling, the fixed frame), which counting learns as well as anything.
The alphabet is a-z and space, as The Time Machine's after preprocessing.

Nothing here is The Time Machine: ``m2t_data.time_machine_lines("real")``
is the book.
"""

from __future__ import annotations

import random

from .toy_chars import NOUNS as _NOUNS
from .toy_chars import PEOPLE
from .toy_chars import PRONOUNS

THINGS = [noun for noun in _NOUNS if " " not in noun]
"""What the lists name (one word each)."""

FIRST = ["packed", "found", "carried", "counted", "mended", "bought"]
"""The verbs that name a list the first time."""

AGAIN = ["checked", "lost", "cleaned", "kept", "sold", "painted"]
"""The verbs that name it again."""


def sentence(rng: random.Random) -> str:
    """One sentence: a subject names two or three things, then again."""
    subject = rng.choice(PEOPLE) if rng.random() < 0.6 else rng.choice(PRONOUNS)
    things = rng.sample(THINGS, rng.choice([2, 3]))
    listed = " ".join(f"a {t}" for t in things[:-1]) + f" and a {things[-1]}"
    again = " ".join(f"the {t}" for t in things[:-1])
    again += f" and the {things[-1]}"
    return (
        f"{subject} {rng.choice(FIRST)} {listed} and then "
        f"{rng.choice(AGAIN)} {again}"
    )


def text(seed: int | str = 0, num_chars: int = 250_000) -> str:
    """Sentences joined by single spaces, at least `num_chars` long (cut
    at a sentence's end, never inside one).

    Args:
        seed: the generator's seed; same seed, same text.
        num_chars: int > 0.
    """
    if int(num_chars) != num_chars or num_chars <= 0:
        raise ValueError(
            f"`num_chars` must be a positive int, got {num_chars!r}"
        )
    rng = random.Random(f"toy_inventory/{seed}")
    out, total = [], -1  # n sentences take n - 1 spaces
    while total < num_chars:
        out.append(sentence(rng))
        total += len(out[-1]) + 1
    return " ".join(out)


def streams(seed: int | str, count: int, length: int) -> list[str]:
    """`count` texts of exactly `length` characters, each from a
    sentence's start, each from a generator seeded by `seed` and its
    index: held-out text no other seed gives."""
    if count <= 0 or length <= 1:
        raise ValueError(
            f"`count` must be > 0 and `length` > 1, got {count!r}, {length!r}"
        )
    return [text(f"{seed}/{i}", length)[:length] for i in range(count)]
