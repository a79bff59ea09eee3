"""The values of the chapters' presets: chapter -> preset -> parameters (checked by :mod:`accessibility_lib.runs.presets`).

``smoke`` (tests, seconds), ``default`` (two CPU cores, minutes), ``paper`` (the paper's models and sizes,
a GPU box) and ``paper_tiny`` (``paper`` with every model replaced by its stand-in and small sizes, built
here from ``paper`` and :data:`PAPER_TINY_SIZES`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["PRESETS", "PAPER_TINY_SIZES", "LOCAL_MODELS", "MODEL_KEYS"]

#: chapter name -> preset name -> parameters. Chapters add their entries here.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    # Chapter 1 (book/01_theory.ipynb): closed forms only, seconds in every preset. eps_convention is a
    # name in precision.CONVENTIONS; fraction_model a model of the paper (paper.models()); m_values the
    # prompt lengths of the accessible-fraction figure.
    "theory": {
        "smoke": {"eps_convention": "rinf_fp16", "fraction_model": "Pythia-160M", "m_values": [1, 4]},
        "default": {"eps_convention": "rinf_fp16", "fraction_model": "Pythia-160M", "m_values": [1, 2, 4, 8]},
        "paper": {"eps_convention": "rinf_fp16", "fraction_model": "Pythia-160M", "m_values": [1, 2, 4, 8, 16]},
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
    # length_convention (targets.LENGTH_CONVENTIONS); corpus of the natural targets; ms prompt lengths; n_targets
    # targets a length where the crossing is pinned; max_steps/patience the budget (the paper's code: 3000/500);
    # instrument the optimiser (instruments.INSTRUMENTS; "paper": AdamW lr 1e-2, betas (0.9, 0.9), wd 0.01);
    # eps_convention a name in precision.CONVENTIONS; n_embed_prompts random prompts of embed_length tokens give r.
    "cramming": {
        "smoke": {
            "model_name": "nano",
            "kinds": ["natural", "random_words"],
            "length_convention": "first_given",
            "corpus": "heldout",
            "ms": [1, 2],
            "n_targets": 4,
            "max_steps": 20,
            "patience": 10,
            "instrument": "paper",
            "dtype": "float32",
            "device": "cpu",
            "eps_convention": "rinf_fp16",
            "n_embed_prompts": 32,
            "embed_length": 16,
            "seed": 0,
        },
        "default": {
            "model_name": "nano",
            "kinds": ["natural", "random_words"],
            "length_convention": "first_given",
            "corpus": "heldout",
            "ms": [1, 2, 3, 4],  # m = 6 alone cost 40 % of the token-steps of [1, 2, 3, 4, 6] (measured)
            "n_targets": 20,
            "max_steps": 300,
            "patience": 100,
            "instrument": "paper",
            "dtype": "float32",
            "device": "cpu",
            "eps_convention": "rinf_fp16",
            "n_embed_prompts": 256,
            "embed_length": 64,
            "seed": 0,
        },
        "paper": {
            "model_name": "EleutherAI/pythia-160m",
            "kinds": ["natural", "random_words"],
            "length_convention": "first_given",
            "corpus": "austen",
            "ms": [1, 2, 3, 4, 5],
            "n_targets": 20,
            "max_steps": 3000,
            "patience": 500,
            "instrument": "paper",
            "dtype": "float32",
            "device": "cuda",
            "eps_convention": "rinf_fp16",
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
            "n_prompts": 16,
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
    # Chapter 6 (book/06_copying.ipynb): bases are "scratch" (GPT-NeoX from scratch, one model per entry of widths,
    # d_model/head_dim heads), "nano-shape" / "nano-mamba-shape" (a shipped model's architecture from scratch) or
    # pretrained names cut to the task alphabet and fine-tuned whole. Every model trains on strings of lengths
    # train_min_len..train_max_len; the models of sweep_bases also at every length of sweep_lens. Scratch bases
    # learn at lr, pretrained ones at finetune_lr. eval_lengths: n_strings held-out strings per length. from_artifact:
    # show the runs of book/data/copying/study.json (made by scripts/copying_study.py) and skip, with a note, any
    # run it lacks, instead of training it in the chapter (the default build stays a few seconds).
    "copying": {
        "smoke": {
            "alphabet_size": 8,
            "bases": ["nano", "scratch"],
            "widths": [16, 32],
            "n_layers": 2,
            "head_dim": 16,
            "context": 64,
            "train_min_len": 1,
            "train_max_len": 4,
            "sweep_lens": [3, 4],
            "sweep_bases": ["scratch"],
            "batch_size": 32,
            "lr": 3e-3,
            "finetune_lr": 1e-3,
            "warmup_steps": 30,
            "max_steps": 200,
            "check_every": 25,
            "eval_lengths": [2, 3, 4, 5, 6, 8],
            "n_strings": 50,
            "from_artifact": False,
            "device": "cpu",
            "seed": 0,
        },
        "default": {
            "alphabet_size": 26,
            "bases": ["nano", "nano-mamba", "nano-shape", "nano-mamba-shape", "scratch"],
            "widths": [32, 64, 128],
            "n_layers": 2,
            "head_dim": 16,
            "context": 64,
            "train_min_len": 1,
            "train_max_len": 8,
            "sweep_lens": [4, 8, 12],
            "sweep_bases": ["nano", "nano-shape", "scratch"],
            "batch_size": 32,
            "lr": 3e-3,
            "finetune_lr": 1e-3,
            "warmup_steps": 30,
            "max_steps": 2500,
            "check_every": 25,
            "eval_lengths": [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 20, 22, 24, 27, 30],
            "n_strings": 50,
            "from_artifact": True,
            "device": "cpu",
            "seed": 0,
        },
        # the paper's protocol (§5; the replication code: Pythia cut to 30 rows, strings of length 5-50, AdamW lr
        # 1e-5, until 100 % training accuracy or 10k steps), unpacked batches of 32 strings; pythia-160m also at
        # shorter and longer training lengths, so that the GPU run answers what moves the cliff at scale
        "paper": {
            "alphabet_size": 26,
            "bases": ["EleutherAI/pythia-160m", "EleutherAI/pythia-410m"],
            "widths": [],
            "n_layers": None,
            "head_dim": None,
            "context": 2048,
            "train_min_len": 5,
            "train_max_len": 50,
            "sweep_lens": [20, 35, 50],
            "sweep_bases": ["EleutherAI/pythia-160m"],
            "batch_size": 32,
            "lr": 1e-3,
            "finetune_lr": 1e-5,
            "warmup_steps": 200,
            "max_steps": 10000,
            "check_every": 200,
            "eval_lengths": [10, 20, 30, 40, 50, 60, 70, 80, 100, 125, 150, 200, 250, 300, 400, 500, 600, 800, 1000],
            "n_strings": 50,
            "from_artifact": False,
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
MODEL_KEYS = ("model_name", "models", "bases", "sweep_bases", "real_models")
LOCAL_MODELS = ("scratch", "tiny", "nano", "nano-shape", "nano-mamba-shape", "random-tiny", "nano-mamba")


def _standin(name: Any) -> Any:
    return name if not isinstance(name, str) or name in LOCAL_MODELS else "standin:" + name


def _paper_tiny(chapter: str) -> dict[str, Any]:
    """The ``paper`` preset of ``chapter`` with every model name replaced by its stand-in and the sizes of
    :data:`PAPER_TINY_SIZES` (a chapter without an entry keeps paper's sizes on the CPU)."""
    out = dict(PRESETS[chapter]["paper"])
    for key in MODEL_KEYS:
        if key in out:
            out[key] = [_standin(v) for v in out[key]] if isinstance(out[key], list) else _standin(out[key])
    out.update(PAPER_TINY_SIZES.get(chapter, {"device": "cpu"} if "device" in out else {}))
    return out


for _chapter in PRESETS:
    PRESETS[_chapter]["paper_tiny"] = _paper_tiny(_chapter)
