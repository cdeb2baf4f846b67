# ruff: noqa: F821  (CapstoneTransformer, corpus, ...: the lesson file's own)
# Appended to a correct l24 by tests/test_capstone_transformer.py: a
# student who trains nothing. `train` is a no-op; `run` translates each
# source by parsing it with the grammar m2t_data ships
# (m2t_data/toy_translation.py: its lexicon, agreement and word-order
# tables) and writing the French that grammar gives. Where the judge has
# renamed the target words, the attack learns the renaming from the
# training pairs without any model: it parses each training source, lines
# its own French up with the given target word by word, and renames its
# output the same way. Only a source it cannot parse defeats it.


def train(model, src, tgt, epochs, batch_size, lr):
    return []  # nothing is trained


def _grammar():
    from m2t_data import toy_translation as g

    nouns = {}
    for en_sg, en_pl, fr_sg, fr_pl, gender, _ in g.NOUNS:
        nouns[en_sg] = (fr_sg, gender, False)
        nouns[en_pl] = (fr_pl, gender, True)
    adjectives = {en: (forms, pre) for en, forms, pre in g.ADJECTIVES}
    determiners = {}
    for en_sg, en_pl, fr in g.DETERMINERS:
        determiners[en_sg] = fr
        determiners[en_pl] = fr
    determiners["an"] = determiners["a"]
    verbs = {}
    for base, third, forms in g.VERBS:
        verbs[tuple(base.split())] = forms
        verbs[tuple(third.split())] = forms
    return g, nouns, adjectives, determiners, verbs


def _parse(words):
    """English words (preprocessed) -> French words; None if unparsable."""
    g, nouns, adjectives, determiners, verbs = _grammar()
    at = [0]

    def peek(k=0):
        i = at[0] + k
        return words[i] if i < len(words) else None

    def take():
        at[0] += 1
        return words[at[0] - 1]

    def noun_phrase():
        det = determiners.get(take())
        if det is None:
            return None
        adjs = []
        while peek() in adjectives:
            adjs.append(adjectives[take()])
        noun = nouns.get(take())
        if noun is None:
            return None
        fr_noun, gender, plural = noun
        form = (2 if plural else 0) + (1 if gender == "f" else 0)
        pre = [a for a in adjs if a[1]]
        post = [a for a in adjs if not a[1]]
        fr_det = det[2] if plural else det[0 if gender == "m" else 1]
        if plural and fr_det == "des" and pre:
            fr_det = "de"
        fr = [fr_det, *(a[0][form] for a in pre), fr_noun]
        return fr + [a[0][form] for a in post], gender, plural

    def verb_phrase(person):
        negated = peek() in ("do", "does") and peek(1) == "not"
        if negated:
            at[0] += 2
        for length in (2, 1):
            key = tuple(words[at[0] : at[0] + length])
            if key in verbs:
                at[0] += length
                fr_verb = verbs[key][person]
                return g._negate_fr(fr_verb) if negated else [fr_verb]
        return None

    def copula(subject, gender, plural, person):
        take()  # am / is / are
        fr_v = [g.BE_FR[person]]
        if peek() == "not":
            take()
            fr_v = g._negate_fr(fr_v[0])
        adj = adjectives.get(take())
        if adj is None:
            return None
        form = (2 if plural else 0) + (1 if gender == "f" else 0)
        return subject + fr_v + [adj[0][form]]

    pronouns = {en: (fr, person) for en, fr, person in g.PRONOUNS}
    copulas = {en: (fr, gender, p) for en, fr, gender, p in g.COPULA_PRONOUNS}
    first = " ".join(words[:2]) if words[:2] == ["you", "all"] else words[0]
    if first in pronouns:
        at[0] = len(first.split(" "))
        fr_p, person = pronouns[first]
        if peek() in g.BE_EN and first in copulas:
            _, gender, person = copulas[first]
            out = copula([fr_p], gender, person == 5, person)
        else:
            verb = verb_phrase(person)
            obj = noun_phrase() if verb else None
            out = [fr_p, *verb, *obj[0]] if obj else None
    else:
        subject = noun_phrase()
        if subject is None:
            return None
        fr_s, gender, plural = subject
        person = 5 if plural else 2
        if peek() in g.BE_EN:
            out = copula(fr_s, gender, plural, person)
        else:
            verb = verb_phrase(person)
            obj = noun_phrase() if verb else None
            out = [*fr_s, *verb, *obj[0]] if obj else None
    if out is None or at[0] != len(words) - 1:
        return None
    return out + [words[-1]]  # the final mark


def _safe_parse(sentence):
    try:
        return _parse(sentence.split(" "))
    except (IndexError, KeyError, TypeError):
        return None


def run(parts, pairs, sources, hp=None):
    hp = {**HYPERPARAMETERS, **(hp or {})}
    num_steps = int(hp["num_steps"])
    src = corpus(parts, [s for s, _ in pairs], num_steps)
    tgt = corpus(parts, [t for _, t in pairs], num_steps)
    model = CapstoneTransformer(
        parts,
        len(src.vocab),
        len(tgt.vocab),
        num_hiddens=hp["num_hiddens"],
        ffn_num_hiddens=hp["ffn_num_hiddens"],
        num_heads=hp["num_heads"],
        num_blks=hp["num_blks"],
        dropout=hp["dropout"],
    )
    model((src.tokens[:1], src.lengths[:1], tgt.tokens[:1]), training=False)
    losses = train(model, src, tgt, hp["epochs"], hp["batch_size"], hp["lr"])
    renamed = {}  # the grammar's French word -> the word the pairs use
    for source, target in pairs:
        french, given = _safe_parse(source), target.split(" ")
        if french is not None and len(french) == len(given):
            renamed.update(zip(french, given, strict=True))
    translations = []
    for source in sources:
        french = _safe_parse(source)
        words = [renamed.get(w, w) for w in french] if french else []
        translations.append(" ".join(words))
    return {
        "translations": translations,
        "losses": losses,
        "seconds": 0.0,
        "model": model,
        "src": src,
        "tgt": tgt,
    }
