"""Tests of accessibility_lib.experiments.fitting: sigmoid n50 recovery, intervals, degenerate data, slopes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from accessibility_lib.experiments.fitting import fit_sigmoid, logistic
from accessibility_lib.experiments.isotonic import separation
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


def test_saturated_and_step_curves_match_hand_derivations():
    """Two lengths, two parameters: the logistic passes through both points. Rates 0.8 at n = 10 and 0.2 at
    n = 20 are symmetric about ½, so n50 = 15, and 1/(1 + e^{k(10 − 15)}) = 0.8 gives e^{−5k} = 1/4,
    k = ln 4 / 5 = 0.277259 per token. A step 1, 1, 0, 0 at n = 10, 20, 30, 40: for every n50 in (20, 30)
    the likelihood grows with k, so k ends at the search's upper bound 50/spacing = 5 per token, and the
    data are symmetric about 25."""
    two = fit_sigmoid([10, 20], [0.8, 0.2], 10)
    assert two.n50 == pytest.approx(15.0, abs=1e-4)
    assert two.steepness == pytest.approx(math.log(4) / 5, rel=1e-5)
    step = fit_sigmoid([10, 20, 30, 40], [1, 1, 0, 0], 20)
    assert step.steepness == pytest.approx(5.0, rel=1e-9)
    assert step.n50 == pytest.approx(25.0, abs=1e-3)
    assert 20 <= step.ci[0] < 25 < step.ci[1] <= 30


# --- non-monotone data: the isotonic crossing beside the logistic one, and the misfit flag ----------------

# SmolLM2-135M, bfloat16, random words, m = 1 (book/data/cramming/smollm2-135m.json, unit
# random_words/replication/m1/steps300/paper/bf16, stored outcomes at commit 4bd6e3e): crammed of 10 at each n
SMOL_BF16_WORDS = ([6, 12, 18, 21, 24], [7, 9, 6, 1, 0], 10)


def test_pool_adjacent_violators_equals_a_constrained_least_squares_solve():
    from scipy import optimize

    from accessibility_lib.experiments.isotonic import pava_decreasing

    # hand: 0.7, 0.9 violate (an increase) and pool to their mean 0.8; the rest already falls
    assert pava_decreasing([0.7, 0.9, 0.6, 0.1, 0.0], [10] * 5) == pytest.approx([0.8, 0.8, 0.6, 0.1, 0.0])
    g = np.random.default_rng(3)
    for _ in range(20):
        y, w = g.uniform(0, 1, 7), g.integers(1, 20, 7).astype(float)
        cons = [{"type": "ineq", "fun": (lambda x, i=i: x[i] - x[i + 1])} for i in range(6)]  # x non-increasing
        ref = optimize.minimize(lambda x: np.sum(w * (x - y) ** 2), np.full(7, y.mean()), constraints=cons,
                                method="SLSQP", options={"ftol": 1e-12, "maxiter": 500}).x  # fmt: skip
        assert pava_decreasing(y, w) == pytest.approx(ref, abs=1e-5)
    with pytest.raises(ValueError):
        pava_decreasing([])


def test_smollm2_bf16_random_words_isotonic_crossing_and_misfit():
    """Hand: pooled 0.8, 0.8, 0.6, 0.1, 0.0, so the isotonic curve crosses ½ between n = 18 (0.6) and
    21 (0.1): 18 + (0.6 − 0.5)/(0.6 − 0.1)·3 = 18.6. The logistic puts n50 at 15.5 and its deviance,
    χ² with 5 − 2 = 3 degrees of freedom, rejects it."""
    n, crammed, t = SMOL_BF16_WORDS
    fit = fit_sigmoid(n, np.array(crammed) / t, t)
    assert fit.n50 == pytest.approx(15.5, abs=0.05)
    assert not fit.monotone and fit.isotonic_n50 == pytest.approx(18.6, abs=1e-9)
    assert fit.misfit and fit.gof_p < 0.05
    assert "isotonic n50 18.6" in fit.describe() and "misfit" in fit.describe()
    mono = fit_sigmoid(n, [1.0, 0.9, 0.6, 0.1, 0.0], t)  # the same lengths made monotone: no note
    assert mono.monotone and mono.shape_note() == "" and "isotonic" not in mono.describe()


def test_deviance_p_values_are_calibrated_on_logistic_data():
    """Data drawn from a logistic: the deviance test rejects at 5 % about 5 % of the time (binomial 20 a point,
    6 lengths, 60 replicates: at most 15 %), and half of its p-values lie below ½ (30 %–70 %)."""
    g = np.random.default_rng(0)
    n = np.array([10, 20, 30, 40, 50, 60.0])
    ps = np.array([fit_sigmoid(n, g.binomial(20, logistic(n, 35, 0.1)) / 20, 20).gof_p for _ in range(60)])
    assert np.mean(ps < 0.05) <= 0.15
    assert 0.3 <= np.mean(ps < 0.5) <= 0.7


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


def test_separated_data_are_flagged_as_a_step_or_a_capped_steepness_and_resolved_data_are_not():
    # a step: all crammed up to n = 3, none from n = 4 on: the data place n50 only between 3 and 4
    step = fit_sigmoid([2, 3, 4], [1.0, 1.0, 0.0], 10)
    assert step.step == (3.0, 4.0) and step.capped_at is None and "between n = 3 and 4" in step.describe()
    # all of 20 at n = 2, 6 of 20 at n = 3 (referee finding on nano): n = 3 places n50, the cap sets the point
    one = fit_sigmoid([2, 3], [1.0, 0.3], 20)
    assert one.step is None and one.capped_at == 3.0 and "n = 3 alone places n50" in one.describe()
    assert fit_sigmoid([3, 5, 8], [1.0, 0.5, 0.0], [7, 20, 7]).capped_at == 5.0
    resolved = fit_sigmoid([2, 3, 4, 5], [1.0, 0.7, 0.4, 0.1], 20)  # two intermediate rates
    assert resolved.step is None and resolved.capped_at is None and "cap" not in resolved.describe()
    assert fit_sigmoid([2, 3, 4], [0.9, 0.6, 0.0], 10).capped_at is None  # not 1 below the step
    assert separation([2, 3, 4], [1.0, 0.5, 0.0]) == (2.0, 4.0, 3.0) and separation([2, 3], [0.5, 0.0]) == (
        None,
        3.0,
        2.0,
    )
    assert separation([2, 3, 4], [1.0, 0.5, 0.4]) is None and separation([2, 3], [1.0, 1.0]) is None


def test_an_interval_end_beyond_the_lengths_tried_is_called_the_logistics_extrapolation():
    """SmolLM2-135M, float32, 600 steps, natural m = 1 (book/data/cramming/smollm2-135m.json): 8/10, 7/10, 3/10
    crammed at 21, 26, 32 tokens. The profile interval's upper end lies past 32, the longest length tried:
    the data do not reach it, the logistic does, and the text says so; an end inside the lengths is silent."""
    fit = fit_sigmoid(np.array([21.0, 26.0, 32.0]), np.array([0.8, 0.7, 0.3]), np.array([10.0, 10.0, 10.0]))
    assert fit.ok and fit.ci[1] > 32 and not fit.ci_open[1] and fit.ci[0] > 21
    assert "upper end past the longest length tried (32): extrapolated" in fit.describe()
    assert "lower end" not in fit.describe()
    inside = fit_sigmoid(
        np.array([2.0, 3.0, 4.0, 5.0]), np.array([1.0, 0.8, 0.5, 0.3]), np.array([5.0, 15.0, 20.0, 20.0])
    )
    assert min(inside.lengths) <= inside.ci[0] and inside.ci[1] <= max(inside.lengths)
    assert "extrapolated" not in inside.describe()
    # an end equal to a length tried at the printed digits is not past it (nano random words m = 1: 3.0 [2.7, 3.0])
    step = fit_sigmoid(np.array([2.0, 3.0]), np.array([1.0, 0.3]), np.array([20.0, 20.0]))
    assert "past the longest" not in step.describe() and f"{step.ci[1]:.1f}" == "3.0"
