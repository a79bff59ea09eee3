"""Named parameter sets of the chapters: ``smoke`` (tests, seconds), ``nano`` (the default: two CPU
cores, minutes) and ``paper`` (the paper's models and sizes, on a GPU box).

A chapter's ``parameters`` cell holds ``preset = "nano"`` plus ``None`` for every overridable value;
the chapter then calls ``params = presets.resolve("cramming", preset, model_name=model_name, ...)``:
values left at ``None`` come from the preset, anything else overrides it. Papermill sets both:
``papermill book/03_cramming.ipynb out.ipynb -p preset paper -p device cuda``.

Each chapter registers its presets in :data:`PRESETS` (one dict per chapter, one per preset name).
"""

from __future__ import annotations

from typing import Any

__all__ = ["PRESETS", "PRESET_NAMES", "resolve", "table"]

PRESET_NAMES = ("smoke", "nano", "paper")

#: chapter name -> preset name -> parameters. Chapters add their entries here.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    # Chapter 1 (book/01_theory.ipynb): closed forms only, seconds in every preset. eps_convention is a
    # name in precision.CONVENTIONS; fraction_model a row of book/data/models_list.csv; m_values the
    # prompt lengths of the accessible-fraction figure.
    "theory": {
        "smoke": {"eps_convention": "replication", "fraction_model": "Pythia-160M", "m_values": [1, 4]},
        "nano": {"eps_convention": "replication", "fraction_model": "Pythia-160M", "m_values": [1, 2, 4, 8]},
        "paper": {"eps_convention": "replication", "fraction_model": "Pythia-160M", "m_values": [1, 2, 4, 8, 16]},
    },
    # Chapter 4 (book/04_mean_field.ipynb): model_name is the GPT-NeoX whose weights the position-free
    # variant reuses ("tiny" = random 2-layer GPT-NeoX, no file); real_models are shipped models of other
    # architectures measured as they are (skipped when not fetched); ms the prompt lengths of the
    # structural sweep, n_prompts random prompts per m; n_pairs prompt pairs of length pair_m for the
    # W_q-Lipschitz measurement; q the Wasserstein order. Everything runs on CPU.
    "mean_field": {
        "smoke": {"model_name": "tiny", "real_models": [], "ms": [3, 6, 12], "n_prompts": 2, "n_pairs": 8, "pair_m": 6, "q": 1.0},
        "nano": {"model_name": "nano", "real_models": ["smollm2-135m"], "ms": [4, 8, 16, 32, 64, 128], "n_prompts": 6,
                 "n_pairs": 60, "pair_m": 16, "q": 1.0},
        "paper": {"model_name": "EleutherAI/pythia-160m", "real_models": ["smollm2-135m"], "ms": [4, 8, 16, 32, 64, 128, 256, 512],
                  "n_prompts": 16, "n_pairs": 400, "pair_m": 32, "q": 1.0},
    },
}


def resolve(chapter: str, preset: str, **overrides: Any) -> dict[str, Any]:
    """The parameters of ``chapter`` under ``preset``, with every non-None override applied.

    Raises:
        ValueError: for an unknown chapter, preset, or an override the preset does not define.
    """
    if chapter not in PRESETS:
        raise ValueError(f"chapter must be one of {sorted(PRESETS)}, got {chapter!r}")
    if preset not in PRESETS[chapter]:
        raise ValueError(f"preset must be one of {sorted(PRESETS[chapter])} for chapter {chapter!r}, got {preset!r}")
    params = dict(PRESETS[chapter][preset])
    for name, value in overrides.items():
        if name not in params:
            raise ValueError(f"{name!r} is not a parameter of chapter {chapter!r}; known: {sorted(params)}")
        if value is not None:
            params[name] = value
    params["preset"] = preset
    return params


def table() -> list[dict[str, Any]]:
    """One row per (chapter, preset) with its parameters, for the README and the book's table."""
    rows = []
    for chapter, presets in PRESETS.items():
        for name, params in presets.items():
            rows.append({"chapter": chapter, "preset": name, **params})
    return rows
