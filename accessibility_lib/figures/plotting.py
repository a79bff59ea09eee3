"""One house style for every figure of the book.

Call :func:`use_style` once at the top of a chapter. Colours: :data:`PALETTE` (colour-blind safe, Okabe-Ito);
:func:`token_colors` gives distinct colours for many categories (argmax cells) with "other" in grey.

Readable axes and legends (use them in any figure):

- :func:`log_axis` — a log axis with enough *labelled* ticks: at least ``min_labels`` labels whatever the
  range (1-2-5 or 1…9 sub-ticks when a range spans less than a few decades, where matplotlib would label a
  single power of ten or none), plain numbers from 0.001 to 10^5 and 10^k beyond::

      ax.plot(ms, n50s)
      plotting.log_axis(ax, "x")                  # or "y", or "both"; min_labels=3 by default

- :func:`legend_outside` — the legend beside the axes (``where="right"``) or under them
  (``where="below"``, below the x label), never over the data; the figure's layout makes room for it::

      plotting.legend_outside(ax)                 # right of the axes
      plotting.legend_outside(ax, where="below", ncol=3)

  :func:`legend_data_overlap` counts the data points hidden under a legend (0 for a legend outside).
- :func:`label_points` — text labels for points that never overlap each other: a label that would
  collide moves to the next free place around its point, with a leader line (the argmax-cell explorer's
  prompt names at wide zoom). :func:`overlapping_texts` lists colliding pairs, for tests.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib as mpl
import numpy as np
from matplotlib import ticker as mticker

__all__ = [
    "use_style",
    "PALETTE",
    "OTHER_GREY",
    "token_colors",
    "EnoughLogLocator",
    "log_tick_format",
    "log_axis",
    "legend_outside",
    "legend_data_overlap",
    "label_points",
    "overlapping_texts",
]

#: Okabe-Ito colour-blind-safe palette.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
OTHER_GREY = "#BBBBBB"


def use_style() -> None:
    """Apply the book's matplotlib style (readable sizes, light grid, the palette, PNG at 110 dpi)."""
    mpl.rcParams.update(
        {
            "figure.figsize": (6.4, 3.8),
            "figure.dpi": 110,
            "savefig.dpi": 110,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "legend.fontsize": 8.5,
            "legend.frameon": False,
            "axes.prop_cycle": mpl.cycler(color=PALETTE),
            "figure.autolayout": True,
        }
    )


def token_colors(n: int, seed: int = 0) -> np.ndarray:
    """(n, 4) RGBA colours, visually distinct for neighbours, for n categories (cells, tokens)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    base = np.concatenate(
        [mpl.colormaps["tab20"](np.linspace(0, 1, 20)), mpl.colormaps["tab20b"](np.linspace(0, 1, 20))]
    )
    if n <= len(base):
        return base[:n]
    rng = np.random.default_rng(seed)
    hsv = np.stack([rng.uniform(0, 1, n), rng.uniform(0.45, 0.9, n), rng.uniform(0.55, 0.95, n)], axis=1)
    rgb = mpl.colors.hsv_to_rgb(hsv)
    return np.concatenate([rgb, np.ones((n, 1))], axis=1)


# ---- readable log axes ----------------------------------------------------------------------------------


class EnoughLogLocator(mticker.Locator):
    """Major ticks of a log10 axis with at least ``min_labels`` ticks inside the view.

    Tries, in order: powers of ten (thinned to at most ``max_labels``), 1-2-5 × 10^k, 1…9 × 10^k, and
    last a linear "nice" locator (for a range within a factor of about 2). The first that puts at least
    ``min_labels`` ticks in the view wins.

    Raises:
        ValueError: if min_labels < 2 or max_labels < min_labels.
    """

    def __init__(self, min_labels: int = 3, max_labels: int = 9):
        if int(min_labels) < 2 or int(max_labels) < int(min_labels):
            raise ValueError(
                f"need 2 <= min_labels <= max_labels, got min_labels={min_labels}, max_labels={max_labels}"
            )
        self.min_labels, self.max_labels = int(min_labels), int(max_labels)

    def __call__(self):
        vmin, vmax = self.axis.get_view_interval()
        return self.tick_values(vmin, vmax)

    def tick_values(self, vmin: float, vmax: float) -> list[float]:
        vmin, vmax = sorted((float(vmin), float(vmax)))
        if not vmax > 0:
            return []
        vmin = max(vmin, vmax * 1e-300) if vmin <= 0 else vmin
        lo, hi = math.floor(math.log10(vmin)), math.ceil(math.log10(vmax))
        inside = lambda ts: [t for t in ts if vmin * (1 - 1e-9) <= t <= vmax * (1 + 1e-9)]  # noqa: E731
        decades = inside([10.0**k for k in range(lo, hi + 1)])
        if len(decades) > self.max_labels:
            step = math.ceil(len(decades) / self.max_labels)
            decades = decades[::step]
        if len(decades) >= self.min_labels:
            return decades
        for subs in ((1, 2, 5), tuple(range(1, 10))):
            ticks = inside([s * 10.0**k for k in range(lo, hi + 1) for s in subs])
            if len(ticks) >= self.min_labels:
                return ticks if len(ticks) <= 2 * self.max_labels else ticks[:: math.ceil(len(ticks) / self.max_labels)]
        lin = mticker.MaxNLocator(nbins=self.min_labels + 1, steps=[1, 2, 2.5, 5, 10]).tick_values(vmin, vmax)
        return [t for t in inside(list(lin)) if t > 0]


def log_tick_format(value: float, _pos: object = None) -> str:
    """Tick text of a log axis: plain numbers in [0.001, 10^5) ("20", "0.5"), else 10^k or a×10^k (mathtext)."""
    if not (value > 0 and math.isfinite(value)):
        return ""
    if 1e-3 <= value < 1e5:
        return f"{value:g}"
    k = math.floor(math.log10(value) + 1e-9)
    mant = value / 10.0**k
    return f"$10^{{{k}}}$" if abs(mant - 1) < 1e-6 else f"${mant:g}\\times10^{{{k}}}$"


def log_axis(ax, which: str = "x", *, min_labels: int = 3, max_labels: int = 9):
    """Make ``which`` axis (``"x"``, ``"y"`` or ``"both"``) of ``ax`` a log10 axis with enough labelled ticks.

    Sets the scale to log, :class:`EnoughLogLocator` for the major ticks (at least ``min_labels``, so a
    range within one decade gets 1-2-5 or 1…9 ticks instead of a single label), :func:`log_tick_format`
    for their text, and unlabelled minor ticks. Call it after plotting or before: the ticks are computed
    at draw time from the view limits.

    Returns:
        ``ax``.

    Raises:
        ValueError: for another ``which``, or bad label counts.
    """
    if which not in ("x", "y", "both"):
        raise ValueError(f"which must be 'x', 'y' or 'both', got {which!r}")
    for name in ("x", "y") if which == "both" else (which,):
        getattr(ax, f"set_{name}scale")("log")
        axis = getattr(ax, f"{name}axis")
        axis.set_major_locator(EnoughLogLocator(min_labels, max_labels))
        axis.set_major_formatter(mticker.FuncFormatter(log_tick_format))
        axis.set_minor_locator(mticker.LogLocator(base=10, subs=tuple(range(2, 10)), numticks=100))
        axis.set_minor_formatter(mticker.NullFormatter())
    return ax


# ---- legends that never cover data ---------------------------------------------------------------------------


def legend_outside(ax, where: str = "right", *, handles=None, labels=None, **kwargs):
    """A legend outside the axes: at their right (``"right"``) or under their x label (``"below"``).

    The legend is anchored in points from the axes' edge, so the figure's layout (tight or constrained)
    keeps room for it without it ever covering data. Extra keyword arguments go to ``ax.legend`` (e.g.
    ``ncol``, ``fontsize``, ``title``).

    Returns:
        The :class:`~matplotlib.legend.Legend` (None when the axes have nothing labelled).

    Raises:
        ValueError: for another ``where``.
    """
    from matplotlib.transforms import offset_copy

    if where not in ("right", "below"):
        raise ValueError(f"where must be 'right' or 'below', got {where!r}")
    if handles is None or labels is None:
        h, lab = ax.get_legend_handles_labels()
        handles, labels = handles or h, labels or lab
    if not handles:
        return None
    fig = ax.figure
    if where == "right":
        kwargs.setdefault("loc", "upper left")
        transform = offset_copy(ax.transAxes, fig=fig, x=6, y=0, units="points")
        anchor = (1.0, 1.0)
    else:
        fig.canvas.draw()  # to measure the x tick labels and label below the axes
        renderer = fig.canvas.get_renderer()
        axes_bottom = ax.get_window_extent(renderer).y0
        below = axes_bottom - ax.xaxis.get_tightbbox(renderer).y0  # pixels taken by ticks and label
        kwargs.setdefault("loc", "upper center")
        kwargs.setdefault("ncol", min(len(handles), 3))
        transform = offset_copy(ax.transAxes, fig=fig, x=0, y=-(below * 72.0 / fig.dpi + 4), units="points")
        anchor = (0.5, 0.0)
    kwargs.setdefault("borderaxespad", 0.0)
    kwargs.setdefault("frameon", False)
    return ax.legend(handles, labels, bbox_to_anchor=anchor, bbox_transform=transform, **kwargs)


def _data_points_display(ax) -> np.ndarray:
    """(N, 2) display coordinates of every data point of lines and scatter collections in ``ax``."""
    pts = []
    for line in ax.get_lines():
        xy = np.asarray(line.get_xydata(), dtype=float)
        if xy.size:
            pts.append(line.get_transform().transform(xy))
    for coll in ax.collections:
        off = np.asarray(coll.get_offsets(), dtype=float)
        if off.size:
            pts.append(coll.get_offset_transform().transform(off))
    if not pts:
        return np.zeros((0, 2))
    allp = np.concatenate(pts)
    return allp[np.all(np.isfinite(allp), axis=1)]


def legend_data_overlap(ax, legend=None) -> int:
    """How many data points (line vertices, scatter points) lie under the legend's box.

    Args:
        ax: the axes whose data are checked.
        legend: the legend (default: ``ax``'s own legend, else the figure's first legend).

    Returns:
        The count (0 when there is no legend).
    """
    legend = legend or ax.get_legend() or (ax.figure.legends[0] if ax.figure.legends else None)
    if legend is None:
        return 0
    fig = ax.figure
    fig.canvas.draw()
    box = legend.get_window_extent(fig.canvas.get_renderer())
    pts = _data_points_display(ax)
    inside = (pts[:, 0] >= box.x0) & (pts[:, 0] <= box.x1) & (pts[:, 1] >= box.y0) & (pts[:, 1] <= box.y1)
    return int(inside.sum())


# ---- labels that never overlap ---------------------------------------------------------------------------

_DIRECTIONS = ((1, 1), (1, -1), (-1, 1), (-1, -1), (1, 0), (-1, 0), (0, 1), (0, -1))


def label_points(
    ax,
    xy: Sequence[Sequence[float]],
    texts: Sequence[str],
    *,
    offset: float = 6.0,
    fontsize: float = 8.0,
    keep_inside: bool = True,
    bbox: dict | None = None,
    **text_kw,
) -> list:
    """Annotate points (data coordinates) with texts whose boxes never overlap one another.

    Each label, in order, takes the first candidate place around its point — eight directions at
    distances ``offset``, 2.5×, 4×, 6× and 9× ``offset`` points — whose box overlaps no label placed
    before (and, with ``keep_inside``, stays within the axes). A label placed beyond the first ring gets a
    thin leader line to its point. If no candidate is free, the label goes to the free-est one found last.

    Args:
        ax: matplotlib axes (the figure is drawn once to measure text).
        xy: (N, 2) points in data coordinates.
        texts: N strings.
        offset: the first distance, points.
        fontsize: points.
        keep_inside: keep label boxes inside the axes when a free place allows it.
        bbox: the text box style (default: a white rounded box, alpha 0.85).
        **text_kw: passed to ``ax.annotate``.

    Returns:
        The N :class:`~matplotlib.text.Annotation` objects.

    Raises:
        ValueError: if xy and texts differ in length or xy is not (N, 2).
    """
    xy = np.asarray(xy, dtype=float).reshape(-1, 2) if len(xy) else np.zeros((0, 2))
    if len(xy) != len(texts):
        raise ValueError(f"xy and texts must have the same length, got {len(xy)} and {len(texts)}")
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    axes_box = ax.get_window_extent(renderer)
    style = bbox if bbox is not None else dict(boxstyle="round,pad=0.2", fc="white", ec="none", alpha=0.85)
    placed, out = [], []
    rings = (1.0, 2.5, 4.0, 6.0, 9.0)
    for (x, y), text in zip(xy, texts):
        best, best_score = None, None
        for ring in rings:
            for dx, dy in _DIRECTIONS:
                ox, oy = dx * offset * ring, dy * offset * ring
                ha = "left" if dx > 0 else "right" if dx < 0 else "center"
                va = "bottom" if dy > 0 else "top" if dy < 0 else "center"
                arrow = dict(arrowstyle="-", lw=0.6, color="0.3", shrinkA=0, shrinkB=2) if ring > 1 else None
                ann = ax.annotate(
                    text,
                    (x, y),
                    xytext=(ox, oy),
                    textcoords="offset points",
                    ha=ha,
                    va=va,
                    fontsize=fontsize,
                    bbox=style,
                    arrowprops=arrow,
                    annotation_clip=False,
                    **text_kw,
                )
                box = ann.get_window_extent(renderer)
                clashes = sum(box.overlaps(p) for p in placed)
                outside = keep_inside and not (
                    box.x0 >= axes_box.x0 and box.x1 <= axes_box.x1 and box.y0 >= axes_box.y0 and box.y1 <= axes_box.y1
                )
                score = (clashes, outside, ring)
                if best_score is None or score < best_score:
                    if best is not None:
                        best[0].remove()
                    best, best_score = (ann, box), score
                else:
                    ann.remove()
                if score[:2] == (0, False):
                    break
            if best_score is not None and best_score[:2] == (0, False):
                break
        placed.append(best[1])
        out.append(best[0])
    return out


def overlapping_texts(texts: Sequence) -> list[tuple[int, int]]:
    """Index pairs (i, j), i < j, of matplotlib texts/annotations whose drawn boxes overlap."""
    if not texts:
        return []
    fig = texts[0].figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in texts]
    return [(i, j) for i in range(len(boxes)) for j in range(i + 1, len(boxes)) if boxes[i].overlaps(boxes[j])]
