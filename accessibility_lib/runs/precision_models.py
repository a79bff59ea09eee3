"""Chapter 7's models: loaded in every dtype asked for (or skipped, and said), and their last-layer supports.

:func:`load_handles` loads each model of ``params["models"]`` in each dtype of ``params["dtypes"]`` and names the
ones it had to skip; :func:`measure_supports` samples each model's last-layer embeddings h on random prompts
(:func:`~accessibility_lib.geometry.embeddings.sample_embeddings`) and fits their support (ball, ellipsoid, box:
:func:`~accessibility_lib.geometry.support_shape.fit_support`), with the slopes C each gives under the
``l2_fp16`` convention (r = the largest L2 norm of h, ε = r∞·2^−11) and the dtypes' counts of representable
inputs and states (:func:`~accessibility_lib.theory.fp_grid.box_count`). :func:`supports_tables` puts them in
tables; :func:`book_slope` reads a book model's measured cramming slope from its stored artifact.
"""

from __future__ import annotations

import json
import math

import numpy as np

from accessibility_lib.runs.precision_counts import DTYPES, whole_range

__all__ = ["TORCH_DTYPES", "SHORT", "load_handles", "models_text", "measure_supports", "supports_tables",
           "pair_text", "book_slope"]  # fmt: skip

#: short names of the torch dtypes
SHORT = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}
TORCH_DTYPES = tuple(SHORT)


def load_handles(params: dict) -> tuple[dict, list[str], list[str]]:
    """Every (model, dtype) of the parameters that can be loaded here.

    Returns:
        ``(handles, names, skipped)``: ``handles[(name, dtype)]`` a :class:`~accessibility_lib.models.handle.
        ModelHandle`; ``names`` the models loaded in the first dtype, in order; ``skipped`` one line a (model,
        dtype) that could not be loaded, with the reason.
    """
    import torch

    from accessibility_lib.models.loading import ModelNotAvailableError, load_model

    handles, skipped = {}, []
    for name in params["models"]:
        for dt in params["dtypes"]:
            try:
                handles[(name, dt)] = load_model(name, device=params["device"], dtype=getattr(torch, dt))
            except (ModelNotAvailableError, ValueError) as exc:
                skipped.append(f"{name} ({dt}): {' '.join(str(exc).split())[:200]}")
    names = [n for n in params["models"] if (n, params["dtypes"][0]) in handles]
    return handles, names, skipped


def models_text(names: list[str], skipped: list[str]) -> str:
    """Which models were measured, and which were skipped and why: said above every result."""
    return f"Models measured: {', '.join(f'`{n}`' for n in names) or 'none'}." + (
        "\n\nSkipped: " + "; ".join(skipped) if skipped else ""
    )


def measure_supports(handles: dict, names: list[str], params: dict) -> dict[str, dict]:
    """Each model's last-layer support on ``n_embed_prompts`` random prompts of ``embed_length`` tokens.

    Returns:
        ``{name: {"d", "V", "r" (max ‖h‖₂), "r_inf" (max |h_i|), "box" ((d,) max |h_i| per coordinate), "geo"
        (:class:`~accessibility_lib.geometry.support_shape.SupportGeometry`), "eps_rep" (ε = r∞·2^−11),
        "C_ball_rep", "C_ell_rep" (slopes at that ε), "C_fp" (h box, per dtype), "C_in" (the box of the real
        input embeddings, per dtype), "C_any" (the whole finite range, per dtype), "r_in" (max |e_i| of the input
        embeddings), "arch"}}``; slopes in tokens per prompt vector.
    """
    import torch

    from accessibility_lib.geometry import support_shape
    from accessibility_lib.geometry.embeddings import sample_embeddings
    from accessibility_lib.theory import fp_grid, precision

    whole = whole_range()
    support = {}
    for name in names:
        h = handles[(name, params["dtypes"][0])]
        emb = sample_embeddings(h, params["n_embed_prompts"], [params["embed_length"]], source="random",
                                seed=params["seed"], token_budget=2048, desc=f"{name}: embeddings")  # fmt: skip
        x = emb[params["embed_length"]]  # (N, d)
        geo = support_shape.fit_support(x)
        r, r_inf = geo.radii["l2"], geo.radii["linf"]
        eps_rep = precision.L2_FP16.eps(r=r, r_inf=r_inf)
        with torch.no_grad():  # (|V|, d): the input vector of every token, as the model reads it
            e_in = h.embed(torch.arange(h.d_vocab).unsqueeze(0))[0].float().cpu().numpy()
        box_in, box = np.abs(e_in).max(0), np.abs(x).max(0)
        support[name] = {
            "d": h.d_model, "V": h.d_vocab, "r": r, "r_inf": r_inf, "box": box, "geo": geo, "eps_rep": eps_rep,
            "C_ball_rep": geo.ball.slope(eps_rep, h.d_vocab), "C_ell_rep": geo.ellipsoid.slope(eps_rep, h.d_vocab),
            "C_fp": {dt: fp_grid.box_count(box, dt, h.d_vocab).slope for dt in DTYPES},
            "C_in": {dt: fp_grid.box_count(box_in, dt, h.d_vocab).slope for dt in DTYPES},
            "C_any": {dt: h.d_model * math.log(whole[dt]) / math.log(h.d_vocab) for dt in DTYPES},
            "r_in": float(box_in.max()), "arch": type(h.model).__name__.removesuffix("ForCausalLM"),
        }  # fmt: skip
    return support


def supports_tables(support: dict, params: dict) -> str:
    """The supports under ``l2_fp16`` (r, r∞, ε, 2r/ε, C ball and ellipsoid), then the dtypes' counts as slopes
    (any input, the input box, the h box), with the sample they were measured on."""
    if not support:
        return "No model available."
    lines = ["| model | architecture | d | \\|V\\| | r (max L2) | r∞ | ε convention | ε | 2r/ε | C ball | "
             "C ellipsoid, same ε |", "|---" * 11 + "|"]  # fmt: skip
    for name, s in support.items():
        lines.append(f"| {name} | {s['arch']} | {s['d']} | {s['V']:,} | {s['r']:.2f} | {s['r_inf']:.2f} | l2_fp16 | "
                     f"{s['eps_rep']:.4g} | {2 * s['r'] / s['eps_rep']:.0f} | {s['C_ball_rep']:.1f} | "
                     f"{s['C_ell_rep']:.1f} |")  # fmt: skip
    lines += ["", "Convention `l2_fp16`: r is the largest L2 norm of the sampled h (the smallest centred ball that "
              "contains them, what Thm 4.5 packs) and ε = r∞·2^−11, the replication code's ε. The paper's models use "
              "`rinf_fp16` (r = r∞, so 2r/ε = 4096), whose ball does not contain the embeddings. Radii and boxes are "
              f"maxima over {params['n_embed_prompts']} random prompts of {params['embed_length']} tokens, so they "
              "can only grow with more prompts (chapter 5 fits them on a larger sample).",
              "", "Counts of representable values, as slopes C = Σ_i ln N(r_i)/ln|V| (tokens per prompt vector). "
              "The first two columns count input prompts (the worst case, no ε assumed). The last counts last-layer "
              "states h, which the dtype does not round at the input.", "",
              "| model | dtype | C, any input (whole finite range) | C, input box (real token vectors, max \\|e_i\\| = "
              "r_in) | r_in | C, h box (last-layer states) |", "|---" * 6 + "|"]  # fmt: skip
    for name, s in support.items():
        for dt in DTYPES:
            lines.append(f"| {name} | {dt} | {s['C_any'][dt]:.1f} | {s['C_in'][dt]:.1f} | {s['r_in']:.3g} | "
                         f"{s['C_fp'][dt]:.1f} |")  # fmt: skip
    return "\n".join(lines)


def pair_text() -> str:
    """What the two small models share: width, tokenizer and training text (read from their model files)."""
    from accessibility_lib.models.loading import nano_dir

    cfg = {n: json.loads((nano_dir().parent / f / "config.json").read_text())
           for n, f in (("nano", "nano"), ("nano-mamba", "nano_mamba"))}  # fmt: skip
    vocab, width = {c["vocab_size"] for c in cfg.values()}, {c["hidden_size"] for c in cfg.values()}
    return (
        f"`nano` (a {cfg['nano']['num_hidden_layers']}-layer GPT-NeoX) and `nano-mamba` (a "
        f"{cfg['nano-mamba']['num_hidden_layers']}-block Mamba) "
        + (f"share the width d = {width.pop()}" if len(width) == 1 else "have different widths")
        + (f", the tokenizer (|V| = {vocab.pop():,})" if len(vocab) == 1 else ", different vocabularies")
        + " and the training text."
    )


def book_slope(name: str, kind: str = "natural") -> float | None:
    """The cramming slope of a book model from its stored artifact; None when there is none, or it is unreliable
    (no ratio is taken of an unreliable slope: chapter 3's rule)."""
    from accessibility_lib.experiments import slope_fit
    from accessibility_lib.runs import cramming_artifacts as CA

    try:
        art = CA.load_artifact(name)
    except CA.ArtifactMissingError:
        return None
    pts = []
    for u in art["units"]:
        if u["kind"] == kind and u.get("state") == "complete":
            f = CA.refit_unit(u)[3]
            if f is not None and f.ok:
                pts.append((u["m"], f.n50, f.ci))
    if len({p[0] for p in pts}) < 2:
        return None
    pts.sort()
    fit = slope_fit.fit_slope([p[0] for p in pts], [p[1] for p in pts], n50_ci=[p[2] for p in pts])
    return fit.slope if fit.reliable else None
