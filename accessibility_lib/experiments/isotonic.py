"""The isotonic (monotone, shape-free) success curve and its 50 % crossing, beside the logistic fit.

A cramming success curve should fall with the target length: a prompt that produces n tokens produces
every shorter prefix. Measured rates need not (binomial noise, adaptively chosen lengths, a budget that
binds at some lengths more than at others), and a logistic fitted to a non-monotone curve can put its
50 % point where the data do not. The isotonic regression — the non-increasing step function closest to
the rates in weighted least squares — assumes nothing but monotonicity; its crossing of ½ (linear between
the fitted values at the tested lengths) is the shape-free n50 to report beside the logistic one.

:func:`pava_decreasing` is the pool-adjacent-violators algorithm (Ayer et al. 1955; Barlow et al. 1972,
*Statistical Inference under Order Restrictions*, ch. 1): merge adjacent blocks whose means are in the
wrong order until none are, each block fitted by its weighted mean. scipy has no isotonic regression.

Example:
    >>> pava_decreasing([0.7, 0.9, 0.6, 0.1, 0.0], [10, 10, 10, 10, 10]).round(2).tolist()
    [0.8, 0.8, 0.6, 0.1, 0.0]
    >>> round(isotonic_crossing([6, 12, 18, 21, 24], [0.7, 0.9, 0.6, 0.1, 0.0], 10).n50, 2)
    18.6
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accessibility_lib.ground.checks import check_array

__all__ = ["pava_decreasing", "IsotonicCrossing", "isotonic_crossing", "separation"]


def pava_decreasing(y: object, w: object = None) -> np.ndarray:
    """The non-increasing sequence closest to ``y`` in weighted least squares (pool adjacent violators).

    Args:
        y: (L,) values in the order of increasing length.
        w: (L,) weights > 0 (e.g. targets behind each rate); None for equal weights.

    Returns:
        (L,) fitted values, non-increasing, each the weighted mean of its pooled block.

    Raises:
        ValueError: empty or non-finite ``y``; ``w`` of another shape or not > 0.
    """
    y = check_array("y", y, ndim=1)
    if y.size == 0:
        raise ValueError("y must hold at least one value")
    w = np.ones_like(y) if w is None else np.broadcast_to(check_array("w", w, positive=True), y.shape).astype(float)
    means, weights, sizes = [], [], []
    for yi, wi in zip(y, w):
        means.append(float(yi)), weights.append(float(wi)), sizes.append(1)
        while len(means) > 1 and means[-2] < means[-1]:  # an increase: a violator of "non-increasing"
            m2, w2, s2 = means.pop(), weights.pop(), sizes.pop()
            m1, w1, s1 = means.pop(), weights.pop(), sizes.pop()
            means.append((m1 * w1 + m2 * w2) / (w1 + w2)), weights.append(w1 + w2), sizes.append(s1 + s2)
    return np.repeat(means, sizes)


@dataclass(frozen=True)
class IsotonicCrossing:
    """The isotonic curve of a success-against-length data set and its ½ crossing.

    Attributes:
        lengths: (L,) distinct tested lengths (tokens), increasing.
        rates: (L,) pooled observed success fraction at each.
        weights: (L,) targets behind each (1 each without trial counts).
        fitted: (L,) isotonic (non-increasing) fit.
        n50: where the fit, linear between tested lengths, crosses ½ (the middle of a plateau at exactly ½);
            NaN when it never crosses (every fitted value on one side).
        monotone: whether the observed rates already never increase with length.
    """

    lengths: np.ndarray
    rates: np.ndarray
    weights: np.ndarray
    fitted: np.ndarray
    n50: float
    monotone: bool


def isotonic_crossing(lengths: object, success: object, n_trials: object = None) -> IsotonicCrossing:
    """Isotonic fit of success fractions against length and its 50 % crossing.

    Args:
        lengths: (L,) target lengths (tokens); repeated lengths are pooled.
        success: (L,) success fractions in [0, 1].
        n_trials: targets behind each fraction (int or (L,)); None weighs every point equally.

    Returns:
        An :class:`IsotonicCrossing`.

    Raises:
        ValueError: mismatched shapes, no data, fractions outside [0, 1], trials not > 0.
    """
    n = check_array("lengths", lengths, ndim=1)
    p = check_array("success", success, ndim=1)
    if n.shape != p.shape or n.size == 0:
        raise ValueError(f"lengths and success must be non-empty and of one shape, got {n.shape} and {p.shape}")
    if np.any((p < 0) | (p > 1)):
        raise ValueError("success must hold fractions in [0, 1]")
    t = (
        np.ones_like(p)
        if n_trials is None
        else np.broadcast_to(check_array("n_trials", n_trials, positive=True), n.shape)
    )
    grid = np.unique(n)
    wts = np.array([t[n == g].sum() for g in grid], dtype=float)
    rates = np.array([(p[n == g] * t[n == g]).sum() for g in grid]) / wts
    fit = pava_decreasing(rates, wts)
    n50 = float("nan")
    at = np.flatnonzero(fit == 0.5)
    if at.size:
        n50 = float(0.5 * (grid[at[0]] + grid[at[-1]]))
    else:
        above = np.flatnonzero(fit > 0.5)
        if above.size and above[-1] + 1 < grid.size:
            i = above[-1]
            a, b = fit[i], fit[i + 1]
            n50 = float(grid[i] + (a - 0.5) / (a - b) * (grid[i + 1] - grid[i]))
    return IsotonicCrossing(grid, rates, wts, fit, n50, bool(np.all(np.diff(rates) <= 0)))


def separation(lengths: object, success: object) -> tuple[float, float, float | None] | None:
    """Separated success data: rate 1 at every tested length up to a, 0 from b on, at most one length c between.

    On such data the logistic likelihood keeps rising with the steepness, so a fitted n50 and its interval
    are set by the fit's bound on k: with no length between (a step) the data place n50 only somewhere in
    (a, b); with one (c, rate strictly between 0 and 1) c alone places it.

    Args:
        lengths, success: (L,) tested lengths (tokens; repeats are pooled) and success fractions.

    Returns:
        (a, b, c) — c None for a step; with a c, a or b is None when no length lies on that side — or None
        when the data are not separated.
    """
    n = np.asarray(lengths, dtype=float)
    p = np.asarray(success, dtype=float)
    x = np.unique(n)
    rates = np.array([np.mean(p[n == v]) for v in x])
    mid = np.nonzero((rates > 0) & (rates < 1))[0]
    if mid.size > 1 or not ((rates == 1).any() and (rates == 0).any() or mid.size and x.size > 1):
        return None
    cut = int(mid[0]) if mid.size else int(np.nonzero(rates < 1)[0].min())
    if not (np.all(rates[:cut] == 1) and np.all(rates[cut + 1 :] == 0)):
        return None
    a = float(x[rates == 1].max()) if (rates == 1).any() else None
    b = float(x[rates == 0].min()) if (rates == 0).any() else None
    return a, b, float(x[mid[0]]) if mid.size else None
