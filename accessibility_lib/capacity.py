"""Capacity card: a model's bounds from its config alone, without loading weights.

The paper's closing promise: the bounds depend only on d, |V|, r and ε, so a new model's failure
length can be predicted "at no cost". Under every relative ε convention (ε proportional to the radius)
2r/ε is a constant and r cancels, so d and |V| from ``config.json`` are all that is needed.

Usage::

    python -m accessibility_lib.capacity EleutherAI/pythia-160m       # built-in facts or the HF cache
    python -m accessibility_lib.capacity path/to/model_folder_or_config.json

Source of the built-in facts: the paper's replication repository model list
(``models_list.csv``: hidden size and vocabulary size of the paper's models).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from . import bounds, precision

__all__ = ["ModelShape", "read_shape", "capacity_card", "format_card", "KNOWN_SHAPES"]

#: (d, |V|, released dtype) of the paper's models: d and |V| from the replication repository's
#: models_list.csv, the dtype from each model's published config.json (``torch_dtype``).
KNOWN_SHAPES: dict[str, tuple[int, int, str]] = {
    "EleutherAI/pythia-160m": (768, 50304, "float16"),
    "EleutherAI/pythia-410m": (1024, 50304, "float16"),
    "EleutherAI/pythia-1b": (2048, 50304, "float16"),
    "EleutherAI/pythia-1.4b": (2048, 50304, "float16"),
    "EleutherAI/pythia-2.8b": (2560, 50304, "float16"),
    "EleutherAI/pythia-6.9b": (4096, 50304, "float16"),
    "Qwen/Qwen2.5-0.5B": (896, 151936, "bfloat16"),
    "Qwen/Qwen2.5-1.5B": (1536, 151936, "bfloat16"),
    "meta-llama/Llama-3.2-1B": (2048, 128256, "bfloat16"),
    "google/gemma-3-270m": (640, 262144, "bfloat16"),
}


@dataclass(frozen=True)
class ModelShape:
    """What the bounds need from a model: d (``hidden_size``), |V| (``vocab_size``), its dtype."""

    name: str
    d_model: int
    d_vocab: int
    dtype: str
    source: str


def _shape_from_config(name: str, config: dict, source: str) -> ModelShape:
    text = config.get("text_config", config)  # multimodal configs (Gemma 3) nest the text model
    d = text.get("hidden_size", text.get("n_embd", text.get("d_model")))
    v = text.get("vocab_size", config.get("vocab_size"))
    if d is None or v is None:
        raise ValueError(f"{source} has no hidden_size/n_embd or vocab_size: is it a causal LM config.json?")
    dtype = str(text.get("torch_dtype", config.get("torch_dtype", text.get("dtype", config.get("dtype", "unknown")))))
    return ModelShape(name=name, d_model=int(d), d_vocab=int(v), dtype=dtype, source=source)


def read_shape(name_or_path: str) -> ModelShape:
    """d, |V| and dtype of a model from its config only (no weights, no network).

    Looks, in order, at: a ``config.json`` file or a folder holding one; the book's own model names
    (``nano``, and ``smollm2-135m``/``gemma-3-270m`` once fetched); the Hugging Face cache
    (``local_files_only``); the built-in facts of the paper's models (:data:`KNOWN_SHAPES`).

    Raises:
        ValueError: if none of these knows the model (the message says what to pass instead).
    """
    path = Path(name_or_path)
    if path.is_file():
        return _shape_from_config(name_or_path, json.loads(path.read_text()), str(path))
    if path.is_dir():
        cfg = path / "config.json"
        if not cfg.exists():
            raise ValueError(f"{path} is a folder without config.json")
        return _shape_from_config(name_or_path, json.loads(cfg.read_text()), str(cfg))
    from .models import NAMED_MODELS, cache_dir, nano_dir  # torch is imported only here

    if name_or_path == "nano" or name_or_path in NAMED_MODELS:
        folder = nano_dir() if name_or_path == "nano" else cache_dir() / name_or_path
        cfg = folder / "config.json"
        if not cfg.exists():
            raise ValueError(f"{name_or_path!r} is not fetched yet: python -m accessibility_lib.fetch {name_or_path}")
        return _shape_from_config(name_or_path, json.loads(cfg.read_text()), str(cfg))
    try:  # the HF cache, offline: never downloads
        from huggingface_hub import hf_hub_download

        cached = hf_hub_download(name_or_path, "config.json", local_files_only=True)
        return _shape_from_config(name_or_path, json.loads(Path(cached).read_text()), cached)
    except Exception:  # not cached, not a valid repo id, or huggingface_hub missing
        pass
    if name_or_path in KNOWN_SHAPES:
        d, v, dtype = KNOWN_SHAPES[name_or_path]
        return ModelShape(
            name_or_path, d, v, dtype, "built-in facts: the paper's models_list.csv and the model's config"
        )
    raise ValueError(
        f"no config found for {name_or_path!r}: pass a config.json or a model folder, a hub id already in the "
        f"Hugging Face cache, or one of the paper's models: {', '.join(KNOWN_SHAPES)}"
    )


def capacity_card(shape: ModelShape, m: int = 1, q: float = 1.0) -> list[dict]:
    """One row per ε convention: 2r/ε, C (Cor 4.6), n* = C·m, ln ln #accessible (Thm 4.9).

    Every named convention of :mod:`accessibility_lib.precision` is relative to a radius, so 2r/ε is
    fixed and the radius cancels (r = 1 is used). ``log10_mean_field_length`` is log10 of the length n
    at which Cor 4.10's fraction bound falls below 1: ln #accessible / ln|V| tokens.
    """
    rows = []
    for key, conv in precision.CONVENTIONS.items():
        ratio = conv.ratio(1.0, r_inf=1.0)
        eps = 2.0 / ratio
        c = bounds.ball_slope(shape.d_model, 1.0, eps, shape.d_vocab)
        loglog = bounds.mean_field_loglog_count(shape.d_model, 1.0, eps, q)
        rows.append(
            {
                "convention": key,
                "description": conv.name,
                "2r/eps": ratio,
                "C": c,
                "n_star": c * m,
                "loglog_count": loglog,
                "log10_mean_field_length": (loglog - math.log(math.log(shape.d_vocab))) / math.log(10),
            }
        )
    return rows


def format_card(shape: ModelShape, m: int = 1, q: float = 1.0) -> str:
    """The capacity card as text."""
    lines = [
        f"Capacity card: {shape.name}",
        f"  d = {shape.d_model}, |V| = {shape.d_vocab}, dtype = {shape.dtype}  (from {shape.source})",
        f"  prompt length m = {m}; Wasserstein order q = {q:g}",
        "",
        f"  {'ε convention':<28} {'2r/ε':>10} {'C (tok/vec)':>12} {'n* = C·m':>10} {'ln ln #acc (Thm 4.9)':>21} {'log10 n (Cor 4.10)':>19}",
    ]
    for row in capacity_card(shape, m, q):
        lines.append(
            f"  {row['description']:<28} {row['2r/eps']:>10.4g} {row['C']:>12.2f} {row['n_star']:>10.1f} "
            f"{row['loglog_count']:>21.1f} {row['log10_mean_field_length']:>19.1f}"
        )
    lines += [
        "",
        "  C: Cor 4.6 — some length-n sequences are inaccessible once n > C·m (prompts of m vectors).",
        "  Thm 4.9 / Cor 4.10: prompts of any length; the count is e^(e^(ln ln)), the fraction bound",
        "  drops below 1 only at n = 10^(last column) tokens.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m accessibility_lib.capacity", description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+", help="hub id, model folder, or config.json")
    parser.add_argument("-m", type=int, default=1, help="prompt length m in vectors (default 1)")
    parser.add_argument("-q", type=float, default=1.0, help="Wasserstein order q of Thm 4.9 (default 1)")
    args = parser.parse_args(argv)
    status = 0
    for name in args.models:
        try:
            print(format_card(read_shape(name), args.m, args.q))
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = 2
        print()
    return status


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    raise SystemExit(main())
