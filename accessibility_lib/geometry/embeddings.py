"""Sampling last-layer embeddings h(X) over many prompts and lengths, batched by a token budget.

Section 5.2 of the paper fits the support E of the last-layer embeddings from about 10k prompts of
lengths ℓ = 4…4096 (Fig 9: ℓ ≈ 1000 suffices). This module draws those embeddings:

* prompts are uniformly random non-special tokens (never a special, pad or padded row of ``W_U``) or
  windows of natural text (:mod:`accessibility_lib.models.text`);
* a batch holds ``token_budget // ℓ`` prompts of one length (no padding, memory bounded by the budget);
* lengths past the model's context ``handle.n_ctx`` are refused (the replication code ran Pythia at
  4096 > 2048; see the book's appendix on conventions);
* the model runs in its own dtype, which must be fp32 or bf16 (fp16 overflows on several models);
  embeddings are returned as float32;
* prompts come in store chunks of ``store_chunk`` prompts; chunk c of length ℓ depends only on
  (seed, ℓ, c), and each finished chunk is written to the result store, so a killed run restarts at
  the first missing chunk and a larger N reuses the smaller run's chunks.

Handle interface (issue 3, :mod:`accessibility_lib.models.handle`): ``.model``, ``.tokenizer``, ``.d_model``,
``.d_vocab``, ``.n_ctx`` (optional: else ``model.config.max_position_embeddings``), ``.name``
(optional: else pass ``model_key``), ``.final_embeddings(input_ids=..., attention_mask=...)`` → ``(B, d)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from accessibility_lib.ground.checks import check_int
from accessibility_lib.ground.progress import progress
from accessibility_lib.ground.results import ResultStore
from accessibility_lib.models.decoding import model_device, model_dtype
from accessibility_lib.models.handle import context_length
from accessibility_lib.models.vocabulary import allowed_token_ids

if TYPE_CHECKING:
    from accessibility_lib.models.handle import ModelHandle

__all__ = ["prompt_tokens", "sample_embeddings", "NAMESPACE"]

NAMESPACE = "embeddings"
_SALT = 0x5EED_4


def _allowed_ids(handle) -> np.ndarray:
    return allowed_token_ids(handle.tokenizer, int(handle.d_vocab))


def prompt_tokens(
    handle: ModelHandle, length: int, chunk_index: int, count: int, *, source: str = "random", seed: int = 0
) -> torch.Tensor:
    """Prompts of chunk ``chunk_index``: int64 tensor ``(count, length)``, a function of (seed, length, chunk).

    Args:
        source: ``"random"`` (i.i.d. uniform over the non-special, non-padded ids) or ``"text"``
            (windows of the held-out natural-text corpus of :mod:`accessibility_lib.models.text`).

    Raises:
        ValueError: on an unknown source or bad integers.
    """
    length = check_int("length", length, minimum=1)
    chunk_index = check_int("chunk_index", chunk_index, minimum=0)
    count = check_int("count", count, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    if source == "random":
        ids = _allowed_ids(handle)
        rng = np.random.default_rng([seed, length, chunk_index, _SALT])
        return torch.from_numpy(ids[rng.integers(0, ids.size, size=(count, length))])
    if source == "text":
        from accessibility_lib.models.text import NaturalText

        corpus = getattr(handle, "_accessibility_text", None)
        if corpus is None:
            corpus = NaturalText(handle.tokenizer)
            try:
                handle._accessibility_text = corpus
            except AttributeError:
                pass
        return corpus.targets(length, count, seed=seed + 1_000_003 * length, start_index=chunk_index * count)
    raise ValueError(f"source must be 'random' or 'text', got {source!r}")


def sample_embeddings(
    handle: ModelHandle,
    n_prompts: int,
    lengths,
    *,
    source: str = "random",
    seed: int = 0,
    token_budget: int = 8192,
    store: ResultStore | None = None,
    model_key: str | None = None,
    store_chunk: int = 256,
    desc: str = "embeddings",
) -> dict[int, np.ndarray]:
    """Last-layer embeddings of ``n_prompts`` prompts at each length ℓ in ``lengths``.

    Args:
        handle: a model handle (see the module docstring), in fp32 or bf16.
        n_prompts: prompts per length N, ≥ 1.
        lengths: iterable of prompt lengths ℓ in tokens, each in [1, n_ctx].
        source: ``"random"`` or ``"text"`` (see :func:`prompt_tokens`).
        seed: prompt seed.
        token_budget: tokens per forward batch (batch = max(1, budget // ℓ) prompts).
        store: a :class:`ResultStore` to save/resume chunks in, or None (no caching).
        model_key: the model's name in the store key (default ``handle.name``).
        store_chunk: prompts per stored chunk.
        desc: progress-bar label.

    Returns:
        ``{ℓ: (n_prompts, d_model) float32 array}``.

    Raises:
        ValueError: on n_prompts < 1, an empty length list, a length outside [1, n_ctx], an fp16
            model, a store without a model key, or non-finite embeddings (the model overflowed).
    """
    n_prompts = check_int("n_prompts", n_prompts, minimum=1)
    token_budget = check_int("token_budget", token_budget, minimum=1)
    store_chunk = check_int("store_chunk", store_chunk, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    lengths = [check_int("lengths[i]", ell, minimum=1) for ell in lengths]
    if not lengths:
        raise ValueError("lengths must not be empty")
    n_ctx = context_length(handle)
    too_long = [ell for ell in lengths if ell > n_ctx]
    if too_long:
        raise ValueError(f"lengths must not exceed the context length n_ctx = {n_ctx} tokens, got {too_long}")
    dtype = model_dtype(handle)
    if dtype not in (torch.float32, torch.bfloat16):
        raise ValueError(f"the model must run in fp32 or bf16 (fp16 overflows on several models), got {dtype}")
    if source not in ("random", "text"):
        raise ValueError(f"source must be 'random' or 'text', got {source!r}")
    key_model = model_key or getattr(handle, "name", None)
    if store is not None and not key_model:
        raise ValueError("a store needs a model key: pass model_key= (the handle has no .name)")
    device = model_device(handle)
    jobs = [(ell, c) for ell in lengths for c in range((n_prompts + store_chunk - 1) // store_chunk)]
    out: dict[int, list[np.ndarray]] = {ell: [] for ell in lengths}
    for ell, c in progress(jobs, desc=desc, total=len(jobs)):
        count = min(store_chunk, n_prompts - c * store_chunk)
        key = {
            "model": key_model,
            "length": ell,
            "chunk": c,
            "chunk_size": store_chunk,
            "count": count,
            "source": source,
            "seed": seed,
            "dtype": str(dtype).replace("torch.", ""),
            "what": "final_embeddings",
        }
        if store is not None:
            got = store.get(NAMESPACE, key)
            if got is not None:
                out[ell].append(np.asarray(got["h"], dtype=np.float32))
                continue
        ids = prompt_tokens(handle, ell, c, store_chunk, source=source, seed=seed)[:count]  # (count, ℓ)
        batch = max(1, token_budget // ell)
        parts = []
        with torch.no_grad():
            for b in range(0, count, batch):
                x = ids[b : b + batch].to(device)  # (B, ℓ)
                h = handle.final_embeddings(input_ids=x, attention_mask=torch.ones_like(x))  # (B, d)
                parts.append(h.detach().float().cpu().numpy())
        h = np.concatenate(parts)  # (count, d)
        if not np.all(np.isfinite(h)):
            raise ValueError(f"non-finite embeddings at length {ell} (the model overflowed in {dtype})")
        if store is not None:
            store.put(NAMESPACE, key, {"n": int(count)}, arrays={"h": h})
        out[ell].append(h)
    return {ell: np.concatenate(chunks) for ell, chunks in out.items()}
