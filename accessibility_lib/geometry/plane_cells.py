"""Exact counts of the argmax cells that meet a plane, or the disk a ball cuts from it (chapter 2).

On a plane x = origin + u e₁ + v e₂ the logits are affine in the plane coordinates (u, v) (model-space length
units): logit_i = a_i + p_i u + q_i v (:func:`accessibility_lib.geometry.slices.argmax_slice`). Token i's cell on
the plane is the convex polygon

    P_i = {(u, v) : (a_i − a_j) + (p_i − p_j) u + (q_i − q_j) v ≥ 0 for every j},

so whether it meets the plane, or a disk on it, is a 2-D question with one half-plane a token. Only the
tokens of :func:`~accessibility_lib.geometry.slices.plane_candidates` can win anywhere on the plane (the others'
constraints are implied by the candidates'), so a few dozen half-planes decide it:

- :func:`plane_winners` — the tokens whose cell has interior on the whole plane: one linear programme each
  (maximise the margin t with every constraint ≥ t; the cell has interior iff t > 0).
- :func:`disk_winners` — the tokens whose cell has interior inside a disk ‖(u, v) − c‖ < ρ (the paper's cells
  E_i ∩ E with E ⊂ B_d(0, r), cut by the plane): the cell clipped to the disk's bounding square (Sutherland–
  Hodgman, exact up to floating point), then its distance from c.

The grid counts of :mod:`~accessibility_lib.geometry.slices` (pixel centres) are lower bounds, and the hull count
an upper bound; these are the counts themselves, up to cells thinner than ``tol`` (logit units).
"""

from __future__ import annotations

import numpy as np

from accessibility_lib.ground.checks import check_positive_real

__all__ = ["plane_winners", "disk_winners", "exact_counts"]


def _differences(coef: np.ndarray, i: int, others: np.ndarray) -> np.ndarray:
    """(k, 3) rows (Δp, Δq, Δa) = coef[i] − coef[others]: token i beats j where Δa + Δp u + Δq v > 0."""
    return coef[i][None, :] - coef[others]


def _coef(coef) -> np.ndarray:
    arr = np.asarray(coef, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 3 or not np.all(np.isfinite(arr)):
        raise ValueError(f"coef must be a finite (d_vocab, 3) array of [p, q, a] per token, got shape {arr.shape}")
    return arr


def _candidates(P: np.ndarray, candidates) -> np.ndarray:
    """The candidate ids, sorted, one per distinct row (a duplicate's ties go to the lowest id, as argmax's do)."""
    cand = np.arange(P.shape[0]) if candidates is None else np.unique(np.asarray(candidates, dtype=np.int64))
    if cand.size and (cand.min() < 0 or cand.max() >= P.shape[0]):
        raise ValueError(f"candidates must be token ids in [0, {P.shape[0]}), got {cand.min()}..{cand.max()}")
    return np.sort(cand[np.unique(P[cand], axis=0, return_index=True)[1]])


def plane_winners(coef, candidates=None, tol: float = 1e-9) -> np.ndarray:
    """The tokens whose argmax cell has interior somewhere on the whole plane.

    Args:
        coef: (d_vocab, 3) plane coefficients [p, q, a] (logit = a + p u + q v).
        candidates: token ids that may win (default: every token); a superset gives the same answer. Of
            identical rows only the lowest id can win (argmax's tie rule).
        tol: the least margin (logit units) a cell must have; smaller cells count as empty.

    Returns:
        Sorted int64 token ids.

    Raises:
        ValueError: a malformed ``coef``, candidates outside the vocabulary; a linear programme that fails (never for finite input).
    """
    from scipy.optimize import linprog

    P = _coef(coef)
    cand = _candidates(P, candidates)
    if cand.size == 1:
        return cand
    scale = max(1.0, float(np.abs(P[cand, 2]).max()))
    won = []
    for i in cand:
        D = _differences(P, i, cand[cand != i])
        # max t  s.t.  Δa + Δp u + Δq v ≥ t  ⇔  −Δp u − Δq v + t ≤ Δa;  t ≤ scale keeps it bounded
        res = linprog([0.0, 0.0, -1.0], A_ub=np.column_stack([-D[:, 0], -D[:, 1], np.ones(len(D))]), b_ub=D[:, 2],
                      bounds=[(None, None), (None, None), (None, scale)], method="highs")  # fmt: skip
        if res.status not in (0, 2):  # 2: infeasible, i.e. no margin at all
            raise ValueError(f"the margin LP of token {int(i)} failed: {res.message}")
        if res.status == 0 and -res.fun > tol * scale:
            won.append(int(i))
    return np.asarray(won, dtype=np.int64)


def _clip(poly: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The convex polygon ``poly`` (k, 2) cut to Δa + Δp u + Δq v ≥ 0 (``d`` = (Δp, Δq, Δa))."""
    if len(poly) == 0:
        return poly
    s = poly @ d[:2] + d[2]
    out = []
    for k in range(len(poly)):
        a, b, sa, sb = poly[k], poly[(k + 1) % len(poly)], s[k], s[(k + 1) % len(poly)]
        if sa >= 0:
            out.append(a)
        if (sa >= 0) != (sb >= 0):
            out.append(a + (b - a) * (sa / (sa - sb)))
    return np.asarray(out).reshape(-1, 2)


def _distance(poly: np.ndarray, c: np.ndarray) -> float:
    """Distance from c to the convex polygon (0 inside)."""
    edges = np.roll(poly, -1, axis=0) - poly
    cross = edges[:, 0] * (c[1] - poly[:, 1]) - edges[:, 1] * (c[0] - poly[:, 0])
    if np.all(cross >= 0) or np.all(cross <= 0):
        return 0.0
    t = np.clip(((c - poly) * edges).sum(1) / np.maximum((edges * edges).sum(1), 1e-300), 0.0, 1.0)
    return float(np.linalg.norm(poly + t[:, None] * edges - c, axis=1).min())


def _area(poly: np.ndarray) -> float:
    u, v = poly[:, 0], poly[:, 1]
    return 0.5 * abs(float(u @ np.roll(v, -1) - v @ np.roll(u, -1)))


def disk_winners(coef, center, radius: float, candidates=None, tol: float = 1e-9) -> np.ndarray:
    """The tokens whose argmax cell has interior inside the disk ‖(u, v) − center‖ < radius on the plane.

    Args:
        coef: (d_vocab, 3) plane coefficients [p, q, a].
        center: (2,) the disk's centre (plane coordinates, model-space length units); radius: > 0, same units
            (:meth:`~accessibility_lib.geometry.slices.Plane.ball_disk` gives both for a ball ‖x‖ ≤ r).
        candidates: token ids that may win (default: every token); a superset gives the same answer.
        tol: cells whose part inside the disk's bounding square has area below ``tol``·(2·radius)² count as empty.

    Returns:
        Sorted int64 token ids.

    Raises:
        ValueError: a malformed ``coef`` or ``center``, radius ≤ 0, candidates outside the vocabulary.
    """
    P = _coef(coef)
    rho = check_positive_real("radius", radius)
    c = np.asarray(center, dtype=np.float64)
    if c.shape != (2,) or not np.all(np.isfinite(c)):
        raise ValueError(f"center must be two finite numbers (plane coordinates), got {center!r}")
    cand = _candidates(P, candidates)
    square = c + rho * np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    won = []
    for i in cand:
        poly = square
        for d in _differences(P, i, cand[cand != i]):
            poly = _clip(poly, d)
            if len(poly) < 3:
                break
        if len(poly) >= 3 and _area(poly) > tol * (2 * rho) ** 2 and _distance(poly, c) < rho:
            won.append(int(i))
    return np.asarray(won, dtype=np.int64)


def exact_counts(plane, W_U, b_U, r: float) -> dict:
    """The exact cell counts chapter 2 prints for one plane of R^d_model.

    Args:
        plane: a :class:`~accessibility_lib.geometry.slices.Plane`; W_U: (d_vocab, d_model); b_U: (d_vocab,) or None.
        r: the radius of the ball ‖x‖ ≤ r whose disk on the plane is counted (model-space length units).

    Returns:
        ``{"plane": argmax cells with interior on the whole plane, "voronoi": nearest-row cells likewise,
        "disk": argmax cells with interior inside the disk (0 when the plane misses the ball)}``.

    Raises:
        ValueError: as :func:`~accessibility_lib.geometry.slices.argmax_slice` for bad shapes, r ≤ 0.
    """
    from accessibility_lib.geometry import slices

    coef, vcoef = slices._plane_coefficients(plane, W_U, b_U, voronoi=True)
    cand, vcand = slices.plane_candidates(coef), slices.plane_candidates(vcoef)
    disk = plane.ball_disk(r)
    return {
        "plane": int(plane_winners(coef.numpy(), cand).size),
        "voronoi": int(plane_winners(vcoef.numpy(), vcand).size),
        "disk": 0 if disk is None else int(disk_winners(coef.numpy(), *disk, cand).size),
    }
