"""Which real models have stored cramming artifacts: read from ``book/data/cramming``, never typed in a chapter.

A real model is one the book fetches offline (:data:`accessibility_lib.models.fetch.SOURCES`: SmolLM2-135M,
Gemma-3-270M); the book's own models (``nano``, ``nano-mamba``) are not. A model run with the documented
command (``scripts/real_model_cramming.py --model <name>``) writes ``book/data/cramming/<name>.json`` and so
appears in every page that calls :func:`with_cramming_artifacts`, with no chapter edited.

Example:
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for f in ("gemma-3-270m.json", "nano.json", "radii.json", "smollm2-135m.json"):
    ...     _ = (d / f).write_text("{}")
    >>> with_cramming_artifacts(d)
    ['smollm2-135m', 'gemma-3-270m']
"""

from __future__ import annotations

import os
from pathlib import Path

from accessibility_lib.models.fetch import SOURCES
from accessibility_lib.runs.cramming_artifacts import ARTIFACT_DIR, artifact_path

__all__ = ["with_cramming_artifacts"]


def with_cramming_artifacts(folder: str | os.PathLike | None = None) -> list[str]:
    """The real models with a cramming artifact in ``folder`` (default ``book/data/cramming``).

    Args:
        folder: where the artifacts lie (``<model>.json``); None for :data:`ARTIFACT_DIR`.

    Returns:
        Model names (keys of :data:`~accessibility_lib.models.fetch.SOURCES`), in that mapping's order
        (smallest first), for each of which ``<folder>/<name>.json`` exists; an empty list when none does.
    """
    folder = Path(folder or ARTIFACT_DIR)
    return [name for name in SOURCES if artifact_path(name, folder).exists()]
