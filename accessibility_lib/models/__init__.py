"""Models: the handle (d_model, d_vocab, W_U, b_U, embed), loading, offline fetching, stand-ins, greedy decoding, weights fingerprints.

The main names are re-exported here: ``from accessibility_lib.models import load_model, wrap_model, ModelHandle``.
They are imported when first asked for (PEP 562), so that a module of this package that needs no torch
(``names``, ``standins``, ``vocabulary``) does not import it through the package.
"""

from __future__ import annotations

__all__ = ["ModelHandle", "load_model", "wrap_model"]

_WHERE = {
    "ModelHandle": "accessibility_lib.models.handle",
    "wrap_model": "accessibility_lib.models.handle",
    "load_model": "accessibility_lib.models.loading",
}


def __getattr__(name: str):
    if name in _WHERE:
        import importlib

        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
