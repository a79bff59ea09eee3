"""The budget model: n50 against the step budget, its form chosen by residuals, its prediction and refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accessibility_lib.runs.budget_model import fit_budget_curve, predict_from_summaries, saturation

B = [300, 600, 1200]


def _ci(ys, rel=0.1):
    return [(y * (1 - rel), y * (1 + rel)) for y in ys]


def test_a_power_law_curve_is_read_as_one_and_extrapolated():
    ys = [10 * (b / 300) ** 0.45 for b in B]  # ×1.37 a doubling
    p = fit_budget_curve(B, ys, _ci(ys), 3000)
    assert (p.form, p.chosen_by) == ("power", "residuals")
    truth = 10 * 10**0.45
    assert p.n50 == pytest.approx(truth, rel=1e-6)
    assert p.interval[0] < truth < p.interval[1]
    assert p.other["form"] == "loglinear" and p.other["n50"] < truth  # the other form bends down
    assert p.growth_per_doubling == pytest.approx([2**0.45, 2**0.45])


def test_a_curve_that_adds_the_same_tokens_a_doubling_is_read_as_loglinear():
    ys = [10 + 4 * math.log2(b / 300) for b in B]
    p = fit_budget_curve(B, ys, _ci(ys), 3000)
    assert p.form == "loglinear"
    assert p.n50 == pytest.approx(10 + 4 * math.log2(10), rel=1e-6)
    assert not p.saturation["identified"] and "no slowing" in p.saturation["text"]


def test_two_budgets_take_the_given_form_and_an_open_interval_stays_open():
    p = fit_budget_curve([300, 600], [10, 13], [(9, 11), (11, math.inf)], 3000, form="power")
    assert p.chosen_by == "given" and p.interval[1] == math.inf
    assert fit_budget_curve([300, 600], [10, 13], [(9, 11), (12, 14)], 3000).form == "loglinear"


def test_saturation_only_where_the_increments_shrink():
    s = saturation(B, [10, 14, 16])
    assert s["identified"] and s["asymptote"] == pytest.approx(18.0)
    assert not saturation(B, [10, 14, 19])["identified"]
    assert not saturation([300, 600], [10, 14])["identified"]


@pytest.mark.parametrize(
    ("budgets", "ys", "cis", "target", "match"),
    [
        ([300], [10], [(9, 11)], 3000, "two or more budgets"),
        ([300, 300], [10, 11], [(9, 11), (10, 12)], 3000, "distinct"),
        ([300, 3000], [10, 11], [(9, 11), (10, 12)], 3000, "must exceed every budget"),
        ([300, 600], [10, -1], [(9, 11), (-2, 0)], 3000, "finite and > 0"),
        ([300, 600], [10, 12], [(9, 11), (13, 14)], 3000, "does not contain"),
    ],
)
def test_bad_curves_are_refused(budgets, ys, cis, target, match):
    with pytest.raises(ValueError, match=match):
        fit_budget_curve(budgets, ys, cis, target)
    with pytest.raises(ValueError, match="form must be one of"):
        fit_budget_curve([300, 600], [10, 12], [(9, 11), (11, 13)], 3000, form="exp")


def test_predictions_from_the_stored_smollm2_curve_exist_and_say_how_they_differ():
    from accessibility_lib.runs import cramming_artifacts as CA
    from accessibility_lib.runs import cramming_summary as CS
    from accessibility_lib.runs.budget_model import unit_prediction
    from accessibility_lib.runs.cramming_units import CrammingUnit

    s = CS.summarize(CA.load_artifact("smollm2-135m"))
    p = predict_from_summaries(s, kind="natural", m=1, target_steps=3000)
    assert p is not None and p.budgets == [300, 600, 1200] and p.n50 > p.n50s[-1]
    rec = unit_prediction(CrammingUnit("natural", 1, max_steps=3000, patience=500, instrument="authors"), s)
    assert rec["curve_instrument"] == "paper" and not rec["like_for_like"]
    assert "patience 500" in rec["differs"] and "instrument authors" in rec["differs"]
    assert np.isfinite(rec["interval"]).all()
