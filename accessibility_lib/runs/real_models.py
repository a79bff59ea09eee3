"""Which real models have stored cramming artifacts: read from ``book/data/cramming``, never typed in a chapter.

A real model is a pretrained model: one the book fetches offline (:data:`accessibility_lib.models.fetch.SOURCES`:
SmolLM2-135M, Gemma-3-270M) or any hub model crammed elsewhere (e.g. ``EleutherAI/pythia-160m`` on a GPU). The
book's own models (``nano``, ``nano-mamba``, shipped with the library), stand-ins and untrained test models are not.
A model run with the documented command (``scripts/real_model_cramming.py --model <name>``) writes
``book/data/cramming/<name>.json`` (a hub id's ``/`` as ``__``) and so appears in every page that calls
:func:`with_cramming_artifacts` — chapters 3 and 5 and their lab notes — with no chapter edited.

Example:
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("gemma-3-270m", "nano", "smollm2-135m", "acme/pythia-70m"):
    ...     _ = (d / f"{name.replace('/', '__')}.json").write_text(json.dumps({"model": name, "units": []}))
    >>> _ = (d / "radii.json").write_text("{}")
    >>> with_cramming_artifacts(d)
    ['smollm2-135m', 'gemma-3-270m', 'acme/pythia-70m']
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from accessibility_lib.models.fetch import SOURCES
from accessibility_lib.runs.cramming_artifacts import ARTIFACT_DIR

__all__ = ["with_cramming_artifacts", "is_own_model"]


def is_own_model(name: str) -> bool:
    """True for the book's own models (shipped with the library, trained here), stand-ins and untrained test models."""
    from accessibility_lib.models.loading import NAMED_MODELS
    from accessibility_lib.models.standins import is_standin

    return (
        is_standin(name)
        or name in ("tiny", "random-tiny")
        or NAMED_MODELS.get(name, "").startswith("shipped with the library")
    )


def with_cramming_artifacts(folder: str | os.PathLike | None = None) -> list[str]:
    """The real models with a cramming artifact in ``folder`` (default ``book/data/cramming``).

    A file counts when it is a JSON object with ``"model"`` and ``"units"`` (a cramming artifact); other files
    (``radii.json``, a broken file) are skipped.

    Args:
        folder: where the artifacts lie; None for :data:`~accessibility_lib.runs.cramming_artifacts.ARTIFACT_DIR`.

    Returns:
        Model names as the artifacts spell them: the offline models in :data:`~accessibility_lib.models.fetch.SOURCES`
        order (smallest first), then any other model by name; an empty list when there is none.
    """
    found = set()
    for path in sorted(Path(folder or ARTIFACT_DIR).glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "units" in data and "model" in data and not is_own_model(str(data["model"])):
            found.add(str(data["model"]))
    return [n for n in SOURCES if n in found] + sorted(found - set(SOURCES))
