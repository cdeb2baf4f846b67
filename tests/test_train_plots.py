"""The one heatmap helper (m2t/plots.py) of the notebooks and `m2t train`:
one colour scale for all panels under its one colour bar, ticks at whole
positions or the tokens, a scale centred on 0 for signed values."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from m2t import plots  # noqa: E402


def images_and_bars(fig):
    """The heatmaps of `fig`, and its colour bars' axes."""
    images = [im for ax in fig.axes for im in ax.get_images()]
    bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    heat = [im for im in images if im.axes.get_label() != "<colorbar>"]
    return heat, bars


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_panels_with_their_own_ranges_share_one_scale():
    # Head 1 is sharp (a weight of 1.0), head 2 flat (0.25 at most): under
    # one bar both must be drawn on the same 0..1 scale.
    sharp = np.eye(4)
    flat = np.full((4, 4), 0.25)
    fig = plots.heatmaps(np.stack([sharp, flat]), titles=["h1", "h2"])
    heat, bars = images_and_bars(fig)
    assert len(heat) == 2
    assert len(bars) == 1
    assert {im.get_clim() for im in heat} == {(0.0, 1.0)}
    # The bar reads the panels' scale.
    assert bars[0].get_ylim() == pytest.approx((0.0, 1.0))


def test_ticks_are_whole_positions_or_the_tokens():
    weights = np.random.default_rng(0).random((2, 3, 5))
    # Tall panels: matplotlib's own ticks would fall at -0.5, 0, 0.5, ...
    fig = plots.heatmaps(weights, figsize=(9, 6))
    fig.canvas.draw()
    for im in images_and_bars(fig)[0]:
        for ticks, size in (
            (im.axes.get_xticks(), 5),
            (im.axes.get_yticks(), 3),
        ):
            shown = [t for t in ticks if -0.5 <= t <= size - 0.5]
            assert shown, "no ticks"
            assert all(float(t).is_integer() for t in shown), ticks
    # One query (a decoder step): its row is ticked 0 alone, not -0.5..0.5.
    fig = plots.heatmaps(weights[:, :1], figsize=(9, 2))
    for im in images_and_bars(fig)[0]:
        assert list(im.axes.get_yticks()) == [0]
        assert list(im.axes.get_xticks()) == [0, 1, 2, 3, 4]
    long = plots.heatmaps(np.ones((1, 40)) / 40)  # a long source: 8 ticks
    (im,) = images_and_bars(long)[0]
    assert list(im.axes.get_xticks()) == [0, 6, 12, 18, 24, 30, 36, 39]
    words = ["je", "suis", "chez", "moi", "."]
    fig = plots.heatmaps(weights[0], xticks=words, yticks=["i'm", "home", "."])
    (im,) = images_and_bars(fig)[0]
    assert [t.get_text() for t in im.axes.get_xticklabels()] == words
    assert list(im.axes.get_xticks()) == [0, 1, 2, 3, 4]
    assert [t.get_text() for t in im.axes.get_yticklabels()] == [
        "i'm",
        "home",
        ".",
    ]


def test_signed_values_get_a_scale_centred_on_zero():
    table = np.sin(np.arange(12.0)[:, None] * np.arange(1, 5)) * 0.8
    table[0, 0] = -0.3  # the range is not symmetric itself
    fig = plots.heatmaps(table + 0.1, diverging=True)
    (im,) = images_and_bars(fig)[0]
    low, high = im.get_clim()
    assert low == -high
    assert high == pytest.approx(np.abs(table + 0.1).max())
    assert im.get_cmap().name == plots.DIVERGING


def test_a_bad_layout_is_refused():
    with pytest.raises(ValueError, match=r"`matrices` .* shape \(5,\)"):
        plots.heatmaps(np.zeros(5))
    with pytest.raises(ValueError, match="`xticks` must have 4 labels, got 2"):
        plots.heatmaps(np.zeros((3, 4)), xticks=["a", "b"])
