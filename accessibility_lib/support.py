"""The support-refinement pipeline of chapter 5: embeddings → geometry → cell volumes → Table 1.

One call per model, :func:`analyse_model`, runs the paper's Section 5.2–5.3 measurement:

1. sample last-layer embeddings of N prompts at each length ℓ (:mod:`accessibility_lib.embeddings`);
2. fit the ball, the enclosing cone and the box-implied ellipsoid (:mod:`accessibility_lib.geometry`),
   once on all samples and once per longest length ℓ (the paper's Fig 9);
3. measure the argmax-cell volume fractions D inside the ellipsoid (the paper's choice) and, for
   comparison, inside the cone (:func:`accessibility_lib.cells.cell_volumes`);
4. turn them into slopes (tokens per prompt vector) under one explicit ε convention
   (:mod:`accessibility_lib.precision`): ball, cone, ellipsoid (:mod:`accessibility_lib.bounds`) and
   ellipsoid (and cone) + non-uniform cells (:func:`accessibility_lib.convolution.refined_slope`).

ε is fixed once per model from the fit on all samples, ε = convention.eps(r = max‖h‖₂, r_inf = max|h_i|),
and the same ε is used in every row, so the rows differ only by the support model.
Heavy results go to the result store (embeddings per chunk, cell counts per region).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import numpy as np
import torch

from . import bounds, convolution, geometry, precision
from ._checks import check_int
from .cells import CellVolumes, cell_volumes
from .embeddings import sample_embeddings
from .results import ResultStore

__all__ = [
    "load_available",
    "random_tiny_handle",
    "ModelSupport",
    "analyse_model",
    "weights_fingerprint",
    "table_rows",
    "html_table",
    "read_csv",
]


def random_tiny_handle(seed: int = 0, *, d_model: int = 64, d_vocab: int = 512, n_layers: int = 2, n_ctx: int = 256):
    """A random-weight GPT-NeoX (default d = 64, |V| = 512, 2 layers, 4 heads) wrapped as a model handle.

    Stands in when no trained model is available, so the chapter always runs; its numbers describe an
    untrained network, and the chapter says so. The sizes are arguments so benchmarks can build a wider
    one (MLP width 4·d).
    """
    import transformers

    from .models import wrap_model

    cfg = transformers.GPTNeoXConfig(
        vocab_size=d_vocab,
        hidden_size=d_model,
        num_hidden_layers=n_layers,
        num_attention_heads=4,
        intermediate_size=4 * d_model,
        max_position_embeddings=n_ctx,
    )
    torch.manual_seed(seed)
    model = transformers.GPTNeoXForCausalLM(cfg).eval()

    class _Tok:
        all_special_ids = [0]
        pad_token_id = 0
        pad_token = "<pad>"

        def __len__(self):
            return d_vocab

    name = "random-tiny" if (d_model, d_vocab, n_layers) == (64, 512, 2) else f"random-neox-{d_model}"
    return wrap_model(model, _Tok(), name=name, verify=False)


def load_available(names, device: str = "cpu", dtype: torch.dtype = torch.float32, fallback: bool = True):
    """Load every model in ``names`` that is available offline; note the others.

    Returns:
        ``(handles, notes)``: a list of ``(name, handle)`` and a list of one-line reasons for the
        models skipped. When none loads and ``fallback`` is set, ``random-tiny`` is used.
    """
    from .models import load_model

    handles, notes = [], []
    for name in names:
        if name == "random-tiny":
            handles.append((name, random_tiny_handle()))
            continue
        try:
            handles.append((name, load_model(name, device=device, dtype=dtype)))
        except ValueError as exc:  # ModelNotAvailableError is a ValueError
            notes.append(f"{name}: skipped ({' '.join(str(exc).split())[:240]})")
    if not handles and fallback:
        notes.append("no listed model is available: using random-tiny (an untrained GPT-NeoX) instead")
        handles.append(("random-tiny", random_tiny_handle()))
    return handles, notes


@dataclass
class ModelSupport:
    """What :func:`analyse_model` measured for one model (see the module docstring)."""

    name: str
    d: int
    vocab_size: int
    n_prompts: int
    lengths: list
    geometry: geometry.SupportGeometry
    by_length: dict  # ℓ -> SupportGeometry of the samples with length ≤ ℓ
    eps: float
    eps_convention: str
    cells: CellVolumes  # inside the ellipsoid (the paper's choice)
    cells_by_region: dict = field(default_factory=dict)  # "ellipsoid", "cone" -> CellVolumes
    slopes: dict = field(default_factory=dict)
    log_packing: dict = field(default_factory=dict)


def weights_fingerprint(handle) -> str:
    """A short hash of the unembedding and of a sample of every parameter: changes when the weights do."""
    h = hashlib.sha256()
    with torch.no_grad():
        for p in [handle.W_U, *list(handle.model.parameters())]:
            flat = p.detach().reshape(-1)
            k = min(64, flat.numel())
            idx = (torch.arange(k, dtype=torch.int64) * (flat.numel() - 1)) // max(k - 1, 1)  # exact integer spacing
            idx = idx.to(flat.device)
            h.update(str(tuple(p.shape)).encode())
            h.update(flat[idx].float().cpu().numpy().tobytes())
    return h.hexdigest()[:12]


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def analyse_model(
    handle,
    name: str,
    *,
    n_prompts: int,
    lengths,
    cell_samples: int,
    cell_flops: float = float("inf"),
    eps_convention: str = "replication",
    source: str = "random",
    token_budget: int = 8192,
    store: ResultStore | None = None,
    seed: int = 0,
) -> ModelSupport:
    """Run the Section 5.2–5.3 measurement on one model (see the module docstring).

    Raises:
        ValueError: on bad counts or lengths, an unknown ε convention, or (from the steps) lengths
            past the context, an fp16 model, degenerate embeddings.
    """
    n_prompts = check_int("n_prompts", n_prompts, minimum=2)
    cell_samples = check_int("cell_samples", cell_samples, minimum=1)
    vocab = int(handle.d_vocab)
    # cap the argmax work at cell_flops (2·d·|V| FLOPs a sample), never below 1000 samples
    cell_samples = min(cell_samples, max(1000, int(min(cell_flops, 1e30) / (2.0 * handle.d_model * vocab))))
    conv = precision.get(eps_convention)
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
    eps = conv.eps(r=geo.radii["l2"], r_inf=geo.radii["linf"])

    cells_by_region = {}
    for region_name, region in (("ellipsoid", geo.ellipsoid), ("cone", geo.cone)):
        key = {
            "model": key_name,
            "region": region_name,
            "embeddings": _digest([n_prompts, lengths, source, seed]),
            "n_samples": cell_samples,
            "seed": seed,
            "what": "argmax cell counts",
        }
        got = store.get("cell_volumes", key) if store is not None else None
        if got is not None:
            cells_by_region[region_name] = CellVolumes(
                counts=np.asarray(got["counts"]), n_samples=cell_samples, seed=seed
            )
            continue
        cv = cell_volumes(
            handle.W_U.detach(),
            handle.b_U.detach(),
            region,
            cell_samples,
            seed=seed,
            progress_desc=f"{name}: cells ({region_name})",
        )
        if store is not None:
            store.put("cell_volumes", key, {"n_no_hit": cv.n_no_hit}, arrays={"counts": cv.counts})
        cells_by_region[region_name] = cv
    cells = cells_by_region["ellipsoid"]

    log_packing = {
        "ball": geo.ball.log_packing(eps),
        "cone": geo.cone.log_packing(eps),
        "ellipsoid": geo.ellipsoid.log_packing(eps),
    }
    slopes = dict(geo.slopes(eps, vocab))
    slopes["ellipsoid + non-uniform cells"] = convolution.refined_slope(cells.log_p(), log_packing["ellipsoid"])
    slopes["cone + non-uniform cells"] = convolution.refined_slope(cells_by_region["cone"].log_p(), log_packing["cone"])
    slopes["ball, replication (2r/ε = 4096)"] = bounds.ball_slope(geo.d, 1.0, 2.0**-11, vocab)  # d·ln 4097/ln|V|
    return ModelSupport(
        name=name,
        d=geo.d,
        vocab_size=vocab,
        n_prompts=n_prompts,
        lengths=lengths,
        geometry=geo,
        by_length=by_length,
        eps=eps,
        eps_convention=conv.name,
        cells=cells,
        cells_by_region=cells_by_region,
        slopes=slopes,
        log_packing=log_packing,
    )


def table_rows(results: list[ModelSupport]) -> list[dict]:
    """One row per support model, one column per model: the rebuilt Table 1 (tokens per prompt vector)."""
    order = [
        "ball",
        "cone",
        "ellipsoid",
        "ellipsoid + non-uniform cells",
        "cone + non-uniform cells",
        "ball, replication (2r/ε = 4096)",
    ]
    return [{"support model": row, **{r.name: round(r.slopes[row], 2) for r in results}} for row in order]


def html_table(rows: list[dict], index: str | None = None):
    """An ``IPython.display.HTML`` table of ``rows`` (dicts with the same keys), first column ``index``."""
    import html

    from IPython.display import HTML

    if not rows:
        return HTML("<p>(no rows)</p>")
    cols = list(rows[0])
    if index in cols:
        cols.remove(index)
        cols.insert(0, index)
    pad = 'style="padding: 0.25em 0.6em"'
    head = "".join(f"<th {pad}>{html.escape(str(c))}</th>" for c in cols)
    body = "".join(
        "<tr>" + "".join(f"<td {pad}>{html.escape(str(r.get(c, '')))}</td>" for c in cols) + "</tr>" for r in rows
    )
    return HTML(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def read_csv(path) -> list[dict]:
    """Rows of a small CSV file as dicts of strings (the chapter's reference tables)."""
    import csv

    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))
