"""n50 intervals that account for outcomes sharing passages (natural-text targets at several lengths).

The profile-likelihood interval of :func:`accessibility_lib.experiments.fitting.fit_sigmoid` treats every
(length, target) outcome as an independent Bernoulli draw. Natural-text targets are not: the targets of
one passage at different lengths are prefixes of one another (:mod:`accessibility_lib.experiments.targets`),
so a passage that is easy at one length tends to be easy at the next. The likelihood then counts the same
passages several times and its interval is too narrow (``benchmarks/bench_passage_intervals.py`` measures
its coverage on simulated passages; chapter 3 prints the measurement). What is independent is the passage.

- :func:`passage_bootstrap_n50`: the cluster bootstrap — resample passages with all their outcomes, refit
  n50 (the same bounded binomial MLE), take the percentile interval. Under an adaptive search a resample
  can lose the few passages a length was probed with, so its ends open easily.
- :func:`widen_for_passages` (what the book printed for natural targets before
  :mod:`~accessibility_lib.experiments.passage_horizons`; chapter 3 compares the two): the profile interval with its
  cut-off multiplied by the design effect DE = (bootstrap spread / profile spread)², floored at 1
  (:func:`passage_design_effect`, a robust spread, so a few resamples without a crossing do not dominate);
  an end is open only where that wider profile reaches the edge of the searched range.

Random-word and random-token targets are independent draws at every length: DE is then near 1 and their
profile interval is kept as it is.

Example:
    >>> rows = [{"n": n, "target": t, "success": n <= 10 + t} for t in range(12) for n in (8, 12, 16, 20, 24)]
    >>> iv = passage_bootstrap_n50(rows, n_boot=200, seed=0)
    >>> iv.lo < 16 < iv.hi and not any(iv.open)
    True
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from accessibility_lib.ground.checks import check_int, check_real

__all__ = ["PassageInterval", "passage_bootstrap_n50"]


@dataclass(frozen=True)
class PassageInterval:
    """Percentile interval of n50 over resampled passages (:func:`passage_bootstrap_n50`).

    Attributes:
        lo, hi: interval ends (tokens); at an open end, the edge of the searched range.
        open: (low, high) — whether that end is not closed by the data (see the module docstring).
        level: confidence level; n_boot: resamples; n_passages: passages resampled.
        unresolved: share of resamples with no decreasing crossing at all (neither side), counted on
            both tails.
    """

    lo: float
    hi: float
    open: tuple[bool, bool]
    level: float
    n_boot: int
    n_passages: int
    unresolved: float


def passage_bootstrap_n50(
    rows: Iterable[dict], *, n_boot: int = 400, level: float = 0.95, n_min: float = 0.0, seed: int = 0
) -> PassageInterval:
    """Cluster-bootstrap interval of n50, resampling passages (targets) with all their outcomes.

    Args:
        rows: per-target outcomes, dicts with ``"n"`` (tokens), ``"target"`` (passage index) and
            ``"success"``; every length a passage was tried at comes with it.
        n_boot: resamples (≥ 50).
        level: confidence level in (0, 1).
        n_min: the shortest possible target length (tokens), as :func:`fit_sigmoid`'s ``n_min``.
        seed: seed of the resampling (the interval is deterministic given it).

    Returns:
        A :class:`PassageInterval`.

    Raises:
        ValueError: no outcome, a row without ``n``/``target``/``success``, fewer than two passages, a bad
            ``n_boot`` or ``level``.

    Source: the logistic n50 of paper Section 5 (Fig 4); the cluster bootstrap is ours (resampling the
    independent unit, as for clustered data in Davison & Hinkley 1997, Section 3.8).
    """
    n_boot = check_int("n_boot", n_boot, minimum=50)
    level = check_real("level", level, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    draws, edge, n_passages = _draws(rows, n_boot=n_boot, n_min=n_min, seed=seed)
    unresolved = float(np.mean(np.isnan(draws)))
    tail = (1.0 - level) / 2.0
    vals = np.clip(draws[~np.isnan(draws)], *edge)  # ±inf (no crossing on that side) at the searched edge
    at_low = float(np.mean(vals <= edge[0] + 1e-9)) * (1 - unresolved) + unresolved
    at_high = float(np.mean(vals >= edge[1] - 1e-9)) * (1 - unresolved) + unresolved
    if vals.size == 0:
        return PassageInterval(edge[0], edge[1], (True, True), level, n_boot, n_passages, unresolved)
    lo, hi = (float(q) for q in np.quantile(vals, [tail, 1.0 - tail]))
    return PassageInterval(lo, hi, (at_low > tail, at_high > tail), level, n_boot, n_passages, unresolved)


def _draws(rows: Iterable[dict], *, n_boot: int, n_min: float, seed: int) -> tuple[np.ndarray, tuple, int]:
    """(n_boot,) bootstrap n50s (±inf: no crossing on that side; NaN: none at all), the searched range, and
    the number of passages."""
    # the bounded binomial MLE that fit_sigmoid itself runs (same k and n50 bounds), without its profile interval
    from accessibility_lib.experiments.fitting import fit_once
    from accessibility_lib.experiments.passage_horizons import outcomes_by_passage

    by_target = outcomes_by_passage(rows)
    if len(by_target) < 2:
        raise ValueError(f"the passage bootstrap needs outcomes of at least two passages, got {len(by_target)}")
    lengths = np.array(sorted({n for v in by_target.values() for n, _ in v}), dtype=float)  # (L,)
    col = {int(n): j for j, n in enumerate(lengths)}
    # per passage: (L,) trials and successes at each length
    trials = np.zeros((len(by_target), lengths.size))
    succ = np.zeros_like(trials)
    for i, v in enumerate(by_target.values()):
        for n, s in v:
            trials[i, col[n]] += 1
            succ[i, col[n]] += s
    span = float(lengths.max() - lengths.min())
    edge = (max(n_min, float(lengths.min()) - span), float(lengths.max()) + span)
    spacing = float(np.min(np.diff(lengths))) if lengths.size > 1 else 1.0
    k_bounds = (1e-3 / spacing, 50.0 / spacing)
    rng = np.random.default_rng(seed)
    draws = np.empty(n_boot)
    with threadpool_limits(1):
        for b in range(n_boot):
            pick = rng.integers(0, len(by_target), len(by_target))
            t_, s_ = trials[pick].sum(0), succ[pick].sum(0)
            keep = t_ > 0
            n_, p_, w_ = lengths[keep], s_[keep] / t_[keep], t_[keep]
            above, below = p_ > 0.5, p_ < 0.5
            if not below.any():
                draws[b] = math.inf  # n50 beyond the longest length tried
            elif not above.any():
                draws[b] = -math.inf  # below the shortest
            elif n_[above].min() >= n_[below].max():
                draws[b] = math.nan  # no decreasing crossing
            else:
                draws[b] = fit_once(n_, p_, w_, k_bounds, edge)[0]
    return draws, edge, len(by_target)


_CACHE: dict[tuple, float] = {}


def passage_design_effect(rows: Iterable[dict], fit, *, n_min: float = 0.0, n_boot: int = 400, seed: int = 0) -> float:
    """How much wider than the profile interval resampling passages says n50's interval should be.

    The design effect DE = (s_boot / s_prof)², floored at 1: s_boot is the robust spread of the bootstrap's
    n50s (1.4826 × their median absolute deviation, which a few resamples without a crossing do not
    dominate), s_prof the standard error the profile interval implies (its width / 2z). A likelihood whose
    outcomes share passages carries DE times less information than it counts.

    Raises:
        ValueError: as :func:`passage_bootstrap_n50`, or a ``fit`` without a finite interval.
    """
    from scipy import stats

    if not fit.ok or not np.all(np.isfinite(fit.ci)):
        raise ValueError("passage_design_effect needs a fit with a finite n50 interval")
    draws = _draws(rows, n_boot=n_boot, n_min=n_min, seed=seed)[0]
    draws = draws[~np.isnan(draws)]
    if draws.size == 0:
        return math.inf
    med = float(np.median(draws))
    s_boot = 1.4826 * float(np.median(np.abs(draws - med)))
    z = float(stats.norm.ppf(0.5 + fit.level / 2.0))
    s_prof = (fit.ci[1] - fit.ci[0]) / (2.0 * z)
    if not math.isfinite(s_boot):
        return math.inf
    return max(1.0, (s_boot / s_prof) ** 2) if s_prof > 0 else 1.0


def widen_for_passages(fit, rows: Iterable[dict], *, n_min: float = 0.0, n_boot: int = 400, seed: int = 0):
    """``fit`` with its n50 interval widened for outcomes that share passages (natural-text targets).

    The profile-likelihood interval is recomputed with its cut-off multiplied by the design effect
    (:func:`passage_design_effect`): the set of n50 where 2·ΔNLL ≤ DE·χ²₁(level), i.e. ``fit_sigmoid`` at
    the level whose χ²₁ quantile is DE times the stated one. An end is open where that interval reaches the
    edge of the searched range, as for the profile interval.

    Args:
        fit: the :class:`~accessibility_lib.experiments.fitting.SigmoidFit` of these outcomes (binomial).
        rows, n_min, n_boot, seed: as for :func:`passage_bootstrap_n50`.

    Returns:
        A copy of ``fit`` with the widened ``ci``/``ci_open`` (``level`` unchanged) and ``method`` ending in
        ", passage design effect DE"; ``fit`` itself when DE is 1 or it has no finite interval. Design
        effects are cached by outcomes and settings (chapters summarise the same artifact repeatedly).
    """
    import dataclasses

    from scipy import stats

    from accessibility_lib.experiments.fitting import fit_sigmoid

    if not fit.ok or not np.all(np.isfinite(fit.ci)):
        return fit
    rows = list(rows)
    key = (tuple(sorted((int(r["n"]), int(r["target"]), bool(r["success"])) for r in rows)), n_min, n_boot, seed,
           fit.level, tuple(fit.ci))  # fmt: skip
    if key not in _CACHE:
        _CACHE[key] = passage_design_effect(rows, fit, n_min=n_min, n_boot=n_boot, seed=seed)
    de = _CACHE[key]
    if de <= 1.0:
        return fit
    trials = _per_length(rows)
    lengths = np.array(sorted(trials), dtype=float)
    t_ = np.array([len(trials[int(n)]) for n in lengths], dtype=float)
    p_ = np.array([np.mean(trials[int(n)]) for n in lengths])
    level = float(stats.chi2.cdf(de * stats.chi2.ppf(fit.level, 1), 1)) if math.isfinite(de) else 1.0
    if level >= 1.0 - 1e-12:  # beyond what the profile can resolve: both ends open at the searched edge
        span = float(lengths.max() - lengths.min())
        ci, ci_open = (max(n_min, float(lengths.min()) - span), float(lengths.max()) + span), (True, True)
    else:
        wide = fit_sigmoid(lengths, p_, t_, level=level, n_min=n_min)
        ci, ci_open = wide.ci, wide.ci_open
    return dataclasses.replace(fit, ci=ci, ci_open=ci_open, method=fit.method + f", passage design effect {de:.2g}")


def _per_length(rows: list[dict]) -> dict[int, list[bool]]:
    out: dict[int, list[bool]] = {}
    for r in rows:
        out.setdefault(int(r["n"]), []).append(bool(r["success"]))
    return out
