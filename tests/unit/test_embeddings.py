"""Tests of accessibility_lib.geometry.embeddings on a tiny random GPT-NeoX (built from a config, no hub)."""

import numpy as np
import pytest
import torch
import transformers

from accessibility_lib.geometry import embeddings as E
from accessibility_lib.ground.results import ResultStore


class _Tok:
    """Minimal tokenizer stand-in: 60 ids, 0 and 1 special."""

    all_special_ids = [0, 1]
    pad_token_id = 0

    def __len__(self):
        return 60


class _Handle:
    """The models.py handle interface, on a tiny GPT-NeoX (d = 16, |V| = 64 rows, 4 padded)."""

    def __init__(self, dtype=torch.float32):
        cfg = transformers.GPTNeoXConfig(
            vocab_size=64,
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=32,
        )
        torch.manual_seed(0)
        self.model = transformers.GPTNeoXForCausalLM(cfg).to(dtype).eval()
        self.tokenizer = _Tok()
        self.d_model, self.d_vocab, self.n_ctx, self.name = 16, 64, 32, "tiny-neox"
        self.calls = 0
        self.seen = []

    def final_embeddings(self, input_ids=None, attention_mask=None):
        self.calls += 1
        self.seen.append(input_ids.clone())
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        return out.hidden_states[-1][:, -1]


def test_shapes_and_logits_consistency(tmp_path):
    h = _Handle()
    got = E.sample_embeddings(h, 10, [3, 8], token_budget=24, store=ResultStore(tmp_path), store_chunk=4)
    assert set(got) == {3, 8} and got[3].shape == (10, 16) and got[8].dtype == np.float32
    ids = E.prompt_tokens(h, 8, 0, 4)
    logits = h.model(input_ids=ids).logits[:, -1]
    W = h.model.get_output_embeddings().weight
    assert torch.allclose(torch.from_numpy(got[8][:4]) @ W.T, logits, atol=1e-4)
    # token budget: batches of 24 // 8 = 3 prompts, never more
    assert max(x.shape[0] for x in h.seen if x.shape[1] == 8) == 3


def test_prompts_exclude_specials_and_padding_and_are_deterministic():
    h = _Handle()
    a = E.prompt_tokens(h, 50, 2, 40, seed=3)
    assert a.shape == (40, 50)
    assert a.min() >= 2 and a.max() < 60
    assert torch.equal(a, E.prompt_tokens(h, 50, 2, 40, seed=3))
    assert not torch.equal(a, E.prompt_tokens(h, 50, 3, 40, seed=3))


def test_resume_after_crash_does_not_recompute(tmp_path):
    store = ResultStore(tmp_path)
    h = _Handle()
    full = E.sample_embeddings(_Handle(), 12, [5], store=None, store_chunk=4)

    class Crash(RuntimeError):
        pass

    orig = h.final_embeddings

    def crashing(**kw):
        if h.calls >= 2:
            raise Crash
        return orig(**kw)

    h.final_embeddings = crashing
    with pytest.raises(Crash):
        E.sample_embeddings(h, 12, [5], store=store, store_chunk=4, token_budget=20)
    assert len(list(store.entries(E.NAMESPACE))) == 2  # two chunks finished before the crash
    h2 = _Handle()
    again = E.sample_embeddings(h2, 12, [5], store=store, store_chunk=4, token_budget=20)
    assert h2.calls == 1  # only the missing chunk was computed
    np.testing.assert_allclose(again[5], full[5], atol=1e-5)
    assert not list(tmp_path.rglob("*.tmp"))  # no half-written file left


def test_bad_inputs():
    h = _Handle()
    with pytest.raises(ValueError, match="context length"):
        E.sample_embeddings(h, 2, [33])
    with pytest.raises(ValueError):
        E.sample_embeddings(h, 0, [4])
    with pytest.raises(ValueError):
        E.sample_embeddings(h, 2, [])
    with pytest.raises(ValueError, match="source"):
        E.sample_embeddings(h, 2, [4], source="pg")
    with pytest.raises(ValueError, match="fp32 or bf16"):
        E.sample_embeddings(_Handle(torch.float16), 2, [4])
    h.name = None
    with pytest.raises(ValueError, match="model key"):
        E.sample_embeddings(h, 2, [4], store=ResultStore("/tmp/unused-store"))
