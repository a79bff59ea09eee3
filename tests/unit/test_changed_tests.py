"""``make check-changed``: the tests a changed file maps to (``tests/changed_tests.py``)."""

from __future__ import annotations

import re
from pathlib import Path

from changed_tests import PAGE_TESTS, PLUMBING, selection_for

ROOT = Path(__file__).resolve().parents[2]


def test_a_library_module_maps_to_its_doctests_its_unit_tests_and_its_importers():
    got = selection_for(["accessibility_lib/theory/bounds.py"])
    assert got[:2] == ["accessibility_lib/theory/bounds.py", "tests/unit/test_bounds.py"]
    assert "tests/unit/test_widgets.py" in got  # imports accessibility_lib.theory.bounds
    assert "tests/unit/test_fitting.py" not in got  # does not


def test_a_page_maps_to_its_own_cases_only():
    chapter = selection_for(["book/03_cramming.md"])
    assert "tests/notebooks/test_notebooks.py::test_chapter_smoke_papermill_then_nbval[03_cramming]" in chapter
    assert not any("01_theory" in a for a in chapter)
    lab = selection_for(["book/lab_cramming.ipynb"])
    assert "tests/notebooks/test_notebooks.py::test_chapter_smoke_papermill_then_nbval[lab_cramming]" in lab
    assert not any("test_prose" in a for a in lab)  # the prose check covers chapters only


def test_the_page_tests_exist_and_take_the_stem():
    for test in PAGE_TESTS:
        file, _, name = test.partition("::")
        text = (ROOT / file).read_text()
        assert re.search(rf"^def {name}\((stem|md)\b", text, flags=re.M), test


def test_plumbing_a_test_file_a_benchmark_and_other_files():
    assert selection_for(sorted(PLUMBING)[:1]) == ["tests/unit", "accessibility_lib"]
    assert selection_for(["tests/unit/test_bounds.py"]) == ["tests/unit/test_bounds.py"]
    assert selection_for(["benchmarks/bench_slice.py"]) == [
        "tests/unit/test_benchmarks.py::test_benchmark_runs_in_its_tiny_mode[bench_slice.py]"
    ]
    assert selection_for(["README.md", "book/data/x.json", "tests/unit/test_gone.py"]) == []
