"""The shipped ``nano`` model (accessibility_lib/data/nano/): small, fast to load, better than unigram.

Anchors outside the weights: perplexity on the held-out chapters against a unigram fitted on those very
targets, and the held-out text's own continuation of formulaic King James phrases (counted by the test).
PPL_MAX was measured on the shipped weights (see MODEL_CARD.md there and train_log.json).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pytest
import torch

NANO = Path(__file__).resolve().parents[2] / "accessibility_lib" / "data" / "nano"
# Measured on the shipped weights (2026-11-30, torch 2.13 CPU): perplexity 32.17 on the first 24
# scoring windows (30.89 on all 187, the model card's number); oracle unigram on the same 24 windows
# 374.7; train-set unigram (model card) 414.5.
N_WINDOWS = 24
PPL_MAX = 35.0
PROMPT = "And God said"
# Formulaic phrases of the King James text, each followed in the held-out chapters by one word far more often
# than by any other; the expected word is counted in heldout.txt by the test (text outside the weights).
KJV_CONTEXTS = ["And it came to", "Thus saith the", "the children of", "the house of the"]


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


def _greedy_by_recompute(model, ids: torch.Tensor, n: int) -> list[int]:
    """n greedy tokens by re-running the whole sequence each step (no KV cache, no generate())."""
    seq = ids[0].tolist()
    with torch.no_grad():
        for _ in range(n):
            seq.append(int(model(input_ids=torch.tensor([seq])).logits[0, -1].argmax()))
    return seq[ids.shape[1] :]


def test_greedy_continues_formulaic_kjv_phrases_as_the_heldout_text_does(nano):
    """Outside anchor: the held-out King James chapters (never trained on) decide the expected next word."""
    import collections
    import re

    tok, model = nano
    text = (NANO / "heldout.txt").read_text(encoding="utf-8")
    for context in KJV_CONTEXTS:
        following = collections.Counter(m.group(1) for m in re.finditer(re.escape(context) + r"\s+(\w+)", text))
        (word, count), *rest = following.most_common()
        assert count >= 10 and count > sum(c for _, c in rest), (context, following)  # an absolute majority
        x = tok(context, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            out = model.generate(x, max_new_tokens=3, do_sample=False, pad_token_id=tok.pad_token_id)
        said = tok.decode(out[0, x.shape[1] :])
        assert said.split()[0].strip(",.;:") == word, (context, said, following.most_common(3))


def test_greedy_decoding_paths_agree(nano):
    """generate() with its KV cache and a plain full-recompute argmax loop give the same 16 tokens."""
    tok, model = nano
    x = tok(PROMPT, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        out = model.generate(x, max_new_tokens=16, do_sample=False, pad_token_id=tok.pad_token_id)
    cont = out[0, x.shape[1] :].tolist()
    assert cont == _greedy_by_recompute(model, x, 16), tok.decode(cont)
    words = tok.decode(cont).split()
    assert len(words) >= 8 and sum(w.strip(",.;:").isalpha() for w in words) >= 0.8 * len(words)  # English words
