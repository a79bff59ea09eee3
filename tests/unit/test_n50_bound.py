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


def test_equal_costs_put_the_best_length_at_n50_and_the_bound_matches_the_formula():
    # with m = 1, a success costing the whole budget, every target at n costs n·budget: the best rate I/c is
    # the maximum of k²p(1−p)/n, near (just below) n50; the bound is (2z/w)² / that rate
    b = min_search_token_steps(2.0, 30.0, 1.0, 1, 100, 1.0)
    n = np.arange(1, 80)
    rate = target_information(n, 30.0, 1.0) / (n * 100.0)
    assert b.best_n == n[np.argmax(rate)]
    assert b.token_steps == pytest.approx((2 * 1.959964 / 2.0) ** 2 / rate.max(), rel=1e-5)
    assert b.targets == pytest.approx((2 * 1.959964 / 2.0) ** 2 / target_information(b.best_n, 30.0, 1.0), rel=1e-5)


def test_cheap_successes_pull_the_best_length_below_n50_and_lower_the_bound():
    full = min_search_token_steps(3.0, 40.0, 0.3, 2, 300, 1.0)
    cheap = min_search_token_steps(3.0, 40.0, 0.3, 2, 300, 0.1)
    assert cheap.best_n < full.best_n <= 40
    assert cheap.token_steps < full.token_steps


def test_giving_failures_up_early_lowers_the_bound_and_moves_the_best_length_up():
    full = min_search_token_steps(3.0, 40.0, 0.3, 2, 300, 0.3)
    third = min_search_token_steps(3.0, 40.0, 0.3, 2, 300, 0.3, failure_share=1 / 3)
    assert third.token_steps < full.token_steps
    assert third.best_n >= full.best_n


def test_the_bound_scales_as_one_over_width_squared_and_grows_with_level():
    a = min_search_token_steps(2.0, 20.0, 0.4, 1, 300, 0.5)
    b = min_search_token_steps(4.0, 20.0, 0.4, 1, 300, 0.5)
    assert a.token_steps == pytest.approx(4 * b.token_steps)
    assert min_search_token_steps(2.0, 20.0, 0.4, 1, 300, 0.5, level=0.99).token_steps > a.token_steps


def test_a_narrow_window_keeps_lengths_near_n50():
    # a flat curve: far below n50 the information per token-step is high in the tail; the window forbids it
    wide = min_search_token_steps(5.0, 17.0, 0.23, 1, 300, lambda n: np.full_like(n, 0.05), p_window=(0.0, 1.0))
    narrow = min_search_token_steps(5.0, 17.0, 0.23, 1, 300, lambda n: np.full_like(n, 0.05), p_window=(0.2, 0.8))
    assert 0.2 <= 1 / (1 + math.exp(0.23 * (narrow.best_n - 17.0))) <= 0.8
    assert wide.best_n < narrow.best_n
    assert wide.token_steps < narrow.token_steps


def test_no_simulated_design_beats_the_bound():
    """Designs at fixed lengths, simulated: none reaches a median interval width w for less than the bound at w.

    One lucky draw can give a narrow interval; the bound speaks of the typical width, as the benchmark uses it.
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
        cost = per * float(target_token_steps(ns, 1, n50, k, budget, 1.0).sum())  # this design's expected cost
        ratios.append(min_search_token_steps(float(np.median(widths)), n50, k, 1, budget, 1.0).token_steps / cost)
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
        ({"p_window": (0.6, 0.9)}, "p_window must contain"),
        ({"success_share": 0.0}, "success_share"),
        ({"success_share": 1.5}, "success_share"),
        ({"failure_share": 0.0}, "failure_share"),
    ],
)
def test_bad_input_is_named(kwargs, message):
    args = {"width": 2.0, "n50": 20.0, "steepness": 0.3, "m": 1, "budget": 300, "success_share": 0.5} | kwargs
    with pytest.raises(ValueError, match=message):
        min_search_token_steps(**args)
