"""Chapter 5's Table 1 presentation: one column per complete budget, read from the stored artifacts, and the
tables, notes and figures the chapter and its lab notes print from them."""

from __future__ import annotations

import json
import math
import shutil
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import pytest

from accessibility_lib.experiments.slope_fit import fit_slope
from accessibility_lib.figures import resolved_report as RR
from accessibility_lib.figures import support_reading as SRd
from accessibility_lib.figures import support_report as SR
from accessibility_lib.figures import table1_plots
from accessibility_lib.figures import table1_report as T1
from accessibility_lib.figures import table1_slopes as TS
from accessibility_lib.geometry import support, table1
from accessibility_lib.geometry import table1_resolved as T1R
from accessibility_lib.runs import cramming_artifacts as CA
from accessibility_lib.runs import table1_measured as TM
from accessibility_lib.runs.real_models import with_cramming_artifacts
from accessibility_lib.theory import paper

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def report():
    """The report the chapter builds when no real model is computed: every support row from its stored artifact."""
    return T1.build([])


def test_every_real_model_with_artifacts_gets_a_column_per_complete_budget(report):
    assert set(report.measured) == set(with_cramming_artifacts())
    for m, by_budget in report.measured.items():
        summaries = report.summaries[m]
        for kind in T1.KINDS:
            want = TM.complete_budgets(summaries, kind)
            got = sorted(
                c.budget for c in report.columns if c.model == m and c.kind == kind and c.method == "argmax_region"
            )
            assert got == [b for b in want if by_budget[b][kind].reliable]
    smol = sorted(c.budget for c in report.natural() if c.model == "smollm2-135m")
    assert smol[:2] == [300, 600]  # the budgets complete today; 3000-step columns join when complete
    assert all("support rows from its stored artifact" in n for n in report.notes)


def test_each_entry_is_the_row_over_its_budget_slope_with_the_slope_interval(report):
    for c in report.columns:
        for name in ("ball", "cone", "ellipsoid"):
            r, (lo, hi) = TM.ratio(c.C[name], c.slope.fit)
            assert c.cells[name] == f"{r:.1f} [{lo:.1f}, {hi:.1f}]"
        assert c.C["ball"] == report.supports[c.model].columns[c.method].rows["ball"].C
        assert {u.max_steps for u in c.slope.units} == {c.budget}
        cells = c.cells["ellipsoid + non-uniform cells"]
        assert cells.endswith("§") == c.resolved and (c.method == "argmax_region") == c.resolved
        assert cells.endswith("¶") == (c.method == "voronoi_box")
    # the SmolLM2 natural-text ratio falls from 300 to 600 steps: its slope rises with the budget
    smol = {c.budget: c for c in report.natural() if c.model == "smollm2-135m"}
    assert smol[600].ball_ratio[0] < smol[300].ball_ratio[0]


def test_compact_table_labels_each_column_with_its_budget_and_sets_the_paper_beside(report):
    head, rows = T1.compact_table(report)
    ours = report.natural()
    assert head[:3] == ["support model", "paper: Gemma-270M", "paper: range over its 7 models"]
    assert head[3:] == [f"ours: {c.title}" + (" ‡" if c.edge else "") for c in ours] and all(
        f"{c.budget} steps" in h for c, h in zip(ours, head[3:])
    )
    # the ‡ footnote the chapter prints under this table is for columns whose header carries ‡
    dagger = any(n.startswith("‡") for n in T1.footnotes(report, ours))
    assert dagger == any(h.endswith("‡") for h in head[3:])
    assert [r[0] for r in rows[:5]] == list(table1.ROWS)
    assert rows[0][1] == paper.table1_text()["ball (Cor 4.6)"]["Gemma-270M"] and rows[0][2] == "7.77–20.4"
    assert all(len(r) == len(head) for r in rows)
    head_p, rows_p = T1.paper_table()
    assert len(head_p) == 1 + len(paper.TABLE1_COLUMNS) and rows_p[-1][0].startswith("2r/ε")


def test_our_table_one_model_one_budget_both_methods_both_kinds(report):
    head, rows = T1.our_table(report, "smollm2-135m", 600)
    assert head[0] == "support model (ours: SmolLM2-135M, 600 steps)" and len(head) == 5
    assert any(h.startswith("Voronoi box / natural text") for h in head)
    assert T1.our_table(report, "smollm2-135m", 12345)[1] == []


def test_footnotes_explain_only_the_symbols_used(report):
    nat = report.natural()
    notes = T1.footnotes(report, nat)
    assert not any(n.startswith("¶") for n in notes)  # the natural argmax-region columns have no Voronoi cells row
    assert any(n.startswith("§") for n in notes) and any(n.startswith("†") for n in notes)
    assert any(n.startswith("¶") for n in T1.footnotes(report))
    assert T1.footnotes(report, []) == []


def test_headline_gives_the_model_with_most_budgets_and_the_paper_range(report):
    h = T1.headline(report)
    assert h["model"] == "smollm2-135m" and [b for b, *_ in h["budgets"]][:2] == [300, 600]
    last = h["budgets"][-1]
    assert f"{last[1]:.1f}× [{last[2][0]:.1f}, {last[2][1]:.1f}]" in h["text"]
    assert "the ratio falls as the budget grows" in h["text"] and "7.77–20.4×" in h["text"]
    assert "Gemma-3-270M" in h["text"] and h["paper_gemma"] == pytest.approx(11.52)
    assert T1.headline(T1.Table1Report([], {}, {}, {})) == {}


def _col(model, budget, slope_value, C=450.0):
    fit = fit_slope([1, 2, 3, 4], [slope_value * m for m in (1, 2, 3, 4)],
                    n50_ci=[(slope_value * m - 1, slope_value * m + 1) for m in (1, 2, 3, 4)])  # fmt: skip
    s = SimpleNamespace(fit=fit, units=[], reliable=True)
    return T1.OurColumn(model, "argmax_region", "natural", budget, s, {}, {"ball": C})


def test_the_budget_sentence_says_falls_only_when_every_model_falls():
    falling = T1.Table1Report([_col("a", 300, 10.0), _col("a", 600, 20.0)], {}, {}, {})
    assert SRd.budget_sentence(falling).startswith("The ratio falls as the budget grows")
    # the condition behind "overstates" is indicated, not established: said so, with the budget pairs linked
    said = SRd.budget_sentence(falling)
    assert "likely overstates" in said and "<sec-cramming-budgets>" in said
    rising = T1.Table1Report([_col("a", 300, 20.0), _col("a", 600, 10.0), _col("b", 300, 5.0)], {}, {}, {})
    assert SRd.budget_sentence(rising).startswith("The ratio does not fall with the budget for a.")
    single = T1.Table1Report([_col("a", 300, 20.0)], {}, {}, {})
    assert "one complete budget" in SRd.budget_sentence(single)


def test_a_new_real_model_without_a_support_artifact_is_noted_with_its_command(tmp_path):
    for name in ("smollm2-135m.json", "nano.json"):
        shutil.copy(CA.ARTIFACT_DIR / name, tmp_path / name)
    new = json.loads((CA.ARTIFACT_DIR / "smollm2-135m.json").read_text())
    new["model"] = "acme/pythia-70m"
    (tmp_path / "acme__pythia-70m.json").write_text(json.dumps(new))
    rep = T1.build([], cramming_folder=tmp_path, kinds=("natural",))
    assert {c.model for c in rep.columns} == {"smollm2-135m"}
    assert any("support_artifact.py --model acme/pythia-70m" in n for n in rep.notes)


def test_trust_notes_link_the_lab_notes_and_meaning_reads_the_table(report):
    notes = SRd.trust_notes(report)
    for label in (
        "lab-support-slopes",
        "sec-rows-eps",
        "sec-support-sample",
        "sec-cells-resolved",
        "lab-support-gemma",
    ):
        assert sum(f"<{label}>" in n for n in notes) == 1
    assert f"{paper.AUTHORS_CRAMMING_STEPS['max_steps']:,}" in notes[0] and "300 and 600" in notes[0]
    assert "likely" in notes[0] and "<sec-cramming-budgets>" in notes[0] and "upper estimate" not in notes[0]
    m = SRd.meaning(report)
    assert 0 < m["drop_lo"] <= m["drop_hi"] < 100
    assert m["budget"]["first"][1] > m["budget"]["last"][1] > m["tightest"]["ratio"] > 1
    assert SRd.trust_notes(T1.Table1Report([], {}, {}, {})) == []


def test_the_paper_epsilon_only_raises_a_ball_ratio(report):
    c = report.natural()[0]
    ours = math.log2(report.supports[c.model].columns[c.method].rows["ball"].two_r_over_eps)
    assert SRd.ball_ratio_at(c, report, ours) == pytest.approx(c.ball_ratio[0])
    assert SRd.ball_ratio_at(c, report, ours + 2) > c.ball_ratio[0]


def test_empty_share_bound_is_clopper_pearson_and_checks_its_counts():
    assert SRd.empty_share_bound(0, 1000) == pytest.approx(1 - 0.05 ** (1 / 1000), rel=1e-9)
    assert SRd.empty_share_bound(5, 5) == 1.0
    for bad in ((-1, 10), (11, 10), (0, 0)):
        with pytest.raises(ValueError, match="need 0 <= empty"):
            SRd.empty_share_bound(*bad)


def test_lab_tables_have_one_cell_per_column(report):
    tables = [TS.slope_notes_table(report), TS.decode_paths_table(report), TS.differences_table(report),
              TS.same_targets_table(report), TS.m1_table(report), TS.random_words_table(report), TS.eps_table(report),
              SR.geometry_table(report.supports.values()), SR.cells_table(report.supports.values()),
              SR.row_ratio_table(report.supports.values(), report.resolved), SR.conv_slope_table(),
              *(SR.rows_table(s) for s in report.supports.values())]  # fmt: skip
    arts, _ = T1R.load_resolved(["nano", *report.resolved])
    full = {m: a for m, a in arts.items() if "inputs" in a}
    tables += [RR.d_table(full), RR.empty_share_table(full), RR.ratios_at_implied_table(arts), RR.convergence_table(arts),
               *RR.like_for_like_table(arts, report.supports), RR.gemma_radii_table(report.supports["gemma-3-270m"], arts),
               *(RR.rows_table(a) for a in full.values())]  # fmt: skip
    for head, rows in tables:
        assert rows and all(len(r) == len(head) for r in rows), head
    m1 = {(r[0], r[1]): r[3] for r in TS.m1_table(report)[1]}
    assert m1["Gemma-3-270M", "random words"].startswith("≤ 10.00")  # their sweep starts at 10: a bound
    assert m1["Gemma-3-270M", "natural text"].startswith("17.07")
    loop = [r[3] for r in TS.differences_table(report)[1] if r[0] == "every model"]
    assert [x.split(":")[0] for x in loop] == [f"cramming loop, {step}" for step, *_ in TS.LOOP_DIFFERENCES]
    assert "raises our n50" in loop[0] and "lowers their n50" in loop[1] and "raises their n50" in loop[2]
    same = {(r[0], r[2]): r for r in TS.same_targets_table(report)[1] if r[1] == "natural text"}
    assert same["SmolLM2-135M", "300 → 600"][3].count("m = ") == 4
    assert len(SR.conv_slope_table()[1]) == len(paper.TABLE1_COLUMNS)
    assert RR.brute_force_check(full["nano"], full)[0].endswith("cells.")
    assert "gap is unexplained" in RR.gemma_radii_notes(report.supports["gemma-3-270m"])[0]
    assert RR.gemma_radii_table(None, arts)[1] == [] and "scripts/support_artifact.py" in RR.gemma_radii_notes(None)[0]


def test_budget_figure_draws_one_line_a_model_and_the_paper_at_its_budget(report):
    fig = table1_plots.budget_ratio_figure(report.natural(), paper.table1()["ball (Cor 4.6)"], 3000)
    ax = fig.axes[0]
    assert len(ax.containers) == len({c.model for c in report.natural()})  # one errorbar series a model
    assert 3000 in ax.get_xticks()
    with pytest.raises(ValueError, match="at least one column"):
        table1_plots.budget_ratio_figure([], {}, 3000)
    assert table1_plots.length_figure(list(report.supports.values())).axes  # artifacts have no per-length fits


def test_run_models_shows_an_unavailable_model_from_its_artifact(tmp_path):
    results, notes = SR.run_models([], ["smollm2-135m", "no-such-model"], {}, None)
    assert [r.name for r in results] == ["smollm2-135m"] and results[0].source["command"]
    assert "shown from its stored artifact" in notes[0] and "support_artifact.py --model no-such-model" in notes[1]
    assert support.load_artifact("smollm2-135m").columns.keys() == results[0].columns.keys()


def test_the_headline_says_falls_only_when_the_ratio_falls():
    falling = T1.Table1Report([_col("a", 300, 10.0), _col("a", 600, 20.0)], {}, {}, {})
    assert "the ratio falls as the budget grows" in T1.headline(falling)["text"]
    rising = T1.Table1Report([_col("a", 300, 20.0), _col("a", 600, 10.0)], {}, {}, {})
    text = T1.headline(rising)["text"]
    assert "falls as" not in text and "does not fall" in text and "45.0× [" in text  # 450 / 10 at 600 steps


def test_headline_says_what_the_last_budgets_slope_rests_on(report):
    text = T1.headline(report)["text"]
    last = max((c for c in report.natural() if c.model == "smollm2-135m"), key=lambda c: c.budget)
    n_t = {u.n_targets for u in last.slope.units}
    assert f"The {last.budget}-step slope rests on {min(n_t) if len(n_t) == 1 else ''}" in text
    assert text.index(f"at {last.budget} steps") < text.index("at 300")  # the largest budget first, 300 beside it


def test_lab_summary_puts_the_gemma_exponents_in_the_box(report):
    from accessibility_lib.figures import resolved_report as RR

    lines = RR.lab_summary(report)
    a, b = RR.paper_radii_exponents()["Gemma-270M"]
    assert 1 <= len(lines) <= 5
    assert any(f"2r/ε = 2^{b:.1f}" in line and f"2^{a:.1f}" in line and "lab-support-gemma" in line for line in lines)
    assert all("{doc}`chapter 5 <05_support>`" in line for line in lines)
