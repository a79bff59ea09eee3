"""A short fingerprint of a model's weights: result-store keys change when the weights do."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from accessibility_lib.models.handle import ModelHandle


def weights_fingerprint(handle: ModelHandle) -> str:
    """A short hash of the unembedding and of a sample of every parameter: changes when the weights do."""
    h = hashlib.sha256()
    with torch.no_grad():
        for p in [handle.W_U, *list(handle.model.parameters())]:
            flat = p.detach().reshape(-1)
            k = min(64, flat.numel())
            idx = (torch.arange(k, dtype=torch.int64) * (flat.numel() - 1)) // max(k - 1, 1)  # exact integer spacing
            idx = idx.to(flat.device)
            h.update(str(tuple(p.shape)).encode())
            h.update(flat[idx].float().cpu().numpy().tobytes())
    return h.hexdigest()[:12]
