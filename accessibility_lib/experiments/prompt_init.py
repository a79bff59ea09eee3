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


def init_prompt(seed: int, m: int, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    """A soft prompt's starting point: ``mean + std·z`` per coordinate, z ~ N(0, 1) drawn on the CPU from ``seed``.

    Args:
        seed: the draw's seed (the same seed gives the same prompt on every device).
        m: prompt length (vectors). mean, std: (d_model,) per-coordinate statistics (:func:`init_stats`).

    Returns:
        (m, d_model) float32 tensor on the CPU.
    """
    gen = torch.Generator().manual_seed(seed)
    z = torch.randn(m, mean.numel(), generator=gen)  # (m, d), on CPU for device-independent draws
    return mean.cpu() + std.cpu() * z


@torch.no_grad()
def raw_table_std(handle: ModelHandle) -> float:
    """The standard deviation of every entry of the model's raw input-embedding table (the authors' init scale).

    The authors' replication code starts each soft prompt as N(0, 1)·std(W_E), with std over all entries of the
    embedding *weight* (padded and never-trained rows included). For Gemma that weight lacks the √d input scale
    the model applies to token ids, so this start is about 1/√d of the scale of the token inputs
    (:meth:`ModelHandle.embed`).

    Returns:
        The standard deviation (model input units, float; Bessel-corrected, as ``torch.std``).

    Raises:
        ValueError: a model whose input embeddings have no ``weight`` table (the message names its type).
    """
    emb = handle.model.get_input_embeddings()
    weight = getattr(emb, "weight", None)
    if weight is None:
        raise ValueError(f"the model's input embeddings ({type(emb).__name__}) have no weight table to take a std of")
    return float(weight.detach().float().std())


def init_stats(handle: ModelHandle, init: str, init_scale: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-coordinate (mean, std) that :func:`init_prompt` draws prompts from, for an init rule.

    Args:
        init: ``"embedding_stats"`` (the book: mean and std of the real, scaled embeddings, :func:`embedding_stats`)
            or ``"raw_table"`` (the authors: zero mean, :func:`raw_table_std` in every coordinate).
        init_scale: multiplies the std.

    Returns:
        (mean, std), each (d_model,) float32 on the model's device.

    Raises:
        ValueError: an unknown init (the message lists both).
    """
    if init == "embedding_stats":
        mean, std = embedding_stats(handle)
    elif init == "raw_table":
        mean, _ = embedding_stats(handle)
        std = torch.full_like(mean, raw_table_std(handle))
        mean = torch.zeros_like(mean)
    else:
        raise ValueError(f"init must be 'embedding_stats' (the book's) or 'raw_table' (the authors'), got {init!r}")
    return mean, std * init_scale
