"""The slope of n50 against m: C_exp, the measured tokens per prompt vector (paper Section 5, Fig 4).

Cor 4.6 predicts n50(m) ≈ C·m; :func:`fit_slope` fits the line through the points (m, n50(m)) with an
interval that also carries the n50 intervals, and :attr:`SlopeFit.reliable` says whether a ratio may be
taken of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from accessibility_lib.ground.checks import check_array, check_real


@dataclass
class SlopeFit:
    """Result of :func:`fit_slope`: n50 ≈ slope·m + intercept.

    Attributes:
        slope: C_exp, tokens per prompt vector.
        intercept: tokens (0 when fitted through the origin).
        r_squared: coefficient of determination.
        ci: (low, high) interval for the slope at ``level``: the Student-t interval of ordinary
            least squares, widened to contain the interval propagated from the n50 intervals when
            those are given (NaNs with too few points).
        level: confidence level.
        n_points: number of (m, n50) points used.
    """

    slope: float
    intercept: float
    r_squared: float
    ci: tuple[float, float]
    level: float
    n_points: int

    def predict(self, m: object) -> np.ndarray:
        """n50 predicted at prompt lengths ``m``."""
        return self.slope * np.asarray(m, dtype=np.float64) + self.intercept

    @property
    def reliable(self) -> bool:
        """At least three finite n50s and an interval that excludes 0: a slope a ratio may be taken of."""
        return self.n_points >= 3 and bool(np.all(np.isfinite(self.ci))) and self.ci[0] > 0

    def caveat(self) -> str:
        """Why the slope is not :attr:`reliable` ("" when it is)."""
        if self.n_points < 3:
            return f"rests on {self.n_points} finite n50s (fewer than three): no interval worth the name"
        if not np.all(np.isfinite(self.ci)):
            return "no interval"
        if self.ci[0] <= 0:
            return f"its {100 * self.level:.0f} % interval [{self.ci[0]:.2f}, {self.ci[1]:.2f}] includes 0"
        return ""

    def describe(self, digits: int = 2) -> str:
        """The slope with its interval, and the caveat when it is not reliable."""
        ci = f" [{self.ci[0]:.{digits}f}, {self.ci[1]:.{digits}f}]" if np.all(np.isfinite(self.ci)) else ""
        text = f"{self.slope:.{digits}f}{ci}"
        if self.reliable:
            return text
        shown = ci and self.n_points >= 3 and self.ci[0] <= 0  # the interval is printed just before: do not repeat it
        return f"{text} (unreliable: " + (
            f"its {100 * self.level:.0f} % interval includes 0)" if shown else f"{self.caveat()})"
        )


def fit_slope(
    ms: object, n50s: object, *, n50_ci: object = None, through_origin: bool = False, level: float = 0.95
) -> SlopeFit:
    """Least-squares line n50 = C_exp·m + b through the points (m, n50(m)).

    Args:
        ms: prompt lengths m, shape (K,).
        n50s: fitted 50 % lengths (tokens), shape (K,); must be finite (drop degenerate fits first).
        n50_ci: optional (K, 2) intervals of the n50s at ``level``. With few points the residuals
            alone can make a line look certain; the slope's interval is then widened to contain the
            interval of a weighted fit whose weights come from these intervals (σ = half-width / z).
        through_origin: fit n50 = C_exp·m (b = 0), as Cor 4.6's n* = C·m.
        level: confidence level of the slope interval.

    Returns:
        A :class:`SlopeFit`; its interval is the Student-t interval of ordinary least squares
        (NaN when there are no residual degrees of freedom, i.e. two points with an intercept),
        widened by the propagated n50 intervals when given. ``reliable`` says whether it rests on
        three or more points and excludes 0.

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
    r_squared = 1.0 - float(np.sum(resid**2)) / ss_tot if ss_tot > 0 else float("nan")
    if dof > 0 and math.isfinite(se):
        t = float(stats.t.ppf(0.5 + level / 2.0, dof))
        ci = (slope - t * se, slope + t * se)
    else:
        ci = (float("nan"), float("nan"))
    if n50_ci is not None and dof > 0:
        bands = check_array("n50_ci", n50_ci, ndim=2)
        if bands.shape != (m.size, 2):
            raise ValueError(f"n50_ci must have shape ({m.size}, 2), got {bands.shape}")
        z = float(stats.norm.ppf(0.5 + level / 2.0))
        sigma = np.maximum((bands[:, 1] - bands[:, 0]) / (2 * z), 1e-9)  # (K,)
        w = 1.0 / sigma**2
        if through_origin:
            se_w = math.sqrt(1.0 / float(np.sum(w * m * m)))
        else:
            mw = float(np.sum(w * m) / np.sum(w))
            se_w = math.sqrt(1.0 / float(np.sum(w * (m - mw) ** 2)))
        prop = (slope - z * se_w, slope + z * se_w)
        ci = (min(ci[0], prop[0]), max(ci[1], prop[1])) if np.all(np.isfinite(ci)) else prop
    return SlopeFit(slope, intercept, r_squared, ci, level, int(m.size))
