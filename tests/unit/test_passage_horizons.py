"""Tests of accessibility_lib.experiments.passage_horizons: the n50 interval that counts each passage once.

Natural-text targets of one passage at several lengths are prefixes of one another; a passage has a
horizon up to which it crams. The horizon likelihood must cover the true median horizon where the pooled
binomial profile interval, which counts every outcome as independent, does not — under a fixed grid and
under the book's adaptive search — and must agree with the pooled fit where each passage is tried once.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from accessibility_lib.experiments.fitting import fit_sigmoid
from accessibility_lib.experiments.n50_sequential import locate_n50_sequential
from accessibility_lib.experiments.passage_horizons import horizon_profile_n50, with_horizon_interval

LENGTHS = list(range(12, 29))  # 17 lengths, as the paper's curves have up to 40
TRUE_N50, SCALE = 20.0, 3.0


def _horizons(seed, n_pass=20):
    return TRUE_N50 + SCALE * np.random.default_rng(seed).logistic(size=n_pass)


def _grid_rows(seed, n_pass=20):
    h = _horizons(seed, n_pass)
    return [{"n": n, "target": t, "success": bool(n <= h[t])} for n in LENGTHS for t in range(n_pass)]


def _pooled_fit(rows):
    ns = sorted({r["n"] for r in rows})
    rates = np.array([np.mean([r["success"] for r in rows if r["n"] == n]) for n in ns])
    trials = np.array([sum(r["n"] == n for r in rows) for n in ns], dtype=float)
    return fit_sigmoid(np.array(ns, dtype=float), rates, trials)


def test_the_example_brackets_the_median_horizon():
    rows = [{"n": n, "target": t, "success": n <= 10 + t} for t in range(12) for n in (8, 12, 16, 20, 24)]
    iv = horizon_profile_n50(rows)
    assert iv.lo < 16 < iv.hi and iv.open == (False, False) and iv.n_passages == 12 and iv.miss == 0.0


def test_on_a_grid_it_counts_passages_once_where_the_profile_counts_every_length():
    """20 passages at 17 shared lengths: the pooled profile interval is far too narrow (it counts each
    passage 17 times); the horizon interval is wider and covers."""
    cover_profile = cover_horizon = 0
    ratio = []
    for seed in range(12):
        rows = _grid_rows(seed)
        fit = _pooled_fit(rows)
        wide = with_horizon_interval(fit, rows)
        cover_profile += fit.ci[0] <= TRUE_N50 <= fit.ci[1]
        cover_horizon += wide.ci[0] <= TRUE_N50 <= wide.ci[1]
        ratio.append((wide.ci[1] - wide.ci[0]) / (fit.ci[1] - fit.ci[0]))
        assert wide.n50 == fit.n50 and wide.level == fit.level and "passage horizons" in wide.method
    assert np.median(ratio) > 2.0
    assert cover_horizon >= 11 and cover_profile <= 10


def test_one_length_per_passage_agrees_with_the_pooled_binomial_fit():
    """Each passage tried at one length: with no misses the horizon likelihood is the binomial logistic
    likelihood (k = 1/s), so its n50 and interval agree with fit_sigmoid's."""
    rng = np.random.default_rng(3)
    rows = []
    for j, n in enumerate(range(10, 31, 2)):
        h = TRUE_N50 + SCALE * rng.logistic(size=30)
        rows += [{"n": n, "target": 100 * j + t, "success": bool(n <= h[t])} for t in range(30)]
    fit = _pooled_fit(rows)
    iv = horizon_profile_n50(rows)
    assert abs(iv.n50 - fit.n50) < 0.5
    assert 0.7 < (iv.hi - iv.lo) / (fit.ci[1] - fit.ci[0]) < 1.4


def test_an_interval_without_a_failure_above_is_open_and_a_fit_without_a_crossing_is_returned_as_is():
    rows = [{"n": n, "target": t, "success": n <= 10 + 2 * t} for t in range(6) for n in (4, 8, 12)]
    assert horizon_profile_n50(rows).open[1]
    one_sided = fit_sigmoid(np.array([5.0, 6.0]), np.array([1.0, 1.0]), np.array([10.0, 10.0]))
    assert with_horizon_interval(one_sided, rows) is one_sided


def test_one_sided_misses_are_read_as_the_success_curve_crossing_not_the_median_horizon():
    """An optimiser that misses 20 % of the lengths within a horizon and never succeeds beyond it: the
    success rate 0.8·P(h ≥ n) crosses ½ at μ + s·ln 0.6, below the median horizon μ; that crossing (the
    paper's n50) is what the interval must hold."""
    rng = np.random.default_rng(1)
    h = TRUE_N50 + SCALE * rng.logistic(size=300)
    rows = [
        {"n": n, "target": t, "success": bool(n <= h[t]) and rng.random() > 0.2} for t in range(300) for n in LENGTHS
    ]
    iv = horizon_profile_n50(rows)
    crossing = TRUE_N50 + SCALE * np.log(0.6)
    assert iv.lo < crossing < iv.hi < TRUE_N50 and 0.1 < iv.miss < 0.3


def test_a_step_leaves_n50_anywhere_between_its_lengths_and_a_narrow_profile_is_found_between_grid_points():
    step = [{"n": n, "target": t, "success": n == 10} for t in range(10) for n in (10, 20)]
    iv = horizon_profile_n50(step)
    assert iv.scale == 0.0 and iv.lo == pytest.approx(10.0, abs=0.01) and iv.hi == pytest.approx(20.0, abs=0.01)
    h = TRUE_N50 + SCALE * np.random.default_rng(0).logistic(size=200)  # 200 passages, lengths far apart
    narrow = [
        {"n": n, "target": t, "success": bool(n <= h[t])} for t in range(200) for n in (5, 18, 19, 20, 21, 22, 400)
    ]
    iv = horizon_profile_n50(narrow)
    assert 19.0 < iv.lo < TRUE_N50 < iv.hi < 22.0 and not any(iv.open)


def test_a_pooled_point_outside_the_horizon_interval_is_kept_and_the_interval_extended_to_it():
    rows = _grid_rows(0)
    fit = _pooled_fit(rows)
    moved = dataclasses.replace(fit, n50=fit.n50 + 30.0)
    wide = with_horizon_interval(moved, rows)
    assert wide.n50 == moved.n50 and wide.ci[1] == moved.n50 and wide.method.endswith("(extended to the pooled point)")


@pytest.mark.slow
def test_under_the_adaptive_search_the_horizon_interval_covers():
    """The book's sequential search on shared passages (20 a length), the optimiser missing 10 % of the lengths
    within a horizon: the likelihood does not depend on a design that depends only on outcomes seen, so the horizon
    interval of the search that uses it covers near its 95 %."""
    cover_h = 0
    reps = 40
    for seed in range(reps):
        rng = np.random.default_rng(seed)
        h = _horizons(seed) - SCALE * np.log(0.8)  # centred so that 0.9·P(h ≥ n) crosses ½ at TRUE_N50
        memo: dict = {}

        def outcome(n, i):
            if (n, i) not in memo:
                memo[n, i] = bool(n <= h[i]) and rng.random() > 0.1
            return memo[n, i]

        def ev(n, count):
            return float(np.mean([outcome(n, i) for i in range(count)])), count, 0

        def rows():
            return [{"n": n, "target": i, "success": s} for (n, i), s in memo.items()]

        res = locate_n50_sequential(
            ev, TRUE_N50 * 1.25, 4096, n_trials=20, refit=lambda f: with_horizon_interval(f, rows())
        )
        cover_h += res.fit.ci[0] <= TRUE_N50 <= res.fit.ci[1] and "passage horizons" in res.fit.method
    # at least 34 of 40 (85 %): an interval covering 94 % (what benchmarks/bench_passage_intervals.py measures for
    # this setting, 200 experiments) falls below that with probability 0.01; one covering 55 % (the pooled profile
    # on a grid of shared passages) reaches it with probability 6e-5. The benchmark, not this test, measures the level.
    assert cover_h >= 34


@pytest.mark.parametrize(
    "rows, kw, match",
    [
        ([{"n": 3, "success": True}, {"n": 3, "target": 1, "success": True}], {}, "no target"),
        ([{"n": 3, "target": 0, "success": True}], {}, "at least two passages"),
        ([{"n": 3, "target": t, "success": True} for t in range(3)], {"level": 1.0}, "level"),
        ([], {}, "at least one outcome"),
        ([{"n": 3, "target": t, "success": True} for t in range(3)], {"n_min": 5.0}, "n_min"),
    ],
)
def test_bad_input_is_refused(rows, kw, match):
    with pytest.raises(ValueError, match=match):
        horizon_profile_n50(rows, **kw)
