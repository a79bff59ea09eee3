"""Figures of argmax-cell slices (chapter 2): labelled token images, the Voronoi/argmax disagreement,
and a slice explorer that works in a static page (precomputed PNGs switched by an HTML range input).

The slices themselves are computed by :mod:`accessibility_lib.geometry.cells`; this module only draws them.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from accessibility_lib.figures.plotting import OTHER_GREY, token_colors
from accessibility_lib.geometry.slices import Slice
from accessibility_lib.ground.checks import check_int

__all__ = ["top_tokens", "draw_cells", "draw_disagreement", "draw_disk", "figure_png", "slice_explorer_html"]


def top_tokens(tokens: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k tokens covering most pixels of a token image, and their pixel fractions.

    Args:
        tokens: (H, W) token ids.
        k: how many (>= 1).

    Returns:
        (ids (<= k,), fractions (<= k,)) sorted by decreasing area.
    """
    k = check_int("k", k, minimum=1)
    ids, counts = np.unique(tokens, return_counts=True)
    order = np.argsort(-counts, kind="stable")[:k]
    return ids[order], counts[order] / tokens.size


def _index_image(tokens: np.ndarray, shown: np.ndarray) -> np.ndarray:
    """(H, W) colour index: position in ``shown``, or len(shown) for 'other'."""
    lut = {int(t): i for i, t in enumerate(shown)}
    flat = np.fromiter((lut.get(int(t), len(shown)) for t in tokens.ravel()), dtype=np.int64, count=tokens.size)
    return flat.reshape(tokens.shape)


def draw_cells(
    ax,
    sl: Slice,
    label: Callable[[int], str],
    *,
    k: int = 12,
    tokens: np.ndarray | None = None,
    shown: np.ndarray | None = None,
    anchor_names: Sequence[str] | None = None,
    legend: bool = True,
    title: str | None = None,
):
    """Draw a token image of a slice: the k largest cells in distinct colours, the rest grey.

    Args:
        ax: matplotlib axes.
        sl: the :class:`~accessibility_lib.geometry.slices.Slice`.
        label: token id -> readable text (e.g. ``ModelHandle.token_str``).
        k: cells drawn in colour, by area; "other" (grey) for the rest.
        tokens: image to draw instead of ``sl.tokens`` (e.g. ``sl.voronoi``).
        shown: the token ids to colour, in colour order (default: the image's k largest cells); pass
            the same ``shown`` to several panels so that a token keeps its colour.
        anchor_names: names of the plane's anchors, marked as black stars with labels.
        legend: add a legend of the coloured cells.
    """
    img = sl.tokens if tokens is None else tokens
    if shown is None:
        shown, _ = top_tokens(img, k)
    shown = np.asarray(shown)
    idx = _index_image(img, shown)
    frac = np.array([np.mean(img == t) for t in shown])
    colors = np.concatenate([token_colors(len(shown)), [plt.matplotlib.colors.to_rgba(OTHER_GREY)]])
    ext = [
        sl.u[0] - (sl.u[1] - sl.u[0]) / 2,
        sl.u[-1] + (sl.u[1] - sl.u[0]) / 2,
        sl.v[0] - (sl.v[1] - sl.v[0]) / 2,
        sl.v[-1] + (sl.v[1] - sl.v[0]) / 2,
    ]
    ax.imshow(
        idx,
        origin="lower",
        extent=ext,
        cmap=ListedColormap(colors),
        vmin=-0.5,
        vmax=len(shown) + 0.5,
        interpolation="nearest",
    )
    ax.grid(False)
    if anchor_names is not None and sl.plane.anchors_uv is not None:
        for (u, v), name in zip(sl.plane.anchors_uv, anchor_names):
            if ext[0] <= u <= ext[1] and ext[2] <= v <= ext[3]:
                ax.plot(u, v, marker="*", ms=13, color="black", mec="white", mew=1.0)
                ax.annotate(
                    name,
                    (u, v),
                    xytext=(5, 5),
                    textcoords="offset points",
                    fontsize=8,
                    bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="none", alpha=0.8),
                )
    ax.set_xlabel("plane coordinate $u$ (length in $h$-space)")
    ax.set_ylabel("plane coordinate $v$ (length in $h$-space)")
    if title:
        ax.set_title(title)
    if legend:
        other = 1.0 - float(frac.sum())
        handles = [
            Patch(color=colors[i], label=f"{label(int(t))}  ({_share(f)})") for i, (t, f) in enumerate(zip(shown, frac))
        ]
        if other > 0:
            handles.append(Patch(color=OTHER_GREY, label=f"other ({_share(other)})"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7.5, frameon=False)
    return ax


def draw_disagreement(ax, sl: Slice, *, title: str | None = None):
    """Pixels where the Voronoi (nearest-row) and the argmax assignments differ, in black."""
    if sl.voronoi is None:
        raise ValueError("sl must be computed with voronoi=True")
    diff = (sl.voronoi != sl.tokens).astype(float)
    ext = [sl.u[0], sl.u[-1], sl.v[0], sl.v[-1]]
    ax.imshow(
        diff,
        origin="lower",
        extent=ext,
        cmap=ListedColormap(["#f4f4f4", "#222222"]),
        vmin=0,
        vmax=1,
        interpolation="nearest",
    )
    ax.grid(False)
    ax.set_xlabel("plane coordinate $u$")
    ax.set_title(title or f"Voronoi ≠ argmax on {100 * sl.frac_differ:.0f}% of the slice")
    return ax


def figure_png(fig, dpi: int = 72) -> bytes:
    """A figure as PNG bytes (closes the figure)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return buf.getvalue()


def slice_explorer_html(groups: dict[str, Sequence[tuple[str, bytes]]], *, uid: str = "cells-explorer") -> str:
    """A self-contained HTML explorer: a select for the group (e.g. the plane), a range input for the
    frame (e.g. the zoom), switching between precomputed PNGs embedded as base64. No kernel, no CDN.

    Args:
        groups: group name -> list of (frame caption, PNG bytes); every group has at least one frame.
        uid: a prefix for the element ids (unique on the page).

    Returns:
        The HTML string (display it with ``IPython.display.HTML``).
    """
    if not groups or any(len(frames) == 0 for frames in groups.values()):
        raise ValueError("groups must map at least one name to a non-empty list of (caption, png) frames")
    uid = "".join(c for c in uid if c.isalnum() or c == "-") or "cells-explorer"
    data = {g: [(cap, base64.b64encode(png).decode("ascii")) for cap, png in frames] for g, frames in groups.items()}
    names = list(data)
    n0 = len(data[names[0]])
    imgs = []
    for gi, g in enumerate(names):
        for fi, (cap, b64) in enumerate(data[g]):
            hidden = "" if (gi == 0 and fi == 0) else ' style="display:none"'
            imgs.append(
                f'<figure data-g="{gi}" data-f="{fi}"{hidden}><img src="data:image/png;base64,{b64}" alt="{html.escape(g)}: {html.escape(cap)}" style="max-width:100%"/><figcaption>{html.escape(g)}: {html.escape(cap)}</figcaption></figure>'
            )
    options = "".join(f'<option value="{i}">{html.escape(g)}</option>' for i, g in enumerate(names))
    counts = ",".join(str(len(data[g])) for g in names)
    return f"""<div id="{uid}" class="cells-explorer">
<label>plane <select id="{uid}-g">{options}</select></label>
<label style="margin-left:1em">zoom <input id="{uid}-f" type="range" min="0" max="{n0 - 1}" step="1" value="0"/></label>
<span id="{uid}-cap"></span>
{"".join(imgs)}
<script>
(function() {{
  var root = document.getElementById("{uid}"), sel = document.getElementById("{uid}-g"), rng = document.getElementById("{uid}-f");
  var counts = [{counts}];
  function show() {{
    var g = +sel.value; rng.max = counts[g] - 1; if (+rng.value > counts[g] - 1) rng.value = counts[g] - 1;
    root.querySelectorAll("figure").forEach(function(el) {{
      el.style.display = (+el.dataset.g === g && +el.dataset.f === +rng.value) ? "" : "none";
    }});
  }}
  sel.addEventListener("change", show); rng.addEventListener("input", show); show();
}})();
</script>
</div>"""


def _share(frac: float) -> str:
    """A share of the picture for a legend: whole percent, or "<1%" for a piece under half a percent."""
    return "<1%" if 0 < frac < 0.005 else f"{100 * frac:.0f}%"


def draw_disk(ax, disk, label: str = "‖x‖ ≤ r") -> None:
    """Draw where a plane meets a ball (``Plane.ball_disk``'s ``(centre, radius)``, or None: nothing) as a
    dashed circle, without changing the axes' limits."""
    if disk is None:
        return
    from matplotlib.patches import Circle

    (u0, v0), rho = disk
    xlim, ylim = ax.get_xlim(), ax.get_ylim()
    ax.add_patch(Circle((u0, v0), rho, fill=False, ls="--", lw=1.0, color="black", alpha=0.8, label=label))
    ax.set_xlim(xlim)
    ax.set_ylim(ylim)
