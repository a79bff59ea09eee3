"""FLOP counts of a transformer step: attention and MLP per token and layer, attention products per
sequence, the unembedding per scored position; cramming steps (forward + backward to the inputs) and
training steps (3x the forward).
"""

from __future__ import annotations

from accessibility_lib.models.standins import Architecture

BYTES_PER_VALUE = {"float32": 4, "bfloat16": 2, "float16": 2}


GIB = 2.0**30


def _width(arch: Architecture) -> tuple[int, int]:
    return arch.n_heads * arch.head_dim, arch.n_kv_heads * arch.head_dim  # query width, key/value width


def layer_flops_per_token(arch: Architecture) -> float:
    """Matrix-product FLOPs of one token through every layer (attention projections and MLP), forward."""
    d, q_w, kv_w = arch.d_model, *_width(arch)
    mlp = (2 if arch.family == "gpt_neox" else 3) * d * arch.d_ff
    return 2.0 * arch.n_layers * (d * (q_w + 2 * kv_w) + q_w * d + mlp)


def attention_flops(arch: Architecture, T: int) -> float:
    """FLOPs of Q·Kᵀ and A·V for one sequence of T tokens through every layer (full T×T square)."""
    q_w, _ = _width(arch)
    return 4.0 * arch.n_layers * q_w * T * T


def forward_flops(arch: Architecture, T: int, logits: int = 0, vocab: int | None = None) -> float:
    """Forward FLOPs of one sequence of T tokens, with logits at ``logits`` positions over ``vocab`` rows."""
    return (
        T * layer_flops_per_token(arch)
        + attention_flops(arch, T)
        + 2.0 * logits * arch.d_model * (arch.d_vocab if vocab is None else vocab)
    )


def step_flops(arch: Architecture, T: int, logits: int, mode: str) -> float:
    """FLOPs of one optimisation step on one sequence: forward plus backward.

    ``mode="cram"``: frozen weights, gradients to the inputs only — each weight product once more
    (dX = dY·Wᵀ), each attention product twice more (both of its factors depend on the input).
    ``mode="train"``: gradients to the weights too — every product twice more (the classic 3× forward).
    """
    attn = attention_flops(arch, T)
    linear = forward_flops(arch, T, logits) - attn
    if mode == "cram":
        return 2.0 * linear + 3.0 * attn
    if mode == "train":
        return 3.0 * (linear + attn)
    raise ValueError(f"mode must be 'cram' or 'train', got {mode!r}")


def params_bytes(arch: Architecture, dtype: str) -> float:
    from accessibility_lib.models.standins import n_params

    return n_params(arch) * BYTES_PER_VALUE[dtype]
