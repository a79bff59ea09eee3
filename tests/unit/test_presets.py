"""Presets: resolution rules, and the README/book tables generated from the library are current."""

import subprocess
import sys
from pathlib import Path

import pytest

from accessibility_lib.runs import presets

ROOT = Path(__file__).resolve().parents[2]


def test_every_chapter_has_the_three_presets_with_the_same_parameters():
    assert set(presets.PRESETS) >= {"theory", "argmax_cells", "cramming", "mean_field", "support", "copying"}
    for chapter, table in presets.PRESETS.items():
        assert set(table) == set(presets.PRESET_NAMES), chapter
        keys = {name: set(params) for name, params in table.items()}
        assert keys["smoke"] == keys["default"] == keys["paper"], chapter


def test_resolve_overrides_and_errors():
    params = presets.resolve("cramming", "paper", check_machine=False, device="cpu", model_name=None)
    assert params["device"] == "cpu" and params["model_name"] == presets.PRESETS["cramming"]["paper"]["model_name"]
    assert params["preset"] == "paper"
    with pytest.raises(ValueError, match="parameter 'preset' got 'huge'.*'smoke', 'default', 'paper'"):
        presets.resolve("cramming", "huge")
    with pytest.raises(ValueError, match="chapter must be one of"):
        presets.resolve("nope", "default")
    with pytest.raises(ValueError, match="not parameter"):
        presets.resolve("cramming", "default", colour="red")


def test_every_preset_satisfies_its_declared_types():
    for chapter, by_name in presets.PRESETS.items():
        assert set(presets.PARAMETERS[chapter]) == set(next(iter(by_name.values()))), chapter
        for name, values in by_name.items():
            assert set(values) == set(presets.PARAMETERS[chapter]), (chapter, name)
            checked = presets.resolve(chapter, name, check_machine=False)
            assert {k: v for k, v in checked.items() if k != "preset"} == values, (chapter, name)


def test_readme_and_book_tables_are_current():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "presets_table.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_misspelt_parameter_name_stops_the_chapter():
    """papermill only warns "Passed unknown parameter" and would run the defaults; the check cell refuses."""
    import math

    ns = {"preset": "smoke", "eps_convention": None, "In": [], "_i1": "", "math": math, "print": print}
    ns.update({k: None for k in presets.PARAMETERS["theory"]})
    assert presets.from_namespace("theory", ns)["eps_convention"] == "rinf_fp16"
    ns["eps_conventoin"] = "u_fp32"  # the typo papermill would inject
    with pytest.raises(presets.ParameterError, match=r"unknown parameter\(s\) \['eps_conventoin'\].*eps_convention"):
        presets.from_namespace("theory", ns)


def test_paper_on_a_cpu_points_to_paper_tiny(monkeypatch):
    """-p preset paper -p device cuda on a CPU: the advice is paper_tiny, not "-p device cpu" (which would only
    lead to the next refusal, the hub models)."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for chapter in ("support", "cramming"):  # refused on the device (support) or on the hub model (cramming)
        with pytest.raises(presets.ParameterError) as exc:
            presets.resolve(chapter, "paper", device="cuda")
        assert "-p preset paper_tiny" in str(exc.value) and "pass -p device cpu" not in str(exc.value), chapter
    with pytest.raises(presets.ParameterError, match="pass -p device cpu"):  # another preset: the plain advice
        presets.resolve("support", "default", device="cuda")
    assert presets.resolve("support", "paper_tiny")["device"] == "cpu"  # and the advice works here


def test_an_unknown_model_name_is_refused_in_the_parameter_check(monkeypatch):
    """A typo in a model name stops the chapter in its parameter check (no weights loaded), listing the
    offline choices; names a chapter may skip with a note (hub ids, named models not fetched) pass."""
    import time

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    t0 = time.perf_counter()
    with pytest.raises(presets.ParameterError) as exc:
        presets.resolve("cramming", "smoke", model_name="nanoo")
    assert time.perf_counter() - t0 < 5  # refused at the door, not after loading anything
    msg = str(exc.value)
    assert "parameter 'model_name' got 'nanoo'" in msg and "Did you mean 'nano'?" in msg
    for choice in ("'nano'", "'smollm2-135m'", "'gemma-3-270m'", "standin:", "local folder"):
        assert choice in msg, choice
    with pytest.raises(presets.ParameterError, match=r"parameter 'models\[1\]' got 'smolm2'.*'random-tiny'"):
        presets.resolve("support", "smoke", models=["nano", "smolm2"])
    with pytest.raises(presets.ParameterError, match="parameter 'bases\\[0\\]' got 'scratchh'"):
        presets.resolve("copying", "smoke", bases=["scratchh"])
    with pytest.raises(presets.ParameterError, match="parameter 'model_name' got 'nano2'"):
        presets.resolve("mean_field", "smoke", model_name="nano2")
    with pytest.raises(presets.ParameterError, match=r"prompts.*exactly 3"):  # a plane needs three points, no more
        presets.resolve("argmax_cells", "smoke", prompts=["a", "b", "c", "d"])
    for bad in ({"ms": [1, 2, 4]}, {"pair_m": 2}, {"real_ms": [2]}):  # the sweeps need m >= 3: refused before any work
        with pytest.raises(presets.ParameterError, match=next(iter(bad))):
            presets.resolve("mean_field", "smoke", **bad)
    # what a chapter may skip or show from a stored artifact is not a typo
    ok = presets.resolve("support", "smoke", models=["nano", "random-tiny", "EleutherAI/pythia-160m", "gemma-3-270m"])
    assert ok["models"][2] == "EleutherAI/pythia-160m"
    assert presets.resolve("cramming", "smoke", model_name="standin:EleutherAI/pythia-160m")["model_name"]
