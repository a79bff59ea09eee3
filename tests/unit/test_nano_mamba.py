"""The shipped ``nano-mamba`` (accessibility_lib/data/nano_mamba/): a real state-space LM, like for like with nano.

Anchors outside the weights: the held-out chapters (perplexity against a unigram fitted on those very
targets), nano's tokenizer and token streams (the same text), and the decoding paths the book relies on
(KV-cache greedy decoding equals a full recompute; h·W_Uᵀ equals the model's logits). The training script's
pieces that need no weights are tested even before the model is shipped.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
NANO = ROOT / "accessibility_lib" / "data" / "nano"
MAMBA = ROOT / "accessibility_lib" / "data" / "nano_mamba"
shipped = pytest.mark.skipif(
    not (MAMBA / "model.safetensors").is_file(),
    reason="nano-mamba not trained yet: nice -n 10 .venv/bin/python scripts/train_nano_mamba.py (see its docstring)",
)
N_WINDOWS = 8


def test_training_script_builds_a_like_for_like_model():
    """Without weights: the architecture the script trains has nano's width, vocabulary and a similar size."""
    T = _train_script()
    model = T.make_mamba(4096, 128, 7, 4, seed=0, use_mambapy=False)
    n = sum(p.numel() for p in model.parameters())
    nano_n = json.loads((NANO / "train_log.json").read_text())["n_params"]
    assert type(model).__name__ == "MambaForCausalLM"
    assert model.get_output_embeddings().weight is not model.get_input_embeddings().weight  # untied, as nano
    assert n == 1_800_448 and abs(n / nano_n - 1) < 0.05, (n, nano_n)


def _train_script():
    from accessibility_lib.models import nano_mamba

    return nano_mamba


def test_training_scan_matches_the_reference_scan():
    """The training script's hand-written scan: gradcheck in float64, and equal (values and gradients) to
    autograd through Hugging Face's reference sequential scan."""
    import transformers.models.mamba.modeling_mamba as MM

    T = _train_script()
    gen = torch.Generator().manual_seed(0)
    b, n_inner, L, N = 2, 3, 5, 2
    core = (torch.rand(b, n_inner, L, dtype=torch.float64, generator=gen), torch.randn(b, n_inner, L, dtype=torch.float64, generator=gen),
            -torch.rand(n_inner, N, dtype=torch.float64, generator=gen), torch.randn(b, L, N, dtype=torch.float64, generator=gen),
            torch.randn(b, L, N, dtype=torch.float64, generator=gen))  # fmt: skip
    core = tuple(t.requires_grad_(True) for t in core)
    assert torch.autograd.gradcheck(lambda *a: T.SelectiveScan.apply(*a)[0], core)
    args = {"hidden_states": torch.randn(b, 4, 7, generator=gen), "dt": torch.randn(b, 4, 7, generator=gen),
            "A": -torch.rand(4, 3, generator=gen), "B": torch.randn(b, 3, 7, generator=gen),
            "C": torch.randn(b, 3, 7, generator=gen), "D": torch.randn(4, generator=gen),
            "z": torch.randn(b, 4, 7, generator=gen), "delta_bias": torch.randn(4, generator=gen)}  # fmt: skip
    args = {k: v.requires_grad_(True) for k, v in args.items()}
    w = torch.randn(b, 4, 7, generator=gen)
    reference = getattr(MM, "_reference_selective_scan", MM.mamba_selective_scan)
    out = []
    for fn in (reference, T.selective_scan):
        y, last = fn(**args, delta_softplus=True, return_last_state=True, use_mambapy=False, use_associative_scan=False)
        out.append((y, last, torch.autograd.grad((y * w).sum(), list(args.values()))))
    (y0, l0, g0), (y1, l1, g1) = out
    assert torch.allclose(y0, y1, atol=1e-5) and torch.allclose(l0, l1, atol=1e-5)
    for name, a, c in zip(args, g0, g1):
        assert torch.allclose(a, c, atol=1e-4, rtol=1e-4), name


@shipped
def test_files_sizes_and_config():
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "MODEL_CARD.md",
                 "train_log.json"):  # fmt: skip
        assert (MAMBA / name).is_file(), name
    assert (MAMBA / "model.safetensors").stat().st_size <= 20 * 2**20
    cfg = json.loads((MAMBA / "config.json").read_text())
    assert cfg["model_type"] == "mamba" and cfg["use_mambapy"] is False  # the reference sequential scan
    assert (cfg["vocab_size"], cfg["hidden_size"], cfg["num_hidden_layers"], cfg["state_size"]) == (4096, 128, 7, 4)
    assert cfg["tie_word_embeddings"] is False
    assert (MAMBA / "tokenizer.json").read_bytes() == (NANO / "tokenizer.json").read_bytes()  # nano's own
    log, nano_log = (json.loads((d / "train_log.json").read_text()) for d in (MAMBA, NANO))
    for key in ("tokens_seen", "tokens_train_stream", "tokens_heldout_stream", "heldout_tokens_scored"):
        assert log[key] == nano_log[key], key  # the same text, split and token budget, scored the same way
    card = (MAMBA / "MODEL_CARD.md").read_text()
    assert f"{log['heldout_ppl']:.1f}" in card and f"{log['heldout_nll_nats']:.3f}" in card  # the card is filled in


@pytest.fixture(scope="module")
def handle():
    from accessibility_lib.models.loading import load_model

    return load_model("nano-mamba")  # verifies h·W_Uᵀ + b_U == the model's logits


@shipped
def test_load_model_and_decoding_paths(handle):
    from accessibility_lib.models.decoding import greedy_decode, recompute_argmax

    assert type(handle.model).__name__ == "MambaForCausalLM" and handle.d_model == 128 and handle.d_vocab == 4096
    x = handle.embed(handle.encode(["And God said unto", "In the beginning"])[0][:, :3])  # (2, 3, d)
    dec = greedy_decode(handle, x, 6)
    assert torch.equal(recompute_argmax(handle, x, dec), dec)  # KV-cache (recurrent state) == full recompute
    h = handle.final_embeddings(inputs_embeds=x)
    ref = handle.forward_logits(inputs_embeds=x)
    assert torch.allclose(handle.logits_from_embeddings(h), ref, atol=1e-4, rtol=1e-4)


@shipped
def test_heldout_perplexity_beats_unigram(handle):
    tok = handle.tokenizer
    log = json.loads((MAMBA / "train_log.json").read_text())
    chapters = (NANO / "heldout.txt").read_text(encoding="utf-8").rstrip("\n").split("\n\n")
    ids = [tok.eos_token_id]
    for ch in chapters:
        ids += tok(ch, add_special_tokens=False, verbose=False)["input_ids"] + [tok.eos_token_id]
    ids = np.asarray(ids, dtype=np.int64)
    assert len(ids) == log["tokens_heldout_stream"]
    wins = torch.from_numpy(ids[: N_WINDOWS * 256].reshape(N_WINDOWS, 256))
    with torch.no_grad():
        logits = handle.model(input_ids=wins, use_cache=False).logits[:, :-1]
    nll = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), wins[:, 1:].reshape(-1)).item()
    targets = wins[:, 1:].reshape(-1).numpy()
    counts = np.bincount(targets, minlength=len(tok)) + 1.0
    oracle_ppl = math.exp(-np.log(counts / counts.sum())[targets].mean())
    assert math.exp(nll) < 0.2 * oracle_ppl, (math.exp(nll), oracle_ppl)
    assert log["heldout_ppl"] < 0.2 * log["unigram_ppl"]


@shipped
def test_crams_and_measures_like_any_handle(handle):
    """The book's cramming and perturbation code run on the state-space model unchanged."""
    from accessibility_lib.experiments import effective_eps, perturbation
    from accessibility_lib.experiments.cramming import cram

    target = handle.encode(["And the LORD"])[0][:, :3]
    res = cram(handle, target, m=1, max_steps=200, patience=100, lr=1e-2, seed=0)
    assert len(res) == 1 and res.success[0], (res.best_accuracy, res.final_loss)  # crammed, not just stopped
    assert 0 < res.steps[0] < 200  # it took some updates and stopped early, on success
    # an independent path: the model's own forward, one token at a time without a cache, reproduces the target
    x = res.prompts[:1].to(next(handle.model.parameters()).dtype)
    got = []
    with torch.no_grad():
        for _ in range(target.shape[-1]):
            nxt = handle.model(inputs_embeds=x, use_cache=False).logits[0, -1].argmax().item()
            got.append(nxt)
            x = torch.cat([x, handle.embed(torch.tensor([[nxt]])).to(x.dtype)], 1)
    assert got == target.reshape(-1).tolist()
    _, x = perturbation.natural_prompts(handle, 2, 2, seed=0)
    nxt, _ = effective_eps.h_sensitivity(handle, x, n_tokens=2, n_directions=2, seed=0)
    assert np.all(np.isfinite(nxt.worst)) and np.all(nxt.worst > 0)
