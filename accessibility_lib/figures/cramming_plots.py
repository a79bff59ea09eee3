"""Chapter 3's figures: success against length, n50 against m, the paper's curves, the real models, the instruments.

Each function draws one figure from a :class:`~accessibility_lib.figures.cramming_context.CrammingContext` and
returns it (the page's cell calls ``plt.show()``); the chapter and its lab notes call the same functions.
Lengths are tokens under the run's length convention; m counts prompt vectors.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np

from accessibility_lib.experiments.fitting import logistic
from accessibility_lib.figures import interval_plots, plotting
from accessibility_lib.figures.cramming_context import BASE_STEPS
from accessibility_lib.models.names import label
from accessibility_lib.runs import cramming_budget as CB
from accessibility_lib.runs import cramming_summary as CS

__all__ = ["success_figure", "n50_figure", "paper_figure", "real_figure", "instruments_figure", "KIND_LABEL"]

#: the authors' "random" kind is random words (their sweep script draws frequent words)
KIND_LABEL = {"natural": "natural (PG19)", "random": "random words"}
#: the authors' list names of the two models whose curves they published
PAPER_NAMES = {"EleutherAI_pythia-160m": "Pythia-160M", "Qwen_Qwen2.5-0.5B": "Qwen2.5-0.5B"}


def success_figure(ctx):
    """Success rate against target length, one panel a target kind, one colour an m (points sized by targets)."""
    params = ctx.params
    fig, axes = plt.subplots(1, len(params["kinds"]), figsize=(5.2 * len(params["kinds"]), 3.6), squeeze=False)
    colors = plotting.token_colors(len(params["ms"]))
    for ax, kind in zip(axes[0], params["kinds"]):
        for c, m in zip(colors, params["ms"]):
            r = ctx.runs[kind, m]
            ax.scatter(r.lengths, r.rates, s=12 + 2 * r.trials, color=c, alpha=0.8, label=f"m = {m}")
            if r.fit.ok:
                grid = np.linspace(max(1, r.lengths.min() * 0.8), r.lengths.max() * 1.1, 200)
                ax.plot(grid, logistic(grid, r.fit.n50, r.fit.steepness), color=c, lw=1.5)
        plotting.log_axis(ax, "x")
        ax.set_xlabel(f"target length n (tokens, {params['length_convention']} convention)")
        ax.set_ylabel("fraction crammed")
        ax.set_title(f"{kind} targets")
        ax.legend(fontsize=8, loc="upper right")
    plt.tight_layout()
    return fig


def n50_figure(ctx):
    """n50 against m with intervals (arrows: open ends) and the fitted lines of the page's own runs."""
    params = ctx.params
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    for c, kind in zip(plotting.PALETTE, params["kinds"]):
        pts = [(m, ctx.runs[kind, m].fit) for m in params["ms"] if ctx.runs[kind, m].fit.ok]
        if not pts:
            continue
        mm = np.array([m for m, _ in pts], dtype=float)
        interval_plots.n50_points(ax, mm, [f for _, f in pts], color=c, label=f"{kind}")
        s = ctx.slopes.get(kind)
        if s is not None:
            grid = np.linspace(0, mm.max() * 1.05, 50)
            ax.plot(grid, s.predict(grid), color=c, lw=1, ls="-" if s.reliable else ":",
                    label=f"{kind}: C_exp = {s.slope:.2f}" + ("" if s.reliable else " (unreliable)"))  # fmt: skip
    ax.set_xlabel("prompt length m (vectors)")
    ax.set_ylabel(f"n50 (tokens, {params['length_convention']})")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="upper left")
    plt.tight_layout()
    return fig


def paper_figure(ctx):
    """The authors' published success curves (points) and our logistic re-fits, one panel a model."""
    models = sorted({model for model, _ in ctx.refit}, key=list(PAPER_NAMES).index)
    fig, axes = plt.subplots(1, len(models), figsize=(10.5, 3.6), squeeze=False)
    for ax, model in zip(axes[0], models):
        for kind, c in zip(["natural", "random"], plotting.PALETTE):
            fits, s = ctx.refit[model, kind]
            for m, f in fits.items():
                ax.scatter(f.lengths, f.success, s=5, color=c, alpha=0.35)
                if f.ok:
                    grid = np.linspace(f.lengths.min(), f.lengths.max(), 200)
                    ax.plot(grid, f.predict(grid), color=c, lw=1)
                    ax.annotate(f"m={m}", (f.n50, 0.5), xytext=(2, 3 if kind == "natural" else -9),
                                textcoords="offset points", fontsize=6, color=c)  # fmt: skip
            ax.plot([], [], color=c, label=f"{KIND_LABEL[kind]}: our re-fit slope {s.slope:.1f}")
        ax.set_title(PAPER_NAMES[model])
        ax.set_xlabel("target length n (tokens, the authors' convention)")
        ax.set_ylabel("fraction crammed (20 targets)")
        ax.set_ylim(-0.05, 1.3)  # headroom above the data for the legend
        ax.set_yticks(np.linspace(0, 1, 6))
        ax.legend(fontsize=7, loc="upper right", ncol=1)
    plt.tight_layout()
    return fig


def _real_row(ax1, ax2, summaries, kind_colors):
    units = [u for u in CS.one_per_settings(summaries) if u.dtype == "float32" and u.instrument == "paper"
             and u.max_steps == BASE_STEPS and u.state == "complete" and u.n_outcomes]  # fmt: skip
    kinds = sorted({u.kind for u in units})
    colors = {k: kind_colors[k] for k in kinds}
    m_marks = dict(zip(sorted({u.m for u in units}), "os^Dv"))  # one marker and line style an m
    m_lines = dict(zip(sorted({u.m for u in units}), ["-", "--", ":", "-.", "-"]))
    for u in units:
        ax1.scatter(u.lengths, u.rates, s=8 + 2 * u.trials, color=colors[u.kind], marker=m_marks[u.m], alpha=0.6)
        if u.fit.ok:
            g = np.linspace(max(2, u.lengths.min() * 0.8), u.lengths.max() * 1.1, 200)
            ax1.plot(g, u.fit.predict(g), color=colors[u.kind], lw=1, ls=m_lines[u.m])
    for kind in kinds:
        ax1.plot([], [], color=colors[kind], label=kind)
    for m_, mk in m_marks.items():
        ax1.plot([], [], color="0.4", marker=mk, ls=m_lines[m_], lw=1, label=f"m = {m_}")
    for kind, (pts, s) in CS.slopes(summaries, BASE_STEPS, instrument="paper", dtype="float32").items():
        if not pts or kind not in colors:
            continue
        mm = np.array([u.m for u in pts], dtype=float)
        interval_plots.n50_points(ax2, mm, [u.fit for u in pts], color=colors[kind],
                                  label=None if s is not None else f"{kind} (no slope: fewer than two m with a closed interval)")  # fmt: skip
        if s is not None:
            g = np.linspace(0, mm.max() * 1.05, 50)
            ax2.plot(g, s.predict(g), color=colors[kind], lw=1, ls="-" if s.reliable else ":",
                     label=f"{kind}: C_exp = " + (s.describe(1) if s.reliable else f"{s.slope:.1f} (unreliable)"))  # fmt: skip
        doubled = CB.budget_slopes(summaries, kind, 2 * BASE_STEPS, BASE_STEPS)
        if doubled is not None:  # the same targets at twice the budget: the slope a budget moves
            ms2, _, s2 = doubled
            moves2 = CB.budget_moves(summaries, kind, 2 * BASE_STEPS, BASE_STEPS)
            ax2.scatter([m_ + 0.08 for m_, _, _ in moves2], [b_.fit.n50 for _, _, b_ in moves2], marker="x",
                        color=colors[kind], s=25, lw=1)  # fmt: skip
            g2 = np.linspace(0, max(ms2) * 1.05, 50)
            ax2.plot(g2, s2.predict(g2), color=colors[kind], lw=1, ls="--", alpha=0.7,
                     label=f"{kind}, {2 * BASE_STEPS} steps (×, {moves2[0][2].n_targets} targets): C_exp = "
                     + (s2.describe(1) if s2.reliable else f"{s2.slope:.1f} (unreliable: {s2.n_points} values of m)"))  # fmt: skip


def real_figure(ctx):
    """For each real model: success against length (left) and n50 against m with its lines (right).

    Float32 units of the authors' optimiser at the base budget; × and dashed: the same targets at twice the
    base budget where stored at two or more m. Returns None when no real model has an artifact.
    """
    shown = [n for n in ctx.real.names if n in ctx.real.summaries]
    if not shown:
        return None
    kind_colors = dict(zip(("natural", "random_words", "random_tokens"), plotting.PALETTE))  # one colour a kind
    fig, axes = plt.subplots(len(shown), 2, figsize=(10.5, 3.6 * len(shown)), squeeze=False)
    for (ax1, ax2), name in zip(axes, shown):
        _real_row(ax1, ax2, ctx.real.summaries[name], kind_colors)
        ax1.set_xscale("log")
        ax1.set_title(label(name))
        ax1.set_xlabel("target length n (tokens, authors' convention)")
        ax1.set_ylabel("fraction crammed")
        ax1.legend(fontsize=7, loc="lower left")
        ax2.set_xlim(0, None)
        ax2.set_ylim(0, ax2.get_ylim()[1] * 1.4)  # headroom above the lines for the legend
        ax2.xaxis.set_major_locator(mticker.MaxNLocator(integer=True))
        ax2.set_xlabel("prompt length m (vectors)")
        ax2.set_ylabel("n50 (tokens)")
        if ax2.get_legend_handles_labels()[0]:
            ax2.legend(fontsize=7, loc="upper left")
    plt.tight_layout()
    return fig


def instruments_figure(inst_points):
    """n50 at m = 1 against the token-steps a search spent, per instrument and budget (one panel a model and kind).

    Args:
        inst_points: tuples (model, kind, instrument, max_steps, fit, token_steps, budget_label), from
            :func:`accessibility_lib.figures.cramming_instruments.instrument_rows`.

    Returns:
        The figure, or None without points.
    """
    groups = sorted({(p[0], p[1]) for p in inst_points})
    if not groups:
        return None
    fig, axes = plt.subplots(1, len(groups), figsize=(4.6 * len(groups), 3.6), squeeze=False)
    for ax, (name, kind) in zip(axes[0], groups):
        pts = [p for p in inst_points if (p[0], p[1]) == (name, kind)]
        marks = dict(zip(sorted({p[2] for p in pts}), "osD^v"))
        for _, _, inst, steps, fit, ts, blabel in sorted(pts, key=lambda p: (p[2], p[3])):  # a legend entry each
            prog = inst.startswith("progressive")
            ax.errorbar([ts], [fit.n50], yerr=[[fit.n50 - fit.ci[0]], [fit.ci[1] - fit.n50]], fmt=marks[inst],
                        capsize=3, color=plotting.PALETTE[list(marks).index(inst) % len(plotting.PALETTE)],
                        alpha=1.0 if steps == BASE_STEPS else 0.6,
                        label=f"{inst}, " + (blabel.rsplit(", ", 2)[0] if prog else f"{steps} steps"))  # fmt: skip
        ax.legend(fontsize=7, loc="best")
        curve = sorted((p[3], p[5], p[4].n50) for p in pts if p[2] == "paper")
        if len(curve) >= 2:
            ax.plot([c[1] for c in curve], [c[2] for c in curve], color="0.5", lw=1, ls="--")
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(mticker.LogLocator(subs=(1.0, 2.0, 5.0)))  # short labels at 1-2-5: none collide
        ax.xaxis.set_major_formatter(mticker.FuncFormatter(lambda x, _: f"{x / 1000:g}k"))
        ax.xaxis.set_minor_formatter(mticker.NullFormatter())
        ax.set_title(f"{label(name)}, {kind}")
        ax.set_xlabel("token-steps of the search")
        ax.set_ylabel("n50 at m = 1 (tokens)")
    plt.tight_layout()
    return fig
