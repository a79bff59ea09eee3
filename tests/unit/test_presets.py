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
    params = presets.resolve("cramming", "paper", device="cpu", model_name=None)
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
