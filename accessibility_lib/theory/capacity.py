"""Capacity card: a model's bounds from its config alone, without loading weights.

The paper's closing promise: the bounds depend only on d, |V|, r and ε, so a new model's failure
length can be predicted "at no cost". Under every relative ε convention (ε proportional to the radius)
2r/ε is a constant and r cancels, so d and |V| from ``config.json`` are all that is needed.

Usage::

    python -m accessibility_lib capacity EleutherAI/pythia-160m       # built-in facts or the HF cache
    python -m accessibility_lib capacity gemma-3-270m -m 4            # a book model, fetched or not
    python -m accessibility_lib capacity path/to/model_folder_or_config.json

Names accepted without any file (:func:`accepted_names`): the book's own models (``nano``, shipped;
``smollm2-135m`` and ``gemma-3-270m``, whose config facts are built in so that the card works before
they are fetched) and the paper's models by hub id (``EleutherAI/pythia-160m``) or by the name of the
authors' model list (``Pythia-160M``).

Sources of the built-in facts: d and |V| of the paper's models from the authors' model list
(:func:`accessibility_lib.theory.paper.models`); SmolLM2-135M (d = 576, |V| = 49152) and Gemma-3-270M
(d = 640, |V| = 262144) from their published ``config.json``; the released dtype of every model from its
published ``config.json`` (``torch_dtype``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from accessibility_lib.ground.checks import check_int, check_real
from accessibility_lib.theory import bounds, precision

__all__ = ["ModelShape", "read_shape", "capacity_card", "format_card", "accepted_names", "KNOWN_SHAPES", "BOOK_SHAPES"]

#: Released dtype of each of the paper's models, from its published config.json (``torch_dtype``).
RELEASED_DTYPE: dict[str, str] = {
    "EleutherAI/pythia-160m": "float16",
    "EleutherAI/pythia-410m": "float16",
    "EleutherAI/pythia-1b": "float16",
    "EleutherAI/pythia-1.4b": "float16",
    "EleutherAI/pythia-2.8b": "float16",
    "EleutherAI/pythia-6.9b": "float16",
    "Qwen/Qwen2.5-0.5B": "bfloat16",
    "Qwen/Qwen2.5-1.5B": "bfloat16",
    "meta-llama/Llama-3.2-1B": "bfloat16",
    "google/gemma-3-270m": "bfloat16",
}


def _known_shapes() -> dict[str, tuple[int, int, str]]:
    from accessibility_lib.theory.paper import models  # the authors' model list: d and |V| transcribed once, there

    return {m.hf_id: (m.d_model, m.d_vocab, RELEASED_DTYPE[m.hf_id]) for m in models().values()}


#: (d, |V|, released dtype) of the paper's models by hub id: d and |V| from the authors' model list
#: (:func:`accessibility_lib.theory.paper.models`), the dtype from :data:`RELEASED_DTYPE`.
KNOWN_SHAPES: dict[str, tuple[int, int, str]] = _known_shapes()

#: (d, |V|, released dtype) of the book's fetched real models, from their published config.json, so that the
#: card works before ``python -m accessibility_lib fetch NAME`` has run (the fetched copy is dequantized to
#: float32; the released weights are bfloat16).
BOOK_SHAPES: dict[str, tuple[int, int, str]] = {
    "smollm2-135m": (576, 49152, "bfloat16"),
    "gemma-3-270m": (640, 262144, "bfloat16"),
}


def _paper_list_names() -> dict[str, str]:
    """The authors' model-list names (e.g. ``"Pythia-160M"``) -> hub id, for the models in :data:`KNOWN_SHAPES`."""
    from accessibility_lib.theory.paper import models

    return {name: m.hf_id for name, m in models().items() if m.hf_id in KNOWN_SHAPES}


def accepted_names() -> list[str]:
    """Every model name the card accepts without a file: the book's models, then the paper's (hub ids and list names)."""
    return ["nano", *BOOK_SHAPES, *KNOWN_SHAPES, *_paper_list_names()]


def _names_hint() -> str:
    book = ", ".join(["nano", *BOOK_SHAPES])
    paper = ", ".join(KNOWN_SHAPES)
    listed = ", ".join(_paper_list_names())
    return f"the book's models: {book}; the paper's models by hub id: {paper}; or by the authors' list name: {listed}"


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
    (``nano``'s shipped config; ``smollm2-135m``/``gemma-3-270m``: the fetched copy's config when there is
    one, else :data:`BOOK_SHAPES`); the Hugging Face cache (``local_files_only``, by hub id or the authors'
    list name); the built-in facts of the paper's models (:data:`KNOWN_SHAPES`). :func:`accepted_names`
    lists the names that need no file.

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
    if not isinstance(name_or_path, str) or not name_or_path.strip():
        raise ValueError(f"model must be a name, a folder or a config.json; accepted names: {_names_hint()}")
    from accessibility_lib.models.loading import cache_dir, nano_dir  # torch is imported only here

    if name_or_path == "nano":
        cfg = nano_dir() / "config.json"
        if not cfg.exists():
            raise ValueError(f"the shipped 'nano' model is missing ({cfg}); reinstall the package")
        return _shape_from_config("nano", json.loads(cfg.read_text()), str(cfg))
    if name_or_path in BOOK_SHAPES:
        d, v, dtype = BOOK_SHAPES[name_or_path]
        cfg = cache_dir() / name_or_path / "config.json"
        if cfg.exists():  # the fetched copy: d and |V| read from it, the released dtype from the built-in facts
            got = _shape_from_config(name_or_path, json.loads(cfg.read_text()), str(cfg))
            return ModelShape(name_or_path, got.d_model, got.d_vocab, dtype, f"{cfg}; released dtype {dtype}")
        return ModelShape(
            name_or_path, d, v, dtype, "built-in facts: the released model's config.json (not fetched here)"
        )
    hub_id = _paper_list_names().get(name_or_path, name_or_path)
    try:  # the HF cache, offline: never downloads
        from huggingface_hub import hf_hub_download

        cached = hf_hub_download(hub_id, "config.json", local_files_only=True)
        return _shape_from_config(name_or_path, json.loads(Path(cached).read_text()), cached)
    except Exception:  # not cached, not a valid repo id, or huggingface_hub missing
        pass
    if hub_id in KNOWN_SHAPES:
        d, v, dtype = KNOWN_SHAPES[hub_id]
        return ModelShape(
            name_or_path, d, v, dtype, "built-in facts: the paper's models_list.csv and the model's config"
        )
    raise ValueError(
        f"no config found for {name_or_path!r}: pass a config.json or a model folder, a hub id already in the "
        f"Hugging Face cache, or one of {_names_hint()}"
    )


def _check_m_q(m: object, q: object) -> tuple[int, float]:
    m = check_int("m (prompt length, vectors)", m, minimum=1)
    q = check_real("q (Wasserstein order of Thm 4.9)", q, minimum=1.0)
    return m, q


def capacity_card(shape: ModelShape, m: int = 1, q: float = 1.0) -> list[dict]:
    """One row per ε convention: 2r/ε, C (Cor 4.6), n* = C·m, ln ln #accessible (Thm 4.9).

    Every named convention of :mod:`accessibility_lib.theory.precision` is relative to a radius, so 2r/ε is
    fixed and the radius cancels (r = 1 is used). ``log10_mean_field_length`` is log10 of the length n
    at which Cor 4.10's fraction bound falls below 1: ln #accessible / ln|V| tokens.

    Args:
        shape: from :func:`read_shape`.
        m: prompt length in vectors, an integer ≥ 1.
        q: Wasserstein order of Thm 4.9, a real ≥ 1.

    Raises:
        ValueError: on m < 1 or not an integer, q < 1.
    """
    m, q = _check_m_q(m, q)
    rows = []
    for key, conv in precision.CONVENTIONS.items():
        if not conv.config_only:  # e.g. "l2_fp16": 2r/ε depends on the measured r_l2/r∞
            continue
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
    """The capacity card as text (raises ``ValueError`` as :func:`capacity_card`)."""
    m, q = _check_m_q(m, q)
    lines = [
        f"Capacity card: {shape.name}",
        f"  d = {shape.d_model}, |V| = {shape.d_vocab}, dtype = {shape.dtype}  (from {shape.source})",
        f"  prompt length m = {m}; Wasserstein order q = {q:g}",
        "",
        f"  {'ε convention':<36} {'2r/ε':>10} {'C (tok/vec)':>12} {'n* = C·m':>10} {'ln ln #acc (Thm 4.9)':>21} {'log10 n (Cor 4.10)':>19}",
    ]
    for row in capacity_card(shape, m, q):
        key, what = row["convention"], row["description"]
        label = what if what.startswith(key) else f"{key} ({what})"  # every row by its key, as in the chapters
        lines.append(
            f"  {label:<36} {row['2r/eps']:>10.4g} {row['C']:>12.2f} {row['n_star']:>10.1f} "
            f"{row['loglog_count']:>21.1f} {row['log10_mean_field_length']:>19.1f}"
        )
    lines += [
        "",
        "  C: Cor 4.6 — some length-n sequences are inaccessible once n > C·m (prompts of m vectors).",
        "  Thm 4.9 / Cor 4.10: prompts of any length; the count is e^(e^(ln ln)), the fraction bound",
        "  drops below 1 only at n = 10^(last column) tokens.",
    ]
    return "\n".join(lines)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the prompt length m must be a whole number of vectors >= 1, got {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"the prompt length m must be a whole number of vectors >= 1, got {value}")
    return value


def _order(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the Wasserstein order q must be a number >= 1, got {text!r}")
    if not (math.isfinite(value) and value >= 1.0):
        raise argparse.ArgumentTypeError(f"the Wasserstein order q must be a number >= 1 (Thm 4.9), got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m accessibility_lib capacity",
        description=__doc__.split("\n")[0],
        epilog="Names accepted without a file: " + ", ".join(accepted_names()),
    )
    parser.add_argument("models", nargs="+", help="a model name (see below), a model folder, or a config.json")
    parser.add_argument("-m", type=_positive_int, default=1, help="prompt length m in vectors, >= 1 (default 1)")
    parser.add_argument("-q", type=_order, default=1.0, help="Wasserstein order q >= 1 of Thm 4.9 (default 1)")
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
