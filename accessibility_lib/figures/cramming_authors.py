"""Gemma-3-270M beside the authors: our n50 at m = 1 and our slopes against those their replication data give.

The authors' n50 at m = 1 (:data:`accessibility_lib.theory.paper.AUTHORS_N50_M1`, from their published
cramming results) and their slopes (:data:`~accessibility_lib.theory.paper.MEASURED_SLOPES`, their cramming
figure) are set beside our stored units (``book/data/cramming/gemma-3-270m.json``), with the reading each
comparison allows. Returns page items for :func:`~accessibility_lib.figures.cramming_context.show`.
"""

from __future__ import annotations

import numpy as np
from IPython.display import Markdown

from accessibility_lib.figures.cramming_context import BASE_STEPS
from accessibility_lib.figures.tables import md_table
from accessibility_lib.runs import cramming_budget as CB
from accessibility_lib.runs import cramming_summary as CS
from accessibility_lib.theory import paper

__all__ = ["gemma_beside_authors", "MODEL", "AUTHORS_KEY"]

MODEL = "gemma-3-270m"
AUTHORS_KEY = "Gemma-3-270m"


def _m1(units, authors):
    return [u for u in units if u.m == 1 and u.kind in authors and u.dtype == "float32" and u.state == "complete"]


def _verdict(u, a_n50, curve) -> str:
    (lo, hi), (open_lo, open_hi) = u.fit.ci, u.fit.ci_open
    if a_n50 <= paper.AUTHORS_SWEEP_MIN_LENGTH:  # their value is a bound: their sweep starts there
        return (f"the authors' {a_n50:.2f} is, we infer, a bound, ≤ {a_n50:.2f} (their published sweep starts there). "
                + ("Our whole interval lies below it, which a bound cannot contradict" if not open_hi and hi <= a_n50
                   else "Our interval reaches below it: consistent with it" if open_lo or lo <= a_n50
                   else "Our interval lies above it: the two differ"))  # fmt: skip
    if (open_lo or lo <= a_n50) and (open_hi or a_n50 <= hi):
        return (f"the authors' {a_n50:.2f} lies inside our interval, so these runs cannot say that the two differ. "
                + ("With the point estimate still rising with the steps, ours may lie higher at their budget: "
                   "agreement here is not a replication" if curve and CB.curve_trend(curve) != "flat" else
                   "Agreement here is not a replication"))  # fmt: skip
    if a_n50 < lo:
        return f"the authors' {a_n50:.2f} lies below our interval"
    at = next((c for c in curve if c.max_steps == u.max_steps), None)  # the curve's unit at this budget
    text = f"the authors' {a_n50:.2f} lies above our interval; the runs differ in the ways listed above"
    if at is not None and at is not curve[-1] and curve[-1].fit.n50 > at.fit.n50:
        v, why = CB.facing_ends(at, curve[-1])
        text += (f". On the budget curve's {at.n_targets} targets, {at.max_steps} → {curve[-1].max_steps} steps move "
                 f"the point estimate from {at.fit.n50:.1f} to {curve[-1].fit.n50:.1f} ({why}). The budget alone moves "
                 + ("it toward theirs" if v == "above" else "it toward theirs, though the intervals cannot settle it"))  # fmt: skip
    return text


def _reading(units, authors) -> list:
    best = {}
    for u in _m1(units, authors):  # per kind and budget, the unit with the most targets reads
        if u.fit is not None:
            key = (u.kind, u.max_steps, u.patience)
            if key not in best or u.n_targets > best[key].n_targets:
                best[key] = u
    reading, plateau_said = [], False
    for u in sorted(best.values(), key=lambda v: (v.kind, v.max_steps)):
        curve = CB.budget_curve(units, u.kind).get("float32", [])
        text = CB.budget_reading([u])[1]
        i_top, i_low = int(np.argmax(u.lengths)), int(np.argmin(u.lengths))
        plateau = CS.plateau_note([u])
        if plateau and plateau_said:  # said once in full: later rows name it and their highest rate
            plateau = (
                f"again no length tried crams {100 * CS.PLATEAU_TOP:.0f} % (at most {100 * float(max(u.rates)):.0f} %)"
            )
        plateau_said = plateau_said or bool(plateau)
        extra = []
        if u.fit.ci_open[1]:
            extra.append(f"Its upper end is open: {u.rates[i_top] * u.trials[i_top]:.0f} of {u.trials[i_top]:.0f} crammed "
                         f"at {u.lengths[i_top]:.0f} tokens, the longest length tried")  # fmt: skip
        if u.fit.ci[0] < u.lengths[i_low] and not u.fit.ci_open[0]:
            extra.append(f"Its lower end lies below the shortest length tried, {u.lengths[i_low]:.0f} tokens, where "
                         f"{u.rates[i_low] * u.trials[i_low]:.0f} of {u.trials[i_low]:.0f} crammed")  # fmt: skip
        parts = [f"its n50 is {u.fit.n50:.1f}", *([text] if u.patience is not None else []), _verdict(u, authors[u.kind], curve),
                 *([plateau] if plateau else []), *extra]  # fmt: skip
        reading.append(f"- **{u.kind.replace('_', ' ')}, {u.budget_label.split(',')[0]}, {u.n_targets} targets a "
                       "length**: " + ". ".join(p[0].upper() + p[1:] for p in parts) + ".")  # fmt: skip
    out = [Markdown("Reading (Gemma-3-270M, m = 1):\n\n" + "\n".join(reading))] if reading else []
    fewer = sorted({(u.kind, u.n_targets) for u in _m1(units, authors) if u.fit is not None
                    and u.n_targets < best[(u.kind, u.max_steps, u.patience)].n_targets})  # fmt: skip
    if fewer:
        out.append("Where a kind and budget also have a unit with fewer targets ("
                   + ", ".join(f"{k.replace('_', ' ')}, {t} targets" for k, t in fewer)
                   + "), the larger unit reuses its outcomes, so only the larger one is read here.")  # fmt: skip
    return out


def _slopes(units, authors) -> list:
    rows = []
    sl = CS.slopes(units, BASE_STEPS, instrument="paper", dtype="float32")
    for kind, (pts, s) in sl.items():
        if s is None or kind not in ("natural", "random_words"):
            continue
        theirs = paper.MEASURED_SLOPES[AUTHORS_KEY][0 if kind == "natural" else 1]
        where = ("above" if theirs > s.ci[1] else "below" if theirs < s.ci[0] else "inside") if s.reliable else None
        rows.append(f"- {kind.replace('_', ' ')}: ours {s.describe(1)} tokens per vector (m = "
                    f"{', '.join(str(u.m) for u in pts)}; {pts[0].budget_label}); the paper's {theirs:.2f} "
                    + (f"lies {where} our interval." if where else "(ours is not reliable, so no verdict)."))  # fmt: skip
    out = [Markdown("Slopes (Gemma-3-270M) against the paper's cramming figure:\n\n" + "\n".join(rows))] if rows else []
    nat, curve = sl.get("natural"), CB.budget_curve(units, "natural").get("float32", [])
    if rows and nat and nat[1] is not None and nat[1].reliable and curve:
        theirs = paper.MEASURED_SLOPES[AUTHORS_KEY][0]
        moves = CB.budget_moves(units, "natural", 2 * BASE_STEPS, BASE_STEPS)
        out.append(Markdown(
            f"At m = 1 the step budget moves our natural n50 toward the authors' ({curve[0].fit.n50:.1f} → "
            f"{curve[-1].fit.n50:.1f} from {curve[0].max_steps} to {curve[-1].max_steps} steps; theirs "
            f"{authors['natural']:.2f}). Their natural slope, {theirs:.2f}, is {theirs / nat[1].slope:.1f}× ours at "
            f"{BASE_STEPS} steps. To close that, a larger budget would have to raise n50 several times more at larger m "
            "than at m = 1. "
            + ("The budget pairs move the point estimates by " + ", ".join(
                f"{b.fit.n50 - a.fit.n50:+.1f} tokens at m = {m}" for m, a, b in moves) + "."
               if len(moves) >= 2 else "The budget pairs at two m are still to run.")
            + " That gap is not accounted for."))  # fmt: skip
    return out


def gemma_beside_authors(ctx) -> list:
    """Our Gemma-3-270M n50 at m = 1 beside the authors', a reading per kind and budget, and the slopes beside theirs.

    Returns a note naming the command when no Gemma-3-270M artifact is stored.
    """
    units = ctx.real.summaries.get(MODEL, [])
    authors = paper.AUTHORS_N50_M1[AUTHORS_KEY]
    rows = []
    for u in sorted(_m1(units, authors), key=lambda v: (v.kind, v.n_targets)):
        cap = ("no failure" if not u.failures else f"{u.failures_at_cap}/{u.failures}"
               + (" (no patience: all, by construction)" if u.patience is None else ""))  # fmt: skip
        a = authors[u.kind]
        rows.append([u.kind, u.budget_label, u.n_targets, cap, u.fit.describe() if u.fit is not None else "–",
                     f"{a:.2f}, read as ≤ {a:.2f} (their sweep starts there)" if a <= paper.AUTHORS_SWEEP_MIN_LENGTH
                     else f"{a:.2f}"])  # fmt: skip
    if not rows:
        return [Markdown("No Gemma-3-270M artifact yet: run `.venv/bin/python scripts/real_model_cramming.py "
                         "--model gemma-3-270m --plan table1`.")]  # fmt: skip
    table = md_table(["target kind", "budget", "targets a length", "failures at the step cap",
                      "ours: n50 (m = 1, authors' convention) [95 % CI]", "authors' n50"], rows)  # fmt: skip
    return [table, *_reading(units, authors), *_slopes(units, authors)]
