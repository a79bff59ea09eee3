"""Geometry of the support E of last-layer embeddings: radii, cosines, and the fitted regions.

The paper bounds the number of inputs a finite-precision model can tell apart by a packing number of
the support E of its last-layer embeddings h(X) (Thm 4.5). Section 5.2 replaces the ball B_d(0, r) by
regions fitted to ~10k sampled embeddings: an axis-aligned ellipsoid (from the per-coordinate box) and
a cone around the mean direction. This module fits those regions to a point cloud ``(N, d)`` and gives
each region (:mod:`accessibility_lib.geometry.regions`) its log-volume (nats), uniform samples (for the argmax-cell
Monte Carlo of :mod:`accessibility_lib.geometry.cells`) and its slope bound (via :mod:`accessibility_lib.theory.bounds`).

Differences from the replication code (see the book's appendix on conventions), on purpose:

* the cone's half-angle is the one that really encloses every sample (largest angle to the axis);
  the paper's "half of the largest pairwise angle" is reported beside it for comparison and may be
  smaller than the enclosing angle;
* cosine statistics never build the N×N matrix: the mean is exact in O(N·d) as
  (‖Σ u_n‖² − N) / (N(N−1)) for unit rows u_n, the minimum uses blocked matmuls.

Example:
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> ball = Ball(torch.zeros(3), 2.0)
    >>> x = ball.sample(1000, g)                       # (1000, 3)
    >>> bool((x.norm(dim=1) <= 2.0 + 1e-6).all())
    True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from accessibility_lib.geometry.regions import Ball, Box, Cone, Ellipsoid, check_points, log_unit_ball_volume
from accessibility_lib.ground.checks import check_int

__all__ = [
    "check_points",
    "radii",
    "mean_pairwise_cosine",
    "min_pairwise_cosine",
    "log_unit_ball_volume",
    "Ball",
    "Box",
    "Ellipsoid",
    "Cone",
    "fit_box",
    "fit_cone",
    "SupportGeometry",
    "fit_support",
]


def radii(x: object) -> dict[str, float]:
    """Largest L1, L2 and L∞ norms of the rows of ``x`` ``(N, d)``: the radii r of the enclosing balls.

    These are the columns L_1/L_2/L_inf (max) of the paper's model table (``models_list.csv``).

    Returns:
        ``{"l1": ..., "l2": ..., "linf": ...}`` in embedding units.

    Raises:
        ValueError: on empty or non-finite input.
    """
    x = check_points("x", x)
    return {
        "l1": float(x.abs().sum(dim=1).max()),
        "l2": float(x.norm(dim=1).max()),
        "linf": float(x.abs().max()),
    }


def _unit_rows(x: torch.Tensor) -> torch.Tensor:
    norms = x.norm(dim=1, keepdim=True)  # (N, 1)
    if (norms == 0).any():
        raise ValueError("x has a zero row: its direction (and every cosine with it) is undefined")
    return x / norms


def mean_pairwise_cosine(x: object) -> float:
    """Mean of cos(x_i, x_j) over the N(N−1) ordered pairs i ≠ j, exactly, in O(N·d).

    With unit rows u_n: Σ_{i≠j} u_i·u_j = ‖Σ u_n‖² − N, so the mean is (‖Σ u_n‖² − N) / (N(N−1)).
    (The replication code builds the N×N Gram matrix.)

    Raises:
        ValueError: on empty or non-finite input, N < 2, or a zero row.
    """
    x = check_points("x", x)
    n = x.shape[0]
    if n < 2:
        raise ValueError(f"x must have at least 2 rows for a pairwise statistic, got {n}")
    s = _unit_rows(x).sum(dim=0)  # (d,)
    return float((s.dot(s) - n) / (n * (n - 1)))


def min_pairwise_cosine(x: object, block: int = 2048) -> float:
    """Smallest cos(x_i, x_j), i ≠ j, by blocked matmuls: memory O(block²), never N×N.

    Args:
        x: ``(N, d)`` points, N ≥ 2.
        block: rows per block.

    Raises:
        ValueError: on empty or non-finite input, N < 2, a zero row, or block < 1.
    """
    x = check_points("x", x)
    block = check_int("block", block, minimum=1)
    n = x.shape[0]
    if n < 2:
        raise ValueError(f"x must have at least 2 rows for a pairwise statistic, got {n}")
    u = _unit_rows(x)
    best = math.inf
    for i in range(0, n, block):
        ui = u[i : i + block]  # (b, d)
        for j in range(i, n, block):
            c = ui @ u[j : j + block].T  # (b, b')
            if i == j:
                c.fill_diagonal_(math.inf)
            best = min(best, float(c.min()))
    return max(-1.0, min(1.0, best))


def fit_box(x: object) -> Box:
    """The per-coordinate range box of ``x`` ``(N, d)``.

    Raises:
        ValueError: on empty/non-finite input, or when a coordinate is constant (zero-volume box).
    """
    x = check_points("x", x)
    return Box(x.min(dim=0).values, x.max(dim=0).values)


def fit_cone(x: object, block: int = 2048) -> tuple[Cone, float]:
    """Cone around the mean direction of ``x`` ``(N, d)`` that encloses every sample, cut at r = max ‖x‖₂.

    Returns:
        ``(cone, paper_half_angle)``: the enclosing cone (half-angle = largest angle between a sample and
        the axis) and, for comparison, the paper's half-angle = ½·arccos(min pairwise cosine).

    Raises:
        ValueError: on empty/non-finite input, a zero row, or when the unit rows sum to zero (no mean
            direction).
    """
    x = check_points("x", x)
    u = _unit_rows(x)
    s = u.sum(dim=0)  # (d,)
    if float(s.norm()) < 1e-12 * x.shape[0]:
        raise ValueError("the samples have no mean direction (their unit vectors sum to 0)")
    axis = s / s.norm()
    cos_to_axis = (u @ axis).clamp(-1.0, 1.0)  # (N,)
    alpha = float(torch.arccos(cos_to_axis.min()))
    alpha = min(math.pi, max(alpha, 1e-12))
    paper = 0.5 * math.acos(min_pairwise_cosine(x, block)) if x.shape[0] >= 2 else alpha
    return Cone(axis, alpha, float(x.norm(dim=1).max())), paper


@dataclass(frozen=True)
class SupportGeometry:
    """Everything the chapter reports about a point cloud ``(N, d)`` of embeddings."""

    n_points: int
    d: int
    radii: dict
    mean_cosine: float
    min_cosine: float
    ball: Ball
    box: Box
    ellipsoid: Ellipsoid
    cone: Cone
    paper_cone_half_angle: float

    def slopes(self, eps: float, d_vocab: int) -> dict[str, float]:
        """Ball (r = max L2), cone (enclosing α) and ellipsoid slopes at precision ε."""
        return {
            "ball": self.ball.slope(eps, d_vocab),
            "cone": self.cone.slope(eps, d_vocab),
            "ellipsoid": self.ellipsoid.slope(eps, d_vocab),
        }


def fit_support(x: object, block: int = 2048) -> SupportGeometry:
    """Fit the ball (origin, max L2 norm), box, implied ellipsoid and enclosing cone to ``x`` ``(N, d)``.

    Raises:
        ValueError: on empty/non-finite input, N < 2, a zero row or a constant coordinate.
    """
    x = check_points("x", x)
    if x.shape[0] < 2:
        raise ValueError(f"x must have at least 2 rows to fit a support, got {x.shape[0]}")
    rad = radii(x)
    box = fit_box(x)
    cone, paper_alpha = fit_cone(x, block)
    return SupportGeometry(
        n_points=int(x.shape[0]),
        d=int(x.shape[1]),
        radii=rad,
        mean_cosine=mean_pairwise_cosine(x),
        min_cosine=min_pairwise_cosine(x, block),
        ball=Ball(torch.zeros(x.shape[1], dtype=torch.float64), rad["l2"]),
        box=box,
        ellipsoid=box.ellipsoid(),
        cone=cone,
        paper_cone_half_angle=paper_alpha,
    )
