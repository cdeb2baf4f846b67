"""The conventions the graders fix, and the constants they fix them with.

README.md's "Conventions the graders fix" lists these, one bullet each, in
this order; `CONVENTIONS` names, for each bullet, the figures it must state
and the lessons whose graders enforce it (tests/test_d2l_ports.py compares
the two line for line).
"""

LAYER_NORM_EPSILON = 1e-5
"""AddNorm's layer-norm epsilon (the paper's code, PyTorch and keras-hub)."""

KERAS_LAYER_NORM_EPSILON = 1e-3
"""`keras.layers.LayerNormalization`'s default epsilon, a known mistake."""

MASK_FILL = -1e9
"""The fill value of masked scores in the solutions and the references.
The graders require only that masked weights be exactly 0, so any fill
that underflows the softmax in float32 (-1e6 too) is accepted."""

BEAM_LENGTH_POWER = 0.75
"""Beam search scores a candidate by sum(log p) / L**0.75."""

POSITION_BASE = 10000
"""The sinusoidal positional encoding's base."""


def _figure(x: float) -> str:
    """1e-05 -> "1e-5", -1e9 -> "-1e9": as the README writes a power of 10."""
    return (
        f"{x:.0e}".replace("e+0", "e").replace("e-0", "e-").replace("e+", "e")
    )


CONVENTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "Masks": {
        "figures": ("exactly 0", _figure(MASK_FILL), "-1e6"),
        "lessons": ("l16", "l18", "l20"),
    },
    "Empty rows": {"figures": ("all zeros",), "lessons": ("l16", "l18")},
    "GRU": {"figures": ("reset_after=False", "[z|r|h]"), "lessons": ("l10",)},
    "LSTM": {"figures": ("[i|f|c|o]",), "lessons": ("l11",)},
    "Positional encoding": {
        "figures": (f"{POSITION_BASE}",),
        "lessons": ("l19", "l20"),
    },
    "Multi-head attention": {
        "figures": ("1/sqrt(D/H)",),
        "lessons": ("l18", "l20"),
    },
    "Transformer": {
        "figures": ("LayerNorm(X + Dropout(Y))", _figure(LAYER_NORM_EPSILON)),
        "lessons": ("l20",),
    },
    "Dropout": {
        "figures": ("sum to 1 in training too", "`X + P`", "every keep-mask"),
        "lessons": ("l12", "l17", "l18", "l19", "l20"),
    },
    "Masked cross-entropy": {
        "figures": ("divided by their number", "0 when no token is valid"),
        "lessons": ("l14",),
    },
    "Beam search": {
        "figures": (f"L**{BEAM_LENGTH_POWER:g}",),
        "lessons": ("l14",),
    },
}
"""README bullet head -> the figures its text must contain and the
lessons it must name as enforcing it."""


def book_vs_course(what: str, book: str, course: str, why: str) -> str:
    """A known mistake's explanation where d2l and this course differ:
    both conventions by name, and why the course keeps its own.

    `what`: what came out ("a row with valid length 0 is uniform");
    `book`: what d2l does; `course`: what this course requires; `why`: the
    reason.

    The message is a `Mistake`'s English; its Chinese, the mistake's entry
    in graders/messages/mistakes.zh.toml, says the same three things in
    the same frame, "...：d2l ...；本课程...（原因：...）。"
    (tests/test_i18n.py checks each one).
    """
    for name, part in (("what", what), ("book", book), ("course", course)):
        if not part.strip():
            raise ValueError(f"`{name}` must say something, got {part!r}")
    if not why.strip():
        raise ValueError(f"`why` must say something, got {why!r}")
    message = f"{what}: d2l {book}; this course {course} (why: {why})."
    BOOK_VS_COURSE.append(message)
    return message


BOOK_VS_COURSE: list[str] = []
"""Every message `book_vs_course` has made in this process (a grader's
module-level constants, made when it is imported)."""


UNIFORM_EMPTY_ROWS = book_vs_course(
    "a query with valid length 0 gets a uniform row (1/S for each key)",
    "gives a uniform row here (its masked_softmax fills -1e6 and stops there)",
    "requires all zeros: multiply the softmax by the mask",
    "such a query has no key to attend to, and a uniform row would pass "
    "it the mean of the padding's values (and their gradients)",
)
"""The explanation of lessons 16 and 18's `uniform_empty_rows`."""
