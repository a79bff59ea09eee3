"""Greedy decoding from soft prompts, by the two paths a "crammed" verdict can rest on.

A target t is crammed into a prompt Y when greedy decoding from Y reproduces t (paper §5, after
Kuratov et al. 2025). Two computations give that verdict and agree in exact arithmetic:

- **KV-cache decoding** (:func:`greedy_decode`): one token at a time, reusing the keys and values
  of earlier positions, as ``generate`` does. This is what a user of the prompt gets, so it *defines*
  "crammed" in this book (``DECODE_PATH``).
- **Full recompute** (:func:`recompute_argmax`): one forward pass over the whole teacher-forced
  sequence [prefix, Y, t_1 … t_{n−1}], the argmax at every scored position. This is the check the
  optimiser sees every step (100 % teacher-forced accuracy).

In float32 they agree; in bfloat16 they can disagree (different summation orders round differently:
on SmolLM2-135M, 6 of 24 random prompts), so every reported success is confirmed by both paths and
the number of disagreements is recorded with each result (:mod:`accessibility_lib.experiments.cramming`).

Token layout of one row: ``[prefix_ids] + [Y_1 … Y_m] + [t_1 … t_g]`` is given, then t_{g+1} … t_n
are generated, where g = ``n_given`` (0 in the book's own length convention; 1 in the authors',
where the first text token — the BOS for Llama and Gemma — is given, see :mod:`accessibility_lib.experiments.targets`).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

import torch

from accessibility_lib.ground.checks import check_int

if TYPE_CHECKING:
    from accessibility_lib.models.handle import ModelHandle

__all__ = ["DECODE_PATH", "VERIFY_PATH", "greedy_decode", "recompute_argmax", "model_dtype", "model_device"]

DECODE_PATH = "kv-cache greedy (as generate)"
VERIFY_PATH = "full recompute (teacher-forced argmax, no cache)"


def model_dtype(handle: ModelHandle) -> torch.dtype:
    """The dtype of the handle's model parameters (float32 or bfloat16 in this book)."""
    return next(handle.model.parameters()).dtype


def model_device(handle: ModelHandle) -> torch.device:
    """The device of the handle's model parameters."""
    return next(handle.model.parameters()).device


def _prefix(handle, prefix_ids, batch: int, dtype, device) -> torch.Tensor | None:
    if not prefix_ids:
        return None
    pre = handle.embed(torch.tensor([list(prefix_ids)], device=device)).to(dtype)  # (1, p, d)
    return pre.expand(batch, -1, -1)


@torch.no_grad()
def greedy_decode(
    handle: ModelHandle,
    prompts: torch.Tensor,
    n_new: int,
    prefix_ids: list[int] | None = None,
    given_ids: torch.Tensor | None = None,
) -> torch.Tensor:
    """Greedy continuation of soft prompts, token by token with a KV cache (as ``generate`` does).

    Args:
        handle: model handle (``.model``, ``.embed``).
        prompts: (B, m, d_model) input vectors.
        n_new: number of tokens to generate (≥ 1).
        prefix_ids: fixed token ids placed before the prompt (e.g. ``[bos]``), or None.
        given_ids: (B, g) token ids placed after the prompt before generation starts, or None.

    Returns:
        (B, n_new) int64 token ids on the model's device.

    Raises:
        ValueError: ``n_new`` < 1, or ``given_ids`` whose batch differs from the prompts'.
    """
    n_new = check_int("n_new", n_new, minimum=1)
    model, dtype, device = handle.model, model_dtype(handle), model_device(handle)
    # transformers 5.x renamed past_key_values to cache; accept both
    cache_kw = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    x = prompts.to(device=device, dtype=dtype)  # (B, m, d)
    B = x.shape[0]
    pre = _prefix(handle, prefix_ids, B, dtype, device)
    if pre is not None:
        x = torch.cat([pre, x], 1)  # (B, p + m, d)
    if given_ids is not None and given_ids.shape[1] > 0:
        if given_ids.shape[0] != B:
            raise ValueError(f"given_ids must have one row per prompt ({B}), got shape {tuple(given_ids.shape)}")
        x = torch.cat([x, handle.embed(given_ids.to(device)).to(dtype)], 1)  # (B, p + m + g, d)
    out = model(inputs_embeds=x, use_cache=True)
    tok = out.logits[:, -1].argmax(-1)  # (B,)
    tokens = [tok]
    past = out[cache_kw] if cache_kw in out else out.past_key_values
    for _ in range(n_new - 1):
        emb = handle.embed(tok[:, None]).to(dtype)  # (B, 1, d)
        out = model(inputs_embeds=emb, use_cache=True, **{cache_kw: past})
        past = out[cache_kw] if cache_kw in out else out.past_key_values
        tok = out.logits[:, -1].argmax(-1)
        tokens.append(tok)
    return torch.stack(tokens, 1)


@torch.no_grad()
def recompute_argmax(
    handle: ModelHandle,
    prompts: torch.Tensor,
    targets: torch.Tensor,
    n_given: int = 0,
    prefix_ids: list[int] | None = None,
) -> torch.Tensor:
    """Teacher-forced argmax of one full forward pass (no cache) at the scored positions.

    Args:
        handle: model handle.
        prompts: (B, m, d_model) input vectors.
        targets: (B, n) token ids t_1 … t_n (the first ``n_given`` are given as input, not scored).
        n_given: leading target tokens that are given (0 or more, < n).
        prefix_ids: fixed token ids before the prompt, or None.

    Returns:
        (B, n − n_given) int64: the argmax predicted for t_{g+1} … t_n.
    """
    model, dtype, device = handle.model, model_dtype(handle), model_device(handle)
    n = targets.shape[1]
    n_given = check_int("n_given", n_given, minimum=0, maximum=n - 1)
    x = prompts.to(device=device, dtype=dtype)
    pre = _prefix(handle, prefix_ids, x.shape[0], dtype, device)
    parts = ([pre] if pre is not None else []) + [x]
    if n > 1:
        parts.append(handle.embed(targets[:, : n - 1].to(device)).to(dtype))
    logits = model(inputs_embeds=torch.cat(parts, 1), logits_to_keep=n - n_given, use_cache=False).logits
    return logits.argmax(-1)
