"""The paper preset's cost, counted: work, memory and time per chapter and model, before a GPU runs it.

Every number comes from a formula applied to the preset's parameters and each model's architecture
facts (:data:`accessibility_lib.models.standins.ARCHITECTURES`):

- **FLOPs** count the matrix products (2 per multiply-add): per token and layer the attention
  projections and the MLP (:func:`layer_flops_per_token`), per sequence the attention products
  Q·Kᵀ and A·V over the full T×T square (:func:`attention_flops`; causal kernels skip about half, so
  this is an upper bound), and the unembedding, 2·d·|V| per position whose logits are needed. A
  soft-prompt step (cramming) is a forward pass plus a backward pass to the inputs only (the weights are
  frozen: 2× the forward); a training step (copying) adds the weight gradients (3× the forward).
  The test suite checks these counts against ``torch.utils.flop_counter`` on stand-ins at two sizes.
- **Work**: tokens forwarded, optimiser steps and Monte-Carlo points. Cramming's search is data
  dependent; it is simulated with the library's own search (:func:`accessibility_lib.experiments.n50_sequential.locate_n50_sequential`) on a success
  curve that steps down at the paper's n50 (its measured slope C_exp × m), and every target is charged
  ``max_steps`` steps: an upper bound (a crammed target stops early).
- **Memory peaks**: the model's parameters in the run's dtype, plus the largest working set of the
  step (cramming: logits, log-softmax and their gradient, 3 × batch × n × |V| floats, and the
  activations kept for the backward pass; copying: weights, gradients and AdamW's two moments plus
  activations; embeddings: one forward batch of ``token_budget`` tokens; cells: one
  ``point_chunk`` × ``vocab_chunk`` block of logits and W_U).
- **Time** = FLOPs / (η × R): R is the GPU's matrix-multiply rate in the run's dtype (:data:`GPU`, the
  nominal dense rates of an H200; ``benchmarks/gpu_check.py`` measures the real ones), η the fraction of
  the matrix-multiply rate that each kind of work reaches, measured on this machine's CPU
  (``benchmarks/bench_scale_plan.py``, stored in ``book/data/scale/cpu_throughput.json``) and assumed to
  carry over. On eight GPUs the sweep's units (:mod:`accessibility_lib.runs.sweeps`) are spread by longest
  processing time first; the other chapters run after it on one GPU.

The two steps too big for one GPU if done in one piece — the support's embeddings (the paper samples
10,000 prompts at 11 lengths, 110,000 × d) and 10⁷ cell samples against |V| = 262,144 — are listed by
:func:`chunking` with their size in one piece and the chunked working set, against :data:`MEMORY_BUDGET_GIB`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from accessibility_lib.ground.paths import BOOK_DATA
from accessibility_lib.models.standins import architecture
from accessibility_lib.runs.flops import BYTES_PER_VALUE, forward_flops, params_bytes, step_flops

__all__ = [
    "GPU",
    "MEMORY_BUDGET_GIB",
    "THROUGHPUT_PATH",
    "Work",
    "cramming_lengths",
    "plan",
    "chunking",
]

#: The GPU the times are estimated for: nominal dense matrix-multiply rates (FLOP/s) and memory of an NVIDIA
#: H200 SXM (its datasheet: FP32 67 TFLOPS, BF16 Tensor Core 989 TFLOPS dense, 141 GB).
GPU = {"name": "NVIDIA H200 (nominal)", "float32": 67e12, "bfloat16": 989e12, "memory_gib": 141.0}
#: Every step's working set is kept under this (a budget that fits any 24 GB card, far below an H200's).
MEMORY_BUDGET_GIB = 16.0
#: CPU cores of the GPU box for the work that runs on its host (the support's geometry fits), each at the
#: one-thread matrix-multiply rate measured here (the GPU box this book is checked on has 16).
HOST_CORES = 16
#: Where the measured CPU throughput (η per kind of work) is stored.
THROUGHPUT_PATH = BOOK_DATA / "scale" / "cpu_throughput.json"


@dataclass
class Work:
    """The counted cost of one unit of work (one row of the plan).

    Attributes:
        chapter, model, unit: where it belongs.
        tokens: tokens forwarded (inside optimisation steps too). steps: optimiser steps (cramming: per
            target, summed; an upper bound). samples: Monte-Carlo points. flops: matrix-product FLOPs
            by kind of work (``"cram"``, ``"forward"``, ``"cells"``, ``"train"``: each runs at its own η).
        memory: peak bytes on the device. dtype: the run's dtype. swept: a sweep unit (fanned out).
        notes: how it was counted.
    """

    chapter: str
    model: str
    unit: str
    tokens: float = 0.0
    steps: float = 0.0
    samples: float = 0.0
    flops: dict = field(default_factory=dict)
    memory: float = 0.0
    dtype: str = "float32"
    swept: bool = False
    notes: str = ""


def cramming_lengths(
    n50: float, m: int, n_targets: int, n_min: int = 2, n_max: int = 2048, n_pred: float | None = None
) -> list[tuple[int, int]]:
    """The (length, targets) pairs the n50 search crams when the success curve steps down at ``n50``.

    Runs the chapter's search itself (:func:`accessibility_lib.experiments.n50_sequential.locate_n50_sequential`,
    started at ``n_pred``, default 12·m) on a curve that is 1 below n50 and 0 above: the sides are settled
    after the first look, so every length but the two that pin the crossing gets the test's first look.
    """
    from accessibility_lib.experiments.n50_sequential import locate_n50_sequential

    asked: list[tuple[int, int]] = []

    def evaluate(n: int, count: int):
        asked.append((n, count))
        return (1.0 if n < n50 else 0.0), count, 0

    start = 12.0 * m if n_pred is None else n_pred
    locate_n50_sequential(evaluate, start, n_max, n_trials=n_targets, n_min=n_min)
    done: dict[int, int] = {}
    for n, count in asked:  # a length asked again with more targets crams only the new ones
        done[n] = max(done.get(n, 0), count)
    return sorted(done.items())


def _cramming(params: dict, preset: str) -> list[Work]:
    from accessibility_lib.theory.paper import MEASURED_SLOPES, models

    name = params["model_name"].removeprefix("standin:")
    arch = architecture(name)
    listed = {m.hf_id: m.name for m in models().values()}
    slopes = MEASURED_SLOPES[listed[name]]
    dt = params["dtype"]
    out = []
    for kind in params["kinds"]:  # one sweep unit per kind: its ms run in order, each from the n50s before it
        slope = slopes[0] if kind == "natural" else slopes[1]
        tokens = steps = flops = peak = 0.0
        details = []
        for i, m in enumerate(sorted(params["ms"])):
            n50 = slope * m
            plan = cramming_lengths(n50, m, params["n_targets"], n_max=arch.n_ctx - m, n_pred=None if i == 0 else n50)
            for n, count in plan:
                T = m + n - 1
                per_step = step_flops(arch, T, n - 1, "cram")  # forward + backward to the prompt
                steps += count * params["max_steps"]
                tokens += count * params["max_steps"] * T
                flops += count * params["max_steps"] * per_step
                logits = 3.0 * count * (n - 1) * arch.d_vocab * 4  # fp32 logits, log-softmax, gradient
                acts = count * T * arch.n_layers * (6 * arch.d_model + arch.d_ff) * BYTES_PER_VALUE[dt]
                peak = max(peak, logits + acts)
            details.append(f"m = {m}: {len(plan)} lengths, {sum(c for _, c in plan)} targets (n50 ≈ {n50:.0f})")
        out.append(
            Work(
                "cramming",
                name,
                f"{kind}, m = {', '.join(str(m) for m in sorted(params['ms']))}",
                tokens,
                steps,
                0.0,
                {"cram": flops},
                params_bytes(arch, dt) + peak,
                dt,
                True,
                "; ".join(details) + f"; × {params['max_steps']} steps (upper bound: a crammed target stops early)",
            )
        )
    emb_tokens = params["n_embed_prompts"] * params["embed_length"]
    out.append(
        Work(
            "cramming",
            name,
            "embeddings for r",
            emb_tokens,
            0,
            0,
            {"forward": params["n_embed_prompts"] * forward_flops(arch, params["embed_length"])},
            params_bytes(arch, dt) + 8192 * (6 * arch.d_model + arch.d_ff) * BYTES_PER_VALUE[dt],
            dt,
            False,
            f"{params['n_embed_prompts']} prompts of {params['embed_length']} tokens",
        )
    )
    return out


def _support(params: dict) -> list[Work]:
    out = []
    for name in params["models"]:
        arch = architecture(name.removeprefix("standin:"))
        d, V = arch.d_model, arch.d_vocab
        lengths = [ell for ell in params["lengths"] if ell <= arch.n_ctx]
        tokens = params["n_prompts"] * sum(lengths)
        fwd = params["n_prompts"] * sum(forward_flops(arch, ell) for ell in lengths)
        n_emb = params["n_prompts"] * len(lengths)
        geo = sum(2.0 * (params["n_prompts"] * (i + 1)) ** 2 * d for i in range(len(lengths))) + 2.0 * n_emb**2 * d
        samples = min(params["cell_samples"], max(1000, int(min(params["cell_flops"], 1e30) / (2.0 * d * V))))
        cells = 2 * samples * 2.0 * d * V  # replication (Voronoi) and corrected (argmax) columns
        act = params["token_budget"] * (6 * d + arch.d_ff) * 4
        out.append(
            Work(
                "support",
                name.removeprefix("standin:"),
                "embeddings + geometry + cells",
                tokens,
                0,
                2 * samples,
                {"forward": fwd, "cells": cells, "host": geo},
                params_bytes(arch, "float32") + act,
                "float32",
                True,
                f"{n_emb:,} embeddings; {samples:,} cell points a column (cap cell_flops)",
            )
        )
    return out


def _copying(params: dict) -> list[Work]:
    from accessibility_lib.runs.work import copying_runs

    out = []
    for _, cfg in copying_runs(params):
        base, max_len = cfg.base, cfg.train_max_len
        if base == "scratch":
            continue
        full = architecture(base.removeprefix("standin:"))
        arch = replace(full, d_vocab=params["alphabet_size"] + 4, tied=False)  # cut to the task's |V| + 4 rows
        mean_len = (params["train_min_len"] + max_len) / 2
        T = int(2 * mean_len + 3)
        train = params["max_steps"] * params["batch_size"] * step_flops(arch, T, T, "train")
        checks = (
            params["max_steps"] // params["check_every"] * 128 * forward_flops(arch, 2 * max_len + 3, 2 * max_len + 3)
        )
        evals = sum(params["n_strings"] * forward_flops(arch, 2 * n + 3, 2 * n + 3) for n in params["eval_lengths"])
        tokens = params["max_steps"] * params["batch_size"] * T
        weights = params_bytes(arch, "float32") * 4  # weights, gradients, AdamW's two moments
        acts = params["batch_size"] * T * arch.n_layers * (8 * arch.d_model + 2 * arch.d_ff) * 4
        out.append(
            Work(
                "copying",
                base.removeprefix("standin:"),
                f"fine-tune, n ≤ {max_len}",
                tokens,
                params["max_steps"],
                0,
                {"train": train, "forward": checks + evals},
                weights + acts,
                "float32",
                True,
                f"{params['max_steps']:,} steps × {params['batch_size']} strings (upper bound; stops at "
                f"100 %), {len(params['eval_lengths'])} evaluation lengths",
            )
        )
    return out


def _argmax_cells(params: dict) -> list[Work]:
    arch = architecture(params["model_name"].removeprefix("standin:"))
    d, V = arch.d_model, arch.d_vocab
    pixels = 2 * params["resolution"] ** 2 + 2 * len(params["zooms"]) * params["explorer_resolution"] ** 2
    cells = 2 * 2.0 * 3 * d * V + 1500 * 2.0 * d * V  # two planes' coefficients; the 1,500-pixel direct check
    fwd = params["n_samples"] * forward_flops(arch, 12) + 3 * forward_flops(arch, 8, 1)
    return [
        Work(
            "argmax_cells",
            arch.name,
            "slices",
            params["n_samples"] * 12,
            0,
            pixels,
            {"forward": fwd, "cells": cells},
            params_bytes(arch, "float32"),
            "float32",
            False,
            f"{pixels:,} pixels over the hull candidates (3 numbers a token after one V×d projection)",
        )
    ]


def _mean_field(params: dict) -> list[Work]:
    out = []
    for name, ms, n_prompts, pairs, cases in [
        (params["model_name"], params["ms"], params["n_prompts"], params["n_pairs"], 3),
        *[(r, params["real_ms"], 2, params["real_pairs"], 1) for r in params["real_models"]],
    ]:
        arch = architecture(name.removeprefix("standin:"))
        per_m = [m + m + 2 * m for m in ms]  # the prompt, its permutation, its duplication
        tokens = cases * n_prompts * sum(per_m)
        flops = cases * n_prompts * sum(forward_flops(arch, t, logits=t) for t in per_m)
        pair = pairs * 2 * forward_flops(arch, params["pair_m"], logits=params["pair_m"]) * min(cases, 2)
        out.append(
            Work(
                "mean_field",
                arch.name,
                "structural sweep + W_q pairs",
                tokens + pairs * 2 * params["pair_m"],
                0,
                0,
                {"forward": flops + pair},
                params_bytes(arch, "float32") + 2 * max(ms) * arch.d_vocab * 4 * 2,
                "float32",
                False,
                f"{len(ms)} lengths up to {max(ms)} (×4 tokens: permuted and duplicated), {pairs} pairs",
            )
        )
    return out


def plan(preset: str = "paper") -> list[Work]:
    """Every unit of work of ``preset`` (the theory chapter has none: closed forms), counted.

    Raises:
        ValueError: a model without architecture facts (:mod:`accessibility_lib.models.standins`).
    """
    from accessibility_lib.runs import presets

    p = {c: presets.resolve(c, preset, check_machine=False) for c in presets.PRESETS}
    return [
        *_argmax_cells(p["argmax_cells"]),
        *_cramming(p["cramming"], preset),
        *_mean_field(p["mean_field"]),
        *_support(p["support"]),
        *_copying(p["copying"]),
    ]


def chunking(preset: str = "paper") -> list[dict]:
    """The steps whose working set in one piece exceeds :data:`MEMORY_BUDGET_GIB` (two of them any GPU's memory),
    with the chunking that keeps them in budget.

    Returns:
        Rows ``{"step", "whole_bytes", "chunked_bytes", "how"}`` (bytes: float32 working sets).
    """
    from accessibility_lib.geometry.cells import cell_volumes  # noqa: F401 (the chunk sizes below are its defaults)
    from accessibility_lib.runs import presets

    p = presets.resolve("support", preset, check_machine=False)
    widest = max((architecture(n.removeprefix("standin:")) for n in p["models"]), key=lambda a: a.d_model)
    biggest_v = max((architecture(n.removeprefix("standin:")) for n in p["models"]), key=lambda a: a.d_vocab)
    n_paper = 10_000 * 11  # the paper: 10,000 prompts at lengths 4, 8, …, 4096
    d, V, S = biggest_v.d_model, biggest_v.d_vocab, p["cell_samples"]
    per_token = (6 * widest.d_model + widest.d_ff) * 4.0  # float32 activations of one token through one layer
    paper_tokens = 10_000 * sum(2**k for k in range(2, 13))  # 10,000 prompts at each length 4, 8, …, 4096
    return [
        {
            "step": f"the authors' protocol, the most the support code is built for: forward passes of {n_paper:,} "
            f"prompts (10,000 at each of 11 lengths 4 … 4096), d = {widest.d_model} ({widest.name}); the `{preset}` "
            f"preset itself runs {p['n_prompts'] * len(p['lengths']):,} ({p['n_prompts']:,} at each length "
            f"{', '.join(map(str, p['lengths']))})",
            "whole_bytes": paper_tokens * per_token,
            "chunked_bytes": p["token_budget"] * per_token,
            "how": f"batches of token_budget = {p['token_budget']:,} tokens of one length (attention by SDPA: no "
            f"T × T buffer); the {n_paper:,} × d embeddings themselves, {n_paper * widest.d_model * 4 / 2**30:.2f} "
            "GiB, are kept on the host in stored chunks of 256 prompts",
        },
        {
            "step": f"pairwise cosines of {n_paper:,} embeddings (minimum over pairs)",
            "whole_bytes": n_paper**2 * 4.0,
            "chunked_bytes": 2048**2 * 4.0,
            "how": "blocks of 2048 × 2048 (geometry.min_pairwise_cosine); the mean in O(N·d)",
        },
        {
            "step": f"{S:,} cell samples against |V| = {V:,} ({biggest_v.name})",
            "whole_bytes": S * V * 4.0,
            "chunked_bytes": 2048 * 8192 * 4.0 + V * d * 4.0 + 4096 * d * 4.0,
            "how": "points drawn 4,096 at a time; argmax over blocks of 2,048 points × 8,192 rows, a running "
            "maximum per point (cells.argmax_tokens); W_U stays resident",
        },
    ]
