"""Named parameter sets of the chapters and the declared type of every chapter parameter.

Presets: ``smoke`` (tests, seconds), ``nano`` (the default: two CPU cores, minutes), ``paper`` (the
paper's models and sizes, on a GPU box) and ``paper_tiny`` (the ``paper`` preset's structure — the same
models, m values, target kinds, lengths and code paths — with every model replaced by its tiny
random-weight stand-in, :mod:`accessibility_lib.models.standins`, and small sizes: every paper-scale code path on
two CPU cores in minutes, before a GPU box sees it). A chapter's ``parameters`` cell holds ``preset = "default"`` plus
``None`` for every overridable value; the cell right after it calls
``params = presets.from_namespace("cramming", globals())``: values left at ``None`` come from the
preset, anything else overrides it, and every value is checked and coerced against
:data:`PARAMETERS` (types, ranges, allowed names; :mod:`accessibility_lib.runs.parameters`) before any work
starts. Papermill sets both: ``papermill book/03_cramming.ipynb out.ipynb -p preset paper -p device cuda``.

Each chapter registers its presets in :data:`PRESETS` and its parameter types in :data:`PARAMETERS`.
"""

from __future__ import annotations

import types
from typing import Any

from accessibility_lib.runs.parameters import Param, ParameterError, check, device_available

__all__ = ["PRESETS", "PRESET_NAMES", "PARAMETERS", "resolve", "from_namespace", "table", "ParameterError"]

PRESET_NAMES = ("smoke", "default", "paper", "paper_tiny")

#: chapter name -> preset name -> parameters. Chapters add their entries here.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    # Chapter 1 (book/01_theory.ipynb): closed forms only, seconds in every preset. eps_convention is a
    # name in precision.CONVENTIONS; fraction_model a model of the paper (paper.models()); m_values the
    # prompt lengths of the accessible-fraction figure.
    "theory": {
        "smoke": {"eps_convention": "replication", "fraction_model": "Pythia-160M", "m_values": [1, 4]},
        "default": {"eps_convention": "replication", "fraction_model": "Pythia-160M", "m_values": [1, 2, 4, 8]},
        "paper": {"eps_convention": "replication", "fraction_model": "Pythia-160M", "m_values": [1, 2, 4, 8, 16]},
    },
    # Chapter 2 (book/02_argmax_cells.ipynb): model_name any load_model name; prompts the three prompts whose
    # last-layer embeddings span the plane (the paper's Fig 1); resolution pixels per side of the main slice;
    # extent its half-width in units of the anchors' spread; zooms the explorer's extents; n_labels cells in
    # colour; n_samples natural-text windows for the principal plane.
    "argmax_cells": {
        "smoke": {
            "model_name": "nano",
            "prompts": ["The quick brown fox", "https://", "In a distant future"],
            "resolution": 48,
            "extent": 1.5,
            "zooms": [1.5, 6.0],
            "explorer_resolution": 32,
            "n_labels": 6,
            "n_samples": 16,
            "device": "cpu",
        },
        "default": {
            "model_name": "smollm2-135m",
            "prompts": ["The quick brown fox", "https://", "In a distant future"],
            "resolution": 400,
            "extent": 1.5,
            "zooms": [0.5, 1.0, 1.5, 3.0, 6.0, 12.0, 24.0, 48.0],
            "explorer_resolution": 200,
            "n_labels": 12,
            "n_samples": 64,
            "device": "cpu",
        },
        "paper": {
            "model_name": "Qwen/Qwen2.5-0.5B",
            "prompts": ["The quick brown fox", "https://", "In a distant future"],
            "resolution": 800,
            "extent": 1.5,
            "zooms": [0.5, 1.0, 1.5, 3.0, 6.0, 12.0, 24.0, 48.0],
            "explorer_resolution": 300,
            "n_labels": 12,
            "n_samples": 256,
            "device": "cuda",
        },
    },
    # Chapter 3 (book/03_cramming.ipynb): model_name any load_model name; kinds target kinds (targets.TARGET_KINDS);
    # convention the length convention (targets.LENGTH_CONVENTIONS); corpus of the natural targets; ms prompt lengths; n_targets targets a length; max_steps/patience/lr the cramming budget
    # (the paper's code: 3000/500/1e-2); eps_convention a name in precision.CONVENTIONS; n_embed_prompts random
    # prompts of embed_length tokens give the radius r.
    "cramming": {
        "smoke": {
            "model_name": "nano",
            "kinds": ["natural", "random_words"],
            "convention": "replication",
            "corpus": "heldout",
            "ms": [1, 2],
            "n_targets": 4,
            "max_steps": 20,
            "patience": 10,
            "lr": 0.01,
            "dtype": "float32",
            "device": "cpu",
            "eps_convention": "replication",
            "n_embed_prompts": 32,
            "embed_length": 16,
            "seed": 0,
        },
        "default": {
            "model_name": "nano",
            "kinds": ["natural", "random_words"],
            "convention": "replication",
            "corpus": "heldout",
            "ms": [1, 2, 4],
            "n_targets": 10,
            "max_steps": 300,
            "patience": 100,
            "lr": 0.01,
            "dtype": "float32",
            "device": "cpu",
            "eps_convention": "replication",
            "n_embed_prompts": 256,
            "embed_length": 64,
            "seed": 0,
        },
        "paper": {
            "model_name": "EleutherAI/pythia-160m",
            "kinds": ["natural", "random_words"],
            "convention": "replication",
            "corpus": "austen",
            "ms": [1, 2, 3, 4, 5],
            "n_targets": 20,
            "max_steps": 3000,
            "patience": 500,
            "lr": 0.01,
            "dtype": "float32",
            "device": "cuda",
            "eps_convention": "replication",
            "n_embed_prompts": 1000,
            "embed_length": 1024,
            "seed": 0,
        },
    },
    # Chapter 4 (book/04_mean_field.ipynb): model_name is the GPT-NeoX whose weights the position-free
    # variant reuses ("tiny" = random 2-layer GPT-NeoX, no file); real_models are shipped models of other
    # architectures measured as they are (skipped when not fetched); ms the prompt lengths of the
    # structural sweep, n_prompts random prompts per m; n_pairs prompt pairs of length pair_m for the
    # W_q-Lipschitz measurement; q the Wasserstein order; real_ms / real_pairs the (smaller) sizes for
    # real_models (2 prompts per length). Everything runs on CPU.
    "mean_field": {
        "smoke": {
            "model_name": "tiny",
            "real_models": [],
            "ms": [3, 6, 12],
            "n_prompts": 2,
            "n_pairs": 8,
            "pair_m": 6,
            "q": 1.0,
            "real_ms": [8],
            "real_pairs": 4,
        },
        "default": {
            "model_name": "nano",
            "real_models": ["smollm2-135m"],
            "ms": [4, 8, 16, 32, 64, 128],
            "n_prompts": 4,
            "n_pairs": 48,
            "pair_m": 16,
            "q": 1.0,
            "real_ms": [8, 32],
            "real_pairs": 6,
        },
        "paper": {
            "model_name": "EleutherAI/pythia-160m",
            "real_models": ["smollm2-135m"],
            "ms": [4, 8, 16, 32, 64, 128, 256, 512],
            "n_prompts": 16,
            "n_pairs": 400,
            "pair_m": 32,
            "q": 1.0,
            "real_ms": [8, 32, 128, 512],
            "real_pairs": 100,
        },
    },
    # Chapter 5 (book/05_support.ipynb): models are load_model names (skipped when not available;
    # "random-tiny" = untrained GPT-NeoX); n_prompts random prompts at each of the lengths (tokens);
    # cell_samples uniform points in the fitted ellipsoid for the argmax-cell volumes, capped per model
    # at cell_flops/(2·d·|V|); ε is fixed by each Table 1 method.
    "support": {
        "smoke": {
            "models": ["nano"],
            "n_prompts": 16,
            "lengths": [4, 8],
            "cell_samples": 2000,
            "cell_flops": 1e10,
            "source": "random",
            "device": "cpu",
            "token_budget": 4096,
        },
        "default": {
            "models": ["nano", "smollm2-135m", "gemma-3-270m"],
            "n_prompts": 64,
            "lengths": [4, 16, 64],
            "cell_samples": 20000,
            "cell_flops": 1.2e12,
            "source": "random",
            "device": "cpu",
            "token_budget": 4096,
        },
        "paper": {
            "models": [
                "EleutherAI/pythia-160m",
                "EleutherAI/pythia-410m",
                "EleutherAI/pythia-1b",
                "Qwen/Qwen2.5-0.5B",
                "Qwen/Qwen2.5-1.5B",
                "meta-llama/Llama-3.2-1B",
                "google/gemma-3-270m",
            ],
            "n_prompts": 10000,
            "lengths": [4, 16, 64, 256, 1024],
            "cell_samples": 10**7,
            "cell_flops": 1e18,
            "source": "random",
            "device": "cuda",
            "token_budget": 65536,
        },
    },
    # Chapter 6 (book/06_copying.ipynb): bases are "scratch" (GPT-NeoX from scratch, one run per entry of
    # widths, d_model/head_dim heads) or pretrained names cut to the task alphabet (widths ignored); train_max_lens: the first is
    # used for every model, the others for the first model only; strings of the training split with
    # lengths in [train_min_len, train_max_len]; eval_lengths, n_strings held-out strings per length.
    "copying": {
        "smoke": {
            "alphabet_size": 8,
            "bases": ["scratch"],
            "widths": [32],
            "n_layers": 2,
            "head_dim": 16,
            "context": 64,
            "train_min_len": 1,
            "train_max_lens": [4],
            "batch_size": 32,
            "lr": 3e-3,
            "warmup_steps": 30,
            "max_steps": 300,
            "check_every": 25,
            "eval_lengths": [2, 3, 4, 5, 6, 8],
            "n_strings": 50,
            "device": "cpu",
            "seed": 0,
        },
        "default": {
            "alphabet_size": 26,
            "bases": ["scratch"],
            "widths": [32, 64],
            "n_layers": 2,
            "head_dim": 16,
            "context": 64,
            "train_min_len": 1,
            "train_max_lens": [8, 12],
            "batch_size": 32,
            "lr": 3e-3,
            "warmup_steps": 30,
            "max_steps": 2500,
            "check_every": 25,
            "eval_lengths": [2, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 20, 24],
            "n_strings": 50,
            "device": "cpu",
            "seed": 0,
        },
        "paper": {
            "alphabet_size": 26,
            "bases": ["EleutherAI/pythia-160m", "EleutherAI/pythia-410m"],
            "widths": [],
            "n_layers": None,
            "head_dim": None,
            "context": 2048,
            "train_min_len": 5,
            "train_max_lens": [50, 25],
            "batch_size": 32,
            "lr": 5e-5,
            "warmup_steps": 200,
            "max_steps": 10000,
            "check_every": 200,
            "eval_lengths": [10, 20, 30, 40, 50, 60, 70, 80, 100, 125, 150, 200, 250, 300, 400, 500, 600, 800, 1000],
            "n_strings": 50,
            "device": "cuda",
            "seed": 0,
        },
    },
    # Chapter 7 (book/07_precision.ipynb): models are load_model names compared side by side (skipped when not
    # available); n_prompts natural-text prompts of m tokens, n_directions random directions each, for the
    # smallest output-changing perturbation of the soft prompt (grid_per_octave points per factor 2) and of h,
    # for the next token and the n_tokens-token output, in each of dtypes; n_embed_prompts random prompts of
    # embed_length tokens give each model's last-layer support (r, box, ellipsoid).
    "precision": {
        "smoke": {
            "models": ["nano"],
            "dtypes": ["float32"],
            "n_prompts": 4,
            "m": 2,
            "n_tokens": 2,
            "n_directions": 2,
            "grid_per_octave": 1,
            "grid_low_log2": -20,
            "bisect_steps": 10,
            "n_embed_prompts": 16,
            "embed_length": 8,
            "device": "cpu",
            "seed": 0,
        },
        "default": {
            "models": ["nano", "nano-mamba"],
            "dtypes": ["float32", "bfloat16"],
            "n_prompts": 12,
            "m": 4,
            "n_tokens": 4,
            "n_directions": 3,
            "grid_per_octave": 1,
            "grid_low_log2": -20,
            "bisect_steps": 10,
            "n_embed_prompts": 64,
            "embed_length": 32,
            "device": "cpu",
            "seed": 0,
        },
        "paper": {
            "models": ["EleutherAI/pythia-160m", "smollm2-135m", "gemma-3-270m", "nano", "nano-mamba"],
            "dtypes": ["float32", "bfloat16", "float16"],
            "n_prompts": 256,
            "m": 8,
            "n_tokens": 8,
            "n_directions": 16,
            "grid_per_octave": 4,
            "grid_low_log2": -20,
            "bisect_steps": 10,
            "n_embed_prompts": 1000,
            "embed_length": 256,
            "device": "cuda",
            "seed": 0,
        },
    },
}


#: The sizes of ``paper_tiny``, per chapter: the only values in which it differs from ``paper`` besides the
#: model names (each model becomes ``"standin:" + name``, see :func:`_paper_tiny`). Every chapter needs an
#: entry (a test checks it), so a new chapter's paper-scale path is sized for CI on purpose, not by default.
PAPER_TINY_SIZES: dict[str, dict[str, Any]] = {
    "theory": {},
    "argmax_cells": {"resolution": 48, "explorer_resolution": 32, "n_samples": 16, "device": "cpu"},
    "cramming": {"n_targets": 3, "max_steps": 12, "patience": 6, "device": "cpu", "n_embed_prompts": 4},
    "mean_field": {"n_prompts": 2, "n_pairs": 8, "real_pairs": 4},
    "support": {"n_prompts": 4, "cell_samples": 2000, "cell_flops": 1e10, "device": "cpu", "token_budget": 4096},
    "copying": {
        "batch_size": 4,
        "warmup_steps": 5,
        "max_steps": 20,
        "check_every": 10,
        "n_strings": 2,
        "device": "cpu",
    },
    "precision": {
        "n_prompts": 2,
        "n_directions": 2,
        "grid_per_octave": 1,
        "grid_low_log2": -8,
        "bisect_steps": 2,
        "m": 2,
        "n_tokens": 2,
        "n_embed_prompts": 8,
        "embed_length": 16,
        "device": "cpu",
    },
}
#: Parameters that hold model names, and the names that are the book's own (kept as they are in ``paper_tiny``).
_MODEL_KEYS = ("model_name", "models", "bases", "real_models")
_LOCAL_MODELS = ("scratch", "tiny", "nano", "nano-shape", "random-tiny", "nano-mamba")


def _standin(name: Any) -> Any:
    return name if not isinstance(name, str) or name in _LOCAL_MODELS else "standin:" + name


def _paper_tiny(chapter: str) -> dict[str, Any]:
    """The ``paper`` preset of ``chapter`` with every model name replaced by its stand-in and the sizes of
    :data:`PAPER_TINY_SIZES` (a chapter without an entry keeps paper's sizes on the CPU)."""
    out = dict(PRESETS[chapter]["paper"])
    for key in _MODEL_KEYS:
        if key in out:
            out[key] = [_standin(v) for v in out[key]] if isinstance(out[key], list) else _standin(out[key])
    out.update(PAPER_TINY_SIZES.get(chapter, {"device": "cpu"} if "device" in out else {}))
    return out


for _chapter in PRESETS:
    PRESETS[_chapter]["paper_tiny"] = _paper_tiny(_chapter)


def _conventions() -> tuple[str, ...]:
    from accessibility_lib.theory.precision import CONVENTIONS

    return tuple(sorted(CONVENTIONS))


def _paper_models() -> tuple[str, ...]:
    from accessibility_lib.theory.paper import models

    return tuple(models())


def _target_kinds() -> tuple[str, ...]:
    from accessibility_lib.experiments.targets import TARGET_KINDS

    return TARGET_KINDS


def _length_conventions() -> tuple[str, ...]:
    from accessibility_lib.experiments.targets import LENGTH_CONVENTIONS

    return LENGTH_CONVENTIONS


def _corpora() -> tuple[str, ...]:
    from accessibility_lib.experiments.targets import CORPORA

    return CORPORA


_DEVICE = Param("str", validate=device_available, doc="torch device: 'cpu', 'cuda' or 'cuda:N'")
_MODEL = Param("str", doc="a load_model name: 'nano', 'smollm2-135m', 'gemma-3-270m', a folder or a hub id")
_EPS = Param("str", choices=_conventions, doc="ε convention, a name in precision.CONVENTIONS")
_SEED = Param("int", minimum=0, doc="seed of every random draw")

#: chapter name -> parameter name -> declared type (checked at the door by :func:`resolve`).
PARAMETERS: dict[str, dict[str, Param]] = {
    "theory": {
        "eps_convention": _EPS,
        "fraction_model": Param("str", choices=_paper_models, doc="the model of the accessible-fraction figure"),
        "m_values": Param("list[int]", minimum=1, maximum=10_000, min_items=1, doc="prompt lengths m (vectors)"),
    },
    "argmax_cells": {
        "model_name": _MODEL,
        "prompts": Param("list[str]", min_items=3, doc="prompts whose last-layer embeddings span the plane"),
        "resolution": Param("int", minimum=8, maximum=4096, doc="pixels per side of the main slice"),
        "extent": Param("float", minimum=1e-6, doc="half-width of the main slice (units of the anchors' spread)"),
        "zooms": Param("list[float]", minimum=1e-6, min_items=1, doc="extents of the explorer's frames"),
        "explorer_resolution": Param("int", minimum=8, maximum=2048, doc="pixels per side of an explorer frame"),
        "n_labels": Param("int", minimum=1, maximum=64, doc="cells drawn in colour"),
        "n_samples": Param("int", minimum=3, doc="natural-text windows for the principal plane"),
        "device": _DEVICE,
    },
    "cramming": {
        "model_name": _MODEL,
        "kinds": Param("list[str]", choices=_target_kinds, min_items=1, doc="target kinds"),
        "convention": Param("str", choices=_length_conventions, doc="length convention"),
        "corpus": Param("str", choices=_corpora, doc="natural-text corpus"),
        "ms": Param("list[int]", minimum=1, maximum=64, min_items=1, doc="prompt lengths m (vectors)"),
        "n_targets": Param("int", minimum=1, maximum=1000, doc="targets per length"),
        "max_steps": Param("int", minimum=0, maximum=100_000, doc="optimiser steps per target at most"),
        "patience": Param("int", minimum=1, maximum=100_000, doc="steps without improvement before giving up"),
        "lr": Param("float", minimum=1e-8, maximum=10.0, doc="learning rate"),
        "dtype": Param("str", choices=("float32", "bfloat16"), doc="model dtype"),
        "device": _DEVICE,
        "eps_convention": _EPS,
        "n_embed_prompts": Param("int", minimum=2, doc="random prompts whose last-layer embeddings give r"),
        "embed_length": Param("int", minimum=1, doc="their length (tokens)"),
        "seed": _SEED,
    },
    "mean_field": {
        "model_name": Param("str", doc="'tiny', 'nano' or a GPT-NeoX name/path"),
        "real_models": Param("list[str]", doc="shipped models of other architectures, measured as they are"),
        "ms": Param("list[int]", minimum=1, maximum=4096, min_items=3, doc="prompt lengths of the structural sweep"),
        "n_prompts": Param("int", minimum=1, doc="random prompts per length"),
        "n_pairs": Param("int", minimum=2, doc="prompt pairs for the W_q measurement"),
        "pair_m": Param("int", minimum=1, doc="length of those prompts"),
        "q": Param("float", minimum=1.0, maximum=16.0, doc="Wasserstein order q"),
        "real_ms": Param("list[int]", minimum=1, maximum=4096, doc="prompt lengths for the real models"),
        "real_pairs": Param("int", minimum=1, doc="prompt pairs for the real models"),
    },
    "support": {
        "models": Param("list[str]", min_items=1, doc="load_model names ('random-tiny': an untrained GPT-NeoX)"),
        "n_prompts": Param("int", minimum=2, doc="prompts per length"),
        "lengths": Param("list[int]", minimum=1, min_items=1, doc="prompt lengths (tokens)"),
        "cell_samples": Param("int", minimum=100, doc="Monte Carlo points for the argmax-cell volumes"),
        "cell_flops": Param("float", minimum=1.0, doc="cap on the argmax work per model (FLOP)"),
        "source": Param("str", choices=("random", "text"), doc="prompt tokens: uniform ids or natural text"),
        "device": _DEVICE,
        "token_budget": Param("int", minimum=16, doc="tokens per forward batch"),
    },
    "copying": {
        "alphabet_size": Param("int", minimum=2, maximum=26, doc="|V| of the copy task (letters)"),
        "bases": Param("list[str]", min_items=1, doc="'scratch' or pretrained names cut to the alphabet"),
        "widths": Param("list[int]", minimum=4, doc="d_model of the scratch models"),
        "n_layers": Param("int", minimum=1, nullable=True, doc="layers of the scratch models"),
        "head_dim": Param("int", minimum=1, nullable=True, doc="head width of the scratch models"),
        "context": Param("int", minimum=8, doc="training context (tokens)"),
        "train_min_len": Param("int", minimum=1, doc="shortest training string"),
        "train_max_lens": Param("list[int]", minimum=1, min_items=1, doc="longest training string(s)"),
        "batch_size": Param("int", minimum=1, doc="sequences per step"),
        "lr": Param("float", minimum=1e-8, maximum=1.0, doc="AdamW learning rate"),
        "warmup_steps": Param("int", minimum=0, doc="linear warm-up steps"),
        "max_steps": Param("int", minimum=1, doc="step cap of training"),
        "check_every": Param("int", minimum=1, doc="steps between accuracy checks"),
        "eval_lengths": Param("list[int]", minimum=1, min_items=2, doc="string lengths evaluated"),
        "n_strings": Param("int", minimum=1, doc="held-out strings per length"),
        "device": _DEVICE,
        "seed": _SEED,
    },
    "precision": {
        "models": Param("list[str]", min_items=1, doc="load_model names compared side by side"),
        "dtypes": Param(
            "list[str]",
            choices=("float32", "bfloat16", "float16"),
            min_items=1,
            doc="dtypes the models run in for the perturbation measurement",
        ),
        "n_prompts": Param("int", minimum=1, maximum=100_000, doc="natural-text prompts"),
        "m": Param("int", minimum=1, maximum=1024, doc="prompt length (tokens, read as input vectors)"),
        "n_tokens": Param("int", minimum=1, maximum=1024, doc="greedy output length compared"),
        "n_directions": Param("int", minimum=1, maximum=10_000, doc="random directions per prompt"),
        "grid_per_octave": Param("int", minimum=1, maximum=64, doc="search grid points per factor 2"),
        "grid_low_log2": Param(
            "int", minimum=-60, maximum=3, doc="the search grid starts at 2^grid_low_log2 · ‖X‖∞ (and ends at 16·‖X‖∞)"
        ),
        "bisect_steps": Param("int", minimum=0, maximum=60, doc="halvings of the bracket around the first change"),
        "n_embed_prompts": Param("int", minimum=2, doc="random prompts whose last-layer embeddings give the support"),
        "embed_length": Param("int", minimum=1, doc="their length (tokens)"),
        "device": _DEVICE,
        "seed": _SEED,
    },
}


def resolve(chapter: str, preset: str, *, check_machine: bool = True, **overrides: Any) -> dict[str, Any]:
    """The parameters of ``chapter`` under ``preset``, with every non-None override applied and checked.

    Args:
        chapter: a key of :data:`PRESETS`.
        preset: a preset name of that chapter.
        check_machine: also check what needs this machine (that a device exists).
        **overrides: parameter values; None means "take the preset's".

    Raises:
        ParameterError (a ValueError): an unknown chapter, preset or parameter, or a value of the wrong
            type or range; the message names the parameter, what was given and what is allowed.
    """
    if chapter not in PRESETS:
        raise ParameterError(f"chapter must be one of {sorted(PRESETS)}, got {chapter!r}")
    preset = Param("str", choices=tuple(PRESETS[chapter])).coerce("preset", preset)
    params = dict(PRESETS[chapter][preset])
    unknown = sorted(set(overrides) - set(params))
    if unknown:
        raise ParameterError(f"{unknown} not parameter(s) of chapter {chapter!r}; known: {sorted(params)}")
    params.update({k: v for k, v in overrides.items() if v is not None})
    params = check(PARAMETERS[chapter], params, available=check_machine)
    params["preset"] = preset
    return params


def from_namespace(chapter: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """:func:`resolve` with ``preset`` and every declared parameter read from a notebook's namespace.

    The cell right after a chapter's ``parameters`` cell calls ``presets.from_namespace(chapter,
    globals())``, so a parameter added to :data:`PARAMETERS` cannot be forgotten in the call. Any other
    variable in the namespace at that point (not a module, a function or a ``_`` name) can only come from
    papermill's injected parameters: a misspelt parameter name.

    Raises:
        ParameterError: no ``preset``, an unknown parameter name, or a wrong value (from :func:`resolve`).
    """
    if "preset" not in namespace:
        raise ParameterError("the namespace has no 'preset' (the parameters cell sets it)")
    declared = PARAMETERS.get(chapter, {})
    unknown = sorted(
        k
        for k, v in namespace.items()
        if not k.startswith("_")
        and k not in _NOTEBOOK_NAMES
        and k != "preset"
        and k not in declared
        and not isinstance(v, types.ModuleType)
        and not callable(v)
    )
    if unknown:  # papermill only warns "Passed unknown parameter"; a misspelt name would run the defaults
        raise ParameterError(
            f"unknown parameter(s) {unknown} for chapter {chapter!r}; its parameters are {['preset', *declared]}"
        )
    values = {k: namespace.get(k) for k in declared}
    return resolve(chapter, namespace["preset"], **values)


#: Names IPython puts in a notebook's namespace (besides ``_``-prefixed ones).
_NOTEBOOK_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})


def table() -> list[dict[str, Any]]:
    """One row per (chapter, preset) with its parameters, for the README and the book's table."""
    rows = []
    for chapter, presets in PRESETS.items():
        for name, params in presets.items():
            rows.append({"chapter": chapter, "preset": name, **params})
    return rows


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``NAME=VALUE`` strings (a command's ``-p`` options) as a dict; a value is JSON when it parses as JSON
    (``[1, 2]``, ``3``, ``true``), else the plain string. The values are checked later by :func:`resolve`.

    Raises:
        ValueError: an item without ``=``.
    """
    import json

    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"-p expects NAME=VALUE (or CHAPTER.NAME=VALUE), got {pair!r}")
        name, value = pair.split("=", 1)
        try:
            out[name] = json.loads(value)
        except json.JSONDecodeError:
            out[name] = value
    return out
