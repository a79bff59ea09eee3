"""Chapter 7's presentation modules: the dtypes' counts (precision_counts), the models and supports
(precision_models), the stored perturbation measurement (effective_eps_report), the two architectures
(architecture_report), the results table and the answer (precision_summary), and the figures (precision_plots)."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from accessibility_lib.experiments.perturbation import Sensitivity  # noqa: E402
from accessibility_lib.figures import precision_plots  # noqa: E402
from accessibility_lib.figures.widgets.precision import paper_entries  # noqa: E402
from accessibility_lib.ground.results import ResultStore  # noqa: E402
from accessibility_lib.runs import architecture_report as AR  # noqa: E402
from accessibility_lib.runs import effective_eps_report as ER  # noqa: E402
from accessibility_lib.runs import precision_counts as PC  # noqa: E402
from accessibility_lib.runs import precision_models as PM  # noqa: E402
from accessibility_lib.runs import precision_summary as PS  # noqa: E402
from accessibility_lib.runs import presets  # noqa: E402

SMOKE = presets.resolve("precision", "smoke", check_machine=False)


def test_dtype_counts_and_the_paper_models_tables():
    import torch

    assert PC.MAX_FINITE["bf16"] == float(torch.finfo(torch.bfloat16).max)
    assert PC.MAX_FINITE["fp32"] == float(torch.finfo(torch.float32).max)
    whole = PC.whole_range()
    assert whole["fp16"] == 63487 and whole["bf16"] == 65279  # 2^16 patterns less NaNs, infinities and −0
    entries = paper_entries()
    tables = PC.paper_model_tables(entries)
    assert sum(line.startswith(f"| {e['name']} |") for e in entries for line in tables.splitlines()) == 2 * len(entries)
    margin = PC.smallest_margin(entries)
    assert 1 < margin < 100
    assert f"stays {PC.floor_sig(margin, 2, True)}× or more" in PC.per_coordinate_text(entries)
    # the bound with no ε counts inputs over each dtype's whole finite range; the h cube (the paper's geometry) is
    # smaller, and is reported apart: Pythia-1B's fp16 whole range, 2092 / 261.4 ≥ 8.0; its bf16 h cube, 1974 / 261.4
    p1b = next(e for e in entries if e["name"] == "Pythia-1B")
    assert PC.input_slopes(p1b)["fp16"] / p1b["slope"] == pytest.approx(margin)
    assert round(PC.input_slopes(p1b)["fp16"]) == 2092 and round(PC.h_cube_slopes(p1b)["bf16"]) == 1974
    assert PC.h_cube_margin(entries) < margin
    assert all(PC.h_cube_slopes(e)[dt] < PC.input_slopes(e)[dt] for e in entries for dt in PC.DTYPES)
    p160 = next(e for e in entries if e["name"] == "Pythia-160M")  # the referee's recomputation
    assert [round(PC.input_slopes(p160)[dt]) for dt in ("fp16", "bf16", "fp32")] == [785, 786, 1573]
    assert "| Pythia-160M | 768 | 50,304 | 22.45 | 785 | 786 | 1573 | 751 | 739 | 1526 |" in tables
    assert "counts fewer inputs than any of the three dtypes" in PC.per_coordinate_text(entries)
    nums = PC.chapter_numbers(entries)
    assert nums["prec_binade_fp16"] == "1,024" and nums["prec_ln_rep"] == "8.32"
    assert nums["prec_margin"] == PC.floor_sig(margin, 2, True) == "8.0" and nums["prec_margin_h"] == "7.5"
    assert "| fp16 | 30,721 |" in PC.probe_table()  # fp16 values in [−1, 1]


def _sens(t, scale, space="prompt", worst=None, what="next token"):
    return Sensitivity(space=space, what=what, n_tokens=1, t=np.asarray(t, float), scale=np.asarray(scale, float),
                       worst=None if worst is None else np.asarray(worst, float), dtype="float32", model="toy",
                       settings={"high": 16.0})  # fmt: skip


def test_a_measurement_goes_to_the_store_and_comes_back_whole(tmp_path):
    pytest.importorskip("transformers")
    from accessibility_lib.models.loading import load_model

    params = {**SMOKE, "n_prompts": 2, "n_directions": 2}
    handles = {("nano", "float32"): load_model("nano", device="cpu")}
    store = ResultStore(tmp_path)
    first, spent = ER.measure(handles, params, store)
    again, spent_again = ER.measure(handles, params, store)
    assert spent > 0 and spent_again == 0  # the second call reads the store
    a, b = first[("nano", "float32")], again[("nano", "float32")]
    for space in ("prompt", "h"):
        for which in (0, 1):
            np.testing.assert_array_equal(a[space][which].t, b[space][which].t)
            assert a[space][which].what == b[space][which].what
    assert b["h"][0].worst is not None and b["prompt"][0].worst is None
    eff = ER.summarize_all(again, params)
    assert len(eff) == 6  # prompt: 2 outputs; h: 2 outputs × (directions, worst)
    table = ER.eps_table(again, eff)
    assert table.count("\n| nano |") == 6
    items = ER.reading_items(again, eff, params, ["nano"])
    assert items.startswith("* **nano**: the next token changes after a median relative perturbation")
    assert ER.least_over_u(again) > 0 and ER.chapter_numbers(again)["prec_over_u_who"] == "nano in fp32"
    least = ER.least_perturbation(again)  # the same median in both units: of ‖X‖∞ and of fp32's unit roundoff
    assert (least["model"], least["dtype"]) == ("nano", "fp32")
    assert least["over_u"] == pytest.approx(least["rel"] / 2**-24)
    nums = ER.chapter_numbers(again)
    assert nums["prec_median_rel_range"] == nums["prec_median_rel"] == f"{least['rel']:.2g}"  # one model, one dtype
    assert ER.least_perturbation({}) is None and ER.chapter_numbers({})["prec_median_rel_range"] == "—"


def test_the_lower_tail_is_counted_below_the_roundoff():
    tiny = _sens([[1e-9, 0.5], [0.3, 0.4]], [1.0, 1.0])  # one search changed at 1e-9·‖X‖∞
    sens = {("toy", "bfloat16"): {"prompt": (tiny, tiny), "h": (tiny, tiny)}}
    params = {"grid_low_log2": -20, "n_tokens": 2, "dtypes": ["bfloat16"]}
    text = ER.reading_items(sens, {}, params, [])
    assert "toy in bf16, next token: 1 of 4 (the smallest at 1e-09·‖X‖∞)" in text
    assert "1 of 8 prompt-space searches changed at the grid's first point" not in text  # 1e-9 < 2^-20: floored
    assert "2 of 8 prompt-space searches changed at the grid's first point" in text


def test_the_two_architectures_from_their_stored_runs():
    cram = AR.load_cramming()
    assert set(cram) == set(AR.MODELS) and all("points" in c for c in cram.values())
    text, counts = AR.compare_text(cram)
    assert counts["pairs"] == text.count("\n* ") and counts["mamba_more"] + counts["nano_more"] <= counts["pairs"]
    table = AR.cramming_table(cram)
    n_units = sum(len(rows) for c in cram.values() for rows in c["points"].values())
    assert table.count("\n| nano") == n_units
    art, found = AR.load_copying()
    assert set(found) == set(art["models"]) and "‡" in AR.copying_table(art, found)
    assert "prompt vectors" in AR.plan_text() and "float32" in AR.plan_text()
    assert AR.training_table().count("\n| nano") == 2
    assert AR.margin(cram, {}, "nano") is None  # no support measured: no margin
    assert AR.budget(cram, "nano-mamba") == 300 and AR.budget({}, "nano-mamba") is None  # the plan's one budget
    k, n = AR.at_cap(cram, "nano-mamba")
    assert 0 <= k <= n and AR.at_cap({}, "nano") is None
    fig = precision_plots.arch_cramming_figure(cram)
    assert len(fig.axes[0].get_legend_handles_labels()[0]) == 4  # two models × two kinds
    assert precision_plots.arch_copying_figure(art, found).axes[0].get_ylim()[1] > 1


def test_supports_summary_and_answer_on_nano():
    pytest.importorskip("transformers")
    params = {**SMOKE, "n_prompts": 2, "n_directions": 2, "n_embed_prompts": 8, "embed_length": 8}
    handles, names, skipped = PM.load_handles(params)
    assert names == ["nano"] and skipped == [] and "Models measured: `nano`." == PM.models_text(names, skipped)
    support = PM.measure_supports(handles, names, params)
    s = support["nano"]
    assert s["r"] >= s["r_inf"] > 0 and s["C_any"]["fp32"] > s["C_fp"]["fp32"] > s["C_fp"]["bf16"]
    tables = PM.supports_tables(support, params)
    import convention_tables  # book/_ext, on the path by pytest's pythonpath setting

    n_rows, problems = convention_tables.check_tables(tables, "supports")
    assert n_rows >= 1 and problems == []
    sens, _ = ER.measure(handles, params, ResultStore(__import__("tempfile").mkdtemp()))
    eff = ER.summarize_all(sens, params)
    assert "| nano | median |" in ER.bounds_table(support, eff, params) and "C_ball_eff" in s
    cram = AR.load_cramming()
    _, found = AR.load_copying()
    summary = PS.summary_table(support, sens, cram, found, params)
    n_rows, problems = convention_tables.check_tables(summary, "summary")
    assert n_rows == 1 and problems == []
    # two tables, each narrow enough for the text column: the bounds, then what the model does
    assert summary.count("| nano |") == 2 and "| model | C_exp (natural) | C ball / C_exp |" in summary
    # the ε_eff column says which ε_eff it uses: the median of h, not the prompt-space t*
    assert "C ball, median ε_eff of h" in summary and f"ε_eff = nano {s['eps_eff']:.3g}" in summary
    assert precision_plots.ecdf_figure(sens) and precision_plots.scaling_figure(sens)


def test_the_answer_says_only_what_was_measured():
    least = {"model": "nano", "dtype": "bf16", "rel": 0.473, "over_u": 121.1}
    r = PS.readings(7.5, least, 55.0)
    assert "7.5× or more" in r["prec_answer_count"] and "whole finite range" in r["prec_answer_count"]
    # the scale as a fraction of the prompt's largest coordinate, the multiple of the unit roundoff beside it
    assert "t* is 0.47 of the prompt's largest coordinate ‖X‖∞: 121× the unit roundoff of bf16" in r["prec_answer_eps"]
    assert "For nano in bf16" in r["prec_answer_eps"]
    assert "by 55× or more" in r["prec_answer_arch"]
    r = PS.readings(8.0, least, 55.0, 300, (131, 131))  # the budget said, and the failures at its cap
    assert r["prec_answer_count"].count("8.0× or more") == 1
    assert r["prec_answer_arch"].startswith("At 300 optimisation steps, the state-space model nano-mamba crams")
    assert (
        "every one of its 131 failed runs stopped at the step cap, so the margin holds for this budget"
        in (r["prec_answer_arch"])
    )
    assert "failed runs" not in PS.readings(8.0, least, 55.0, 300, (10, 131))["prec_answer_arch"]
    r = PS.readings(7.5, None, None)
    assert (
        r["prec_answer_eps"].startswith("No model was measured")
        and "no reliable cramming slope" in r["prec_answer_arch"]
    )
    small = {"model": "nano", "dtype": "fp16", "rel": 0.0015, "over_u": 3.0}
    assert (
        "only 0.0015 of the prompt's largest coordinate ‖X‖∞, 3× the unit roundoff of fp16"
        in PS.readings(7.5, small, 0.5)["prec_answer_eps"]
    )
    assert "not wholly above 1" in PS.readings(7.5, small, 0.5)["prec_answer_arch"]
    assert precision_plots.fp_count_figure().axes[0].get_xscale() == "log"
