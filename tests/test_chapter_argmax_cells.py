"""Chapter 2 (book/02_argmax_cells.ipynb) executes under papermill with the smoke preset (nano model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_chapter_runs_with_smoke_preset(tmp_path, monkeypatch):
    import papermill

    monkeypatch.setenv("ACCESSIBILITY_BOOK_BUILD", "1")
    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(
        str(ROOT / "book" / "02_argmax_cells.ipynb"),
        str(out),
        parameters={"preset": "smoke"},
        cwd=str(ROOT / "book"),
        kernel_name="python3",
        progress_bar=False,
    )
    nb = json.loads(out.read_text())
    text = json.dumps(nb)
    assert "agreement with the direct 128-dimensional argmax" in text or "agreement with the direct" in text
    assert 'type=\\"range\\"' in text  # the static explorer
    pngs = sum("image/png" in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))
    assert pngs >= 4  # row norms, Fig 1, Voronoi panel, PCA slice
