"""Budget curves and budget pairs as tables: how a larger step budget moves n50, for chapter 3's lab notes.

A *budget curve* is the same targets at m = 1 under the authors' optimiser at 1×, 2× and 4× a step budget; a
*budget pair* is the same targets at the base budget and twice it, at one m
(:func:`accessibility_lib.runs.cramming_budget.budget_curve`, :func:`~accessibility_lib.runs.cramming_budget.budget_moves`).
Whether a move is measured is read from the two interval ends that face each other
(:func:`~accessibility_lib.runs.cramming_budget.facing_ends`). n50 in tokens; budgets in optimiser steps a target.
Returns page items for :func:`~accessibility_lib.figures.cramming_context.show`.
"""

from __future__ import annotations

from IPython.display import Markdown

from accessibility_lib.figures.cramming_context import BASE_STEPS, n50_text
from accessibility_lib.figures.tables import md_table
from accessibility_lib.runs import cramming_budget as CB

__all__ = ["budget_curves", "budget_pairs", "TREND"]

#: one short sentence per :func:`~accessibility_lib.runs.cramming_budget.curve_trend` reading
TREND = {
    "growing": "n50 grows with the budget: the smallest and largest budgets' intervals are disjoint",
    "rising": "the point estimate rises at every step, but the intervals overlap",
    "flat": "no move of a token or more is shown",
}
_SAYS = {"above": "measured", "overlap": "not shown (intervals overlap)", "unsettled": "not settled"}


def _series(ctx):
    """(model, kind, units) for every real model and kind, then nano's instrument plan."""
    for name, units in [*ctx.real.summaries.items(), *ctx.inst_art.items()]:
        for kind in sorted({u.kind for u in units}):
            yield name, kind, units


def budget_curves(ctx) -> list:
    """Every stored float32 budget curve at m = 1: one table row a budget, then one reading a curve."""
    rows, said = [], []
    for name, kind, units in _series(ctx):
        curve = CB.budget_curve(units, kind).get("float32", [])
        if len(curve) < 2:
            continue
        for u in curve:
            cap = f"{u.failures_at_cap}/{u.failures}" if u.failures else "no failure"
            rows.append([name, kind.replace("_", " "), u.budget_label.split(",")[0], u.n_targets, n50_text(u), cap])
        why = CB.facing_ends(curve[0], curve[-1])[1]
        moves = ", ".join(f"{100 * (v.fit.n50 / u.fit.n50 - 1):+.0f} %" for u, v in zip(curve, curve[1:]))
        said.append(f"- **{name}, {kind.replace('_', ' ')}**: {TREND[CB.curve_trend(curve)]}. From the smallest to "
                    f"the largest budget, {why}. Each step moves the point estimate by {moves}.")  # fmt: skip
    if not rows:
        return [Markdown("No budget curve is complete yet.")]
    table = md_table(["model", "target kind", "budget", "targets a length", "n50 at m = 1 [95 % CI]",
                      "failures at the step cap"], rows)  # fmt: skip
    return [table, Markdown("\n".join(said))]


def budget_pairs(ctx, base_steps: int = BASE_STEPS) -> list:
    """The same targets at ``base_steps`` and twice that, per m: the move of n50, and whether it grows with m.

    A slope at ``base_steps`` is a lower estimate if a larger budget raises n50 at least as much at larger m.
    """
    rows, said = [], []
    for name, kind, units in _series(ctx):
        pairs = CB.budget_moves(units, kind, 2 * base_steps, base_steps)
        if len(pairs) < 2:
            continue
        for m, a, b in pairs:
            rows.append([name, kind.replace("_", " "), m, a.n_targets, n50_text(a), n50_text(b),
                         f"{b.fit.n50 - a.fit.n50:+.1f}", _SAYS[CB.facing_ends(a, b)[0]]])  # fmt: skip
        grows = all(b2.fit.n50 - a2.fit.n50 >= b1.fit.n50 - a1.fit.n50
                    for (_, a1, b1), (_, a2, b2) in zip(pairs, pairs[1:]))  # fmt: skip
        settled = [m for m, a, b in pairs if CB.facing_ends(a, b)[0] == "above"]
        said.append(f"- **{name}, {kind.replace('_', ' ')}**: the moves "
                    + ("grow with m" if grows else "do not grow at every step in m") + ". The intervals settle "
                    + ("every move" if len(settled) == len(pairs) else
                       f"the move at m = {', '.join(map(str, settled))} only" if settled else "none of them")
                    + ". So the condition is " + ("indicated, not established" if grows and len(settled) == len(pairs)
                                                  else "not established") + ".")  # fmt: skip
    if not rows:
        return [Markdown("No model has budget pairs at two m yet.")]
    table = md_table(["model", "target kind", "m", "targets a length", f"n50 at {base_steps} steps [95 % CI]",
                      f"n50 at {2 * base_steps} steps [95 % CI]", "move (tokens)", "move"], rows)  # fmt: skip
    return [table, Markdown("\n".join(said))]
