"""Chapter 5's figures of the resolved Table 1 column: the slope-free ratios against 2r/ε, and the support
fit's convergence with the number of embeddings.

Both draw stored artifacts (``book/data/support/resolved/<model>.json``, written by
``scripts/table1_resolved.py``) through :mod:`accessibility_lib.geometry.table1_resolved`.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

from accessibility_lib.figures.plotting import legend_outside, token_colors
from accessibility_lib.geometry import table1_resolved as T
from accessibility_lib.models.names import label as model_label

__all__ = ["RATIOS", "ratio_sweep_figure", "convergence_figure", "budget_ratio_figure", "length_figure"]

RATIOS = ("cone/ball", "ellipsoid/ball", "cells/ellipsoid")


def ratio_sweep_figure(
    arts: dict, paper_ratios: dict, implied: dict | None = None, paper_own_cells: dict | None = None
):
    """Three panels (one per ratio) of our models' ratios against log2(2r/ε), the paper's columns marked.

    Two panels a row, the fourth place holding the key, so the figure reads at a text column's width.

    The curves use the ideal splitting variance. Where a model's replicate check rejects it
    (:func:`~accessibility_lib.geometry.table1_resolved.variance_corrected`), the cells/ellipsoid panel also
    marks the ratio under the measured variance, with its interval, at the table's 2r/ε = 2·r₂/ε.

    Args:
        arts: ``{model: artifact}``; a model without resolved cells gets the shape ratios only
            (:func:`~accessibility_lib.geometry.table1_resolved.sweep_of`).
        paper_ratios: ``{column: (cone/ball, ellipsoid/ball, cells/ellipsoid)}`` (the paper's Table 1).
        implied: ``{column: log2(2r/ε)}`` (default :func:`~accessibility_lib.geometry.table1_resolved.paper_implied_log2`).
        paper_own_cells: ``{column: cells/ellipsoid}`` recomputed with each column's own convolution slope (the
            authors' code assigns the slopes by list position; chapter 5, "Against the paper's Table 1"), drawn as
            open triangles where it differs from the printed ratio by more than 0.005.

    Returns:
        the matplotlib figure.
    """
    implied = T.paper_implied_log2() if implied is None else implied
    fig, grid = plt.subplots(2, 2, figsize=(7.0, 6.4), sharex=True)
    axes, key_ax = list(grid.flat[:3]), grid.flat[3]
    models = list(arts)
    colors = token_colors(max(2, len(models)))
    sweeps = {m: T.sweep_of(arts[m]) for m in models}
    for k, (ax, ratio) in enumerate(zip(axes, RATIOS)):
        for i, m in enumerate(models):
            sw = sweeps[m]
            if all(v != v for v in sw[ratio]):  # NaN: no resolved D for this model
                continue
            ax.plot(sw["log2_x"], sw[ratio], "-", color=colors[i], label=model_label(m))
            vc = T.variance_corrected(arts[m]) if ratio == "cells/ellipsoid" else None
            if vc is not None:  # the replicate check rejects the ideal variance: the measured one, at the table's ε
                inp = arts[m]["inputs"]
                x = math.log2(2.0 * float(inp["r_l2"]) / float(inp["eps"]))
                lo, hi = vc["ratio_ci"]
                ax.errorbar(
                    [x],
                    [vc["ratio"]],
                    yerr=[[vc["ratio"] - lo], [hi - vc["ratio"]]],
                    fmt="D",
                    color=colors[i],
                    ms=4,
                    capsize=2,
                    label=f"{model_label(m)}: measured variance, table's ε",
                )
        for j, (col, x) in enumerate(implied.items()):  # a short number a column (the key is in the legend)
            ax.plot([x], [paper_ratios[col][k]], "k^", ms=6, label="paper's columns" if j == 0 else None)
            ax.annotate(
                str(j + 1),
                (x, paper_ratios[col][k]),
                fontsize=9,
                textcoords="offset points",
                xytext=(3, 2) if j % 2 == 0 else (-8, -9),
            )  # alternate sides: neighbours do not collide
        if ratio == "cells/ellipsoid" and paper_own_cells:
            moved = [
                (x, paper_own_cells[col], j)
                for j, (col, x) in enumerate(implied.items())
                if col in paper_own_cells and abs(paper_own_cells[col] - paper_ratios[col][k]) > 0.005
            ]
            for n_, (x, y, j) in enumerate(moved):
                ax.plot(
                    [x],
                    [y],
                    "^",
                    mfc="none",
                    mec="k",
                    ms=6,
                    label="paper's columns, each with its own convolution slope" if n_ == 0 else None,
                )
                ax.annotate(str(j + 1), (x, y), fontsize=9, xytext=(3, -9), textcoords="offset points")
        ax.margins(y=0.12)
        ax.set_title(ratio, fontsize=12)
        ax.set_xlabel("log₂(2r/ε)", fontsize=11)
        ax.tick_params(labelsize=10, labelbottom=True)
        ax.set_ylabel("ratio of slopes", fontsize=11)
    handles, labels = axes[0].get_legend_handles_labels()  # every model has its shape ratios
    extra = [
        (h, lab)
        for h, lab in zip(*axes[2].get_legend_handles_labels())
        if "measured variance" in lab or "own convolution slope" in lab
    ]
    handles += [h for h, _ in extra]
    labels += [lab for _, lab in extra]
    for j, col in enumerate(implied):
        handles.append(Line2D([], [], ls="none"))
        labels.append(f"{j + 1}: {col}")
    key_ax.axis("off")  # the fourth place holds the key, inside the figure's width
    key_ax.legend(handles, labels, loc="center", fontsize=9, frameon=False)
    fig.tight_layout()
    return fig


def convergence_figure(arts: dict, paper_prompts: int = 10_000):
    """Ellipsoid/ball and cone/ball (each fit at its own ε) against the number of embeddings, per model.

    Args:
        arts: ``{model: artifact}`` with a ``"convergence"`` list. paper_prompts: marked as a vertical line.

    Returns:
        the matplotlib figure.
    """
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.4))
    colors = token_colors(max(2, len(arts)))
    for i, (m, art) in enumerate(arts.items()):
        rows = T.convergence_rows(art["convergence"], int(art["d_vocab"]))
        n = [r["n_embeddings"] for r in rows]
        # one encoding across chapter 5: colour a model, circle/solid the ball, square/dashed the ellipsoid,
        # triangle/dotted the cone
        # the ball on top, hollow squares for the ellipsoid: where the two coincide both stay visible
        axes[0].plot(n, [r["ball"] for r in rows], "o-", color=colors[i], label=f"{m}: ball", zorder=3)
        axes[0].plot(n, [r["ellipsoid"] for r in rows], "s--", color=colors[i], mfc="none", ms=8,
                     label=f"{m}: ellipsoid", zorder=2)  # fmt: skip
        axes[1].plot(n, [r["ellipsoid/ball"] for r in rows], "s--", color=colors[i], label=f"{m}: ellipsoid/ball")
        axes[1].plot(n, [r["cone/ball"] for r in rows], "^:", color=colors[i], label=f"{m}: cone/ball")
    for ax in axes:
        ax.set_xscale("log")
        ax.axvline(paper_prompts, color="grey", lw=1.5, alpha=0.5)  # a thin grey line, not a series' dash
        ax.set_xlabel("embeddings in the fit")
    axes[0].set_yscale("log")
    axes[0].yaxis.set_major_formatter(ScalarFormatter())  # plain numbers (tokens per vector), not powers of ten
    axes[0].yaxis.set_major_locator(
        LogLocator(base=10, subs=(1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.0))
    )  # labels near each curve
    axes[0].yaxis.set_minor_formatter(NullFormatter())
    axes[0].set_ylabel("slope C (tokens per vector)")
    axes[1].set_ylabel("ratio of slopes")
    legend_outside(axes[0], "below", fontsize=7, ncol=2)
    legend_outside(axes[1], "below", fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def budget_ratio_figure(columns, paper_ball: dict, paper_steps: int):
    """Table 1's ball ratio against the cramming budget: our columns at each budget, the paper's at its own.

    Args:
        columns: :class:`~accessibility_lib.figures.table1_report.OurColumn` of one method and kind (e.g. the
            report's ``natural()``); one line per model through its budgets, each point with its interval.
        paper_ball: the paper's ball row, ``{column: ratio}`` (:func:`accessibility_lib.theory.paper.table1`).
        paper_steps: the paper's budget (steps), where its range and its Gemma-270M entry are drawn.

    Returns:
        the matplotlib figure (log-scaled budget axis).

    Raises:
        ValueError: no column to draw.
    """
    from accessibility_lib.figures.table1_report import model_label

    columns = list(columns)
    if not columns:
        raise ValueError("budget_ratio_figure needs at least one column")
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    models = list(dict.fromkeys(c.model for c in columns))
    for i, m in enumerate(models):
        cs = sorted((c for c in columns if c.model == m), key=lambda c: c.budget)
        x = [c.budget for c in cs]
        r = [c.ball_ratio for c in cs]
        y = [v for v, _ in r]
        err = [[v - lo for v, (lo, _) in r], [hi - v for v, (_, hi) in r]]
        ax.errorbar(x, y, yerr=err, fmt="o-", color=f"C{i}", capsize=3, label=f"{model_label(m)} (ours)")
    lo, hi = min(paper_ball.values()), max(paper_ball.values())
    ax.vlines(paper_steps, lo, hi, color="grey", lw=6, alpha=0.5, label="paper: its 7 models")
    if "Gemma-270M" in paper_ball:
        ax.plot([paper_steps], [paper_ball["Gemma-270M"]], "D", color="black", label="paper: Gemma-270M")
    ax.set_xscale("log")
    ticks = sorted({*(c.budget for c in columns), paper_steps})
    ax.set_xticks(ticks)
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("cramming budget (optimiser steps per target)")
    ax.set_ylabel("ball slope C / measured slope C_exp")
    legend_outside(ax, fontsize=8)
    fig.tight_layout()
    return fig


def length_figure(results):
    """Ball slope (largest L2 norm) and box-inscribed ellipsoid slope fitted on prompts up to length ℓ.

    ε is held at each model's full fit (its argmax-region ball row); one colour a model, circles for the ball,
    dashed squares for the ellipsoid (the paper's Fig 9 varies prompts and length; this varies the longest length).

    Args:
        results: :class:`~accessibility_lib.geometry.support.ModelSupport` list; models without per-length fits
            (shown from an artifact) are skipped.

    Returns:
        the matplotlib figure.
    """
    from accessibility_lib.theory import bounds

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    colors = token_colors(max(2, len(results)))
    for i, r in enumerate(results):
        if not r.by_length:
            continue
        eps = r.columns["argmax_region"].rows["ball"].eps
        ells = sorted(r.by_length)
        ax.plot(ells, [bounds.ball_slope(r.d, r.by_length[ell].radii["l2"], eps, r.d_vocab) for ell in ells], "o-",
                color=colors[i], label=f"{r.name}: ball")  # fmt: skip
        ax.plot(ells, [r.by_length[ell].ellipsoid.slope(eps, r.d_vocab) for ell in ells], "s--", color=colors[i],
                label=f"{r.name}: box-inscribed ellipsoid")  # fmt: skip
    ax.set_xscale("log")
    ticks = sorted({ell for r in results for ell in r.by_length})
    if ticks:
        ax.set_xticks(ticks)
    ax.get_xaxis().set_major_formatter(ScalarFormatter())
    ax.set_xlabel("longest prompt length ℓ in the sample (tokens)")
    ax.set_ylabel("slope C (tokens per prompt vector)")
    legend_outside(ax, fontsize=8)
    fig.tight_layout()
    return fig
