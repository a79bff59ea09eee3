"""Chapter 6's copying figures: exact match against length (one panel a run) and cliff against training length.

The figure functions (:func:`training_figure`, :func:`exact_grid_figure`, :func:`cliff_moves_figure`,
:func:`bound_figure`, :func:`smol_training_figure`, :func:`smol_exact_figure`) each draw one whole figure of
chapter 6 or its lab notes and return it; every model keeps one colour (:func:`run_color`) in all of them.

Every run gets its own panel (:func:`exact_panel`), so curves never hide each other; a step is drawn as the
band of its bracket, a fall with its fitted logistic, one-sided results as an arrow from the tested end
(:class:`~accessibility_lib.experiments.cliffs.CliffEstimate`). :func:`cliff_against` puts cliff ranges against a
setting (training length, width), offsetting series sideways so that equal ranges stay visible.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["exact_panel", "cliff_against", "run_color", "training_figure", "exact_grid_figure", "cliff_moves_figure",
           "bound_figure", "smol_training_figure", "smol_exact_figure"]  # fmt: skip

#: the scratch widths pooled into one series (the width is then the x-axis)
SCRATCH_ALL = "0.35"


def exact_panel(ax, rec: dict, cliff, train_max_len: int, color: str, title: str | None = None) -> None:
    """Draw one run's exact match against length on ``ax``.

    Args:
        ax: a matplotlib axes.
        rec: the run's outcome record (``rec["eval"]``: ``length``, ``exact_rate``, ``ci_low``, ``ci_high``,
            ``char_acc``; lengths in symbols, rates in [0, 1]).
        cliff: its :class:`~accessibility_lib.experiments.cliffs.CliffEstimate`.
        train_max_len: the longest training length (a dashed vertical line).
        color: the run's colour.
        title: the panel title (default: the record's label).
    """
    ev = rec["eval"]
    n, p = np.asarray(ev["length"], float), np.asarray(ev["exact_rate"], float)
    err = np.vstack([p - np.asarray(ev["ci_low"]), np.asarray(ev["ci_high"]) - p])
    ax.errorbar(n, p, yerr=err, fmt="o", ms=3.5, capsize=2, color=color, label="exact match (95 % Wilson)")
    ax.plot(n, ev["char_acc"], ":", marker=".", ms=3, color=color, label="character accuracy")
    if cliff.kind == "step":
        ax.axvspan(cliff.low, cliff.high, color=color, alpha=0.2, lw=0, label="step: the cliff is somewhere here")
    elif cliff.kind == "fall":
        grid = np.linspace(n.min(), n.max(), 300)
        ax.plot(grid, cliff.fit.predict(grid), "-", lw=1.2, color=color, label="fitted logistic (a resolved fall)")
    ax.axvline(train_max_len, color="0.3", lw=0.8, ls="--", label="longest training length")
    ax.set_title(title if title is not None else rec["label"], fontsize=9)
    ax.set_ylim(-0.05, 1.05)


def cliff_against(ax, series: list[tuple[str, list[tuple[float, object]]]], colors, spread: float = 0.25) -> None:
    """Cliff ranges against a setting: one vertical bar a run (a step's bracket, a fall's 95 % interval with its
    n50 as a dot), an arrow up for "beyond the longest tested length".

    Args:
        ax: a matplotlib axes.
        series: ``[(name, [(x, CliffEstimate), ...]), ...]``: x is the setting (e.g. the training length).
        colors: one colour a series.
        spread: total sideways offset between the series, in x units (so equal ranges do not overlap).
    """
    k = len(series)
    for i, ((name, points), color) in enumerate(zip(series, colors)):
        dx = (i - (k - 1) / 2) * (spread / max(1, k - 1)) if k > 1 else 0.0
        first = True
        for x, c in points:
            label = name if first else None
            first = False
            if math.isfinite(c.low) and math.isfinite(c.high):
                ax.plot([x + dx, x + dx], [c.low, c.high], "-", lw=3, color=color, alpha=0.75, solid_capstyle="butt",
                        label=label)  # fmt: skip
            elif math.isfinite(c.low):  # beyond every tested length: an arrow up from the longest
                ax.annotate("", xy=(x + dx, c.low + 3), xytext=(x + dx, c.low),
                            arrowprops={"arrowstyle": "-|>", "color": color, "lw": 2})  # fmt: skip
                ax.plot([x + dx], [c.low], "^", ms=5, color=color, label=label)
            elif math.isfinite(c.high):  # below every tested length
                ax.plot([x + dx], [c.high], "v", ms=5, color=color, label=label)
            if c.n50 is not None:
                ax.plot(x + dx, c.n50, "o", ms=4, color=color)


def run_color(study, run) -> str:
    """The colour of a run's model (:meth:`~accessibility_lib.runs.copying_study.CopyingStudy.family`), the same in
    every figure of chapter 6 and its lab notes."""
    from accessibility_lib.figures.plotting import PALETTE

    fams = study.families
    return PALETTE[fams.index(study.family(run)) % len(PALETTE)]


def training_figure(study):
    """Training curves, one column a longest training length L: loss on the copy (nats/token, log scale, top) and
    exact match at L on the training strings at each check (bottom). Returns the figure."""
    import matplotlib.pyplot as plt

    Ls = sorted({r["cfg"].train_max_len for r in study.runs})
    fig, axes = plt.subplots(2, len(Ls), figsize=(3.4 * len(Ls) + 1.6, 5.6), squeeze=False, sharey="row")
    for j, L in enumerate(Ls):
        ax1, ax2 = axes[0, j], axes[1, j]
        for r in (r for r in study.runs if r["cfg"].train_max_len == L):
            t = r["rec"]["train"]
            ax1.plot(
                t["loss_curve"]["step"], t["loss_curve"]["loss"], color=run_color(study, r), lw=1, label=r["label"]
            )
            ax2.plot(
                t["check_step"], t["check_exact"], marker="o", ms=2, lw=1, color=run_color(study, r), label=r["label"]
            )
        ax1.set_yscale("log")
        ax1.set_title(f"L = {L}" + (" (the common one)" if L == study.L0 else ""))
        ax2.set_xlabel("training step")
        ax2.set_ylim(-0.03, 1.03)
    axes[0, 0].set_ylabel("loss on the copy (nats/token)")
    axes[1, 0].set_ylabel("exact match at L\n(training strings)")
    handles = {}
    for ax in axes[1]:  # one legend entry a model, whatever its L
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab.split(", n ≤")[0], h)
    axes[1, -1].legend(handles.values(), handles.keys(), fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    return fig


def exact_grid_figure(study):
    """Exact match against length, one panel a run at the common training length: each row a fine-tuned model
    beside its architecture from scratch, the last row the scratch widths. Returns the figure."""
    import matplotlib.pyplot as plt

    from accessibility_lib.experiments.copying_bases import SCRATCH_BASES
    from accessibility_lib.runs.copying_study import SHAPE_OF

    params = study.params
    rows = [
        [study.find(b), study.find(SHAPE_OF[b]) if b in SHAPE_OF else None]
        for b in params["bases"]
        if b not in SCRATCH_BASES
    ]
    rows += [
        [study.find(s)]
        for s in SHAPE_OF.values()
        if s in params["bases"] and not any(study.find(s) is row[-1] for row in rows)
    ]
    if "scratch" in params["bases"]:
        rows.append([study.find("scratch", width=w) for w in sorted(params["widths"])])
    rows = [row for row in rows if any(x is not None for x in row)]
    ncols = max(len(row) for row in rows)
    fig, axes = plt.subplots(
        len(rows), ncols, figsize=(3.3 * ncols + 0.6, 2.6 * len(rows) + 0.6), sharex=True, sharey=True, squeeze=False
    )
    for row, ax_row in zip(rows, axes):
        for j, ax in enumerate(ax_row):
            r = row[j] if j < len(row) else None
            if r is None:
                ax.set_visible(j < len(row))  # a pair with a missing partner keeps its empty panel, labelled
                ax.text(
                    0.5,
                    0.5,
                    "not in the artifact yet" if params["from_artifact"] else "not trained in this preset",
                    ha="center",
                    va="center",
                    transform=ax.transAxes,
                    fontsize=8,
                    color="0.4",
                )
                continue
            exact_panel(ax, r["rec"], r["cliff"], r["cfg"].train_max_len, run_color(study, r), r["label"])
    for ax in axes[-1]:
        ax.set_xlabel("string length n (symbols)")
    for ax in axes[:, 0]:
        ax.set_ylabel("exact match\n(held-out strings)")
    handles = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=3, fontsize=8, bbox_to_anchor=(0.5, -0.01))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def cliff_moves_figure(study):
    """Left: the cliff against the longest training length L for every swept model (dashed: a cliff at L + ½).
    Right: the cliff against the width, every model at the common L (scratch widths as one grey series).
    Returns the figure."""
    import matplotlib.pyplot as plt

    from accessibility_lib.experiments.copying_bases import SCRATCH_BASES
    from accessibility_lib.figures.plotting import legend_outside

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8), gridspec_kw={"width_ratios": [1.2, 1]})
    lineages = study.lineages
    series = [(name, [(r["cfg"].train_max_len, r["cliff"]) for r in seq]) for name, seq in lineages]
    Ls = sorted({x for _, pts in series for x, _ in pts} | {study.L0})
    ax1.plot(
        [min(Ls) - 1, max(Ls) + 1], [min(Ls) - 0.5, max(Ls) + 1.5], "--", color="0.5", lw=0.8, label="cliff at L + ½"
    )
    cliff_against(ax1, series, [run_color(study, seq[0]) for _, seq in lineages], spread=0.8)
    ax1.set_xticks(Ls)
    ax1.set_xlabel("longest training length L (symbols)")
    ax1.set_ylabel("cliff position (symbols)")
    ax1.legend(fontsize=8, loc="upper left")
    at_L0 = study.at_L0
    widths = sorted({r["rec"]["d_model"] for r in at_L0})
    series2, colors2 = [], []
    for b in dict.fromkeys(r["cfg"].base for r in at_L0):
        own = [r for r in at_L0 if r["cfg"].base == b]
        series2.append(
            (
                b if b in SCRATCH_BASES else f"{b} (fine-tuned)",
                [(math.log2(r["rec"]["d_model"]), r["cliff"]) for r in own],
            )
        )
        colors2.append(SCRATCH_ALL if b == "scratch" and len(own) > 1 else run_color(study, own[0]))
    cliff_against(ax2, series2, colors2, spread=0.3)
    ax2.axhline(study.L0 + 0.5, color="0.5", ls="--", lw=0.8)
    ax2.set_xticks([math.log2(w) for w in widths], [str(w) for w in widths])
    ax2.set_xlabel(f"width d_model (all at L = {study.L0})")
    legend_outside(ax2, fontsize=7)
    return fig


def bound_figure(study, smol: dict | None = None):
    """The measured cliff, n* under ``l2_fp16`` and n* at the floor 2r/ε = 1, one row a run (and the SmolLM2
    fine-tune when given), on one log10 axis of the length in symbols. Returns the figure."""
    import matplotlib.pyplot as plt

    from accessibility_lib.figures.plotting import PALETTE, legend_outside

    rows = [(r["label"], r["mf"]) for r in study.runs]
    if smol is not None:
        rows.append(("SmolLM2-135M (fine-tuned)", smol["mf"]))
    fig, ax = plt.subplots(figsize=(8.5, 0.42 * len(rows) + 1.6))
    ys = np.arange(len(rows))
    ax.scatter([math.log10(m["cliff"]) for _, m in rows], ys, color=PALETTE[0], label="measured cliff", zorder=3)
    ax.scatter(
        [m["coarsest_log10"] for _, m in rows], ys, color=PALETTE[2], marker="D", label="n* at 2r/ε = 1 (coarsest)"
    )
    ax.scatter(
        [m["log10_nstar"] for _, m in rows], ys, color=PALETTE[3], marker="s", label="n* at ε = r∞·2^-11 (l2_fp16)"
    )
    ax.set_yticks(ys, [lab for lab, _ in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.4, -0.6)  # the first run on top, in the order of the tables
    ax.set_xlabel("log10 of the length (symbols)")
    legend_outside(ax)
    return fig


def smol_training_figure(ft: dict):
    """The SmolLM2-135M fine-tune's record: loss on the copy (log scale, left) and exact match at the longest
    training length at each check (right). Returns the figure."""
    import matplotlib.pyplot as plt

    from accessibility_lib.figures.plotting import PALETTE

    pr, s = ft.get("progress", {}), ft["settings"]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.0))
    a1.plot(pr["loss_curve"]["step"], pr["loss_curve"]["loss"], color=PALETTE[0])
    a1.set_yscale("log")
    a1.set_xlabel("training step")
    a1.set_ylabel("loss on the copy (nats/token)")
    a2.plot(pr["check_step"], pr["check_exact"], "o-", ms=3, color=PALETTE[1])
    a2.set_ylim(-0.03, 1.03)
    a2.set_xlabel("training step")
    a2.set_ylabel(f"exact match at n = {s['train_max_len']}")
    fig.suptitle("SmolLM2-135M fine-tuning on x|x (the background run's record)", fontsize=10)
    fig.tight_layout()
    return fig


def smol_exact_figure(smol: dict, settings: dict):
    """Exact match of the fine-tuned SmolLM2-135M against length (log2 axis when lengths run past the task
    context, marked dash-dotted), with its cliff. ``smol`` is :func:`~accessibility_lib.runs.copying_finetune_view.
    evaluation`'s dict. Returns the figure."""
    import matplotlib.pyplot as plt

    from accessibility_lib.figures.plotting import PALETTE

    fig, ax = plt.subplots(figsize=(5.6, 3.0))
    exact_panel(
        ax, {**smol["rec"], "eval": smol["ev"]}, smol["cliff"], smol["L"], PALETTE[2], title="SmolLM2-135M, fine-tuned"
    )
    ax.set_xlabel("string length n (symbols)")
    ax.set_ylabel("exact match\n(held-out strings)")
    if smol["beyond"]:
        n_ctx = smol["n_ctx"]
        ax.axvline(
            n_ctx + 0.5, color="0.4", lw=0.8, ls="-.", label=f"task context ({settings['context']} tokens: n ≤ {n_ctx})"
        )
        ax.set_xscale("log", base=2)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig
