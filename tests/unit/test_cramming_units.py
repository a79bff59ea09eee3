"""Cramming units, instruments, the dtype check, artifacts of format 2 and progressive cramming."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from accessibility_lib.experiments.dtype_choice import check_dtype
from accessibility_lib.experiments.instruments import check_budget, get_instrument
from accessibility_lib.experiments.progressive import median_interval, progressive_cram
from accessibility_lib.ground.results import ResultStore
from accessibility_lib.runs import cramming_artifacts as CA
from accessibility_lib.runs.cramming_units import CrammingUnit, cramming_plan, unit_settings

ROOT = Path(__file__).resolve().parents[2]


def test_unknown_instrument_budget_and_dtype_are_refused_with_the_choices():
    with pytest.raises(ValueError, match="unknown cramming instrument 'adam'; choose one of: paper, lr3e-2"):
        CrammingUnit("natural", 1, instrument="adam")
    with pytest.raises(ValueError, match="max_steps must be a whole number of optimiser steps ≥ 1"):
        CrammingUnit("natural", 1, max_steps=0)
    with pytest.raises(ValueError, match="patience"):
        check_budget(10, -1)
    with pytest.raises(ValueError, match="dtype must be 'float32' or 'bfloat16'"):
        CrammingUnit("natural", 1, dtype="float16")
    with pytest.raises(ValueError, match="no cramming plan 'x' for model 'nano'"):
        cramming_plan("nano", "x")


def test_a_slow_bfloat16_is_refused_before_a_run_and_float32_is_the_default():
    slow = {"float32": 80.0, "bfloat16": 0.22}.get  # the AVX2 machine of chapter 3's note
    with pytest.raises(ValueError, match=r"bfloat16 runs at 0.22 GFLOP/s on this CPU against 80.0 for float32"):
        check_dtype("bfloat16", "cpu", rate=slow)
    fast = {"float32": 90.0, "bfloat16": 200.0}.get
    assert check_dtype("bfloat16", "cpu", rate=fast) == ("bfloat16", {"float32": 90.0, "bfloat16": 200.0})
    assert check_dtype(None, "cpu", rate=slow) == ("float32", {})
    assert check_dtype("bfloat16", "cuda", rate=slow)[0] == "bfloat16"  # nothing measured on a GPU
    with pytest.raises(ValueError, match="dtype must be one of float32, bfloat16"):
        check_dtype("float16")


def test_settings_of_the_paper_instrument_are_the_first_artifacts_keys():
    # the first artifacts' units were keyed by these five settings; the paper instrument keeps them
    u = CrammingUnit("natural", 1, patience=100)
    assert unit_settings(u) == {
        "lr": 0.01,
        "betas": [0.9, 0.9],
        "weight_decay": 0.01,
        "max_steps": 300,
        "patience": 100,
    }
    assert unit_settings(CrammingUnit("natural", 1, patience=None))["patience"] == 300
    assert get_instrument("lr1e-1").optimiser()["lr"] == 0.1


def test_every_shipped_artifact_reads_as_format_2_with_a_dtype_per_unit():
    for model in ("nano", "nano-mamba", "gemma-3-270m", "smollm2-135m"):
        art = CA.load_artifact(model)
        assert art["format"] == 2 and "dtype" not in art
        for u in art["units"]:
            assert u["dtype"] in ("float32", "bfloat16") and u["uid"].endswith(u["dtype"]) or "/t" in u["uid"]
            assert u["settings"]["max_steps"] == u["max_steps"]


def test_write_artifact_keeps_the_units_of_other_runs(tmp_path):
    path = tmp_path / "m.json"
    a = {"uid": "a", "kind": "natural", "outcomes": [1]}
    CA.write_artifact(path, model="m", units=[a], provenance={"started": "t0"})
    b = {"uid": "b", "kind": "natural", "outcomes": [2]}
    out = CA.write_artifact(path, model="m", units=[b, {**a, "outcomes": [3]}], provenance={"started": "t1"})
    assert [u["uid"] for u in out["units"]] == ["b", "a"] and out["units"][1]["outcomes"] == [3]
    assert [h["started"] for h in out["history"]] == ["t0", "t1"]


def test_the_runner_refuses_an_artifact_unit_made_with_other_settings(tmp_path):
    unit = cramming_plan("nano", "smoke")[0]
    rec = CA.unit_record(unit, plan="smoke", weights="w", source=("s", {}), outcomes=[], state="complete")
    rec["settings"] = {**rec["settings"], "lr": 0.1}
    CA.write_artifact(tmp_path / "nano.json", model="nano", units=[rec], provenance={"started": "x"})
    env = {"ACCESSIBILITY_RESULTS": str(tmp_path / "store"), "ACCESSIBILITY_PROGRESS": "0", "PATH": "/usr/bin"}
    cmd = [
        sys.executable,
        "scripts/real_model_cramming.py",
        "--model",
        "nano",
        "--plan",
        "smoke",
        "--out-dir",
        str(tmp_path),
    ]
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode != 0 and "made with settings" in out.stderr and "instruments: paper" in out.stderr


def test_median_interval_covers_the_median_at_its_level():
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(2000):
        x = rng.exponential(10.0, size=20)
        _, (lo, hi) = median_interval(x)
        hits += lo <= 10.0 * np.log(2) <= hi
    assert hits / 2000 >= 0.95 - 0.015
    med, (lo, hi) = median_interval([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    assert med == 5.5 and lo <= 5.5 <= hi


def test_progressive_cramming_horizons_are_verified_and_a_resumed_run_replays_them(tmp_path):
    from accessibility_lib.experiments.targets import target_source
    from accessibility_lib.models.decoding import greedy_decode
    from accessibility_lib.models.loading import load_model

    torch.set_num_threads(1)
    nano = load_model("nano")
    src = target_source(nano, "natural", "all_generated", seed=0, corpus="heldout")
    store = ResultStore(tmp_path)
    kw = dict(stage=1, base_steps=40, steps_per_token=5, retry_steps=60, lr=0.05, store=store, key_base={"m": "nano"})
    res = progressive_cram(nano, src, 1, 3, 8, **kw)
    assert res.horizons.shape == (3,) and res.token_steps > 0
    assert res.horizons.max() >= 2
    for i, h in enumerate(res.horizons):  # each horizon is a prefix the model really generates from its prompt
        if h > 0:
            dec = greedy_decode(nano, res.prompts[i][None], int(h), None, None)
            assert dec[0].tolist() == src(8, i)[:h]
    again = progressive_cram(nano, src, 1, 3, 8, **kw)
    assert np.array_equal(again.horizons, res.horizons) and again.token_steps == res.token_steps
    # the rate curve is monotone: a horizon of h means every shorter prefix too
    r = res.rates(range(1, 9))
    assert np.all(np.diff(r) <= 0)


def test_an_unfinished_progressive_unit_travels_as_its_stages_and_finishes_as_if_never_stopped(tmp_path):
    from accessibility_lib.experiments.n50 import StopSearch
    from accessibility_lib.experiments.targets import target_source
    from accessibility_lib.models.loading import load_model

    torch.set_num_threads(1)
    nano = load_model("nano")
    src = target_source(nano, "natural", "all_generated", seed=0, corpus="heldout")
    unit = {
        "instrument": "progressive",
        "state": "partial",
        "weights": "w0",
        "dtype": "float32",
        "source": src.name,
        "m": 1,
    }
    key_base = {"model": "nano", "weights": "w0", "dtype": "torch.float32", "source": src.name}
    kw = dict(stage=1, base_steps=30, steps_per_token=5, retry_steps=40, lr=0.05, key_base=key_base)
    whole = progressive_cram(nano, src, 1, 2, 6, store=ResultStore(tmp_path / "whole"), **kw)

    first = ResultStore(tmp_path / "first")
    calls = iter(range(10**6))
    with pytest.raises(StopSearch) as killed:  # killed after its third batch of stages
        progressive_cram(nano, src, 1, 2, 6, store=first, should_stop=lambda: next(calls) >= 3, **kw)
    art = tmp_path / "nano.json"
    CA.write_artifact(art, model="nano", units=[], provenance={"started": "t0"})
    written = CA.write_stages(art, first, "nano", [unit])
    assert written == len(list(first.entries("progressive"))) > 0
    assert CA.write_stages(tmp_path / "done.json", first, "nano", [{**unit, "state": "complete"}]) == 0

    fresh = ResultStore(tmp_path / "fresh")  # another machine: only the artifact's files
    assert CA.import_artifact(art, fresh) == written
    with pytest.raises(StopSearch) as replayed:  # the imported stages replay: the first stage to run is the killed one
        progressive_cram(nano, src, 1, 2, 6, store=fresh, should_stop=lambda: True, **kw)
    assert str(replayed.value) == str(killed.value)
    resumed = progressive_cram(nano, src, 1, 2, 6, store=fresh, **kw)
    assert np.array_equal(resumed.horizons, whole.horizons) and resumed.stages == whole.stages
    assert resumed.token_steps == whole.token_steps


def test_a_progressive_unit_names_its_growing_stage_budget_and_is_not_refit_as_fixed_length():
    """A progressive unit's budget label gives its stage budget (b // 3 + (b // 30)·ℓ, a b-step retry), not
    "300 steps (no patience)"; refit_unit refuses its horizons with a message naming the reader to use."""
    from accessibility_lib.runs.cramming_units import progressive_budget

    u = CrammingUnit("natural", 1, instrument="progressive", max_steps=300)
    assert progressive_budget(300) == (100, 10, 300)
    assert u.budget_label == "100 + 10·ℓ steps a stage, a 300-step retry, progressive"
    # the key "paper" stays (uids, store keys, presets); the label says what it is: not the authors' loop
    label = "300 steps (no patience), book's loop (authors' optimiser)"
    assert CrammingUnit("natural", 1, max_steps=300, patience=None).budget_label == label
    assert CrammingUnit("natural", 1, max_steps=3000, patience=500, instrument="authors").budget_label == (
        "3000 steps (patience 500), authors"
    )
    assert "," not in get_instrument("paper").printed  # tables split budget labels on ", "
    rec = {"uid": u.uid, "instrument": "progressive", "outcomes": [{"target": 0, "horizon": 5, "capped": False}]}
    with pytest.raises(ValueError, match="progressive.*summarize"):
        CA.refit_unit(rec)


def _fixed_record(uid_targets: int, outcomes: list, state="complete", **extra) -> dict:
    unit = CrammingUnit("natural", 1, patience=None, n_targets=uid_targets)
    return CA.unit_record(unit, plan="t", weights="w", source=("s", {}), outcomes=outcomes, state=state, **extra)


def _rows(targets, lengths, ok):
    """outcomes: target i at length n succeeds iff ok(n, i); a failure runs the 300-step cap."""
    return [
        {"n": n, "target": i, "success": ok(n, i), "steps": 50 if ok(n, i) else 300} for n in lengths for i in targets
    ]


def test_a_unit_reads_only_its_own_targets_so_a_larger_unit_does_not_move_its_n50():
    """Units with the same settings share the store: a 10-target unit written while a 20-target one runs
    holds targets 10–19 too. Its n50, failures and cost are those of targets 0–9, so its number does not
    drift as the larger unit runs, and the instruments are compared on the same targets."""
    from accessibility_lib.runs import cramming_summary as CS

    base = _rows(range(10), (4, 6, 8), lambda n, i: i < 10 - n)  # 6, 4, 2 of 10 crammed
    extra = _rows(range(10, 20), (4, 6, 8), lambda n, i: False)  # the 20-target unit's extra targets all fail
    alone = CS.summarize({"format": 2, "units": [_fixed_record(10, base)]})[0]
    mixed = CS.summarize(
        {"format": 2, "units": [_fixed_record(10, base + extra), _fixed_record(20, base + extra, state="partial")]}
    )
    assert mixed[0].fit.n50 == pytest.approx(alone.fit.n50) and mixed[0].n_outcomes == 30
    assert mixed[0].failures == alone.failures == 18
    assert mixed[1].n_outcomes == 60 and list(mixed[1].rates) == [0.3, 0.2, 0.1]  # the 20-target unit sees all
    assert [r["target"] for r in CA.own_outcomes(_fixed_record(10, base + extra))] == [r["target"] for r in base]
    lengths, rates, trials, _ = CA.refit_unit(_fixed_record(10, base + extra))
    assert list(trials) == [10, 10, 10] and list(rates) == [0.6, 0.4, 0.2]


def test_a_complete_units_cost_is_its_searchs_and_one_setting_is_drawn_once():
    """A finished fixed-length unit's token-steps are what its search spent (stored when it finished), not
    every outcome later stored at its settings; one_per_settings keeps the 20-target unit of a pair."""
    from accessibility_lib.runs import cramming_summary as CS

    base = _rows(range(10), (4, 6, 8), lambda n, i: i < 10 - n)
    more = base + _rows(range(10), (12,), lambda n, i: False)  # a length another unit's search added later
    recs = [
        _fixed_record(10, more, search_token_steps=12_345),
        _fixed_record(20, more + _rows(range(10, 20), (4, 6, 8, 12), lambda n, i: n < 6)),
    ]
    s10, s20 = CS.summarize({"format": 2, "units": recs})
    assert s10.token_steps == 12_345
    assert s20.token_steps == sum(r["steps"] * (1 + r["n"] - 1) for r in recs[1]["outcomes"])  # no stored cost
    assert CS.one_per_settings([s10, s20]) == [s20]


def test_the_budget_curve_compares_budgets_on_the_same_targets():
    """With 10 and 20 targets at 300 steps and only 10 at 600, the curve takes the 10-target unit at both."""
    from accessibility_lib.runs import cramming_budget as CB
    from accessibility_lib.runs import cramming_summary as CS

    rows10 = _rows(range(10), (4, 6, 8), lambda n, i: i < 10 - n)
    rows20 = rows10 + _rows(range(10, 20), (4, 6, 8), lambda n, i: i - 10 < 9 - n)
    u600 = CrammingUnit("natural", 1, patience=None, max_steps=600)
    recs = [
        _fixed_record(10, rows10),
        _fixed_record(20, rows20),
        CA.unit_record(u600, plan="t", weights="w", source=("s", {}), outcomes=rows10, state="complete"),
    ]
    curve = CB.budget_curve(CS.summarize({"format": 2, "units": recs}), "natural")["float32"]
    assert [(u.max_steps, u.n_targets) for u in curve] == [(300, 10), (600, 10)]
