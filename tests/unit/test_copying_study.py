"""Chapter 6's study object, its tables and sentences, the SmolLM2 record and the figures (copying_study,
copying_text, copying_finetune_view, figures.copying_plots): on small synthetic runs whose answer is known, and
on the stored study artifact that the chapter's default preset shows."""

from __future__ import annotations

import math
from types import SimpleNamespace

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from accessibility_lib.experiments import cliffs  # noqa: E402
from accessibility_lib.figures import copying_plots  # noqa: E402
from accessibility_lib.runs import copying_finetune_view as FV  # noqa: E402
from accessibility_lib.runs import copying_record as CRec  # noqa: E402
from accessibility_lib.runs import copying_text as CT  # noqa: E402
from accessibility_lib.runs import presets  # noqa: E402
from accessibility_lib.runs.copying_study import CopyingStudy, counts_past, load_study  # noqa: E402

LENGTHS = list(range(1, 15))
STRINGS = 50


def _run(base, L, counts, d_model=32, label=None):
    counts = np.asarray(counts)
    rate = counts / STRINGS
    cfg = SimpleNamespace(base=base, train_max_len=L, d_model=d_model, stop_checks=2, check_strings=64)
    ev = {
        "length": LENGTHS,
        "exact": counts.tolist(),
        "n": [STRINGS] * len(LENGTHS),
        "exact_rate": rate.tolist(),
        "ci_low": np.clip(rate - 0.1, 0, 1).tolist(),
        "ci_high": np.clip(rate + 0.1, 0, 1).tolist(),
        "char_acc": rate.tolist(),
    }
    rec = {
        "eval": ev,
        "d_model": d_model,
        "r": 10.0,
        "r_inf": 2.0,
        "n_params": 1000,
        "train": {
            "steps": 100,
            "seconds": 3.0,
            "reached": True,
            "loss_curve": {"step": [0, 50], "loss": [2.0, 0.1]},
            "check_step": [25, 50],
            "check_exact": [0.5, 1.0],
        },
    }
    return {
        "label": label or f"{base} {d_model}, n ≤ {L}",
        "cfg": cfg,
        "rec": rec,
        "source": "computed",
        "cliff": cliffs.locate_cliff(LENGTHS, counts, STRINGS),
    }


def _step(at):
    return [STRINGS if n <= at else 0 for n in LENGTHS]


PARAMS = {
    "alphabet_size": 26,
    "train_max_len": 8,
    "bases": ["nano", "nano-shape", "scratch"],
    "widths": [32, 64],
    "sweep_bases": ["scratch"],
    "eval_lengths": LENGTHS,
    "from_artifact": False,
    "device": "cpu",
}


def _study():
    past = _step(8)
    past[8] = 20  # the fine-tuned model copies 20 of 50 one symbol past L
    scratch_past = _step(8)
    scratch_past[8] = 2
    runs = [
        _run("nano", 8, past, 128),
        _run("nano-shape", 8, scratch_past, 128),
        _run("scratch", 8, _step(8), 32),
        _run("scratch", 8, _step(8), 64),
        _run("scratch", 4, _step(4), 32),
        _run("scratch", 4, _step(4), 64),
    ]
    return CopyingStudy(PARAMS, runs)


def test_groupings_and_counts_of_a_known_study():
    s = _study()
    assert s.L0 == 8 and len(s.at_L0) == 4
    assert [name for name, _ in s.lineages] == ["scratch, d_model = 32", "scratch, d_model = 64"]
    assert s.moves_L == [True, True]  # 4 → 8 moves the step out for both widths
    assert s.moves_width == [False, False]  # the same step at both widths, at L = 4 and at L = 8
    assert len(s.pretrain_pairs) == 1 and s.find("nano-shape") is s.pretrain_pairs[0][1]
    assert len(s.at_L) == len(s.located) == 6
    assert counts_past(s.find("nano")) == (9, 20, 50)
    (f,) = s.fisher_past_L()
    assert f["k_fine_tuned"] == 20 and f["k_scratch"] == 2 and f["p"] < 1e-4
    shown = s.copied_past_own_cliff()
    assert [x["lengths"] for x in shown] == [[5, 6, 7, 8], [5, 6, 7, 8]]
    assert s.most_copied_past_L(False)[:3] == (20, 50, 9)
    assert all(r["mf"]["log10_nstar"] > 10 for r in s.runs)  # d ≥ 32: n* astronomically far


def test_sentences_say_what_the_study_shows():
    s = _study()
    v = CRec.verdict(s)
    assert (
        "moved the cliff out in **2 of 2**" in v and "Widening the scratch model moved it (either way) in 0 of 2" in v
    )
    assert "Pretraining does raise the rate one symbol past L at n = 9 (20 of 50 against 2" in v
    notes = CRec.moves_notes(s)
    assert "At n = 9: 20 of 50 fine-tuned, 2 of 50 from scratch" in notes
    assert (
        "| scratch 32, n ≤ 4 | 4 | 50, 0, 0 of 50 | a step between 4 and 5 | step | 1.00–1.25 |" in CRec.counts_table(s)
    )
    assert "steps: a sigmoid fits a step exactly" in CRec.r2_note(s)
    nums = CT.chapter_numbers(s)
    assert (
        nums["copy_n_at_L"] == 6 and nums["copy_moves_L"] == "2 of 2" and nums["copy_d_testable"] == 4
    )  # 2^4·(1 + ln 2)/ln 26 ≈ 8.3 ≤ 14 < 16.6
    claims = CRec.claims(s)
    assert claims.count("\n* ") == 3 and "Not testable here: the bound is vacuous" in claims


def test_the_results_table_passes_the_convention_check():
    import convention_tables  # book/_ext, on the path by pytest's pythonpath setting

    s = _study()
    table = CT.summary_table(s)
    assert table.count("\n| ") == 1 + len(s.at_L0)  # the header, then a row a model
    n_rows, problems = convention_tables.check_tables(table, "summary")
    assert n_rows == len(s.at_L0) and problems == []
    n_rows, problems = convention_tables.check_tables(CRec.mean_field_table(s), "mean field")
    assert n_rows == len(s.runs) and problems == []


def test_bound_points_refuse_a_bound_that_bites_within_the_tested_lengths():
    s = _study()
    assert "Vacuous by" in CRec.bound_points(s)
    tiny = CopyingStudy({**PARAMS, "eval_lengths": [10**200]}, s.runs)
    with pytest.raises(AssertionError, match="n\\* within the tested lengths"):
        CRec.bound_points(tiny)


def test_the_stored_study_and_finetune_record():
    params = presets.resolve("copying", "default", check_machine=False)
    s = load_study(params)
    assert s.missing == [] and len(s.runs) == len(s.at_L0) + sum(len(seq) - 1 for _, seq in s.lineages)
    assert all(r["source"] == "artifact" for r in s.runs)
    f = FV.load()
    e = FV.evaluation(f)
    assert e is not None and e["L"] == f.settings["train_max_len"] and e["cliff"].kind in ("step", "fall", "beyond")
    assert math.isfinite(e["mf"]["log10_nstar"]) and all(n > e["L"] for n in e["copied_past"])
    text = FV.evaluation_text(f, e)
    assert "Cor 4.10 gives log10 n* = " in text and f"n ≤ {e['L']}" in text
    assert dict(FV.record_rows(f))["status"] == f.ft["status"]
    assert CT.summary_table(s, e).splitlines()[-1].startswith("| SmolLM2-135M | fine-tuned |")
    # the answer box's SmolLM2 sentence states the cliff with its interval, as the introduction's finding does
    from accessibility_lib.runs import findings

    said, found = CT.readings(s, e)["copy_answer_smol"], findings.copying_finding()
    assert said.startswith(f"SmolLM2-135M, fine-tuned on strings of at most {e['L']} letters")
    if found is not None:
        c = found.values["cliff"]
        assert f"{found.values['digits']:,} digits" in said
        if c.kind == "fall":
            assert f"at n = {c.n50:.0f} [{c.low:.0f}, {c.high:.0f}] letters" in said
    # every figure of the chapter and its lab notes draws from the stored study
    figs = [
        copying_plots.exact_grid_figure(s),
        copying_plots.cliff_moves_figure(s),
        copying_plots.bound_figure(s, e),
        copying_plots.training_figure(s),
        copying_plots.smol_training_figure(f.ft),
        copying_plots.smol_exact_figure(e, f.settings),
    ]
    assert [len(fig.axes) >= 1 for fig in figs] == [True] * 6
    bound_ax = figs[2].axes[0]
    assert len(bound_ax.get_yticklabels()) == len(s.runs) + 1  # one row a run, and SmolLM2


def test_a_missing_finetune_record_is_said_not_raised():
    f = FV.Finetune(None, None)
    assert FV.evaluation(f) is None
    assert FV.evaluation_text(f, None).startswith("No SmolLM2-135M record")
    assert FV.setting_values(f)["smol_lr"] == "—" and "not measured in this build" in FV.lora_text(f)
    with pytest.raises(ValueError, match="no fine-tune record"):
        FV.record_rows(f)


def test_readings_say_the_default_finding_only_where_the_runs_show_it():
    s = _study()
    r = CT.readings(s)
    assert r["copy_answer"].startswith("Not in these runs. Every small model copies the lengths it was trained on")
    assert r["copy_exact_reading"].startswith("Every model copies up to L = 8")
    # the ranges overlap (no move), but Fisher's exact test finds pretraining's higher rate just past L, and says so
    assert r["copy_means_cliff"].endswith(
        "not with width or pretraining; pretraining only raises the rate just past L."
    )
    assert r["copy_pre_effect"].startswith(
        "Pretraining does raise the rate just past L: trained to L = 8, nano copies "
    )
    assert "20 of 50 strings at n = 9 when fine-tuned, against 2 of 50 from scratch" in r["copy_pre_effect"]
    nums = CT.chapter_numbers(s)  # lower ends the prose calls "at least" are rounded down
    least = min(run["mf"]["log10_nstar"] for run in s.runs)
    assert nums["copy_min_nstar"] == f"10^{math.floor(least)}" and nums["copy_min_orders"] == str(
        math.floor(s.orders.min())
    )
    assert nums["copy_min_nstar_d"] == min(s.runs, key=lambda run: run["mf"]["log10_nstar"])["mf"]["d"]
    early = _step(8)
    early[6] = early[7] = 0  # one scratch model stops two lengths early: its cliff is no longer at L
    runs = s.runs[:3] + [_run("scratch", 8, early, 64)] + s.runs[4:]
    r2 = CT.readings(CopyingStudy(PARAMS, runs))
    assert r2["copy_answer"] == "Not in these runs, although only 5 of the 6 cliffs sit at the training length here."
    assert r2["copy_exact_reading"].startswith("3 of the 4 models trained to L = 8 have their cliff there")
    assert "(5 of 6 at L)" in r2["copy_means_cliff"]
    assert r2["copy_answer_smol"] == "No SmolLM2-135M fine-tune is evaluated yet."


def test_the_chapter_numbers_refuse_a_bound_that_bites_within_the_tested_lengths():
    s = _study()
    with pytest.raises(AssertionError, match="n\\* within the tested lengths"):
        CT.chapter_numbers(CopyingStudy({**PARAMS, "eval_lengths": [10**200]}, s.runs))
