"""Tests of accessibility_lib.figures.interval_plots: open interval ends are arrows, closed ones caps."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from accessibility_lib.experiments.fitting import fit_sigmoid  # noqa: E402
from accessibility_lib.figures.interval_plots import n50_points  # noqa: E402


def _fit(ci_open):
    f = fit_sigmoid(np.array([4.0, 6.0, 8.0, 10.0]), np.array([1.0, 0.7, 0.3, 0.0]), np.full(4, 10.0))
    f.ci_open = ci_open
    return f


def test_open_end_is_an_arrow_without_a_cap_and_its_point_is_hollow():
    fig, ax = plt.subplots()
    n50_points(ax, [1, 2], [_fit((False, False)), _fit((False, True))], color="C0", label="x")
    markers = [(ln.get_marker(), ln.get_markerfacecolor()) for ln in ax.lines if ln.get_marker() not in ("None", None)]
    heads = [m for m, _ in markers if m in ("^", "v")]
    assert heads == ["^"]  # one arrowhead: the open upper end of the second interval
    points = [c for m, c in markers if m == "o"]
    assert points[0] != "white" and points[1] == "white"  # the open interval's point is hollow
    caps = [ln for ln in ax.lines if len(ln.get_xdata()) == 2 and ln.get_ydata()[0] == ln.get_ydata()[1]]
    assert len(caps) == 3  # both ends of the closed interval, the closed lower end of the other
    assert ax.get_legend_handles_labels()[1] == ["x"]
    plt.close(fig)


def test_mismatched_lengths_are_refused():
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="same length"):
        n50_points(ax, [1, 2], [_fit((False, False))], color="C0")
    plt.close(fig)
