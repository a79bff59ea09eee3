"""The argmax cells of a support region in unit coordinates: the logits as an affine map of the unit ball or cube.

The cell-volume estimators of :mod:`accessibility_lib.geometry.cell_resolve` and the emptiness
certificates of :mod:`accessibility_lib.geometry.cell_certificate` work on one object, a
:class:`CellProblem`: a region R of R^d (an axis-aligned ellipsoid, a ball or a box, the support
models of the paper's Section 5.2) written as the image x = c + s ⊙ u of the unit ball
(``shape = "ball"``) or of the cube [−1, 1]^d (``shape = "cube"``), and the logits of the unembedding
on it,

    z(u) = W_U x + b_U = a + M u,   a = W_U c + b_U  (d_vocab,),   M = W_U · diag(s)  (d_vocab, d).

The map is affine with a constant Jacobian, so volume *fractions* p_t = |E_t ∩ R| / |R| of the argmax
cells E_t = {x : z_t ≥ z_j ∀ j} are the same in u and in x. Every level set
K_γ = {u in the unit body : z_t(u) − max_{j≠t} z_j(u) ≥ γ} is convex (a polytope cut by the ball or
cube), and the intersection of a line with it is an interval computed exactly from z and M·v: the
chord of :meth:`CellProblem.chord`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from accessibility_lib.geometry.regions import Ball, Box, Ellipsoid
from accessibility_lib.ground.checks import check_int

__all__ = ["CellProblem"]


@dataclass
class CellProblem:
    """Logits z(u) = a + M u on the unit ball or cube (see the module docstring).

    Attributes:
        M: ``(d_vocab, d)`` tensor; Mt: its transpose ``(d, d_vocab)``, contiguous (the matmul operand).
        a: ``(d_vocab,)`` logits at the region's centre (bias included).
        shape: ``"ball"`` (ellipsoid or ball regions) or ``"cube"`` (box regions).
        region: a description of the region (kind, centre and scales as lists), for artifacts.
    """

    M: torch.Tensor
    a: torch.Tensor
    shape: str
    region: dict

    def __post_init__(self) -> None:
        if self.shape not in ("ball", "cube"):
            raise ValueError(f"shape must be 'ball' or 'cube', got {self.shape!r}")
        if self.M.ndim != 2 or self.a.shape != (self.M.shape[0],):
            raise ValueError(
                f"M must be (d_vocab, d) and a (d_vocab,), got {tuple(self.M.shape)} and {tuple(self.a.shape)}"
            )
        if not (torch.isfinite(self.M).all() and torch.isfinite(self.a).all()):
            raise ValueError("M and a must be finite (the unembedding or the region holds NaN/inf)")
        self.Mt = self.M.T.contiguous()

    @property
    def d(self) -> int:
        return int(self.M.shape[1])

    @property
    def d_vocab(self) -> int:
        return int(self.M.shape[0])

    @classmethod
    def from_region(cls, W_U, b_U, region, dtype: torch.dtype = torch.float32) -> CellProblem:
        """The problem of an :class:`~accessibility_lib.geometry.regions.Ellipsoid`, ``Ball`` or ``Box``.

        Args:
            W_U: ``(d_vocab, d)`` unembedding. b_U: ``(d_vocab,)`` bias or None (no bias).
            region: the support region. dtype: dtype of M and a (float32 for real models, float64 for tests).

        Raises:
            ValueError: a region of another type, or shapes that do not match.
        """
        W = torch.as_tensor(W_U).detach().to("cpu", torch.float64)
        if W.ndim != 2:
            raise ValueError(f"W_U must be (d_vocab, d), got shape {tuple(W.shape)}")
        b = (
            torch.zeros(W.shape[0], dtype=torch.float64)
            if b_U is None
            else torch.as_tensor(b_U).detach().to("cpu", torch.float64)
        )
        if b.shape != (W.shape[0],):
            raise ValueError(f"b_U must have shape (d_vocab={W.shape[0]},), got {tuple(b.shape)}")
        if isinstance(region, Ellipsoid):
            c, s, shape, kind = region.center, region.semi_axes, "ball", "ellipsoid"
        elif isinstance(region, Ball):
            c, s, shape, kind = region.center, torch.full_like(region.center, region.r), "ball", "ball"
        elif isinstance(region, Box):
            c, s, shape, kind = (region.lo + region.hi) / 2, (region.hi - region.lo) / 2, "cube", "box"
        else:
            raise ValueError(f"region must be an Ellipsoid, Ball or Box, got {type(region).__name__}")
        if c.shape[0] != W.shape[1]:
            raise ValueError(f"the region lives in R^{c.shape[0]} but W_U has d = {W.shape[1]} columns")
        M = (W * s).to(dtype)
        a = (W @ c + b).to(dtype)
        return cls(M, a, shape, {"kind": kind, "center": c.tolist(), "scales": s.tolist()})

    def sample(self, n: int, g: torch.Generator) -> torch.Tensor:
        """``(n, d)`` points uniform in the unit ball or cube."""
        n = check_int("n", n, minimum=1)
        if self.shape == "cube":
            return (2 * torch.rand(n, self.d, generator=g, dtype=self.M.dtype) - 1).contiguous()
        z = torch.randn(n, self.d, generator=g, dtype=self.M.dtype)
        z = z / z.norm(dim=1, keepdim=True)
        return z * torch.rand(n, 1, generator=g, dtype=self.M.dtype) ** (1.0 / self.d)

    def logits(self, U: torch.Tensor) -> torch.Tensor:
        """``(n, d_vocab)`` logits a + M u of the points ``U`` ``(n, d)``."""
        return torch.addmm(self.a, U, self.Mt)

    def body_chord(self, U: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The interval [lo, hi] of λ with U + λ v in the unit body, per row ``(n,)`` each (U inside)."""
        if self.shape == "ball":
            uv = (U * v).sum(1)
            vv = (v * v).sum(1)
            disc = (uv * uv - vv * ((U * U).sum(1) - 1.0)).clamp_min(0.0).sqrt()
            return (-uv - disc) / vv, (-uv + disc) / vv
        big = torch.full_like(v, math.inf)
        pos, neg = v > 0, v < 0
        hi = torch.minimum(torch.where(pos, (1 - U) / v, big), torch.where(neg, (-1 - U) / v, big)).min(1).values
        lo = torch.maximum(torch.where(pos, (-1 - U) / v, -big), torch.where(neg, (1 - U) / v, -big)).max(1).values
        return lo, hi

    def chord(
        self, U: torch.Tensor, Z: torch.Tensor, v: torch.Tensor, W: torch.Tensor, t: torch.Tensor, gamma: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Exact chord of the level set K_γ along direction v from each point.

        Args:
            U: ``(n, d)`` points inside K_γ. Z: ``(n, d_vocab)`` their logits. v: ``(n, d)`` directions.
            W: ``(n, d_vocab)`` = v @ Mᵀ (the logits' rate of change along v). t: ``(n,)`` token of each
                row. gamma: ``(n,)`` level of each row.

        Returns:
            ``(lo, hi)``, ``(n,)`` each: U + λ v lies in K_γ exactly for λ in [lo, hi] (lo ≤ 0 ≤ hi).
        """
        rows = torch.arange(U.shape[0])
        C = (Z[rows, t].unsqueeze(1) - Z) - gamma.unsqueeze(1)  # (n, V): slack of each constraint, ≥ 0 inside
        E = W[rows, t].unsqueeze(1) - W  # (n, V): its rate along v
        C.clamp_(min=0.0)
        R = C.div_(E)  # −λ at which constraint j becomes tight, up to sign
        R.neg_()
        inf = torch.tensor(math.inf, dtype=R.dtype)
        hi = torch.where(E < 0, R, inf).min(1).values  # E < 0: λ ≤ C/(−E)
        lo = torch.where(E > 0, R, -inf).max(1).values  # E > 0: λ ≥ −C/E
        blo, bhi = self.body_chord(U, v)
        return torch.maximum(lo, blo).clamp_max(0.0), torch.minimum(hi, bhi).clamp_min(0.0)

    def axis_body_chord(self, U: torch.Tensor, axis: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`body_chord` along the coordinate axes ``axis`` ``(n,)`` (v = e_axis), without forming v."""
        rows = torch.arange(U.shape[0])
        ua = U[rows, axis]
        if self.shape == "ball":  # |u + λ e_i|² ≤ 1  ⇔  (λ + u_i)² ≤ 1 − (|u|² − u_i²)
            disc = (1.0 - ((U * U).sum(1) - ua * ua)).clamp_min(0.0).sqrt()
            return -ua - disc, -ua + disc
        return -1.0 - ua, 1.0 - ua

    def coordinate_move(
        self,
        U: torch.Tensor,
        Z: torch.Tensor,
        axis: torch.Tensor,
        t: torch.Tensor,
        gamma: torch.Tensor,
        r: torch.Tensor,
        rows_per_chunk: int | None = None,
    ) -> None:
        """One coordinate hit-and-run step of every row inside its level set K_γ, in place (U and Z updated).

        The same step as :meth:`chord` with v = e_axis followed by λ = lo + (hi − lo)·r, fused and blocked
        for speed: the chord uses q_j = E_j / C_j (rate over slack, C clamped to the dtype's smallest
        normal number), so that hi = −1/min_j q_j where min q < 0 and lo = −1/max_j q_j where max q > 0
        — the same bounds as C_j/(−E_j) over E_j < 0 and −C_j/E_j over E_j > 0, one pass instead of
        five, with reductions that are fast on CPU — and rows are handled ``rows_per_chunk`` at a time (default: ≈ 2^20 logits a block) so
        that the block's rows of M stay in cache while Z is updated.

        Args:
            U: ``(n, d)`` points inside K_γ (updated). Z: ``(n, d_vocab)`` their logits (updated by λ·M e_axis).
            axis: ``(n,)`` coordinate of each row's step. t: ``(n,)`` token of each row. gamma: ``(n,)`` level.
            r: ``(n,)`` uniforms in [0, 1) that place each point on its chord.
        """
        n, V = Z.shape
        step = rows_per_chunk or max(1, (1 << 20) // V)
        tiny = torch.finfo(Z.dtype).tiny
        for s0 in range(0, n, step):
            sl = slice(s0, min(n, s0 + step))
            Zc, tc, ac = Z[sl], t[sl], axis[sl]
            rows = torch.arange(Zc.shape[0])
            W = self.Mt.index_select(0, ac)  # (k, V): the logits' rate along each row's axis
            C = torch.sub((Zc[rows, tc] - gamma[sl]).unsqueeze(1), Zc).clamp_(min=tiny)  # slack, ≥ 0 inside
            Q = torch.sub(W[rows, tc].unsqueeze(1), W).div_(C)  # E_j / C_j
            qmin, qmax = Q.amin(1), Q.amax(1)  # (torch.aminmax and .min(1) are ~15× slower on CPU)
            hi = torch.where(qmin < 0, -1.0 / qmin, math.inf)
            lo = torch.where(qmax > 0, -1.0 / qmax, -math.inf)
            blo, bhi = self.axis_body_chord(U[sl], ac)
            lo, hi = torch.maximum(lo, blo).clamp_max(0.0), torch.minimum(hi, bhi).clamp_min(0.0)
            lam = lo + (hi - lo) * r[sl]
            U[s0 + rows, ac] += lam
            Zc.addcmul_(lam.unsqueeze(1), W)

    def margins(self, Z: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """s_t(u) = z_t − max_{j≠t} z_j for each row of ``Z`` ``(n, d_vocab)`` and token ``t`` ``(n,)``: ``(n,)``."""
        rows = torch.arange(Z.shape[0])
        zt = Z[rows, t].clone()
        Z[rows, t] = -math.inf
        other = Z.amax(1)
        Z[rows, t] = zt
        return zt - other
