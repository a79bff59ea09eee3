"""Chapter 6's copying figures: exact match against length (one panel a run) and cliff against training length.

Every run gets its own panel (:func:`exact_panel`), so curves never hide each other; a step is drawn as the
band of its bracket, a fall with its fitted logistic, one-sided results as an arrow from the tested end
(:class:`~accessibility_lib.experiments.cliffs.CliffEstimate`). :func:`cliff_against` puts cliff ranges against a
setting (training length, width), offsetting series sideways so that equal ranges stay visible.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["exact_panel", "cliff_against"]


def exact_panel(ax, rec: dict, cliff, train_max_len: int, color: str, title: str | None = None) -> None:
    """Draw one run's exact match against length on ``ax``.

    Args:
        ax: a matplotlib axes.
        rec: the run's outcome record (``rec["eval"]``: ``length``, ``exact_rate``, ``ci_low``, ``ci_high``,
            ``char_acc``; lengths in symbols, rates in [0, 1]).
        cliff: its :class:`~accessibility_lib.experiments.cliffs.CliffEstimate`.
        train_max_len: the longest training length (a dashed vertical line).
        color: the run's colour.
        title: the panel title (default: the record's label).
    """
    ev = rec["eval"]
    n, p = np.asarray(ev["length"], float), np.asarray(ev["exact_rate"], float)
    err = np.vstack([p - np.asarray(ev["ci_low"]), np.asarray(ev["ci_high"]) - p])
    ax.errorbar(n, p, yerr=err, fmt="o", ms=3.5, capsize=2, color=color, label="exact match (95 % Wilson)")
    ax.plot(n, ev["char_acc"], ":", marker=".", ms=3, color=color, label="character accuracy")
    if cliff.kind == "step":
        ax.axvspan(cliff.low, cliff.high, color=color, alpha=0.2, lw=0, label="step: the cliff is somewhere here")
    elif cliff.kind == "fall":
        grid = np.linspace(n.min(), n.max(), 300)
        ax.plot(grid, cliff.fit.predict(grid), "-", lw=1.2, color=color, label="fitted logistic (a resolved fall)")
    ax.axvline(train_max_len, color="0.3", lw=0.8, ls="--", label="longest training length")
    ax.set_title(title if title is not None else rec["label"], fontsize=9)
    ax.set_ylim(-0.05, 1.05)


def cliff_against(ax, series: list[tuple[str, list[tuple[float, object]]]], colors, spread: float = 0.25) -> None:
    """Cliff ranges against a setting: one vertical bar a run (a step's bracket, a fall's 95 % interval with its
    n50 as a dot), an arrow up for "beyond the longest tested length".

    Args:
        ax: a matplotlib axes.
        series: ``[(name, [(x, CliffEstimate), ...]), ...]``: x is the setting (e.g. the training length).
        colors: one colour a series.
        spread: total sideways offset between the series, in x units (so equal ranges do not overlap).
    """
    k = len(series)
    for i, ((name, points), color) in enumerate(zip(series, colors)):
        dx = (i - (k - 1) / 2) * (spread / max(1, k - 1)) if k > 1 else 0.0
        first = True
        for x, c in points:
            label = name if first else None
            first = False
            if math.isfinite(c.low) and math.isfinite(c.high):
                ax.plot([x + dx, x + dx], [c.low, c.high], "-", lw=3, color=color, alpha=0.75, solid_capstyle="butt",
                        label=label)  # fmt: skip
            elif math.isfinite(c.low):  # beyond every tested length: an arrow up from the longest
                ax.annotate("", xy=(x + dx, c.low + 3), xytext=(x + dx, c.low),
                            arrowprops={"arrowstyle": "-|>", "color": color, "lw": 2})  # fmt: skip
                ax.plot([x + dx], [c.low], "^", ms=5, color=color, label=label)
            elif math.isfinite(c.high):  # below every tested length
                ax.plot([x + dx], [c.high], "v", ms=5, color=color, label=label)
            if c.n50 is not None:
                ax.plot(x + dx, c.n50, "o", ms=4, color=color)
