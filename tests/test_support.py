"""Tests of accessibility_lib.support: the chapter-5 pipeline on an untrained tiny GPT-NeoX."""

import math

import numpy as np
import torch

from accessibility_lib import bounds, support
from accessibility_lib.results import ResultStore


def test_fingerprint_tracks_weights():
    a, b = support.random_tiny_handle(0), support.random_tiny_handle(0)
    assert support.weights_fingerprint(a) == support.weights_fingerprint(b)
    with torch.no_grad():
        b.model.gpt_neox.layers[0].mlp.dense_h_to_4h.weight[-1, -1] += 1.0
    assert support.weights_fingerprint(a) != support.weights_fingerprint(b)


def test_analyse_model_rows_and_resume(tmp_path):
    h = support.random_tiny_handle()
    store = ResultStore(tmp_path)
    r = support.analyse_model(h, "tiny", n_prompts=8, lengths=[4, 8], cell_samples=1500, store=store)
    assert r.geometry.n_points == 16 and r.d == 64
    s = r.slopes
    # replication row is d·ln 4097/ln|V| whatever the embeddings
    assert s["ball, replication (2r/ε = 4096)"] == 64 * math.log(4097) / math.log(512)
    assert s["ellipsoid"] < s["ball"] and s["cone"] <= s["ball"] + 1e-12
    assert s["ball"] == bounds.ball_slope(64, r.geometry.radii["l2"], r.eps, 512)
    assert r.cells.counts.sum() == 1500 and set(r.cells_by_region) == {"ellipsoid", "cone"}
    again = support.analyse_model(h, "tiny", n_prompts=8, lengths=[4, 8], cell_samples=1500, store=store)
    assert np.array_equal(again.cells.counts, r.cells.counts) and again.slopes == s
    rows = support.table_rows([r])
    assert [row["support model"] for row in rows][:3] == ["ball", "cone", "ellipsoid"]
