"""The Fisher-information lower bound on an n50 search's token-steps (accessibility_lib.experiments.n50_bound)."""

import math

import numpy as np
import pytest

from accessibility_lib.experiments.fitting import fit_sigmoid
from accessibility_lib.experiments.n50_bound import (
    min_search_token_steps,
    success_step_fit,
    success_step_share,
    target_information,
    target_token_steps,
)


def test_information_peaks_at_n50_with_k_squared_over_four():
    n = np.linspace(0, 40, 4001)
    info = target_information(n, 20.0, 0.5)
    assert n[np.argmax(info)] == pytest.approx(20.0, abs=0.01)
    assert info.max() == pytest.approx(0.5**2 / 4)


def test_with_the_steepness_known_the_bound_is_one_length_and_matches_the_formula():
    # with m = 1, a success costing the whole budget, every target at n costs n·budget: the best rate I/c is
    # the maximum of k²p(1−p)/n, near (just below) n50; the bound is (2z/w)² / that rate
    b = min_search_token_steps(2.0, 30.0, 1.0, 1, 100, 1.0, steepness_known=True)
    assert len(b.lengths) == 1 and b.cost_shares == (1.0,)
    n = np.arange(1, 80)
    rate = target_information(n, 30.0, 1.0) / (n * 100.0)
    assert b.best_n == n[np.argmax(rate)]
    assert b.token_steps == pytest.approx((2 * 1.959964 / 2.0) ** 2 / rate.max(), rel=1e-5)
    assert b.targets == pytest.approx((2 * 1.959964 / 2.0) ** 2 / target_information(b.best_n, 30.0, 1.0), rel=1e-5)


def test_cheap_successes_lower_the_bound_and_with_k_known_pull_the_best_length_below_n50():
    full = min_search_token_steps(3.0, 40.0, 0.3, 2, 300, 1.0, steepness_known=True)
    cheap = min_search_token_steps(3.0, 40.0, 0.3, 2, 300, 0.1, steepness_known=True)
    assert cheap.best_n < full.best_n <= 40
    assert cheap.token_steps < full.token_steps
    assert (
        min_search_token_steps(3.0, 40.0, 0.3, 2, 300, 0.1).token_steps
        < min_search_token_steps(3.0, 40.0, 0.3, 2, 300, 1.0).token_steps
    )


def test_giving_failures_up_early_lowers_the_bound_by_at_most_the_share_saved():
    full = min_search_token_steps(3.0, 40.0, 0.3, 2, 300, 0.3)
    third = min_search_token_steps(3.0, 40.0, 0.3, 2, 300, 0.3, failure_share=1 / 3)
    assert full.token_steps / 3 < third.token_steps < full.token_steps


def test_the_bound_scales_as_one_over_width_squared_and_grows_with_level():
    a = min_search_token_steps(2.0, 20.0, 0.4, 1, 300, 0.5)
    b = min_search_token_steps(4.0, 20.0, 0.4, 1, 300, 0.5)
    assert a.token_steps == pytest.approx(4 * b.token_steps)
    assert min_search_token_steps(2.0, 20.0, 0.4, 1, 300, 0.5, level=0.99).token_steps > a.token_steps


def test_the_c_optimal_design_matches_a_brute_force_search_over_two_point_designs():
    """Elfving's programme against every pair of lengths and a grid of cost shares, for the n50 variance."""
    n50, k, m, budget, f = 17.3, 0.3, 2, 300, 0.4
    b = min_search_token_steps(3.0, n50, k, m, budget, f)
    n = np.arange(1, 60)
    p = 1 / (1 + np.exp(k * (n - n50)))
    c = target_token_steps(n, m, n50, k, budget, f)
    best = np.inf
    for i in range(n.size):
        for j in range(i + 1, n.size):
            for w in np.linspace(0.01, 0.99, 99):
                mat = sum(
                    s_ * p[x] * (1 - p[x]) / c[x] * np.outer([k, -(n[x] - n50)], [k, -(n[x] - n50)])
                    for s_, x in ((w, i), (1 - w, j))
                )
                best = min(best, np.linalg.inv(mat)[0, 0])
    assert b.information_per_token_step == pytest.approx(1 / best, rel=0.01)
    assert b.information_per_token_step >= 1 / best * (1 - 1e-9)  # the programme finds at least the grid's best
    assert len(b.lengths) <= 2 and sum(b.cost_shares) == pytest.approx(1.0)


def test_lengths_either_side_of_a_half_integer_n50_give_the_known_steepness_bound_when_costs_are_equal():
    # m huge: every length costs about the same, so the design straddles n50 = 20.5 with equal shares, the
    # slope terms cancel, and the n50 precision is what a fit that knew k would get at n = 20
    b = min_search_token_steps(2.0, 20.5, 0.8, 10**7, 100, 1.0)
    known = min_search_token_steps(2.0, 20.5, 0.8, 10**7, 100, 1.0, steepness_known=True)
    assert b.lengths == (20, 21)
    assert b.cost_shares == pytest.approx((0.5, 0.5), abs=1e-3)
    assert b.token_steps == pytest.approx(known.token_steps, rel=1e-4)


def test_knowing_the_steepness_can_only_lower_the_bound():
    for n50, k, f in ((21.1, 0.33, 0.4), (17.0, 0.23, 0.05), (4.0, 2.0, 0.2), (0.6, 1.0, 0.5)):
        free = min_search_token_steps(5.0, n50, k, 1, 300, f)
        known = min_search_token_steps(5.0, n50, k, 1, 300, f, steepness_known=True)
        assert known.token_steps <= free.token_steps * (1 + 1e-9)
        assert math.isfinite(free.token_steps) and free.token_steps > 0


def test_targets_flag_the_asymptotics_and_curves_too_steep_or_too_flat_are_refused():
    # a steep curve between integers: the whole lengths either side of n50 carry little, so many targets
    steep = min_search_token_steps(2.0, 20.5, 20.0, 1, 300, 0.5)
    assert math.isfinite(steep.token_steps) and steep.targets > 100
    # a wide target width needs few targets: the asymptotic bound means little there, and `targets` says so
    assert min_search_token_steps(20.0, 20.5, 0.5, 1, 300, 0.5).targets < 10
    with pytest.raises(ValueError, match="too steep"):
        min_search_token_steps(2.0, 20.5, 1e3, 1, 300, 0.5)
    with pytest.raises(ValueError, match="too flat"):
        min_search_token_steps(2.0, 20.0, 1e-5, 1, 300, 0.5)


def test_no_simulated_design_beats_the_bound():
    """Designs at fixed lengths, simulated: none reaches a typical interval width w for less than the bound at w.

    One lucky draw can give a narrow interval; the bound speaks of the typical width (E 1/w²)^(−1/2), a failed
    fit counting as no precision, as the benchmark uses it.
    """
    rng = np.random.default_rng(0)
    n50, k, budget, per = 12.0, 0.5, 100, 25
    ratios = []
    for lengths in ([10, 12, 14], [11, 12, 13], [8, 12, 16], [9, 11, 13, 15], [6, 12, 18]):
        ns = np.array(lengths)
        widths = []
        for _ in range(40):
            succ = rng.binomial(per, 1 / (1 + np.exp(k * (ns - n50))))
            fit = fit_sigmoid(ns, succ / per, np.full(ns.size, per))
            ok = fit.ok and all(map(math.isfinite, fit.ci))
            widths.append(fit.ci[1] - fit.ci[0] if ok else math.inf)
        typical = 1 / math.sqrt(np.mean(1 / np.array(widths) ** 2))
        cost = per * float(target_token_steps(ns, 1, n50, k, budget, 1.0).sum())  # this design's expected cost
        ratios.append(min_search_token_steps(typical, n50, k, 1, budget, 1.0).token_steps / cost)
    assert max(ratios) < 1.0  # no design pays less than the bound
    assert max(ratios) > 0.3  # and the bound is not vacuous: the best fixed design comes within a factor 3 of it


def test_success_share_follows_the_units_own_successes():
    outcomes = [{"n": n, "steps": s, "success": True} for n, s in ((5, 30), (10, 60), (15, 90), (20, 120))]
    outcomes.append({"n": 30, "steps": 300, "success": False})
    a, b, resid = success_step_fit(outcomes, 10.0, 300)
    assert a == pytest.approx(0.0, abs=1e-12) and b == pytest.approx(0.2) and np.allclose(resid, 0.0)
    share = success_step_share(outcomes, 10.0, 300)
    assert share(np.array([10.0, 100.0])) == pytest.approx([0.2, 1.0])  # clipped to the budget
    assert success_step_share([], 10.0, 300)(np.array([3.0])) == pytest.approx([0.5])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"width": 0.0}, "width"),
        ({"width": math.nan}, "width"),
        ({"n50": -1.0}, "n50"),
        ({"steepness": 0.0}, "steepness"),
        ({"m": 0}, "m must be"),
        ({"budget": 0}, "budget"),
        ({"level": 1.0}, "level"),
        ({"success_share": 0.0}, "success_share"),
        ({"success_share": 1.5}, "success_share"),
        ({"failure_share": 0.0}, "failure_share"),
    ],
)
def test_bad_input_is_named(kwargs, message):
    args = {"width": 2.0, "n50": 20.0, "steepness": 0.3, "m": 1, "budget": 300, "success_share": 0.5} | kwargs
    with pytest.raises(ValueError, match=message):
        min_search_token_steps(**args)


def test_efficiency_interval_covers_at_its_level_for_normal_errors():
    """Efficiencies ∝ 1/RMSE² from 100 normal errors: the χ² interval covers the true efficiency about 95 % of
    the time (simulated), is about ±30 % wide at 100 searches, and refuses bad input."""
    from accessibility_lib.experiments.n50_bound import efficiency_interval

    rng = np.random.default_rng(0)
    true_eff, reps, hits = 0.8, 100, 0
    for _ in range(2000):
        rmse2 = np.mean(rng.normal(0.0, 1.0, reps) ** 2)  # σ = 1: the estimate is true_eff / rmse2
        lo, hi = efficiency_interval(true_eff / rmse2, reps)
        hits += lo <= true_eff <= hi
    assert 0.93 <= hits / 2000 <= 0.97
    lo, hi = efficiency_interval(1.0, 100)
    assert 0.70 < lo < 0.78 and 1.25 < hi < 1.33
    with pytest.raises(ValueError, match="reps must be an integer >= 2"):
        efficiency_interval(1.0, 1)
    with pytest.raises(ValueError, match="efficiency must be a finite real number"):
        efficiency_interval(float("nan"), 100)
    with pytest.raises(ValueError, match="level must be in"):
        efficiency_interval(1.0, 100, level=1.0)
