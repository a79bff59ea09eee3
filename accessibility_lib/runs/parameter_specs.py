"""The declared type and range of every chapter parameter (:data:`PARAMETERS`), checked at the door."""

from __future__ import annotations

from pathlib import Path

from accessibility_lib.runs.parameters import Param, ParameterError, device_available


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


def _instruments() -> tuple[str, ...]:
    from accessibility_lib.experiments.instruments import INSTRUMENTS

    return tuple(INSTRUMENTS)


def _corpora() -> tuple[str, ...]:
    from accessibility_lib.experiments.targets import CORPORA

    return CORPORA


def _loadable(name: str, value: object) -> None:
    """Refuse a model name that cannot be loaded on this machine, in the parameter check (no weights loaded).

    Raises:
        ParameterError: naming the parameter, why the model cannot be loaded, and the offline choices.
    """
    from accessibility_lib.models.loading import availability_problem

    problem = availability_problem(value)
    if problem is not None:
        raise ParameterError(f"parameter {name!r} got {value!r}, which cannot be loaded here: {problem}")


def _hub_id_shaped(value: str) -> bool:
    owner, sep, repo = value.partition("/")
    ok = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
    return bool(sep and owner and repo and set(owner) <= ok and set(repo) <= ok and not owner.startswith("."))


def known_models(*local: str):
    """A ``validate`` for parameters that list models a chapter may skip (with a note) when they are absent.

    A value (or each element of a list) must be one of ``local`` (the chapter's own names, e.g.
    ``'random-tiny'``), a named offline model (fetched or not), a valid stand-in, an existing path, or a
    Hugging Face hub id (``owner/name``): the chapter loads it, or skips it with the loader's reason (not
    fetched, hub unreachable, broken folder) or shows a stored artifact. Anything else is a typo and is
    refused here, before any work, with the offline choices listed.
    """

    def validate(name: str, value: object) -> None:
        from accessibility_lib.models.loading import NAMED_MODELS, availability_problem

        for i, v in enumerate(value if isinstance(value, list) else [value]):
            if v in local or v in NAMED_MODELS or _hub_id_shaped(v) or Path(v).expanduser().exists():
                continue  # the chapter loads it, or skips it with the loader's reason
            problem = availability_problem(v)  # a stand-in name, or a bare id in the hub cache
            if problem is None:
                continue
            where = f"{name}[{i}]" if isinstance(value, list) else name
            extra = f" This parameter also takes {', '.join(repr(x) for x in local)}." if local else ""
            raise ParameterError(f"parameter {where!r} got {v!r}, which is not a model known here: {problem}{extra}")

    return validate


_DEVICE = Param("str", validate=device_available, doc="torch device: 'cpu', 'cuda' or 'cuda:N'")


_MODEL = Param(
    "str", validate=_loadable, doc="a load_model name: 'nano', 'smollm2-135m', 'gemma-3-270m', a folder or a hub id"
)


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
        "prompts": Param(
            "list[str]", min_items=3, max_items=3, doc="the three prompts whose last-layer embeddings span the plane"
        ),
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
        "length_convention": Param("str", choices=_length_conventions, doc="length convention of the targets"),
        "corpus": Param("str", choices=_corpora, doc="natural-text corpus"),
        "ms": Param("list[int]", minimum=1, maximum=64, min_items=1, doc="prompt lengths m (vectors)"),
        "n_targets": Param("int", minimum=1, maximum=1000, doc="targets per length"),
        "max_steps": Param("int", minimum=1, maximum=100_000, doc="optimiser steps per target at most"),
        "patience": Param("int", minimum=1, maximum=100_000, doc="steps without improvement before giving up"),
        "instrument": Param("str", choices=_instruments, doc="cramming instrument (optimiser and protocol)"),
        "dtype": Param("str", choices=("float32", "bfloat16"), doc="model dtype"),
        "device": _DEVICE,
        "eps_convention": _EPS,
        "n_embed_prompts": Param("int", minimum=2, doc="random prompts whose last-layer embeddings give r"),
        "embed_length": Param("int", minimum=1, doc="their length (tokens)"),
        "seed": _SEED,
    },
    "mean_field": {
        "model_name": Param("str", validate=known_models("tiny"), doc="'tiny', 'nano' or a GPT-NeoX name/path"),
        "real_models": Param(
            "list[str]", validate=known_models(), doc="shipped models of other architectures, measured as they are"
        ),
        "ms": Param(
            "list[int]", minimum=3, maximum=4096, min_items=3, doc="prompt lengths of the structural sweep (each ≥ 3)"
        ),
        "n_prompts": Param("int", minimum=1, doc="random prompts per length"),
        "n_pairs": Param("int", minimum=2, doc="prompt pairs for the W_q measurement"),
        "pair_m": Param("int", minimum=3, doc="length of those prompts (≥ 3)"),
        "q": Param("float", minimum=1.0, maximum=16.0, doc="Wasserstein order q"),
        "real_ms": Param("list[int]", minimum=3, maximum=4096, doc="prompt lengths for the real models (each ≥ 3)"),
        "real_pairs": Param("int", minimum=1, doc="prompt pairs for the real models"),
    },
    "support": {
        "models": Param(
            "list[str]",
            min_items=1,
            validate=known_models("random-tiny"),
            doc="load_model names ('random-tiny': an untrained GPT-NeoX, used only when listed)",
        ),
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
        "bases": Param(
            "list[str]",
            min_items=1,
            validate=known_models("scratch", "nano-shape", "nano-mamba-shape"),
            doc="'scratch', 'nano-shape', 'nano-mamba-shape' (from scratch) or pretrained names cut to the alphabet",
        ),
        "widths": Param("list[int]", minimum=4, doc="d_model of the scratch models"),
        "n_layers": Param("int", minimum=1, nullable=True, doc="layers of the scratch models"),
        "head_dim": Param("int", minimum=1, nullable=True, doc="head width of the scratch models"),
        "context": Param("int", minimum=8, doc="training context (tokens)"),
        "train_min_len": Param("int", minimum=1, doc="shortest training string"),
        "train_max_len": Param("int", minimum=1, doc="longest training string of every model"),
        "sweep_lens": Param("list[int]", minimum=1, doc="longest training strings of the length sweep"),
        "sweep_bases": Param("list[str]", doc="bases trained at every length of sweep_lens (a subset of bases)"),
        "batch_size": Param("int", minimum=1, doc="sequences per step"),
        "lr": Param("float", minimum=1e-8, maximum=1.0, doc="AdamW learning rate of the models trained from scratch"),
        "finetune_lr": Param("float", minimum=1e-8, maximum=1.0, doc="AdamW learning rate of the pretrained bases"),
        "warmup_steps": Param("int", minimum=0, doc="linear warm-up steps"),
        "max_steps": Param("int", minimum=1, doc="step cap of training"),
        "check_every": Param("int", minimum=1, doc="steps between accuracy checks"),
        "eval_lengths": Param("list[int]", minimum=1, min_items=2, doc="string lengths evaluated"),
        "n_strings": Param("int", minimum=1, doc="held-out strings per length"),
        "from_artifact": Param(
            "bool", doc="show the runs of book/data/copying/study.json and skip those it lacks (no training)"
        ),
        "device": _DEVICE,
        "seed": _SEED,
    },
    "precision": {
        "models": Param(
            "list[str]", min_items=1, validate=known_models(), doc="load_model names compared side by side"
        ),
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
