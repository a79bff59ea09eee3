"""One house style for every figure of the book.

Call :func:`use_style` once at the top of a chapter. Colours: :data:`PALETTE` (colour-blind safe, Okabe-Ito);
:func:`token_colors` gives distinct colours for many categories (argmax cells) with "other" in grey.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np

__all__ = ["use_style", "PALETTE", "OTHER_GREY", "token_colors"]

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
