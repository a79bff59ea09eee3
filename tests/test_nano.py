"""The shipped ``nano`` model (accessibility_lib/data/nano/): small, fast to load, better than unigram.

Numbers below were measured on the shipped weights (see MODEL_CARD.md there and train_log.json).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pytest
import torch

NANO = Path(__file__).resolve().parents[1] / "accessibility_lib" / "data" / "nano"
# Measured on the shipped weights (2026-11-30, torch 2.13 CPU): perplexity 32.17 on the first 24
# scoring windows (30.89 on all 187, the model card's number); oracle unigram on the same 24 windows
# 374.7; train-set unigram (model card) 414.5.
N_WINDOWS = 24
PPL_MAX = 35.0
PROMPT = "And God said"
# greedy continuation: ' unto him, I will not give thee a wife of the daughters of the land'
GREEDY_IDS = [324, 334, 13, 298, 397, 343, 653, 398, 261, 975, 270, 260, 1311, 270, 260, 507]


@pytest.fixture(scope="module")
def nano():
    from transformers import AutoTokenizer, GPTNeoXForCausalLM

    tok = AutoTokenizer.from_pretrained(str(NANO))
    model = GPTNeoXForCausalLM.from_pretrained(str(NANO)).eval()
    return tok, model


def test_files_and_sizes():
    for name in [
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
        "heldout.txt",
        "MODEL_CARD.md",
        "train_log.json",
    ]:
        assert (NANO / name).is_file(), name
    assert (NANO / "model.safetensors").stat().st_size <= 10 * 2**20
    cfg = json.loads((NANO / "config.json").read_text())
    assert cfg["model_type"] == "gpt_neox" and cfg["use_parallel_residual"] is True
    assert (cfg["vocab_size"], cfg["hidden_size"], cfg["num_hidden_layers"]) == (4096, 128, 4)
    assert (cfg["bos_token_id"], cfg["eos_token_id"], cfg["pad_token_id"]) == (0, 0, 1)


def test_loads_offline_in_under_a_second():
    from transformers import AutoTokenizer, GPTNeoXForCausalLM

    best = math.inf
    for _ in range(2):  # best of two: the machine is shared; the first call also warms file caches
        t = time.perf_counter()
        tok = AutoTokenizer.from_pretrained(str(NANO))
        model = GPTNeoXForCausalLM.from_pretrained(str(NANO))
        best = min(best, time.perf_counter() - t)
    assert best < 1.0, f"load took {best:.2f} s"
    assert len(tok) == 4096 and sum(p.numel() for p in model.parameters()) == 1_841_920


def _heldout_stream(tok) -> np.ndarray:
    """The held-out token stream exactly as scripts/train_nano.py scored it: EOS ch EOS ch ... EOS."""
    chapters = (NANO / "heldout.txt").read_text(encoding="utf-8").rstrip("\n").split("\n\n")
    ids = [tok.eos_token_id]
    for ch in chapters:
        ids += tok(ch, add_special_tokens=False, verbose=False)["input_ids"] + [tok.eos_token_id]
    return np.asarray(ids, dtype=np.int64)


def test_heldout_perplexity_beats_unigram(nano):
    tok, model = nano
    log = json.loads((NANO / "train_log.json").read_text())
    ids = _heldout_stream(tok)
    assert len(ids) == log["tokens_heldout_stream"]
    ctx, n_win = 256, N_WINDOWS  # the first 24 of the 187 scoring windows keep this test to seconds
    wins = torch.from_numpy(ids[: n_win * ctx].reshape(n_win, ctx))  # (W, ctx)
    with torch.no_grad():
        logits = torch.cat([model(input_ids=w).logits[:, :-1] for w in wins.split(16)])  # (W, ctx-1, V)
    nll = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), wins[:, 1:].reshape(-1)).item()
    ppl = math.exp(nll)
    # an oracle unigram fitted on these very held-out targets (add-one) is a *stronger* baseline than the
    # train-set unigram of the model card; the model must beat it by a wide margin
    targets = wins[:, 1:].reshape(-1).numpy()
    counts = np.bincount(targets, minlength=len(tok)) + 1.0
    oracle_ppl = math.exp(-np.log(counts / counts.sum())[targets].mean())
    assert ppl < PPL_MAX, ppl
    assert ppl < 0.1 * oracle_ppl, (ppl, oracle_ppl)
    assert log["heldout_ppl"] < 0.1 * log["unigram_ppl"]


def test_greedy_continuation_is_recorded(nano):
    tok, model = nano
    x = tok(PROMPT, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        out = model.generate(x, max_new_tokens=len(GREEDY_IDS), do_sample=False, pad_token_id=tok.pad_token_id)
    assert out[0, x.shape[1] :].tolist() == GREEDY_IDS, tok.decode(out[0])
