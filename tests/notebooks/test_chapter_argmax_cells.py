"""Chapter 2 (book/02_argmax_cells.ipynb) on the smoke preset (nano), its numbers checked independently.

The chapter glues its numbers (MyST-NB ``glue``); this test reads them from the executed notebook and
recomputes them without the library's slice code: the greedy next tokens with Hugging Face ``generate``,
and the cells that meet the plane of the three prompts by brute force — the direct argmax over every
token at many points of that plane, far out as well as near — which must not exceed the chapter's
hull count (an upper bound: the hull may keep tokens that win nowhere, never miss one that wins).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.pages("02_argmax_cells")  # the page these tests read from the session's smoke_book


def glued(nb: dict) -> dict:
    """name -> Python value of every ``glue(...)`` in an executed notebook (from its text/plain record)."""
    out = {}
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            rec = o.get("metadata", {}).get("scrapbook")
            if rec:
                text = o["data"][rec["mime_prefix"] + "text/plain"]
                try:
                    out[rec["name"]] = ast.literal_eval(text)
                except (ValueError, SyntaxError):
                    out[rec["name"]] = text
    return out


@pytest.fixture(scope="module")
def executed(smoke_book):
    """The chapter as the session executed it on the smoke preset (``smoke_book`` in tests/conftest.py)."""
    return json.loads(smoke_book.executed("02_argmax_cells").read_text())


@pytest.fixture(scope="module")
def nano():
    from transformers import AutoTokenizer, GPTNeoXForCausalLM

    folder = ROOT / "accessibility_lib" / "data" / "nano"
    return AutoTokenizer.from_pretrained(str(folder)), GPTNeoXForCausalLM.from_pretrained(str(folder)).eval()


PROMPTS = ["The quick brown fox", "https://", "In a distant future"]  # the smoke preset's


@pytest.mark.slow
def test_chapter_numbers_against_independent_computations(executed, nano):
    from accessibility_lib.runs.presets import PRESETS

    assert PRESETS["argmax_cells"]["smoke"]["prompts"] == PROMPTS
    assert PRESETS["argmax_cells"]["smoke"]["model_name"] == "nano"
    g = glued(executed)
    tok, model = nano

    # 1. the greedy next tokens of the three prompts: generate(), one prompt at a time (no padding)
    greedy = []
    anchors = []
    with torch.no_grad():
        for p in PROMPTS:
            x = tok(p, return_tensors="pt")["input_ids"]
            greedy.append(int(model.generate(x, max_new_tokens=1, do_sample=False, pad_token_id=1)[0, -1]))
            anchors.append(model.gpt_neox(input_ids=x).last_hidden_state[0, -1].double())  # (d,) after the final norm
    assert g["ac_greedy_ids"] == greedy

    # 2. the hull shortcut against the direct argmax on the chapter's pixels: the chapter's stated tolerance
    assert g["ac_agree"] >= 0.99

    # 3. cells meeting the plane, by brute force: points a1 + s(a2 − a1) + t(a3 − a1) out to |s|, |t| ≤ 10^4
    a1, a2, a3 = anchors
    W = model.get_output_embeddings().weight.detach().double()  # (V, d); nano's head has no bias
    assert getattr(model.get_output_embeddings(), "bias", None) is None
    gen = torch.Generator().manual_seed(0)
    found = set()
    for scale in (1.0, 3.0, 10.0, 100.0, 1e4):
        st = (torch.rand(4000, 2, generator=gen, dtype=torch.float64) * 2 - 1) * scale  # (N, 2)
        pts = a1 + st[:, :1] * (a2 - a1) + st[:, 1:] * (a3 - a1)  # (N, d)
        found |= set((pts @ W.T).argmax(1).tolist())
    assert set(greedy) <= found  # the anchors themselves lie on the plane
    assert g["ac_cells_picture"] <= g["ac_cells_plane_max"]
    assert len(found) <= g["ac_cells_plane_max"], (len(found), g["ac_cells_plane_max"])
    assert len(found) >= 3

    # 4. the static explorer and the figures are there
    text = json.dumps(executed)
    assert 'type=\\"range\\"' in text
    pngs = sum("image/png" in o.get("data", {}) for c in executed["cells"] for o in c.get("outputs", []))
    assert pngs >= 4  # row norms, Fig 1, Voronoi panel, PCA slice
