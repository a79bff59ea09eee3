"""n50 intervals from passage horizons: a likelihood that counts each natural-text passage once.

Natural-text targets of one passage at several lengths are prefixes of one another
(:mod:`accessibility_lib.experiments.targets`), and a prompt that forces a target forces each of its
prefixes (decoding is causal; :mod:`accessibility_lib.experiments.prefix_closure`). So a passage has a
**horizon** h, the longest of its prefixes a prompt of m vectors can force: every length n ≤ h can be
crammed and none beyond. The model here:

- horizons are logistic across passages with a scale s (tokens): P(h ≥ n) = 1 / (1 + exp((n − μ)/s));
- the optimiser **misses** a length within the horizon with probability q ∈ [0, 0.45], independently per
  outcome; beyond the horizon it never succeeds (a verified success is a fact, and it implies every
  shorter prefix of the passage can be crammed, as the prefix closure counts it).

The success probability at n is then (1 − q)·P(h ≥ n), and n50 is where it crosses ½ — the paper's n50,
the one the pooled binomial fit of :func:`~accessibility_lib.experiments.fitting.fit_sigmoid` estimates —,
at μ + s·ln(1 − 2q); the likelihood is parametrised by n50 directly. Each passage's outcomes say only
in which gap between the lengths it was tried its horizon lies (interval-censored) and which of its
outcomes within the horizon were misses, so a passage counts once however many lengths it was tried at.
The pooled binomial likelihood instead treats every outcome as independent, which outcomes of one passage
are not, and its interval is too narrow. A search that picks its next length from the outcomes seen so
far leaves the likelihood unchanged (it does not depend on the design), so no correction for the
adaptive design is needed; that the χ² cut-off then gives the stated coverage is an approximation,
which ``benchmarks/bench_passage_intervals.py`` checks on simulated passages (chapter 3 prints the
measurement).

- :func:`horizon_profile_n50`: the profile-likelihood interval of n50 (s and q profiled out on a grid).
- :func:`with_horizon_interval`: a :class:`~accessibility_lib.experiments.fitting.SigmoidFit` whose interval
  is replaced by it (what the book prints for natural text; its point stays the pooled fit's).

Example:
    >>> rows = [{"n": n, "target": t, "success": n <= 10 + t} for t in range(12) for n in (8, 12, 16, 20, 24)]
    >>> iv = horizon_profile_n50(rows)
    >>> iv.lo < 16 < iv.hi and not any(iv.open)
    True
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats
from scipy.special import expit, logsumexp

from accessibility_lib.ground.checks import check_real

__all__ = ["HorizonInterval", "horizon_profile_n50", "outcomes_by_passage", "with_horizon_interval"]

_MISS_GRID = np.concatenate([[0.0], np.geomspace(2e-3, 0.45, 12)])  # q
_N_SCALES = 36  # log-spaced horizon scales s (tokens), after the step limit s → 0
_N_COARSE = 61  # n50 values of the first pass of the profile


@dataclass(frozen=True)
class HorizonInterval:
    """Profile-likelihood interval of n50 under the passage-horizon model (:func:`horizon_profile_n50`).

    Attributes:
        n50: the maximum-likelihood n50 (tokens): where (1 − q)·P(h ≥ n) crosses ½.
        lo, hi: interval ends (tokens); at an open end, the edge of the searched range.
        open: (low, high) — whether the profile stays within the cut-off up to that edge of the searched
            range (the lengths tried widened by their span on each side, never below ``n_min``).
        level: confidence level; n_passages: passages (distinct targets) in the data.
        scale: the horizon scale s (tokens) and miss: the miss probability q of the best grid point at n50
            (grid values, not exact maximum-likelihood estimates); scale 0 is the step limit (every horizon
            in one gap).
        at_grid_edge: whether that best point has q at the grid's largest value (0.45) or s at its largest:
            outcomes the model explains only as noise, so read the interval with care.
    """

    n50: float
    lo: float
    hi: float
    open: tuple[bool, bool]
    level: float
    n_passages: int
    scale: float
    miss: float
    at_grid_edge: bool


def outcomes_by_passage(rows: Iterable[dict]) -> dict[int, list[tuple[int, bool]]]:
    """Per-target outcomes grouped by passage: ``{target: [(n, success), ...]}`` (n in tokens), in row order.

    Raises:
        ValueError: a row without ``"n"``, ``"target"`` or ``"success"`` (the message names the row and the keys).
    """
    by: dict[int, list[tuple[int, bool]]] = {}
    for i, r in enumerate(rows):
        missing = [k for k in ("n", "target", "success") if k not in r]
        if missing:
            raise ValueError(f"outcome {i} has no {', '.join(missing)}: each needs 'n', 'target' and 'success'")
        by.setdefault(int(r["target"]), []).append((int(r["n"]), bool(r["success"])))
    return by


def _censoring(by: dict[int, list[tuple[int, bool]]]) -> tuple[np.ndarray, ...]:
    """Per passage (P) and horizon gap (K): lower and upper gap ends, misses, successes, whether possible.

    Gap j of a passage tried at lengths n_1 < … < n_k is [n_j, n_{j+1}) (n_0 = −∞, n_{k+1} = +∞): a horizon
    there can cram n_1 … n_j and none after. It is possible only if no success lies beyond it; its misses
    are the failures at n_1 … n_j. Returns (P, K) ``lo``, ``hi`` (+∞ for padding gaps of passages with fewer
    lengths), (P, K) ``misses``, (P, 1) ``successes`` and (P, K) ``possible``.
    An outcome repeated at one length counts as a separate draw (a stored outcome listed twice would count twice).
    """
    n_gaps = max(len({n for n, _ in v}) for v in by.values()) + 1
    lo = np.full((len(by), n_gaps), np.inf)
    hi = np.full((len(by), n_gaps), np.inf)
    misses = np.zeros((len(by), n_gaps))
    possible = np.zeros((len(by), n_gaps), dtype=bool)
    successes = np.zeros((len(by), 1))
    for p, v in enumerate(by.values()):
        ns = sorted({n for n, _ in v})
        cuts = [-math.inf, *ns, math.inf]
        longest = max((n for n, ok in v if ok), default=-math.inf)
        successes[p] = sum(ok for _, ok in v)
        for j in range(len(ns) + 1):
            lo[p, j], hi[p, j] = cuts[j], cuts[j + 1]
            misses[p, j] = sum(n <= cuts[j] and not ok for n, ok in v)
            possible[p, j] = cuts[j] >= longest
    return lo, hi, misses, successes, possible


class _Profile:
    """NLL(n50) maximised over a grid of horizon scales s and miss probabilities q."""

    def __init__(self, by: dict, scales: np.ndarray):
        lo, hi, misses, successes, possible = _censoring(by)
        self.lo, self.hi = lo[None, None], hi[None, None]  # (1, 1, P, K)
        with np.errstate(divide="ignore", invalid="ignore"):
            lq = np.log(_MISS_GRID)[:, None, None]
            l1q = np.log1p(-_MISS_GRID)[:, None, None]
            part = np.where(misses[None] > 0, misses[None] * lq, 0.0) + successes[None] * l1q  # (Q, P, K)
        self.miss_part = np.where(possible[None], part, -np.inf)
        self.scales = scales[:, None, None, None]  # (S, 1, 1, 1)
        # horizon centre for a given n50: μ = n50 − s·ln(1 − 2q), (S, Q, 1, 1)
        self.shift = -(scales[:, None] * np.log1p(-2.0 * _MISS_GRID)[None, :])[..., None, None]
        self.n_passages = lo.shape[0]

    def loglik(self, n50: float) -> np.ndarray:
        """(S, Q) log-likelihoods at this n50."""
        mu = n50 + self.shift
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            a, b = (self.lo - mu) / self.scales, (self.hi - mu) / self.scales  # (S, Q, P, K), a ≤ b
            prob = np.where(a > 0, expit(-a) - expit(-b), expit(b) - expit(a))  # no cancellation in either tail
            log_prob = np.log(np.clip(np.nan_to_num(prob, nan=0.0), 0.0, None))
        return logsumexp(log_prob + self.miss_part[None], axis=-1).sum(-1)

    def __call__(self, n50: float) -> float:
        return -float(np.max(self.loglik(n50)))


def horizon_profile_n50(rows: Iterable[dict], *, level: float = 0.95, n_min: float = 0.0) -> HorizonInterval:
    """n50 and its profile-likelihood interval when targets share passages (the passage-horizon model).

    Args:
        rows: per-target outcomes, dicts with ``"n"`` (target length, tokens), ``"target"`` (passage index;
            the same index at two lengths is one passage) and ``"success"``.
        level: confidence level in (0, 1).
        n_min: the shortest possible target length (tokens), as :func:`fit_sigmoid`'s ``n_min``; ≥ 0 and
            below the longest length tried.

    Returns:
        A :class:`HorizonInterval`. The interval is {n50 : 2·(NLL(n50) − NLL_min) ≤ χ²₁(level)} with the
        horizon scale and the miss probability maximised out on a grid (the step limit s → 0 and 36 scales
        from a tenth of the smallest spacing of the lengths to twice the width of the searched range; 13
        miss probabilities in [0, 0.45]), its ends located by Brent's method next to the points of a
        61-point first pass.

    Raises:
        ValueError: no outcome, a row without ``n``/``target``/``success``, fewer than two passages, a bad
            ``level`` or ``n_min``.

    Source: the logistic n50 of paper Section 5 (Fig 4); the horizon model is ours, from the prefix property of
    natural targets (an interval-censored likelihood, e.g. Sun 2006, *The Statistical Analysis of
    Interval-censored Failure Time Data*, Chapter 2).
    """
    level = check_real("level", level, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    by = outcomes_by_passage(rows)
    if not by:
        raise ValueError("the horizon likelihood needs at least one outcome with 'n', 'target' and 'success'")
    if len(by) < 2:
        raise ValueError(f"the horizon likelihood needs outcomes of at least two passages, got {len(by)}")
    lengths = np.array(sorted({n for v in by.values() for n, _ in v}), dtype=float)
    n_min = check_real("n_min", n_min, minimum=0.0, maximum=float(lengths.max()), max_inclusive=False)
    span = max(float(lengths.max() - lengths.min()), 1.0)
    edge = (max(n_min, float(lengths.min()) - span), float(lengths.max()) + span)
    spacing = float(np.min(np.diff(lengths))) if lengths.size > 1 else 1.0
    scales = np.concatenate([[1e-6 * spacing], np.geomspace(spacing / 10.0, 2.0 * (edge[1] - edge[0]), _N_SCALES)])
    prof = _Profile(by, scales)
    grid = np.linspace(edge[0], edge[1], _N_COARSE)
    nll = np.array([prof(c) for c in grid])
    i = int(np.argmin(nll))
    best = optimize.minimize_scalar(
        prof, bounds=(grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]), method="bounded", options={"xatol": 1e-3}
    )
    n50, nll_min = (float(best.x), float(best.fun)) if best.fun < nll[i] else (float(grid[i]), float(nll[i]))
    cut = float(stats.chi2.ppf(level, 1)) / 2.0

    def excess(c: float) -> float:
        return prof(c) - nll_min - cut

    inside = np.where(nll - nll_min <= cut)[0]
    below, above = grid[grid < n50], grid[grid > n50]
    # the outermost grid points inside the cut-off (none: a profile narrower than the grid step around n50)
    j_lo = int(inside.min()) if inside.size else None
    j_hi = int(inside.max()) if inside.size else None
    open_lo = j_lo == 0
    open_hi = j_hi == grid.size - 1
    if open_lo:
        lo = edge[0]
    else:
        a = grid[j_lo - 1] if j_lo is not None and grid[j_lo - 1] < n50 else (below[-1] if below.size else edge[0])
        b = min(grid[j_lo], n50) if j_lo is not None else n50
        lo = optimize.brentq(excess, a, b, xtol=1e-3) if excess(a) > 0 else a
    if open_hi:
        hi = edge[1]
    else:
        b = grid[j_hi + 1] if j_hi is not None and grid[j_hi + 1] > n50 else (above[0] if above.size else edge[1])
        a = max(grid[j_hi], n50) if j_hi is not None else n50
        hi = optimize.brentq(excess, a, b, xtol=1e-3) if excess(b) > 0 else b
    ll = prof.loglik(n50)
    s_i, q_i = np.unravel_index(int(np.argmax(ll)), ll.shape)
    scale = 0.0 if s_i == 0 else float(scales[s_i])
    edge_hit = bool(q_i == _MISS_GRID.size - 1 or s_i == scales.size - 1)
    return HorizonInterval(n50, float(lo), float(hi), (open_lo, open_hi), level, prof.n_passages, scale,
                           float(_MISS_GRID[q_i]), edge_hit)  # fmt: skip


_CACHE: dict[tuple, HorizonInterval] = {}


def with_horizon_interval(fit, rows: Iterable[dict], *, n_min: float = 0.0):
    """``fit`` with its n50 interval replaced by the passage-horizon profile interval (natural-text targets).

    Args:
        fit: the :class:`~accessibility_lib.experiments.fitting.SigmoidFit` of these outcomes (pooled binomial).
        rows: its per-target outcomes (``"n"``, ``"target"``, ``"success"``).
        n_min: as for :func:`horizon_profile_n50`.

    Returns:
        A copy of ``fit`` with ``ci``/``ci_open`` from :func:`horizon_profile_n50` at ``fit.level`` and ``method``
        ending in ", passage horizons"; the point n50 stays the pooled fit's (the paper's estimator). Should
        that point fall outside the horizon interval (the two models disagree), the interval is extended to
        it and ``method`` ends in "(extended to the pooled point)", which chapter 3 prints beside the number.
        ``fit`` itself when it has no crossing (``ok`` False) or the rows hold fewer than two passages.
        Results are cached by outcomes and settings (chapters summarise the same artifact repeatedly).

    Raises:
        ValueError: as :func:`horizon_profile_n50`: a row without ``n``/``target``/``success``, a bad ``n_min``.
    """
    if not fit.ok:
        return fit
    rows = list(rows)
    by = outcomes_by_passage(rows)
    if len(by) < 2:
        return fit
    key = (tuple(sorted((n, t, ok) for t, v in by.items() for n, ok in v)), n_min, fit.level)
    if key not in _CACHE:
        _CACHE[key] = horizon_profile_n50(rows, level=fit.level, n_min=n_min)
    iv = _CACHE[key]
    lo, hi, method = iv.lo, iv.hi, fit.method + ", passage horizons"
    if not lo <= fit.n50 <= hi:
        lo, hi = min(lo, fit.n50), max(hi, fit.n50)
        method += " (extended to the pooled point)"
    return dataclasses.replace(fit, ci=(lo, hi), ci_open=iv.open, method=method)
