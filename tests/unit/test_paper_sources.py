"""One source of the paper's measured slopes (``paper.measured_slope``), used by every chapter and widget.

Expected values are the two sources as shipped, read here from the CSV and the module constant by hand:
the paper's cramming figures (Pythia-1B 261.42, Pythia-410M 111.14) and the authors' models list
(Pythia-1B 287.4, Pythia-410M 112.4, Pythia-1.4B 261.4, only in the list).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from accessibility_lib.ground.paths import DATA_DIR
from accessibility_lib.theory import paper

ROOT = Path(__file__).resolve().parents[2]


def _list_slopes() -> dict[str, float]:
    with open(DATA_DIR / "paper" / "models_list.csv", newline="") as f:
        return {paper.LIST_NAME_FIXES.get(r["Model name"], r["Model name"]): float(r["Slope exp"])
                for r in csv.DictReader(f)}  # fmt: skip


def test_figures_first_list_otherwise_and_the_disagreements_carried():
    listed = _list_slopes()
    s = paper.measured_slope("Pythia-1B")
    assert (s.value, s.source, s.other) == (261.42, "figures", 287.4) and listed["Pythia-1B"] == 287.4
    s = paper.measured_slope("Pythia-410M")
    assert (s.value, s.source, s.other) == (111.14, "figures", 112.4)  # 1.1 % apart: beyond the list's rounding
    s = paper.measured_slope("Pythia-1.4B")
    assert (s.value, s.source, s.other) == (261.4, "list", None)
    assert paper.measured_slope("Pythia-160M").other is None  # 90.37 rounds to the list's 90.4
    assert paper.measured_slope("Pythia-1B", "random").value == 137.22
    disagree = {n for n in listed if paper.measured_slope(n).other is not None}
    assert disagree == {"Pythia-1B", "Pythia-410M"}
    text = paper.measured_slope("Pythia-1B").describe()
    assert "287.4" in text and "261.4" in text


def test_bad_names_and_kinds_raise():
    with pytest.raises(ValueError, match="no measured slope"):
        paper.measured_slope("GPT-5")
    with pytest.raises(ValueError, match="kind"):
        paper.measured_slope("Pythia-1B", "uniform")
    with pytest.raises(ValueError, match="no random-words slope"):
        paper.measured_slope("Pythia-6.9B", "random")


@pytest.mark.parametrize(
    "path",
    [
        "book/01_theory.md",
        "book/07_precision.md",
        "accessibility_lib/figures/widgets/precision.py",
        "accessibility_lib/figures/widgets/data.py",
    ],
)
def test_chapters_1_and_7_and_their_widgets_read_the_one_source(path):
    """No second reading of either source: `MEASURED_SLOPES[...]`/`.get` or `.slope_natural` outside paper.py."""
    text = (ROOT / path).read_text()
    assert not re.search(r"MEASURED_SLOPES\s*[\[.]|\.slope_natural\b", text), path


def test_table1_text_keeps_the_papers_digits_and_agrees_with_the_values():
    # The paper's Table 1 prints the ball row's Qwen-0.5B, Qwen-1.5B and Llama-1B entries with one decimal
    # (14.1, 20.4, 14.3) and the cone row's Pythia-160M entry as 9.10 (arXiv 2605.22223, Table 1).
    text, values = paper.table1_text(), paper.table1()
    assert text["ball (Cor 4.6)"]["Qwen-0.5B"] == "14.1"
    assert text["ball (Cor 4.6)"]["Llama-1B"] == "14.3"
    assert text["cone"]["Pythia-160M"] == "9.10"
    assert text.keys() == values.keys()
    for row, cols in text.items():
        for col, s in cols.items():
            assert float(s) == values[row][col]
