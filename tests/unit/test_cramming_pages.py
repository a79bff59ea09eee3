"""Chapter 3's presentation library (``accessibility_lib/figures/cramming_*.py``, ``runs/real_models.py``).

The chapter and its lab notes call these functions; here they run on the stored artifacts and benchmarks
(``book/data/cramming``) with synthetic "own runs" in place of the chapter's cramming, so nothing is crammed.
"""

from __future__ import annotations

import copy
import json
import re
from types import SimpleNamespace

import numpy as np
import pytest
from IPython.display import Markdown

from accessibility_lib.experiments.fitting import fit_sigmoid, logistic
from accessibility_lib.experiments.n50_bound import efficiency_interval
from accessibility_lib.figures import (
    cramming_authors,
    cramming_budgets,
    cramming_instruments,
    cramming_intervals,
    cramming_real,
    cramming_search,
)
from accessibility_lib.figures import cramming_plots as CP
from accessibility_lib.figures import cramming_report as CR
from accessibility_lib.figures.cramming_context import (
    CrammingContext,
    RealModels,
    at_cap,
    load_benchmarks,
    load_real,
    own_slopes,
    paper_refit,
)
from accessibility_lib.models.names import label
from accessibility_lib.runs import cramming_artifacts as CA
from accessibility_lib.runs import cramming_budget as CB
from accessibility_lib.runs import table1_measured
from accessibility_lib.runs.real_models import with_cramming_artifacts
from accessibility_lib.theory import bounds, precision

PARAMS = {"model_name": "nano", "kinds": ["natural", "random_words"], "ms": [1, 2, 3], "max_steps": 20, "patience": 10,
          "n_targets": 10, "length_convention": "first_given", "eps_convention": "rinf_fp16", "n_embed_prompts": 8,
          "embed_length": 4}  # fmt: skip


def _run(n50: float, k: float = 1.5):
    lengths = np.array([n50 - 2, n50 - 1, n50, n50 + 1, n50 + 2]).round()
    rates = np.round(logistic(lengths, n50, k) * 10) / 10
    outcomes = [{"success": i < int(r * 10), "steps": 5 if i < int(r * 10) else 20} for r in rates for i in range(10)]
    return SimpleNamespace(fit=fit_sigmoid(lengths, rates, 10), lengths=lengths, rates=rates, trials=np.full(5, 10.0),
                           outcomes=outcomes, token_steps=1234)  # fmt: skip


def _ctx(real: RealModels, bench: dict | None = None) -> CrammingContext:
    runs = {
        (kind, m): _run(4.0 * m + (2 if kind == "natural" else 0)) for kind in PARAMS["kinds"] for m in PARAMS["ms"]
    }
    slopes, points = own_slopes(runs, PARAMS)
    C_by_conv = {}
    for name, conv in precision.CONVENTIONS.items():
        r, eps = conv.ball(20.0, 7.0)
        C_by_conv[name] = bounds.ball_slope(128, r, eps, 4096)
    return CrammingContext(PARAMS, SimpleNamespace(d_model=128, d_vocab=4096), runs, slopes, points, 20.0, 7.0,
                           C_by_conv, paper_refit(), real, {}, bench if bench is not None else load_benchmarks())  # fmt: skip


@pytest.fixture(scope="module")
def real():
    return load_real()


@pytest.fixture(scope="module")
def ctx(real):
    return _ctx(real)


def _text(items) -> str:
    return "\n".join(i.data if isinstance(i, Markdown) else str(i) for i in items)


def test_real_models_are_read_from_the_artifacts(tmp_path):
    def artifact(name):
        (tmp_path / f"{name.replace('/', '__')}.json").write_text(json.dumps({"model": name, "units": []}))

    assert with_cramming_artifacts(tmp_path) == []
    artifact("nano")  # a book model, not a real one
    (tmp_path / "radii.json").write_text("{}")  # not a cramming artifact
    artifact("gemma-3-270m")
    assert with_cramming_artifacts(tmp_path) == ["gemma-3-270m"]
    artifact("smollm2-135m")
    assert with_cramming_artifacts(tmp_path) == ["smollm2-135m", "gemma-3-270m"]  # smallest first
    artifact("acme/pythia-70m")  # a hub model crammed elsewhere comes after the offline ones
    assert with_cramming_artifacts(tmp_path) == ["smollm2-135m", "gemma-3-270m", "acme/pythia-70m"]


def test_at_cap_counts_failures_at_the_budget():
    r = SimpleNamespace(
        outcomes=[{"success": False, "steps": 20}, {"success": False, "steps": 7}, {"success": True, "steps": 3}]
    )
    assert at_cap(r, 20) == "1/2"
    assert at_cap(SimpleNamespace(outcomes=[{"success": True, "steps": 3}]), 20) == "no failure"


def test_own_slopes_follow_the_synthetic_n50s(ctx):
    assert set(ctx.slopes) == {"natural", "random_words"}
    assert ctx.slopes["natural"].slope == pytest.approx(4.0, abs=0.6)  # n50 = 4m + 2


def test_answer_gives_the_real_slope_and_its_ratio(ctx, real):
    name = next(n for n in real.names if (n, "natural") in real.slopes and real.slopes[n, "natural"][0].reliable)
    s = real.slopes[name, "natural"][0]
    C = CR.ball_C(real.shapes[name].d_model, real.shapes[name].d_vocab)
    r, _ = table1_measured.ratio(C, s)
    text = CR.answer(ctx)["cram_answer"]
    assert label(name) in text and name not in text  # the authors' name, not the artifact's key
    assert f"{s.slope:.1f}" in text and f"about {r:.0f} times" in text
    assert all(len(sent.split()) <= 30 for sent in re.split(r"(?<=\.) ", text))  # the opening box parses
    for steps, fit in CR.larger_budget_slopes(ctx, name).items():  # every larger complete budget beside the base one
        assert steps > CR.BASE_STEPS and f"With {steps:,} steps it crams {fit.slope:.1f}" in text


def test_answer_without_real_models_says_so(real):
    empty = RealModels([], {}, {}, {}, {}, {})
    assert "No real-model slope" in CR.answer(_ctx(empty))["cram_answer"]
    assert CP.real_figure(_ctx(empty)) is None


def test_meaning_is_at_most_five_short_points(ctx):
    text = CR.meaning(ctx)[0].data
    for line in re.findall(r"^\d+\. \*\*(?:Real models|Random tokens).*$", text, flags=re.M):
        assert f"{CR.BASE_STEPS} steps" in line  # a ratio says the budget it was measured at
    points = re.findall(r"^\d+\. ", text, flags=re.M)
    assert 3 <= len(points) <= 5
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", re.sub(r"\*\*", "", text)) if len(s.split()) >= 3]
    assert max(len(s.split()) for s in sentences) <= 30


def test_results_table_has_a_row_per_series_and_no_ratio_of_an_unreliable_slope(ctx, real):
    table, note = CR.results_table(ctx)
    rows = table.data.splitlines()[2:]
    larger = sum(len(CR.larger_budget_slopes(ctx, n, k)) for n, k in real.slopes if k != "random_tokens")
    assert len(rows) == len(ctx.refit) + len(real.slopes) + larger + len(ctx.slopes)
    for (name, kind), (s, pts) in real.slopes.items():
        row = next(r for r in rows if r.startswith(f"| {label(name)} (stored runs, {pts[0].max_steps:,} steps)")
                   and f"| {kind.replace('_', ' ')} |" in r)  # fmt: skip
        assert ("no reliable slope" in row) == (not s.reliable)
    for r in rows:  # the re-fitted natural-text rows are marked too narrow, the others not
        assert ("‡" in r) == ("re-fitted" in r and "natural" in r)
    assert "for the same slope" in note.data and "sec-cramming-loop" in note.data and "least-squares" in note.data


def test_bound_and_own_tables(ctx):
    bound = _text(CR.bound_table(ctx))
    assert "**rinf_fp16**" in bound and "| 4096 |" in bound
    full = CR.own_runs_table(ctx, full=True)[0].data
    assert "token-steps" in full and "1,234" in full
    assert "token-steps" not in CR.own_runs_table(ctx)[0].data


def test_a_new_unit_of_any_state_or_instrument_appears_and_breaks_nothing(tmp_path):
    art = json.loads(CA.artifact_path("smollm2-135m").read_text())
    base = next(u for u in art["units"] if u.get("state") == "complete" and u.get("dtype") == "float32")
    for uid, state, steps in (("authors-3000", "partial", 3000), ("authors-queued", "pending", 3000)):
        new = copy.deepcopy(base)
        new.update(uid=f"{base['uid']}/{uid}", instrument="authors", max_steps=steps, state=state)
        new["outcomes"] = base["outcomes"][:3] if state == "partial" else []
        art["units"].append(new)
    (tmp_path / "smollm2-135m.json").write_text(json.dumps(art))
    real = load_real(folder=tmp_path)
    ctx = _ctx(real)
    text = _text(cramming_real.unit_tables(ctx))
    assert "authors" in text
    assert _text(cramming_real.slope_bullets(ctx)) and CP.real_figure(ctx) is not None
    assert CR.answer(ctx)["cram_answer"]


def test_every_record_builder_runs_on_the_stored_results(ctx):
    for build in (cramming_search.search_benchmark, cramming_search.design_simulation, cramming_search.design_bound,
                  cramming_search.trial_stop, cramming_intervals.passage_intervals, cramming_intervals.held_coverage,
                  cramming_real.provenance, cramming_real.unit_tables, cramming_real.slope_bullets,
                  cramming_instruments.continuation, cramming_instruments.instrument_table,
                  cramming_instruments.instrument_reading, cramming_instruments.prefix_closure,
                  cramming_instruments.prompt_norms, cramming_authors.gemma_beside_authors, CR.paper_refit_table,
                  CR.natural_vs_random, CR.own_slope_table):  # fmt: skip
        text = _text(build(ctx))
        assert text and "nan" not in text.lower().replace("nano", ""), build.__name__


def test_missing_benchmarks_name_the_command(real):
    ctx = _ctx(real, bench={"passage_intervals": None, "held": None, "search": {}, "design_sim": None,
                            "design_bound": None, "continuation": None})  # fmt: skip
    for build in (cramming_search.search_benchmark, cramming_search.design_simulation, cramming_search.design_bound,
                  cramming_intervals.passage_intervals, cramming_intervals.held_coverage, cramming_instruments.continuation):  # fmt: skip
        assert "benchmarks/bench_" in _text(build(ctx)), build.__name__


def test_figures_draw_one_panel_a_kind_and_two_a_real_model(ctx, real):
    import matplotlib.pyplot as plt

    assert len(CP.success_figure(ctx).axes) == len(PARAMS["kinds"])
    assert len(CP.n50_figure(ctx).axes) == 1
    assert len(CP.paper_figure(ctx).axes) == 2
    assert len(CP.real_figure(ctx).axes) == 2 * len(real.names)
    fig = CP.instruments_figure(cramming_instruments.instrument_rows(ctx)[1])
    assert fig is None or len(fig.axes) >= 1
    plt.close("all")


def test_binomial_tolerance_and_times():
    assert cramming_intervals.binomial_tolerance(100) == pytest.approx(2 * np.sqrt(0.95 * 0.05 / 100))
    assert cramming_search.times(4.0) == "4.00 times cheaper"


def test_budget_condition_follows_the_pairs_verdicts(ctx, real):
    verdicts = {}
    for name, units in real.summaries.items():
        for kind in ("natural", "random_words"):
            pairs = CB.budget_moves(units, kind, 2 * CR.BASE_STEPS, CR.BASE_STEPS)
            if len(pairs) >= 2:
                verdicts[name, kind] = cramming_budgets.pairs_verdict(pairs)
                assert verdicts[name, kind] in ("indicated", "not established")
    text = CR.budget_condition(ctx)
    assert "establishes it" in text and "likely" in text  # a slope's rise is never said to be measured
    if "indicated" in verdicts.values():
        assert "indicate that condition" in text
    if "not established" in verdicts.values():
        assert "do not establish it" in text
    pairs_text = _text(cramming_budgets.budget_pairs(ctx))
    assert "condition is established" not in pairs_text


def test_budget_trend_gives_the_size_of_each_move(ctx, real):
    text = CR.budget_trend(ctx)
    for name, units in real.summaries.items():
        for kind in ("natural", "random_words"):
            c = CB.budget_curve(units, kind).get("float32")
            if c:
                move = f"{kind.replace('_', ' ')} {100 * (c[-1].fit.n50 / c[0].fit.n50 - 1):+.0f} %"
                assert move in text and label(name) in text


def test_own_runs_table_explains_its_failure_column_in_plain_words(ctx):
    table, note = CR.own_runs_table(ctx)
    assert "passage horizons" not in table.data and "ran all 20 steps / all failed trials" in table.data
    assert "k of the search's f failed trials ran the whole budget of 20 steps" in note.data
    assert "10 steps without improvement" in note.data and "sec-passage-intervals" in note.data


def test_page_prose_names_the_live_model_and_sets_gemma_beside_the_paper(ctx, real):
    prose = CR.page_prose(ctx)
    assert (
        "the book's small model `nano`" in prose["cram_live"] and "executed when the page builds" in prose["cram_live"]
    )
    assert set(CR.MARKDOWN_GLUES) >= {"cram_answer", "cram_live", "cram_gemma"}
    gemma = real.slopes.get(("gemma-3-270m", "natural"))
    if gemma is None or not gemma[0].reliable:
        assert prose["cram_gemma"] == ""
        return
    text = prose["cram_gemma"]
    assert gemma[0].describe(1) in text and "44.54" in text and "sec-cramming-gemma-authors" in text
    assert f"r∞ ≈ {real.h_radii['gemma-3-270m']['linf']:.0f}" in text and "9.95" in text and "unexplained" in text
    assert all(len(sent.split()) <= 30 for sent in re.split(r"(?<=\.) ", text))


def test_lab_summary_is_five_linked_bullets_at_most(ctx):
    lines = CR.lab_summary(ctx).splitlines()
    assert 1 <= len(lines) <= 5 and all(line.startswith("- ") and "{doc}`chapter 3" in line for line in lines)
    assert any("90.37" in line for line in lines)  # the paper's Pythia-160M slope beside our re-fit


def _bound_rows():
    return json.loads((CA.ARTIFACT_DIR / "benchmarks" / "design_bound.json").read_text())


def test_design_bound_states_every_saving_with_its_calibration_bracket_and_scope():
    db = _bound_rows()
    text = _text(cramming_search.design_bound(SimpleNamespace(bench={"design_bound": db})))
    lo, hi = efficiency_interval(1.0, db["sim"]["reps"])
    real = [r for r in db["rows"] if r["model"] == "smollm2-135m"]
    row = {(r["kind"], r["m"]): r for r in real}
    bracket = lambda x: f"{x:.2f}× [{x / hi:.2f}, {x / lo:.2f}]"  # noqa: E731
    for kind in ("natural", "random_words"):  # m = 1: each kind's bound with its bracket, never a bare ceiling
        assert bracket(row[kind, 1]["max_saving"]) in text
    assert "A point value is the bound at a simulated RMSE, not a ceiling" in text
    # the overreach the earlier text made: natural text with k known stays below three-fold, and the page says so
    known = row["natural", 1]["max_saving_steepness_known"]
    assert known / lo < 3
    assert f"For natural text not even a fit that knew k reaches three-fold: {bracket(known)}" in text
    assert "Only a fit that knew k could make a kind three times cheaper" not in text
    for kind in ("natural", "random_words"):  # over the whole slope: Σ cost / Σ (cost / saving), with its bracket
        rs = [row[kind, m] for m in (1, 2, 3, 4)]
        pooled = sum(r["bisect_token_steps"] for r in rs) / sum(r["bisect_token_steps"] / r["max_saving"] for r in rs)
        assert 1.5 < pooled < 2.5  # about twice, the reading of the same artifact
        assert f"{cramming_search._kind(kind)} {bracket(pooled)} (m = 1–4)" in text
        ks = ", ".join(format(row[kind, m]["steepness"], ".2f") for m in (1, 2, 3, 4))
        assert f"{ks} for {cramming_search._kind(kind)} at m = 1–4" in text
    assert "borrowed k from another m" in text and "do not measure that loss" in text


def _bound_row(kind, m, saving, known, *, known_n=20, shortest=2, cost=100.0, k=0.3):
    return {"model": "smollm2-135m", "kind": kind, "m": m, "n50": 21.0, "steepness": k, "bisect_token_steps": cost,
            "bisect_rmse": 1.0, "bound_lengths": [21], "bound_cost_shares": [1.0], "bound_targets": 30.0,
            "bound_token_steps": cost / saving, "max_saving": saving, "max_saving_steepness_known": known,
            "max_saving_failures_stopped_at_a_third": 2 * saving, "bisect_efficiency": 1 / saving,
            "steepness_known_lengths": [known_n], "steepness_known_targets": 30.0,
            "steepness_known_success_rates": [0.6], "steepness_known_success_step_shares": [0.6],
            "shortest_stored_length": shortest, "designs": {"sequential": {"efficiency": 0.5}}}  # fmt: skip


@pytest.mark.parametrize(
    "natural, words, said",
    [((1.3, 1.4), (1.3, 1.5), ["For natural text not even a fit that knew k", "For random words not even"]),
     ((1.3, 1.4), (1.3, 21.0), ["For random words only a fit that knew k could reach three-fold"]),
     ((1.3, 1.4), (2.5, 3.0), ["For random words a three-fold saving lies within the bound's bracket"])],
)  # fmt: skip
def test_the_three_fold_sentence_follows_each_kinds_bracket(natural, words, said):
    rows = [{**_bound_row("natural", 1, 5.0, 9.0), "model": "nano"}, _bound_row("natural", 1, *natural),
            _bound_row("random_words", 1, *words, known_n=1)]  # fmt: skip
    db = {"rows": rows, "sim": {"reps": 100}, "max_efficiency": 0.5, "max_efficiency_by_interval_width": 0.6}
    text = _text(cramming_search.design_bound(SimpleNamespace(bench={"design_bound": db})))
    for s in said:
        assert s in text
    assert ("extrapolating both curves (below)" in text) == (words[1] >= 3 and words[0] / 0.742 < 3)


def test_pooled_saving_weights_by_token_steps_and_refuses_no_rows():
    rows = [{"bisect_token_steps": 300.0, "s": 3.0}, {"bisect_token_steps": 100.0, "s": 1.0}]
    lo, hi = efficiency_interval(1.0, 50)
    assert cramming_search.pooled_saving(rows, "s", 50) == f"2.00× [{2 / hi:.2f}, {2 / lo:.2f}]"  # 400 / (100 + 100)
    with pytest.raises(ValueError, match="at least one design_bound row"):
        cramming_search.pooled_saving([], "s", 50)
