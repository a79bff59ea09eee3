"""Sigmoid fits of success-against-length curves and the slope of n50 against m.

The cramming experiment (paper Section 5, after Kuratov et al. 2025) measures, for each prompt length
m, the fraction of targets of length n that can be crammed. That fraction falls from 1 to 0 like a
decreasing logistic curve,

    p(n) = 1 / (1 + exp(k·(n − n50))),    k > 0,

whose 50 % point n50(m) is the length a prompt of m vectors can still hold for half the targets.
Corollary 4.6 predicts n50(m) ≈ C·m, linear in m, so the second fit is a straight line through the
points (m, n50(m)); its slope is the measured C_exp compared with the bound C in Table 1.

What this module does better than the replication code (the book's appendix on conventions): the logistic is fitted by
binomial maximum likelihood when the number of trials per point is known (least squares otherwise),
n50 gets a profile-likelihood interval (honest when rates are 0 or 1, where a bootstrap that redraws
from the observed rates never varies), and a crossing is reported only when a length with rate > ½
lies below one with rate < ½; otherwise the result is *one-sided* (``ok`` is False, ``bound`` and
``message`` say what the data show) instead of a crossing pinned to the end of the tested range.

Example:
    >>> import numpy as np
    >>> n = np.arange(10, 200, 10)
    >>> p = 1 / (1 + np.exp(0.1 * (n - 90)))
    >>> fit = fit_sigmoid(n, p, n_trials=20)
    >>> round(fit.n50, 1)
    90.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats
from threadpoolctl import threadpool_limits

from accessibility_lib.experiments.isotonic import isotonic_crossing, separation
from accessibility_lib.ground.checks import check_array, check_real

__all__ = ["SigmoidFit", "logistic", "fit_sigmoid", "fit_slope"]
from accessibility_lib.experiments.slope_fit import fit_slope


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
        r_squared: coefficient of determination of the fitted curve on the success fractions.
        ci: (low, high) profile-likelihood interval for n50 at ``level`` (NaNs if not computed).
        level: confidence level of ``ci``.
        ok: False for data without a bracketed crossing (then n50 is NaN and ``message`` and
            ``bound`` say what the data do show).
        message: why there is no fit, or a caveat about the interval; "" when there is none.
        bound: for one-sided data, what they say: ``(">=", n_max)`` when every tested length succeeds
            at least half of the time, ``("<=", n_min)`` when none succeeds more than half of the time;
            None otherwise.
        method: "binomial-mle" (n_trials known), "least-squares", or "none".
        lengths, success: the data fitted (sorted by length).
        ci_open: (low, high) — whether that end of the interval reached the edge of the searched
            range (the data do not close it; the end shown is a limit of the search, not of n50).
        monotone: whether the observed rates (pooled per length) never increase with length.
        isotonic_n50: the ½ crossing of the isotonic (non-increasing, shape-free) fit of the same data
            (:func:`accessibility_lib.experiments.isotonic.isotonic_crossing`), tokens; NaN when it has none.
        gof_p: goodness of fit of the logistic: the p-value of its binomial deviance against the
            saturated model, χ² with (tested lengths − 2) degrees of freedom; NaN without trial counts or
            with fewer than three lengths.
        k_max: the largest steepness the fit allowed (per token, ``50 / spacing`` of the lengths).
    """

    n50: float
    steepness: float
    r_squared: float
    ci: tuple[float, float]
    level: float
    ok: bool
    message: str
    bound: tuple[str, float] | None
    method: str
    lengths: np.ndarray
    success: np.ndarray
    ci_open: tuple[bool, bool] = (False, False)
    monotone: bool = True
    isotonic_n50: float = float("nan")
    gof_p: float = float("nan")
    k_max: float = float("inf")

    @property
    def step(self) -> tuple[float, float] | None:
        """(a, b) when every target crammed at each tested length up to a, none from b on, and no length was
        tested between (:func:`~accessibility_lib.experiments.isotonic.separation`): the point and interval are
        then set by the bound ``k_max`` and the data place n50 only somewhere between a and b. Else None."""
        sep = separation(self.lengths, self.success) if self.ok else None
        return None if sep is None or sep[2] is not None else sep[:2]

    @property
    def capped_at(self) -> float | None:
        """The one length c between all and none crammed, on otherwise separated data: the steepness runs to
        ``k_max``, c alone places n50 and the point within the interval is set by the bound. Else None."""
        sep = separation(self.lengths, self.success) if self.ok else None
        return None if sep is None else sep[2]

    @property
    def misfit(self) -> bool:
        """Whether the logistic is rejected by its deviance test at the 5 % level (``gof_p`` < 0.05)."""
        return bool(self.gof_p < 0.05)

    def shape_note(self, digits: int = 1) -> str:
        """ "" for monotone, resolved data; else the isotonic crossing beside the logistic one, the misfit flag
        and the :attr:`step` the data jump across."""
        notes = []
        if not self.monotone:
            iso = (
                f"isotonic n50 {self.isotonic_n50:.{digits}f}"
                if np.isfinite(self.isotonic_n50)
                else "no isotonic crossing"
            )
            fit = f"; logistic misfit, deviance p = {self.gof_p:.2g}" if self.misfit else ""
            notes.append(f"rates not monotone: {iso}{fit}")
        if self.step is not None:
            a, b = self.step
            notes.append(f"a step between n = {a:g} and {b:g}: the data place n50 only between them")
        elif self.capped_at is not None:
            notes.append(f"steepness at its cap: n = {self.capped_at:g} alone places n50 (read the interval)")
        if len(self.lengths) and np.isfinite(self.ci[0]):  # a closed end outside the lengths tried, as printed
            lo, hi = round(self.ci[0], digits), round(self.ci[1], digits)
            past = [
                f"{w} end past the {e} length tried ({x:g})"
                for w, e, x, out, op in (
                    ("lower", "shortest", min(self.lengths), lo < min(self.lengths), self.ci_open[0]),
                    ("upper", "longest", max(self.lengths), hi > max(self.lengths), self.ci_open[1]),
                )
                if out and not op
            ]
            notes += [", ".join(past) + ": extrapolated"] if past else []
        return "; ".join(notes)

    def predict(self, n: np.ndarray) -> np.ndarray:
        """Fitted success probability at lengths ``n``.

        Raises:
            ValueError: if there is no fit (``ok`` False).
        """
        if not self.ok:
            raise ValueError(f"no sigmoid was fitted: {self.message}")
        return logistic(n, self.n50, self.steepness)

    def describe(self, digits: int = 1, note: bool = True) -> str:
        """n50 with its interval as text, one-sided results and open interval ends spelled out.

        ``note=False`` leaves out :meth:`shape_note` (for tables that give it once, in a footnote)."""
        if not self.ok:
            if self.bound is not None:
                return f"n50 {'≥' if self.bound[0] == '>=' else '≤'} {self.bound[1]:.{digits}f} (one-sided)"
            return "no n50 (" + self.message + ")"
        if not np.isfinite(self.ci[0]):
            return f"{self.n50:.{digits}f}"
        # an end at the edge of the searched range is not a number the data give: "open"
        lo = "open" if self.ci_open[0] else f"{self.ci[0]:.{digits}f}"
        hi = "open" if self.ci_open[1] else f"{self.ci[1]:.{digits}f}"
        shape = self.shape_note(digits) if note else ""
        return f"{self.n50:.{digits}f} [{lo}, {hi}]" + (f" — {shape}" if shape else "")


def _nll(n: np.ndarray, succ: np.ndarray, trials: np.ndarray, n50: float, k: float) -> float:
    """Binomial negative log-likelihood of the decreasing logistic (constants dropped)."""
    z = k * (n - n50)
    return float(np.sum(trials * np.logaddexp(0.0, z) - (trials - succ) * z))


def fit_once(
    n: np.ndarray,
    p: np.ndarray,
    trials: np.ndarray | None,
    k_bounds: tuple[float, float],
    n50_bounds: tuple[float, float],
) -> tuple[float, float]:
    """(n50, k) maximising the binomial likelihood (or minimising squared error), bounded."""
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
    above = p > 0.5
    lo_n, hi_n = float(n.min()), float(n.max())
    if above.any() and (~above).any():
        i = int(np.nonzero(above)[0].max())
        j = min(i + 1, len(n) - 1)
        n0 = float(n[i] if j == i or p[i] == p[j] else n[i] + (p[i] - 0.5) * (n[j] - n[i]) / (p[i] - p[j]))
    else:
        n0 = 0.5 * (lo_n + hi_n)
    n0 = min(max(n0, n50_bounds[0]), n50_bounds[1])
    best = None
    for k0 in (4.0 / max(hi_n - lo_n, 1e-9), 20.0 / max(hi_n - lo_n, 1e-9)):
        theta0 = np.array([n0, min(max(math.log(k0), log_k_lo), log_k_hi)])
        res = optimize.minimize(
            objective, theta0, jac=True, method="L-BFGS-B", bounds=[n50_bounds, (log_k_lo, log_k_hi)]
        )
        if best is None or res.fun < best.fun:
            best = res
    return float(best.x[0]), float(math.exp(best.x[1]))


def _profile_interval(n, succ, trials, n50_hat, nll_hat, k_bounds, n50_bounds, level):
    """Profile-likelihood interval for n50: {n50 : 2(min_k NLL(n50, k) − NLL_hat) ≤ χ²₁(level)}."""
    log_k = np.linspace(math.log(k_bounds[0]), math.log(k_bounds[1]), 121)
    ks = np.exp(log_k)

    def profile(c: float) -> float:
        z = ks[:, None] * (n[None, :] - c)  # (K, L)
        nll = np.sum(trials * np.logaddexp(0.0, z) - (trials - succ) * z, axis=1)
        j = int(np.argmin(nll))
        # refine k around the grid minimum
        lo_i, hi_i = max(j - 1, 0), min(j + 1, ks.size - 1)
        r = optimize.minimize_scalar(
            lambda lk: _nll(n, succ, trials, c, math.exp(lk)),
            bounds=(log_k[lo_i], log_k[hi_i]),
            method="bounded",
            options={"xatol": 1e-4},
        )
        return min(float(nll[j]), float(r.fun))

    thr = 0.5 * float(stats.chi2.ppf(level, 1))
    grid = np.linspace(n50_bounds[0], n50_bounds[1], 401)
    inside = np.array([profile(c) - nll_hat <= thr for c in grid])
    inside[np.argmin(np.abs(grid - n50_hat))] = True
    idx = np.nonzero(inside)[0]
    i0, i1 = int(idx.min()), int(idx.max())

    def edge(a: float, b: float) -> float:  # bisection between an inside point a and an outside point b
        for _ in range(30):
            mid = 0.5 * (a + b)
            if profile(mid) - nll_hat <= thr:
                a = mid
            else:
                b = mid
        return a

    low = grid[0] if i0 == 0 else edge(grid[i0], grid[i0 - 1])
    high = grid[-1] if i1 == grid.size - 1 else edge(grid[i1], grid[i1 + 1])
    return (float(low), float(high)), (i0 == 0, i1 == grid.size - 1)


def fit_sigmoid(
    lengths: object,
    success: object,
    n_trials: object = None,
    *,
    level: float = 0.95,
    n_min: float = 0.0,
    seed: int = 0,
) -> SigmoidFit:
    """Fit the decreasing logistic p(n) = 1/(1 + exp(k(n − n50))) to success fractions.

    Args:
        lengths: target lengths n (tokens), shape (L,). Repeated lengths are allowed.
        success: success fraction at each length, in [0, 1], shape (L,).
        n_trials: number of targets behind each fraction (int or shape (L,)). When given, the fit
            maximises the binomial likelihood and n50 gets a profile-likelihood interval, which stays
            honest when rates are 0 or 1 (no redrawing from observed rates); when None, least
            squares on the fractions and no interval.
        level: confidence level of the interval, in (0, 1).
        n_min: the shortest length a target can have (tokens); n50 and its interval are searched
            in [max(n_min, min n − span), max n + span], span = max n − min n, and an interval end
            that reaches that edge is flagged in ``ci_open``.
        seed: unused by the profile interval; kept so that callers can pass one seed everywhere.

    Returns:
        A :class:`SigmoidFit`. A crossing is reported only when it is *bracketed*: some length with
        rate > ½ lies below some length with rate < ½. Otherwise the result is one-sided (``ok``
        False, n50 NaN): ``bound == (">=", max n)`` when no rate is below ½, ``("<=", min n)`` when
        no rate is above ½. k is bounded to [1e-3, 50]/(spacing of the lengths), so a step-like
        curve gets the steepest allowed k (and an interval as wide as the step is unresolved).

    Raises:
        ValueError: for mismatched shapes, fractions outside [0, 1], no data, bad ``n_trials`` or
            ``level`` outside (0, 1).

    Source: the sigmoid fit of paper Section 5 (Fig 4); the bracketing rule and the interval are ours.
    """
    n = check_array("lengths", lengths, ndim=1)
    p = check_array("success", success, ndim=1)
    if n.shape != p.shape:
        raise ValueError(f"lengths and success must have the same shape, got {n.shape} and {p.shape}")
    if n.size == 0:
        raise ValueError("fit_sigmoid needs at least one (length, success) point, got none")
    if np.any(p < 0) or np.any(p > 1):
        raise ValueError(f"success must contain fractions in [0, 1], got values in [{p.min()}, {p.max()}]")
    level = check_real("level", level, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    n_min = check_real("n_min", n_min, minimum=0.0)
    trials = None
    if n_trials is not None:
        trials = np.broadcast_to(check_array("n_trials", n_trials, positive=True), n.shape).astype(np.float64)
        if np.any(trials != np.round(trials)):
            raise ValueError("n_trials must be whole numbers of targets")
    order = np.argsort(n, kind="stable")
    n, p = n[order], p[order]
    if trials is not None:
        trials = trials[order]
        p = np.round(p * trials) / trials  # whole numbers of successes
    nan2 = (float("nan"), float("nan"))

    iso = isotonic_crossing(n, p, trials)

    def one_sided(message: str, bound: tuple[str, float] | None) -> SigmoidFit:
        return SigmoidFit(float("nan"), float("nan"), float("nan"), nan2, level, False, message, bound, "none", n, p,
                          monotone=iso.monotone, isotonic_n50=iso.n50)  # fmt: skip

    above, below = p > 0.5, p < 0.5
    if not below.any():
        what = "all targets succeeded" if np.all(p == 1) else "success stays ≥ 50 % at every tested length"
        return one_sided(f"{what}: n50 ≥ {n.max():g} (test longer targets)", (">=", float(n.max())))
    if not above.any():
        what = "no target succeeded" if np.all(p == 0) else "success stays ≤ 50 % at every tested length"
        return one_sided(f"{what}: n50 ≤ {n.min():g} (test shorter targets)", ("<=", float(n.min())))
    if n[above].min() >= n[below].max():
        return one_sided(
            "no decreasing crossing: every length with rate > 50 % lies above every length with rate < 50 %", None
        )

    # tiny 2-parameter problems: BLAS threads only add overhead (50x on a loaded 2-core machine)
    with threadpool_limits(1):
        fit = _fit_full(n, p, trials, level, n_min)
    fit.monotone, fit.isotonic_n50 = iso.monotone, iso.n50
    if trials is not None and iso.lengths.size >= 3:
        fit.gof_p = _deviance_p(iso.lengths, iso.rates * iso.weights, iso.weights, fit.n50, fit.steepness)
    return fit


def _deviance_p(n, succ, trials, n50, k) -> float:
    """p-value of the binomial deviance of the logistic (n50, k) against the saturated model, χ²(L − 2)."""
    q = np.clip(logistic(n, n50, k), 1e-300, 1 - 1e-16)
    with np.errstate(divide="ignore", invalid="ignore"):
        obs = succ / trials
        sat = np.where(succ > 0, succ * np.log(obs / q), 0.0) + np.where(
            trials - succ > 0, (trials - succ) * np.log((1 - obs) / (1 - q)), 0.0
        )
    return float(stats.chi2.sf(2.0 * float(np.sum(sat)), n.size - 2))


def _fit_full(n, p, trials, level, n_min) -> SigmoidFit:
    nan2 = (float("nan"), float("nan"))
    distinct = np.unique(n)
    spacing = float(np.min(np.diff(distinct)))
    k_bounds = (1e-3 / spacing, 50.0 / spacing)
    span = float(n.max() - n.min())
    n50_bounds = (max(n_min, float(n.min()) - span), float(n.max()) + span)
    n50, k = fit_once(n, p, trials, k_bounds, n50_bounds)
    fitted = logistic(n, n50, k)
    ss_tot = float(np.sum((p - p.mean()) ** 2))
    r_squared = 1.0 - float(np.sum((p - fitted) ** 2)) / ss_tot if ss_tot > 0 else float("nan")
    ci, ci_open, message = nan2, (False, False), ""
    if trials is not None:
        succ = p * trials
        ci, ci_open = _profile_interval(
            n, succ, trials, n50, _nll(n, succ, trials, n50, k), k_bounds, n50_bounds, level
        )
        if any(ci_open):
            message = "the interval reaches the edge of the searched range: the data do not close it on that side"
    else:
        message = "no interval: the number of targets per length is unknown"
    method = "binomial-mle" if trials is not None else "least-squares"
    return SigmoidFit(n50, k, r_squared, ci, level, True, message, None, method, n, p, ci_open, k_max=k_bounds[1])
