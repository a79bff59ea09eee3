"""Tests of accessibility_lib.experiments.fitting: sigmoid n50 recovery, intervals, degenerate data, slopes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from accessibility_lib.experiments.fitting import fit_sigmoid, logistic
from accessibility_lib.experiments.slope_fit import fit_slope

CURVES = Path(__file__).resolve().parents[2] / "accessibility_lib" / "data" / "paper" / "cramming_curves.json"


def _noisy_curve(n50, k, lengths, trials, seed):
    rng = np.random.default_rng(seed)
    return rng.binomial(trials, logistic(lengths, n50, k)) / trials


@pytest.mark.parametrize("n50,k", [(300.0, 0.08), (150.0, 0.2), (45.0, 0.5)])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_recovers_n50_within_2_percent_binomial_noise(n50, k, seed):
    # 20 trials a point (the paper's 20 targets), lengths every 2 % of n50 over ±60 %
    lengths = np.round(np.linspace(0.4 * n50, 1.6 * n50, 61))
    success = _noisy_curve(n50, k, lengths, 20, seed)
    fit = fit_sigmoid(lengths, success, n_trials=20)
    assert fit.ok and fit.method == "binomial-mle"
    assert abs(fit.n50 - n50) / n50 < 0.02
    assert fit.r_squared > 0.8


def test_profile_interval_covers_the_true_n50_in_at_least_90_percent_of_100_replicates():
    # a logistic with known n50, 20 trials a length at lengths around it (the paper's 20 targets)
    n50, k = 50.0, 0.12
    lengths = np.array([30.0, 40.0, 50.0, 60.0, 70.0])
    covered, widths20 = 0, []
    for seed in range(100):
        fit = fit_sigmoid(lengths, _noisy_curve(n50, k, lengths, 20, seed), 20)
        assert fit.ok and fit.ci[0] <= fit.n50 <= fit.ci[1]
        covered += fit.ci[0] <= n50 <= fit.ci[1]
        widths20.append(fit.ci[1] - fit.ci[0])
    assert covered >= 90, covered  # nominal 95 %
    wide = np.mean([np.diff(fit_sigmoid(lengths, _noisy_curve(n50, k, lengths, 500, s), 500).ci)[0] for s in range(5)])
    assert wide < 0.5 * np.mean(widths20)  # 25x the trials: a much narrower interval


def test_a_half_rate_at_the_shortest_length_is_not_a_confident_n50():
    # issue found on nano: rates 0.5, 0, 0, 0 at n = 2..5 were reported as n50 = 2.00 [2.00, 2.07]
    fit = fit_sigmoid([2, 3, 4, 5], [0.5, 0, 0, 0], 10)
    assert not fit.ok and fit.bound == ("<=", 2.0) and "one-sided" in fit.describe()


def test_interval_stays_open_when_rates_are_all_zero_or_one_beyond_the_crossing():
    # a bracketed step: the data say only that n50 lies between 20 and 30 (no intermediate rate)
    fit = fit_sigmoid([10, 20, 30, 40], [1, 1, 0, 0], 20)
    assert fit.ok and 20 <= fit.ci[0] < fit.ci[1] <= 30 and fit.ci[1] - fit.ci[0] > 5
    # a crossing right after the shortest length: the interval reaches below it (flagged as open)
    edge = fit_sigmoid([2, 3, 4, 5], [0.6, 0, 0, 0], 10, n_min=1)
    assert edge.ok and edge.ci[0] < 2.0


def test_least_squares_without_trial_counts():
    lengths = np.arange(10.0, 200.0, 10.0)
    fit = fit_sigmoid(lengths, logistic(lengths, 77.0, 0.15))
    assert fit.method == "least-squares"
    assert fit.n50 == pytest.approx(77.0, abs=0.05)
    assert fit.steepness == pytest.approx(0.15, rel=1e-3)
    assert fit.r_squared == pytest.approx(1.0, abs=1e-9)


def test_step_curve_gives_finite_steepness_and_n50_in_the_gap():
    fit = fit_sigmoid([10, 20, 30, 40], [1, 1, 0, 0], 20)
    assert fit.ok and 20 <= fit.n50 <= 30
    assert np.isfinite(fit.steepness)


@pytest.mark.parametrize(
    "success,side",
    [
        ([1, 1, 1, 1], ">="),
        ([0, 0, 0, 0], "<="),
        ([1, 0.9, 0.7, 0.55], ">="),
        ([0.4, 0.2, 0.1, 0.0], "<="),
        ([0.5, 0.5, 0.2, 0.0], "<="),
    ],
)
def test_degenerate_curves_are_flagged_not_extrapolated(success, side):
    lengths = [10, 20, 30, 40]
    fit = fit_sigmoid(lengths, success, 20)
    assert not fit.ok
    assert np.isnan(fit.n50) and np.isnan(fit.ci[0])
    assert fit.bound == (side, 40.0 if side == ">=" else 10.0)
    assert ("n50 ≥" if side == ">=" else "n50 ≤") in fit.message
    with pytest.raises(ValueError, match="no sigmoid"):
        fit.predict([15])


@pytest.mark.parametrize(
    "lengths,success,kw,match",
    [
        ([10, 20], [0.5], {}, "same shape"),
        ([10, 20], [1.2, 0.0], {}, r"\[0, 1\]"),
        ([10, 20], [1.0, float("nan")], {}, "finite"),
        ([10, 20], [1.0, 0.0], {"n_trials": 0}, "n_trials"),
        ([10, 20], [1.0, 0.0], {"n_trials": 2.5}, "whole numbers"),
        ([10, 20], [1.0, 0.0], {"n_min": -1}, "n_min"),
        ([10, 20], [1.0, 0.0], {"level": 1.0}, "level"),
        ([], [], {}, "must not be empty"),
    ],
)
def test_fit_sigmoid_bad_inputs(lengths, success, kw, match):
    with pytest.raises(ValueError, match=match):
        fit_sigmoid(lengths, success, **kw)


def test_fit_slope_recovers_known_slope_with_interval():
    rng = np.random.default_rng(0)
    ms = np.arange(1, 9)
    n50s = 42.5 * ms + 7.0 + rng.normal(0, 2.0, ms.size)
    fit = fit_slope(ms, n50s)
    assert fit.slope == pytest.approx(42.5, rel=0.02)
    assert fit.ci[0] < 42.5 < fit.ci[1]
    assert fit.r_squared > 0.99
    exact = fit_slope([1, 2, 3], [10.0, 20.0, 30.0], through_origin=True)
    assert exact.slope == pytest.approx(10.0) and exact.intercept == 0.0 and exact.r_squared == pytest.approx(1.0)
    two = fit_slope([1, 2], [50.0, 90.0])
    assert two.slope == pytest.approx(40.0) and np.isnan(two.ci[0])  # no residual degrees of freedom


@pytest.mark.parametrize(
    "ms,n50s,match",
    [
        ([1], [10.0], "two distinct"),
        ([2, 2], [10.0, 11.0], "two distinct"),
        ([1, 2], [1.0], "same shape"),
        ([1, 2], [1.0, float("nan")], "finite"),
    ],
)
def test_fit_slope_bad_inputs(ms, n50s, match):
    with pytest.raises(ValueError, match=match):
        fit_slope(ms, n50s)


def test_paper_curves_reanalysed_match_paper_slopes():
    """Re-fit of the paper's own success curves (accessibility_lib/data/paper/cramming_curves.json, read off the
    replication repository's figures): the slopes the paper reports are Pythia-160M 90.37 (PG19) and
    44.13 (random), Qwen-2.5-0.5B 71.02 / 36.65 (the paper's cramming figures)."""
    data = json.loads(CURVES.read_text())["models"]
    paper = {
        ("EleutherAI_pythia-160m", "natural"): 90.37,
        ("EleutherAI_pythia-160m", "random"): 44.13,
        ("Qwen_Qwen2.5-0.5B", "natural"): 71.02,
        ("Qwen_Qwen2.5-0.5B", "random"): 36.65,
    }
    for (model, kind), slope in paper.items():
        ms, n50s = [], []
        for m, pts in data[model][kind]["curves"].items():
            pts = np.asarray(pts)
            fit = fit_sigmoid(pts[:, 0], pts[:, 1], 20)
            assert fit.ok
            ms.append(int(m))
            n50s.append(fit.n50)
        got = fit_slope(ms, n50s)
        assert got.slope == pytest.approx(slope, rel=0.03), (model, kind)
        assert got.r_squared > 0.99
