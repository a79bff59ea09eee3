"""The volume of a length-n sequence as a product of n cell volumes: its distribution by FFT.

Section 5.3 of the paper refines Cor 4.6 with non-uniform argmax cells: a token t owns the fraction
p_t = |E_t|/|E| of the support, and a length-n sequence is modelled as owning the product of n
independent draws from D = {p_t}. Its log-volume S_n = Σ_{i≤n} ln p_{t_i} is a sum of n i.i.d.
draws of ln p, so its law is the n-fold convolution of the law of ln p. The refined threshold is the
smallest n whose *median* S_n falls below −ln P(E, ε) (more than half the sequences inaccessible),
and the refined slope is that threshold per prompt vector.

Method (not Monte Carlo, not dense outer sums as in the replication code; see the book's appendix on conventions):

1. Shift: x = ln p − min ln p ≥ 0 so every draw lies in [0, R], R = max − min; S_n = n·min + Σ x_i,
   and the shifted sum lies in [0, n·R].
2. Grid: spacing h = R/K with K bins over one draw; each atom's weight is split linearly between
   its two neighbouring grid points, which keeps each draw's mean exact (so E[S_n] is exact for every
   n) and adds at most h²/4 to its variance.
3. FFT: with the grid of length L ≥ n_max·K + 1 there is no wrap-around (aliasing) for any n ≤ n_max;
   the law of the shifted S_n is irfft(φ^n), φ = rfft(pmf), φ^n computed by repeated multiplication.
   Round-off: |φ| ≤ 1, so the absolute error of each probability is ~ n·L·1e-16, far below the 0.5
   the median needs; negative round-off is clipped to 0.

Error of a quantile: at most about one grid step h = R/K plus the round-off above. For n_max = 1000
on L = 2^16 points, K = 65 (h = R/65). For D = Dirac(1/|V|) (R = 0) everything is exact: S_n = −n·ln|V|
and the threshold is exactly Cor 4.6's.

Example:
    >>> import math
    >>> threshold_length([-math.log(50304)], 768 * math.log(4097.0))   # Pythia-160M, 2r/ε = 4096
    591
"""

from __future__ import annotations

import math

import numpy as np
import scipy.fft

from accessibility_lib.ground.checks import check_array, check_int, check_real

__all__ = [
    "LogSumGrid",
    "log_sum_grid",
    "quantiles",
    "median_log_volume",
    "threshold_length",
    "crossing_length",
    "refined_slope",
]


def _check_dist(log_p: object, weights: object) -> tuple[np.ndarray, np.ndarray]:
    lp = check_array("log_p", log_p, ndim=1)
    if np.any(lp > 0):
        raise ValueError(f"log_p must hold logs of volume fractions (≤ 0), largest is {lp.max()}")
    if weights is None:
        w = np.full(lp.shape, 1.0 / lp.size)
    else:
        w = check_array("weights", weights, ndim=1)
        if w.shape != lp.shape:
            raise ValueError(f"weights must have the shape of log_p {lp.shape}, got {w.shape}")
        if np.any(w < 0) or w.sum() <= 0:
            raise ValueError("weights must be ≥ 0 with a positive sum")
        w = w / w.sum()
    return lp, w


class LogSumGrid:
    """The laws of S_n = Σ_{i≤n} ln p_i for n = 1..n_max on one FFT grid.

    Build with :func:`log_sum_grid`. ``pmf(n)`` is the law of S_n on ``support(n)``.

    Attributes:
        lo: min ln p (nats). step: grid spacing h (nats; 0 for a Dirac). bins: K grid steps per draw.
        size: FFT length L. n_max: largest n the grid holds without aliasing.
    """

    def __init__(self, lp: np.ndarray, w: np.ndarray, n_max: int, grid_size: int) -> None:
        self.lo = float(lp.min())
        span = float(lp.max()) - self.lo
        self.n_max = n_max
        self.mean = float(np.dot(w, lp))
        if span == 0.0:  # Dirac: exact, no grid
            self.step, self.bins, self.size, self._phi = 0.0, 0, 1, None
            return
        self.bins = (grid_size - 1) // n_max
        if self.bins < 1:
            raise ValueError(f"grid_size must be > n_max ({n_max}) so that one draw spans ≥ 1 bin, got {grid_size}")
        self.step = span / self.bins
        self.size = grid_size if grid_size >= n_max * self.bins + 1 else n_max * self.bins + 1  # no wrap-around
        pos = (lp - self.lo) / self.step  # (A,) in bins
        k = np.minimum(np.floor(pos).astype(np.int64), self.bins - 1)
        frac = pos - k
        base = np.zeros(self.size)
        np.add.at(base, k, w * (1.0 - frac))
        np.add.at(base, k + 1, w * frac)
        self._phi = scipy.fft.rfft(base)  # (L//2+1,)

    def support(self, n: int) -> np.ndarray:
        """Grid points (nats) of S_n: n·min + k·h, k = 0..L−1 (only the first n·K+1 carry mass)."""
        if self._phi is None:
            return np.array([n * self.lo])
        return n * self.lo + self.step * np.arange(self.size)

    def _powers(self, ns: np.ndarray) -> np.ndarray:
        """φ^n for the sorted integers ``ns``: ``(len(ns), L//2+1)`` complex, by repeated multiplication."""
        powers = np.empty((len(ns), self._phi.size), dtype=complex)
        cur, cur_n = np.ones_like(self._phi), 0
        for i, n in enumerate(ns):
            gap = int(n) - cur_n
            if gap == 1:
                np.multiply(cur, self._phi, out=powers[i])
            else:
                np.multiply(cur, self._phi**gap if gap > 1 else 1.0, out=powers[i])  # integer power
            cur, cur_n = powers[i], int(n)
        return powers

    def pmfs(self, ns: object) -> np.ndarray:
        """Laws of S_n for the increasing integers ``ns`` as rows ``(len(ns), L)`` on :meth:`support` (n)."""
        ns = np.asarray(ns, dtype=np.int64)
        if self._phi is None:
            return np.ones((len(ns), 1))
        out = scipy.fft.irfft(self._powers(ns), n=self.size, axis=1, workers=-1)
        return np.clip(out, 0.0, None, out=out)

    def quantiles(self, qs: object, ns: object | None = None, chunk: int = 64) -> np.ndarray:
        """Quantiles of S_n: array ``(len(ns), len(qs))`` in nats (ns default 1..n_max).

        Each grid point's mass is spread uniformly over its cell [x_k − h/2, x_k + h/2] (the CDF is
        linear in between), which removes the half-step bias of reading quantiles off grid points. A
        Dirac (no grid) is returned exactly.
        """
        q = check_array("qs", qs, ndim=1)
        if np.any(q <= 0) or np.any(q >= 1):
            raise ValueError("qs must lie in (0, 1)")
        ns = np.arange(1, self.n_max + 1) if ns is None else np.asarray(ns, dtype=np.int64)
        if ns.ndim != 1 or ns.size == 0 or ns.min() < 1 or ns.max() > self.n_max or np.any(np.diff(ns) <= 0):
            raise ValueError(f"ns must be increasing integers in [1, {self.n_max}]")
        if self._phi is None:
            return np.repeat((ns * self.lo)[:, None], q.size, axis=1).astype(float)
        out = np.empty((ns.size, q.size))
        for s in range(0, ns.size, chunk):
            part = ns[s : s + chunk]
            width = min(self.size, int(part[-1]) * self.bins + 2)  # mass lies in the first n·K+1 points
            block = scipy.fft.irfft(self._powers(part), n=self.size, axis=1, workers=-1)[:, :width]
            cdf = np.cumsum(block, axis=1)  # (chunk, width); round-off may make it non-monotone by ~1e-16
            for i, n in enumerate(part):
                c = cdf[i]
                target = q * c[-1]
                k = np.minimum(np.searchsorted(c, target), c.size - 1)  # first index with cdf ≥ q
                prev = np.where(k > 0, c[np.maximum(k - 1, 0)], 0.0)
                denom = c[k] - prev
                t = np.where(denom > 0, (target - prev) / np.where(denom > 0, denom, 1.0), 1.0)
                out[s + i] = n * self.lo + self.step * (k - 0.5 + t)
        return out


def log_sum_grid(log_p: object, n_max: int, weights: object = None, grid_size: int = 2**16) -> LogSumGrid:
    """Laws of S_n for n ≤ ``n_max`` (see the module docstring for the method and its error).

    Args:
        log_p: ``(A,)`` atoms ln p ≤ 0 (nats), e.g. ln of each token's cell-volume fraction.
        n_max: largest sequence length n (tokens), ≥ 1.
        weights: ``(A,)`` probability of each atom (≥ 0, normalised here); uniform when None.
        grid_size: FFT length to aim for (≥ n_max + 1); K = (grid_size − 1)//n_max bins per draw.

    Raises:
        ValueError: on empty/non-finite log_p, positive log_p, bad weights, n_max < 1, small grid.
    """
    lp, w = _check_dist(log_p, weights)
    n_max = check_int("n_max", n_max, minimum=1)
    grid_size = check_int("grid_size", grid_size, minimum=2, maximum=2**26)
    return LogSumGrid(lp, w, n_max, grid_size)


def quantiles(
    log_p: object, n_max: int, qs: object = (0.1, 0.5, 0.9), weights: object = None, grid_size: int = 2**16
) -> np.ndarray:
    """Quantiles of the log-volume S_n of a length-n sequence for every n = 1..n_max.

    Returns:
        ``(n_max, len(qs))`` in nats; row n−1 holds S_n's quantiles.

    Raises:
        ValueError: as :func:`log_sum_grid`, and on qs outside (0, 1).
    """
    return log_sum_grid(log_p, n_max, weights, grid_size).quantiles(qs)


def median_log_volume(log_p: object, n: int, weights: object = None, grid_size: int = 2**16) -> float:
    """Median of S_n = Σ_{i≤n} ln p_i, the log-volume of a length-n sequence (nats, Section 5.3).

    Raises:
        ValueError: as :func:`log_sum_grid`.
    """
    n = check_int("n", n, minimum=1)
    g = log_sum_grid(log_p, n, weights, grid_size)
    return float(g.quantiles([0.5], [n])[0, 0])


def _upper_length(lp: np.ndarray, w: np.ndarray, log_packing: float) -> int:
    mean = float(np.dot(w, lp))
    if mean >= 0.0:
        raise ValueError("every atom has ln p = 0 (p = 1): no sequence length is ever inaccessible")
    return max(2, int(math.ceil(2.0 * log_packing / -mean)) + 16)


def _median_at(lp, w, n: int, grid_size: int) -> float:
    g = LogSumGrid(lp, w, n, grid_size)
    return float(g.quantiles([0.5], [n])[0, 0])


def threshold_length(log_p: object, log_packing: float, weights: object = None, grid_size: int = 2**16) -> int:
    """Smallest n whose median log-volume S_n falls below −ln P (Section 5.3), in tokens.

    Past it more than half the length-n sequences own less than one ε-cell: inaccessible. For a Dirac
    D = δ(1/|V|) this is exactly Cor 4.6: the smallest integer n > ln P / ln|V|. The median is
    non-increasing in n (every draw is ≤ 0), so n is found by bisection, each step one FFT grid sized
    for that n (error per median ≈ one grid step, see the module docstring).

    Args:
        log_p: ``(A,)`` atoms ln p ≤ 0 (nats). log_packing: ln P(E, ε) ≥ 0 (nats), e.g. for m prompt
            vectors. weights: ``(A,)`` atom probabilities (uniform when None). grid_size: FFT length.

    Raises:
        ValueError: on bad log_p/weights, log_packing < 0, or all atoms equal to 0.
    """
    lp, w = _check_dist(log_p, weights)
    log_packing = check_real("log_packing", log_packing, minimum=0.0)
    grid_size = check_int("grid_size", grid_size, minimum=4, maximum=2**26)
    if lp.max() == lp.min():  # Dirac: exact integer arithmetic on the same floats as Cor 4.6
        return int(math.floor(log_packing / -float(lp[0]))) + 1 if lp[0] < 0 else _upper_length(lp, w, log_packing)
    hi = _upper_length(lp, w, log_packing)
    while _median_at(lp, w, hi, grid_size) >= -log_packing:
        hi *= 2
        if hi > 10**8:
            raise ValueError("the median log-volume does not fall below −ln P for n ≤ 1e8")
    lo = 0  # median(S_0) = 0 ≥ −ln P
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _median_at(lp, w, mid, grid_size) < -log_packing:
            hi = mid
        else:
            lo = mid
    return hi


def crossing_length(log_p: object, log_packing: float, weights: object = None, grid_size: int = 2**16) -> float:
    """Fractional length n* where the median S_n (linearly interpolated in n) crosses −ln P, in tokens.

    Equal to ln P/ln|V| for a Dirac; used for slopes so that m = 1 does not round to an integer.

    Raises:
        ValueError: as :func:`threshold_length`.
    """
    lp, w = _check_dist(log_p, weights)
    n = threshold_length(lp, log_packing, w, grid_size)
    if lp.max() == lp.min():
        return log_packing / -float(lp[0])
    m_hi = _median_at(lp, w, n, grid_size)
    m_lo = 0.0 if n == 1 else _median_at(lp, w, n - 1, grid_size)
    t = (m_lo + log_packing) / (m_lo - m_hi) if m_lo != m_hi else 1.0
    return (n - 1) + min(1.0, max(0.0, t))


def refined_slope(
    log_p: object, log_packing_per_vector: float, weights: object = None, m: int = 1, grid_size: int = 2**16
) -> float:
    """Refined slope C = n*(m)/m (tokens per prompt vector) with ln P = m·``log_packing_per_vector``.

    With D = Dirac(1/|V|) it equals Cor 4.6's C = ln P₁/ln|V|.

    Raises:
        ValueError: as :func:`threshold_length`, and on m < 1.
    """
    m = check_int("m", m, minimum=1)
    lpp = check_real("log_packing_per_vector", log_packing_per_vector, minimum=0.0)
    return crossing_length(log_p, m * lpp, weights, grid_size) / m
