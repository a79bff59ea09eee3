"""Budget curves and budget pairs as tables: how a larger step budget moves n50, for chapter 3's lab notes.

A *budget curve* is the same targets at m = 1 under the authors' optimiser at 1×, 2× and 4× a step budget; a
*budget pair* is the same targets at the base budget and twice it, at one m
(:func:`accessibility_lib.runs.cramming_budget.budget_curve`, :func:`~accessibility_lib.runs.cramming_budget.budget_moves`).
Whether a move is measured is read from the two interval ends that face each other
(:func:`~accessibility_lib.runs.cramming_budget.facing_ends`). n50 in tokens; budgets in optimiser steps a target.
The tables return page items for :func:`~accessibility_lib.figures.cramming_context.show`; :func:`budget_trend` and
:func:`budget_condition` return the sentences chapter 3's trust box glues.
"""

from __future__ import annotations

from IPython.display import Markdown

from accessibility_lib.figures.cramming_context import BASE_STEPS, n50_text
from accessibility_lib.figures.tables import md_table
from accessibility_lib.models.names import label
from accessibility_lib.runs import cramming_budget as CB

__all__ = ["budget_curves", "budget_pairs", "pairs_verdict", "budget_trend", "budget_condition", "TREND"]

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


def _grows(pairs) -> bool:
    return all(b2.fit.n50 - a2.fit.n50 >= b1.fit.n50 - a1.fit.n50 for (_, a1, b1), (_, a2, b2) in zip(pairs, pairs[1:]))


def pairs_verdict(pairs) -> str:
    """``"indicated"`` where the moves of :func:`~accessibility_lib.runs.cramming_budget.budget_moves` grow with m and
    every move is settled by its intervals, else ``"not established"``: the condition is never established, since
    intervals that settle each move above zero do not settle that the moves grow."""
    settled = all(CB.facing_ends(a, b)[0] == "above" for _, a, b in pairs)
    return "indicated" if _grows(pairs) and settled else "not established"


def budget_curves(ctx) -> list:
    """Every stored float32 budget curve at m = 1: one table row a budget, then one reading a curve."""
    rows, said = [], []
    for name, kind, units in _series(ctx):
        curve = CB.budget_curve(units, kind).get("float32", [])
        if len(curve) < 2:
            continue
        for u in curve:
            cap = f"{u.failures_at_cap}/{u.failures}" if u.failures else "no failure"
            rows.append([label(name), kind.replace("_", " "), u.budget_label.split(",")[0], u.n_targets, n50_text(u),
                         cap])  # fmt: skip
        why = CB.facing_ends(curve[0], curve[-1])[1]
        moves = ", ".join(f"{100 * (v.fit.n50 / u.fit.n50 - 1):+.0f} %" for u, v in zip(curve, curve[1:]))
        said.append(f"- **{label(name)}, {kind.replace('_', ' ')}**: {TREND[CB.curve_trend(curve)]}. From the smallest to "
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
            rows.append([label(name), kind.replace("_", " "), m, a.n_targets, n50_text(a), n50_text(b),
                         f"{b.fit.n50 - a.fit.n50:+.1f}", _SAYS[CB.facing_ends(a, b)[0]]])  # fmt: skip
        grows = _grows(pairs)
        settled = [m for m, a, b in pairs if CB.facing_ends(a, b)[0] == "above"]
        said.append(f"- **{label(name)}, {kind.replace('_', ' ')}**: the moves "
                    + ("grow with m" if grows else "do not grow at every step in m") + ". The intervals settle "
                    + ("every move" if len(settled) == len(pairs) else
                       f"the move at m = {', '.join(map(str, settled))} only" if settled else "none of them")
                    + ". So the condition is " + ("indicated, not established" if pairs_verdict(pairs) == "indicated"
                                                  else "not established") + ".")  # fmt: skip
    if not rows:
        return [Markdown("No model has budget pairs at two m yet.")]
    table = md_table(["model", "target kind", "m", "targets a length", f"n50 at {base_steps} steps [95 % CI]",
                      f"n50 at {2 * base_steps} steps [95 % CI]", "move (tokens)", "move"], rows)  # fmt: skip
    return [table, Markdown("\n".join(said))]


def _real_series(ctx):
    """(model, kind, units) for the real models and nano's instrument plan, natural and random words."""
    for name, units in [*ctx.real.summaries.items(), *ctx.inst_art.items()]:
        for kind in ("natural", "random_words"):
            yield name, kind, units


def budget_trend(ctx) -> str:
    """A few sentences: how far each stored budget curve at m = 1 moves n50 from its smallest to its largest budget,
    and whether n50 grows, rises or stays flat, one sentence a model and reading."""
    said = {"growing": "n50 grows (disjoint intervals)",
            "rising": "the point estimate rises, with intervals too wide to settle it",
            "flat": "n50 does not move by a token or more"}  # fmt: skip
    groups, steps = {}, set()
    for name, kind, units in _real_series(ctx):
        c = CB.budget_curve(units, kind).get("float32")
        if c:
            move = f"{kind.replace('_', ' ')} {100 * (c[-1].fit.n50 / c[0].fit.n50 - 1):+.0f} % ({c[0].fit.n50:.1f} → "
            groups.setdefault((name, CB.curve_trend(c)), []).append(move + f"{c[-1].fit.n50:.1f})")
            steps |= {c[0].max_steps, c[-1].max_steps}
    if not steps:
        return ""
    parts = [f"On {label(n)}, {said[t]}: {', '.join(moves)}." for (n, t), moves in groups.items()]
    return (f"The budget curves take the same targets at m = 1 from {min(steps):,} to {max(steps):,} steps. "
            + " ".join(parts))  # fmt: skip


def budget_condition(ctx, base_steps: int = BASE_STEPS) -> str:
    """Whether the real models' budget pairs (the same targets at ``base_steps`` and twice it, every m stored at both)
    meet the condition under which a slope is a lower estimate: indicated where every move is settled and the moves
    grow with m, else not established (never established: intervals settle each move, not that the moves grow)."""
    said = {"indicated": [], "not established": []}
    for name, units in ctx.real.summaries.items():
        for kind in ("natural", "random_words"):
            pairs = CB.budget_moves(units, kind, 2 * base_steps, base_steps)
            if len(pairs) >= 2:
                said[pairs_verdict(pairs)].append((name, kind.replace("_", " ")))
    if not any(said.values()):
        return f"No two m have a {2 * base_steps:,}-step unit on the same targets yet, so that is untested."

    def who(pairs):
        names = list(dict.fromkeys(n for n, _ in pairs))
        each = [f"{label(n)} ({', '.join(k for m, k in pairs if m == n)})" for n in names]
        return each[0] if len(each) == 1 else ", ".join(each[:-1]) + " and " + each[-1]

    parts = [f"the budget pairs indicate that condition for {who(said['indicated'])}"] if said["indicated"] else []
    if said["not established"]:
        parts.append(
            f"{'they' if parts else 'the budget pairs'} do not establish it for {who(said['not established'])}"
        )
    text = "; ".join(parts) + "."
    return (text[0].upper() + text[1:] + " So a larger budget likely raises the real models' slopes as well, but no "
            "stored pair establishes it.")  # fmt: skip
