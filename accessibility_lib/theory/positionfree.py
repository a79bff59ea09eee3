"""GPT-NeoX run with switchable causal mask and rotary embeddings: the mean-field view's model.

The mean-field argument of the paper (Thm 4.9, Section 4.3; after Sander et al. 2022) treats a prompt
X ∈ R^{d×m} as its empirical measure M(X) = (1/m) Σ_i δ_{X_{:,i}}. That is exact only for attention
with *neither* a causal mask *nor* positional encodings: then every layer L is permutation-equivariant
(L(Xσ) = L(X)σ) and invariant to duplication (L([X, X])_{:,i} = L(X)_{:,i}). Real decoders have both.

:func:`neox_forward` re-runs a trained ``GPTNeoXForCausalLM`` with its own weights (same layer norms,
fused ``query_key_value``, ``dense``, MLP, parallel residual, final norm and ``embed_out``) and two
switches, ``causal`` and ``rotary``. It is a functional re-implementation rather than a patched HF
module so that the switches are explicit and the attention is computed the plain way (fp32 softmax,
no fused kernel whose reduction order could differ between a prompt and its permutation). With
``causal=True, rotary=True`` it reproduces the HF model (checked in the tests to 1e-5), so the three
cases of the chapter differ only by the switches:

* ``causal=False, rotary=False`` — the mean-field model: a map on measures;
* ``causal=True, rotary=False`` — a causal decoder without positions (NoPE);
* ``causal=True, rotary=True`` — the shipped model.

:func:`hf_forward` wraps any HF causal LM (Llama, Gemma, …) in the same output format, for the
shipped-model case of architectures this module does not re-implement.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from accessibility_lib.ground.checks import check_int

__all__ = ["ForwardOutput", "CASES", "neox_forward", "hf_forward", "make_forward", "check_neox", "tiny_neox", "load_hf"]


@dataclass
class ForwardOutput:
    """What one forward pass returns.

    Attributes:
        hidden_states: list of L + 1 tensors (batch, T, d_model): the input embeddings, then the
            output of each of the L layers (before the final norm).
        logits: (batch, T, d_vocab) logits at every position.
    """

    hidden_states: list[torch.Tensor]
    logits: torch.Tensor

    def last_probs(self) -> torch.Tensor:
        """(batch, d_vocab) next-token distribution at the last position, in fp64."""
        return torch.softmax(self.logits[:, -1, :].double(), dim=-1)


def _unwrap(model: object) -> torch.nn.Module:
    """Accept a model handle (``.model``) or a bare HF model."""
    if isinstance(model, torch.nn.Module):  # a bare HF model (Llama's own ``.model`` is its trunk)
        if hasattr(model, "config"):
            return model
    else:
        inner = getattr(model, "model", None)  # a load_model handle
        if isinstance(inner, torch.nn.Module) and hasattr(inner, "config"):
            return inner
    raise ValueError(f"model must be a Hugging Face causal LM or a handle with .model, got {type(model).__name__}")


def check_neox(model: object) -> torch.nn.Module:
    """Return the ``GPTNeoXForCausalLM`` inside ``model``; ``ValueError`` for any other architecture."""
    hf = _unwrap(model)
    if getattr(hf.config, "model_type", None) != "gpt_neox" or not hasattr(hf, "gpt_neox"):
        raise ValueError(
            f"model must be a GPT-NeoX causal LM (config.model_type 'gpt_neox'), got {getattr(hf.config, 'model_type', None)!r}; "
            "use hf_forward for other architectures"
        )
    return hf


def _check_embeds(inputs_embeds: object, d_model: int) -> torch.Tensor:
    if not isinstance(inputs_embeds, torch.Tensor) or inputs_embeds.ndim != 3:
        shape = getattr(inputs_embeds, "shape", None)
        raise ValueError(
            f"inputs_embeds must be a torch tensor of shape (batch, T, d_model={d_model}), got {type(inputs_embeds).__name__} {shape}"
        )
    if inputs_embeds.shape[-1] != d_model or inputs_embeds.shape[1] < 1 or inputs_embeds.shape[0] < 1:
        raise ValueError(
            f"inputs_embeds must have shape (batch >= 1, T >= 1, d_model={d_model}), got {tuple(inputs_embeds.shape)}"
        )
    if not torch.isfinite(inputs_embeds).all():
        raise ValueError("inputs_embeds must contain only finite numbers")
    return inputs_embeds


@torch.no_grad()
def neox_forward(
    model: object, inputs_embeds: torch.Tensor, *, causal: bool = True, rotary: bool = True
) -> ForwardOutput:
    """Run a GPT-NeoX model on soft prompts with the causal mask and rotary embeddings switchable.

    Args:
        model: a ``GPTNeoXForCausalLM`` or a handle whose ``.model`` is one (e.g. ``load_model("nano")``).
        inputs_embeds: (batch, T, d_model) input vectors (token embeddings or a soft prompt).
        causal: apply the causal mask (position i attends to j ≤ i only).
        rotary: apply the model's rotary position embedding to queries and keys (positions 0..T−1).

    Returns:
        :class:`ForwardOutput` with the L + 1 hidden states and the logits.

    Raises:
        ValueError: if ``model`` is not GPT-NeoX, or ``inputs_embeds`` has the wrong shape or non-finite
            entries.
    """
    from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb

    hf = check_neox(model)
    cfg = hf.config
    x = _check_embeds(inputs_embeds, cfg.hidden_size).to(next(hf.parameters()).dtype)
    B, T, d = x.shape
    n_heads = cfg.num_attention_heads
    head = d // n_heads
    base = hf.gpt_neox
    if rotary:
        position_ids = torch.arange(T, device=x.device).unsqueeze(0)  # (1, T)
        cos, sin = base.rotary_emb(x, position_ids=position_ids)  # (1, T, rotary_dim)
    mask = None
    if causal:  # additive: −inf above the diagonal (position i sees j ≤ i only)
        mask = torch.full((T, T), float("-inf"), dtype=x.dtype, device=x.device).triu(1)  # (T, T)
    h = x
    states = [h]
    for layer in base.layers:
        attn = layer.attention
        qkv = attn.query_key_value(layer.input_layernorm(h))  # (B, T, 3d)
        qkv = qkv.view(B, T, n_heads, 3 * head).transpose(1, 2)  # (B, H, T, 3·head)
        q, k, v = qkv.chunk(3, dim=-1)  # (B, H, T, head) each
        if rotary:
            q, k = apply_rotary_pos_emb(q, k, cos, sin)
        scores = torch.matmul(q, k.transpose(2, 3)) * attn.scaling  # (B, H, T, T)
        if mask is not None:
            scores = scores + mask
        weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(weights, v).transpose(1, 2).reshape(B, T, d)  # (B, T, d)
        out = attn.dense(out)
        if layer.use_parallel_residual:
            h = h + out + layer.mlp(layer.post_attention_layernorm(h))
        else:
            h = h + out
            h = h + layer.mlp(layer.post_attention_layernorm(h))
        states.append(h)
    logits = hf.get_output_embeddings()(base.final_layer_norm(h))  # (B, T, d_vocab)
    return ForwardOutput(states, logits)


@torch.no_grad()
def hf_forward(model: object, inputs_embeds: torch.Tensor, all_logits: bool = False) -> ForwardOutput:
    """Run any HF causal LM as shipped (its own mask and positions) in :class:`ForwardOutput` form.

    ``hidden_states`` are HF's ``output_hidden_states`` (the last one is after the final norm for some
    architectures); logits are the model's, at the **last position only** (batch, 1, d_vocab) unless
    ``all_logits`` (the unembedding of every position dominates the cost for large vocabularies).

    Raises:
        ValueError: as :func:`neox_forward` for the input; if ``model`` is not a HF model.
    """
    hf = _unwrap(model)
    x = _check_embeds(inputs_embeds, hf.config.hidden_size).to(next(hf.parameters()).dtype)
    out = hf(inputs_embeds=x, output_hidden_states=True, logits_to_keep=0 if all_logits else 1)
    return ForwardOutput(list(out.hidden_states), out.logits)


#: the three cases of the chapter: name -> (causal, rotary); "shipped" means the HF model itself.
CASES = {
    "no mask, no positions": (False, False),
    "causal, no positions": (True, False),
    "shipped (causal + rotary)": None,
}


def make_forward(model: object, case: str) -> Callable[[torch.Tensor], ForwardOutput]:
    """A forward function ``inputs_embeds -> ForwardOutput`` for one of :data:`CASES`.

    For GPT-NeoX the shipped case uses :func:`neox_forward` with both switches on; for other
    architectures only the shipped case exists (through :func:`hf_forward`).

    Raises:
        ValueError: for an unknown case, or a position-free case on a non-GPT-NeoX model.
    """
    if case not in CASES:
        raise ValueError(f"case must be one of {list(CASES)}, got {case!r}")
    hf = _unwrap(model)
    switches = CASES[case]
    if switches is None:
        if getattr(hf.config, "model_type", None) == "gpt_neox":
            return lambda e: neox_forward(hf, e, causal=True, rotary=True)
        return lambda e: hf_forward(hf, e)
    check_neox(hf)
    causal, rotary = switches
    return lambda e: neox_forward(hf, e, causal=causal, rotary=rotary)


def tiny_neox(
    d_model: int = 64, n_layers: int = 2, n_heads: int = 4, d_vocab: int = 97, seed: int = 0, init_std: float = 0.1
) -> torch.nn.Module:
    """A small randomly initialised ``GPTNeoXForCausalLM`` (fp32, eval mode) for tests and the smoke preset.

    ``init_std`` (HF ``initializer_range``, default 0.02 there) is raised to 0.1 so that attention is
    far from uniform and positional effects are visible, as in a trained model.

    Raises:
        ValueError: on non-positive sizes or ``d_model`` not divisible by ``n_heads``.
    """
    import transformers

    from accessibility_lib.ground.checks import check_positive_real

    init_std = check_positive_real("init_std", init_std)
    d_model = check_int("d_model", d_model, minimum=1)
    n_layers = check_int("n_layers", n_layers, minimum=1)
    n_heads = check_int("n_heads", n_heads, minimum=1)
    d_vocab = check_int("d_vocab", d_vocab, minimum=2)
    if d_model % n_heads:
        raise ValueError(f"d_model must be divisible by n_heads, got d_model={d_model}, n_heads={n_heads}")
    cfg = transformers.GPTNeoXConfig(
        vocab_size=d_vocab,
        hidden_size=d_model,
        num_hidden_layers=n_layers,
        num_attention_heads=n_heads,
        intermediate_size=4 * d_model,
        max_position_embeddings=2048,
        rotary_pct=0.25,
        use_parallel_residual=True,
        initializer_range=init_std,
    )
    torch.manual_seed(seed)
    model = transformers.GPTNeoXForCausalLM(cfg).eval()
    return model


def load_hf(name: str, *, fallback_tiny: bool = False) -> tuple[object | None, str]:
    """The model ``load_model(name)`` as a :class:`~accessibility_lib.models.handle.ModelHandle` (fp32, CPU), with a
    one-line note of what was loaded.

    A handle, not a bare Hugging Face model, so that hard prompts are made by the model's own embedding
    module (:meth:`~accessibility_lib.models.handle.ModelHandle.embed`; Gemma's √d scale included) and never from
    raw embedding-weight rows; the forwards of this module accept a handle. ``name == "tiny"`` gives
    :func:`tiny_neox` wrapped in a handle (no file needed). When the model is not available (not trained /
    not fetched, or ``accessibility_lib.models.handle`` missing), returns ``(tiny handle, note)`` if
    ``fallback_tiny`` else ``(None, note)``: chapters then say so instead of failing.

    Raises:
        ValueError: if ``name`` is not a non-empty string.
    """
    from accessibility_lib.models.handle import wrap_model
    from accessibility_lib.models.loading import load_model

    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a model name such as 'nano', 'smollm2-135m' or 'tiny', got {name!r}")
    tiny_note = "tiny: a randomly initialised 2-layer GPT-NeoX (d_model = 64), no weights loaded"
    if name == "tiny":
        return wrap_model(tiny_neox(), name="tiny"), tiny_note
    try:
        handle = load_model(name)
    except (ImportError, OSError, ValueError) as exc:  # ModelNotAvailableError is a ValueError
        note = f"{name} is not available here ({type(exc).__name__}: {str(exc).splitlines()[0][:160]})"
        if fallback_tiny:
            return wrap_model(tiny_neox(), name="tiny"), note + "; using the random tiny GPT-NeoX instead"
        return None, note
    cfg = handle.model.config
    return (
        handle,
        f"{name}: {cfg.model_type}, d_model = {cfg.hidden_size}, {cfg.num_hidden_layers} layers, |V| = {cfg.vocab_size}",
    )
