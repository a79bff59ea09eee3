"""The introduction's findings (accessibility_lib.runs.findings): each number against an independent computation."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from accessibility_lib.experiments.slope_fit import fit_slope
from accessibility_lib.runs import findings as F
from accessibility_lib.runs.table1_measured import MeasuredSlope
from accessibility_lib.theory import meanfield, paper


def test_bound_is_the_replication_codes_ball_slope_for_pythia_160m():
    f = F.bound_finding()
    # Pythia-160M: d = 768, |V| = 50304 (the authors' models list); 2r/ε = 4096 under r = r∞, ε = r∞·2^-11
    assert f.values["two_r_over_eps"] == 4096.0
    assert f.values["C"] == pytest.approx(768 * math.log(4097) / math.log(50304))
    assert "590.09" in f.sentence and f.chapter == "01_theory"
    assert "the authors' public replication code" in f.sentence  # the first mention in the book says whose code


def _slope(points, ci, steps=300):
    fit = fit_slope([1, 2, 3], points, n50_ci=ci)
    return MeasuredSlope("smollm2-135m", "natural", fit, [SimpleNamespace(max_steps=steps, m=1)], "", float("nan"))


def test_cramming_finding_gives_every_budgets_slope_with_its_interval():
    s300 = _slope([10.0, 20.0, 30.5], [(9, 11), (19, 21), (29, 32)])
    s600 = _slope([14.0, 28.0, 43.0], [(12, 15), (26, 30), (40, 46)], steps=600)
    f = F.cramming_finding({600: s600, 300: s300})
    assert f.values["slopes"] == {300: pytest.approx(s300.fit.slope), 600: pytest.approx(s600.fit.slope)}
    assert list(f.values["slopes"]) == [300, 600]  # in budget order
    lo, hi = s600.fit.ci
    assert f"{s300.fit.slope:.1f}" in f.sentence and "at 300 optimisation steps a target" in f.sentence
    assert f"and {s600.fit.slope:.1f} [{lo:.1f}, {hi:.1f}] at 600" in f.sentence and "3,000 steps" in f.sentence
    with pytest.raises(ValueError, match="no reliable"):
        F.cramming_finding({})


def test_only_budgets_with_every_m_complete_count():
    def unit(m, steps, state="complete", kind="natural"):
        return {"kind": kind, "m": m, "max_steps": steps, "instrument": "paper", "dtype": "float32", "state": state}

    art = {
        "units": [unit(m, 300) for m in (1, 2, 3, 4)] + [unit(m, 600) for m in (1, 2, 3)] + [unit(4, 600, "partial")]
    }
    assert F.complete_budgets(art) == [300]
    art["units"][-1]["state"] = "complete"
    assert F.complete_budgets(art) == [300, 600]
    assert F.complete_budgets(art, "random_words") == []


def test_mean_field_crossover_is_said_as_a_number_of_vectors():
    f = F.mean_field_finding()
    ln_m = meanfield.crossover_log_m(768, 2048.0, 1.0, 1.0)
    assert f.values["digits"] == math.floor(ln_m / math.log(10)) + 1 == f.values["power"] + 1
    assert f"longer than about $10^{{{f.values['power']}}}$ vectors" in f.sentence and "digits" not in f.sentence


def test_precision_bound_counts_each_formats_whole_finite_range():
    from accessibility_lib.theory import fp_grid

    f = F.precision_finding()
    pm = paper.models()["Pythia-160M"]
    for dt in ("bf16", "fp16", "fp32"):  # the bound: every finite value of a coordinate, d times over
        fmt = fp_grid.get_format(dt)
        n_all = 2 * (2**fmt.exponent_bits - 1) * 2**fmt.mantissa_bits - 1  # finite values, ±0 once
        assert f.values["C"][dt] == pytest.approx(pm.d_model * math.log(n_all) / math.log(pm.d_vocab), rel=1e-9)
        # the paper's geometry: the cube of half-width r∞ of h, labelled as such, not as the bound
        want_h = pm.d_model * math.log(fp_grid.count_in_interval(pm.r_inf, dt)) / math.log(pm.d_vocab)
        assert f.values["C_h_cube"][dt] == pytest.approx(want_h, rel=1e-9) and want_h < f.values["C"][dt]
    # the referee's recomputation for Pythia-160M: 786 (bf16), 785 (fp16), 1573 (fp32) over the whole range
    assert [round(f.values["C"][dt]) for dt in ("bf16", "fp16", "fp32")] == [786, 785, 1573]
    assert "786 in bf16, 785 in fp16 and 1573 in fp32" in f.sentence and "rather than a theorem" in f.sentence
    assert f.values["grid"] == pytest.approx(768 * math.log(4097) / math.log(50304))


def test_table1_finding_sets_ours_beside_the_papers_ranges():
    s300 = _slope([10.0, 20.0, 30.5], [(9, 11), (19, 21), (29, 32)])
    s600 = _slope([14.0, 28.0, 43.0], [(12, 15), (26, 30), (40, 46)], steps=600)
    f = F.table1_finding({300: s300, 600: s600})
    t1 = paper.table1()["ball (Cor 4.6)"]
    assert f.values["paper"]["ball (Cor 4.6)"] == (min(t1.values()), max(t1.values()))
    assert f.values["ball"] > f.values["cells"] > 0  # the refined support lowers C
    assert f"{min(t1.values()):g}–{max(t1.values()):g}" in f.sentence
    # the ratio divides by the largest budget's slope; the base budget's ratio stands beside it
    assert f.values["steps"] == 600 and f.values["budget"] == paper.AUTHORS_CRAMMING_STEPS["max_steps"] / 600
    ball_300 = f.values["ball"] * s600.fit.slope / s300.fit.slope
    assert f"at 600 optimisation steps ({ball_300:.1f} and" in f.sentence and "× our largest step budget" in f.sentence
    one = F.table1_finding({300: s300})
    assert one.values["steps"] == 300 and " at 300 optimisation steps, against" in one.sentence


def test_copying_finding_reads_the_stored_fine_tune():
    f = F.copying_finding()
    if f is None:
        pytest.skip("no finished SmolLM2 fine-tune is stored")
    assert f.values["L"] >= 1 and f.values["log10_nstar"] > 100  # n* has hundreds of digits or more
    # digits counted as chapter 4 counts them: floor(log10 n*) + 1
    assert f.values["digits"] == math.floor(f.values["log10_nstar"]) + 1
    assert f"n* has {f.values['digits']:,} digits" in f.sentence
    assert f.chapter == "06_copying"


@pytest.mark.slow
def test_the_fast_slope_is_the_chapters_slope():
    """Re-fitting only the base-budget natural units gives the slope table1_measured gives from the whole artifact."""
    from accessibility_lib.runs import table1_measured

    for steps in (300, 600):
        fast = F.measured_slope(max_steps=steps)
        full = table1_measured.measured_slopes("smollm2-135m", max_steps=steps)["natural"]
        assert fast.fit.slope == pytest.approx(full.fit.slope) and fast.fit.ci == pytest.approx(full.fit.ci)
        assert [u.uid for u in fast.units] == [u.uid for u in full.units]


@pytest.mark.slow
def test_findings_cover_the_chapters_in_order():
    found = F.findings()
    stems = [f.chapter for f in found]
    assert stems[:4] == ["01_theory", "03_cramming", "04_mean_field", "05_support"] and stems[-1] == "07_precision"
    assert 5 <= len(found) <= 7 and all(f.sentence.endswith(".") for f in found)
