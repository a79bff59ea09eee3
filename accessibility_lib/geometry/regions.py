"""Regions of R^d that hold the support of last-layer embeddings: ball, box, ellipsoid, cone.

Each region has a log-volume (nats), uniform samples (``sample(n, generator)``, for the argmax-cell
Monte Carlo of :mod:`accessibility_lib.geometry.cells`) and the packing bound and slope of the paper's
Section 5.2 (via :mod:`accessibility_lib.theory.bounds`). Fitting them to a point cloud is
:mod:`accessibility_lib.geometry.support_shape`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from accessibility_lib.ground.checks import check_int, check_positive_real, check_real
from accessibility_lib.theory import bounds

__all__ = ["check_points", "log_unit_ball_volume", "Ball", "Box", "Ellipsoid", "Cone", "enclosing_ellipsoid"]


def check_points(name: str, x: object) -> torch.Tensor:
    """``x`` as a float64 CPU tensor ``(N, d)`` with N ≥ 1, d ≥ 1 and only finite entries.

    Raises:
        ValueError: if ``x`` is not 2-D, is empty, or holds NaN/inf.
    """
    t = torch.as_tensor(np.asarray(x) if not isinstance(x, torch.Tensor) else x).detach()
    if t.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (N, d), got shape {tuple(t.shape)}")
    if t.shape[0] < 1 or t.shape[1] < 1:
        raise ValueError(f"{name} must not be empty, got shape {tuple(t.shape)}")
    t = t.to(device="cpu", dtype=torch.float64)
    if not torch.isfinite(t).all():
        raise ValueError(f"{name} must contain only finite numbers (found NaN or inf)")
    return t


def log_unit_ball_volume(d: int) -> float:
    """ln of the volume of the unit L2 ball in R^d: (d/2)·ln π − ln Γ(d/2 + 1)."""
    d = check_int("d", d, minimum=1)
    return 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1.0)


def _check_generator(generator: object) -> torch.Generator:
    if generator is None:
        return torch.Generator().manual_seed(0)
    if not isinstance(generator, torch.Generator):
        raise ValueError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
    return generator


def _unit_ball(n: int, d: int, g: torch.Generator) -> torch.Tensor:
    """n points uniform in the unit L2 ball of R^d: Gaussian direction, radius U^{1/d}."""
    z = torch.randn(n, d, generator=g, dtype=torch.float64)  # (n, d)
    z = z / z.norm(dim=1, keepdim=True)
    rad = torch.rand(n, 1, generator=g, dtype=torch.float64) ** (1.0 / d)
    return z * rad


@dataclass(frozen=True)
class Ball:
    """The L2 ball B_d(center, r) (the paper's basic support, Cor 4.6).

    Attributes:
        center: ``(d,)`` float64 tensor.
        r: radius > 0.
    """

    center: torch.Tensor
    r: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", check_points("center", torch.as_tensor(self.center).reshape(1, -1))[0])
        object.__setattr__(self, "r", check_positive_real("r", self.r))

    @property
    def d(self) -> int:
        return int(self.center.shape[0])

    def log_volume(self) -> float:
        """ln |B| = ln V_d + d·ln r (nats of volume)."""
        return log_unit_ball_volume(self.d) + self.d * math.log(self.r)

    def sample(self, n: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """``(n, d)`` float64 points uniform in the ball."""
        n = check_int("n", n, minimum=1)
        return self.center + self.r * _unit_ball(n, self.d, _check_generator(generator))

    def slope(self, eps: float, d_vocab: int) -> float:
        """C = d·ln(1 + 2r/ε)/ln|V| (Cor 4.6), tokens per prompt vector."""
        return bounds.ball_slope(self.d, self.r, eps, d_vocab)

    def log_packing(self, eps: float) -> float:
        """ln P ≤ d·ln(1 + 2r/ε) (Thm 4.5, m = 1)."""
        return bounds.log_packing_ball(self.d, self.r, eps, 1)


@dataclass(frozen=True)
class Ellipsoid:
    """Axis-aligned ellipsoid {x : Σ ((x_i − c_i)/a_i)² ≤ 1} with semi-axes a_i > 0 (Section 5.2)."""

    center: torch.Tensor
    semi_axes: torch.Tensor

    def __post_init__(self) -> None:
        c = check_points("center", torch.as_tensor(self.center).reshape(1, -1))[0]
        a = check_points("semi_axes", torch.as_tensor(self.semi_axes).reshape(1, -1))[0]
        if a.shape != c.shape:
            raise ValueError(f"semi_axes must have the shape of center {tuple(c.shape)}, got {tuple(a.shape)}")
        if (a <= 0).any():
            raise ValueError(f"semi_axes must all be > 0 (a zero-volume region), smallest is {float(a.min())}")
        object.__setattr__(self, "center", c)
        object.__setattr__(self, "semi_axes", a)

    @property
    def d(self) -> int:
        return int(self.center.shape[0])

    def log_volume(self) -> float:
        """ln |E| = ln V_d + Σ ln a_i."""
        return log_unit_ball_volume(self.d) + float(self.semi_axes.log().sum())

    def sample(self, n: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """``(n, d)`` float64 points uniform in the ellipsoid (unit-ball sample scaled by the semi-axes)."""
        n = check_int("n", n, minimum=1)
        return self.center + self.semi_axes * _unit_ball(n, self.d, _check_generator(generator))

    def slope(self, eps: float, d_vocab: int) -> float:
        """C_ellipsoid = Σ ln(1 + 2a_i/ε)/ln|V| (Section 5.2)."""
        return bounds.ellipsoid_slope(self.semi_axes.numpy(), eps, d_vocab)

    def log_packing(self, eps: float) -> float:
        """ln P ≤ Σ ln(1 + 2a_i/ε) (Section 5.2, m = 1)."""
        return bounds.log_packing_ellipsoid(self.semi_axes.numpy(), eps, 1)


@dataclass(frozen=True)
class Box:
    """Axis-aligned box Π_i [lo_i, hi_i] (the per-coordinate range of the samples)."""

    lo: torch.Tensor
    hi: torch.Tensor

    def __post_init__(self) -> None:
        lo = check_points("lo", torch.as_tensor(self.lo).reshape(1, -1))[0]
        hi = check_points("hi", torch.as_tensor(self.hi).reshape(1, -1))[0]
        if lo.shape != hi.shape:
            raise ValueError(f"lo and hi must have the same shape, got {tuple(lo.shape)} and {tuple(hi.shape)}")
        if (hi <= lo).any():
            raise ValueError("the box has zero volume: hi must exceed lo in every coordinate")
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @property
    def d(self) -> int:
        return int(self.lo.shape[0])

    def log_volume(self) -> float:
        """ln |box| = Σ ln(hi_i − lo_i)."""
        return float((self.hi - self.lo).log().sum())

    def sample(self, n: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """``(n, d)`` float64 points uniform in the box."""
        n = check_int("n", n, minimum=1)
        u = torch.rand(n, self.d, generator=_check_generator(generator), dtype=torch.float64)
        return self.lo + (self.hi - self.lo) * u

    def ellipsoid(self) -> Ellipsoid:
        """The ellipsoid the box implies (Section 5.2): centre = box centre, semi-axes = half-widths.

        It is inscribed in the box (it does not enclose the corners); its packing bound
        Σ ln(1 + 2a_i/ε) is the one the paper uses (it is also the ε-grid count of the box).
        """
        return Ellipsoid((self.lo + self.hi) / 2, (self.hi - self.lo) / 2)


@dataclass(frozen=True)
class Cone:
    """{x : ‖x‖ ≤ r, angle(x, axis) ≤ α}: a cone of half-angle α around a unit axis, cut by the ball of radius r.

    Its volume is exactly |B_d(0, r)|·frac(α) with frac the cap fraction of the sphere, which the paper
    also uses (as an approximation) for the packing number: C_cone = (d·ln(1+2r/ε) + ln frac(α))/ln|V|.
    """

    axis: torch.Tensor
    half_angle: float
    r: float

    def __post_init__(self) -> None:
        a = check_points("axis", torch.as_tensor(self.axis).reshape(1, -1))[0]
        norm = float(a.norm())
        if norm == 0:
            raise ValueError("axis must be a non-zero vector")
        object.__setattr__(self, "axis", a / norm)
        object.__setattr__(
            self,
            "half_angle",
            check_real("half_angle", self.half_angle, minimum=0.0, maximum=math.pi, min_inclusive=False),
        )
        object.__setattr__(self, "r", check_positive_real("r", self.r))

    @property
    def d(self) -> int:
        return int(self.axis.shape[0])

    def log_volume(self) -> float:
        """ln |cone ∩ ball| = ln V_d + d·ln r + ln frac(α) (exact, no underflow)."""
        return (
            log_unit_ball_volume(self.d) + self.d * math.log(self.r) + bounds.cone_log_fraction(self.d, self.half_angle)
        )

    def _polar_inverse_cdf(self, u: torch.Tensor) -> torch.Tensor:
        """Polar angle θ ∈ [0, α] with density ∝ sin^{d−2}θ, by inverse CDF on a fine grid.

        The density is integrated in log space (normalised by its maximum) on 2^16 + 1 points, so it
        never underflows for d in the thousands; θ is interpolated linearly in the CDF.
        """
        d = self.d
        theta = np.linspace(0.0, self.half_angle, 65537)
        with np.errstate(divide="ignore"):
            logdens = (d - 2) * np.log(np.sin(theta)) if d > 2 else np.zeros_like(theta)
        logdens[0] = -np.inf if d > 2 else logdens[0]
        dens = np.exp(logdens - logdens.max())
        cdf = np.concatenate([[0.0], np.cumsum((dens[1:] + dens[:-1]) / 2)])
        cdf /= cdf[-1]
        keep = np.concatenate([[True], np.diff(cdf) > 0])  # np.interp needs strictly increasing x
        return torch.from_numpy(np.interp(u.numpy(), cdf[keep], theta[keep]))

    def sample(self, n: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """``(n, d)`` float64 points uniform in the cone ∩ ball.

        Direction: polar angle θ by inverse CDF of sin^{d−2}θ on [0, α], azimuth uniform on the sphere
        orthogonal to the axis; radius r·U^{1/d}.
        """
        n = check_int("n", n, minimum=1)
        g = _check_generator(generator)
        d = self.d
        if d == 1:
            s = torch.rand(n, 1, generator=g, dtype=torch.float64) * self.r
            return s * self.axis if self.half_angle < math.pi else (2 * s - self.r) * self.axis
        theta = self._polar_inverse_cdf(torch.rand(n, generator=g, dtype=torch.float64))  # (n,)
        v = torch.randn(n, d, generator=g, dtype=torch.float64)  # (n, d)
        v = v - (v @ self.axis)[:, None] * self.axis
        v = v / v.norm(dim=1, keepdim=True)
        direction = torch.cos(theta)[:, None] * self.axis + torch.sin(theta)[:, None] * v
        rad = self.r * torch.rand(n, 1, generator=g, dtype=torch.float64) ** (1.0 / d)
        return direction * rad

    def slope(self, eps: float, d_vocab: int) -> float:
        """C_cone = (d·ln(1 + 2r/ε) + ln frac(α))/ln|V| (Section 5.2, clipped at 0)."""
        return bounds.cone_slope(self.d, self.r, eps, d_vocab, self.half_angle)

    def log_packing(self, eps: float) -> float:
        """ln P ≈ d·ln(1 + 2r/ε) + ln frac(α) (the paper's approximation, clipped at 0)."""
        return max(
            0.0, bounds.log_packing_ball(self.d, self.r, eps, 1) + bounds.cone_log_fraction(self.d, self.half_angle)
        )


def enclosing_ellipsoid(x: object, eps: float | None = None) -> Ellipsoid:
    """An axis-aligned ellipsoid that contains every row of ``x`` ``(N, d)``.

    Candidate shapes are scaled until they enclose all samples — (a) centred at the box centre with
    semi-axes proportional to the box half-widths, (b) centred at the mean with semi-axes proportional to
    the per-coordinate standard deviations, (c) the ball around the origin of radius max‖x_n‖₂ (the ball
    of Cor 4.6 is itself an axis-aligned ellipsoid). Each of (a), (b) is scaled by the smallest s with
    max_n ‖(x_n − c)/a‖₂ ≤ s, so the packing bound Σ ln(1 + 2a_i/ε) of Section 5.2 applies to it (the
    box's inscribed ellipsoid, semi-axes = half-widths, does not contain the samples near the box's
    corners). Not the minimum-volume enclosing ellipsoid, which needs an iterative solver.

    Args:
        x: the samples, shape (N, d).
        eps: the precision ε (same units as x). Given, the candidate with the smallest packing count
            Σ ln(1 + 2a_i/ε) is returned, so the ellipsoid's slope is never above the ball's; None: the one
            of smallest volume (which at small 2a/ε can count more cells than the ball).

    Raises:
        ValueError: on empty or non-finite input, fewer than 2 rows, a constant coordinate, or eps ≤ 0.
    """
    x = check_points("x", x)
    if x.shape[0] < 2:
        raise ValueError(f"x must have at least 2 rows to fit an ellipsoid, got {x.shape[0]}")
    if eps is not None and not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a finite number > 0 (or None), got {eps}")
    lo, hi = x.min(dim=0).values, x.max(dim=0).values
    if (hi <= lo).any():
        raise ValueError("a coordinate of x is constant: no ellipsoid of positive volume is fitted to it")
    candidates = []
    for c, a in (((lo + hi) / 2, (hi - lo) / 2), (x.mean(dim=0), x.std(dim=0))):
        s = float(((x - c) / a).norm(dim=1).max())  # scale that makes the ellipsoid enclose every row
        candidates.append(Ellipsoid(c, a * s * (1 + 1e-12)))
    r = float(x.norm(dim=1).max()) * (1 + 1e-12)
    candidates.append(Ellipsoid(torch.zeros_like(lo), torch.full_like(lo, r)))

    def score(e: Ellipsoid) -> float:
        return e.log_volume() if eps is None else float(torch.log1p(2.0 * e.semi_axes.double() / eps).sum())

    return min(candidates, key=score)
