"""Models: the handle (d_model, d_vocab, W_U, b_U, embed), loading, offline fetching, stand-ins, greedy decoding, weights fingerprints.

The main names are re-exported here: ``from accessibility_lib.models import load_model, wrap_model, ModelHandle``.
"""

from accessibility_lib.models.handle import ModelHandle, wrap_model
from accessibility_lib.models.loading import load_model

__all__ = ["ModelHandle", "load_model", "wrap_model"]
