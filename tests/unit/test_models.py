"""Tests of accessibility_lib.models.handle: logit parity of final_embeddings on tiny random models of every
supported architecture, padding, dtypes, loading from folders and clear errors; real models when fetched."""

from __future__ import annotations

import ast
import re
import time
from pathlib import Path

import pytest
import torch
import transformers as tf

from accessibility_lib.geometry import cells
from accessibility_lib.models.handle import wrap_model
from accessibility_lib.models.loading import CorruptWeightsError, ModelNotAvailableError, load_model

V, D = 96, 32


def _tiny(arch: str, **extra):
    """A tiny random-weight causal LM of a real architecture, built from a config (no download)."""
    common = dict(vocab_size=V, max_position_embeddings=64, initializer_range=0.2)
    if arch == "gpt_neox":
        cfg = tf.GPTNeoXConfig(
            hidden_size=D, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, **common
        )
        cls = tf.GPTNeoXForCausalLM
    elif arch == "llama":
        cfg = tf.LlamaConfig(
            hidden_size=D,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            **common,
        )
        cls = tf.LlamaForCausalLM
    elif arch == "qwen2":
        cfg = tf.Qwen2Config(
            hidden_size=D,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            **common,
        )
        cls = tf.Qwen2ForCausalLM
    elif arch == "gemma3":
        cfg = tf.Gemma3TextConfig(
            hidden_size=D,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=1,
            head_dim=8,
            sliding_window=4,
            **common,
            **extra,
        )
        cls = tf.Gemma3ForCausalLM
    elif arch == "gpt2":
        cfg = tf.GPT2Config(vocab_size=V, n_embd=D, n_layer=2, n_head=4, n_positions=64, initializer_range=0.2)
        cls = tf.GPT2LMHeadModel
    else:  # pragma: no cover
        raise KeyError(arch)
    torch.manual_seed(0)
    model = cls(cfg)
    if arch == "gpt_neox":  # give one architecture a head bias, so b_U is exercised
        model.get_output_embeddings().bias = torch.nn.Parameter(torch.randn(V) * 0.5)
    return model


ARCHS = ["gpt_neox", "llama", "qwen2", "gemma3", "gpt2"]
IDS = torch.tensor([[5, 17, 33, 2, 60, 9, 41], [7, 7, 80, 3, 11, 95, 1]])  # (2, 7)


@pytest.fixture(scope="module", params=ARCHS)
def handle(request):
    return wrap_model(_tiny(request.param), name=request.param)


def test_frozen_and_shapes(handle):
    assert not handle.model.training
    assert all(not p.requires_grad for p in handle.model.parameters())
    assert handle.W_U.shape == (V, D) and handle.b_U.shape == (V,)
    assert (handle.d_model, handle.d_vocab, handle.n_ctx) == (D, V, 64)


def test_logit_parity_with_the_model_forward(handle):
    h = handle.final_embeddings(IDS)  # (2, D)
    assert h.shape == (2, D)
    with torch.no_grad():
        ref = handle.model(input_ids=IDS).logits[:, -1]  # the model's own, no mask given
    got = h @ handle.W_U.T + handle.b_U
    err = float((got - ref).abs().max() / ref.abs().max())
    assert err < 1e-5, err
    assert ref.abs().max() > 0.1  # not a trivial all-zero comparison


def test_argmax_is_the_greedy_next_token(handle):
    h = handle.final_embeddings(IDS)
    ids = cells.argmax_tokens(h, handle.W_U, handle.b_U)
    with torch.no_grad():
        greedy = handle.model.generate(
            IDS, attention_mask=torch.ones_like(IDS), max_new_tokens=1, do_sample=False, pad_token_id=0
        )[:, -1]
    assert torch.equal(ids, greedy)


@pytest.mark.parametrize("side", ["left", "right"])
def test_padding(handle, side):
    short = IDS[1, :4]
    pad = torch.zeros(3, dtype=torch.int64)
    row = torch.cat([pad, short]) if side == "left" else torch.cat([short, pad])
    mask = (torch.arange(7) >= 3) if side == "left" else (torch.arange(7) < 4)
    batch = torch.stack([IDS[0], row])
    masks = torch.stack([torch.ones(7, dtype=torch.int64), mask.long()])
    h = handle.final_embeddings(batch, attention_mask=masks)
    ref0 = handle.final_embeddings(IDS[:1])
    ref1 = handle.final_embeddings(short[None])
    assert torch.allclose(h[0], ref0[0], atol=1e-5)
    assert torch.allclose(h[1], ref1[0], atol=1e-5)
    # parity with the model's own logits under the same mask
    logits = handle.forward_logits(batch, attention_mask=masks)
    assert torch.allclose(h @ handle.W_U.T + handle.b_U, logits, atol=1e-5)


def test_inputs_embeds_of_another_dtype(handle):
    e = handle.embed(IDS)  # (2, 7, D)
    assert e.shape == (2, 7, D)
    h1 = handle.final_embeddings(IDS)
    h2 = handle.final_embeddings(inputs_embeds=e.double())  # float64 into a float32 model
    assert h2.dtype == torch.float32
    assert torch.allclose(h1, h2, atol=1e-5)


def test_gemma_embed_includes_sqrt_d_scaling():
    h = wrap_model(_tiny("gemma3"))
    raw = h.model.get_input_embeddings().weight[IDS[0]]
    assert torch.allclose(
        h.embed(IDS[:1])[0], raw * D**0.5, rtol=1e-3
    )  # Gemma scales by sqrt(d) (in the embedding dtype)


def test_gemma_softcap_parity_is_with_pre_cap_logits():
    h = wrap_model(_tiny("gemma3", final_logit_softcapping=0.5))
    assert h.softcap == 0.5
    z = h.final_embeddings(IDS) @ h.W_U.T + h.b_U  # pre-cap
    with torch.no_grad():
        ref = h.model(input_ids=IDS).logits[:, -1]
    assert torch.allclose(0.5 * torch.tanh(z / 0.5), ref, atol=1e-5)
    assert not torch.allclose(z, ref, atol=1e-3)  # the cap is active at this scale
    assert torch.allclose(h.logits_from_embeddings(h.final_embeddings(IDS)), ref, atol=1e-5)
    assert torch.equal(z.argmax(1), ref.argmax(1))


def test_bfloat16_model_and_float32_points():
    h = wrap_model(_tiny("llama").to(torch.bfloat16))
    assert h.dtype == torch.bfloat16
    emb = h.final_embeddings(IDS)
    assert emb.dtype == torch.bfloat16
    pts = emb.float() + 0.01 * torch.randn(2, D)
    got = cells.argmax_tokens(pts, h.W_U, h.b_U)  # float32 points, bf16 W_U: computed in float32
    ref = (pts @ h.W_U.float().T + h.b_U.float()).argmax(1)
    assert torch.equal(got, ref)


def test_bad_calls(handle):
    with pytest.raises(ValueError, match="exactly one"):
        handle.final_embeddings()
    with pytest.raises(ValueError, match="input_ids must lie"):
        handle.final_embeddings(torch.tensor([[V + 3]]))
    with pytest.raises(ValueError, match="attention_mask"):
        handle.final_embeddings(IDS, attention_mask=torch.ones(2, 5))
    with pytest.raises(ValueError, match="inputs_embeds"):
        handle.final_embeddings(inputs_embeds=torch.zeros(1, 3, D + 1))


# --- one way from token ids to input vectors -------------------------------------------------


@pytest.mark.parametrize("arch", ARCHS)
def test_embed_fed_as_inputs_embeds_gives_the_input_ids_logits(arch):
    """handle.embed(ids) is what the model reads: as inputs_embeds it gives the logits of input_ids, every
    architecture (GPT-2 adds its position embeddings inside the model, Gemma scales by sqrt(d) in the module)."""
    h = wrap_model(_tiny(arch), name=arch)
    with torch.no_grad():
        want = h.model(input_ids=IDS).logits  # (2, 7, V): the model's own path from ids
        got = h.model(inputs_embeds=h.embed(IDS)).logits
    assert want.abs().max() > 0.1
    assert torch.allclose(got, want, atol=1e-5, rtol=1e-5), float((got - want).abs().max())
    # and through the handle's own entry points
    assert torch.allclose(h.forward_logits(inputs_embeds=h.embed(IDS)), h.forward_logits(IDS), atol=1e-5)


def test_raw_embedding_rows_are_not_gemmas_inputs():
    """The control that makes the test above able to fail: raw weight rows differ from what Gemma reads."""
    h = wrap_model(_tiny("gemma3"), name="gemma3")
    raw = h.model.get_input_embeddings().weight[IDS]  # raw rows, deliberately: the wrong path
    with torch.no_grad():
        want = h.model(input_ids=IDS).logits
        wrong = h.model(inputs_embeds=raw).logits
    assert (wrong - want).abs().max() > 1e-2


# Names of embedding modules / matrices in Hugging Face models and in this project's code.
_EMB = r"(?:get_input_embeddings\(\)|embed_tokens|embed_in|\bwte|word_embeddings|\bemb\w*|\bembedding\w*)"
_RAW_WEIGHT = re.compile(_EMB + r"\.weight(?P<after>\.\w+|\[|\b)")
_HARMLESS = {".shape", ".numel", ".data_ptr", ".dtype", ".device", ".size", ".requires_grad", ".grad"}
_FUNCTIONAL = re.compile(r"\b(?:F|functional)\.embedding\(")
# calling an embedding module directly: correct vectors, but a second path beside ModelHandle.embed
_MODULE_CALL = re.compile(r"(?:get_input_embeddings\(\)|\.embed_tokens|\.embed_in|\.wte|\.word_embeddings)\(")
# Functions allowed to touch embedding weights or modules, with the reason.
_ALLOWED = {
    (
        "accessibility_lib/experiments/copying_bases.py",
        "cut_vocabulary",
    ): "weight surgery: keeps rows of the vocabulary",
    ("accessibility_lib/models/handle.py", "embed"): "ModelHandle.embed itself: the one path from ids to input vectors",
}


def raw_embedding_uses(text: str, path: str = "<text>") -> list[str]:
    """Lines of ``text`` that read raw rows of an embedding weight (or call F.embedding) instead of the module."""
    allowed_lines: set[int] = set()
    if path.endswith(".py"):
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and (path, node.name) in _ALLOWED:
                allowed_lines.update(range(node.lineno, node.end_lineno + 1))
    hits = []
    for i, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0] if path.endswith(".py") else line
        if i in allowed_lines or "is " in code and ".weight is " in code:
            continue
        bad = [m for m in _RAW_WEIGHT.finditer(code) if m.group("after") not in _HARMLESS]
        if bad or _FUNCTIONAL.search(code) or _MODULE_CALL.search(code):
            hits.append(f"{path}:{i}: {line.strip()}")
    return hits


def test_scanner_catches_raw_rows():
    for bad in [
        "embedding = model.get_input_embeddings().weight.detach()  # hard prompts are its rows",
        "x = model.model.embed_tokens.weight[ids]",
        "x = gpt2.transformer.wte.weight[ids] + pos",
        "X = emb.weight[ids]",
        "x = torch.nn.functional.embedding(ids, W)",
        "x = F.embedding(ids, model.gpt_neox.embed_in.weight)",
        "x = model.get_input_embeddings()(ids)",
        "x = model.model.embed_tokens(ids)",
    ]:
        assert raw_embedding_uses(bad), bad
    for fine in [
        "x = handle.embed(ids)",
        "n = model.get_input_embeddings().weight.shape[0]",
        "tied = head.weight is emb.weight",
        "n_emb = h.model.get_input_embeddings().weight.numel()",
    ]:
        assert not raw_embedding_uses(fine), fine


def test_no_chapter_or_library_code_reads_raw_embedding_rows():
    root = Path(__file__).resolve().parents[2]
    files = sorted((root / "book").glob("*.md")) + sorted((root / "accessibility_lib").rglob("*.py"))
    files += sorted((root / "scripts").glob("*.py")) + sorted((root / "benchmarks").glob("*.py"))
    assert len(files) > 20
    hits = [h for f in files for h in raw_embedding_uses(f.read_text(encoding="utf-8"), f.relative_to(root).as_posix())]
    assert not hits, "ids must become inputs through ModelHandle.embed (the model's own module):\n" + "\n".join(hits)


# --- loading from folders, errors -------------------------------------------------------------


def _tokenizer():
    from tokenizers import Tokenizer, pre_tokenizers
    from tokenizers import models as tkm

    vocab = {f"w{i}": i for i in range(V)}
    vocab["<unk>"] = 0
    tok = Tokenizer(tkm.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return tf.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="w1")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny_llama")
    _tiny("llama").save_pretrained(d, safe_serialization=True)
    _tokenizer().save_pretrained(d)
    return d


def test_load_from_folder(folder):
    h = load_model(str(folder))
    ids, mask = h.encode(["w5 w6 w7", "w9"])
    assert ids.shape == (2, 3) and mask.tolist()[1].count(0) == 2
    logits = h.forward_logits(ids, attention_mask=mask)
    assert torch.allclose(h.final_embeddings(ids, attention_mask=mask) @ h.W_U.T, logits, atol=1e-5)
    assert all(not p.requires_grad for p in h.model.parameters())


def test_truncated_and_corrupted_weights(folder, tmp_path):
    import shutil

    for how in ("truncate", "garbage", "tiny"):
        d = tmp_path / how
        shutil.copytree(folder, d)
        f = next(d.glob("*.safetensors"))
        data = f.read_bytes()
        if how == "truncate":
            f.write_bytes(data[: len(data) // 2])
        elif how == "garbage":
            f.write_bytes(data[:8] + b"\xff" * 40 + data[48:])
        else:
            f.write_bytes(b"\x01\x02")
        with pytest.raises(CorruptWeightsError, match="truncated|corrupted"):
            load_model(str(d))


def test_no_safetensors_and_not_a_model_folder(folder, tmp_path):
    import shutil

    d = tmp_path / "nosafe"
    shutil.copytree(folder, d)
    for f in d.glob("*.safetensors"):
        f.unlink()
    with pytest.raises(ModelNotAvailableError, match="safetensors"):
        load_model(str(d))
    with pytest.raises(ModelNotAvailableError, match="config.json"):
        load_model(str(tmp_path))


def test_unknown_name_offline_lists_choices(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("ACCESSIBILITY_CACHE", str(tmp_path))  # nothing fetched: the message says how to fetch
    with pytest.raises(ModelNotAvailableError) as exc:
        load_model("no-such-org/no-such-model")
    msg = str(exc.value)
    assert "unreachable or offline" in msg
    for choice in ("'nano'", "smollm2-135m", "gemma-3-270m", "python -m accessibility_lib fetch", "local folder"):
        assert choice in msg
    (tmp_path / "smollm2-135m").mkdir()
    (tmp_path / "smollm2-135m" / "config.json").write_text("{}")
    with pytest.raises(ModelNotAvailableError) as exc:
        load_model("no-such-org/no-such-model")
    assert "'smollm2-135m' (fetched)" in str(exc.value) and "'gemma-3-270m' (not fetched yet" in str(exc.value)
    with pytest.raises(ValueError, match="dtype"):
        load_model("nano", dtype=torch.int32)


def test_named_model_not_fetched_names_the_command(monkeypatch, tmp_path):
    monkeypatch.setenv("ACCESSIBILITY_CACHE", str(tmp_path))
    for name in ("smollm2-135m", "gemma-3-270m"):
        with pytest.raises(ModelNotAvailableError, match=f"python -m accessibility_lib fetch {name}"):
            load_model(name)


def test_float16_overflow_is_named_with_the_dtypes_to_use():
    """A residual stream past float16's 65,504 (Gemma-3's, from block 8) is reported as such, not as an
    unsupported architecture: a Gemma-3 stand-in whose first block writes ~10^5 into the residual stream."""
    h = load_model("standin:google/gemma-3-270m", dtype=torch.float16)  # small random weights: it loads
    with torch.no_grad():  # Gemma's post-MLP norm scales the block's output: 3·10^4 overflows float16
        h.model.model.layers[0].post_feedforward_layernorm.weight.fill_(3e4)
    with pytest.raises(ValueError) as exc:
        wrap_model(h.model, h.tokenizer, name="gemma-like", verify=True)
    msg = str(exc.value)
    assert "'gemma-like'" in msg and "overflows float16 after block 1 of 2" in msg and "65,504" in msg
    assert "torch.bfloat16" in msg and "torch.float32" in msg
    assert "not supported by final_embeddings" not in msg
    wrap_model(h.model.float(), h.tokenizer, verify=True)  # the same weights in float32: no overflow, parity holds


@pytest.mark.realmodel("gemma-3-270m")
@pytest.mark.slow
def test_gemma3_in_float16_names_the_overflow():
    with pytest.raises(ValueError, match=r"overflows float16 after block \d+ of 18 .*65,504.*torch\.bfloat16"):
        load_model("gemma-3-270m", dtype=torch.float16)


# --- the shipped nano model and the fetched real models ---------------------------------------


def test_nano_resolves_and_parity():
    t = time.perf_counter()
    h = load_model("nano")
    assert time.perf_counter() - t < 5
    assert h.config.model_type == "gpt_neox"
    ids, mask = h.encode(["The quick brown fox", "In a distant future"])
    z = h.final_embeddings(ids, attention_mask=mask) @ h.W_U.T + h.b_U
    assert torch.allclose(z, h.forward_logits(ids, attention_mask=mask), atol=1e-4)


# Outside anchors for the fetched real models: facts any competent English model completes, checked on the
# decoded text (not on token ids recorded from our own dequantized copy), and a second decoding path.
FACTS = {
    "smollm2-135m": [
        ("The capital of France is", "Paris"),
        ("The first president of the United States was George", "Washington"),
        ("One, two, three, four,", "five, six"),
    ],
    "gemma-3-270m": [
        ("The capital of France is the city of", "Paris"),
        ("The first president of the United States was George", "Washington"),
        ("Monday, Tuesday, Wednesday,", "Thursday, Friday"),
    ],
}


def _check_facts_and_decoding(h, name):
    for prompt, fact in FACTS[name]:
        x = h.tokenizer(prompt, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            out = h.model.generate(
                x,
                attention_mask=torch.ones_like(x),
                max_new_tokens=6,
                do_sample=False,
                pad_token_id=h.tokenizer.pad_token_id,
            )
        cont = out[0, x.shape[1] :].tolist()
        assert h.tokenizer.decode(cont).strip().startswith(fact), (prompt, h.tokenizer.decode(cont))
        # the same tokens by plain full-recompute argmax through the handle (no KV cache, no generate())
        seq = x[0].tolist()
        for _ in cont:
            seq.append(int(h.forward_logits(torch.tensor([seq])).argmax()))
        assert seq[x.shape[1] :] == cont, (prompt, seq[x.shape[1] :], cont)


@pytest.mark.realmodel("smollm2-135m")
def test_smollm2_parity_and_greedy_continuation():
    h = load_model("smollm2-135m")
    assert (h.d_model, h.d_vocab, h.config.model_type) == (576, 49152, "llama")
    ids, mask = h.encode(["The quick brown fox", "https://", "In a distant future"])
    emb = h.final_embeddings(ids, attention_mask=mask)
    z = emb @ h.W_U.T + h.b_U
    ref = h.forward_logits(ids, attention_mask=mask)
    assert float((z - ref).abs().max() / ref.abs().max()) < 1e-5
    assert torch.equal(cells.argmax_tokens(emb, h.W_U, h.b_U), ref.argmax(1))
    _check_facts_and_decoding(h, "smollm2-135m")


@pytest.mark.realmodel("gemma-3-270m")
@pytest.mark.slow
def test_gemma3_parity_left_padding_and_greedy_continuation():
    h = load_model("gemma-3-270m")
    assert (h.d_model, h.d_vocab, h.config.model_type) == (640, 262144, "gemma3_text")
    ids, mask = h.encode(["The quick brown fox", "https://", "In a distant future"])  # Gemma pads on the left
    assert int(mask[:, 0].min()) == 0
    emb = h.final_embeddings(ids, attention_mask=mask)
    z = emb @ h.W_U.T + h.b_U
    ref = h.forward_logits(ids, attention_mask=mask)
    assert float((z - ref).abs().max() / ref.abs().max()) < 1e-5
    assert torch.equal(cells.argmax_tokens(emb, h.W_U, h.b_U), ref.argmax(1))
    raw = h.model.get_input_embeddings().weight[ids[0]]
    assert torch.allclose(h.embed(ids[:1])[0], raw * h.d_model**0.5, rtol=1e-3)  # sqrt(d) scaling included
    with torch.no_grad():  # and the scaled vectors are what the model reads
        want = h.model(input_ids=ids[:1, -4:]).logits
        got = h.model(inputs_embeds=h.embed(ids[:1, -4:])).logits
    assert torch.allclose(got, want, atol=1e-3, rtol=1e-3)
    _check_facts_and_decoding(h, "gemma-3-270m")
