"""The real models' stored cramming runs, for the record: provenance, per-unit tables, each slope's conditions.

Every function takes a :class:`~accessibility_lib.figures.cramming_context.CrammingContext` and returns page
items for :func:`~accessibility_lib.figures.cramming_context.show`. The lab notes of chapter 3 show all of
them; the chapter shows the figure and the compact results table
(:func:`accessibility_lib.figures.cramming_report.results_table`). Units appear as they are stored: a model
or unit added to ``book/data/cramming/<model>.json`` by the documented command (complete, partial or
queued, any instrument or budget) appears in its row with its state, and only complete float32 units of the
authors' optimiser at the base budget enter a slope (:func:`accessibility_lib.runs.cramming_summary.slopes`).
"""

from __future__ import annotations

import math

import numpy as np
from IPython.display import Markdown

from accessibility_lib.figures.cramming_budgets import TREND
from accessibility_lib.figures.cramming_context import BASE_STEPS, n50_text
from accessibility_lib.figures.cramming_report import ball_C
from accessibility_lib.figures.tables import md_table
from accessibility_lib.ground.provenance import portable_command, resume_command, time_limit_minutes
from accessibility_lib.runs import cramming_artifacts as CA
from accessibility_lib.runs import cramming_budget as CB
from accessibility_lib.runs import cramming_summary as CS
from accessibility_lib.runs import cramming_units as CU
from accessibility_lib.runs import table1_measured
from accessibility_lib.runs.cramming_cost import plan_projection
from accessibility_lib.theory import paper

__all__ = ["provenance", "unit_tables", "slope_bullets", "plan_done"]


def _planned(name: str, art: dict) -> set:
    try:
        return {p.uid for p in CU.cramming_plan(name, art["provenance"]["plan"])}
    except (KeyError, ValueError):
        return {u["uid"] for u in art["units"]}


def plan_done(name: str, art: dict) -> bool:
    """Whether every unit of the artifact's plan is complete (units stopped out of the plan aside)."""
    planned = _planned(name, art)
    return all(u.get("state") == "complete" for u in art["units"] if u["uid"] in planned)


def provenance(ctx) -> list:
    """For each real model: its checkpoint, the command that last wrote its artifact, and how to continue it."""
    from accessibility_lib.models.fetch import SOURCES

    out = list(ctx.real.notes)
    for name, art in ctx.real.artifacts.items():
        prov = art["provenance"]
        resume, limit = resume_command(prov["command"]), time_limit_minutes(prov["command"])
        hours = sum(h.get("wall_seconds_this_invocation", 0) for h in art.get("history", [])) / 3600
        text = [f"{name}: checkpoint {SOURCES[name]['model']}" if name in SOURCES else name,
                f"  last written {prov['date']} by {portable_command(prov['command'])}"]  # fmt: skip
        if limit is not None:
            text.append(f"  an invocation limited to {limit:g} min that writes out what the result store holds; "
                        + ("every unit of its plan is complete" if plan_done(name, art) else
                           f"to continue without its time limit: {resume}"))  # fmt: skip
        text.append(f"  commit {prov['commit'][:12]}, {prov['machine']}; {len(art.get('history', []))} invocation(s), "
                    f"{hours:.1f} h of wall-clock time in all")  # fmt: skip
        text.append(f"  decode path {art['decode_path']}, verified by {art['verified_by']}")
        out.append("\n".join(text))
    return out


def _norm_text(outcomes) -> str:
    l2 = [r["prompt_l2"] for r in outcomes if r.get("success") and "prompt_l2" in r]
    return f"{np.median(l2):.2f} (max {max(l2):.2f})" if l2 else "–"


def _label(name, u) -> str:
    return f"{name} {u.kind} m = {u.m} ({u.budget_label}, {u.n_targets} targets, {u.dtype})"


def _unfinished_text(name, u, left) -> str:
    hours = left.get(u.uid, {}).get("hours_left_one_worker")
    sp = CA.stages_path(CA.artifact_path(name))
    if u.instrument.startswith("progressive") and sp.exists():
        with np.load(sp, allow_pickle=False) as st:
            done = f"{len(st['keys'])} stages stored (its outcomes, the horizons, come when every chain ends)"
    else:
        done = f"{u.n_outcomes} outcomes" if u.n_outcomes else "started, no batch of targets finished yet"
    return (_label(name, u) + f": {done}"
            + ("" if hours is None else f", ≈ {hours:.1f} h left on one core (projected)" if hours >= 0.05
               else ", past its projection and still running"))  # fmt: skip


def unit_tables(ctx) -> list:
    """Every stored real-model unit: its n50 (§: in a slope), then its cost, prompt norms and decode checks;
    what is unfinished, queued or stopped; and the same n50 where more than one run measured it."""
    real = ctx.real
    slope_ids = {id(u) for s_pts in real.slopes.values() for u in s_pts[1] if not any(u.fit.ci_open)}
    rows, cost_rows, running, queued, stopped, queued_hours = [], [], [], [], [], 0.0
    for name, units in real.summaries.items():
        raw = {u["uid"]: u for u in real.artifacts[name]["units"]}
        left = {r["uid"]: r for r in plan_projection(units)["units"]}  # float32 units, from the finished ones
        planned = _planned(name, real.artifacts[name])
        for u in units:
            if u.state != "complete" and u.uid not in planned:
                stopped.append(f"{_label(name, u)}, {u.n_outcomes} outcomes")
            elif u.state == "partial":
                running.append(_unfinished_text(name, u, left))
            elif u.state != "complete":  # not started; a unit with more targets starts from the one with fewer
                queued.append(
                    _label(name, u) + (f", which starts from {u.n_outcomes} stored outcomes" if u.n_outcomes else "")
                )
                queued_hours += left.get(u.uid, {}).get("hours_left_one_worker") or 0.0
            else:
                cap = ("no failure" if not u.failures else f"{u.failures_at_cap}/{u.failures}"
                       + (" (no patience: all, by construction)" if u.patience is None else ""))  # fmt: skip
                order = (real.names.index(name), u.kind, u.instrument != "paper", u.instrument, u.dtype, u.m,
                         u.max_steps, u.n_targets)  # fmt: skip
                rows.append((order, [name, u.kind, f"{u.m} §" if id(u) in slope_ids else u.m, u.budget_label,
                                     u.dtype, u.n_targets, n50_text(u), cap]))  # fmt: skip
                cost_rows.append((order, [f"{name}, {u.kind}", u.m, u.budget_label, u.dtype, u.n_targets, u.design,
                                          f"{u.token_steps:,}", _norm_text(CA.own_outcomes(raw[u.uid])),
                                          u.disagreements]))  # fmt: skip
    rows, cost_rows = ([r for _, r in sorted(t, key=lambda x: x[0])] for t in (rows, cost_rows))
    out = [md_table(["model", "target kind", "m", "budget, instrument", "dtype", "targets a length",
                     "n50 [95 % CI] (tokens; natural: passage horizons)", "failures at the step cap"], rows),
           md_table(["model, target kind", "m", "budget, instrument", "dtype", "targets a length", "search",
                     "token-steps of its search", "crammed prompt ‖·‖₂: median (max)", "decode disagreements"],
                    cost_rows)]  # fmt: skip
    out.append(Markdown(
        "*Reading the tables.* Instrument `paper` is the authors' optimiser (AdamW, lr 1e−2, betas (0.9, 0.9)). "
        "`lr3e-2` and `lr1e-1` are the same at a larger learning rate. `progressive` grows one prompt per target a "
        "token at a time ({ref}`sec-cramming-instruments`). Search `bisect` is the first artifacts' design; "
        "`sequential` spends its targets near n50 ({ref}`sec-search-cost`). The prompt norm is the largest L2 norm "
        "of a crammed prompt's m vectors ({ref}`sec-cramming-prompt-norms`). A decode disagreement is a target "
        "whose greedy decoding with and without the KV cache differed. § marks the units the slopes are fitted "
        "through."))  # fmt: skip
    dates = ", ".join(f"{n} {real.artifacts[n]['provenance'].get('date', '?')}" for n in real.artifacts)
    said = [] if (running or queued) else ["Every unit of the plans is complete."]
    if running:
        said.append(f"**Unfinished when the artifacts were last written** ({dates}):\n\n"
                    + "\n".join(f"- {t}" for t in running))  # fmt: skip
    if queued:
        said.append("**Queued, not started then**"
                    + (f" (≈ {queued_hours:.0f} h on one core in all, projected)" if queued_hours else "") + ":\n\n"
                    + "\n".join(f"- {t}" for t in queued))  # fmt: skip
    if stopped:
        said.append("**Stopped, no longer in the plan** (kept for the record, not used):\n\n"
                    + "\n".join(f"- {t}" for t in stopped))  # fmt: skip
    out.append(Markdown("\n\n".join(said)))
    out.extend(_same_n50(ctx))
    return out


def _same_n50(ctx) -> list:
    rows = []
    for name, units in ctx.real.summaries.items():
        slope_units = {(u.kind, u.m): u.uid for (n_, _), (_, pts) in ctx.real.slopes.items() if n_ == name for u in pts}
        bench_rows = {r["kind"]: r for r in ctx.bench["search"].get(name, {}).get("rows", []) if r["m"] == 1}
        for kind in ("natural", "random_words"):
            us = [u for u in units if (u.kind, u.m, u.instrument, u.dtype, u.max_steps, u.state)
                  == (kind, 1, "paper", "float32", BASE_STEPS, "complete") and u.fit is not None]  # fmt: skip
            if len(us) + (kind in bench_rows) < 2:
                continue
            for u in sorted(us, key=lambda u: u.n_targets):
                run = f"{u.n_targets} targets" + (" (the slope's unit)" if slope_units.get((kind, 1)) == u.uid else "")
                rows.append([name, kind.replace("_", " "), run, n50_text(u)])
            if kind in bench_rows:
                rows.append([name, kind.replace("_", " "), "the search benchmark's sequential replay",
                             bench_rows[kind]["sequential"]["describe"]])  # fmt: skip
    if not rows:
        return []
    return [
        Markdown(f"The same n50 at m = 1 from more than one run (the authors' optimiser, {BASE_STEPS} steps, float32). "
                 "A 20-target unit holds the 10-target unit's targets and ten more. The benchmark's replay fits a "
                 "different subset of the same outcomes."),
        md_table(["model", "target kind", "run", "n50 at m = 1 [95 % CI]"], rows),
    ]  # fmt: skip


def _t1_note(name, kind) -> str:
    """How a ratio differs from the paper's Table 1 entry, where the model is one of its columns."""
    from accessibility_lib.geometry import table1_resolved as T1R

    col = next((c for c, m_ in paper.TABLE1_COLUMNS.items() if m_.lower() == name.lower()), None)
    if col is None:
        return ""
    if kind != "natural":
        return f" Table 1 has no {kind.replace('_', ' ')} entry for {col}: its ratios use natural-text slopes."
    theirs = paper.MEASURED_SLOPES[paper.TABLE1_COLUMNS[col]][0]
    return (f" This is not Table 1's ball entry for {col}, {paper.table1()['ball (Cor 4.6)'][col]:.2f}. That one "
            f"implies 2r/ε ≈ 2^{T1R.paper_implied_log2()[col]:.1f} (4096 = 2^12 here). It divides by their natural "
            f"slope, {theirs:.2f}, at {paper.AUTHORS_CRAMMING_STEPS['max_steps']} steps "
            "({ref}`sec-cramming-gemma-authors`).")  # fmt: skip


def _rt(C, fit) -> str:
    r, (lo, hi) = table1_measured.ratio(C, fit)
    return f"{r:.1f} [{lo:.1f}, {hi:.1f}]"


def _slope_text(fit, C) -> str:
    if not fit.reliable:
        return f"{fit.slope:.1f} (unreliable)"
    return f"{fit.describe(1)} (ratio {_rt(C, fit)})"


def _budget_pairs(summaries, kind, curve, C) -> tuple[str, str]:
    b_steps = curve[1].max_steps
    moves = CB.budget_moves(summaries, kind, b_steps, BASE_STEPS)
    if len(moves) < 2:
        return ("Budget pairs", f"a {b_steps}-step unit on the same targets is stored at "
                + (f"m = {moves[0][0]} only" if moves else "no m") + ". Whether every n50 moves alike is untested")  # fmt: skip
    ms, lo_s, hi_s = CB.budget_slopes(summaries, kind, b_steps, BASE_STEPS)
    g1 = moves[0][2].fit.n50 / moves[0][1].fit.n50 - 1
    return ("Budget pairs", f"through m = {', '.join(map(str, ms))} on the same targets the slope is "
            f"{_slope_text(lo_s, C)} at {BASE_STEPS} steps and {_slope_text(hi_s, C)} at {b_steps}. Moved by "
            f"m = {ms[0]}'s factor ({100 * g1:+.0f} %), the first would be {lo_s.slope * (1 + g1):.1f}. The moves per m "
            "are in the budget-pairs table")  # fmt: skip


def _budget_subs(summaries, kind, s, pts, C) -> list:
    sub = [("Failures at the step cap", CB.budget_reading(pts)[1])] if any(u.patience is not None for u in pts) else []
    curve = CB.budget_curve(summaries, kind).get("float32")
    if not curve:
        return [*sub, ("Budget curve", "none is stored for this kind")]
    sub.append(("Budget curve", f"{TREND[CB.curve_trend(curve)]} (the budget-curves table)"))
    if not s.reliable:
        return sub
    if CB.patience_share(curve[0]) != CB.patience_share(pts[0]):
        sub.append(("Budget bias", f"the budget curve's trials stop by another rule than the slope's "
                    f"({curve[0].budget_label.split(',')[0]} against {pts[0].budget_label.split(',')[0]})"))  # fmt: skip
        return sub
    grow = curve[-1].fit.n50 / curve[0].fit.n50 - 1
    half = (s.ci[1] - s.ci[0]) / 2
    sub.append(("Budget bias", f"{curve[-1].max_steps} steps move n50 at m = 1 by {100 * grow:+.0f} % "
                f"({curve[0].fit.n50:.1f} → {curve[-1].fit.n50:.1f}). Were every n50 to move by that factor, the slope "
                f"would move by {s.slope * grow:+.1f}, " + ("more" if abs(s.slope * grow) > half else "less")
                + f" than its interval's half-width ({half:.1f})"))  # fmt: skip
    sub.append(_budget_pairs(summaries, kind, curve, C))
    return sub


def slope_bullets(ctx) -> list:
    """Each real-model slope with every condition it carries: the ball ratio, the budget's reading, the budget
    curve and pairs, and how it differs from the paper's Table 1; the kinds with no slope and why."""
    real, lines = ctx.real, []
    for (name, kind), (s, pts) in real.slopes.items():
        shape = real.shapes[name]
        C = ball_C(shape.d_model, shape.d_vocab)
        sub = _budget_subs(real.summaries[name], kind, s, pts, C)
        if s.reliable:
            fitted = [u for u in pts if not any(u.fit.ci_open)]
            a, b = fitted[0], fitted[-1]
            lo, hi = (b.fit.ci[0] - a.fit.ci[1]) / (b.m - a.m), (b.fit.ci[1] - a.fit.ci[0]) / (b.m - a.m)
            loose = (f" With {s.n_points} values of m the Student-t interval is wide. Lines through the n50 intervals "
                     f"at m = {a.m} and m = {b.m} have slopes {lo:.1f} to {hi:.1f}, a ratio of {C / hi:.1f} to "
                     f"{C / max(lo, 1e-9):.1f}." if s.n_points <= 3 and lo > 0 else "")  # fmt: skip
            sub.insert(0, ("Ball bound", f"under `rinf_fp16` C = d·ln 4097/ln|V| = {C:.1f} (d = {shape.d_model}, "
                           f"|V| = {shape.d_vocab:,}), a ratio C / C_exp of {_rt(C, s)} at {pts[0].max_steps} steps."
                           f"{loose}{_t1_note(name, kind)}"))  # fmt: skip
            head = (f"- **{name}, {kind}**: $C_{{\\text{{exp}}}}$ = {s.describe(1)} tokens per vector "
                    f"(R² = {s.r_squared:.3f}, {s.n_points} values of m).")  # fmt: skip
            if edges := CS.edge_notes(pts):
                sub.insert(1, ("Edges", ". ".join(e[0].upper() + e[1:] for e in edges)))
        else:
            head = f"- **{name}, {kind}**: slope {s.describe(1)}. No ratio is taken of it."
        lines.append("\n".join([head] + [f"  - *{lab}*: {t[0].upper()}{t[1:].rstrip('.')}." for lab, t in sub]))
    for (name, kind), pts in real.no_slope.items():
        open_ms = [u.m for u in pts if any(u.fit.ci_open)]
        lines.append(f"- **{name}, {kind}**: no slope. Complete at m = {', '.join(str(u.m) for u in pts)}"
                     + (f". The interval at m = {', '.join(map(str, open_ms))} is open (a bound), so fewer than two m "
                        "have an interval to fit." if open_ms else ": fewer than two m."))  # fmt: skip
    factors = ", ".join(f"{math.log1p(4096 * real.h_radii[n]['l2'] / real.h_radii[n]['linf']) / math.log(4097):.3f} "
                        f"for {n}" for n in sorted({n for n, _ in real.slopes}) if n in real.h_radii)  # fmt: skip
    pre = (
        "Every ratio below divides the ball bound by a slope at the base budget. An n50 that has not converged is a "
        "lower estimate. A slope is one only if a larger budget raises n50 at least as much at larger m; the "
        "budget pairs test that. Chapter 5's rebuilt Table 1 takes r = r₂ and ε = r∞·2⁻¹¹ (`l2_fp16`). "
        "Its ball ratio is the one here times ln(1 + 4096·r₂/r∞)/ln 4097" + (f" ({factors})." if factors else ".")
    )
    if not all(u.patience is not None for _, pts in real.slopes.values() for u in pts):
        pre += (" Units with no patience run every failure to the step cap by construction, so only the budget "
                "curves test convergence.")  # fmt: skip
    return [
        Markdown(pre + "\n\n" + "\n".join(lines) if lines else "No real-model slope yet: fewer than two m complete.")
    ]
