"""A model's name as a reader reads it: ``"SmolLM2-135M"`` for the key ``"smollm2-135m"``.

Chapters and the introduction name models in prose; the keys the library loads them by
(:data:`accessibility_lib.models.fetch.SOURCES`, hub ids, the shipped ``nano``) are code names.

Example:
    >>> label("smollm2-135m"), label("EleutherAI/pythia-160m"), label("nano")
    ('SmolLM2-135M', 'Pythia-160M', 'nano')
"""

from __future__ import annotations

__all__ = ["LABELS", "label"]

#: key (a fetched model's name, or a hub id) -> the name its authors give it
LABELS: dict[str, str] = {
    "smollm2-135m": "SmolLM2-135M",
    "gemma-3-270m": "Gemma-3-270M",
    "EleutherAI/pythia-160m": "Pythia-160M",
    "EleutherAI/pythia-410m": "Pythia-410M",
    "Qwen/Qwen2.5-0.5B": "Qwen2.5-0.5B",
}


def label(name: str) -> str:
    """The reader's name of the model ``name`` (a key of :data:`LABELS`), else ``name`` itself.

    A stand-in (``"standin:<id>"``) reads as ``"stand-in of <label>"``.

    Raises:
        TypeError: ``name`` is not a string.
    """
    if not isinstance(name, str):
        raise TypeError(f"a model name must be a string, got {type(name).__name__}")
    if name.startswith("standin:"):
        return f"stand-in of {label(name.removeprefix('standin:'))}"
    return LABELS.get(name, name)
