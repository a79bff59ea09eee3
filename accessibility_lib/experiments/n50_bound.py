"""How cheap can any n50 search be? A Fisher-information lower bound on the token-steps for a given interval width.

A search design (bisection, sequential, or any other) chooses lengths n and crams one new target at each
choice; the fit then gives n50 an interval. Whatever the design, each target at length n carries at most

    I(n) = k² · p(n) · (1 − p(n))        (per token², p the logistic success rate, k its steepness)

of Fisher information about n50 — at most, because this is the information *with the steepness k known*;
a fit that also estimates k gets less — and costs on average

    c(n) = (m + n − 1) · budget · (p(n) · f(n) + 1 − p(n))        (token-steps)

where f(n) is the share of the step budget a success uses and a failure runs to the cap. Asymptotically a
95 % interval is 2·z / √(Σ I) wide (z = 1.96; the profile-likelihood interval the fit reports has the same
width to first order), so an interval of width w needs Σ I ≥ (2z/w)², and no design pays less than

    (2z / w)² / max_n I(n) / c(n)        token-steps                                       (the bound)

for it. The bound is generous to the designs: it grants them the steepness, the true n50 to aim at and an
asymptotic interval. Lengths whose success rate lies outside ``p_window`` are left out of the maximum:
there the logistic is an extrapolation of the fit (a design that learns n50 from 97 % successes at n = 2
trusts the model's tail, not the data). Cost weighting pulls the best length below n50, where targets are
shorter and successes stop early.

Sources: the Fisher information of a binomial response (e.g. Silvey, *Optimal Design*, 1980, ch. 1); the
token-step cost of chapter 3 (:func:`accessibility_lib.experiments.n50.token_steps`); the logistic of
:func:`accessibility_lib.experiments.fitting.logistic`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from accessibility_lib.experiments.fitting import logistic
from accessibility_lib.ground.checks import check_int, check_real

__all__ = [
    "SearchCostBound",
    "min_search_token_steps",
    "success_step_fit",
    "success_step_share",
    "target_information",
    "target_token_steps",
]


@dataclass(frozen=True)
class SearchCostBound:
    """The least token-steps any design pays for an n50 interval of a given width (:func:`min_search_token_steps`).

    Attributes:
        token_steps: the bound (token-steps).
        best_n: the length (tokens) with the most information per token-step, inside ``p_window``.
        information_per_token_step: I(best_n) / c(best_n) (per token² per token-step).
        targets: the targets at ``best_n`` the bound pays for, (2z/w)² / I(best_n) (a real number).
    """

    token_steps: float
    best_n: int
    information_per_token_step: float
    targets: float


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
    p_window: tuple[float, float] = (0.1, 0.9),
    level: float = 0.95,
    failure_share: float = 1.0,
) -> SearchCostBound:
    """The fewest token-steps any n50 search pays for a ``level`` interval ``width`` tokens wide (module docstring).

    Args:
        width: the interval width to reach (tokens, > 0).
        n50, steepness: the success curve 1 / (1 + exp(k·(n − n50))) (tokens; per token, > 0).
        m: prompt length (soft vectors, ≥ 1). budget: the step cap (optimiser steps, ≥ 1).
        success_share: the share of the budget a success uses, a number or a callable of n (module docstring).
        p_window: (lo, hi), the success rates whose lengths may carry the information; lo < ½ < hi.
        level: the interval's coverage, in (0, 1).
        failure_share: the share of the budget a failure uses (1: to the cap; less: the bound for a trial that
            gives failures up early and never loses a success, the most such a rule could add).

    Returns:
        A :class:`SearchCostBound`.

    Raises:
        ValueError: a width, n50, steepness, m, budget or level out of range, a window that does not contain ½,
            or a success or failure share outside (0, 1].
    """
    width = check_real("width", width, minimum=0.0, min_inclusive=False)
    n50 = check_real("n50", n50, minimum=0.0, min_inclusive=False)
    steepness = check_real("steepness", steepness, minimum=0.0, min_inclusive=False)
    m = check_int("m", m, minimum=1)
    budget = check_int("budget", budget, minimum=1)
    level = check_real("level", level, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    lo, hi = (check_real("p_window", float(x), minimum=0.0, maximum=1.0) for x in p_window)
    if not lo < 0.5 < hi:
        raise ValueError(f"p_window must contain ½ (lo < 0.5 < hi), got {p_window!r}")
    # the lengths whose rate lies in the window: n50 ± logit(1 − lo)/k on the integers ≥ 1
    reach_hi = np.log((1.0 - lo) / lo) / steepness if lo > 0 else np.inf
    reach_lo = np.log(hi / (1.0 - hi)) / steepness if hi < 1 else np.inf
    first = max(1, int(np.floor(n50 - min(reach_lo, n50 + 1))))
    last = int(np.ceil(n50 + min(reach_hi, 50.0 / steepness + n50)))
    n = np.arange(first, max(first, last) + 1)
    p = logistic(n, n50, steepness)
    n = n[(p >= lo) & (p <= hi)]
    if n.size == 0:  # a steep curve whose window holds no integer length: the nearest integers to n50
        n = np.unique(np.clip([np.floor(n50), np.ceil(n50)], 1, None)).astype(int)
    cost = target_token_steps(n, m, n50, steepness, budget, success_share, failure_share)
    rate = target_information(n, n50, steepness) / cost
    best = int(np.argmax(rate))
    need = (2.0 * float(stats.norm.ppf(0.5 + level / 2.0)) / width) ** 2
    return SearchCostBound(
        token_steps=float(need / rate[best]),
        best_n=int(n[best]),
        information_per_token_step=float(rate[best]),
        targets=float(need / target_information(n[best], n50, steepness)),
    )


def success_step_fit(outcomes, n50: float, budget: int) -> tuple[float, float, np.ndarray]:
    """(a, b, residuals): a success's steps / budget ≈ a + b·n/n50, a line through a unit's own successes.

    With fewer than three successes the line is flat at their mean share (½ with none).

    Args:
        outcomes: records with ``n`` (tokens), ``steps`` and ``success``. n50: tokens. budget: the step cap.

    Returns:
        The intercept and slope (shares of the budget) and the successes' residuals (an array, maybe empty).
    """
    pts = np.array([(r["n"] / n50, r["steps"] / budget) for r in outcomes if r.get("success")], dtype=float)
    x, y = (pts[:, 0], pts[:, 1]) if pts.size else (np.zeros(0), np.zeros(0))
    b, a = np.polyfit(x, y, 1) if x.size >= 3 else (0.0, float(np.mean(y)) if y.size else 0.5)
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
