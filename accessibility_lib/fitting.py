"""Sigmoid fits of success-against-length curves and the slope of n50 against m.

The cramming experiment (paper Section 5, after Kuratov et al. 2025) measures, for each prompt length
m, the fraction of targets of length n that can be crammed. That fraction falls from 1 to 0 like a
decreasing logistic curve,

    p(n) = 1 / (1 + exp(k·(n − n50))),    k > 0,

whose 50 % point n50(m) is the length a prompt of m vectors can still hold for half the targets.
Corollary 4.6 predicts n50(m) ≈ C·m, linear in m, so the second fit is a straight line through the
points (m, n50(m)); its slope is the measured C_exp compared with the bound C in Table 1.

What this module does better than the replication code (PAPER.md §6): the logistic is fitted by
binomial maximum likelihood when the number of trials per point is known (least squares otherwise),
n50 gets a bootstrap confidence interval, and degenerate curves — all successes, all failures, a
single length, or no crossing of 50 % inside the tested range — are *flagged* (``ok`` is False and
``message`` says why) instead of silently extrapolated.

Example:
    >>> import numpy as np
    >>> n = np.arange(10, 200, 10)
    >>> p = 1 / (1 + np.exp(0.1 * (n - 90)))
    >>> fit = fit_sigmoid(n, p, n_trials=20, n_boot=0)
    >>> round(fit.n50, 1)
    90.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, stats
from threadpoolctl import threadpool_limits

from ._checks import check_array, check_int, check_real

__all__ = ["SigmoidFit", "SlopeFit", "logistic", "fit_sigmoid", "fit_slope"]


def logistic(n: np.ndarray, n50: float, steepness: float) -> np.ndarray:
    """The decreasing logistic 1 / (1 + exp(k·(n − n50))), computed without overflow.

    Args:
        n: lengths (tokens), any shape.
        n50: the 50 % length (tokens).
        steepness: k > 0, per token.

    Returns:
        Success probabilities in [0, 1], same shape as ``n``.
    """
    z = steepness * (np.asarray(n, dtype=np.float64) - n50)
    return np.exp(-np.logaddexp(0.0, z))


@dataclass
class SigmoidFit:
    """Result of :func:`fit_sigmoid`.

    Attributes:
        n50: fitted 50 % length (tokens); NaN when ``ok`` is False.
        steepness: k (per token); NaN when ``ok`` is False.
        r2: coefficient of determination of the fitted curve on the success fractions.
        ci: (low, high) bootstrap percentile interval for n50 at ``level`` (NaNs if not computed).
        level: confidence level of ``ci``.
        ok: False for degenerate data (then n50 is NaN and ``message`` says what is known instead).
        message: why the fit is degenerate, or "" when ``ok``.
        bound: for degenerate data, what the data do say: ``(">", n_max)`` when every tested length
            succeeds at least half of the time, ``("<", n_min)`` when none does; None otherwise.
        method: "binomial-mle" (n_trials known) or "least-squares".
        lengths, success: the data fitted (sorted by length).
        boot_n50: bootstrap replicates of n50 (empty when not computed).
    """

    n50: float
    steepness: float
    r2: float
    ci: tuple[float, float]
    level: float
    ok: bool
    message: str
    bound: tuple[str, float] | None
    method: str
    lengths: np.ndarray
    success: np.ndarray
    boot_n50: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def predict(self, n: np.ndarray) -> np.ndarray:
        """Fitted success probability at lengths ``n``.

        Raises:
            ValueError: if the fit is degenerate (``ok`` False).
        """
        if not self.ok:
            raise ValueError(f"no sigmoid was fitted: {self.message}")
        return logistic(n, self.n50, self.steepness)


def _fit_once(n: np.ndarray, p: np.ndarray, trials: np.ndarray | None, k_bounds: tuple[float, float]) -> tuple[float, float]:
    """(n50, k) maximising the binomial likelihood (or minimising squared error), bounded."""
    lo_n, hi_n = float(n.min()), float(n.max())
    log_k_lo, log_k_hi = math.log(k_bounds[0]), math.log(k_bounds[1])

    if trials is not None:
        succ = p * trials

        def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
            k = math.exp(theta[1])
            z = k * (n - theta[0])
            log1pez = np.logaddexp(0.0, z)  # -log p
            prob = np.exp(-log1pez)
            nll = float(np.sum(trials * log1pez - (trials - succ) * z))
            dz = succ - trials * prob  # d nll / d z
            return nll, np.array([float(np.sum(dz) * -k), float(np.sum(dz * z))])
    else:

        def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
            k = math.exp(theta[1])
            z = k * (n - theta[0])
            prob = np.exp(-np.logaddexp(0.0, z))
            resid = prob - p
            dz = -2.0 * resid * prob * (1.0 - prob)
            return float(np.sum(resid**2)), np.array([float(np.sum(dz) * -k), float(np.sum(dz * z))])

    # start: n50 where the data cross 1/2 (linear interpolation), k from the spread of the lengths
    above = p >= 0.5
    if above.any() and (~above).any():
        i = int(np.nonzero(above)[0].max())
        j = min(i + 1, len(n) - 1)
        n0 = float(n[i] if j == i or p[i] == p[j] else n[i] + (p[i] - 0.5) * (n[j] - n[i]) / (p[i] - p[j]))
    else:
        n0 = 0.5 * (lo_n + hi_n)
    best = None
    for k0 in (4.0 / max(hi_n - lo_n, 1e-9), 20.0 / max(hi_n - lo_n, 1e-9)):
        theta0 = np.array([n0, min(max(math.log(k0), log_k_lo), log_k_hi)])
        res = optimize.minimize(
            objective, theta0, jac=True, method="L-BFGS-B", bounds=[(lo_n, hi_n), (log_k_lo, log_k_hi)]
        )
        if best is None or res.fun < best.fun:
            best = res
    return float(best.x[0]), float(math.exp(best.x[1]))


def fit_sigmoid(
    lengths: object,
    success: object,
    n_trials: object = None,
    *,
    n_boot: int = 300,
    level: float = 0.95,
    seed: int = 0,
) -> SigmoidFit:
    """Fit the decreasing logistic p(n) = 1/(1 + exp(k(n − n50))) to success fractions.

    Args:
        lengths: target lengths n (tokens), shape (L,). Repeated lengths are allowed.
        success: success fraction at each length, in [0, 1], shape (L,).
        n_trials: number of targets behind each fraction (int or shape (L,)). When given, the fit
            maximises the binomial likelihood and the bootstrap redraws each point's successes from a
            binomial; when None, least squares on the fractions and a bootstrap over points.
        n_boot: bootstrap replicates for the interval on n50 (0: no interval).
        level: confidence level of the interval, in (0, 1).
        seed: seed of the bootstrap.

    Returns:
        A :class:`SigmoidFit`. Degenerate data are flagged, not extrapolated: if every length
        succeeds ≥ 50 % (incl. all ones), ``ok`` is False, n50 is NaN and ``bound == (">", max n)``;
        if every length succeeds < 50 % (incl. all zeros), ``bound == ("<", min n)``.
        n50 is constrained to the tested range and k to [1e-3, 50]/(spacing of the lengths), so a
        step-like curve gives the steepest allowed k, never an infinite one.

    Raises:
        ValueError: for mismatched shapes, fractions outside [0, 1], fewer than two distinct lengths,
            bad ``n_trials``, ``n_boot`` < 0 or ``level`` outside (0, 1).

    Source: the sigmoid fit of paper Section 5 (Fig 4); the interval and degeneracy flags are ours.
    """
    n = check_array("lengths", lengths, ndim=1)
    p = check_array("success", success, ndim=1)
    if n.shape != p.shape:
        raise ValueError(f"lengths and success must have the same shape, got {n.shape} and {p.shape}")
    if np.any(p < 0) or np.any(p > 1):
        raise ValueError(f"success must contain fractions in [0, 1], got values in [{p.min()}, {p.max()}]")
    n_boot = check_int("n_boot", n_boot, minimum=0, maximum=100_000)
    level = check_real("level", level, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    trials = None
    if n_trials is not None:
        trials = np.broadcast_to(check_array("n_trials", n_trials, positive=True), n.shape).astype(np.float64)
        if np.any(trials != np.round(trials)):
            raise ValueError("n_trials must be whole numbers of targets")
    distinct = np.unique(n)
    if distinct.size < 2:
        raise ValueError(
            f"fit_sigmoid needs success fractions at two or more distinct lengths, got {distinct.size} "
            f"({distinct.tolist()}): one point cannot locate a 50 % crossing"
        )
    order = np.argsort(n, kind="stable")
    n, p = n[order], p[order]
    if trials is not None:
        trials = trials[order]
        p = np.round(p * trials) / trials  # whole numbers of successes
    nan2 = (float("nan"), float("nan"))

    def degenerate(message: str, bound: tuple[str, float]) -> SigmoidFit:
        return SigmoidFit(float("nan"), float("nan"), float("nan"), nan2, level, False, message, bound,
                          "none", n, p)

    if np.all(p >= 0.5):
        what = "all targets succeeded" if np.all(p == 1) else "success stays >= 50 % at every tested length"
        return degenerate(f"{what}: n50 > {n.max():g} (test longer targets)", (">", float(n.max())))
    if np.all(p < 0.5):
        what = "no target succeeded" if np.all(p == 0) else "success stays < 50 % at every tested length"
        return degenerate(f"{what}: n50 < {n.min():g} (test shorter targets)", ("<", float(n.min())))

    # tiny 2-parameter problems: BLAS threads only add overhead (50x on a loaded 2-core machine)
    with threadpool_limits(1):
        return _fit_full(n, p, trials, distinct, n_boot, level, seed)


def _fit_full(n, p, trials, distinct, n_boot, level, seed) -> SigmoidFit:
    nan2 = (float("nan"), float("nan"))
    spacing = float(np.min(np.diff(distinct)))
    k_bounds = (1e-3 / spacing, 50.0 / spacing)
    n50, k = _fit_once(n, p, trials, k_bounds)
    fitted = logistic(n, n50, k)
    ss_tot = float(np.sum((p - p.mean()) ** 2))
    r2 = 1.0 - float(np.sum((p - fitted) ** 2)) / ss_tot if ss_tot > 0 else float("nan")

    boot = np.zeros(0)
    ci = nan2
    if n_boot > 0:
        rng = np.random.default_rng(seed)
        reps = []
        for _ in range(n_boot):
            if trials is not None:
                pb = rng.binomial(trials.astype(np.int64), p) / trials
                nb, tb = n, trials
            else:
                idx = rng.integers(0, n.size, n.size)
                nb, pb, tb = n[idx], p[idx], None
                srt = np.argsort(nb, kind="stable")
                nb, pb = nb[srt], pb[srt]
            if np.unique(nb).size < 2 or np.all(pb >= 0.5) or np.all(pb < 0.5):
                continue  # a replicate without a crossing says nothing about n50
            reps.append(_fit_once(nb, pb, tb, k_bounds)[0])
        boot = np.asarray(reps)
        if boot.size >= max(20, n_boot // 5):
            a = (1.0 - level) / 2.0
            ci = (float(np.quantile(boot, a)), float(np.quantile(boot, 1.0 - a)))
    method = "binomial-mle" if trials is not None else "least-squares"
    return SigmoidFit(n50, k, r2, ci, level, True, "", None, method, n, p, boot)


@dataclass
class SlopeFit:
    """Result of :func:`fit_slope`: n50 ≈ slope·m + intercept.

    Attributes:
        slope: C_exp, tokens per prompt vector.
        intercept: tokens (0 when fitted through the origin).
        r2: coefficient of determination.
        ci: (low, high) Student-t interval for the slope at ``level`` (NaNs with too few points).
        level: confidence level.
        n_points: number of (m, n50) points used.
    """

    slope: float
    intercept: float
    r2: float
    ci: tuple[float, float]
    level: float
    n_points: int

    def predict(self, m: object) -> np.ndarray:
        """n50 predicted at prompt lengths ``m``."""
        return self.slope * np.asarray(m, dtype=np.float64) + self.intercept


def fit_slope(ms: object, n50s: object, *, through_origin: bool = False, level: float = 0.95) -> SlopeFit:
    """Least-squares line n50 = C_exp·m + b through the points (m, n50(m)).

    Args:
        ms: prompt lengths m, shape (K,).
        n50s: fitted 50 % lengths (tokens), shape (K,); must be finite (drop degenerate fits first).
        through_origin: fit n50 = C_exp·m (b = 0), as Cor 4.6's n* = C·m.
        level: confidence level of the slope interval.

    Returns:
        A :class:`SlopeFit`; its interval is the Student-t interval of ordinary least squares
        (NaN when there are no residual degrees of freedom, i.e. two points with an intercept).

    Raises:
        ValueError: for mismatched shapes, non-finite values, fewer than two points, or all m equal.

    Source: paper Section 5 (n50 linear in m, R² = 0.999 for Qwen-2.5-1.5B on PG19).
    """
    m = check_array("ms", ms, ndim=1)
    y = check_array("n50s", n50s, ndim=1)
    level = check_real("level", level, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    if m.shape != y.shape:
        raise ValueError(f"ms and n50s must have the same shape, got {m.shape} and {y.shape}")
    if m.size < 2 or np.unique(m).size < 2:
        raise ValueError(f"fit_slope needs at least two distinct prompt lengths m, got {np.unique(m).tolist()}")
    if through_origin:
        slope = float(np.dot(m, y) / np.dot(m, m))
        intercept = 0.0
        dof = m.size - 1
        se = math.sqrt(np.sum((y - slope * m) ** 2) / dof / np.dot(m, m)) if dof > 0 else float("nan")
        ss_tot = float(np.sum(y**2))  # uncentred R² for a line through the origin
    else:
        res = stats.linregress(m, y)
        slope, intercept = float(res.slope), float(res.intercept)
        dof = m.size - 2
        se = float(res.stderr) if dof > 0 else float("nan")
        ss_tot = float(np.sum((y - y.mean()) ** 2))
    resid = y - (slope * m + intercept)
    r2 = 1.0 - float(np.sum(resid**2)) / ss_tot if ss_tot > 0 else float("nan")
    if dof > 0 and math.isfinite(se):
        t = float(stats.t.ppf(0.5 + level / 2.0, dof))
        ci = (slope - t * se, slope + t * se)
    else:
        ci = (float("nan"), float("nan"))
    return SlopeFit(slope, intercept, r2, ci, level, int(m.size))
