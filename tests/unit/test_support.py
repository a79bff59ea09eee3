"""Tests of accessibility_lib.geometry.support: the chapter-5 pipeline on an untrained tiny GPT-NeoX.

Expected values are computed here independently of the code under test: the embeddings by the Hugging Face
base model itself (not the library's sampler), the radii by NumPy, and the ball slopes by the closed form of
Cor 4.6 written out, C = d·ln(1 + 2r/ε)/ln|V|.
"""

import math

import numpy as np
import pytest
import torch

from accessibility_lib.geometry import support, table1
from accessibility_lib.geometry.embeddings import prompt_tokens
from accessibility_lib.ground.results import ResultStore
from accessibility_lib.models import fingerprint, tiny


def test_fingerprint_tracks_weights():
    a, b = tiny.random_tiny_handle(0), tiny.random_tiny_handle(0)
    assert fingerprint.weights_fingerprint(a) == fingerprint.weights_fingerprint(b)
    with torch.no_grad():
        b.model.gpt_neox.layers[0].mlp.dense_h_to_4h.weight[-1, -1] += 1.0
    assert fingerprint.weights_fingerprint(a) != fingerprint.weights_fingerprint(b)


def _independent_embeddings(h, n_prompts, lengths):
    """(N·|lengths|, d) post-final-norm hidden states at the last position, straight from the HF base model."""
    out = []
    with torch.no_grad():
        for ell in lengths:
            ids = prompt_tokens(h, ell, 0, 256, seed=0)[:n_prompts]  # the ids the sampler draws (chunk 0)
            out.append(h.model.gpt_neox(input_ids=ids).last_hidden_state[:, -1].numpy())
    return np.concatenate(out).astype(np.float64)


def test_analyse_model_rows_and_resume(tmp_path):
    h = tiny.random_tiny_handle()
    store = ResultStore(tmp_path)
    r = support.analyse_model(h, "tiny", n_prompts=8, lengths=[4, 8], cell_samples=1500, store=store)
    assert r.geometry.n_points == 16 and (r.d, r.d_vocab) == (64, 512)
    emb = _independent_embeddings(h, 8, [4, 8])  # (16, 64)
    r_l2, r_inf = np.linalg.norm(emb, axis=1).max(), np.abs(emb).max()
    assert r.stats["l2"] == pytest.approx(r_l2, rel=1e-5) and r.stats["linf"] == pytest.approx(r_inf, rel=1e-5)

    rep, cor = r.columns["voronoi_box"], r.columns["argmax_region"]
    # replication: ε = r∞·2^-11 and r = r∞, so 2r/ε = 4096 and C = 64·ln 4097/ln 512 = 64 × 8.318011/6.238325
    assert rep.rows["ball"].C == pytest.approx(85.3358, rel=1e-5)
    # corrected: r = max ‖h‖₂, same ε: C = 64·ln(1 + 2·r_l2/(r∞·2^-11))/ln 512
    eps = r_inf * 2.0**-11
    assert cor.rows["ball"].eps == pytest.approx(eps) and cor.rows["ball"].r == pytest.approx(r_l2)
    assert cor.rows["ball"].C == pytest.approx(64 * math.log1p(2 * r_l2 / eps) / math.log(512))
    assert cor.rows["ball"].C > rep.rows["ball"].C  # r_l2 > r∞ for any vector with two non-zero coordinates
    assert cor.rows["cone"].C <= cor.rows["ball"].C + 1e-12  # a cap of the sphere packs fewer points than the ball
    assert cor.cells.n_samples == 1500 and 1 <= cor.cells.tokens_hit <= 512

    again = support.analyse_model(h, "tiny", n_prompts=8, lengths=[4, 8], cell_samples=1500, store=store)
    for method in ("voronoi_box", "argmax_region"):
        assert again.columns[method].to_dict() == r.columns[method].to_dict()


def test_load_available_never_substitutes_an_untrained_model(monkeypatch):
    """A model that cannot be loaded is skipped with its reason; random-tiny runs only when asked for."""
    from accessibility_lib.models import loading

    real = loading.load_model

    def fake_load(name, device="cpu", dtype=torch.float32, **kw):
        if name == "gemma-3-270m" and dtype == torch.float16:  # what load_model says for Gemma-3 in fp16
            raise ValueError("model 'gemma-3-270m' in torch.float16: the residual stream overflows float16")
        return real(name, device=device, dtype=dtype, **kw)

    monkeypatch.setattr(loading, "load_model", fake_load)
    handles, notes = support.load_available(["gemma-3-270m"], dtype=torch.float16, lengths=[4])
    assert handles == []  # nothing in its place
    assert len(notes) == 1 and notes[0].startswith("gemma-3-270m: skipped") and "overflows float16" in notes[0]
    assert not any("random-tiny" in n for n in notes)

    handles, notes = support.load_available(["acme/missing-model", "nano"], lengths=[4])
    assert [name for name, _ in handles] == ["nano"]  # the one that loads, and only it
    assert any(n.startswith("acme/missing-model: skipped") for n in notes)

    handles, notes = support.load_available(["random-tiny"], lengths=[4])  # listed: the reader asked for it
    assert [name for name, _ in handles] == ["random-tiny"] and notes == []

    handles, notes = support.load_available(["acme/missing-model"], fallback=True, lengths=[4])  # asked for in code
    assert [name for name, _ in handles] == ["random-tiny"]
    assert any("UNTRAINED" in n and "instead" in n for n in notes)


def test_stored_radii_reads_the_committed_artifacts_and_names_the_missing(tmp_path):
    radii, notes = support.stored_radii(["smollm2-135m", "no-such-model"])
    art = support.load_artifact("smollm2-135m")
    assert radii["smollm2-135m"]["l2"] == art.stats["l2"] and radii["smollm2-135m"]["linf"] == art.stats["linf"]
    assert radii["smollm2-135m"]["l2"] >= radii["smollm2-135m"]["linf"] > 0  # a largest L2 norm bounds every coordinate
    assert f"{art.stats['samples']} last-layer embeddings" in radii["smollm2-135m"]["sample"]
    assert "no-such-model" not in radii and len(notes) == 1 and "support_artifact.py --model no-such-model" in notes[0]
    assert support.stored_radii(["smollm2-135m"], folder=tmp_path) == (
        {},
        [notes[0].replace("no-such-model", "smollm2-135m").replace(str(support.ARTIFACT_DIR), str(tmp_path))],
    )


def test_an_artifact_with_the_old_method_keys_loads_under_the_new_names(tmp_path):
    """The first artifacts called the methods "replication" and "corrected": they load as voronoi_box and argmax_region."""
    import json

    data = json.loads((support.ARTIFACT_DIR / "smollm2-135m.json").read_text())
    new = support.load_artifact("smollm2-135m")
    old_of = {v: k for k, v in table1.OLD_METHOD_KEYS.items()}
    data["columns"] = {old_of[m]: {**c, "method": old_of[m]} for m, c in data["columns"].items()}
    (tmp_path / "smollm2-135m.json").write_text(json.dumps(data))
    old = support.load_artifact("smollm2-135m", folder=tmp_path)
    assert set(old.columns) == set(table1.METHODS) == set(new.columns)
    for m in table1.METHODS:
        assert old.columns[m].method == m
        assert {k: r.C for k, r in old.columns[m].rows.items()} == {k: r.C for k, r in new.columns[m].rows.items()}
    data["columns"] = {"nearest_row": next(iter(data["columns"].values()))}
    (tmp_path / "smollm2-135m.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="unknown support method 'nearest_row'"):
        support.load_artifact("smollm2-135m", folder=tmp_path)
