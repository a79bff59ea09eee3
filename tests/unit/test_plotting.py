"""accessibility_lib.figures.plotting: log axes with enough labelled ticks, legends off the data, labels that do not collide."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from accessibility_lib.figures import plotting  # noqa: E402


def _labels(ax, which: str) -> list[str]:
    ax.figure.canvas.draw()
    axis = ax.xaxis if which == "x" else ax.yaxis
    lo, hi = sorted(getattr(ax, f"get_{which}lim")())
    return [
        t.get_text()
        for t in axis.get_ticklabels()
        if t.get_text() and lo <= t.get_position()[0 if which == "x" else 1] <= hi
    ]


@pytest.mark.parametrize(
    "lo, hi, expected",
    [
        (90, 450, ["90", "100", "200", "300", "400"]),  # chapter 3's n50 range: matplotlib alone labels only 100
        (1, 5, ["1", "2", "5"]),
        (3, 30, ["5", "10", "20"]),
        (1, 1e4, ["1", "10", "100", "1000", "10000"]),
        (1e-12, 1.0, None),  # 13 decades: thinned to at most 9 labels
    ],
)
def test_log_axis_labels_enough_ticks(lo: float, hi: float, expected) -> None:
    fig, ax = plt.subplots()
    ax.plot([lo, hi], [1, 2])
    ax.set_xlim(lo, hi)
    plotting.log_axis(ax, "x")
    labels = _labels(ax, "x")
    if expected is None:
        assert 3 <= len(labels) <= 9 and labels[0] == "$10^{-12}$", labels
    else:
        assert labels == expected
    plt.close(fig)


def test_log_axis_bad_arguments() -> None:
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="which"):
        plotting.log_axis(ax, "z")
    with pytest.raises(ValueError, match="min_labels"):
        plotting.EnoughLogLocator(min_labels=1)
    plt.close(fig)


def test_log_tick_format() -> None:
    assert plotting.log_tick_format(20.0) == "20" and plotting.log_tick_format(0.5) == "0.5"
    assert plotting.log_tick_format(1e6) == "$10^{6}$" and plotting.log_tick_format(2e-5) == "$2\\times10^{-5}$"
    assert plotting.log_tick_format(0.0) == ""


@pytest.mark.parametrize("where", ["right", "below"])
def test_legend_outside_covers_no_data(where: str) -> None:
    fig, ax = plt.subplots(figsize=(5, 3.5))
    x = np.linspace(0, 1, 200)
    for k in range(4):  # curves that fill the whole axes, where any inside legend would cover data
        ax.plot(x, x**k, label=f"x^{k}")
    ax.scatter(np.random.default_rng(0).uniform(0, 1, 300), np.random.default_rng(1).uniform(0, 1, 300), s=2)
    ax.set_xlabel("x")
    inside = ax.legend(loc="upper left")
    assert plotting.legend_data_overlap(ax, inside) > 0  # the check can fail
    leg = plotting.legend_outside(ax, where)
    assert plotting.legend_data_overlap(ax, leg) == 0
    fig.tight_layout()
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    box, axes_box, fig_box = leg.get_window_extent(r), ax.get_window_extent(r), fig.bbox
    assert not box.overlaps(axes_box)
    assert box.x0 >= fig_box.x0 - 1 and box.x1 <= fig_box.x1 + 1 and box.y0 >= fig_box.y0 - 1  # inside the figure
    if where == "below":
        assert box.y1 < ax.xaxis.get_tightbbox(r).y0 + 1  # under the x label, not on it
    plt.close(fig)


def test_legend_outside_bad_where() -> None:
    fig, ax = plt.subplots()
    ax.plot([1, 2], label="a")
    with pytest.raises(ValueError, match="where"):
        plotting.legend_outside(ax, "left")
    plt.close(fig)


def test_label_points_never_overlap_even_for_coincident_points() -> None:
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.set_xlim(-48, 48)
    ax.set_ylim(-30, 30)
    # three prompts that a wide zoom draws a fraction of a pixel apart (the argmax-cell explorer)
    pts = [(0.10, 0.20), (0.12, 0.21), (0.11, 0.19)]
    names = ["The quick brown fox", "https://", "In a distant future"]
    naive = [ax.annotate(n, p, xytext=(5, 5), textcoords="offset points", fontsize=8) for p, n in zip(pts, names)]
    assert plotting.overlapping_texts(naive)  # the naive labels collide
    for t in naive:
        t.remove()
    anns = plotting.label_points(ax, pts, names)
    assert plotting.overlapping_texts(anns) == []
    assert [a.get_text() for a in anns] == names
    plt.close(fig)


def test_label_points_length_mismatch() -> None:
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="same length"):
        plotting.label_points(ax, [(0, 0)], ["a", "b"])
    plt.close(fig)
