"""n50 points with their intervals, open ends drawn as what they are: a bound, not a cap.

An interval end at the edge of the searched range (``SigmoidFit.ci_open``) is not a number the data give:
a capped error bar there would read as one. :func:`n50_points` draws closed ends with caps, an open end as
a bar without a cap that ends in an arrowhead, and a point whose interval is open at an end (left out of
the slope fit, as ``cramming_summary.slopes`` does) with a hollow marker.
"""

from __future__ import annotations

import numpy as np

__all__ = ["n50_points"]


def n50_points(ax, ms, fits, *, color, label=None, marker: str = "o") -> None:
    """Draw n50 against m with each interval's closed ends capped and open ends as arrows.

    Args:
        ax: a matplotlib Axes.
        ms: (K,) prompt lengths m (vectors).
        fits: K fits with ``n50``, ``ci`` (tokens) and ``ci_open`` (:class:`~accessibility_lib.experiments.fitting.SigmoidFit`).
        color, label, marker: as matplotlib's (the label goes on the first point).

    Raises:
        ValueError: ``ms`` and ``fits`` of different lengths.
    """
    ms, fits = list(ms), list(fits)
    if len(ms) != len(fits):
        raise ValueError(f"ms and fits must have the same length, got {len(ms)} and {len(fits)}")
    for i, (m, f) in enumerate(zip(ms, fits)):
        lo_open, hi_open = (bool(x) for x in getattr(f, "ci_open", (False, False)))
        hollow = lo_open or hi_open
        ax.plot([m], [f.n50], marker=marker, ls="none", color=color, mfc="white" if hollow else color,
                label=label if i == 0 else None, zorder=3)  # fmt: skip
        if not np.all(np.isfinite(f.ci)):
            continue
        for end, is_open, head in ((f.ci[0], lo_open, "v"), (f.ci[1], hi_open, "^")):
            ax.plot([m, m], [f.n50, end], color=color, lw=1.2)
            if is_open:
                ax.plot([m], [end], marker=head, ms=6, color=color, ls="none", zorder=3)
            else:
                ax.plot([m - 0.06, m + 0.06], [end, end], color=color, lw=1.2)
