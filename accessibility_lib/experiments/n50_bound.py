"""How cheap can any n50 search be? A Fisher-information lower bound on the token-steps for a given interval width.

A search design (bisection, sequential, or any other) chooses lengths n and crams one new target at each
choice; the fit estimates n50 and the steepness k of the logistic p(n) = 1 / (1 + exp(k·(n − n50))) and gives
n50 an interval. One target at length n carries the Fisher information

    I(n) = p(1 − p) · v vᵀ,   v = (k, −(n − n50))        (about (n50, k); p = p(n))

and costs on average

    c(n) = (m + n − 1) · B · (p · f(n) + (1 − p) · g)        (token-steps)

where B is the step budget, f(n) the share of it a success uses and g the share a failure uses (1: it runs to
the cap). A design that spends the share ξ(n) of its C token-steps at length n gathers C · Σ ξ(n) I(n) / c(n),
and asymptotically the 95 % interval of n50 is 2z·√(e₁ᵀ M⁻¹ e₁ / C) wide (z = 1.96, M = Σ ξ I / c, e₁ the n50
axis; the profile-likelihood interval the fit reports has this width to first order). The cheapest design for
a width w is the cost-weighted c-optimal design, and by Elfving's theorem min_ξ e₁ᵀ M⁻¹ e₁ = 1 / t², with t the
largest number for which t·e₁ lies in the convex hull of the points ±√(p(1 − p)/c(n)) · v(n). So no design pays
less than

    C ≥ (2z / w)² / t²        token-steps, on average, for an interval of typical width w            (the bound)

where "typical" means (E 1/w²)^(−1/2), the width of the mean information. The argument holds search by search,
so it covers adaptive and sequential designs too: a search that crammed targets at n₁, n₂, … has, to first order,
1/w² = (e₁ᵀ J⁻¹ e₁)⁻¹ / (2z)² with J = Σ I(nⱼ), which Elfving's theorem applied to that search's own lengths caps at
t² · Σ c(nⱼ) / (2z)²; averaging over searches (Wald's identity: the mean of Σ c(nⱼ) is the mean cost) gives the
bound. A rule that stops a search once its width is small selects narrow intervals, which is part of E 1/w². The bound is asymptotic (it assumes the
interval is as wide as the information says, which holds when the design uses many targets: ``targets``
reports how many the ideal design needs) and generous to the designs (it grants them the true n50 and k to
place their lengths by). With ``steepness_known=True`` it is the bound for a fit that knew k: then only the
first component counts, t² = max_n k²·p(1 − p)/c(n), and the best design is one length; without k known, lengths
far from n50 carry little about n50, and the ideal design usually puts its targets on the two whole lengths either
side of n50 (one length when n50 is a whole number; both above it when n50 < 1). That ideal is local — it needs k
to place its lengths and leaves k itself barely estimated — so the bound is loose, never wrong, in that direction.

Sources: Elfving, *Optimum allocation in linear regression theory*, Ann. Math. Statist. 23 (1952); for sequential
designs, Ford & Silvey, Biometrika 67 (1980), Wu, Biometrika 72 (1985), Chaudhuri & Mykland, JASA 88 (1993); cost-weighted
c-optimal designs, Atkinson, Donev & Tobias, *Optimum Experimental Designs, with SAS* (2007), ch. 17 and 22;
the token-step cost of chapter 3 (:func:`accessibility_lib.experiments.n50.token_steps`); the logistic of
:func:`accessibility_lib.experiments.fitting.logistic`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from accessibility_lib.experiments.fitting import logistic
from accessibility_lib.ground.checks import check_int, check_positive_real, check_real

__all__ = [
    "MAX_LENGTHS",
    "efficiency_interval",
    "SearchCostBound",
    "min_search_token_steps",
    "success_step_fit",
    "success_step_share",
    "target_information",
    "target_token_steps",
]

MAX_LENGTHS = 200_000  # the most candidate lengths the bound optimises over (a flatter curve raises ValueError)
TAIL = 30.0  # lengths with k·(n − n50) above this carry no information (p < 1e-13)


@dataclass(frozen=True)
class SearchCostBound:
    """The least token-steps any design pays for an n50 interval of a given width (:func:`min_search_token_steps`).

    Attributes:
        token_steps: the bound (token-steps).
        lengths: the lengths (tokens) of the ideal design, one (steepness known) or two.
        cost_shares: the share of the token-steps it spends at each, summing to 1.
        targets: the targets the ideal design crams in all (a real number); the bound is asymptotic, so it
            means little where this is small (below about 10).
        information_per_token_step: t², the precision of n50 the ideal design gathers per token-step
            (1 / (token² · token-step)).
        steepness_known: whether the bound is the one for a fit that knew k.
    """

    token_steps: float
    lengths: tuple[int, ...]
    cost_shares: tuple[float, ...]
    targets: float
    information_per_token_step: float
    steepness_known: bool

    @property
    def best_n(self) -> int:
        """The length (tokens) where the ideal design spends most."""
        return self.lengths[int(np.argmax(self.cost_shares))]


def target_information(n, n50: float, steepness: float) -> np.ndarray:
    """Fisher information about n50 of one target at length n, with the steepness known: k²·p·(1 − p).

    Args:
        n: lengths (tokens), any shape. n50: the 50 % length (tokens). steepness: k > 0 (per token).

    Returns:
        Information per target (per token²), same shape as ``n``.
    """
    p = logistic(n, n50, steepness)
    return steepness**2 * p * (1.0 - p)


def target_token_steps(
    n, m: int, n50: float, steepness: float, budget: int, success_share, failure_share: float = 1.0
) -> np.ndarray:
    """Expected forward+backward token-steps of one target at length n: (m + n − 1)·budget·(p·f(n) + (1 − p)·g).

    Args:
        n: lengths (tokens), any shape. m: prompt length (soft vectors). budget: the step cap a failure runs to.
        success_share: f(n), the share of the budget a success uses: a number in (0, 1] or a callable of n.
        failure_share: g, the share a failure uses (1: it runs to the cap; less: a rule that gives it up early).

    Returns:
        Token-steps, same shape as ``n``.

    Raises:
        ValueError: a share outside (0, 1].
    """
    n = np.asarray(n, dtype=np.float64)
    p = logistic(n, n50, steepness)
    f = np.asarray(success_share(n) if callable(success_share) else success_share, dtype=np.float64)
    if np.any(~np.isfinite(f)) or np.any(f <= 0) or np.any(f > 1):
        raise ValueError(f"success_share must lie in (0, 1] (a share of the step budget), got {f!r}")
    g = check_real("failure_share", failure_share, minimum=0.0, maximum=1.0, min_inclusive=False)
    return (m + n - 1.0) * budget * (p * f + (1.0 - p) * g)


def min_search_token_steps(
    width: float,
    n50: float,
    steepness: float,
    m: int,
    budget: int,
    success_share: float | Callable = 1.0,
    *,
    level: float = 0.95,
    failure_share: float = 1.0,
    steepness_known: bool = False,
) -> SearchCostBound:
    """The fewest token-steps any n50 search pays, on average, for a ``level`` interval ``width`` tokens wide.

    The cost-weighted c-optimal design for n50 (module docstring), found as a linear programme over every length
    from 1 token to where the success rate falls below 1e-13.

    Args:
        width: the typical interval width to reach (tokens, > 0; (E 1/w²)^(−1/2) over searches).
        n50, steepness: the success curve 1 / (1 + exp(k·(n − n50))) (tokens; per token, > 0).
        m: prompt length (soft vectors, ≥ 1). budget: the step cap (optimiser steps, ≥ 1).
        success_share: the share of the budget a success uses, a number in (0, 1] or a callable of n.
        level: the interval's coverage, in (0, 1).
        failure_share: the share of the budget a failure uses (1: to the cap; less: the bound for a trial that
            gives failures up early and never loses a success, the most such a rule could add).
        steepness_known: the bound for a fit that knew k (one length; lower, so more generous to the designs).

    Returns:
        A :class:`SearchCostBound`.

    Raises:
        ValueError: a width, n50, steepness, m, budget, level or share out of range, a curve so flat that more
            than ``MAX_LENGTHS`` lengths would carry information, or so steep that none does.
    """
    width = check_real("width", width, minimum=0.0, min_inclusive=False)
    n50 = check_real("n50", n50, minimum=0.0, min_inclusive=False)
    steepness = check_real("steepness", steepness, minimum=0.0, min_inclusive=False)
    m = check_int("m", m, minimum=1)
    budget = check_int("budget", budget, minimum=1)
    level = check_real("level", level, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    last = int(np.ceil(n50 + TAIL / steepness))
    if last > MAX_LENGTHS:
        raise ValueError(
            f"steepness {steepness} per token is too flat for the bound: lengths up to {last} tokens would carry "
            f"information (at most {MAX_LENGTHS}); pass a steepness ≥ {TAIL / max(MAX_LENGTHS - n50, 1.0):.2g}"
        )
    n = np.arange(1, max(last, 2) + 1)
    p = logistic(n, n50, steepness)
    cost = target_token_steps(n, m, n50, steepness, budget, success_share, failure_share)
    u = np.sqrt(p * (1.0 - p) / cost)[:, None] * np.stack([np.full(n.size, steepness), -(n - n50)], axis=1)
    if steepness_known:
        best = int(np.argmax(np.abs(u[:, 0])))
        t, lengths, shares = float(abs(u[best, 0])), (int(n[best]),), (1.0,)
    else:
        t, lengths, shares = _elfving(u, n)
    if not (math.isfinite(t) and t > 0):
        raise ValueError(
            f"steepness {steepness} per token is too steep for the bound: no whole length has a success rate strictly "
            f"between 0 and 1 (in float64), so n50 is pinned between two lengths without any information to count; "
            "the asymptotic bound does not apply"
        )
    need = (2.0 * float(stats.norm.ppf(0.5 + level / 2.0)) / width) ** 2
    total = need / t**2
    at = np.searchsorted(n, lengths)
    return SearchCostBound(
        token_steps=float(total),
        lengths=lengths,
        cost_shares=shares,
        targets=float(sum(total * s / cost[i] for s, i in zip(shares, at))),
        information_per_token_step=float(t**2),
        steepness_known=bool(steepness_known),
    )


def _elfving(u: np.ndarray, n: np.ndarray) -> tuple[float, tuple[int, ...], tuple[float, ...]]:
    """Elfving's c-optimal design for the first axis: the largest t with t·e₁ in the hull of ±u (rows of u).

    Returns t, the lengths with weight, and their cost shares (the weights λ, which are the shares of the cost).
    """
    scale = np.abs(u).max(axis=0)  # per column: scaling the slope column leaves t unchanged, the n50 column scales t
    scale = np.where(scale > 0, scale, 1.0)
    v = u / scale
    k = v.shape[0]
    # variables: λ⁺ (k), λ⁻ (k), t; maximise t
    c = np.zeros(2 * k + 1)
    c[-1] = -1.0
    a_eq = np.zeros((3, 2 * k + 1))
    a_eq[0, :k], a_eq[0, k : 2 * k], a_eq[0, -1] = v[:, 0], -v[:, 0], -1.0
    a_eq[1, :k], a_eq[1, k : 2 * k] = v[:, 1], -v[:, 1]
    a_eq[2, : 2 * k] = 1.0
    res = optimize.linprog(
        c, A_eq=a_eq, b_eq=[0.0, 0.0, 1.0], bounds=[(0, None)] * (2 * k) + [(0, None)], method="highs"
    )
    if res.status != 0:  # pragma: no cover - a feasible, bounded programme (t = 0 is feasible, t ≤ max |v|)
        raise RuntimeError(f"the design programme failed: {res.message}")
    lam = res.x[:k] + res.x[k : 2 * k]
    keep = np.flatnonzero(lam > 1e-9)
    shares = lam[keep] / lam[keep].sum()
    return float(res.x[-1] * scale[0]), tuple(int(x) for x in n[keep]), tuple(float(x) for x in shares)


def success_step_fit(outcomes, n50: float, budget: int) -> tuple[float, float, np.ndarray]:
    """(a, b, residuals): a success's steps / budget ≈ a + b·n/n50, a line through a unit's own successes.

    With fewer than three successes, or all at one length, the line is flat at their mean share (½ with none).

    Args:
        outcomes: records with ``n`` (tokens), ``steps`` and ``success``. n50: tokens. budget: the step cap.

    Returns:
        The intercept and slope (shares of the budget) and the successes' residuals (an array, maybe empty).
    """
    pts = np.array([(r["n"] / n50, r["steps"] / budget) for r in outcomes if r.get("success")], dtype=float)
    x, y = (pts[:, 0], pts[:, 1]) if pts.size else (np.zeros(0), np.zeros(0))
    b, a = (
        np.polyfit(x, y, 1) if np.unique(x).size >= 2 and x.size >= 3 else (0.0, float(np.mean(y)) if y.size else 0.5)
    )
    return float(a), float(b), y - (a + b * x)


def success_step_share(outcomes, n50: float, budget: int) -> Callable[[np.ndarray], np.ndarray]:
    """f(n): the mean share of the step budget a success uses at length n (:func:`success_step_fit`).

    The line plus each residual, clipped to [1/budget, 1], averaged over the residuals.

    Args:
        outcomes: records with ``n`` (tokens), ``steps`` and ``success``. n50: tokens. budget: the step cap.

    Returns:
        A callable of lengths (array) returning shares in [1/budget, 1].
    """
    a, b, resid = success_step_fit(outcomes, n50, budget)
    resid = resid if resid.size else np.zeros(1)

    def share(n: np.ndarray) -> np.ndarray:
        x = np.asarray(n, dtype=float)[..., None] / n50
        return np.clip(a + b * x + resid, 1.0 / budget, 1.0).mean(axis=-1)

    return share


def efficiency_interval(efficiency: float, reps: int, level: float = 0.95) -> tuple[float, float]:
    """An approximate interval for a design's efficiency estimated from ``reps`` simulated searches.

    The efficiency divides the bound at a design's RMSE by its mean cost, so it scales like 1 / RMSE². With
    normal, unbiased errors, reps·RMSE²/σ² is χ² with ``reps`` degrees of freedom, so the true efficiency lies in
    ``efficiency · [χ²_{(1−level)/2}, χ²_{(1+level)/2}] / reps`` with probability ``level`` (the mean cost's own
    error, a few per cent over this many searches, is left out). Heavier-tailed errors widen it; it is a guide
    to how many digits an efficiency from ``reps`` searches carries (about ±30 % at 100), not an exact interval.

    Args:
        efficiency: the estimate (dimensionless, > 0).
        reps: simulated searches behind it (≥ 2).
        level: in (0, 1).

    Returns:
        (low, high), dimensionless.

    Raises:
        ValueError: efficiency not positive and finite, reps < 2, or level outside (0, 1).
    """
    efficiency = check_positive_real("efficiency", efficiency)
    reps = check_int("reps", reps, minimum=2)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    lo, hi = stats.chi2.ppf([(1 - level) / 2, (1 + level) / 2], reps) / reps
    return float(efficiency * lo), float(efficiency * hi)
