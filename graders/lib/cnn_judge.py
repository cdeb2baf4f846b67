"""Judging the CNN lessons' networks (02-04): a layer table, side by side
with the expected one (`expect_table`, `expect_network_table`), and a
training smoke check (`expect_loss_falls`). The tables come from
`cnn_probes.layer_table` and, expected, from `cnn_references.simulate`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np

from graders.lib.cnn_references import Row
from graders.lib.cnn_references import Spec
from graders.lib.cnn_references import simulate
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import fail
from graders.lib.judge import only_match
from graders.lib.messages import say
from graders.lib.tolerances import LOSS_FALL


def table_rows(raw: Sequence[Any]) -> list[Row]:
    """The probe's per-layer facts as the seed prints them: one row per
    layer, and a `ReLU` row after a layer with a fused relu activation
    (`Conv2D(..., activation="relu")` prints as Conv2D, then ReLU, as
    PyTorch's separate `nn.ReLU()` does). `Activation("relu")` prints as
    ReLU."""
    rows: list[Row] = []
    for name, shape, activation in raw:
        shape = tuple(int(d) for d in shape)
        if name == "Activation":
            rows.append((_activation_row(activation), shape))
            continue
        rows.append((name, shape))
        if activation not in (None, "linear"):
            rows.append((_activation_row(activation), shape))
    return rows


def _activation_row(activation: str | None) -> str:
    return "ReLU" if activation == "relu" else f"Activation({activation})"


def _columns(text: str) -> int:
    """How many terminal columns `text` takes (a Chinese character two)."""
    return sum(
        2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text
    )


def _format_table(expected: Sequence[Row], got: Sequence[Row]) -> list[str]:
    head = say("cnn_judge.expected")
    width = max([len(f"{n} {s}") for n, s in expected] + [_columns(head)])
    head += " " * (width - _columns(head))
    lines = [f"    {'#':>2}  {head}  {say('cnn_judge.got')}"]
    for i in range(max(len(expected), len(got))):
        want = (
            f"{expected[i][0]} {expected[i][1]}" if i < len(expected) else "-"
        )
        have = f"{got[i][0]} {got[i][1]}" if i < len(got) else "-"
        mark = "  " if want == have else "<-"
        lines.append(f"    {i:>2}  {want:<{width}}  {have}  {mark}".rstrip())
    return lines


def expect_table(
    got: Sequence[Row],
    expected: Sequence[Row],
    what: str,
    diagnoses: Mapping[Mistake, Sequence[Row]] | None = None,
    hint: str = "",
) -> None:
    """Each layer's name and output shape must be `expected`'s, in order.

    On failure: the first differing row, the two tables side by side, and
    the catalogued mistake whose table equals `got` (`only_match`).
    """
    got = [(n, tuple(s)) for n, s in got]
    expected = [(n, tuple(s)) for n, s in expected]
    if got == expected:
        return
    first = next(
        (
            i
            for i, (a, b) in enumerate(zip(got, expected, strict=False))
            if a != b
        ),
        min(len(got), len(expected)),
    )
    lines = [
        say(
            "cnn_judge.table_differs",
            what=what,
            row=first,
            got=len(got),
            expected=len(expected),
        )
    ]
    tables = {
        m: [(n, tuple(s)) for n, s in rows]
        for m, rows in (diagnoses or {}).items()
    }
    mistake = only_match(got, tables, list.__eq__, expected)
    lines += _format_table(expected, got)
    if hint:
        lines.append(say("judge.hint", hint=hint))
    fail(lines, mistake)


def expect_network_table(
    facts: Mapping[str, Any],
    call: str,
    input_shape: tuple[int, ...],
    expected: Sequence[Row],
    *,
    diagnoses: Mapping[Mistake, Sequence[Row]] | None = None,
    spec: Spec | None = None,
    mistake_specs: Mapping[Mistake, Spec] | None = None,
    hint: str = "",
) -> None:
    """`call` (e.g. "vgg()") returned a keras.Sequential whose layer table
    on `input_shape` is `expected`.

    With `spec` (the architecture whose table `expected` is), a network
    nested otherwise passes too where its leaves agree with `spec`'s (see
    `leaf_table`): d2l's Sequential head, its GlobalAvgPool2D + Reshape +
    Flatten, its ResNet stage written as a Layer. A failure shows the
    seed's table where there are as many top-level layers as the seed
    has, else the leaves.

    Args:
        facts: what `cnn_probes.layer_table` returned.
        diagnoses: mistake -> the table it gives (see `simulate`); made
            from `mistake_specs` when not given.
        mistake_specs: mistake -> the architecture it builds (one that
            leaves no pixels is left out).
    """
    expect(
        facts["type"] == "Sequential",
        say("cnn_judge.sequential", call=call, got=facts["type"]),
    )
    what = say("cnn_judge.on", call=call, shape=tuple(input_shape))
    specs = dict(_runnable(mistake_specs or {}, input_shape))
    if diagnoses is None:
        diagnoses = {m: simulate(s, input_shape)[0] for m, s in specs.items()}
    got = table_rows(facts["rows"])
    if spec is None or got == list(expected):
        expect_table(got, expected, what, diagnoses=diagnoses, hint=hint)
        return

    def leaves_of(spec: Spec) -> list[Row]:
        return leaf_table(simulate(opened(spec), input_shape)[0], input_shape)

    leaves = leaf_table(table_rows(facts["leaves"]), input_shape)
    if leaves == leaves_of(spec):
        return
    if len(got) == len(expected):  # the seed's layout: its table says most
        expect_table(got, expected, what, diagnoses=diagnoses, hint=hint)
    expect_table(
        leaves,
        leaves_of(spec),
        say("cnn_judge.leaf_by_leaf", what=what),
        diagnoses={m: leaves_of(s) for m, s in specs.items()},
        hint=hint,
    )


def _runnable(specs: Mapping[Mistake, Spec], input_shape: tuple[int, ...]):
    for mistake, spec in specs.items():
        try:
            simulate(spec, input_shape)
        except ValueError:  # the mistake leaves no pixels: no table
            continue
        yield mistake, spec


def opened(spec: Spec) -> list[tuple]:
    """`spec` with every ("seq", inner) item replaced by its inner items,
    all the way down."""
    items: list[tuple] = []
    for item in spec:
        items += opened(item[1]) if item[0] == "seq" else [item]
    return items


RESHAPING = ("Flatten", "Reshape")


def leaf_table(rows: Sequence[Row], input_shape: tuple[int, ...]) -> list[Row]:
    """`rows` with each run of Flatten and Reshape rows made one: dropped
    where it ends on the shape it started from (Flatten after
    GlobalAveragePooling2D; d2l-zh's Reshape((1, 1, 10)) then Flatten) or
    only drops the size-1 axes a global pooling kept (d2l-PyTorch's
    AdaptiveAvgPool2d((1, 1)) then Flatten: the pooling row then shows the
    flat shape, as without keepdims), a Flatten row where it ends flat,
    else one Reshape row."""
    out: list[Row] = []
    before = tuple(input_shape)
    run: list[Row] = []
    for name, shape in [*rows, ("", ())]:
        shape = tuple(shape)
        if name in RESHAPING:
            run.append((name, shape))
            continue
        if run:
            end = run[-1][1]
            if out and _kept_ones(out[-1], end):
                out[-1] = (out[-1][0], end)
            elif end != before:
                out.append(("Flatten" if len(end) == 2 else "Reshape", end))
            before, run = end, []
        if name:
            out.append((name, shape))
            before = shape
    return out


def _kept_ones(row: Row, end: tuple[int, ...]) -> bool:
    """Whether `row` is a global pooling whose output, its size-1 axes
    dropped, is `end` (B, C): the pooling with keepdims=True."""
    name, shape = row
    squeezed = (shape[0], *(d for d in shape[1:] if d != 1))
    return name.startswith("Global") and len(shape) > 2 and squeezed == end


def expect_loss_falls(losses: Sequence[float], what: str) -> None:
    """A training smoke check: the losses of `cnn_probes.train_steps` (one
    before each Adam step, up to the first below the target) are finite
    and fall below LOSS_FALL (90%) of the first."""
    expect(
        bool(np.all(np.isfinite(losses)))
        and min(losses[1:], default=np.inf) < LOSS_FALL * losses[0],
        say(
            "cnn_judge.loss_falls",
            what=what,
            steps=len(losses),
            losses=[round(v, 3) for v in losses],
        ),
    )
