"""PNG figures a person would rather look at than read (matplotlib, Agg).

Generic pictures here; each family (images.py, sine.py, language.py,
translation.py) chooses the ones that teach its model.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from m2t import plots as shared  # noqa: E402

DIVERGING = shared.DIVERGING  # signed values (the positional encoding)

DPI = 110


def _save(fig, path: str | os.PathLike) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def curves(
    history: Sequence[dict],
    path: str | os.PathLike,
    title: str,
    quality: str | None = None,
) -> Path:
    """Loss per epoch (train, and validation when there is one); a second
    panel for accuracy or perplexity when the logs have it.

    Args:
        history: one dict of logs per epoch ("loss", "val_loss", ...).
        quality: "accuracy" or "perplexity" for the second panel.
    """
    epochs = np.arange(1, len(history) + 1)
    panels = 2 if quality else 1
    fig, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 3.6))
    axes = np.atleast_1d(axes)

    def line(ax, key, label, transform=None):
        values = [h.get(key) for h in history]
        if any(v is None for v in values):
            return
        values = np.asarray(values, float)
        if transform is not None:
            values = transform(values)
        style = "o-" if len(values) < 30 else "-"
        ax.plot(epochs, values, style, ms=3, label=label)

    line(axes[0], "loss", "train")
    line(axes[0], "val_loss", "validation")
    axes[0].set(xlabel="epoch", ylabel="loss", title=f"{title}: loss")
    if quality == "accuracy":
        line(axes[1], "accuracy", "train")
        line(axes[1], "val_accuracy", "test")
        axes[1].set(
            xlabel="epoch", ylabel="accuracy", ylim=(0, 1), title="accuracy"
        )
    elif quality == "perplexity":
        line(axes[1], "loss", "train", np.exp)
        axes[1].set(
            xlabel="epoch",
            ylabel="perplexity = exp(loss)",
            yscale="log",
            title="perplexity",
        )
    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    fig.tight_layout()
    return _save(fig, path)


def heatmaps(
    matrices: Sequence[np.ndarray],
    titles: Sequence[str],
    path: str | os.PathLike,
    xlabels: Sequence[str] | None = None,
    ylabels: Sequence[str] | None = None,
    xlabel: str = "keys",
    ylabel: str = "queries",
    suptitle: str | None = None,
    vmin: float | None = 0.0,
    vmax: float | None = None,
) -> Path:
    """Side-by-side heatmaps (e.g. one per head) with one colour scale and
    one colour bar, ticked with the tokens (`m2t.plots.heatmaps`)."""
    fig = shared.heatmaps(
        np.asarray(matrices),
        titles=titles,
        xlabel=xlabel,
        ylabel=ylabel,
        xticks=xlabels,
        yticks=ylabels,
        vmin=vmin,
        vmax=vmax,
        suptitle=suptitle,
    )
    return _save(fig, path)


def text_panel(
    lines: Sequence[str], path: str | os.PathLike, title: str
) -> Path:
    """Lines of text (samples) drawn as a figure, monospaced and wrapped."""
    import textwrap

    wrapped = []
    for line in lines:
        wrapped.extend(
            textwrap.wrap(line, 88, subsequent_indent="    ") or [""]
        )
    fig = plt.figure(figsize=(9, 0.6 + 0.24 * len(wrapped)))
    fig.text(0.01, 0.98, title, fontsize=11, weight="bold", va="top")
    fig.text(
        0.01,
        0.98 - 0.35 / (0.6 + 0.24 * len(wrapped)),
        "\n".join(wrapped),
        family="monospace",
        fontsize=9,
        va="top",
    )
    return _save(fig, path)


def image_grid(
    images: np.ndarray,
    titles: Sequence[str],
    path: str | os.PathLike,
    suptitle: str,
    colors: Sequence[str] | None = None,
    cols: int = 8,
) -> Path:
    """Grayscale images `(N, H, W, 1)` with a title (and colour) each."""
    count = len(images)
    rows = -(-count // cols)
    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(1.45 * cols, 1.75 * rows + 0.4),
        squeeze=False,
        gridspec_kw={"hspace": 0.45},
    )
    for i, ax in enumerate(axes.flat):
        ax.axis("off")
        if i >= count:
            continue
        ax.imshow(images[i][..., 0], cmap="gray", vmin=0, vmax=1)
        ax.set_title(
            titles[i],
            fontsize=8,
            color=colors[i] if colors is not None else "black",
        )
    fig.suptitle(suptitle)
    return _save(fig, path)


def figure(width: float = 8.0, height: float = 3.6, cols: int = 1):
    """A new figure and axes, for a family's own picture; save with
    `save(fig, path)`."""
    return plt.subplots(1, cols, figsize=(width, height))


def save(fig, path: str | os.PathLike) -> Path:
    """Save and close a figure from `figure`."""
    fig.tight_layout()
    return _save(fig, path)


def shares_by_group(
    groups: Sequence[str],
    series: dict[str, Sequence[float]],
    counts: Sequence[int],
    *,
    xlabel: str,
    title: str,
    path: str | os.PathLike,
) -> Path:
    """Two series of values in [0, 1] (a mean score, a share) as pairs of
    bars, one pair per group, each group's count above it."""
    fig, ax = figure(6.4, 3.4)
    at = np.arange(len(groups))
    colours = ("tab:blue", "tab:orange")
    for k, ((label, values), colour) in enumerate(
        zip(series.items(), colours, strict=True)
    ):
        bars = ax.bar(
            at - 0.2 + 0.4 * k, values, 0.4, color=colour, label=label
        )
        if k == 0:
            for bar, count in zip(bars, counts, strict=True):
                x = bar.get_x() + bar.get_width()
                ax.text(x, 1.02, f"n={count}", ha="center", fontsize=7)
    ax.set_xticks(at, list(groups))
    ax.set(xlabel=xlabel, ylim=(0, 1.3), title=title)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.legend(fontsize=8, loc="upper right", ncol=2)  # above the bars
    ax.grid(axis="y", alpha=0.3)
    return save(fig, path)
