"""Nothing silently substituted: a chapter that cannot load a model it was asked for says so in the page,
in the first cell that computes (above every result), and never computes on an untrained model unasked.

Real papermill runs of each chapter's first cells (the parameters, their check, and the cell that loads
the models), with models that are not available here: a hub id on an offline machine (chapter 4 takes
the shipped ``nano`` instead and says so) and a named model that is not fetched (chapters 5 and 7 skip it
and say so). The fetched-model cache is pointed at an empty folder, so the result does not depend on
what this machine has fetched. These are fresh executions (of the first cells only), not the session's
``smoke_book``: they ask for models the smoke preset never names, with an empty model cache.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]

CASES = {
    # chapter: (parameters, what the first computing cell must say, what it must not)
    "04_mean_field": (
        {"model_name": "EleutherAI/pythia-160m"},
        ["EleutherAI/pythia-160m is not available here", "computed on nano instead"],
        ["tiny", "random"],
    ),
    "05_support": (
        {"models": '["nano", "gemma-3-270m"]'},
        ["gemma-3-270m: skipped, not computed here", "not fetched yet", "models computed in this run: nano\n"],
        ["random-tiny"],
    ),
    "07_precision": (
        {"models": '["nano", "gemma-3-270m"]', "dtypes": '["float32"]'},
        ["Models measured: `nano`", "Skipped: gemma-3-270m (float32)", "not fetched yet"],
        ["random-tiny"],
    ),
}


def _text(cell) -> str:
    out = []
    for o in cell.get("outputs", []):
        if "text" in o:
            out.append(o["text"])
        for key in ("text/markdown", "text/plain"):
            if key in o.get("data", {}):
                out.append(o["data"][key])
                break
    return "\n".join(out)


@pytest.mark.slow
@pytest.mark.parametrize("stem", sorted(CASES))
def test_an_unavailable_model_is_named_above_every_result(stem, tmp_path):
    import papermill as pm

    params, must, must_not = CASES[stem]
    nb = nbformat.read(ROOT / "book" / f"{stem}.ipynb", as_version=4)
    i = next(k for k, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    code_after = [k for k, c in enumerate(nb.cells) if k > i and c.cell_type == "code"]
    load = code_after[1]  # the cell after the parameter check: imports and the models it loads
    nb.cells = nb.cells[: load + 1]
    src = tmp_path / "head.ipynb"
    nbformat.write(nb, src)
    env = {"ACCESSIBILITY_CACHE": str(tmp_path / "empty-cache"), "HF_HUB_OFFLINE": "1"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the kernel papermill starts inherits them
    try:
        pm.execute_notebook(
            str(src),
            str(tmp_path / "out.ipynb"),
            parameters={"preset": "smoke", **params},
            cwd=str(ROOT / "book"),
            progress_bar=False,
            kernel_name="python3",
        )
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    out = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    said = _text(out.cells[-1])  # the first cell that computes anything: above every result
    for text in must:
        assert text in said, (stem, text, said[:2000])
    for text in must_not:
        assert text not in said, (stem, text, said[:2000])
