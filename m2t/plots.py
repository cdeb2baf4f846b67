"""Heatmaps drawn one way for the notebooks and for `m2t train`'s pictures.

    from m2t import plots
    fig = plots.heatmaps(weights, titles=["head 1", "head 2"],
                         xticks=source_words, yticks=output_words)

Every panel shares one colour scale, so the one colour bar reads true for
all of them (a weight of 1.0 is the same red in every head); the axes are
ticked at whole positions (or with the tokens), never at the pixel edges;
`diverging=True` centres a red-blue map on 0 for signed values (the
positional encoding, hidden states, a rotation matrix).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

DIVERGING = "RdBu_r"


def whole_ticks(size: int, most: int = 8) -> list[int]:
    """At most `most` evenly spread whole positions of an axis of `size`
    cells, 0 and size - 1 included (a one-row panel gets the tick 0, where
    matplotlib's own locator would tick -0.5, -0.4, ...)."""
    if size <= most:
        return list(range(size))
    step = -(-(size - 1) // (most - 1))  # ceil: at most `most` ticks
    ticks = list(range(0, size, step))
    if ticks[-1] != size - 1:  # the last cell is always ticked
        if len(ticks) < most:
            ticks.append(size - 1)
        else:
            ticks[-1] = size - 1
    return ticks


def shared_scale(
    matrices: np.ndarray,
    vmin: float | None = None,
    vmax: float | None = None,
    diverging: bool = False,
) -> tuple[float, float]:
    """The one `(vmin, vmax)` of all panels: the data's range where not
    given; symmetric about 0 (`-m, m` with m the largest |value|) when
    diverging."""
    values = np.asarray(matrices, dtype=float)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        finite = np.zeros(1)
    if diverging:
        m = float(np.max(np.abs(finite)))
        if vmin is not None or vmax is not None:
            m = max(abs(v) for v in (vmin, vmax) if v is not None)
        m = m or 1.0
        return -m, m
    low = float(finite.min()) if vmin is None else float(vmin)
    high = float(finite.max()) if vmax is None else float(vmax)
    if high <= low:
        high = low + 1.0
    return low, high


def heatmaps(
    matrices,
    titles: Sequence[str] | None = None,
    xlabel: str = "keys",
    ylabel: str = "queries",
    xticks: Sequence[str] | None = None,
    yticks: Sequence[str] | None = None,
    cmap: str | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    diverging: bool = False,
    suptitle: str | None = None,
    figsize: tuple[float, float] | None = None,
    cols: int | None = None,
):
    """A grid of heatmaps with one shared colour scale and one colour bar.

    Args:
        matrices: one `(T, S)` matrix, `(N, T, S)` panels (laid out
            `cols` to a row, 4 at most by default), or `(rows, cols, T,
            S)` (d2l's `show_heatmaps` layout).
        titles: one per panel, row by row.
        xticks, yticks: the S column and T row labels (tokens); without
            them the axes are ticked at whole positions 0, 1, 2, ...
        cmap: the colour map; "Reds" by default, a red-blue map centred
            on 0 when `diverging`.
        vmin, vmax: the shared scale; by default the range of all panels
            (see `shared_scale`).
        diverging: signed values: a scale symmetric about 0.

    Returns:
        the matplotlib figure (`plt.show()` in a notebook, `savefig`).
    """
    import matplotlib.pyplot as plt

    matrices = np.asarray(matrices, dtype=float)
    if matrices.ndim == 2:
        matrices = matrices[None, None]
    elif matrices.ndim == 3:
        count = len(matrices)
        per_row = cols or min(count, 4)
        rows = -(-count // per_row)
        pad = rows * per_row - count
        filler = np.full((pad, *matrices.shape[1:]), np.nan)
        matrices = np.concatenate([matrices, filler]).reshape(
            rows, per_row, *matrices.shape[1:]
        )
    elif matrices.ndim != 4:
        raise ValueError(
            "`matrices` must be (T, S), (N, T, S) or (rows, cols, T, S), "
            f"got shape {matrices.shape}"
        )
    rows, cols_, t, s = matrices.shape
    for name, ticks, size in (("xticks", xticks, s), ("yticks", yticks, t)):
        if ticks is not None and len(ticks) != size:
            raise ValueError(
                f"`{name}` must have {size} labels, got {len(ticks)}"
            )
    low, high = shared_scale(matrices, vmin, vmax, diverging)
    cmap = cmap or (DIVERGING if diverging else "Reds")
    cell = 0.32 if xticks is not None else 0.06
    width = max(2.4, min(5.5, cell * s + 1.4))
    height = max(2.0, min(5.0, cell * t + 1.0))
    fig, axes = plt.subplots(
        rows,
        cols_,
        figsize=figsize or (width * cols_ + 0.8, height * rows),
        squeeze=False,
        layout="constrained",
    )
    image = None
    for index, ax in enumerate(axes.flat):
        i, j = divmod(index, cols_)
        matrix = matrices[i, j]
        if np.isnan(matrix).all():  # a filler panel
            ax.axis("off")
            continue
        image = ax.imshow(matrix, cmap=cmap, vmin=low, vmax=high, aspect="auto")
        if titles is not None and index < len(titles):
            ax.set_title(titles[index], fontsize=9)
        if xticks is not None:
            ax.set_xticks(range(s), list(xticks), rotation=60, fontsize=8)
        else:
            ax.set_xticks(whole_ticks(s))
        if yticks is not None:
            ax.set_yticks(range(t), list(yticks), fontsize=8)
        else:
            ax.set_yticks(whole_ticks(t))
        if i == rows - 1 or np.isnan(matrices[min(i + 1, rows - 1), j]).all():
            ax.set_xlabel(xlabel, fontsize=8)
        if j == 0:
            ax.set_ylabel(ylabel, fontsize=8)
        else:
            ax.tick_params(labelleft=False)
    if image is not None:
        fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.8, pad=0.01)
    if suptitle:
        fig.suptitle(suptitle)
    return fig
