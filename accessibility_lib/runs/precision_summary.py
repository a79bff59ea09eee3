"""Chapter 7's one results table and the reading of its answer, from the measurements of the other reports.

:func:`summary_table` sets, for each book model, its support under ``l2_fp16`` (r = the largest L2 norm of the
last-layer embeddings h, ε = r∞·2^−11), the bounds it gives (ball at that ε, ball at the median effective ε,
the fp32 count over any input), its measured cramming slope and the bound over it, the median perturbation that
changes its next token and its copying cliff. :func:`readings` says the chapter's answer only as far as the
measurements of the preset show it.
"""

from __future__ import annotations

import numpy as np

from accessibility_lib.runs.precision_counts import floor_sig

__all__ = ["summary_table", "readings"]


def summary_table(support: dict, sens: dict, cram: dict, found: dict, params: dict) -> str:
    """Two tables, one row a book model (those of ``support``): the bounds, then the measurements.

    Args:
        support: :func:`~accessibility_lib.runs.precision_models.measure_supports`, with the ε_eff slopes added
            (:func:`~accessibility_lib.runs.effective_eps_report.add_eff_slopes`).
        sens: :func:`~accessibility_lib.runs.effective_eps_report.measure`'s sensitivities.
        cram: :func:`~accessibility_lib.runs.architecture_report.load_cramming`.
        found: the copying cliffs of :func:`~accessibility_lib.runs.architecture_report.load_copying`.
        params: chapter 7's parameters (its first dtype is the one reported).
    """
    from accessibility_lib.runs import copying_report as CR

    if not support:
        return "No model available."
    dt0 = params["dtypes"][0]
    # two tables, so that each fits the text column: what the bounds allow, then what the model does
    bounds = ["| model | architecture | r (max L2) | r∞ | 2r/ε | C ball | C ball, median ε_eff of h | C fp32, any input |",
              "|---" * 8 + "|"]  # fmt: skip
    measured = ["| model | C_exp (natural) | C ball / C_exp | median t*/‖X‖∞ | copying cliff |", "|---" * 5 + "|"]
    for name, s in support.items():
        fit = cram.get(name, {}).get("slopes", {}).get("natural")
        slope = fit.describe() if fit is not None else "—"
        ratio = f"{s['C_ball_rep'] / fit.slope:.0f}" if fit is not None and fit.reliable else "—"
        rel = f"{float(np.nanmedian(sens[(name, dt0)]['prompt'][0].relative)):.2g}" if (name, dt0) in sens else "—"
        cliff = CR.cliff_position(found[name]) if name in found else "—"
        bounds.append(f"| {name} | {s['arch']} | {s['r']:.2f} | {s['r_inf']:.2f} | {2 * s['r'] / s['eps_rep']:.0f} | "
                      f"{s['C_ball_rep']:.1f} | {s.get('C_ball_eff', float('nan')):.1f} | {s['C_any']['fp32']:.1f} |")  # fmt: skip
        measured.append(f"| {name} | {slope} | {ratio} | {rel} | {cliff} |")
    eff = "; ".join(f"{n} {s['eps_eff']:.3g}" for n, s in support.items() if "eps_eff" in s)
    note = (
        "\n\nThe column 'C ball, median ε_eff of h' is the ball at the median over prompts of ε_eff of the "
        "last-layer states h: the next token, the nearest face of its argmax cell over every direction, exact "
        f"(ε_eff = {eff or 'not measured'}). It is not the prompt-space t* of the column 'median t*/‖X‖∞' below; "
        "the lab notes give both."
    )
    return ("What the bounds allow, under the convention `l2_fp16` (r = the largest L2 norm of h, ε = r∞·2^−11):\n\n"
            + "\n".join(bounds) + note + "\n\nWhat each model does: its measured cramming slope C_exp and the ball "
            f"bound over it (tokens per prompt vector), the median perturbation t* that changes its next token (in "
            f"{dt0}, random directions in the prompt) and its copying cliff:\n\n" + "\n".join(measured))  # fmt: skip


def readings(
    margin: float,
    least: dict | None,
    mamba_margin: float | None,
    budget: int | None = None,
    at_cap: tuple[int, int] | None = None,
) -> dict[str, str]:
    """The chapter's answer, each part said only as far as the measurements show it.

    Args:
        margin: the smallest dtype count over any input (each dtype's whole finite range) over the measured slope
            among the paper's models (:func:`~accessibility_lib.runs.precision_counts.smallest_margin`).
        least: the median next-token perturbation closest to its dtype's spacing
            (:func:`~accessibility_lib.runs.effective_eps_report.least_perturbation`: its model, dtype, median
            t*/‖X‖∞ and that median in unit roundoffs; None: nothing measured).
        mamba_margin: nano-mamba's ball bound over the top of its natural-slope interval
            (:func:`~accessibility_lib.runs.architecture_report.margin`), or None without a reliable slope.
        budget: the step budget of the cramming runs behind ``mamba_margin`` (None: not said).
        at_cap: ``(failed runs that stopped at the step cap, failed runs)`` of nano-mamba's natural targets.

    Returns:
        ``{"prec_answer_count", "prec_answer_eps", "prec_answer_arch"}``: text to glue.
    """
    count = (f"Counting the values a dtype can represent over its whole finite range bounds the outputs with no ε "
             f"at all. The smallest such count stays {floor_sig(margin, 2, True)}× or more above every measured "
             "cramming slope of the paper's models.")  # fmt: skip
    if least is None:
        eps = "No model was measured in this run, so it says nothing about the ε a model shows."
    else:
        rel, over_u, dt, who = least["rel"], least["over_u"], least["dtype"], least["model"]
        if over_u > 10:
            eps = (f"At typical prompts the output changes only after a large move of the prompt. For {who} in {dt}, "
                   f"the closest any model comes to its dtype's spacing, the median perturbation t* is {rel:.2g} of the "
                   f"prompt's largest coordinate ‖X‖∞: {floor_sig(over_u)}× the unit roundoff of {dt}.")  # fmt: skip
        else:
            eps = (f"At typical prompts the output can change after a small move: for {who} in {dt}, the median "
                   f"perturbation t* is only {rel:.2g} of the prompt's largest coordinate ‖X‖∞, "
                   f"{floor_sig(over_u)}× the unit roundoff of {dt}.")  # fmt: skip
    m = mamba_margin
    if m is None:
        mamba = "The state-space model has no reliable cramming slope in this run to set beside its bound."
    elif m > 1:
        at = f"At {budget} optimisation steps, the state-space" if budget else "The state-space"
        mamba = f"{at} model nano-mamba crams below its bound like the transformer, by {floor_sig(m, 2)}× or more."
    else:
        mamba = "The state-space model nano-mamba crams up to its bound here: the margin is not wholly above 1."
    if m is not None and at_cap is not None and at_cap[0] > at_cap[1] / 2:
        k, n = at_cap
        runs = f"every one of its {n} failed runs" if k == n else f"{k} of its {n} failed runs"
        mamba += (f" But {runs} stopped at the step cap, so the margin holds for this budget: more steps may raise "
                  "its slope and lower the margin.")  # fmt: skip
    return {"prec_answer_count": count, "prec_answer_eps": eps, "prec_answer_arch": mamba}
