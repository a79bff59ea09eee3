"""Chapter 5's reading of Table 1: the caveats that matter most (each once) and the points of "What it means".

Both read a :class:`~accessibility_lib.figures.table1_report.Table1Report` and the resolved-cells artifacts
(:mod:`accessibility_lib.geometry.table1_resolved`); every number they print is computed here from those,
never typed. The caveats link the lab notes' sections (``book/lab_support.md``), where each is measured in
full.
"""

from __future__ import annotations

import math

from accessibility_lib.figures.table1_report import Table1Report, model_label
from accessibility_lib.geometry import table1_resolved as T1R
from accessibility_lib.theory import paper

__all__ = ["ball_ratio_at", "budget_sentence", "empty_share_bound", "trust_notes", "meaning"]


def ball_ratio_at(col, report: Table1Report, log2_x: float) -> float:
    """A column's ball ratio had its ball been counted at 2r/ε = 2^log2_x (the ball row depends on ε only
    through ln(1 + 2r/ε)); dimensionless."""
    ball = report.supports[col.model].columns[col.method].rows["ball"]
    return ball.C * math.log1p(2.0**log2_x) / math.log1p(ball.two_r_over_eps) / col.slope.fit.slope


def empty_share_bound(empty: int, sampled: int, confidence: float = 0.95) -> float:
    """One-sided Clopper–Pearson upper bound on the share of empty cells, from ``empty`` of ``sampled`` tokens.

    >>> round(empty_share_bound(0, 1000), 4)
    0.003

    Raises:
        ValueError: counts that are not 0 ≤ empty ≤ sampled, sampled ≥ 1.
    """
    from scipy.stats import beta

    if not (0 <= empty <= sampled and sampled >= 1):
        raise ValueError(f"need 0 <= empty <= sampled and sampled >= 1, got empty={empty}, sampled={sampled}")
    if empty == sampled:
        return 1.0
    return float(beta.ppf(confidence, empty + 1, sampled - empty))


def _and(values) -> str:
    """``"300 and 600"``, ``"300, 600 and 3000"``, ``"300"``."""
    v = [str(x) for x in values]
    return v[0] if len(v) == 1 else ", ".join(v[:-1]) + " and " + v[-1]


def _span(values) -> str:
    """``"192"`` for equal values, else ``"192–1,002"``."""
    lo, hi = min(values), max(values)
    return f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"


def _lab(label: str, text: str) -> str:
    return f"{{ref}}`{text} <{label}>`"


def trust_notes(report: Table1Report) -> list[str]:
    """The few conditions that matter most for Table 1's comparison, one Markdown paragraph each.

    Each is said once and links the lab notes' section that measures it. Empty when the report has no column.
    """
    nat = report.natural()
    if not nat:
        return []
    out = []
    steps = paper.AUTHORS_CRAMMING_STEPS
    budgets = sorted({c.budget for c in report.columns})
    moves = []
    for m in dict.fromkeys(c.model for c in nat):
        cs = sorted((c for c in nat if c.model == m), key=lambda c: c.budget)
        if len(cs) > 1:
            moves.append(
                f"{model_label(m)}'s natural-text slope rose from {cs[0].slope.fit.slope:.1f} to "
                f"{cs[-1].slope.fit.slope:.1f} tokens per vector between {cs[0].budget} and {cs[-1].budget} steps."
            )
    out.append(
        f"**The budget.** Our slopes come from {_and(budgets)} optimiser steps a target; the paper's "
        f"from {steps['max_steps']:,} (patience {steps['patience']}). "
        + " ".join(moves)
        + " So each ratio here is likely above the ratio at the paper's budget. That needs a larger budget to raise "
        "n50 at least as much at larger m, which the same targets at two budgets do not establish "
        f"({_lab('sec-cramming-budgets', 'the budget pairs')}). "
        f"Runs at {steps['max_steps']:,} steps are in progress; they will join the table as new columns. "
        f"Details: {_lab('lab-support-slopes', 'the slopes in the lab notes')}."
    )
    implied = T1R.paper_implied_log2()
    lo_x, hi_x = min(implied.values()), max(implied.values())
    c0 = max(nat, key=lambda c: c.budget)
    at_lo, at_hi = ball_ratio_at(c0, report, lo_x), ball_ratio_at(c0, report, hi_x)
    ours_x = math.log2(report.supports[c0.model].columns[c0.method].rows["ball"].two_r_over_eps)
    out.append(
        f"**The precision ε.** The paper does not state its ε. Its ball row implies 2r/ε between 2^{lo_x:.1f} and "
        f"2^{hi_x:.1f}; ours is 2^{ours_x:.1f}. A finer ε only raises our ratios. At the paper's, our ball ratio for "
        f"{c0.title} would read {at_lo:.1f}–{at_hi:.1f} instead of {c0.ball_ratio[0]:.1f}. So the gap to the paper is not the ε. "
        f"Details: {_lab('sec-rows-eps', 'how each row depends on ε')}."
    )
    n_emb = {m: s.stats["samples"] for m, s in report.supports.items() if m in {c.model for c in nat}}
    out.append(
        f"**The sample of embeddings.** Our rows rest on {_span(n_emb.values())} embeddings of random prompts; the paper samples {paper.EMBED_PROMPTS:,} prompts. A largest norm can only "
        "grow with the sample, but with ε tied to the largest coordinate the rows move little. "
        f"Details: {_lab('sec-support-sample', 'how each row depends on the sample')}."
    )
    cells, caps = [], []
    for m, art in report.resolved.items():
        D = T1R.rows_from_inputs(art["inputs"])["ellipsoid + non-uniform cells"]["from"]["D"]
        q = empty_share_bound(int(D["empty"]), int(D["tokens_sampled"]))
        cells.append(
            f"{model_label(m)}: {D['empty']} empty of {D['tokens_sampled']:,} sampled, at most {100 * q:.1f} %"
        )
        if 0 < q < 1:
            caps.append(math.log(2) / -math.log1p(-q))
    if cells:
        out.append(
            "**The cells row.** It rests on a uniform sample of tokens, each cell measured one by one. "
            "It takes the share of empty cells to be what the sample saw ("
            + "; ".join(cells)
            + ", each a 95 % bound). "
            + (
                f"At that bound, a sequence longer than {min(caps):.0f} tokens would meet an empty cell more often "
                "than not, and the cells row would stop growing with m. "
                if caps
                else ""
            )
            + "Where a replicate run measured the splitting variance above its ideal, the row uses the measured one. "
            f"Details: {_lab('sec-cells-resolved', 'the resolved cells')}."
        )
    g = report.supports.get("gemma-3-270m")
    if g is not None:
        pm = paper.models()["Gemma-3-270m"]
        out.append(
            f"**The checkpoints.** Ours are 4-bit GGUF files, dequantized. Our Gemma-3-270M embeddings reach "
            f"L2 = {g.stats['l2']:.0f} and L∞ = {g.stats['linf']:.0f}; the authors' list gives {pm.r_l2:.0f} and "
            f"{pm.r_inf:.2f}. The cone and ellipsoid rows read that shape, so they are not like for like. "
            f"Details: {_lab('lab-support-gemma', 'Gemma and the paper’s radii')}."
        )
    return out


def meaning(report: Table1Report) -> dict:
    """The numbers of "What it means": how much the support lowers C, the tightest ratio, the budget's effect.

    Returns:
        ``{"drop_lo", "drop_hi"}`` (per cent, ball → resolved cells row of the argmax-region method, over the
        models with a resolved artifact), ``"tightest"`` (the smallest natural-text ratio in the table, with its
        column's title and row), ``"budget"`` (first and last ball ratio of the model with most budgets, with
        their budgets); each key absent when its inputs are.
    """
    out: dict = {}
    drops = []
    for m, art in report.resolved.items():
        if m in report.supports:
            cells = next(
                (c.C["ellipsoid + non-uniform cells"] for c in report.columns if c.model == m and c.resolved), None
            )
            if cells is not None:
                drops.append(1 - cells / report.supports[m].columns["argmax_region"].rows["ball"].C)
    if drops:
        out["drop_lo"], out["drop_hi"] = 100 * min(drops), 100 * max(drops)
    nat = report.natural()
    if nat:
        best = min(
            ((c, name, c.C[name] / c.slope.fit.slope) for c in nat for name, C in c.C.items() if C is not None),
            key=lambda t: t[2],
        )
        out["tightest"] = {"title": best[0].title, "row": best[1], "ratio": best[2]}
        by_model: dict[str, list] = {}
        for c in nat:
            by_model.setdefault(c.model, []).append(c)
        m = max(sorted(by_model), key=lambda k: len(by_model[k]))
        cs = sorted(by_model[m], key=lambda c: c.budget)
        if len(cs) > 1:
            out["budget"] = {
                "model": model_label(m),
                "first": (cs[0].budget, cs[0].ball_ratio[0]),
                "last": (cs[-1].budget, cs[-1].ball_ratio[0]),
            }
    return out


def budget_sentence(report: Table1Report) -> str:
    """How Table 1's natural-text ball ratio moves with the budget, in one or two sentences (read from the columns).

    Says "falls" only where every model with two or more budgets has a lower ratio at its largest budget than at
    its smallest; otherwise names the model whose ratio does not.
    """
    by_model: dict[str, list] = {}
    for c in report.natural():
        by_model.setdefault(c.model, []).append(c)
    pairs = {m: sorted(cs, key=lambda c: c.budget) for m, cs in by_model.items() if len(cs) > 1}
    if not pairs:
        return "Each model has one complete budget so far, so how the ratio moves with the budget is not measured."
    rising = [m for m, cs in pairs.items() if cs[-1].ball_ratio[0] >= cs[0].ball_ratio[0]]
    if rising:
        return (
            "The ratio does not fall with the budget for "
            + ", ".join(model_label(m) for m in rising)
            + ". The budget's effect differs between models."
        )
    return (
        "The ratio falls as the budget grows: the slope rises with it. "
        f"So a ratio at {min(c.budget for cs in pairs.values() for c in cs)} steps likely overstates the ratio at "
        f"the paper's budget; {_lab('sec-cramming-budgets', 'the budget pairs')} do not establish it."
    )
