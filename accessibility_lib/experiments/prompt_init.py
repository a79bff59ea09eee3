"""Where cramming's soft prompts start: the per-coordinate statistics of the model's real input embeddings."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from accessibility_lib.ground.checks import check_int
from accessibility_lib.models.decoding import model_device

if TYPE_CHECKING:
    from accessibility_lib.models.handle import ModelHandle


@torch.no_grad()
def embedding_stats(handle: ModelHandle, n_tokens: int = 4096, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-coordinate mean and standard deviation of the model's real input embeddings.

    Uses ``handle.embed`` (so Gemma's √d scaling is included) on ``n_tokens`` token ids drawn uniformly
    from the vocabulary (all of it when smaller).

    Returns:
        (mean, std), each (d_model,) float32 on the model's device.
    """
    n_tokens = check_int("n_tokens", n_tokens, minimum=2)
    vocab = int(handle.d_vocab)
    device = model_device(handle)
    if vocab <= n_tokens:
        ids = torch.arange(vocab, device=device)
    else:
        gen = torch.Generator().manual_seed(seed)
        ids = torch.randint(0, vocab, (n_tokens,), generator=gen).to(device)
    emb = handle.embed(ids[None, :])[0].float()  # (N, d)
    return emb.mean(0), emb.std(0).clamp_min(1e-8)


def _init_prompt(seed: int, m: int, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    z = torch.randn(m, mean.numel(), generator=gen)  # (m, d), on CPU for device-independent draws
    return mean.cpu() + std.cpu() * z
