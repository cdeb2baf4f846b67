"""A generated character corpus (``toy_char_corpus``).

Prose drawn from a small grammar with a fixed seed: a keeper, a lamp, a
harbour and the weather, in short past-tense sentences, wrapped into lines
of at most 64 characters with blank lines between paragraphs, like the
raw ``timemachine.txt``. After the same preprocessing as The Time Machine
(letters and single spaces, lower case) it has about 250,000 characters,
a-z and space, over about 6,000 lines.

The vocabulary is a few hundred words with a skewed frequency, so a
character model can learn spelling and some syntax, and perplexity goes
well below the 27 of a uniform guess.
"""

from __future__ import annotations

import random

NUM_CHAPTERS = 12
PARAGRAPHS_PER_CHAPTER = 110
LINE_WIDTH = 64


def _words(spec: str) -> list[str]:
    """Split a ``|``-separated list of words or phrases."""
    return [w.strip() for w in spec.split("|")]


PEOPLE = _words(
    "the keeper | the old keeper | his daughter | the stranger | the "
    "clockmaker | the fisherman | the children | the doctor | the "
    "captain | my brother | the woman from the mill | the pilot"
)
PRONOUNS = _words("he | she | they | we | i")
NOUNS = _words(
    "lamp | tower | door | window | clock | letter | boat | storm | "
    "light | stair | garden | bell | rope | map | key | candle | stone "
    "| wall | road | village | hill | ship | harbour | cliff | wave | "
    "lantern | chair | table | fire | coat | net | basket | bridge | "
    "gate | field | river | kettle | book | compass | sail | jug | "
    "jacket | puzzle | jetty | zinc box | quilt"
)
PLACES = _words(
    "the shore | the tower | the harbour | the village | the hill | the "
    "cliff | the river | the road | the garden | the mill | the sea | "
    "the bridge | the old church | the kitchen | the yard"
)
ADJECTIVES = _words(
    "old | grey | cold | small | great | dark | bright | quiet | "
    "strange | broken | heavy | narrow | silent | white | long | empty "
    "| warm | wet | little | brass | wooden | distant | frozen | lazy | "
    "quaint"
)
INTRANSITIVE = _words(
    "walked | waited | slept | laughed | listened | returned | stood | "
    "turned | trembled | smiled | sang | ran | spoke | sat down | "
    "looked up | went out | came back | hesitated | jumped | dozed | "
    "knelt"
)
TRANSITIVE = _words(
    "saw | found | carried | opened | closed | watched | mended | lit | "
    "climbed | followed | remembered | heard | touched | painted | "
    "counted | lost | wound | cleaned | crossed | kept"
)
ADVERBS = _words(
    "slowly | quietly | again | suddenly | at last | for a long time | "
    "once more | without a word | in silence | very carefully"
)
PREPOSITIONS = _words(
    "along | into | across | towards | beneath | beside | behind | "
    "above | through | near"
)
TIMES = _words(
    "in the morning | at night | after the storm | before dawn | in the "
    "evening | that winter | on the third day | at noon | when the tide "
    "turned | long after midnight"
)
WEATHER = _words(
    "the wind rose | the rain came in from the sea | the fog lifted | "
    "the sky was clear | the tide went out | snow fell on the hill | "
    "the sea was calm | a cold wind blew | the clouds broke"
)
FEELINGS = _words("afraid | tired | glad | alone | certain | uneasy")
_PLURAL_SUBJECTS = {"they", "we", "the children"}


def _article(rng: random.Random, word: str) -> str:
    det = rng.choice(["the", "the", "the", "a", "his", "her", "their"])
    if det == "a" and word[0] in "aeiou":
        return "an"
    return det


def _object(rng: random.Random) -> str:
    noun = rng.choice(NOUNS)
    if rng.random() < 0.45:
        adj = rng.choice(ADJECTIVES)
        return f"{_article(rng, adj)} {adj} {noun}"
    return f"{_article(rng, noun)} {noun}"


def _subject(rng: random.Random) -> str:
    return rng.choice(PEOPLE) if rng.random() < 0.6 else rng.choice(PRONOUNS)


def _place(rng: random.Random) -> str:
    return f"{rng.choice(PREPOSITIONS)} {rng.choice(PLACES)}"


def _clause(rng: random.Random) -> str:
    r = rng.random()
    subj = _subject(rng)
    was = "were" if subj in _PLURAL_SUBJECTS else "was"
    if r < 0.3:
        tail = f" {rng.choice(ADVERBS)}" if rng.random() < 0.4 else ""
        return f"{subj} {rng.choice(INTRANSITIVE)} {_place(rng)}{tail}"
    if r < 0.65:
        place = f" {_place(rng)}" if rng.random() < 0.4 else ""
        return f"{subj} {rng.choice(TRANSITIVE)} {_object(rng)}{place}"
    if r < 0.75:
        return rng.choice(WEATHER)
    if r < 0.85:
        return f"{subj} {was} {rng.choice(FEELINGS)}"
    if r < 0.93:
        return f"there was {_object(rng)} {_place(rng)}"
    noun = rng.choice(NOUNS)
    return f"the {noun} was {rng.choice(ADJECTIVES)}"


def _sentence(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.45:
        s = _clause(rng)
    elif r < 0.65:
        s = f"{_clause(rng)}, and {_clause(rng)}"
    elif r < 0.8:
        s = f"{rng.choice(TIMES)}, {_clause(rng)}"
    elif r < 0.9:
        s = f"{_subject(rng)} said that {_clause(rng)}"
    else:
        s = f"when {_clause(rng)}, {_clause(rng)}"
    s = s[0].upper() + s[1:]
    s = s.replace(" i ", " I ")
    return s + rng.choice([".", ".", ".", ".", "!"])


def _wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines


_ROMAN = [
    "I",
    "II",
    "III",
    "IV",
    "V",
    "VI",
    "VII",
    "VIII",
    "IX",
    "X",
    "XI",
    "XII",
    "XIII",
    "XIV",
    "XV",
    "XVI",
    "XVII",
    "XVIII",
]


def raw_lines(seed: int = 0) -> list[str]:
    """The raw corpus lines (capitals, punctuation, blank lines).

    Args:
        seed: generator seed; same seed, same lines.

    Returns:
        list of str, without trailing newlines; preprocess them with
        ``m2t_data.text.preprocess_time_machine``.
    """
    rng = random.Random(f"toy_char_corpus/{seed}")
    lines = ["The Keeper of the Light, a generated tale", "", ""]
    for chapter in range(NUM_CHAPTERS):
        lines += [_ROMAN[chapter], ""]
        for _ in range(PARAGRAPHS_PER_CHAPTER):
            n = rng.randint(2, 6)
            lines += _wrap(
                " ".join(_sentence(rng) for _ in range(n)), LINE_WIDTH
            )
            lines.append("")
        lines.append("")
    return lines
