"""Judging the CNN lessons' networks (02-04): a layer table, side by side
with the expected one (`expect_table`, `expect_network_table`), and a
training smoke check (`expect_loss_falls`). The tables come from
`cnn_probes.layer_table` and, expected, from `cnn_references.simulate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np

from graders.lib.cnn_references import Row
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import fail
from graders.lib.judge import only_match


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


def _format_table(expected: Sequence[Row], got: Sequence[Row]) -> list[str]:
    width = max([len(f"{n} {s}") for n, s in expected] + [len("expected")])
    lines = [f"    {'#':>2}  {'expected':<{width}}  got"]
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
        f"{what}: the layer table differs from row {first} on "
        f"({len(got)} rows, expected {len(expected)}):"
    ]
    tables = {
        m: [(n, tuple(s)) for n, s in rows]
        for m, rows in (diagnoses or {}).items()
    }
    mistake = only_match(got, tables, list.__eq__, expected)
    lines += _format_table(expected, got)
    if hint:
        lines.append(f"  Hint: {hint}")
    fail(lines, mistake)


def expect_network_table(
    facts: Mapping[str, Any],
    call: str,
    input_shape: tuple[int, ...],
    expected: Sequence[Row],
    *,
    diagnoses: Mapping[Mistake, Sequence[Row]] | None = None,
    hint: str = "",
) -> None:
    """`call` (e.g. "vgg()") returned a keras.Sequential whose layer table
    on `input_shape` is `expected`.

    Args:
        facts: what `cnn_probes.layer_table` returned.
        diagnoses: mistake -> the table it gives (see `simulate`).
    """
    expect(
        facts["type"] == "Sequential",
        f"{call} should return a keras.Sequential, got {facts['type']}.",
    )
    expect_table(
        table_rows(facts["rows"]),
        expected,
        f"{call} on {tuple(input_shape)}",
        diagnoses=diagnoses,
        hint=hint,
    )


def expect_loss_falls(losses: Sequence[float], what: str) -> None:
    """A training smoke check: the losses of `cnn_probes.train_steps` (one
    before each Adam step) are finite and fall by 10% below the first."""
    expect(
        bool(np.all(np.isfinite(losses))) and min(losses[1:]) < 0.9 * losses[0],
        f"{what} should lower its loss by 10% within {len(losses)} Adam "
        "steps on one batch of toy images; losses: "
        f"{[round(v, 3) for v in losses]}.",
    )
