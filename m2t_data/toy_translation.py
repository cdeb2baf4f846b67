"""A generated English-to-French-like corpus (``toy_fra_eng``).

Short sentences (at most 8 words a side, final punctuation not counted)
from a small lexicon and rules chosen so that the two sides differ in the
ways attention has to learn:

* gender and number agreement: ``le/la/les``, ``un/une/des`` (``de``
  before a plural adjective),
  ``mon/ma/mes``, ``ce/cette/ces`` and adjective endings
  (``vert/verte/verts/vertes``); irregular plurals (``chevaux``,
  ``gâteaux``) and forms (``vieux/vieille``, ``blanc/blanche``);
* word order: colour-like adjectives follow the noun
  (``the big red car`` -> ``la grande voiture rouge``) while size and age
  adjectives stay in front;
* verb conjugation in the present tense for
  ``je/tu/il/elle/nous/vous/ils`` and noun subjects (``you`` is always
  ``tu``, ``you all`` is ``vous``, ``they`` is ``ils``);
* negation around the verb: ``do not see`` -> ``ne voit pas``,
  ``is not`` -> ``n'est pas``.

Each English sentence has exactly one translation, so a model can reach a
BLEU near 1 on held-out pairs. The raw text looks like ``fra.txt``
(capitalised, punctuation attached, tab separated), so the same
preprocessing and lesson code serve both corpora. The split is made on
distinct English sentences: test pairs never occur in train.
"""

from __future__ import annotations

import random

NUM_TRAIN = 3000
NUM_TEST = 300
MAX_WORDS = 8

# Nouns: english singular, plural, french singular, plural, gender, animate.
NOUNS = [
    ("cat", "cats", "chat", "chats", "m", True),
    ("dog", "dogs", "chien", "chiens", "m", True),
    ("horse", "horses", "cheval", "chevaux", "m", True),
    ("boy", "boys", "garçon", "garçons", "m", True),
    ("book", "books", "livre", "livres", "m", False),
    ("cake", "cakes", "gâteau", "gâteaux", "m", False),
    ("bike", "bikes", "vélo", "vélos", "m", False),
    ("pen", "pens", "stylo", "stylos", "m", False),
    ("girl", "girls", "fille", "filles", "f", True),
    ("cow", "cows", "vache", "vaches", "f", True),
    ("car", "cars", "voiture", "voitures", "f", False),
    ("apple", "apples", "pomme", "pommes", "f", False),
    ("house", "houses", "maison", "maisons", "f", False),
    ("table", "tables", "table", "tables", "f", False),
    ("chair", "chairs", "chaise", "chaises", "f", False),
    ("letter", "letters", "lettre", "lettres", "f", False),
]

# Adjectives: english, (m sg, f sg, m pl, f pl), placed before the noun?
ADJECTIVES = [
    ("big", ("grand", "grande", "grands", "grandes"), True),
    ("small", ("petit", "petite", "petits", "petites"), True),
    ("pretty", ("joli", "jolie", "jolis", "jolies"), True),
    ("old", ("vieux", "vieille", "vieux", "vieilles"), True),
    ("red", ("rouge", "rouge", "rouges", "rouges"), False),
    ("green", ("vert", "verte", "verts", "vertes"), False),
    ("black", ("noir", "noire", "noirs", "noires"), False),
    ("white", ("blanc", "blanche", "blancs", "blanches"), False),
    ("blue", ("bleu", "bleue", "bleus", "bleues"), False),
    ("heavy", ("lourd", "lourde", "lourds", "lourdes"), False),
]
PRE_ADJECTIVES = [a for a in ADJECTIVES if a[2]]
POST_ADJECTIVES = [a for a in ADJECTIVES if not a[2]]

# Determiners: english singular, plural, french (m sg, f sg, plural).
DETERMINERS = [
    ("the", "the", ("le", "la", "les")),
    ("a", "some", ("un", "une", "des")),
    ("my", "my", ("mon", "ma", "mes")),
    ("this", "these", ("ce", "cette", "ces")),
]

# Verbs: english base, 3rd person singular, french by person
# (je, tu, il/elle, nous, vous, ils).
VERBS = [
    (en, en3, tuple(fr.split()))
    for en, en3, fr in [
        ("see", "sees", "vois vois voit voyons voyez voient"),
        ("take", "takes", "prends prends prend prenons prenez prennent"),
        ("carry", "carries", "porte portes porte portons portez portent"),
        ("find", "finds", "trouve trouves trouve trouvons trouvez trouvent"),
        ("wash", "washes", "lave laves lave lavons lavez lavent"),
        ("sell", "sells", "vends vends vend vendons vendez vendent"),
        ("draw", "draws", "dessine dessines dessine dessinons dessinez "
         "dessinent"),
        ("want", "wants", "veux veux veut voulons voulez veulent"),
        ("look for", "looks for", "cherche cherches cherche cherchons "
         "cherchez cherchent"),
        ("push", "pushes", "pousse pousses pousse poussons poussez poussent"),
    ]
]  # fmt: skip
BE_EN = ("am", "are", "is", "are", "are", "are")
BE_FR = ("suis", "es", "est", "sommes", "êtes", "sont")

# Pronoun subjects: english, french, person index (0..5).
PRONOUNS = [
    ("i", "je", 0),
    ("you", "tu", 1),
    ("he", "il", 2),
    ("she", "elle", 2),
    ("we", "nous", 3),
    ("you all", "vous", 4),
    ("they", "ils", 5),
]
# Pronouns whose gender and number are known, for "<subject> is <adj>".
COPULA_PRONOUNS = [
    ("he", "il", "m", 2),
    ("she", "elle", "f", 2),
    ("they", "ils", "m", 5),
]


def _a_or_an(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _noun_phrase(rng: random.Random, animate_only: bool = False):
    """(english words, french words, gender, plural) of one noun phrase."""
    nouns = [n for n in NOUNS if n[5]] if animate_only else NOUNS
    en_sg, en_pl, fr_sg, fr_pl, gender, _ = rng.choice(nouns)
    plural = rng.random() < 0.4
    det_sg, det_pl, det_fr = rng.choice(DETERMINERS)
    pre = rng.choice(PRE_ADJECTIVES) if rng.random() < 0.3 else None
    post = rng.choice(POST_ADJECTIVES) if rng.random() < 0.5 else None
    form = (2 if plural else 0) + (1 if gender == "f" else 0)
    en_adjs = [a[0] for a in (pre, post) if a is not None]
    en_noun = en_pl if plural else en_sg
    en_det = det_pl if plural else det_sg
    if en_det == "a":
        en_det = _a_or_an((en_adjs + [en_noun])[0])
    fr_det = det_fr[2] if plural else det_fr[0 if gender == "m" else 1]
    en = [en_det, *en_adjs, en_noun]
    if plural and fr_det == "des" and pre is not None:
        fr_det = "de"  # "de grandes voitures": des -> de before an adjective
    fr = [fr_det]
    if pre is not None:
        fr.append(pre[1][form])
    fr.append(fr_pl if plural else fr_sg)
    if post is not None:
        fr.append(post[1][form])
    return en, fr, gender, plural


def _negate_fr(verb: str) -> list[str]:
    """``ne <verb> pas``, eliding ``ne`` before a vowel (``n'est pas``)."""
    if verb[0] in "aeiouéêh":
        return ["n'" + verb, "pas"]
    return ["ne", verb, "pas"]


def _pronoun_clause(rng: random.Random):
    """``<pronoun> [do not] <verb> <noun phrase>``."""
    en_p, fr_p, person = rng.choice(PRONOUNS)
    base, third, fr_forms = rng.choice(VERBS)
    negated = rng.random() < 0.25
    obj_en, obj_fr, _, _ = _noun_phrase(rng)
    fr_verb = fr_forms[person]
    if negated:
        aux = "does not" if person == 2 else "do not"
        en = [en_p, aux, base]
        fr = [fr_p, *_negate_fr(fr_verb)]
    else:
        en = [en_p, third if person == 2 else base]
        fr = [fr_p, fr_verb]
    return en + obj_en, fr + obj_fr


def _noun_clause(rng: random.Random):
    """``<noun phrase> [does not] <verb> <noun phrase>``."""
    subj_en, subj_fr, _, plural = _noun_phrase(rng, animate_only=True)
    person = 5 if plural else 2
    base, third, fr_forms = rng.choice(VERBS)
    negated = rng.random() < 0.25
    obj_en, obj_fr, _, _ = _noun_phrase(rng)
    fr_verb = fr_forms[person]
    if negated:
        en_v = ["do not" if plural else "does not", base]
        fr_v = _negate_fr(fr_verb)
    else:
        en_v = [base if plural else third]
        fr_v = [fr_verb]
    return subj_en + en_v + obj_en, subj_fr + fr_v + obj_fr


def _copula_clause(rng: random.Random):
    """``<subject> is [not] <adjective>`` with agreement."""
    if rng.random() < 0.3:
        en_s, fr_s, gender, person = rng.choice(COPULA_PRONOUNS)
        subj_en, subj_fr, plural = [en_s], [fr_s], person == 5
    else:
        subj_en, subj_fr, gender, plural = _noun_phrase(rng)
        person = 5 if plural else 2
    adj_en, adj_fr, _ = rng.choice(ADJECTIVES)
    form = (2 if plural else 0) + (1 if gender == "f" else 0)
    en_v, fr_v = [BE_EN[person]], [BE_FR[person]]
    if rng.random() < 0.25:
        en_v.append("not")
        fr_v = _negate_fr(fr_v[0])
    return subj_en + en_v + [adj_en], subj_fr + fr_v + [adj_fr[form]]


def _sentence(rng: random.Random) -> tuple[str, str, str]:
    """(key, english, french): key is the English words, no punctuation."""
    while True:
        kind = rng.random()
        if kind < 0.4:
            en, fr = _pronoun_clause(rng)
        elif kind < 0.75:
            en, fr = _noun_clause(rng)
        else:
            en, fr = _copula_clause(rng)
        en_words = " ".join(en).split(" ")  # "look for" counts as two
        if len(en_words) <= MAX_WORDS and len(fr) <= MAX_WORDS:
            break
    mark = "!" if rng.random() < 0.1 else "."
    en_s, fr_s = " ".join(en_words), " ".join(fr)
    return (
        en_s,
        en_s[0].upper() + en_s[1:] + mark,
        fr_s[0].upper() + fr_s[1:] + mark,
    )


def raw_pairs(split: str = "train", seed: int = 0) -> list[tuple[str, str]]:
    """Raw (English, French) pairs of one split, before preprocessing.

    Args:
        split: ``"train"`` (3,000 pairs) or ``"test"`` (300 pairs; no
            English sentence of test occurs in train).
        seed: generator seed; same seed, same pairs.

    Returns:
        list of ``(english, french)`` str tuples, e.g.
        ``("The big red car is heavy.", "La grande voiture rouge est
        lourde.")``.
    """
    if split not in ("train", "test"):
        raise ValueError(f"`split` must be 'train' or 'test', got {split!r}")
    items = list(_corpus(seed).values())
    return items[:NUM_TRAIN] if split == "train" else items[NUM_TRAIN:]


def unseen_pairs(num: int, draw: int, seed: int = 0) -> list[tuple[str, str]]:
    """Raw pairs of the same grammar that occur in neither split of
    ``seed``'s corpus: held-out pairs that only whoever knows ``draw`` can
    list. A capstone's judge draws ``draw`` afresh for each grade and sends
    the worker the English side only.

    Args:
        num: how many pairs (positive).
        draw: the generator seed of these pairs.
        seed: the corpus they avoid (``raw_pairs``'s seed).

    Returns:
        ``num`` distinct ``(english, french)`` str tuples, as in
        ``raw_pairs``.
    """
    if int(num) != num or num <= 0:
        raise ValueError(f"`num` must be a positive int, got {num!r}")
    seen = _corpus(seed)
    rng = random.Random(f"toy_fra_eng/unseen/{draw}")
    pairs: dict[str, tuple[str, str]] = {}
    while len(pairs) < num:
        key, en, fr = _sentence(rng)
        if key not in seen:
            pairs.setdefault(key, (en, fr))
    return list(pairs.values())


def _corpus(seed: int) -> dict[str, tuple[str, str]]:
    """{English words: (english, french)} of both splits, train first."""
    rng = random.Random(f"toy_fra_eng/{seed}")
    # Keyed on the English words, so that "... dog." and "... dog!" never
    # land on both sides of the split.
    pairs: dict[str, tuple[str, str]] = {}
    while len(pairs) < NUM_TRAIN + NUM_TEST:
        key, en, fr = _sentence(rng)
        pairs.setdefault(key, (en, fr))
    return pairs


def raw_text(split: str = "train", seed: int = 0) -> str:
    """``raw_pairs`` as ``fra.txt``-like text: ``en<TAB>fr`` lines."""
    return "".join(f"{en}\t{fr}\n" for en, fr in raw_pairs(split, seed))
