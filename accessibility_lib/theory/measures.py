"""Prompts as probability measures and the Wasserstein distance W_q between them (POT).

The mean-field bound (Thm 4.9, Assumption 4.8 of Meyer et al. 2026, arXiv 2605.22223; the measure
view of attention is Sander et al. 2022) replaces a prompt X ∈ R^{d×m} by its empirical measure

    M(X) = (1/m) Σ_i δ_{X_{:,i}}

and assumes that the model cannot tell apart two prompts whose measures are closer than ε in

    W_q(μ, ν) = ( min_{π ∈ Π(μ, ν)} ∫ ‖x − y‖^q dπ(x, y) )^{1/q}.

Prompts of different lengths have comparable measures, a permutation of X has the same measure and
so does the duplicated prompt [X, X]. Here prompts are stored row-wise as (m, d) arrays (one row per
prompt vector, like ``inputs_embeds[0]``). The optimal transport is solved exactly with POT's network
simplex (``ot.emd2``); :func:`wasserstein_1d_closed_form` is the sorted-quantile formula for points on
a line, used to check it.
"""

from __future__ import annotations

import numpy as np
import ot

from accessibility_lib.ground.checks import check_array, check_real

__all__ = ["empirical_measure", "wasserstein", "wasserstein_1d", "wasserstein_1d_closed_form"]


def _points(name: str, value: object) -> np.ndarray:
    if hasattr(value, "detach"):  # torch tensor
        value = value.detach().cpu().double().numpy()
    arr = check_array(name, value)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be an (m, d) array of m prompt vectors in R^d, got shape {arr.shape}")
    return arr


def empirical_measure(X: object, weights: object | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The empirical measure M(X) = Σ_i w_i δ_{X_i} of a prompt, as (support, weights).

    Args:
        X: (m, d) prompt vectors (rows), or (m,) points on a line; NumPy or torch.
        weights: (m,) non-negative weights summing to 1; default uniform 1/m.

    Returns:
        ``(points, w)``: points (m, d) float64 and w (m,) float64 summing to 1.

    Raises:
        ValueError: if X is empty, not 1-D/2-D, non-finite; if weights have the wrong length, a
            negative entry or do not sum to 1 (within 1e-9).
    """
    pts = _points("X", X)
    m = pts.shape[0]
    if weights is None:
        return pts, np.full(m, 1.0 / m)
    w = check_array("weights", weights, ndim=1)
    if w.shape[0] != m:
        raise ValueError(f"weights must have one entry per prompt vector ({m}), got {w.shape[0]}")
    if np.any(w < 0) or abs(w.sum() - 1.0) > 1e-9:
        raise ValueError(f"weights must be >= 0 and sum to 1, got min {w.min()} and sum {w.sum()}")
    return pts, w


def wasserstein(X: object, Y: object, q: float = 1.0, a: object | None = None, b: object | None = None) -> float:
    """W_q(M(X), M(Y)) by exact optimal transport (POT ``ot.emd2``), Euclidean ground distance.

    Args:
        X: (m, d) first prompt (rows are vectors); Y: (k, d) second prompt, same d, any k.
        q: order, real ≥ 1.
        a, b: optional weights of the two measures (default uniform).

    Returns:
        W_q in the units of the vectors (≥ 0).

    Raises:
        ValueError: on q < 1, mismatched widths, bad arrays or weights (see :func:`empirical_measure`).
    """
    q = check_real("q", q, minimum=1.0)
    x, wa = empirical_measure(X, a)
    y, wb = empirical_measure(Y, b)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"X and Y must have the same width d, got {x.shape[1]} and {y.shape[1]}")
    cost = ot.dist(x, y, metric="euclidean") ** q  # (m, k)
    value = float(ot.emd2(wa, wb, cost, numItermax=1_000_000))
    return max(value, 0.0) ** (1.0 / q)


def wasserstein_1d(x: object, y: object, q: float = 1.0) -> float:
    """W_q between two uniform empirical measures on a line, by POT's ``ot.wasserstein_1d``.

    Raises:
        ValueError: on q < 1 or arrays that are not 1-D, empty or non-finite.
    """
    q = check_real("q", q, minimum=1.0)
    xs = check_array("x", x, ndim=1)
    ys = check_array("y", y, ndim=1)
    return float(ot.wasserstein_1d(xs, ys, p=q)) ** (1.0 / q)


def wasserstein_1d_closed_form(x: object, y: object, q: float = 1.0) -> float:
    """W_q on a line from the quantile functions: (∫_0^1 |F^{-1}(t) − G^{-1}(t)|^q dt)^{1/q}.

    For uniform measures on m and k points both quantile functions are step functions; the integral
    is a finite sum over the merged breakpoints {i/m} ∪ {j/k}. For m = k it is the sorted matching
    ((1/m) Σ |x_(i) − y_(i)|^q)^{1/q}.

    Raises:
        ValueError: as :func:`wasserstein_1d`.
    """
    q = check_real("q", q, minimum=1.0)
    xs = np.sort(check_array("x", x, ndim=1))
    ys = np.sort(check_array("y", y, ndim=1))
    m, k = len(xs), len(ys)
    breaks = np.unique(np.concatenate([np.arange(m + 1) / m, np.arange(k + 1) / k]))
    mid = 0.5 * (breaks[:-1] + breaks[1:])
    fx = xs[np.minimum((mid * m).astype(int), m - 1)]
    gy = ys[np.minimum((mid * k).astype(int), k - 1)]
    return float(np.sum(np.diff(breaks) * np.abs(fx - gy) ** q)) ** (1.0 / q)
