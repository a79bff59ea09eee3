"""Chapter 4's figures, tables and sentences: the mean-field bound and the measurements beside it.

The measurements are :mod:`accessibility_lib.theory.meanfield`'s (structural sweeps, Lipschitz pairs,
read-out moves); this module only presents them, so that the chapter calls one function a figure or table.
Source of the bound: the paper's Thm 4.9 and Cor 4.10 (:func:`accessibility_lib.theory.bounds.mean_field_loglog_count`).

Shapes used throughout:

- a *sweep* (:func:`accessibility_lib.theory.meanfield.structural_sweep`): ``ms`` (k,), ``perm_layers`` and
  ``dup_layers`` (k, n_prompts, n_layers) relative deviations, ``perm_tv`` and ``dup_tv`` (k, n_prompts) total
  variations of the next-token law;
- a *summary* (:func:`accessibility_lib.theory.meanfield.lipschitz_summary`): ``n``, ``median``, ``q25``,
  ``q75``, ``q90``, ``max`` of TV/W over pairs with W > 0, ``tv_at_w0``, ``n_w0``, ``flips_at_w0``, ``w_flip_min``;
- a *read-out* record (:func:`accessibility_lib.theory.meanfield.readout_moves`): ``tv`` (n,), ``argmax_changed`` (n,).

Example:
    >>> round_up(0.000123)
    '0.00013'
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from accessibility_lib.figures import plotting
from accessibility_lib.figures.tables import md_table
from accessibility_lib.models.names import label as reader_name
from accessibility_lib.theory import bounds, meanfield

__all__ = [
    "FLOOR",
    "round_up",
    "power_of_ten",
    "plot_structural_vs_m",
    "plot_structural_per_layer",
    "structural_table",
    "real_decoders_text",
    "lipschitz_table",
    "plot_lipschitz",
    "wasserstein_verdict",
    "plot_bounds",
    "crossover_table",
]

#: exact zeros are drawn at this floor of a log axis
FLOOR = 1e-12


def round_up(x: float) -> str:
    """A maximum in two significant digits, rounded up (never down): ``"0"`` for 0.

    Raises:
        ValueError: x negative or not finite.
    """
    if not (math.isfinite(x) and x >= 0):
        raise ValueError(f"round_up takes a finite non-negative number, got {x}")
    if x == 0:
        return "0"
    e = math.floor(math.log10(x)) - 1
    return f"{math.ceil(x / 10**e) * 10**e:.2g}"


def power_of_ten(ln_x: float) -> str:
    """A huge number given by its natural log, as about 10^k in plain text with a superscript k = floor(log10 x).

    Example:
        >>> power_of_ten(2771 * math.log(10) + math.log(2.5))
        '10²⁷⁷¹'

    Raises:
        ValueError: ln_x negative or not finite.
    """
    if not (math.isfinite(ln_x) and ln_x >= 0):
        raise ValueError(f"power_of_ten takes a finite ln x ≥ 0, got {ln_x}")
    return "10" + str(math.floor(ln_x / math.log(10))).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


def plot_structural_vs_m(sweeps: dict, ms: list[int]):
    """Two panels against m: the last layer's relative deviation, the last position's TV (medians over prompts).

    Args:
        sweeps: case name -> sweep (shapes in the module docstring), at the prompt lengths ``ms``.
        ms: the prompt lengths (tokens), the x ticks.

    Returns:
        the matplotlib figure (solid: permutation; dashed: duplication; one colour and marker a case).
    """
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.8), sharey=True)
    for c, (case, s) in enumerate(sweeps.items()):
        for key, style, label in [("perm", "-", "permutation"), ("dup", "--", "duplication")]:
            axes[0].plot(s["ms"], np.maximum(np.median(s[f"{key}_layers"][:, :, -1], 1), FLOOR), style, marker="osD"[c % 3],
                         color=plotting.PALETTE[c], label=f"{case}: {label}", alpha=0.85)  # fmt: skip
            axes[1].plot(s["ms"], np.maximum(np.median(s[f"{key}_tv"], 1), FLOOR), style, marker="osD"[c % 3],
                         color=plotting.PALETTE[c], alpha=0.85)  # fmt: skip
    for ax, title in zip(axes, ["last layer: relative deviation", "last position: TV of next-token law"]):
        ax.set(yscale="log", xlabel="prompt length m (tokens)", title=title)
        ax.set_xscale("log", base=2)
        ax.set_xticks(ms, [str(m) for m in ms])
        ax.minorticks_off()
    axes[0].set_ylabel("median over prompts (see titles)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="upper center", ncol=3, fontsize=7, bbox_to_anchor=(0.5, 0.0))
    return fig


def plot_structural_per_layer(sweeps: dict, n_layers: int, m: int):
    """Relative deviation per layer at the longest m of each sweep (median over its prompts).

    Args:
        sweeps: case name -> sweep; n_layers: the model's layers (x axis 1…n_layers); m: the longest length.

    Returns:
        the matplotlib figure (left: permutation; right: duplication).
    """
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.6), sharey=True)
    layers = np.arange(1, n_layers + 1)
    for c, (case, s) in enumerate(sweeps.items()):
        for ax, key in zip(axes, ["perm", "dup"]):
            ax.plot(layers, np.maximum(np.median(s[f"{key}_layers"][-1], 0), FLOOR), marker="o",
                    color=plotting.PALETTE[c], label=case)  # fmt: skip
    for ax, title in zip(axes, ["permutation equivariance", "duplication invariance"]):
        ax.set(yscale="log", xlabel="layer", title=f"{title}, m = {m}")
        ax.set_xticks(layers)
    axes[0].set_ylabel("relative deviation (median)")
    axes[0].legend(fontsize=8)
    return fig


def structural_table(sweeps: dict, n_prompts: int, m: int, model_label: str) -> str:
    """Markdown: medians at the longest m of each case's four deviations (last layer and TV, both facts)."""
    rows = ["| case | permutation, last layer | permutation, TV | duplication, last layer | duplication, TV |",
            "|---|---|---|---|---|"]  # fmt: skip
    for case, s in sweeps.items():
        med = lambda a: f"{np.median(a[-1]):.1e}"  # noqa: E731 - at the longest m
        rows.append(f"| {case} | {med(s['perm_layers'][:, :, -1])} | {med(s['perm_tv'])} "
                    f"| {med(s['dup_layers'][:, :, -1])} | {med(s['dup_tv'])} |")  # fmt: skip
    return f"Medians over {n_prompts} random prompts at m = {m} ({model_label}):\n\n" + "\n".join(rows)


def real_decoders_text(free: dict, shipped: dict, real_sweeps: dict, *, ms: list[int], n_prompts: int,
                       real_prompts: int, model_label: str) -> tuple[str, str]:  # fmt: skip
    """What the structural sweeps mean for real decoders, and the position-free model's largest deviation.

    Args:
        free, shipped: the sweeps of the position-free and the shipped forward of the chapter's model.
        real_sweeps: model name -> sweep of a real model as shipped (may be empty).
        ms, n_prompts: the sweep's lengths and prompts a length; real_prompts: the real models' prompts a length.
        model_label: the chapter's model, as named in prose.

    Returns:
        (Markdown paragraph, the largest deviation rounded up, :func:`round_up`).

    Raises:
        AssertionError: the position-free model deviates by 1e-4 or more (a map on measures up to fp32
            rounding is the chapter's stated tolerance).
    """
    free_max = max(free["perm_layers"].max(), free["dup_layers"].max(), free["perm_tv"].max(), free["dup_tv"].max())
    assert free_max < 1e-4, f"position-free deviations {free_max:.1e} exceed the fp32 tolerance 1e-4"
    dev, tv = np.median(shipped["dup_layers"][-1, :, -1]), np.median(shipped["dup_tv"][-1])
    real = "".join(
        f" For {reader_name(name)} as shipped (medians over {real_prompts} prompts at m = {r['ms'][-1]}, its last layer read after "
        f"the final norm): {np.median(r['dup_layers'][-1, :, -1]):.2g} and {np.median(r['dup_tv'][-1]):.2g}."
        for name, r in real_sweeps.items()
    )
    text = (
        "**What this means for real decoders.** Thm 4.9 is a theorem about models that *are* maps on measures. "
        f"Decoders of the paper's kind (causal, with rotary positions) are not. At m = {ms[-1]}, duplicating the "
        f"prompt moves the shipped {model_label}'s last layer by {dev:.2g} (relative, median) and its next-token "
        f"law by a total variation of {tv:.2g}.{real} The position-free model moves by at most {round_up(free_max)} "
        f"(every layer, {n_prompts} random prompts at each of m = {', '.join(map(str, ms))}). So the theorem does "
        "not apply to real decoders literally."
    )
    return text, round_up(free_max)


def lipschitz_table(summaries: dict, readout: dict, q: float) -> str:
    """Markdown: the ratios TV/W_q over each model's pairs, and the read-out swaps (W = 0, last vector moved)."""

    def tv0(s):
        return f"{s['tv_at_w0']:.1e} ({s['n_w0']})" if s["n_w0"] else "– (0)"

    rows = ["| model | pairs (W > 0) | TV/W median | TV/W quartiles | TV/W 90% | TV/W max | largest TV at W = 0 (pairs) | "
            "greedy token changed at W = 0 | smallest W flipping the argmax |", "|---" * 9 + "|"]  # fmt: skip
    for k, s in summaries.items():
        rows.append(f"| {reader_name(k)} | {s['n']} | {s['median']:.3g} | {s['q25']:.3g} – {s['q75']:.3g} | {s['q90']:.3g} "
                    f"| {s['max']:.3g} | {tv0(s)} | {s['flips_at_w0']} of {s['n_w0']} | {s['w_flip_min']:.3g} |")  # fmt: skip
    few = [reader_name(k) for k, s in summaries.items() if s["n"] < 20]
    swaps = md_table(["forward", "prompts", "greedy token changed", "median TV", "largest TV"],
                     [[case, len(r["tv"]), f"{int(r['argmax_changed'].sum())} of {len(r['tv'])}",
                       f"{np.median(r['tv']):.2g}", f"{r['tv'].max():.2g}"] for case, r in readout.items()]).data  # fmt: skip
    return (f"Ratios TV / W_{q:g} over the pairs (W in each model's embedding units; a Lipschitz constant L, a "
            "supremum over all pairs, is at least the largest):\n\n" + "\n".join(rows)
            + (f"\n\n{', '.join(few)}: fewer than 20 pairs, so the quartiles, the 90 % point and the maximum "
               "describe that handful of pairs only." if few else "")
            + "\n\nThe last vector swapped with another (W = 0, the read-out vector changed):\n\n" + swaps)  # fmt: skip


def plot_lipschitz(pair_sets: dict, q: float):
    """Scatter of W_q against TV for each model's pairs with W > 0 and TV > 0 (log axes).

    Returns:
        (figure, text naming how many pairs per model had W > 0 and TV = 0, which a log axis cannot draw).
    """
    markers = {"noise": "o", "replace": "s", "drop": "^", "permute": "x"}
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for c, (k, p) in enumerate(pair_sets.items()):
        for kind, mk in markers.items():
            sel = (p["kind"] == kind) & (p["w"] > 0) & (p["tv"] > 0)
            ax.scatter(p["w"][sel], p["tv"][sel], marker=mk, s=16, color=plotting.PALETTE[c], alpha=0.7,
                       label=f"{k}" if kind == "noise" else None)  # fmt: skip
    ax.set(xscale="log", yscale="log", xlabel=rf"$W_{{{q:g}}}(M(X), M(Y))$ (embedding units)",
           ylabel="TV of the next-token laws")  # fmt: skip
    ax.legend(fontsize=8, title="circle: noise, square: replace, triangle: drop", title_fontsize=7)
    n_tv0 = {k: int(np.sum((p["w"] > 0) & (p["tv"] == 0))) for k, p in pair_sets.items()}
    note = "pairs with W > 0 and TV = 0 (not drawn on the log axis): " + ", ".join(
        f"{k}: {v} of {len(pair_sets[k]['w'])}" for k, v in n_tv0.items()
    )
    return fig, note


def wasserstein_verdict(s_free: dict, s_ship: dict, ro_free: dict, flips: list, *, rms: float,
                        model_label: str) -> tuple[str, str]:  # fmt: skip
    """What the pairs say about Assumption 4.8: for the position-free and the shipped forward.

    Args:
        s_free, s_ship: their summaries; ro_free: the position-free read-out swaps.
        flips: (case, smallest W > 0 that flipped the argmax) for the cases with a flip.
        rms: the RMS norm of the model's prompt vectors (embedding units): fp32's resolution there is rms·2⁻²⁴.
        model_label: the chapter's model, as named in prose.

    Returns:
        (Markdown paragraphs, a one-sentence verdict on the shipped model for the chapter's "What it means").
    """
    fp32_res = rms * 2.0**-24
    no_eps = s_ship["flips_at_w0"] > 0  # a greedy token that changes at W = 0: no precision ε can hold
    text = [
        f"For the position-free model the permuted pairs (W = 0) move the next-token law by a TV of at most "
        f"{s_free['tv_at_w0']:.1e}. With the read-out vector fixed it *is* a function of the measure, up to rounding. "
        f"Swapping the read-out vector changed its greedy token in {int(ro_free['argmax_changed'].sum())} of "
        f"{len(ro_free['tv'])} prompts. So it is a function of the pair (measure, last vector), as "
        "{prf:ref}`rem-mf-reading` reads the assumption. "
        f"The shipped model moves the law by up to {s_ship['tv_at_w0']:.2g} at W = 0 with the last token fixed. Its "
        f"greedy token changed in {s_ship['flips_at_w0']} of those {s_ship['n_w0']} pairs"
        + (", so no Wasserstein precision ε exists for it in the sense of {prf:ref}`asm-mf-wasserstein-precision`, "
           "even read on pairs." if no_eps else
           ". A law that moves at W = 0 rules out a Lipschitz constant; with no greedy token changed these pairs "
           "do not rule out a precision ε.")]  # fmt: skip
    text.append(
        f"Where W > 0, the median ratio TV/W is {s_free['median']:.3g} (position-free) and {s_ship['median']:.3g} "
        f"(shipped). Across pairs it spreads by a factor {s_free['q90'] / s_free['q25']:.1f} and "
        f"{s_ship['q90'] / s_ship['q25']:.1f} between the 25th and 90th percentiles. A Lipschitz constant is a "
        f"supremum over all pairs, so these {s_free['n']} pairs show only L ≥ {s_free['max']:.3g} for the "
        "position-free model"
        + (". None exists for the shipped one: its law moves at W = 0."
           if s_ship["tv_at_w0"] > 1e3 * max(s_free["tv_at_w0"], 1e-12) else f", and L ≥ {s_ship['max']:.3g} for the shipped one."))  # fmt: skip
    if flips:
        text.append(
            "The smallest W > 0 at which the greedy token changed: "
            + ", ".join(f"{w:.3g} ({reader_name(k)})" for k, w in flips)
            + ". It does not bound ε: two measures on either side of a class boundary may be told apart at any W > 0"
            + (". The flips are not rounding: " if min(w for _, w in flips) > 1e3 * fp32_res else ". For comparison, ")
            + f"fp32's resolution at the size of {model_label}'s prompt vectors (RMS norm {rms:.3g}) is {fp32_res:.1e}."
        )
    else:
        text.append("No pair flipped the argmax at this sample size.")
    verdict = (
        f"The shipped model has no Wasserstein precision in the assumption's sense: its greedy token changed at "
        f"W = 0 (permutations that keep the last token) in {s_ship['flips_at_w0']} of {s_ship['n_w0']} pairs."
        if no_eps
        else f"The shipped model's next-token law moves at W = 0 (permutations that keep the last token), but its "
        f"greedy token changed in none of these {s_ship['n_w0']} pairs: they rule out a Lipschitz constant, not a "
        "precision."
    )
    return "\n\n".join(text), verdict


def plot_bounds(q: float):
    """Left: ln ln of the mean-field count against d for 2r/ε = 4, 4096, 2^17. Right: at d = 1, 2, 4 and 2r/ε = 4,
    the finite-length bound against m beside the m-independent mean-field bound, crossing at m*.

    Returns:
        (figure, the largest width drawn, ln ln of the count there at 2r/ε = 4096).
    """
    ds = np.unique(np.logspace(0, 5, 60).astype(int))
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.8))
    for c, ratio in enumerate([4.0, 4096.0, 2.0**17]):
        axes[0].plot(ds, [bounds.mean_field_loglog_count(int(d), ratio / 2, 1.0, q) for d in ds],
                     color=plotting.PALETTE[c], label=f"2r/ε = {ratio:g}")  # fmt: skip
    axes[0].set(xscale="log", yscale="log", xlabel="embedding width d",
                ylabel=r"$\ln\ln\,\#\mathrm{accessible}$ (Thm 4.9)", title="mean-field bound")  # fmt: skip
    axes[0].legend()
    m_grid = np.unique(np.logspace(0, 12, 80).astype(np.int64))
    for c, d in enumerate([1, 2, 4]):
        axes[1].plot(m_grid, [meanfield.finite_m_loglog(d, 2.0, 1.0, int(m)) for m in m_grid],
                     color=plotting.PALETTE[c], label=f"d = {d}: Thm 4.5")  # fmt: skip
        axes[1].axhline(bounds.mean_field_loglog_count(d, 2.0, 1.0, q), color=plotting.PALETTE[c], ls="--",
                        label=f"d = {d}: Thm 4.9")  # fmt: skip
        axes[1].axvline(math.exp(meanfield.crossover_log_m(d, 2.0, 1.0, q)), color=plotting.PALETTE[c], ls=":", lw=1)
    axes[1].set(xscale="log", xlabel="prompt length m", ylabel=r"$\ln\ln\,\#\mathrm{accessible}$",
                title="2r/ε = 4: which bound is tighter")  # fmt: skip
    axes[1].legend(fontsize=7)
    d_max = int(ds.max())
    return fig, d_max, bounds.mean_field_loglog_count(d_max, 2048.0, 1.0, q)


def crossover_table(widths: list[int], letters: int, q: float) -> str:
    """Markdown: for each width d and 2r/ε ∈ {4, 4096}, ln ln #accessible (Thm 4.9), ln m* and log10 n*
    for an alphabet of ``letters`` symbols (Cor 4.10)."""
    rows = [f"| d | 2r/ε | ln ln #accessible (Thm 4.9) | ln m* (crossover) | log10 n* for \\|V\\| = {letters} letters |",
            "|---|---|---|---|---|"]  # fmt: skip
    for d in sorted(set(widths)):
        for ratio in (4.0, 4096.0):
            rows.append(f"| {d} | {ratio:g} | {bounds.mean_field_loglog_count(d, ratio / 2, 1.0, q):.4g} "
                        f"| {meanfield.crossover_log_m(d, ratio / 2, 1.0, q):.4g} "
                        f"| {meanfield.mean_field_log10_threshold(d, ratio / 2, 1.0, letters, q):.4g} |")  # fmt: skip
    return "\n".join(rows)
