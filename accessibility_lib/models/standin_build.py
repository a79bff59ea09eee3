"""Building a stand-in model: its config, a tokenizer laid out in the real id space, random weights.

The architectures themselves (vocabulary rows, tying, padding, context, family specifics) are in
:mod:`accessibility_lib.models.standins`.
"""

from __future__ import annotations

import zlib
from functools import lru_cache

import torch

from accessibility_lib.models.standins import (
    BASE_VOCAB,
    STANDIN_CORPORA,
    Architecture,
    architecture,
    shrink,
    standin_name,
)


def build_config(arch: Architecture):
    """The ``transformers`` config of a model with these facts (random weights come from it).

    Raises:
        ValueError: an unknown family.
    """
    import transformers

    ids = {
        "bos_token_id": arch.specials.get(arch.bos) if arch.bos else None,
        "eos_token_id": arch.specials.get(arch.eos) if arch.eos else None,
        "pad_token_id": arch.specials.get(arch.pad) if arch.pad else None,
    }
    common = dict(
        vocab_size=arch.d_vocab,
        hidden_size=arch.d_model,
        num_hidden_layers=arch.n_layers,
        num_attention_heads=arch.n_heads,
        intermediate_size=arch.d_ff,
        max_position_embeddings=arch.n_ctx,
        tie_word_embeddings=arch.tied,
        **ids,
    )
    x = arch.extra
    if arch.family == "gpt_neox":
        rope = {"rope_type": "default", "rope_theta": x["rope_theta"], "partial_rotary_factor": x["rotary_pct"]}
        return transformers.GPTNeoXConfig(
            **common, rope_parameters=rope, use_parallel_residual=True, attention_bias=True, hidden_act="gelu"
        )
    if arch.family == "qwen2":
        return transformers.Qwen2Config(
            **common,
            num_key_value_heads=arch.n_kv_heads,
            rope_parameters={"rope_type": "default", "rope_theta": x["rope_theta"]},
            rms_norm_eps=1e-6,
            use_sliding_window=False,
        )
    if arch.family == "llama":
        rope = dict(x.get("rope_scaling") or {"rope_type": "default"}, rope_theta=x["rope_theta"])
        return transformers.LlamaConfig(
            **common,
            num_key_value_heads=arch.n_kv_heads,
            head_dim=arch.head_dim,
            rope_parameters=rope,
            rms_norm_eps=1e-5,
            hidden_act="silu",
        )
    if arch.family == "gemma3_text":
        pattern = int(x["sliding_pattern"])
        layer_types = [
            "full_attention"
            if (i + 1) % pattern == 0 or i == arch.n_layers - 1 and arch.n_layers < pattern
            else "sliding_attention"
            for i in range(arch.n_layers)
        ]
        return transformers.Gemma3TextConfig(
            **common,
            num_key_value_heads=arch.n_kv_heads,
            head_dim=arch.head_dim,
            query_pre_attn_scalar=x["query_pre_attn_scalar"],
            sliding_window=x["sliding_window"],
            layer_types=layer_types,
            rope_parameters={
                "full_attention": {"rope_type": "default", "rope_theta": x["rope_theta"]},
                "sliding_attention": {"rope_type": "default", "rope_theta": x["rope_local_theta"]},
            },
            final_logit_softcapping=None,
            hidden_activation="gelu_pytorch_tanh",
        )
    raise ValueError(f"unknown family {arch.family!r}; known: gpt_neox, qwen2, llama, gemma3_text")


@lru_cache(maxsize=1)
def _base_bpe() -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The trained byte-level BPE: (tokens in id order, merges). Deterministic (a test checks it)."""
    import json

    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    missing = [str(p) for p in STANDIN_CORPORA if not p.exists()]
    if missing:
        raise FileNotFoundError(f"the stand-in tokenizer is trained on the shipped text; missing: {missing}")
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in STANDIN_CORPORA)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=BASE_VOCAB, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator([text[i : i + 10_000] for i in range(0, len(text), 10_000)], trainer)
    model = json.loads(tok.to_str())["model"]
    vocab = sorted(model["vocab"].items(), key=lambda kv: kv[1])
    merges = tuple(tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model["merges"])
    return tuple(t for t, _ in vocab), merges


def build_tokenizer(arch: Architecture):
    """A fast tokenizer with ``len == arch.n_tokens`` laid out in the real model's id space (see the module
    docstring): special tokens at their real ids, the trained BPE next, ``<|dummy_N|>`` up to the length.

    Raises:
        ValueError: a vocabulary too small for the BPE and the special tokens.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    base, merges = _base_bpe()
    taken = set(arch.specials.values())
    if arch.n_tokens < len(base) + len(taken) or max(taken, default=0) >= arch.n_tokens:
        raise ValueError(f"{arch.name}: {arch.n_tokens} tokens cannot hold the BPE ({len(base)}) and the specials")
    free = (i for i in range(arch.n_tokens) if i not in taken)
    vocab = {tok: i for tok, i in zip(base, free)}
    vocab.update(arch.specials)
    used = set(vocab.values())
    vocab.update({f"<|dummy_{i}|>": i for i in range(arch.n_tokens) if i not in used})
    tok = Tokenizer(models.BPE(vocab=vocab, merges=list(merges)))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in arch.specials])
    if arch.adds_bos:
        tok.post_processor = processors.TemplateProcessing(
            single=f"{arch.bos} $A", pair=f"{arch.bos} $A $B", special_tokens=[(arch.bos, arch.specials[arch.bos])]
        )
    roles = {k: v for k, v in {"bos_token": arch.bos, "eos_token": arch.eos, "pad_token": arch.pad}.items() if v}
    return PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=arch.n_ctx, **roles)


def build_standin(
    name: str,
    dtype: torch.dtype = torch.float32,
    *,
    d_model: int | None = None,
    n_layers: int = 2,
    full: bool = False,
):
    """The stand-in of ``name``: ``(model, tokenizer)``, random weights seeded by the name, on CPU, eval mode.

    Args:
        name: ``"standin:<name>"`` or a name in :data:`ARCHITECTURES`.
        dtype: parameter dtype.
        d_model, n_layers: the stand-in's width and depth (default :func:`standin_width` and 2).
        full: build the real model's shape instead (every width and layer of :data:`ARCHITECTURES`,
            random weights): what a GPU check measures throughput on without downloading anything.

    Raises:
        ValueError: an unknown name, a bad width or depth.
    """
    from transformers import AutoModelForCausalLM

    arch = architecture(name)
    small = arch if full else shrink(arch, d_model, n_layers)
    config = build_config(small)
    seed = zlib.crc32(f"{arch.name}|{small.d_model}|{small.n_layers}".encode())
    with torch.random.fork_rng(devices=[]):  # the caller's random state is left as it was
        torch.manual_seed(seed)
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model = model.to(dtype).eval()
    model.config.name_or_path = standin_name(arch.name)
    return model, build_tokenizer(small)
