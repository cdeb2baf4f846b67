"""Grader for lesson 07: random and sequential minibatches, perplexity.

The corpus is a random permutation of 0..N-1, so every token tells where it
sits (`POS[token]`) and a minibatch can be traced back to its place in the
corpus. Sizes: B=2, T=5, N=35 (d2l's example), B=3, T=4 with N=40 or N=53,
and two lengths whose counts depend on the offset: B=1, T=4, N=55 (13
random subsequences for the offsets 0..2, 12 for 3) and B=3, T=4, N=49
(4 sequential minibatches for offset 0, 3 for any other).
Conventions: the offset is drawn from [0, T); Y is X one token later.
"""

import numpy as np
import pytest

from graders.lib.contract import expect_value_errors
from graders.lib.conventions import book_vs_course
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import expect_shape
from graders.lib.messages import say
from graders.lib.probes import value_errors
from graders.lib.tolerances import EXACT
from graders.lib.tolerances import F32
from m2t.grading.probe import Lesson

lesson = Lesson("l07_language_model_data")

# ---------------------------------------------------------------- mistakes
OVERLAP = Mistake(
    "random_overlapping_subsequences",
    "the random subsequences overlap: their starts must be offset + k * "
    "num_steps (a stride of num_steps), shuffled, each used once.",
)
OFFSET_NEVER_RANDOM = Mistake(
    "offset_never_random",
    "the random iterator always starts at offset 0, so every epoch cuts the "
    "corpus at the same places: draw the offset from [0, num_steps).",
)
ROWS_INTERLEAVED = Mistake(
    "sequential_rows_interleaved",
    "the sequential rows interleave the corpus (reshape to (-1, B) and "
    "transpose), so minibatch i + 1 does not continue minibatch i: reshape "
    "to (batch_size, -1) so each row is one contiguous stretch.",
)
Y_NOT_SHIFTED = Mistake(
    "y_not_shifted",
    "the labels Y equal the inputs X: Y is X one token later, the next "
    "token at each position.",
)
OFFSET_UP_TO_T = Mistake(
    "offset_up_to_num_steps",
    book_vs_course(
        "the offset can be num_steps",
        "draws it with random.randint(0, num_steps), num_steps included",
        "draws it from [0, num_steps): rng.integers(num_steps)",
        "offset num_steps cuts the corpus at the same places as offset 0, "
        "one stretch shorter, so the cuts would not be uniform",
    ),
)
PPL_NO_EXP = Mistake(
    "perplexity_no_exp",
    "perplexity without exp is the mean cross-entropy itself: take exp(mean).",
)
PPL_SUM = Mistake(
    "perplexity_sum",
    "perplexity uses the sum of the losses: it is exp of the MEAN, so it "
    "does not grow with the number of tokens.",
)
MISTAKES = (
    OVERLAP,
    OFFSET_NEVER_RANDOM,
    ROWS_INTERLEAVED,
    Y_NOT_SHIFTED,
    OFFSET_UP_TO_T,
    PPL_NO_EXP,
    PPL_SUM,
)


# -------------------------------------------------------------- references
def _corpus(N, rng):
    """(corpus, POS): a permutation of 0..N-1 (drawn from the grade's
    `rng`) and where each token sits."""
    corpus = rng.permutation(N)
    return corpus, np.argsort(corpus)


@reference
def ref_sequential(corpus, B, T, offset, mistake=None):
    """(num_batches, B, T) X and Y for a given offset."""
    num_tokens = ((len(corpus) - offset - 1) // B) * B
    shift = 0 if mistake is Y_NOT_SHIFTED else 1
    xs = corpus[offset : offset + num_tokens]
    ys = corpus[offset + shift : offset + shift + num_tokens]
    if mistake is ROWS_INTERLEAVED:
        xs, ys = xs.reshape(-1, B).T, ys.reshape(-1, B).T
    else:
        xs, ys = xs.reshape(B, -1), ys.reshape(B, -1)
    n = xs.shape[1] // T
    X = np.stack([xs[:, i * T : (i + 1) * T] for i in range(n)])
    Y = np.stack([ys[:, i * T : (i + 1) * T] for i in range(n)])
    return X.astype(np.float64), Y.astype(np.float64)


@reference
def ref_perplexity(losses, mistake=None):
    losses = np.asarray(losses, dtype=np.float64)
    if mistake is PPL_NO_EXP:
        return np.mean(losses)
    if mistake is PPL_SUM:
        return np.exp(np.sum(losses))
    return np.exp(np.mean(losses))


def _stack(batches, kind, B, T):
    """list of (X, Y) -> (X (n, B, T), Y (n, B, T)), each minibatch's
    shape checked first."""
    for x, y in batches:
        expect_shape(np.asarray(x), (B, T), say(f"l07.{kind}_x"))
        expect_shape(np.asarray(y), (B, T), say(f"l07.{kind}_y"))
    X = np.stack([np.asarray(x) for x, _ in batches])
    Y = np.stack([np.asarray(y) for _, y in batches])
    return X, Y


def _starts(X, pos):
    """The corpus position of each subsequence's first token, (n * B,)."""
    return pos[np.asarray(X)[..., 0].reshape(-1)]


def _repeated(starts):
    """The starts used more than once, sorted."""
    values, counts = np.unique(np.asarray(starts), return_counts=True)
    return [int(v) for v in values[counts > 1]]


def _random_offset(batches, pos, T):
    """The offset the random minibatches show: every start is offset + k T
    (0 when nothing came)."""
    firsts = [pos[np.asarray(X)[:, 0]] for X, _ in batches]
    return int(min(int(f.min()) for f in firsts)) % T if firsts else 0


# ------------------------------------------------------------------ probes
@lesson.probe
def run_iter(m, kind, corpus, B, T, seed):
    fn = (
        m.seq_data_iter_random
        if kind == "random"
        else (m.seq_data_iter_sequential)
    )
    return [(np.asarray(X), np.asarray(Y)) for X, Y in fn(corpus, B, T, seed)]


@lesson.probe
def run_seeds(m, kind, corpus, B, T, seeds):
    fn = (
        m.seq_data_iter_random
        if kind == "random"
        else (m.seq_data_iter_sequential)
    )
    firsts = []
    for seed in seeds:
        runs = [
            [np.asarray(X) for X, _ in fn(corpus, B, T, seed)] for _ in range(2)
        ]
        firsts.append((np.stack(runs[0]), np.stack(runs[1])))
    # Two generators of one seed: what is judged is that equal generators
    # give equal minibatches, so the seed is public on purpose.
    generator = [
        np.stack([np.asarray(X) for X, _ in fn(corpus, B, T, rng)])
        for rng in (np.random.default_rng(3), np.random.default_rng(3))
    ]
    return firsts, generator


@lesson.probe
def run_sequential_offsets(m, corpus, B, T, seeds):
    """The first token of each seed's sequential minibatches."""
    return [
        int(next(iter(m.seq_data_iter_sequential(corpus, B, T, s)))[0][0, 0])
        for s in seeds
    ]


@lesson.probe
def run_perplexity(m, losses):
    return m.perplexity(losses)


@lesson.probe
def run_errors(m, corpus):
    list(m.seq_data_iter_sequential(corpus, 2, 3, 0))  # the lesson is started
    bad = {
        "batch_size": (corpus, 0, 3),
        "num_steps": (corpus, 2, -1),
        "corpus": (corpus[:8], 2, 3),
    }
    return {
        fn.__name__: value_errors(
            {
                name: (lambda fn=fn, args=args: list(fn(*args, seed=0)))
                for name, args in bad.items()
            }
        )
        for fn in (m.seq_data_iter_random, m.seq_data_iter_sequential)
    }


SIZES = {"d2l_B2_T5_N35": (2, 5, 35), "B3_T4_N40": (3, 4, 40)}
# N a multiple of T gives N // T - 1 random subsequences whatever the
# offset; N = 55 with T = 4 gives (N - offset - 1) // T = 13 for the offsets
# 0..2 and 12 for 3, and B = 1 uses every one of them.
RANDOM_SIZES = {**SIZES, "B1_T4_N55": (1, 4, 55)}


# ------------------------------------------------------------ random checks
@pytest.mark.parametrize("sizes", list(RANDOM_SIZES), ids=list(RANDOM_SIZES))
def test_random_minibatch_shapes_and_count(rng, sizes):
    B, T, N = RANDOM_SIZES[sizes]
    corpus, pos = _corpus(N, rng)
    for seed in (0, 1, 2):
        batches = run_iter("random", corpus, B, T, seed)
        offset = _random_offset(batches, pos, T)
        subsequences = (N - offset - 1) // T
        expected = subsequences // B
        expect(
            len(batches) == expected,
            say(
                "l07.random_count",
                N=N,
                B=B,
                T=T,
                seed=seed,
                offset=offset,
                subsequences=subsequences,
                expected=expected,
                got=len(batches),
            ),
        )
        for X, Y in batches:
            expect_shape(X, (B, T), say("l07.random_x"))
            expect_shape(Y, (B, T), say("l07.random_y"))


@pytest.mark.points(2)
@pytest.mark.parametrize("sizes", list(RANDOM_SIZES), ids=list(RANDOM_SIZES))
@pytest.mark.parametrize("seed", [0, 1, 2], ids=lambda s: f"seed{s}")
def test_random_covers_each_subsequence_once(rng, sizes, seed):
    B, T, N = RANDOM_SIZES[sizes]
    corpus, pos = _corpus(N, rng)
    X, _ = _stack(run_iter("random", corpus, B, T, seed), "random", B, T)
    starts = _starts(X, pos)
    repeated = _repeated(starts)
    expect(
        not repeated,
        say("l07.random_repeated", N=N, T=T, seed=seed, repeated=repeated),
    )
    offset = int(starts.min()) % T
    subsequences = (N - offset - 1) // T
    expected = offset + T * np.arange(subsequences)
    got = np.sort(starts)
    expect(
        got.tolist() == expected.tolist(),
        say(
            "l07.random_starts",
            N=N,
            T=T,
            seed=seed,
            offset=offset,
            last=subsequences - 1,
            subsequences=subsequences,
            starts=got.tolist(),
        ),
        got=got.astype(np.float64),
        # the stride-1 starts of overlapping subsequences, told apart from
        # repeated starts (caught above) and from any other set of starts
        diagnoses={OVERLAP: offset + np.arange(subsequences, dtype=float)},
        expected=expected.astype(np.float64),
    )
    rows = X.reshape(-1, T)
    slices = np.stack([corpus[s : s + T] for s in starts])
    expect(
        np.array_equal(rows, slices),
        say("l07.random_rows"),
    )


@pytest.mark.parametrize("kind", ["random", "sequential"])
def test_y_is_x_shifted_by_one(rng, kind):
    B, T, N = 3, 4, 53
    corpus, pos = _corpus(N, rng)
    X, Y = _stack(run_iter(kind, corpus, B, T, 5), kind, B, T)
    offset = int(pos[X[0, 0, 0]]) if kind == "sequential" else 0
    expect(
        np.array_equal(pos[Y], pos[X] + 1),
        say("l07.shifted", kind=kind),
        got=Y.astype(np.float64) if kind == "sequential" else None,
        diagnoses={
            Y_NOT_SHIFTED: lambda: ref_sequential(
                corpus, B, T, offset, Y_NOT_SHIFTED
            )[1]
        }
        if kind == "sequential"
        else None,
        expected=ref_sequential(corpus, B, T, offset)[1],
    )
    if kind == "sequential":
        expect(
            not np.array_equal(Y, X),
            say("l07.y_equals_x"),
            got=Y.astype(np.float64),
            diagnoses={
                Y_NOT_SHIFTED: lambda: ref_sequential(
                    corpus, B, T, offset, Y_NOT_SHIFTED
                )[1]
            },
        )


@pytest.mark.parametrize("kind", ["random", "sequential"])
def test_seed_makes_it_deterministic_and_offsets_vary(rng, kind):
    B, T, N = 3, 4, 53
    corpus, pos = _corpus(N, rng)
    firsts, generator = run_seeds(kind, corpus, B, T, list(range(12)))
    for seed, (one, two) in enumerate(firsts):
        expect(
            np.array_equal(one, two),
            say("l07.seed_twice", kind=kind, seed=seed),
        )
    expect(
        np.array_equal(generator[0], generator[1]),
        say("l07.generator_twice", kind=kind),
    )
    offsets = {int(pos[X[..., 0]].min()) % T for X, _ in firsts}
    expect(
        len(offsets) > 1 and max(offsets) < T,
        say("l07.offsets_vary", kind=kind, T=T, offsets=sorted(offsets)),
        got=np.array([float(offsets == {0})]),
        diagnoses={OFFSET_NEVER_RANDOM: np.array([1.0])}
        if kind == "random"
        else None,
    )
    if kind == "random":
        orders = [pos[X[..., 0]].reshape(-1) for X, _ in firsts]
        expect(
            any(np.any(np.diff(o) < 0) for o in orders),
            say("l07.shuffled"),
        )


# -------------------------------------------------------- sequential checks
# N - 1 = 48 = 4 B T: offset 0 leaves rows of 16 tokens (4 minibatches),
# any other offset rows of 15 (3 minibatches).
SEQUENTIAL_SIZES = {
    "d2l_B2_T5_N35": (2, 5, 35),
    "B3_T4_N53": (3, 4, 53),
    "B3_T4_N49": (3, 4, 49),
}


@pytest.mark.parametrize(
    "sizes", list(SEQUENTIAL_SIZES), ids=list(SEQUENTIAL_SIZES)
)
def test_sequential_shapes_and_count(rng, sizes):
    B, T, N = SEQUENTIAL_SIZES[sizes]
    corpus, pos = _corpus(N, rng)
    for seed in (1, 2, 3):
        batches = run_iter("sequential", corpus, B, T, seed)
        expect(len(batches) > 0, say("l07.nothing"))
        offset = int(pos[np.asarray(batches[0][0])[0, 0]])
        row = (N - offset - 1) // B
        expected = row // T
        expect(
            len(batches) == expected,
            say(
                "l07.sequential_count",
                N=N,
                B=B,
                T=T,
                seed=seed,
                offset=offset,
                row=row,
                expected=expected,
                got=len(batches),
            ),
        )
        for X, Y in batches:
            expect_shape(X, (B, T), say("l07.sequential_x"))
            expect_shape(Y, (B, T), say("l07.sequential_y"))


@pytest.mark.points(2)
@pytest.mark.parametrize("seed", [0, 1, 2], ids=lambda s: f"seed{s}")
def test_sequential_matches_reference(rng, seed):
    B, T, N = 3, 4, 53
    corpus, pos = _corpus(N, rng)
    X, Y = _stack(
        run_iter("sequential", corpus, B, T, seed), "sequential", B, T
    )
    offset = int(pos[X[0, 0, 0]])
    expect(
        0 <= offset < T,
        say("l07.first_token", offset=offset, T=T),
        got=np.array([float(offset == T)]),
        diagnoses={OFFSET_UP_TO_T: np.array([1.0])},
    )
    # One seed's offset cannot show the range it was drawn from; 50 more
    # seeds all miss a given one of the T + 1 values with chance 0.8**50.
    seeds = list(range(100 * (seed + 1), 100 * (seed + 1) + 50))
    offsets = pos[run_sequential_offsets(corpus, B, T, seeds)]
    expect(
        offsets.max() < T,
        say(
            "l07.offset_range",
            first=seeds[0],
            last=seeds[-1],
            offsets=sorted(set(offsets.tolist())),
            T=T,
        ),
        got=np.array([float(offsets.max() == T)]),
        diagnoses={OFFSET_UP_TO_T: np.array([1.0])},
    )
    for part, got, name in ((0, X, "X"), (1, Y, "Y")):
        expect_close(
            got,
            ref_sequential(corpus, B, T, offset)[part],
            say("l07.sequential_all", name=name, offset=offset),
            tol=EXACT,
            diagnoses={
                mistake: (
                    lambda mistake=mistake, part=part: ref_sequential(
                        corpus, B, T, offset, mistake
                    )[part]
                )
                for mistake in (ROWS_INTERLEAVED, Y_NOT_SHIFTED)
            },
        )


@pytest.mark.points(2)
def test_sequential_minibatches_continue_each_other(rng):
    """Row b of minibatch i + 1 starts right after row b of minibatch i:
    what lets a model carry its hidden state across minibatches."""
    B, T, N = 3, 4, 77
    corpus, pos = _corpus(N, rng)
    X, _ = _stack(run_iter("sequential", corpus, B, T, 4), "sequential", B, T)
    offset = int(pos[X[0, 0, 0]])
    places = pos[X]  # (n, B, T)
    adjacent = np.array_equal(places[1:, :, 0], places[:-1, :, -1] + 1) and (
        np.array_equal(places[..., 1:], places[..., :-1] + 1)
    )
    expect(
        len(X) > 1 and adjacent,
        say(
            "l07.continues",
            first=places[0].tolist(),
            second=places[1].tolist() if len(X) > 1 else None,
        ),
        got=X.astype(np.float64),
        diagnoses={
            ROWS_INTERLEAVED: lambda: ref_sequential(
                corpus, B, T, offset, ROWS_INTERLEAVED
            )[0]
        },
        expected=ref_sequential(corpus, B, T, offset)[0],
    )


def test_bad_arguments_raise_value_error(rng):
    corpus, _ = _corpus(30, rng)
    for where, errors in run_errors(corpus).items():
        expect_value_errors(errors, where=where)


# ---------------------------------------------------------- perplexity checks
@pytest.mark.points(2)
@pytest.mark.parametrize("shape", [(2, 3), (7,)], ids=["B2_T3", "flat7"])
def test_perplexity_matches_reference(rng, shape):
    losses = rng.uniform(0.5, 3.0, size=shape).astype("float32")
    expect_close(
        run_perplexity(losses),
        ref_perplexity(losses),
        say("l07.perplexity"),
        tol=F32,
        diagnoses={
            m: (lambda m=m: ref_perplexity(losses, m))
            for m in (PPL_NO_EXP, PPL_SUM)
        },
    )


@pytest.mark.parametrize(
    "case", ["perfect", "uniform_28", "uniform_1000"], ids=str
)
def test_perplexity_facts(case):
    """A perfect model has perplexity 1; guessing uniformly over V tokens
    has perplexity V, however many tokens are scored."""
    V, shape = {
        "perfect": (1, (4, 6)),
        "uniform_28": (28, (4, 6)),
        "uniform_1000": (1000, (3,)),
    }[case]
    losses = np.full(shape, np.log(V), dtype="float32")
    expect_close(
        run_perplexity(losses),
        np.float64(V),
        say(
            "l07.perplexity_of",
            case=say("l07.perfect" if V == 1 else "l07.uniform"),
            V=V,
        ),
        tol=F32,
        diagnoses={
            m: (lambda m=m: ref_perplexity(losses, m))
            for m in (PPL_NO_EXP, PPL_SUM)
        },
    )
