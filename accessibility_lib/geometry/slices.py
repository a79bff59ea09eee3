"""2-D slices of the argmax cells (the paper's Fig 1): planes in R^d and the token-id image of a plane.

- :func:`plane_through`, :func:`pca_plane` — an orthonormal 2-D plane in R^d.
- :func:`argmax_slice` — the token-id image of a plane on a grid (argmax and Voronoi), computed
  exactly and fast by restricting the logits to the plane (they are affine in the plane
  coordinates, so the slice is a 2-D problem with 3 numbers per token).
- :func:`plane_candidates` — the tokens that can win anywhere on a plane.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from accessibility_lib.geometry.cells import argmax_tokens, as_tensor
from accessibility_lib.ground.checks import check_int, check_positive_real

__all__ = ["Plane", "plane_through", "pca_plane", "Slice", "argmax_slice", "plane_candidates", "cells_in_ball"]


@dataclass(frozen=True)
class Plane:
    """An affine 2-D plane {origin + u * basis[0] + v * basis[1]} in R^d_model (float64, CPU).

    Attributes:
        origin: (d_model,) the plane's point at (u, v) = (0, 0).
        basis: (2, d_model) orthonormal rows.
        scale: the plane's length unit for ``extent`` (see :func:`plane_through`, :func:`pca_plane`).
        anchors_uv: (k, 2) plane coordinates of the points that defined the plane.
    """

    origin: torch.Tensor
    basis: torch.Tensor
    scale: float
    anchors_uv: np.ndarray

    def points(self, uv) -> torch.Tensor:
        """(n, d_model) float64 points at plane coordinates ``uv`` (n, 2)."""
        uv = torch.as_tensor(np.asarray(uv, dtype=np.float64))
        return self.origin + uv @ self.basis

    def ball_disk(self, r: float) -> tuple[np.ndarray, float] | None:
        """Where the plane meets the ball ‖x‖ ≤ r of R^d_model: (centre (2,) in plane coordinates, radius), or
        None when the plane passes farther than r from the origin. The plane's point nearest the origin is at
        uv* = −basis·origin, at distance sqrt(‖origin‖² − ‖basis·origin‖²) (model-space length units)."""
        r = check_positive_real("r", r)
        c = -(self.basis @ self.origin).numpy()
        dist2 = max(float(self.origin @ self.origin) - float(c @ c), 0.0)
        return None if dist2 >= r * r else (c, math.sqrt(r * r - dist2))


def plane_through(anchors) -> Plane:
    """The plane through three points (the paper's Fig 1 uses three last-layer embeddings).

    Origin: the anchors' centroid; basis[0] along anchors[1] - anchors[0]; basis[1] the
    Gram-Schmidt remainder of anchors[2] - anchors[0]. ``scale`` = the largest anchor distance from
    the origin, so ``extent=1`` just contains the anchors.

    Args:
        anchors: (3, d_model) points, any float dtype/device.

    Raises:
        ValueError: not three points, or the three points are (nearly) collinear.
    """
    A = as_tensor("anchors", anchors, 2).detach().to(device="cpu", dtype=torch.float64)
    if A.shape[0] != 3:
        raise ValueError(f"anchors must have shape (3, d_model), got {tuple(A.shape)}")
    origin = A.mean(dim=0)
    e1 = A[1] - A[0]
    n1 = e1.norm()
    e2 = A[2] - A[0]
    e2 = e2 - (e2 @ e1) / (n1**2) * e1 if n1 > 0 else e2
    n2 = e2.norm()
    spread = (A - origin).norm(dim=1).max()
    if n1 <= 1e-9 * max(float(spread), 1.0) or n2 <= 1e-9 * max(float(spread), 1.0):
        raise ValueError("anchors must be three points that are not collinear (they span no plane)")
    basis = torch.stack([e1 / n1, e2 / n2])  # (2, d)
    uv = ((A - origin) @ basis.T).numpy()  # (3, 2)
    return Plane(origin=origin, basis=basis, scale=float(spread), anchors_uv=uv)


def pca_plane(samples) -> Plane:
    """The plane through the mean of ``samples`` spanned by their top-2 principal directions.

    ``scale`` = 2 x the standard deviation along the first principal direction, so ``extent=1``
    holds most samples; ``anchors_uv`` are the samples' plane coordinates.

    Args:
        samples: (n, d_model) points with n >= 3.

    Raises:
        ValueError: fewer than 3 samples, or samples that do not spread in two directions.
    """
    X = as_tensor("samples", samples, 2).detach().to(device="cpu", dtype=torch.float64)
    if X.shape[0] < 3:
        raise ValueError(f"samples must have at least 3 rows, got shape {tuple(X.shape)}")
    origin = X.mean(dim=0)
    _, S, Vh = torch.linalg.svd(X - origin, full_matrices=False)
    if S.shape[0] < 2 or S[1] <= 1e-12 * max(float(S[0]), 1.0):
        raise ValueError("samples must spread in at least two directions (rank < 2)")
    basis = Vh[:2]  # (2, d)
    std1 = float(S[0]) / max(X.shape[0] - 1, 1) ** 0.5
    uv = ((X - origin) @ basis.T).numpy()
    return Plane(origin=origin, basis=basis, scale=2.0 * std1, anchors_uv=uv)


def _plane_coefficients(
    plane: Plane, W_U, b_U=None, *, voronoi: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(V, 3) float64 coefficients [p, q, a] with score_i(u, v) = a_i + u p_i + v q_i on the plane,
    for the logits (W_U x + b_U), and (if ``voronoi``) for the nearest-row scores f_i . x - ||f_i||^2 / 2
    (no bias), from one pass over W_U. Returns (coef, voronoi_coef or None).
    """
    W = as_tensor("W_U", W_U, 2)
    if W.shape[1] != plane.origin.shape[0]:
        raise ValueError(f"W_U must have shape (d_vocab, d_model={plane.origin.shape[0]}), got {tuple(W.shape)}")
    B = torch.cat([plane.basis, plane.origin[None]], dim=0).to(device=W.device)  # (3, d)
    coefs, sqs = [], []
    for v0 in range(0, W.shape[0], 16384):
        Wc = W[v0 : v0 + 16384].to(torch.float64)  # (c, d)
        coefs.append((Wc @ B.T).cpu())  # (c, 3)
        if voronoi:
            sqs.append((Wc * Wc).sum(1).cpu())
    coef = torch.cat(coefs)
    vcoef = None
    if voronoi:
        vcoef = coef.clone()
        vcoef[:, 2] -= 0.5 * torch.cat(sqs)
    if b_U is not None:
        b = as_tensor("b_U", b_U, 1)
        if b.shape[0] != W.shape[0]:
            raise ValueError(f"b_U must have shape (d_vocab={W.shape[0]},), got {tuple(b.shape)}")
        coef[:, 2] += b.detach().to(device="cpu", dtype=torch.float64)
    return coef, vcoef


def plane_candidates(coef: torch.Tensor) -> np.ndarray:
    """Token ids that can win somewhere on the (infinite) plane, from (V, 3) coefficients [p, q, a].

    max_i (a_i + u p_i + v q_i) is the support function of the points (p_i, q_i, a_i) in the
    direction (u, v, 1): token i wins somewhere iff its point is a vertex of their convex hull with
    an incident facet whose outward normal has a positive third component. Computed with Qhull
    (scipy); falls back to every token when the hull is degenerate. The result may be a superset
    (near-flat facets are kept), never a subset up to ties.
    """
    from scipy.spatial import ConvexHull, QhullError

    P = coef.numpy()
    keep = np.unique(P, axis=0, return_index=True)[1]  # duplicate rows: keep the lowest id (ties go low)
    try:
        hull = ConvexHull(P[keep])
    except (QhullError, ValueError):
        return np.arange(P.shape[0])
    upper = hull.equations[:, 2] > -1e-12 * np.abs(hull.equations[:, :3]).max()
    return np.sort(keep[np.unique(hull.simplices[upper])])


@dataclass
class Slice:
    """A 2-D slice of the argmax cells on a grid.

    Attributes:
        tokens: (resolution, resolution) int64 token ids of the argmax cells; row j is v[j]
            (bottom to top when drawn with ``origin="lower"``), column i is u[i].
        voronoi: same shape, the nearest-row (Voronoi) ids, or None.
        u, v: (resolution,) plane coordinates of the pixel centres (model-space length units).
        plane: the :class:`Plane`.
        center: (2,) plane coordinates of the grid centre; half_width: its half side length.
        n_cells_plane: how many argmax cells meet the whole infinite plane (hull count).
        n_voronoi_plane: how many Voronoi cells meet the whole plane (-1 when not computed).
    """

    tokens: np.ndarray
    voronoi: np.ndarray | None
    u: np.ndarray
    v: np.ndarray
    plane: Plane
    center: np.ndarray
    half_width: float
    n_cells_plane: int
    n_voronoi_plane: int = -1

    @property
    def n_cells(self) -> int:
        """Distinct argmax tokens in the grid."""
        return int(np.unique(self.tokens).size)

    @property
    def frac_differ(self) -> float:
        """Fraction of grid pixels where the Voronoi and argmax assignments differ (NaN without voronoi)."""
        return float("nan") if self.voronoi is None else float(np.mean(self.voronoi != self.tokens))


def _slice_ids(coef: torch.Tensor, uv1: torch.Tensor, check_uv1: torch.Tensor) -> tuple[np.ndarray, int]:
    """Grid ids (N,) over the hull candidates, and the number of cells meeting the whole plane."""
    cand = torch.as_tensor(plane_candidates(coef))
    # safety net: on a coarse grid, the winners over all tokens must be candidates
    full = argmax_tokens(check_uv1, coef, point_chunk=512)
    missing = torch.as_tensor(np.setdiff1d(full.numpy(), cand.numpy()))
    if missing.numel():
        cand = torch.sort(torch.cat([cand, missing])).values
    n_plane = int(cand.numel())  # counted after the safety net, so it stays an upper bound
    ids = argmax_tokens(uv1, coef[cand], chunk=4096, point_chunk=16384)
    return cand[ids].numpy(), n_plane


def argmax_slice(
    plane: Plane, W_U, b_U=None, *, resolution: int = 200, extent: float = 1.5, center=(0.0, 0.0), voronoi: bool = True
) -> Slice:
    """Token-id image of the argmax cells (and optionally the Voronoi cells) on a plane.

    On the plane x = origin + u e_1 + v e_2 the logits are affine in (u, v):
    (W_U x + b_U)_i = a_i + u p_i + v q_i, so the slice is an argmax over 3 numbers a token.
    Only the tokens whose (p_i, q_i, a_i) lie on the upper convex hull can win anywhere
    (:func:`plane_candidates`); the grid argmax runs over those, in float64. Equal (up to
    floating-point ties at cell boundaries) to :func:`argmax_tokens` on the grid's points.

    Args:
        plane: from :func:`plane_through` or :func:`pca_plane`.
        W_U: (d_vocab, d_model); b_U: (d_vocab,) or None.
        resolution: grid pixels per side (>= 2).
        extent: half side length of the square, in units of ``plane.scale``.
        center: (2,) grid centre, in units of ``plane.scale`` (for zooming).
        voronoi: also compute the nearest-row (Voronoi) image.

    Returns:
        :class:`Slice`.

    Raises:
        ValueError: bad resolution/extent/center, W_U or b_U of the wrong shape.
    """
    resolution = check_int("resolution", resolution, minimum=2, maximum=4096)
    extent = check_positive_real("extent", extent)
    c = np.asarray(center, dtype=np.float64)
    if c.shape != (2,) or not np.all(np.isfinite(c)):
        raise ValueError(f"center must be two finite numbers (plane coordinates / scale), got {center!r}")
    hw = extent * plane.scale
    c = c * plane.scale
    offs = (np.arange(resolution) + 0.5) / resolution * 2 * hw - hw  # pixel centres
    u, v = c[0] + offs, c[1] + offs
    uu, vv = np.meshgrid(u, v)  # (res, res): rows = v
    uv1 = torch.as_tensor(np.stack([uu.ravel(), vv.ravel(), np.ones(uu.size)], axis=1))  # (N, 3)
    cg = np.linspace(-hw, hw, 17)
    cu, cv = np.meshgrid(c[0] + cg, c[1] + cg)
    check = torch.as_tensor(np.stack([cu.ravel(), cv.ravel(), np.ones(cu.size)], axis=1))
    coef, vcoef = _plane_coefficients(plane, W_U, b_U, voronoi=voronoi)
    tokens, n_plane = _slice_ids(coef, uv1, check)
    tokens = tokens.reshape(resolution, resolution)
    vor, n_vor = None, -1
    if voronoi:
        vor, n_vor = _slice_ids(vcoef, uv1, check)
        vor = vor.reshape(resolution, resolution)
    return Slice(
        tokens=tokens,
        voronoi=vor,
        u=u,
        v=v,
        plane=plane,
        center=c,
        half_width=hw,
        n_cells_plane=n_plane,
        n_voronoi_plane=n_vor,
    )


def cells_in_ball(plane: Plane, W_U, b_U, r: float, resolution: int = 400) -> dict:
    """The argmax cells the plane shows inside the ball ‖x‖ ≤ r: the part a model whose last-layer embeddings
    lie in B_d(0, r) can reach (the paper's E_i are the cells intersected with the support E ⊂ B_d(0, r)).

    Counted at the centres of a ``resolution``² grid over the disk's bounding square, pixels outside the
    disk dropped: a lower bound on the cells meeting the disk (a cell thinner than a pixel can be missed).

    Returns:
        ``{"center", "radius"}`` of the disk (plane coordinates, model-space units), ``"tokens"``
        (sorted distinct token ids), ``"n_cells"``, ``"pixels"`` (inside the disk); all empty/0 and radius 0
        when the plane misses the ball.

    Raises:
        ValueError: r ≤ 0, a bad resolution; as :func:`argmax_slice`.
    """
    disk = plane.ball_disk(r)
    if disk is None:
        return {"center": np.full(2, np.nan), "radius": 0.0, "tokens": np.array([], dtype=np.int64), "n_cells": 0,
                "pixels": 0}  # fmt: skip
    c, rho = disk
    sl = argmax_slice(plane, W_U, b_U, resolution=resolution, extent=rho / plane.scale, center=c / plane.scale,
                      voronoi=False)  # fmt: skip
    uu, vv = np.meshgrid(sl.u, sl.v)
    inside = (uu - c[0]) ** 2 + (vv - c[1]) ** 2 <= rho * rho
    tokens = np.unique(sl.tokens[inside])
    return {"center": c, "radius": rho, "tokens": tokens, "n_cells": int(tokens.size), "pixels": int(inside.sum())}
