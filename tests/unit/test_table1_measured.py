"""Table 1 ratios against our measured cramming slopes: intervals, and no ratio without a reliable slope."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accessibility_lib.experiments.slope_fit import fit_slope
from accessibility_lib.runs import table1_measured as T


def test_the_ratio_interval_is_the_slope_interval_inverted():
    fit = fit_slope([1, 2, 3, 4], [5.0, 9.0, 14.0, 18.0], n50_ci=[(4, 6), (8, 10), (13, 15), (17, 19)])
    r, (lo, hi) = T.ratio(100.0, fit)
    assert r == pytest.approx(100.0 / fit.slope)
    assert lo == pytest.approx(100.0 / fit.ci[1]) and hi == pytest.approx(100.0 / fit.ci[0])
    assert lo < r < hi


def test_no_ratio_without_a_slope_that_excludes_zero_or_a_positive_C():
    flat = fit_slope([1, 2, 3], [5.0, 4.0, 6.0], n50_ci=[(1, 9), (1, 9), (1, 9)])
    assert flat.ci[0] <= 0
    with pytest.raises(ValueError, match="does not exclude 0"):
        T.ratio(10.0, flat)
    good = fit_slope([1, 2, 3], [5.0, 10.0, 15.0], n50_ci=[(4, 6), (9, 11), (14, 16)])
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="finite positive"):
            T.ratio(bad, good)


def test_an_interval_of_C_is_carried_into_the_ratio():
    """With C in [C_lo, C_hi] and C_exp in [lo, hi], the ratio lies in [C_lo/hi, C_hi/lo] (both intervals hold)."""
    fit = fit_slope([1, 2, 3, 4], [5.0, 9.0, 14.0, 18.0], n50_ci=[(4, 6), (8, 10), (13, 15), (17, 19)])
    r, (lo, hi) = T.ratio(100.0, fit, C_ci=(90.0, 120.0))
    assert r == pytest.approx(100.0 / fit.slope)
    assert lo == pytest.approx(90.0 / fit.ci[1]) and hi == pytest.approx(120.0 / fit.ci[0])
    _, (lo0, hi0) = T.ratio(100.0, fit)
    assert lo < lo0 < r < hi0 < hi
    assert T.ratio(100.0, fit, C_ci=(90.0, math.inf))[1][1] == math.inf
    for bad in ((110.0, 120.0), (0.0, 120.0), (math.nan, 120.0), (90.0, 95.0), (90.0, math.nan)):
        with pytest.raises(ValueError, match="C_ci must be an interval"):
            T.ratio(100.0, fit, C_ci=bad)


def test_nano_slopes_from_the_stored_artifact_only_complete_units_one_budget():
    slopes = T.measured_slopes("nano")
    assert set(slopes) >= {"natural", "random_words"}
    for s in slopes.values():
        assert all(u.state == "complete" and u.max_steps == 300 and u.instrument == "paper" for u in s.units)
        assert [u.m for u in s.units] == sorted({u.m for u in s.units})
        assert 0.0 <= s.cap_share <= 1.0
        text = T.ratio_text(50.0, s)
        if s.reliable:
            r, (lo, hi) = T.ratio(50.0, s.fit)
            assert text == f"{r:.1f} [{lo:.1f}, {hi:.1f}]"
            assert T.ratio_text(50.0, s, C_ci=(40.0, math.inf)).endswith(", ∞]")
        else:
            assert text == "—" and "not reliable" in s.describe() or s.fit is None


def _unit(failures: int, at_cap: int, patience):
    import numpy as np

    from accessibility_lib.runs.cramming_summary import UnitSummary

    e = np.zeros(0)
    return UnitSummary("u", "natural", 1, 300, "complete", e, e, e, None, 0, 0, None,
                       failures=failures, failures_at_cap=at_cap, patience=patience)  # fmt: skip


def test_budget_reading_decides_only_with_a_patience():
    """Without a patience every failure runs the whole budget by construction: the share at the cap says
    nothing (None), where with a patience more than half at the cap means budget-limited."""
    from accessibility_lib.runs.cramming_budget import budget_reading

    limited, text = budget_reading([_unit(11, 11, None), _unit(16, 16, None)])
    assert limited is None and "27 of its 27" in text and "by construction" in text
    assert budget_reading([_unit(10, 7, 100)])[0] is True
    assert budget_reading([_unit(10, 5, 100)])[0] is False  # exactly half: not more than half
    assert budget_reading([_unit(0, 0, 100)]) == (None, "no failure")
    assert budget_reading([_unit(4, 4, None), _unit(6, 1, 100)])[0] is False  # one unit with patience decides


def test_slopes_use_complete_units_and_fit_only_closed_intervals():
    """A partial unit never enters a slope (chapters 3 and 5 read the same ones); a unit whose n50 interval is
    open at an end is returned with the others but not fitted: its end is a bound, not an interval's edge."""
    import numpy as np

    from accessibility_lib.experiments.fitting import fit_sigmoid
    from accessibility_lib.runs.cramming_summary import UnitSummary, slopes

    def unit(m, n50, state="complete", lengths=None, rates=None):
        ns = np.asarray(lengths or [n50 * f for f in (0.5, 0.8, 1.0, 1.25, 1.6)], dtype=float)
        if rates is None:
            rates = np.round(20 / (1.0 + np.exp((ns - n50) / (0.1 * n50)))) / 20
        trials = np.full(ns.size, 10.0 if lengths else 20.0)
        fit = fit_sigmoid(ns, np.asarray(rates, dtype=float), trials)
        return UnitSummary(f"natural/m{m}", "natural", m, 300, state, ns, np.asarray(rates), trials, fit, 100, 0, None)

    done = [unit(1, 10.0), unit(2, 20.0), unit(3, 30.0)]
    pts, fit = slopes(done + [unit(4, 90.0, state="partial")], 300)["natural"]
    assert [u.m for u in pts] == [1, 2, 3] and fit.n_points == 3 and abs(fit.slope - 10.0) < 1.5
    # flat rates near 1/2 at the longest lengths searched (Gemma-3-270M's natural m = 1): open above
    open_ = unit(4, 40.0, lengths=[24, 28, 32, 36, 48], rates=[0.7, 0.8, 0.5, 0.4, 0.4])
    assert open_.fit.ok and open_.fit.ci_open[1]
    pts, fit = slopes(done + [open_], 300)["natural"]
    assert [u.m for u in pts] == [1, 2, 3, 4] and fit.n_points == 3 and abs(fit.slope - 10.0) < 1.5


def test_a_missing_slope_says_when_an_open_interval_is_why():
    from types import SimpleNamespace

    closed = SimpleNamespace(m=2, fit=SimpleNamespace(ci_open=(False, False)))
    opened = SimpleNamespace(m=1, fit=SimpleNamespace(ci_open=(False, True)))
    text = T.MeasuredSlope("gemma", "natural", None, [opened, closed], "300 steps", 1.0).describe()
    assert text.startswith("no slope (complete at m = 1, 2")
    assert "m = 1 is open" in text
    plain = T.MeasuredSlope("gemma", "natural", None, [closed], "300 steps", 1.0).describe()
    assert "fewer than two m" in plain and "open" not in plain


def test_the_budget_curve_says_when_a_larger_budget_moved_n50_and_when_it_only_overlaps():
    """The stored SmolLM2 bfloat16 pair (300 then 600 steps, natural, m = 1) has disjoint intervals; nano's
    float32 budget curve overlaps; a kind with one budget only has no curve."""
    from accessibility_lib.runs import cramming_artifacts as CA
    from accessibility_lib.runs import cramming_budget as CB
    from accessibility_lib.runs import cramming_summary as CS

    smol = CS.summarize(CA.load_artifact("smollm2-135m"))
    curve = CB.budget_curve(smol, "natural")
    assert [u.max_steps for u in curve["bfloat16"]] == [300, 600]
    assert curve["bfloat16"][1].fit.ci[0] > curve["bfloat16"][0].fit.ci[1]
    text = CB.budget_curve_text(smol, "natural")
    assert "in bfloat16 (whose decode paths disagreed at" in text and "has not converged" in text
    assert CB.budget_curve_text(smol, "random_tokens") == "no budget curve is complete for random tokens at m = 1 yet"
    nano = CS.summarize(CA.load_artifact("nano", CA.ARTIFACT_DIR / "instruments"))
    assert "not shown to differ" in CB.budget_curve_text(nano, "natural")
    # three budgets (float32, 300 / 600 / 1200 steps on the same 10 targets): each is named, with the move per step
    assert [u.max_steps for u in curve["float32"]] == [300, 600, 1200]
    f32 = text.split("in float32")[1]
    assert all(f"with {n} steps" in f32 for n in (300, 600, 1200))
    moves = [100 * (v.fit.n50 / u.fit.n50 - 1) for u, v in zip(curve["float32"], curve["float32"][1:])]
    assert f"from each budget to the next the point estimate moves by {moves[0]:+.0f} %, {moves[1]:+.0f} %" in f32
    # the 600-step upper end (34.8) lies past its longest length (32): the last step is not read as a move
    assert "at the last step the intervals are disjoint only by an extrapolated end" in f32
    assert "has not levelled off" not in f32
    assert "from each budget to the next" not in text.split("in float32")[0]  # two budgets: no per-step clause
    only32 = CB.budget_curve_text(smol, "natural", dtype="float32")  # one dtype: the other is left out
    assert only32.startswith("in float32, n50 at m = 1 is:") and "bfloat16" not in only32
    # the brief form: the float32 curve's point estimates and budgets in order, with its trend word
    brief = CB.budget_curve_brief(smol, "natural")
    n50s = " → ".join(f"{u.fit.n50:.1f}" for u in curve["float32"])
    assert (
        brief
        == f"n50 at m = 1 of {n50s} tokens at 300 → 600 → 1,200 steps ({CB.TREND_WORDS[CB.curve_trend(curve['float32'])]})"
    )
    assert CB.budget_curve_brief(smol, "random_tokens") == ""
    rw = CB.budget_curve(smol, "random_words")["float32"]  # two budgets, disjoint: not converged, no "growing"
    if len(rw) == 2 and CB.curve_trend(rw) == "growing":
        assert "(not converged at 300 steps: the two budgets' intervals are disjoint)" in CB.budget_curve_brief(
            smol, "random_words"
        )


def test_budget_moves_pair_the_same_targets_at_two_budgets_at_every_m():
    """The stored SmolLM2 float32 natural units at 600 steps (m = 1, 2, 3, ten targets each) pair with the
    ten-target units at 300 steps, not the twenty-target ones; the larger budget never lowered n50 there."""
    from accessibility_lib.runs import cramming_artifacts as CA
    from accessibility_lib.runs import cramming_budget as CB
    from accessibility_lib.runs import cramming_summary as CS

    smol = CS.summarize(CA.load_artifact("smollm2-135m"))
    moves = CB.budget_moves(smol, "natural", 600, 300)
    assert [m for m, _, _ in moves][:3] == [1, 2, 3]
    for _, base, big in moves:
        assert (base.max_steps, big.max_steps) == (300, 600)
        assert base.n_targets == big.n_targets == 10
        assert big.fit.n50 > base.fit.n50
    assert CB.budget_moves(smol, "natural", 4800, 300) == []


def test_budget_slopes_fit_the_paired_units_at_each_budget():
    """The two slopes chapters 3 and 5 set side by side are fitted through the budget_moves pairs, one budget
    each (the stored SmolLM2 natural units); with fewer than two paired m there are none."""
    from accessibility_lib.experiments.slope_fit import fit_slope
    from accessibility_lib.runs import cramming_artifacts as CA
    from accessibility_lib.runs import cramming_budget as CB
    from accessibility_lib.runs import cramming_summary as CS

    smol = CS.summarize(CA.load_artifact("smollm2-135m"))
    moves = CB.budget_moves(smol, "natural", 600, 300)
    ms, lo, hi = CB.budget_slopes(smol, "natural", 600, 300)
    assert ms == [m for m, _, _ in moves] and len(ms) >= 2
    for k, fit in ((1, lo), (2, hi)):
        ref = fit_slope(ms, [t[k].fit.n50 for t in moves], n50_ci=[t[k].fit.ci for t in moves])
        assert (fit.slope, fit.ci) == (ref.slope, ref.ci)
    assert hi.slope > lo.slope  # 600 steps raised n50 more at larger m on these targets
    assert CB.budget_slopes(smol, "natural", 4800, 300) is None


def test_an_interval_with_an_end_past_the_lengths_tried_is_flagged_extrapolated():
    """Gemma's natural m = 1 (20 targets) has its lower end below the shortest length it tried; SmolLM2's natural
    m = 2 (20 targets) lies within its lengths; a unit without a fit is never flagged."""
    from accessibility_lib.runs import cramming_artifacts as CA
    from accessibility_lib.runs import cramming_summary as CS

    gemma = {u.uid: u for u in CS.summarize(CA.load_artifact("gemma-3-270m"))}
    u = gemma["natural/replication/m1/steps300/paper/float32/t20"]
    assert u.extrapolated and u.fit.ci[0] < u.lengths.min()
    smol = {u.uid: u for u in CS.summarize(CA.load_artifact("smollm2-135m"))}
    v = smol["natural/replication/m2/steps300/paper/float32/t20"]
    assert not v.extrapolated and v.lengths.min() <= v.fit.ci[0] and v.fit.ci[1] <= v.lengths.max()
    assert not [w for w in smol.values() if w.fit is None and w.extrapolated]


def test_the_differences_from_the_authors_name_budget_kind_and_targets_of_the_units_given():
    """One list for chapters 3 and 5: the budget and patience are the units', the text or word list follows the
    kind, the targets a length are grouped by m (only counts below the authors' 20), and mixed budgets or no units are refused."""
    from types import SimpleNamespace

    def unit(m, n, kind="natural", steps=300, patience=100):
        return SimpleNamespace(m=m, n_targets=n, kind=kind, max_steps=steps, patience=patience)

    text = T.differences_from_authors([unit(1, 20), unit(2, 20), unit(3, 10)])
    assert "their 3000 steps with patience 500 against our 300 with patience 100" in text
    assert "ours, not theirs; 10 a length at m = 3 where the crossing is pinned, against their 20" in text
    assert "estimator (their sigmoid fitted to a fixed grid of lengths" in text
    assert "against their 20" not in T.differences_from_authors([unit(1, 20), unit(2, 20)])  # the same count
    assert "text (Austen against their PG19)" in text and "Q4_K_M" in text and "fails on Gemma" in text
    smol = T.differences_from_authors([unit(1, 10)], "smollm2-135m")
    assert "SmolLM2-135M-Instruct, GGUF Q4_1" in smol and "against their published code's fp16 autocast" in smol
    with pytest.raises(ValueError, match="fetched real models"):
        T.differences_from_authors([unit(1, 10)], "nano")
    words = T.differences_from_authors([unit(1, 10, kind="random_words", steps=600, patience=None)])
    assert "against our 600 with no patience" in words and "word list (ours against theirs)" in words
    with pytest.raises(ValueError, match="at least one"):
        T.differences_from_authors([])
    with pytest.raises(ValueError, match="one target kind and one budget"):
        T.differences_from_authors([unit(1, 20), unit(2, 20, steps=600)])


def test_a_budget_curve_never_pairs_two_stopping_rules():
    """Units of 300 steps with a patience of 100 that ended some trials, and 600 and 1,200 steps with none: the
    curve is the two no-patience budgets, not 300 → 1,200 (that pair would change the stopping rule too). A
    scaled patience (a third of each budget) is one curve; budget_moves pairs alike. A patience that never
    ended a trial (Gemma's 300-step units) is no patience, and such a unit joins the no-patience curve."""
    from types import SimpleNamespace

    from accessibility_lib.runs import cramming_budget as CB

    def unit(steps, patience, m=1, dtype="float32", fired=True):
        return SimpleNamespace(
            kind="natural",
            m=m,
            instrument="paper",
            state="complete",
            fit=SimpleNamespace(ok=True),
            dtype=dtype,
            max_steps=steps,
            patience=patience,
            n_targets=10,
            n_outcomes=50,
            disagreements=0,
            failures=20,
            failures_at_cap=20 if patience is None or not fired else 12,  # fired: 8 trials ended by patience
        )

    gemma = [unit(300, 100), unit(600, None), unit(1200, None)]
    assert [(u.max_steps, u.patience) for u in CB.budget_curve(gemma, "natural")["float32"]] == [
        (600, None),
        (1200, None),
    ]
    assert CB.budget_curve([unit(300, 100), unit(600, None)], "natural") == {}
    scaled = [unit(300, 100, dtype="bfloat16"), unit(600, 200, dtype="bfloat16")]
    assert [u.max_steps for u in CB.budget_curve(scaled, "natural")["bfloat16"]] == [300, 600]
    assert CB.budget_moves([unit(300, 100, m=2), unit(600, None, m=2)], "natural", 600, 300) == []
    assert [m for m, _, _ in CB.budget_moves([unit(300, None, m=2), unit(600, None, m=2)], "natural", 600, 300)] == [2]
    # a patience that never ended a trial ran the trials of no patience: it joins the no-patience curve
    quiet = [unit(300, 100, fired=False), unit(600, None), unit(1200, None)]
    assert [u.max_steps for u in CB.budget_curve(quiet, "natural")["float32"]] == [300, 600, 1200]
    assert CB.patience_share(unit(300, 100, fired=False)) == 1.0
    assert CB.patience_share(unit(300, 100)) == pytest.approx(1 / 3, abs=1e-6)


def test_an_n50_set_by_the_steepness_bound_is_flagged_placed_by_cap():
    """Gemma's random-words m = 2 (all crammed below n = 8, none above, some at 8) enters its slope with a point
    the steepness cap places; SmolLM2's natural m = 2 (20 targets) does not, and a progressive unit never is."""
    from accessibility_lib.runs import cramming_artifacts as CA
    from accessibility_lib.runs import cramming_summary as CS

    gemma = {u.uid: u for u in CS.summarize(CA.load_artifact("gemma-3-270m"))}
    u = gemma["random_words/replication/m2/steps300/paper/float32"]
    assert u.placed_by_cap and u.fit.capped_at is not None
    smol = {u.uid: u for u in CS.summarize(CA.load_artifact("smollm2-135m"))}
    assert not smol["natural/replication/m2/steps300/paper/float32/t20"].placed_by_cap
    assert not smol["natural/replication/m1/steps300/progressive/float32"].placed_by_cap
    slope = T.measured_slopes("gemma-3-270m")["random_words"]
    assert "the n50 point at m = 2 is set by the fit's steepness cap" in slope.describe()
    short = slope.describe(notes=False)  # a page that has named the flags once refers back to them
    assert "steepness cap" not in short and "some n50s at the edge of the lengths tried" in short
    assert short.split(" (")[0] == slope.describe().split(" (")[0]  # the same slope and interval


def test_edge_notes_name_each_flagged_m_once_in_one_wording():
    """One clause per flag, naming every m that carries it; none when no unit is flagged (chapters 3 and 5 and
    ``MeasuredSlope.describe`` all print these clauses)."""
    from types import SimpleNamespace

    from accessibility_lib.runs import cramming_summary as CS

    def unit(m, ext=False, cap=False):
        return SimpleNamespace(m=m, extrapolated=ext, placed_by_cap=cap)

    assert CS.edge_notes([unit(1), unit(2)]) == []
    notes = CS.edge_notes([unit(1, ext=True), unit(2, cap=True), unit(3, ext=True)])
    assert len(notes) == 2
    assert notes[0].startswith("the n50 intervals at m = 1, 3 have an end past the lengths tried")
    assert notes[1].startswith("the n50 point at m = 2 is set by the fit's steepness cap")


def test_facing_ends_read_only_the_ends_that_face_each_other():
    """Above: a token or more between the lower n50's upper end and the higher one's lower end, both within the
    lengths tried; overlap; unsettled: disjoint by under a token, or by an end placed past the lengths tried
    (the other two ends play no part)."""
    from types import SimpleNamespace

    import numpy as np

    from accessibility_lib.runs import cramming_budget as CB

    def unit(lo, hi, lengths):
        return SimpleNamespace(fit=SimpleNamespace(ci=(lo, hi)), lengths=np.array(lengths, float))

    assert CB.facing_ends(unit(14, 19, [14, 20]), unit(21.5, 60, [20, 25]))[0] == "above"  # far end 60: no part
    assert CB.facing_ends(unit(14, 22, [14, 24]), unit(21.5, 30, [20, 30]))[0] == "overlap"
    verdict, why = CB.facing_ends(unit(14, 21.0, [14, 24]), unit(21.5, 30, [20, 30]))
    assert verdict == "unsettled" and "by only 0.50 tokens" in why
    verdict, why = CB.facing_ends(unit(24, 34.8, [21, 32]), unit(35.0, 45, [35, 43]))
    assert verdict == "unsettled" and "upper end 34.8 lies past its longest length tried, 32" in why
    verdict, why = CB.facing_ends(unit(10, 15, [10, 16]), unit(18, 25, [20, 26]))
    assert verdict == "unsettled" and "lower end 18.0 lies below its shortest length tried, 20" in why


def test_curve_trend_separates_a_rising_curve_from_a_flat_one():
    """Gemma's natural m = 1 curve (9.1 [5.3, 18.0] → 12.0 [8.0, 15.3] → 15.0 [13.1, 17.8]: overlapping ends, the
    point up 2.9 and 3.0 tokens) is "rising", not "flat"; nano's (+2 %, +0 %) is "flat"; disjoint ends "growing"."""
    from types import SimpleNamespace

    import numpy as np
    import pytest

    from accessibility_lib.runs import cramming_budget as CB

    def unit(n50, lo, hi, lengths=(4, 20)):
        return SimpleNamespace(fit=SimpleNamespace(n50=n50, ci=(lo, hi)), lengths=np.array(lengths, float))

    gemma = [unit(9.1, 5.3, 18.0), unit(12.0, 8.0, 15.3), unit(15.0, 13.1, 17.8)]
    assert CB.curve_trend(gemma) == "rising"
    assert CB.curve_trend([unit(3.77, 3.3, 4.3), unit(3.85, 3.4, 4.3), unit(3.85, 3.4, 4.4)]) == "flat"
    assert CB.curve_trend([gemma[0], unit(12.0, 8.0, 15.3), unit(11.5, 9.0, 14.0)]) == "flat"  # one step down
    # Gemma's random words (5.1 → 6.0 → 8.0): a first step under a token, but 2.9 tokens over two steps, none down
    assert CB.curve_trend([unit(5.1, 4.4, 7.5), unit(6.0, 5.0, 8.0), unit(8.0, 7.3, 9.1)]) == "rising"
    assert CB.curve_trend([unit(5.1, 4.4, 7.5), unit(6.0, 5.0, 8.0), unit(6.5, 5.5, 8.0)]) == "flat"  # 1.4 in two steps
    assert CB.curve_trend([unit(18.8, 17, 19), unit(29.3, 27, 32, (20, 40))]) == "growing"
    with pytest.raises(ValueError, match="two or more budgets"):
        CB.curve_trend(gemma[:1])


def test_edge_notes_of_reads_fits_as_units_do():
    """Chapter 3's own runs are fits, not units: an interval end past the lengths tried and a point set by the
    steepness cap are named as for the real models' units; an open interval or a failed fit is never flagged."""
    from types import SimpleNamespace

    from accessibility_lib.runs import cramming_summary as CS

    def fit(lo, hi, step=None, capped_at=None, ok=True, ci_open=(False, False)):
        return SimpleNamespace(ok=ok, ci=(lo, hi), ci_open=ci_open, step=step, capped_at=capped_at)

    notes = CS.edge_notes_of([(1, fit(2.0, 3.0, step=2), [1, 2, 3]), (2, fit(3.0, 4.0), [3, 4]),
                              (4, fit(5.0, 7.8), [4, 5, 6])])  # fmt: skip
    assert notes == [
        "the n50 interval at m = 4 has an end past the lengths tried, placed by the fitted curve's shape",
        "the n50 point at m = 1 is set by the fit's steepness cap, the data placing it only within its interval",
    ]
    assert CS.edge_notes_of([(1, fit(0.5, 9.0, ci_open=(True, False)), [1, 2]), (2, fit(1, 2, ok=False), [1])]) == []


def test_the_budget_condition_is_never_said_to_hold_on_point_estimates():
    """The stored SmolLM2 float32 pairs at 300 and 600 steps: where the moves grow with m only in their point
    estimates, the text says "indicated, not established"; where they do not grow, "not established"; Gemma,
    with a 600-step unit at one m only (as this artifact stands), is untested."""
    from accessibility_lib.runs import cramming_artifacts as CA
    from accessibility_lib.runs import cramming_budget as CB
    from accessibility_lib.runs import cramming_summary as CS

    smol = CS.summarize(CA.load_artifact("smollm2-135m"))
    for kind in ("natural", "random_words"):
        pairs = CB.budget_moves(smol, kind, 600, 300)
        moves = [b.fit.n50 - a.fit.n50 for _, a, b in pairs]
        text = CB.budget_condition_text(smol, kind, 300)
        assert len(pairs) >= 2 and "holds" not in text and "not established" in text
        grows = all(y >= x for x, y in zip(moves, moves[1:]))
        settled = all(CB.facing_ends(a, b)[0] == "above" for _, a, b in pairs)
        assert ("indicated, not established" in text) == (grows and settled)
        assert ("do not grow at every step in m" in text) == (not grows)
    gemma = CS.summarize(CA.load_artifact("gemma-3-270m"))
    if len(CB.budget_moves(gemma, "natural", 600, 300)) < 2:
        assert "untested" in CB.budget_condition_text(gemma, "natural", 300)


def test_edge_notes_name_the_m_whose_rates_never_reach_the_plateau_top():
    """A unit whose success rates stay below PLATEAU_TOP at every length tried is named, with its highest rate;
    one that reaches it is not (fabricated units, then the stored Gemma natural slope's own units)."""
    from types import SimpleNamespace

    from accessibility_lib.runs import cramming_artifacts as CA
    from accessibility_lib.runs import cramming_summary as CS

    low = SimpleNamespace(m=1, rates=np.array([0.2, 0.65, 0.4]))
    high = SimpleNamespace(m=2, rates=np.array([1.0, 0.5, 0.0]))
    (note,) = CS.edge_notes([low, high])
    assert note.startswith("at m = 1 no length tried crams 75 % of its targets (at most 65 %)") and "m = 2" not in note
    assert CS.edge_notes([high]) == []
    assert CS.plateau_note([low]) == note and CS.plateau_note([high]) == ""  # the clause said alone of one unit
    pts, _ = CS.slopes(CS.summarize(CA.load_artifact("gemma-3-270m")), 300, instrument="paper", dtype="float32")[
        "natural"
    ]
    below = [u.m for u in pts if max(u.rates) < CS.PLATEAU_TOP]
    plateau = [n for n in CS.edge_notes(pts) if "plateau" in n]
    assert bool(below) == bool(plateau) and all(f"{m}" in plateau[0] for m in below)


def test_complete_budgets_need_every_m_complete_and_ignore_partial_units():
    """A budget is a Table 1 column only once all of m = 1-4 are complete there (no partial state, no disagreement)."""
    from types import SimpleNamespace

    def u(m, steps, state="complete", kind="natural", disagreements=0, instrument="paper", dtype="float32"):
        return SimpleNamespace(kind=kind, m=m, max_steps=steps, state=state, disagreements=disagreements,
                               instrument=instrument, dtype=dtype, fit=SimpleNamespace(ok=True))  # fmt: skip

    base = [u(m, 300) for m in (1, 2, 3, 4)] + [u(m, 600) for m in (1, 2, 3, 4)]
    assert T.complete_budgets(base, "natural") == [300, 600]
    late = base + [u(1, 3000), u(2, 3000), u(3, 3000), u(4, 3000, state="partial")]
    assert T.complete_budgets(late, "natural") == [300, 600]  # 3000 steps: m = 4 still running
    assert T.complete_budgets(late[:-1] + [u(4, 3000)], "natural") == [300, 600, 3000]
    assert T.complete_budgets(base[:-1] + [u(4, 600, disagreements=1)], "natural") == [300]
    assert T.complete_budgets(base[:-1] + [u(4, 600, instrument="authors")], "natural") == [300]
    assert T.complete_budgets(base, "random_words") == []
    assert T.complete_budgets(base[:2], "natural", ms=(1, 2)) == [300]


def test_slopes_by_budget_read_every_complete_budget_of_the_stored_smollm2_artifact():
    by_budget = T.slopes_by_budget("smollm2-135m")
    assert set(by_budget) >= {300, 600}
    for budget, by_kind in by_budget.items():
        for kind, s in by_kind.items():
            assert {u.max_steps for u in s.units} == {budget} and {1, 2, 3, 4} <= {u.m for u in s.units}
            same = T.measured_slopes("smollm2-135m", max_steps=budget)[kind]  # the same slope, one budget
            assert (s.fit.slope, s.fit.ci, [u.uid for u in s.units]) == (
                same.fit.slope,
                same.fit.ci,
                [u.uid for u in same.units],
            )
    # the slope rises with the budget at SmolLM2's natural text (so Table 1's ratio falls)
    assert by_budget[600]["natural"].fit.slope > by_budget[300]["natural"].fit.slope


def test_real_models_are_read_from_the_stored_artifacts(tmp_path):
    """A real model crammed with the documented command appears with no chapter edited; the book's own do not."""
    import json
    import shutil

    from accessibility_lib.runs import cramming_artifacts as CA
    from accessibility_lib.runs.real_models import with_cramming_artifacts

    found = with_cramming_artifacts()
    assert {"smollm2-135m", "gemma-3-270m"} <= set(found) and not {"nano", "nano-mamba"} & set(found)
    shutil.copy(CA.ARTIFACT_DIR / "nano.json", tmp_path / "nano.json")
    (tmp_path / "radii.json").write_text(json.dumps({"smollm2-135m": {"d_model": 576}}))
    new = json.loads((CA.ARTIFACT_DIR / "smollm2-135m.json").read_text())
    new["model"] = "acme/pythia-70m"
    (tmp_path / "acme__pythia-70m.json").write_text(json.dumps(new))
    (tmp_path / "broken.json").write_text("{not json")
    assert with_cramming_artifacts(tmp_path) == ["acme/pythia-70m"]
