"""Chapter 7's figures: a dtype's count of values, how far a prompt must move to change the output, and the two
architectures' cramming and copying.

Each function draws one whole figure and returns it: :func:`fp_count_figure` (ln N(r) of each dtype against the
paper's uniform grids), :func:`ecdf_figure` and :func:`scaling_figure` (the smallest output-changing perturbation
t*, from :func:`~accessibility_lib.runs.effective_eps_report.measure`), :func:`arch_cramming_figure` (n50(m) of
`nano` and `nano-mamba`, :func:`~accessibility_lib.runs.architecture_report.load_cramming`) and
:func:`arch_copying_figure` (their exact-match copying, :func:`~accessibility_lib.runs.architecture_report.
load_copying`).
"""

from __future__ import annotations

import math

import numpy as np

from accessibility_lib.figures.plotting import PALETTE

__all__ = ["UNIT_ROUNDOFFS", "fp_count_figure", "ecdf_figure", "scaling_figure", "arch_cramming_figure",
           "arch_copying_figure"]  # fmt: skip

#: the unit roundoff of each 16- and 32-bit dtype, by short name
UNIT_ROUNDOFFS = {"bf16": 2.0**-8, "fp16": 2.0**-11, "fp32": 2.0**-24}
_SHORT = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


def fp_count_figure():
    """ln N(r) of fp32, bf16 and fp16 for r from 1e-4 to 1e4, against ln(1 + 2r/ε) of the replication code's grid
    (2r/ε = 4096) and of the grid Table 1's ball row implies for Pythia-160M. Returns the figure."""
    import matplotlib.pyplot as plt

    from accessibility_lib.geometry import table1_resolved as T1R
    from accessibility_lib.theory import fp_grid

    rs = np.logspace(-4, 4, 400)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for dt, color in zip(("fp32", "bf16", "fp16"), PALETTE):
        ax.plot(rs, [math.log(fp_grid.count_in_interval(float(r), dt)) for r in rs], color=color, label=f"{dt} (exact)")
    ax.axhline(math.log(4097), color="0.4", ls="--", label="uniform grid, 2r/ε = 4096 (rinf_fp16)")
    implied = T1R.paper_implied_log2()["Pythia-160M"]  # log2(2r/ε) that the paper's ball row implies (chapter 5)
    ax.axhline(
        math.log1p(2.0**implied),
        color="0.4",
        ls=":",
        label=f"uniform grid, 2r/ε = 2^{implied:.1f} (Table 1, Pythia-160M)",
    )
    ax.set_xscale("log")
    ax.set_xlabel("r (half-width of the interval)")
    ax.set_ylabel("ln N(r)  (nats per coordinate)")
    ax.legend(fontsize=8, loc="center right")
    return fig


def _roundoff_lines(ax, with_text_at: float | None = 0.02) -> None:
    for lab, u in UNIT_ROUNDOFFS.items():
        ax.axvline(u, color="0.6", lw=0.8)
        if with_text_at is not None:
            ax.text(u, with_text_at, f" {lab} u", fontsize=8, color="0.4")


def ecdf_figure(sens: dict):
    """The distribution of t*/‖X‖∞ (next token solid, n-token output dotted) per model and dtype, as a fraction of
    all searches (those that never changed are not drawn); vertical lines at the unit roundoffs. Returns the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    for (key, s), color in zip(sens.items(), PALETTE):
        for which, ls in ((0, "-"), (1, ":")):
            rel_all = s["prompt"][which].relative.ravel()
            rel = np.sort(rel_all[np.isfinite(rel_all)])
            ax.step(rel, np.arange(1, rel.size + 1) / max(rel_all.size, 1), ls=ls, color=color,
                    label=f"{key[0]}, {_SHORT[key[1]]}" if which == 0 else None)  # fmt: skip
    _roundoff_lines(ax)
    ax.set_xscale("log")
    ax.set_xlabel("t* / ‖X‖∞  (smallest output-changing L∞ perturbation, relative)")
    ax.set_ylabel("fraction of prompts × directions")
    if sens:
        ax.legend(fontsize=8, loc="upper left")
    return fig


def scaling_figure(sens: dict):
    """t* (next token) against ‖X‖∞ per model and dtype, one point a prompt and direction, with the lines
    t = u·‖X‖∞ of the unit roundoffs. Returns the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    for (key, s), color, mk in zip(sens.items(), PALETTE, "osd^v<>"):
        S = s["prompt"][0]
        ax.scatter(np.repeat(S.scale, S.t.shape[1]), S.t.ravel(), s=10, color=color, marker=mk, alpha=0.7,
                   label=f"{key[0]}, {_SHORT[key[1]]}")  # fmt: skip
    if sens:
        scales = [s["prompt"][0].scale for s in sens.values()]
        xs = np.array([min(x.min() for x in scales), max(x.max() for x in scales)])
        for lab, u in UNIT_ROUNDOFFS.items():
            ax.plot(xs, u * xs, "--", color="0.5", lw=0.8)
            ax.text(xs[-1], u * xs[-1], " u·‖X‖∞, " + lab, fontsize=8, color="0.4")
        ax.legend(fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("‖X‖∞ of the prompt")
    ax.set_ylabel("t* (L∞, next token)")
    return fig


def arch_cramming_figure(cram: dict):
    """n50(m) with 95 % intervals for both models, natural targets (circles, solid line) and random words (squares,
    dashed), the two models dodged sideways; an arrow marks an interval open at that end. Returns the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.8))
    for i_model, ((name, c), color) in enumerate(zip(cram.items(), PALETTE)):
        for kind, mk in (("natural", "o"), ("random_words", "s")):
            rows = [(m, f) for m, f, _ in c.get("points", {}).get(kind, []) if f is not None and f.ok]
            if not rows:
                continue
            ms = np.array([r[0] for r in rows], float)
            n50 = np.array([r[1].n50 for r in rows])
            ci = np.array([r[1].ci for r in rows], float)
            err = np.abs(np.vstack([n50 - ci[:, 0], ci[:, 1] - n50]))
            x = ms + 0.08 * (i_model - (len(cram) - 1) / 2)
            ax.errorbar(x, n50, yerr=np.where(np.isfinite(err), err, 0.0), fmt=mk, color=color, capsize=2,
                        label=f"{name}, {kind}")  # fmt: skip
            for side, lims in ((1, "lolims"), (0, "uplims")):  # an open end: an arrow, not a bar claiming an end
                o = ~np.isfinite(err[side])
                if o.any():
                    arrow = np.zeros((2, o.sum()))
                    arrow[side] = 0.15 * n50[o]
                    ax.errorbar(x[o], n50[o], yerr=arrow, fmt="none", color=color, **{lims: True})
            if kind in c["slopes"]:
                grid = np.linspace(0, ms.max() * 1.1, 20)
                ax.plot(
                    grid, c["slopes"][kind].predict(grid), color=color, lw=0.8, ls="-" if kind == "natural" else "--"
                )
    ax.set_xlabel("m (prompt vectors)")
    ax.set_ylabel("n50 (tokens)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no cramming artifact with a fitted n50 yet", transform=ax.transAxes, ha="center")
    return fig


def arch_copying_figure(art: dict, found: dict):
    """Exact-match copying against length of both models (95 % Wilson intervals, points offset slightly), a
    shaded gap where the data are a step, the fitted logistic where they resolve a fall; the vertical line is the
    longest training length. Returns the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    for i, ((name, rec), color) in enumerate(zip(art["models"].items(), PALETTE)):
        ev = {k: np.asarray(v) for k, v in rec["eval"].items()}
        cliff = found[name]
        err = np.vstack([ev["exact_rate"] - ev["ci_low"], ev["ci_high"] - ev["exact_rate"]])
        ax.errorbar(ev["length"] + 0.12 * (i - 0.5), ev["exact_rate"], yerr=err, fmt="os"[i % 2], ms=4, capsize=2,
                    color=color, label=name, mfc="none" if i % 2 else color)  # fmt: skip
        if cliff.kind == "step":
            ax.axvspan(cliff.low, cliff.high, color=color, alpha=0.15, lw=0)
        elif cliff.kind == "fall":
            grid = np.linspace(ev["length"].min(), ev["length"].max(), 200)
            ax.plot(grid, cliff.fit.predict(grid), color=color, lw=1)
    ax.set_xlabel("string length n")
    ax.set_ylabel("exact match (held-out)")
    ax.set_ylim(-0.03, 1.03)
    if art["models"]:
        ax.axvline(art["settings"]["train_max_len"], color="0.6", lw=0.8)
        ax.legend()
    else:
        ax.text(0.5, 0.5, "no copying artifact yet", transform=ax.transAxes, ha="center")
    return fig
