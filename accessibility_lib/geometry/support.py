"""The support-refinement pipeline of chapter 5: embeddings → geometry → Table 1 under two methods.

One call per model, :func:`analyse_model`, runs the paper's Section 5.2–5.3 measurement:

1. sample last-layer embeddings of N prompts at each length ℓ (:mod:`accessibility_lib.geometry.embeddings`);
2. fit the support statistics (:mod:`accessibility_lib.geometry.support_shape`), once on all samples and once per
   longest length ℓ (the paper's Fig 9);
3. compute the Table 1 column of the model twice (:mod:`accessibility_lib.geometry.table1`): as the authors'
   code does (``voronoi_box``) and with its faults fixed (``argmax_region``); each row carries its r, ε and
   2r/ε. The columns are cached in the result store.

A model that is not available offline can still be shown from a stored *support artifact*
(``book/data/support/<model>.json``, :func:`write_artifact` / :func:`load_artifact`), written by
``scripts/support_artifact.py`` with its provenance.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from accessibility_lib.geometry import support_shape as geometry
from accessibility_lib.geometry import table1
from accessibility_lib.geometry.embeddings import sample_embeddings
from accessibility_lib.ground.checks import check_int
from accessibility_lib.ground.paths import BOOK_DATA
from accessibility_lib.ground.results import ResultStore
from accessibility_lib.models.fingerprint import weights_fingerprint
from accessibility_lib.models.tiny import random_tiny_handle

if TYPE_CHECKING:
    from accessibility_lib.models.handle import ModelHandle

__all__ = [
    "load_available",
    "check_context",
    "ModelSupport",
    "analyse_model",
    "ARTIFACT_DIR",
    "write_artifact",
    "load_artifact",
    "stored_radii",
    "SupportArtifactMissingError",
]

ARTIFACT_DIR = BOOK_DATA / "support"


class SupportArtifactMissingError(FileNotFoundError):
    """No support artifact for a model; the message gives the command that produces it."""


def check_context(handle: ModelHandle, name: str, lengths) -> None:
    """Raise ValueError unless every prompt length fits the model's context (before any work).

    Raises:
        ValueError: naming the model, its context n_ctx (tokens) and the lengths past it.
    """
    from accessibility_lib.models.handle import context_length

    n_ctx = context_length(handle)
    too_long = sorted({int(ell) for ell in lengths if int(ell) > n_ctx})
    if too_long:
        raise ValueError(
            f"model {name!r} holds {n_ctx} tokens of context, but lengths {too_long} exceed it (lengths = "
            f"{sorted(int(ell) for ell in lengths)}): drop those lengths (e.g. -p lengths '[4, 16, 64]') or this model"
        )


def load_available(
    names, device: str = "cpu", dtype: torch.dtype = torch.float32, fallback: bool = False, lengths=None
):
    """Load every model in ``names`` that is available offline; note the others. Nothing is substituted.

    A model that cannot be loaded is skipped with a one-line reason (not fetched, not reachable offline,
    or refused by :func:`~accessibility_lib.models.loading.load_model`, e.g. Gemma-3 in float16, whose
    residual stream overflows). No other model is used in its place: the untrained ``random-tiny`` runs
    only when it is listed in ``names`` (the chapter parameter ``models``) or when the caller asks for
    it with ``fallback=True``, and then a note says that it is an untrained model used instead.

    Args:
        names: load_model names (``"random-tiny"``: an untrained GPT-NeoX, :func:`random_tiny_handle`).
        device, dtype: where and in what dtype to load them.
        fallback: when none loads, use ``random-tiny`` instead (off by default: only an explicit request
            computes on an untrained model).
        lengths: the prompt lengths (tokens) the analysis will use. Every loaded model is checked
            against them here, before any work (:func:`check_context`), and ``random-tiny`` is built with a
            context that holds the longest.

    Returns:
        ``(handles, notes)``: a list of ``(name, handle)`` — only the models asked for, plus
        ``random-tiny`` when ``fallback`` is set and none loaded — and a list of one-line notes: the
        reason for each model skipped, and the fallback when one was used. When none loads and
        ``fallback`` is not set, ``handles`` is empty (the caller shows stored results or stops).

    Raises:
        ValueError: a model that loads but whose context is shorter than the longest of ``lengths``.
    """
    from accessibility_lib.models.loading import load_model

    n_ctx = max([256, *(int(ell) for ell in lengths or [])])  # random-tiny holds every length asked for
    handles, notes = [], []
    for name in names:
        if name == "random-tiny":
            handles.append((name, random_tiny_handle(n_ctx=n_ctx)))
            continue
        try:
            handles.append((name, load_model(name, device=device, dtype=dtype)))
        except ValueError as exc:  # ModelNotAvailableError is a ValueError
            notes.append(f"{name}: skipped, not computed here ({' '.join(str(exc).split())[:400]})")
    if not handles and fallback:
        notes.append(
            f"none of {list(names)} is available: computed on random-tiny instead, an UNTRAINED GPT-NeoX "
            "(asked for with fallback=True); its numbers say nothing about a trained model"
        )
        handles.append(("random-tiny", random_tiny_handle(n_ctx=n_ctx)))
    if lengths is not None:
        for name, handle in handles:
            check_context(handle, name, lengths)
    return handles, notes


@dataclass
class ModelSupport:
    """What :func:`analyse_model` measured for one model (see the module docstring).

    Attributes:
        name, d, d_vocab: the model, its width d and |V|.
        n_prompts, lengths: the sample (prompts per length; lengths in tokens).
        geometry: :class:`~accessibility_lib.geometry.support_shape.SupportGeometry` of all samples (None from an artifact).
        stats: the geometry's numbers (radii, cosines, angles) as a dict (also from an artifact).
        by_length: ℓ -> SupportGeometry of the samples of length ≤ ℓ (empty from an artifact).
        columns: method -> :class:`~accessibility_lib.geometry.table1.Column`.
        source: "computed" or the artifact's provenance.
    """

    name: str
    d: int
    d_vocab: int
    n_prompts: int
    lengths: list
    geometry: object
    stats: dict
    by_length: dict
    columns: dict = field(default_factory=dict)
    source: object = "computed"


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _code_digest() -> str:
    """A hash of the code behind a Table 1 column: a changed method never reuses a stored column."""
    import inspect

    from accessibility_lib.geometry import cells, convolution, regions
    from accessibility_lib.theory import bounds, precision

    return _digest(
        [inspect.getsource(mod) for mod in (table1, regions, cells, convolution, bounds, precision, geometry)]
    )


def _stats(geo) -> dict:
    import math

    return {
        "samples": geo.n_points,
        "l1": geo.radii["l1"],
        "l2": geo.radii["l2"],
        "linf": geo.radii["linf"],
        "mean_cos": geo.mean_cosine,
        "min_cos": geo.min_cosine,
        "alpha_enclosing_deg": math.degrees(geo.cone.half_angle),
        "alpha_paper_deg": math.degrees(geo.paper_cone_half_angle),
    }


def analyse_model(
    handle: ModelHandle,
    name: str,
    *,
    n_prompts: int,
    lengths,
    cell_samples: int,
    cell_flops: float = float("inf"),
    source: str = "random",
    token_budget: int = 8192,
    store: ResultStore | None = None,
    seed: int = 0,
    eps_eff: dict | None = None,
) -> ModelSupport:
    """Run the Section 5.2–5.3 measurement on one model (see the module docstring).

    Args:
        handle: model handle. name: its label.
        n_prompts: prompts per length (≥ 2); lengths: prompt lengths (tokens).
        cell_samples: points for the cell volumes, capped at ``cell_flops``/(2·d·|V|) (never below 1000).
        source: prompt tokens, "random" (uniform non-special ids) or "text".
        token_budget: tokens per forward batch. store: result store (embeddings and columns cached).
        eps_eff: the ε the model shows at natural prompts, measured by the caller
            (:func:`accessibility_lib.runs.work.effective_eps_record`: ``{"eps", "ci", "what"}``, or
            ``{"note"}`` when it could not be measured); with it the ball and ellipsoid rows at that ε are
            added (:data:`accessibility_lib.geometry.table1.EXTRA_ROWS`).

    Raises:
        ValueError: on bad counts or lengths, or (from the steps) lengths past the context, degenerate
            embeddings.
    """
    n_prompts = check_int("n_prompts", n_prompts, minimum=2)
    cell_samples = check_int("cell_samples", cell_samples, minimum=1)
    check_context(handle, name, lengths)  # before any work, naming the model
    vocab = int(handle.d_vocab)
    cell_samples = min(cell_samples, max(1000, int(min(cell_flops, 1e30) / (2.0 * handle.d_model * vocab))))
    lengths = sorted(int(x) for x in lengths)
    key_name = f"{name}@{weights_fingerprint(handle)}"  # a retrained model never reuses stale results
    emb = sample_embeddings(
        handle,
        n_prompts,
        lengths,
        source=source,
        seed=seed,
        token_budget=token_budget,
        store=store,
        model_key=key_name,
        desc=f"{name}: embeddings",
    )
    all_h = np.concatenate([emb[ell] for ell in lengths])  # (N·|lengths|, d)
    geo = geometry.fit_support(all_h)
    by_length = {ell: geometry.fit_support(np.concatenate([emb[k] for k in lengths if k <= ell])) for ell in lengths}
    columns = {}
    for method in table1.METHODS:
        key = {
            "model": key_name,
            "method": method,
            "embeddings": _digest([n_prompts, lengths, source, seed]),
            "n_samples": cell_samples,
            "seed": seed,
            "what": "table1 column",
            "code": _code_digest(),
        }
        got = store.get("table1", key) if store is not None else None
        if got is not None:
            columns[method] = table1.Column.from_dict(got)
            continue
        if method == "voronoi_box":
            col = table1.voronoi_box_column(name, all_h, handle.W_U.detach(), vocab, n_samples=cell_samples, seed=seed)
        else:
            col = table1.argmax_region_column(
                name, all_h, handle.W_U.detach(), handle.b_U.detach(), vocab, n_samples=cell_samples, seed=seed
            )
        if store is not None:
            store.put("table1", key, col.to_dict())
        columns[method] = col
    stats = _stats(geo)
    if eps_eff is not None and "note" in eps_eff:
        stats["eps_eff_note"] = eps_eff["note"]
    elif eps_eff is not None:
        stats["eps_eff"], stats["eps_eff_ci"] = eps_eff["eps"], eps_eff["ci"]
        for col in columns.values():
            table1.add_effective_eps_rows(col, all_h, eps_eff["eps"], tuple(eps_eff["ci"]), eps_eff["what"])
    return ModelSupport(name, geo.d, vocab, n_prompts, lengths, geo, stats, by_length, columns)


@torch.no_grad()
def radius_variants(handle: ModelHandle, n_prompts: int = 32, length: int = 16, seed: int = 0) -> dict:
    """Largest L2 and L∞ norms of four candidate "last-layer embeddings" of random prompts.

    For a model whose base has a final RMS norm ``base.norm`` (Llama, Qwen, Gemma): the post-norm
    hidden state h (what the unembedding reads; the book's h), the pre-norm residual (the norm's input),
    the normalised vector without the learned weight (x/rms(x)), and h/√d. Also the range of the final
    norm's stored weight and the largest |h·W_Uᵀ + b_U − logits| over the prompts (h reproduces the
    model's logits). Used to check which quantity a paper's radii describe (chapter 5, Gemma-3-270M).

    Raises:
        ValueError: the model's base has no ``norm`` module.
    """
    from accessibility_lib.geometry.embeddings import prompt_tokens

    norm = getattr(handle._base, "norm", None)
    if norm is None:
        raise ValueError(f"{handle.name}: the base model has no final 'norm' module")
    ids = prompt_tokens(handle, length, 0, n_prompts, source="random", seed=seed)  # (N, T)
    seen = {}
    hook = norm.register_forward_hook(lambda mod, inp, out: seen.__setitem__("pre", inp[0][:, -1].float()))
    try:
        h = handle.final_embeddings(ids).float()  # (N, d) post-norm
        logits = handle.forward_logits(ids).float()  # (N, V)
    finally:
        hook.remove()
    pre = seen["pre"]
    eps = float(getattr(norm, "eps", getattr(norm, "variance_epsilon", 1e-6)))
    unweighted = pre / torch.sqrt(pre.pow(2).mean(-1, keepdim=True) + eps)
    d = h.shape[1]
    z = h @ handle.W_U.float().T + handle.b_U.float()
    if handle.softcap:
        z = handle.softcap * torch.tanh(z / handle.softcap)
    out = {
        name: {"l2": float(v.norm(dim=1).max()), "linf": float(v.abs().max())}
        for name, v in (
            ("post-norm h", h),
            ("pre-norm", pre),
            ("normalised, no weight", unweighted),
            ("h/√d", h / d**0.5),
        )
    }
    w = norm.weight.float()
    return {
        "radii": out,
        "norm_weight_min": float(w.min()),
        "norm_weight_max": float(w.max()),
        "logit_error": float((z - logits).abs().max()),
        "prompts": n_prompts,
        "length": length,
    }


def write_artifact(result: ModelSupport, path=None, provenance: dict | None = None) -> Path:
    """Write a model's support analysis (statistics and both Table 1 columns) as JSON, atomically."""
    path = Path(path or ARTIFACT_DIR / f"{result.name}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "model": result.name,
        "d": result.d,
        "d_vocab": result.d_vocab,
        "n_prompts": result.n_prompts,
        "lengths": result.lengths,
        "stats": result.stats,
        "columns": {m: c.to_dict() for m, c in result.columns.items()},
        "provenance": provenance or {},
    }
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1, allow_nan=False) + "\n")
    os.replace(tmp, path)
    return path


def load_artifact(name: str, folder=None) -> ModelSupport:
    """A model's support analysis from its artifact.

    Raises:
        SupportArtifactMissingError: no artifact; the message names the command that writes it.
    """
    path = Path(folder or ARTIFACT_DIR) / f"{name}.json"
    if not path.exists():
        raise SupportArtifactMissingError(
            f"no support artifact for {name!r} at {path}; write it (the model must be fetched) with:\n"
            f"    .venv/bin/python scripts/support_artifact.py --model {name}"
        )
    data = json.loads(path.read_text())
    cols = {table1.method_key(m): table1.Column.from_dict(c) for m, c in data["columns"].items()}
    return ModelSupport(
        data["model"],
        int(data["d"]),
        int(data.get("d_vocab", data.get("vocab"))),
        int(data["n_prompts"]),
        data["lengths"],
        None,
        data["stats"],
        {},
        cols,
        data.get("provenance", {}),
    )


def stored_radii(names, folder=None) -> tuple[dict[str, dict], list[str]]:
    """The last-layer radii of each model's support artifact, in the form the bound explorer's ``stored`` takes.

    Chapters 1, 3, 4 and 5 show one r per model this way: the largest L2 norm and the largest coordinate of the
    artifact's sampled last-layer embeddings (after the final norm), with what they were measured on.

    Returns:
        ``({name: {"l2", "linf", "sample"}}, notes)``: an entry for each name with an artifact, a note (the
        command that writes it) for each without one.
    """
    radii, notes = {}, []
    for name in names:
        try:
            s_ = load_artifact(name, folder)
        except SupportArtifactMissingError as exc:
            notes.append(str(exc))
            continue
        radii[name] = {"l2": s_.stats["l2"], "linf": s_.stats["linf"],
                       "sample": f"{s_.stats['samples']} last-layer embeddings ({s_.n_prompts} random prompts at each "
                       f"of the lengths {', '.join(map(str, s_.lengths))})"}  # fmt: skip
    return radii, notes
