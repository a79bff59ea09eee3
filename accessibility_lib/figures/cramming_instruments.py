"""Instruments and budgets, the prefix closure, and where the crammed prompts lie: chapter 3's record of its tools.

An instrument is an optimiser with its protocol (``paper``: the authors' AdamW; ``lr3e-2``, ``lr1e-1``;
``progressive`` growth); a budget curve is the same targets at 1×, 2× and 4× the base step budget
(:mod:`accessibility_lib.runs.cramming_budget`). Stored results: the real models' artifacts, nano's instrument
artifact (``book/data/cramming/instruments/nano.json``), ``benchmarks/continuation_nano.json`` and
``radii.json`` (input-embedding norms, ``scripts/prompt_radii.py``). Returns page items for
:func:`~accessibility_lib.figures.cramming_context.show`.
"""

from __future__ import annotations

import numpy as np
from IPython.display import Markdown

from accessibility_lib.figures.cramming_context import BASE_STEPS, n50_text
from accessibility_lib.figures.tables import md_table
from accessibility_lib.runs import cramming_budget as CB
from accessibility_lib.runs import cramming_summary as CS

__all__ = [
    "continuation",
    "instrument_rows",
    "instrument_table",
    "instrument_reading",
    "prefix_closure",
    "prompt_norms",
]


def continuation(ctx) -> list:
    """The 2× budget on nano run once reusing the base-budget search and once from scratch: token-steps saved."""
    cont = ctx.bench.get("continuation")
    if cont is None:
        return ["no continuation benchmark stored yet: python benchmarks/bench_budget_continuation.py --json "
                "book/data/cramming/benchmarks/continuation_nano.json"]  # fmt: skip
    table = md_table(
        ["targets (nano, m = 1)", "budget (steps)", "failures continued (token-steps saved)", "successes reused (saved)",
         "token-steps run: reusing / from scratch", "ratio", "outcomes identical"],
        [[r["kind"].replace("_", " "), f"{r['steps']} after {r['base_steps']}",
          f"{r['continued']} ({r['saved_by_continued_failures']:,})", f"{r['reused_successes']} ({r['saved_by_reused_successes']:,})",
          f"{r['token_steps_run']['continued']:,} / {r['token_steps_run']['scratch']:,}", f"{r['ratio_token_steps']:.2f}×",
          "yes" if r["identical_outcomes"] else "**no**"] for r in cont["rows"]])  # fmt: skip
    return [table, f"Both searches choose the same lengths (as on an empty store); {cont['provenance']['machine']}, "
                   f"{cont['provenance']['date']} (benchmarks/bench_budget_continuation.py)."]  # fmt: skip


def instrument_rows(ctx) -> tuple[list, list, list]:
    """The complete float32 units at m = 1 with ten targets, per instrument and budget (real models: natural only).

    Returns:
        (table rows, figure points (model, kind, instrument, max_steps, fit, token_steps, budget_label), notes on
        base-budget units of the older bisection search, left out because their token-steps do not compare).
    """
    rows, points, bisect = [], [], []
    for name, units in [*ctx.real.summaries.items(), *ctx.inst_art.items()]:
        for u in units:
            if u.m != 1 or u.state != "complete" or u.dtype != "float32" or u.fit is None or u.n_targets != 10:
                continue
            if name in ctx.real.summaries and u.kind != "natural":
                continue
            if u.instrument == "paper" and u.max_steps == BASE_STEPS and u.design == "bisect":
                bisect.append(f"{name} ({u.kind.replace('_', ' ')}, {u.budget_label.split(',')[0]}: {n50_text(u)})")
                continue
            cap = f"{u.failures_at_cap}/{u.failures}" if u.failures else "–"
            rows.append(
                [name, u.kind, u.instrument, u.budget_label.rsplit(", ", 1)[0], n50_text(u), f"{u.token_steps:,}", cap]
            )
            if u.fit.ok and u.token_steps:
                points.append((name, u.kind, u.instrument, u.max_steps, u.fit, u.token_steps, u.budget_label))
    return rows, points, bisect


def instrument_table(ctx) -> list:
    """The instrument comparison at m = 1: n50, token-steps and failures at the cap per instrument and budget."""
    rows, _, bisect = instrument_rows(ctx)
    out = [md_table(["model", "target kind", "instrument", "budget", "n50 (m = 1) [95 % CI]", "token-steps",
                     "failures at the cap"], rows) if rows else Markdown("No instrument comparison stored yet.")]  # fmt: skip
    if ctx.real.summaries:
        out.append("The real models appear with natural text only, the kind their instruments were compared on.")
    if bisect:
        out.append("Left out at the base budget (older bisection search, whose token-steps do not compare): "
                   + "; ".join(bisect) + ". That model's budget curve starts at 2× the base budget.")  # fmt: skip
    return out


def _base_text(name, kind, base) -> str:
    best = max(base, key=lambda p: p[4].n50)
    rest = [p for p in base if p is not best]
    apart = [p[2] for p in rest if p[4].ci[1] < best[4].ci[0]]
    text = f"- **{name}, {kind}**, at the base budget of {BASE_STEPS} steps: "
    if not apart:
        return text + (f"every interval overlaps the largest n50's ({best[2]}'s), so no instrument is shown to cram "
                       f"further. The cheapest search is {min(base, key=lambda p: p[5])[2]}'s.")  # fmt: skip
    return text + (f"{best[2]} crams furthest. Its interval lies above {', '.join(apart)}'s"
                   + ("" if len(apart) == len(rest) else
                      f" and overlaps {', '.join(p[2] for p in rest if p[2] not in apart)}'s") + ".")  # fmt: skip


def _progressive_text(name, kind, p, base, units) -> str:
    above = [q[2] for q in base if q[4].ci[1] < p[4].ci[0]]
    text = (f"- **{name}, {kind}, progressive growth** ({p[6]}; {p[5]:,} token-steps): {p[4].describe()}"
            + (f". Its interval lies above {', '.join(above)}'s at the base budget" if above else
               ". Its interval overlaps every base-budget instrument's" if base else "")
            + (f", at {p[5] / min(q[5] for q in base):.1f}× the token-steps of the cheapest" if base else ""))  # fmt: skip
    near = min(CB.budget_curve(units, kind).get("float32", []), key=lambda u: abs(u.token_steps - p[5]), default=None)
    if near is not None and near.max_steps > BASE_STEPS:
        text += (f". At a like cost the authors' optimiser with {near.max_steps:,} steps ({near.token_steps:,} "
                 f"token-steps) reached {near.fit.describe()}")  # fmt: skip
    return text + "."


def instrument_reading(ctx) -> list:
    """Per model and kind: which instrument crams furthest at the base budget, and progressive growth against them
    (the budget curves and pairs are :mod:`accessibility_lib.figures.cramming_budgets`' tables)."""
    _, points, _ = instrument_rows(ctx)
    text = []
    for name, kind in sorted({(p[0], p[1]) for p in points}):
        pts = [p for p in points if (p[0], p[1]) == (name, kind)]
        base = [p for p in pts if p[3] == BASE_STEPS and not p[2].startswith("progressive")]
        units = ctx.inst_art.get(name, ctx.real.summaries.get(name, []))
        if len(base) >= 2:
            text.append(_base_text(name, kind, base))
        elif base:
            text.append(
                f"- **{name}, {kind}**: only {base[0][2]} is complete at the base budget ({base[0][4].describe()})."
            )
        text.extend(_progressive_text(name, kind, p, base, units) for p in pts if p[2].startswith("progressive"))
    out = [Markdown("\n".join(text) if text else "No instrument comparison stored yet.")]
    left = [f"{u.kind.replace('_', ' ')} m = {u.m} ({u.budget_label.split(',')[0]})"
            for units in ctx.inst_art.values() for u in units if u.state != "complete"]  # fmt: skip
    if left:
        out.append(
            f"Still running or queued in nano's instrument plan when its artifact was last written: {'; '.join(left)}."
        )
    return out


def prefix_closure(ctx) -> list:
    """Natural-text n50 with each length on its own beside the prefix-closed n50 (a failure at a prefix of a crammed
    passage counted as the success it is), and the slopes both ways."""
    rows, text, nonmono = [], [], []
    for name, art in ctx.real.artifacts.items():
        closed = CS.summarize(art, prefix_closure=True)
        plain = {u.uid: u for u in ctx.real.summaries[name]}
        for u in closed:
            p = plain[u.uid]
            if (
                u.kind != "natural"
                or u.state != "complete"
                or u.dtype != "float32"
                or u.fit is None
                or u.instrument.startswith("progressive")
            ):
                continue
            rows.append([name, u.m, p.budget_label, u.n_targets, n50_text(p), n50_text(u), f"{u.implied_successes} of {p.failures}",
                         f"{p.failures_at_cap}/{p.failures}" if p.failures else "no failure"])  # fmt: skip
            if p.fit.ok and not p.fit.monotone:
                nonmono.append(u.fit.monotone)
        pts, fit = CS.slopes(closed, BASE_STEPS, instrument="paper", dtype="float32").get("natural", ([], None))
        plain_fit = ctx.real.slopes.get((name, "natural"), (None,))[0]
        if fit is not None and plain_fit is not None:
            text.append(f"- **{name}, natural**, {BASE_STEPS} steps: slope {plain_fit.describe(1)} counting each length on "
                        f"its own, {fit.describe(1)} prefix-closed (closed n50 at m = {', '.join(str(u.m) for u in pts)}: "
                        f"{', '.join(f'{u.fit.n50:.1f}' for u in pts)}).")  # fmt: skip
    if not rows:
        return ["no complete float32 natural-text unit stored yet"]
    if nonmono:
        text.append(f"- Of the {len(nonmono)} rows whose rates were not monotone in n, {sum(nonmono)} are monotone once "
                    "closed" + (": every dip was the optimiser failing on passages it crammed at longer lengths."
                                if all(nonmono) else "."))  # fmt: skip
    return [md_table(["model", "m", "budget, instrument", "targets a length", "n50 [95 % CI], each length on its own",
                      "n50 [95 % CI], prefix-closed", "failures counted as successes (of all failures)",
                      "failures at the step cap (each length on its own)"], rows),
            Markdown("\n".join(text) if text else "No natural-text slope to compare yet.")]  # fmt: skip


def _norms_by_m(art) -> dict:
    by_m, seen = {}, set()
    for u in art["units"]:
        inst = u.get("instrument", "paper")
        if u.get("dtype") != "float32" or inst.startswith("progressive"):  # progressive rows are horizons
            continue
        for r in u["outcomes"]:  # one crammed prompt once: 20-target units repeat the first 10
            key = (inst, u["kind"], u["m"], r["n"], r["target"], round(r.get("prompt_l2", 0.0), 6))
            if r.get("success") and "prompt_l2" in r and key not in seen:
                seen.add(key)
                by_m.setdefault((inst, u["m"]), []).append((r["prompt_l2"], r["prompt_linf"]))
    return by_m


def prompt_norms(ctx) -> list:
    """Crammed prompt vectors' L2 norms per instrument and m, beside the input embeddings' and the largest ‖h‖₂."""
    rows, med = [], {}
    for name, art in ctx.real.artifacts.items():
        rad, h = ctx.real.radii.get(name), ctx.real.h_radii.get(name)
        for (inst, m), vals in sorted(_norms_by_m(art).items(), key=lambda kv: (kv[0][0] != "paper", kv[0])):
            l2 = np.array([v[0] for v in vals])
            med[name, inst, m] = float(np.median(l2))
            rows.append([name, inst, m, len(vals), f"{np.median(l2):.2f}", f"{l2.max():.2f}", f"{max(v[1] for v in vals):.2f}",
                         f"{rad['input_l2_median']:.2f} / {rad['input_l2_max']:.2f}" if rad else "–",
                         f"{h['l2']:.1f}" if h else "–"])  # fmt: skip
    if not rows:
        return [Markdown("No crammed prompt norms stored yet.")]
    out = [md_table(["model", "instrument", "m", "distinct crammed prompts", "‖prompt vector‖₂ median", "max",
                     "max |coordinate|", "input embeddings ‖·‖₂ median / max", "last layer: max ‖h‖₂"], rows)]  # fmt: skip
    out += [f"{n}: max ‖h‖₂ = {h['l2']:.2f}, max |coordinate| r∞ = {h['linf']:.2f}, over {h['sample']}"
            for n, h in ctx.real.h_radii.items()]  # fmt: skip
    reading = []
    for name in ctx.real.artifacts:
        rad, paper_ = ctx.real.radii.get(name), [v for (n, i, _), v in med.items() if n == name and i == "paper"]
        if not rad or not paper_:
            continue
        other = {i: v for (n, i, m), v in med.items() if n == name and i != "paper" and m == 1}
        h = ctx.real.h_radii.get(name)
        reading.append(f"- {name}: the authors' optimiser's crammed vectors have median norms {min(paper_):.2f}–{max(paper_):.2f} "
                       f"(input embeddings up to {rad['input_l2_max']:.2f})"
                       + (f", {h['l2'] / max(paper_):.0f}–{h['l2'] / min(paper_):.0f}× below the largest ‖h‖₂" if h else "")
                       + ("; at m = 1 " + ", ".join(f"{i} gives {v:.2f}" for i, v in sorted(other.items())) if other else "")
                       + ".")  # fmt: skip
    if reading:
        out.append(Markdown("\n".join(reading) + "\n\nThe prompts start near the input embeddings, and Adam moves each "
                            "coordinate by about the learning rate a step. So these norms say where the prompts found "
                            "were, not where forcing prompts must lie. The bound's r comes from h, not from the prompts."))  # fmt: skip
    return out
