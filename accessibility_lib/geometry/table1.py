"""The paper's Table 1 rebuilt for a model: theoretical slopes under two methods, every row's r and ε.

Table 1 divides theoretical slopes (tokens per prompt vector) by the measured cramming slope, row by row:
ball (Cor 4.6), cone, ellipsoid, ellipsoid + non-uniform cells, ellipsoid + variable ε (Section 5.2–5.3).
Two *methods* compute the rows from the same sampled last-layer embeddings h ``(N, d)``:

- ``"voronoi_box"`` (:func:`voronoi_box_column`) — exactly what the authors' code computes (their bound notebook and cell scripts,
  github.com/mario-michelessa/transformers_accessibility), faults included: ε = r∞·2⁻¹¹ and r = r∞ for
  every row (so 2r/ε = 4096); cone half-angle α = ½·arccos(min pairwise cosine), no axis, and a closed
  form 4× the true cap fraction; ellipsoid semi-axes = half-widths of the per-coordinate box (it does
  not contain the samples at the box's corners); cells = *nearest unembedding row* (Voronoi, no bias)
  for points uniform in the box, tokens with no hit dropped, slope from the regression of the log
  median k-fold product on k = 1..6. Their code has no "variable ε" row: this method fills it with the
  book's reading (below) on their box-inscribed ellipsoid, Σ ln(1 + w_i/ε_i).
- ``"argmax_region"`` (:func:`argmax_region_column`) — the same precision ε = r∞·2⁻¹¹ with the faults fixed: r = the largest L2 norm
  (a ball that contains the samples); a cone around the mean direction that encloses every sample,
  with the exact log-space cap fraction; an axis-aligned ellipsoid that encloses every sample
  (:func:`accessibility_lib.geometry.regions.enclosing_ellipsoid`); argmax cells *with bias* for points uniform in
  that ellipsoid, the tokens with no hit sharing the estimated missing mass (Good–Turing N₁/S plus a
  rule-of-three margin 3/S) evenly — for a fixed total the least tightening choice — and the threshold of
  Section 5.3 (median log-volume below −ln P); and the "variable ε" row on the enclosing ellipsoid.

The paper gives no formula for its "variable ε" row; the book reads it as the code's rule ε = r∞·2⁻¹¹ applied a
coordinate at a time, ε_i = 2⁻¹¹·(|c_i| + a_i) (:func:`~accessibility_lib.theory.bounds.per_coordinate_eps`).

A difference to the paper can then be split into "different model or checkpoint" (ours vs the paper
under ``voronoi_box``) and "different method" (``voronoi_box`` vs ``argmax_region`` on one model).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from accessibility_lib.geometry import convolution
from accessibility_lib.geometry import support_shape as geometry
from accessibility_lib.geometry.regions import Box, enclosing_ellipsoid
from accessibility_lib.ground.checks import check_int
from accessibility_lib.theory import bounds, precision

__all__ = [
    "ROWS",
    "EXTRA_ROWS",
    "add_effective_eps_rows",
    "METHODS",
    "Row",
    "CellsSummary",
    "Column",
    "voronoi_box_column",
    "argmax_region_column",
    "OLD_METHOD_KEYS",
    "METHOD_NAMES",
    "method_key",
]

ROWS = ("ball", "cone", "ellipsoid", "ellipsoid + non-uniform cells", "ellipsoid + variable ε")
#: rows the paper does not have: the ball and the ellipsoid at the ε a model shows (chapter 7)
EXTRA_ROWS = ("ball, effective ε", "ellipsoid, effective ε")
METHODS = ("voronoi_box", "argmax_region")
#: each method's one name in prose (the same words as its key): table headers and sentences use these
METHOD_NAMES = {"voronoi_box": "Voronoi box", "argmax_region": "argmax region"}
#: keys the first artifacts and result-store entries used for the methods, read as the keys above
#: (``"replication"``: the authors' code, now ``voronoi_box``; ``"corrected"``: the faults fixed, now ``argmax_region``)
OLD_METHOD_KEYS = {"replication": "voronoi_box", "corrected": "argmax_region"}
LN4 = math.log(4.0)


@dataclass
class Row:
    """One Table 1 row of one column: the slope and what it was computed from.

    Attributes:
        C: theoretical slope (tokens per prompt vector), or None where the method has no such row.
        log_packing: ln P of the support at precision ε (nats, m = 1), or None.
        r: the radius used (embedding units; for the box/ellipsoid rows the largest semi-axis), or None.
        eps: the precision ε (embedding units), or None.
        note: how the row was computed, in one sentence.
        caveat: a warning to print beside the number ("" when none).
    """

    C: float | None
    log_packing: float | None
    r: float | None
    eps: float | None
    note: str
    caveat: str = ""

    @property
    def two_r_over_eps(self) -> float | None:
        return None if self.r is None or self.eps is None else 2.0 * self.r / self.eps


@dataclass
class CellsSummary:
    """What the cell-volume Monte Carlo resolved.

    Attributes:
        n_samples: points drawn in the region; tokens_hit: tokens whose cell got at least one point.
        top_share: fraction of the points in the most frequent cell.
        mean_log_p: E[ln p] over the tokens the method keeps (nats); se: its standard error.
        fill_share: share of Σ ln p that comes from tokens with no hit (their filled value); 0 when
            the method drops them.
        convolution_slope: the replication method's regression slope of median S_k on k (nats per
            token), or None.
    """

    n_samples: int
    tokens_hit: int
    top_share: float
    mean_log_p: float
    se: float
    fill_share: float
    convolution_slope: float | None = None


@dataclass
class Column:
    """Table 1 for one model under one method: ``rows[name]`` for every name in :data:`ROWS`."""

    model: str
    method: str
    d: int
    d_vocab: int
    rows: dict
    cells: CellsSummary
    extras: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """A JSON-able form (for artifacts and the result store)."""
        from dataclasses import asdict

        return {
            "model": self.model,
            "method": self.method,
            "d": self.d,
            "d_vocab": self.d_vocab,
            "rows": {k: asdict(v) for k, v in self.rows.items()},
            "cells": asdict(self.cells),
            "extras": self.extras,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Column:
        """The inverse of :meth:`to_dict`."""
        return cls(
            data["model"],
            method_key(data["method"]),
            int(data["d"]),
            int(data.get("d_vocab", data.get("vocab"))),  # "vocab", "r2": the first artifacts' names
            {k: Row(**v) for k, v in data["rows"].items()},
            CellsSummary(**data["cells"]),
            {("r_l2" if k == "r2" else k): v for k, v in data.get("extras", {}).items()},
        )

    def ratios(self) -> dict:
        """The slope-free checks of the paper: cone/ball, ellipsoid/ball, (ellipsoid + cells)/ellipsoid."""
        C = {k: v.C for k, v in self.rows.items()}
        return {
            "cone/ball": C["cone"] / C["ball"],
            "ellipsoid/ball": C["ellipsoid"] / C["ball"],
            "cells/ellipsoid": C["ellipsoid + non-uniform cells"] / C["ellipsoid"],
        }


def method_key(name: str) -> str:
    """The method key for a stored name: a key of :data:`METHODS` as is, an old key through :data:`OLD_METHOD_KEYS`.

    >>> method_key("replication"), method_key("argmax_region")
    ('voronoi_box', 'argmax_region')

    Raises:
        ValueError: a name that is neither a method nor an old key of one.
    """
    key = OLD_METHOD_KEYS.get(name, name)
    if key not in METHODS:
        raise ValueError(
            f"unknown support method {name!r}: the methods are {METHODS} (old keys {sorted(OLD_METHOD_KEYS)})"
        )
    return key


def _h(x) -> torch.Tensor:
    return geometry.check_points("h", x)


def _counts(points: torch.Tensor, W_U: torch.Tensor, b_U, voronoi: bool) -> np.ndarray:
    from accessibility_lib.geometry.cells import argmax_tokens, nearest_rows

    ids = nearest_rows(points, W_U) if voronoi else argmax_tokens(points, W_U, b_U)
    return torch.bincount(ids, minlength=W_U.shape[0]).numpy()


def _sample_counts(region, n_samples: int, W_U, b_U, voronoi: bool, seed: int, chunk: int = 4096) -> np.ndarray:
    g = torch.Generator().manual_seed(seed)
    counts = np.zeros(W_U.shape[0], dtype=np.int64)
    W = W_U.detach().float()
    b = None if b_U is None else b_U.detach().float()
    for start in range(0, n_samples, chunk):
        x = region.sample(min(chunk, n_samples - start), g).float()  # (c, d)
        counts += _counts(x, W, b, voronoi)
    return counts


def add_effective_eps_rows(col: Column, h, eps_eff: float, ci: tuple[float, float], what: str) -> None:
    """Add the :data:`EXTRA_ROWS` to a column: ball (r = max L2) and its ellipsoid at a measured ε_eff.

    Only the corrected column gets numbers; the authors' code has no such rows.

    Args:
        col: the column to extend. h: ``(N, d)`` the embeddings it was computed from.
        eps_eff: the effective ε (embedding units), e.g. from
            :func:`accessibility_lib.experiments.effective_eps.model_effective_eps`. ci: its interval. what: how it was measured.
    """
    if col.method != "argmax_region":
        for name in EXTRA_ROWS:
            col.rows[name] = Row(None, None, None, None, "not in the authors' code")
        return
    x = _h(h)
    lnV = math.log(col.d_vocab)
    r_l2 = float(x.norm(dim=1).max())
    lp_ball = bounds.log_packing_ball(col.d, r_l2, eps_eff, 1)
    a = enclosing_ellipsoid(x, eps_eff).semi_axes.numpy()
    lp_ell = float(np.sum(np.log1p(2.0 * a / eps_eff)))
    note = f"ε_eff = {eps_eff:.3g} [{ci[0]:.3g}, {ci[1]:.3g}]: {what}"
    col.rows["ball, effective ε"] = Row(
        lp_ball / lnV,
        lp_ball,
        r_l2,
        eps_eff,
        note,
        "typical-prompt sensitivity, not a precision the theorem guarantees",
    )
    col.rows["ellipsoid, effective ε"] = Row(
        lp_ell / lnV,
        lp_ell,
        float(a.max()),
        eps_eff,
        note,
        "typical-prompt sensitivity, not a precision the theorem guarantees",
    )


def _variable_eps_row(center, semi_axes: np.ndarray, unit: float, what: str, lnV: float) -> Row:
    """The "variable ε" row: the ellipsoid counted at ε_i = u·(|c_i| + a_i) (module docstring)."""
    eps_i = bounds.per_coordinate_eps(center, semi_axes, unit)
    lp = bounds.log_packing_ellipsoid(semi_axes, eps_i, 1)
    note = f"Σ ln(1 + 2a_i/ε_i)/ln|V| on {what}; ε_i = 2⁻¹¹·(|c_i| + a_i) from {eps_i.min():.3g} to {eps_i.max():.3g}"
    return Row(lp / lnV, lp, float(np.max(semi_axes)), None, note)


def voronoi_box_column(
    model: str, h, W_U, vocab: int | None = None, *, n_samples: int = 20000, seed: int = 0
) -> Column:
    """Table 1 under the authors' method (see the module docstring), from embeddings ``h`` ``(N, d)``.

    Args:
        model: a label. h: ``(N, d)`` last-layer embeddings. W_U: ``(|V|, d)`` unembedding.
        vocab: |V| (default: rows of W_U). n_samples: uniform points in the box for the cells.

    Raises:
        ValueError: degenerate embeddings (N < 2, a constant coordinate), n_samples < 100.
    """
    x = _h(h)
    n_samples = check_int("n_samples", n_samples, minimum=100)
    d = x.shape[1]
    V = int(vocab or W_U.shape[0])
    lnV = math.log(V)
    rad = geometry.radii(x)
    r, eps = precision.RINF_FP16.ball(rad["l2"], rad["linf"])  # r = r∞, ε = r∞·2^-11
    lp_ball = bounds.log_packing_ball(d, r, eps, 1)
    rows = {"ball": Row(lp_ball / lnV, lp_ball, r, eps, "d·ln(1 + 2r/ε)/ln|V| with r = r∞")}
    min_cos = geometry.min_pairwise_cosine(x)
    alpha = 0.5 * math.acos(min_cos)
    lp_cone = lp_ball + bounds.cone_log_fraction(d, alpha) + LN4  # their closed form is 4× the cap fraction
    rows["cone"] = Row(
        max(lp_cone, 0.0) / lnV,
        max(lp_cone, 0.0),
        r,
        eps,
        f"α = ½·arccos(min cos) = {math.degrees(alpha):.1f}°, cap fraction ×4 as coded",
    )
    lo, hi = x.min(dim=0).values, x.max(dim=0).values
    w = (hi - lo).numpy()  # (d,) box widths
    lp_ell = float(np.sum(np.log1p(w / eps)))
    rows["ellipsoid"] = Row(
        lp_ell / lnV,
        lp_ell,
        float(w.max() / 2),
        eps,
        "Σ ln(1 + w_i/ε)/ln|V|, w_i = max − min per coordinate (inscribed in the box)",
    )
    counts = _sample_counts(Box(lo, hi), n_samples, W_U, None, voronoi=True, seed=seed)
    hit = counts[counts > 0]
    lp = np.log(hit / n_samples)  # their D: hit tokens only, equal weights
    ks = np.arange(1, 7)
    med = np.array([convolution.median_log_volume(lp, int(k)) for k in ks]) if lp.min() < 0 else -1e-12 * ks
    slope = float(np.polyfit(ks, med, 1)[0])  # the median log-volume S_k (nats) against k
    C_cells = lp_ell / abs(slope) if slope < 0 else float("inf")
    caveat = "" if hit.size > 1 else "every point fell into one cell: the row is undefined"
    rows["ellipsoid + non-uniform cells"] = Row(
        C_cells,
        lp_ell,
        float(w.max() / 2),
        eps,
        f"Σ ln(1 + w_i/ε) / |slope of median S_k on k|, the slope's magnitude {abs(slope):.2f} nats per token",
        caveat,
    )
    box_note = "the box-inscribed ellipsoid (not in the authors' code: the book's reading)"
    rows["ellipsoid + variable ε"] = _variable_eps_row(((lo + hi) / 2).numpy(), w / 2, eps / rad["linf"], box_note, lnV)
    se = float(np.std(lp, ddof=1) / math.sqrt(lp.size)) if lp.size > 1 else float("nan")
    cells = CellsSummary(n_samples, int(hit.size), float(counts.max() / n_samples), float(lp.mean()), se, 0.0, slope)
    return Column(
        model,
        "voronoi_box",
        d,
        V,
        rows,
        cells,
        {
            "r_inf": rad["linf"],
            "r_l2": rad["l2"],
            "min_cos": min_cos,
            "region": "box (per-coordinate range)",
            "cells": "nearest row (Voronoi), no bias; zero-hit tokens dropped",
        },
    )


def argmax_region_column(
    model: str, h, W_U, b_U=None, vocab: int | None = None, *, n_samples: int = 20000, seed: int = 0
) -> Column:
    """Table 1 with the authors' faults fixed (see the module docstring), from embeddings ``h`` ``(N, d)``.

    Raises:
        ValueError: degenerate embeddings (N < 2, a zero row, a constant coordinate), n_samples < 100.
    """
    x = _h(h)
    n_samples = check_int("n_samples", n_samples, minimum=100)
    d = x.shape[1]
    V = int(vocab or W_U.shape[0])
    lnV = math.log(V)
    rad = geometry.radii(x)
    r, eps = precision.L2_FP16.ball(rad["l2"], rad["linf"])  # r = max L2, ε = r∞·2^-11
    lp_ball = bounds.log_packing_ball(d, r, eps, 1)
    rows = {"ball": Row(lp_ball / lnV, lp_ball, r, eps, "d·ln(1 + 2r/ε)/ln|V| with r = max ‖h‖₂")}
    cone, _ = geometry.fit_cone(x)
    lp_cone = max(0.0, lp_ball + bounds.cone_log_fraction(d, cone.half_angle))
    rows["cone"] = Row(
        lp_cone / lnV,
        lp_cone,
        r,
        eps,
        f"enclosing cone around the mean direction, α = {math.degrees(cone.half_angle):.1f}°, exact cap",
    )
    ell = enclosing_ellipsoid(x, eps)
    a = ell.semi_axes.numpy()
    lp_ell = float(np.sum(np.log1p(2.0 * a / eps)))
    rows["ellipsoid"] = Row(
        lp_ell / lnV,
        lp_ell,
        float(a.max()),
        eps,
        "Σ ln(1 + 2a_i/ε)/ln|V|, a_i the semi-axes of an enclosing axis-aligned ellipsoid (the ball when no other shape counts fewer cells)",
    )
    counts = _sample_counts(ell, n_samples, W_U, b_U, voronoi=False, seed=seed)
    if counts.shape[0] < V:
        counts = np.concatenate([counts, np.zeros(V - counts.shape[0], dtype=counts.dtype)])
    p = counts / n_samples
    unseen = counts == 0
    # the unseen tokens together own the missing mass: Good–Turing N1/S plus a rule-of-three margin 3/S,
    # spread evenly (for a fixed total, even spreading maximises Σ ln p: the least tightening choice)
    missing = min(1.0, (np.sum(counts == 1) + 3.0) / n_samples)
    fill = missing / max(int(unseen.sum()), 1)
    lp = np.log(np.where(unseen, fill, p))  # (V,) every token, equal weights
    fill_share = float(lp[unseen].sum() / lp.sum()) if lp.sum() < 0 else 0.0
    # standard error of the mean of ln p̂ over tokens: delta method on the hit tokens, Var ln p̂ ≈ (1 − p)/(S p)
    var = np.where(counts > 0, (1 - p) / np.maximum(counts, 1), 0.0)
    se = float(math.sqrt(var.sum()) / V)
    C_cells = convolution.refined_slope(lp, lp_ell)
    caveat = ""
    if fill_share > 0.5:
        caveat = (
            f"rests mostly on the fill: {100 * fill_share:.0f} % of Σ ln p comes from the {int(unseen.sum())} tokens "
            f"with no hit, given together the estimated missing mass {missing:.2g} spread evenly: set by the sample "
            f"size, not a measured cell distribution"
        )
    rows["ellipsoid + non-uniform cells"] = Row(
        C_cells,
        lp_ell,
        float(a.max()),
        eps,
        "threshold where the median log-volume of n tokens falls below −ln P",
        caveat,
    )
    ell_note = "the enclosing ellipsoid (the book's reading)"
    rows["ellipsoid + variable ε"] = _variable_eps_row(ell.center.numpy(), a, eps / rad["linf"], ell_note, lnV)
    cells = CellsSummary(
        n_samples, int((counts > 0).sum()), float(counts.max() / n_samples), float(lp.mean()), se, fill_share
    )
    return Column(
        model,
        "argmax_region",
        d,
        V,
        rows,
        cells,
        {
            "r_inf": rad["linf"],
            "r_l2": rad["l2"],
            "ellipsoid_scale": "enclosing",
            "region": "enclosing axis-aligned ellipsoid",
            "cells": "argmax with bias; no-hit tokens share the missing mass evenly",
        },
    )
