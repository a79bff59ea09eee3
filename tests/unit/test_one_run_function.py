"""One function runs each unit of work: the chapter, the sweep and the script make the same store entries.

For each heavy chapter (3 cramming, 5 support, 6 copying) the chapter's source calls the function of
:mod:`accessibility_lib.runs.work` (never a copy of its arguments), and the sweep's unit, built from the
same preset, leads that function to the same store keys.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from accessibility_lib.ground.paths import REPO_ROOT
from accessibility_lib.ground.results import ResultStore
from accessibility_lib.runs import presets, sweep_units, work

#: chapter -> (file, what its cells call, {library module: the run function of accessibility_lib.runs.work (or the
#: series runner) that call reaches}, calls neither the chapter nor that module may make itself). A thin chapter
#: calls a library entry; the entry calls the one run function, so the chapter still never copies its arguments.
CALLS = {
    "cramming": (
        "03_cramming.md",
        ["work.cramming_units(params)", "run_cramming_series("],
        {},
        ["CrammingUnit(", "find_n50("],
    ),
    "support": (
        "05_support.md",
        ["SR.run_models(handles, params["],
        {"figures/support_report.py": ["work.run_support("]},
        ["support.analyse_model("],
    ),
    "copying": (
        "06_copying.md",
        ["copying_study.load_study(params)"],
        {"runs/copying_study.py": ["work.copying_runs(params)", "work.run_copying("]},
        ["TrainConfig(", "train_copying("],
    ),
}


def _code(md: str) -> str:
    return "\n".join(re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", md, flags=re.S))


@pytest.mark.parametrize("chapter", sorted(CALLS))
def test_each_heavy_chapter_calls_the_one_run_function(chapter):
    name, calls, library, forbidden = CALLS[chapter]
    code = _code((REPO_ROOT / "book" / name).read_text())
    for call in calls:
        assert call in code, f"{name} does not call {call}"
    for module, runs in library.items():
        source = (REPO_ROOT / "accessibility_lib" / module).read_text()
        for call in runs:
            assert call in source, f"accessibility_lib/{module} (called by {name}) does not call {call}"
        for call in forbidden:
            assert call not in source, f"accessibility_lib/{module} makes its own {call} instead of calling runs.work"
    for call in forbidden:
        assert call not in code, f"{name} makes its own {call} instead of calling accessibility_lib.runs.work"


def _files(store: ResultStore) -> set[str]:
    root = Path(store.root)
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_cramming_chapter_sweep_and_script_write_the_same_store_entries(tmp_path):
    import torch

    from accessibility_lib.models.loading import load_model
    from accessibility_lib.runs.cramming_units import run_cramming_series, run_cramming_unit

    over = {
        "model_name": "nano",
        "kinds": ["random_tokens"],
        "ms": [1, 2],
        "n_targets": 3,
        "max_steps": 8,
        "patience": 4,
    }
    params = presets.resolve("cramming", "smoke", check_machine=False, **over)
    # the sweep's unit of work, as Ray or the serial runner executes it
    (unit,) = sweep_units.plan_work("smoke", ["cramming"], over, device="cpu", check_machine=False)
    sweep_store = ResultStore(tmp_path / "sweep")
    sweep_units._cramming(unit.spec, sweep_store, "cpu")
    # the chapter's cell
    handle = load_model(params["model_name"], device="cpu", dtype=getattr(torch, params["dtype"]))
    chapter_store = ResultStore(tmp_path / "chapter")
    for kind, units in work.cramming_units(params).items():
        run_cramming_series(handle, units, chapter_store, model_name=params["model_name"])
    written = _files(sweep_store)
    assert written and written == _files(chapter_store)
    # the script runs one unit at a time into the store the others filled: nothing new to cram
    first = work.cramming_units(params)["random_tokens"][0]
    res = run_cramming_unit(handle, first, sweep_store, model_name=params["model_name"])
    assert res.runs == 0 and res.cached > 0
    assert _files(sweep_store) == written


def test_support_chapter_and_sweep_call_the_analysis_with_the_same_arguments(monkeypatch):
    from accessibility_lib.geometry import support

    seen = []
    monkeypatch.setattr(support, "analyse_model", lambda handle, name, **kw: seen.append((name, kw)))
    monkeypatch.setattr(work, "effective_eps_record", lambda handle, name, store, seed=0: {"eps": 1e-3})
    params = presets.resolve("support", "default", check_machine=False)
    for unit in sweep_units.plan_work("default", ["support"], device="cpu", check_machine=False):
        work.run_support(object(), unit.spec["model"], unit.spec, store=None)  # the sweep's call
        work.run_support(object(), unit.spec["model"], params, store=None)  # the chapter's call
    assert len(seen) == 2 * len(params["models"])
    for sweep_call, chapter_call in zip(seen[::2], seen[1::2]):
        assert sweep_call == chapter_call


def test_copying_chapter_and_sweep_train_the_same_configurations():
    params = presets.resolve("copying", "default", check_machine=False)
    chapter_keys = [cfg.key() for _, cfg in work.copying_runs(params)]
    sweep_keys = [
        u.spec["config"] for u in sweep_units.plan_work("default", ["copying"], device="cpu", check_machine=False)
    ]
    assert chapter_keys and chapter_keys == sweep_keys
    assert len({str(k) for k in chapter_keys}) == len(chapter_keys)  # every run its own key
