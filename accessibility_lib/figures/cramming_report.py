"""Chapter 3's tables and sentences: the page's own runs, the bound, the paper's curves, the answer and its meaning.

Every function takes a :class:`~accessibility_lib.figures.cramming_context.CrammingContext` and returns page
items (``IPython.display.Markdown`` tables or text, or ``str`` printed notes) for
:func:`~accessibility_lib.figures.cramming_context.show`, or a dict of glued strings. The chapter shows the
compact forms; the lab notes the full ones. Units: n50 and lengths in tokens, slopes C and C_exp in tokens
per prompt vector. Sources: Cor 4.6 of Meyer et al. (2026) for C; the authors' replication data for their
curves (:mod:`accessibility_lib.theory.paper`).
"""

from __future__ import annotations

from IPython.display import Markdown

from accessibility_lib.figures.cramming_budgets import budget_condition, budget_trend
from accessibility_lib.figures.cramming_context import BASE_STEPS, at_cap
from accessibility_lib.figures.cramming_plots import KIND_LABEL, PAPER_NAMES
from accessibility_lib.figures.tables import md_table
from accessibility_lib.models.names import label
from accessibility_lib.runs import cramming_summary as CS
from accessibility_lib.runs import table1_measured
from accessibility_lib.theory import bounds, capacity, paper, precision

__all__ = [
    "own_runs_table",
    "own_slope_table",
    "bound_table",
    "paper_refit_table",
    "results_table",
    "answer",
    "meaning",
    "natural_vs_random",
    "ball_C",
    "budget_trend",
    "budget_condition",
    "pooled_coverage",
    "larger_budget_slopes",
    "exercise_values",
    "three_nano_runs",
    "page_prose",
    "lab_summary",
    "MARKDOWN_GLUES",
]

N50_HEAD = "n50 [95 % CI] (tokens)"

#: The chapter's glued strings that are Markdown (sentences with roles), not plain text.
MARKDOWN_GLUES = ("cram_answer", "cram_live", "cram_gemma")


def ball_C(d: int, d_vocab: int) -> float:
    """The ball bound C under ``rinf_fp16`` (2r/ε = 4096, the authors' code): d·ln 4097 / ln|V|, tokens per vector."""
    return bounds.ball_slope(d, 1.0, 2.0 / 4096, d_vocab)


def own_runs_table(ctx, full: bool = False) -> list:
    """The page's own runs, one row a (kind, m): n50 and, with ``full``, R², the counts at each length and the cost.

    Raises:
        KeyError: a (kind, m) of the parameters without a run in ``ctx.runs``.
    """
    p = ctx.params
    rows = []
    for (kind, m), r in ctx.runs.items():
        cap = at_cap(r, p["max_steps"])
        if not full:
            rows.append([kind, m, r.fit.describe(), cap])
            continue
        # R² tests the logistic's shape only with lengths to spare beyond its two parameters
        r2 = ("–" if not r.fit.ok else f"– ({len(r.lengths)} lengths: too few to test the shape)" if len(r.lengths) < 4
              else "– (steepness at its cap)" if r.fit.capped_at is not None else f"{r.fit.r_squared:.2f}")  # fmt: skip
        counts = ", ".join(f"{int(n)}: {int(round(q * t))}/{int(t)}" for n, q, t in zip(r.lengths, r.rates, r.trials))
        rows.append([kind, m, r.fit.describe(), r2, counts, cap, f"{r.token_steps:,}"])
    cap_head = f"failed trials that ran all {p['max_steps']} steps / all failed trials"
    head = ["target kind", "m", N50_HEAD]
    head += ["R² of the sigmoid", "crammed at each length tried", cap_head, "token-steps"] if full else [cap_head]
    note = Markdown(
        f"In the last column, k/f means that k of the search's f failed trials ran the whole budget of "
        f"{p['max_steps']} steps. The other f − k stopped early, after {p['patience']} steps without improvement. "
        "For natural text, one passage is tried at several lengths, so its outcomes are not independent. The "
        "natural-text interval counts each passage once ({ref}`sec-passage-intervals`)."
    )
    return [md_table(head, rows), note]


def page_prose(ctx) -> dict:
    """The chapter's glued paragraphs: ``cram_live`` (the live runs are on the page's own model, the real models
    follow) and ``cram_gemma`` (Gemma-3-270M's slope and radius beside the paper's; "" without its stored runs)."""
    name = ctx.params["model_name"]
    own = "the book's small model `nano`" if name == "nano" else label(name)
    head = _headline_slope(ctx)
    live = (f"The results in this part are live runs on {own} (d = {ctx.handle.d_model}, |V| = "
            f"{ctx.handle.d_vocab:,}), executed when the page builds. They show the method at work")  # fmt: skip
    live += f"; the answer above is about {label(head[0])}." if head and head[0] != name else "."
    return {"cram_live": live, "cram_gemma": _gemma_paragraph(ctx)}


def _gemma_paragraph(ctx) -> str:
    g = "gemma-3-270m"
    s_pts = ctx.real.slopes.get((g, "natural"))
    if s_pts is None or not s_pts[0].reliable:
        return ""
    s, steps = s_pts[0], s_pts[1][0].max_steps
    theirs = paper.MEASURED_SLOPES["Gemma-3-270m"][0]
    text = (f"**Gemma-3-270M** is one of the paper's models. Our natural-text slope at {steps:,} steps is "
            f"{s.describe(1)} tokens per vector. The paper reports {theirs:.2f} at "
            f"{paper.AUTHORS_CRAMMING_STEPS['max_steps']:,} steps. The budget, the text, the 4-bit weights and the "
            "loop all differ, so the two are not like for like ({ref}`sec-cramming-gemma-authors` lists each "
            "difference).")  # fmt: skip
    radii = ctx.real.h_radii.get(g)
    if radii:
        pm = paper.models()["Gemma-3-270m"]
        text += (f" Its last-layer embeddings reach r∞ ≈ {radii['linf']:.0f} in our runs, against {pm.r_inf:g} in the "
                 "authors' list. The gap is unexplained ({ref}`lab-support-gemma` sets out what was checked). Under "
                 "`rinf_fp16`, ε is tied to r∞, so the gap does not move C here.")  # fmt: skip
    return text


def own_slope_table(ctx) -> list:
    """The slope C_exp of the page's own n50 against m, per kind, with the edge notes of its points."""
    rows = [[k, s.describe(), f"{s.intercept:.2f}", f"{s.r_squared:.3f}", s.n_points] for k, s in ctx.slopes.items()]
    if not rows:
        return [Markdown("Fewer than two prompt lengths with a bracketed n50: no slope (run a preset with more m).")]
    out = [md_table(["target kind", "C_exp (tokens/vector) [95 % CI]", "intercept", "R²", "points"], rows)]
    for k, pts in ctx.slope_points.items():
        if edges := CS.edge_notes_of(pts):
            out.append(f"{k}: " + "; ".join(edges) + ".")
    if ctx.params["model_name"] == "nano":
        out.append(Markdown("These are this page's own runs. {doc}`Chapter 7 <07_precision>` fits nano's slopes to a "
                            "separate stored run, so its numbers differ from these."))  # fmt: skip
    return out


def bound_table(ctx) -> list:
    """The ball bound C of the page's model under every ε convention, with C / C_exp for each reliable slope.

    The page's ``eps_convention`` is in bold. Radii r₂ (largest L2 norm) and r∞ (largest coordinate) of the
    last-layer embeddings over random prompts (:func:`~accessibility_lib.figures.cramming_context.gather`).
    """
    p = ctx.params
    rows = []
    for name, conv in precision.CONVENTIONS.items():
        r_used, eps = conv.ball(ctx.r_l2, ctx.r_inf)
        C = ctx.C_by_conv[name]
        ratio = [f"{C / ctx.slopes[k].slope:.1f} [{C / ctx.slopes[k].ci[1]:.1f}, {C / ctx.slopes[k].ci[0]:.1f}]"
                 if k in ctx.slopes and ctx.slopes[k].reliable else "– (no reliable slope)" for k in p["kinds"]]  # fmt: skip
        label = f"**{name}**" if name == p["eps_convention"] else name
        rows.append([label, f"{r_used:.4g}", f"{eps:.4g}", f"{2 * r_used / eps:.4g}", f"{C:.1f}", *ratio])
    note = (f"{p['n_embed_prompts']} random prompts of {p['embed_length']} tokens: r₂ (largest L2 norm) = "
            f"{ctx.r_l2:.3f}, r∞ (largest coordinate) = {ctx.r_inf:.3f}. Both are maxima over a sample, so they grow "
            "with it.")  # fmt: skip
    return [note, md_table(["ε convention", "r", "ε", "2r/ε", "C (ball, tokens/vector)",
                            *[f"C / C_exp ({k}) [95 %]" for k in p["kinds"]]], rows)]  # fmt: skip


def paper_refit_table(ctx) -> list:
    """The authors' curves re-fitted: n50 per m, our slope beside the paper's, and the isotonic and interval notes."""
    rows, iso_notes = [], []
    for (model, kind), (fits, s) in ctx.refit.items():
        n50s = ", ".join(fits[m].describe(0, note=False) + ("" if fits[m].monotone else " †") for m in sorted(fits))
        iso = [f"m = {m}: {fits[m].isotonic_n50:.0f}" for m in sorted(fits) if not fits[m].monotone]
        if iso:
            iso_notes.append(f"{PAPER_NAMES[model]}, {KIND_LABEL.get(kind, kind)}: " + ", ".join(iso))
        reported = paper.MEASURED_SLOPES[PAPER_NAMES[model]][0 if kind == "natural" else 1]
        rows.append([PAPER_NAMES[model], KIND_LABEL.get(kind, kind), n50s, s.describe(), f"{s.r_squared:.4f}",
                     f"{reported:.2f}", f"{min(f.r_squared for f in fits.values() if f.ok):.3f}"])  # fmt: skip
    steps = paper.AUTHORS_CRAMMING_STEPS
    out = [md_table(["model", "target kind", f"our n50 for m = 1..5 [95 % CI] (their {steps['max_steps']} steps, "
                     f"patience {steps['patience']})", "our re-fit slope [95 % CI]", "our R²", "paper's slope",
                     "min sigmoid R²"], rows)]  # fmt: skip
    if iso_notes:
        out.append("† Success rates not monotone in n. The isotonic (monotone-regression) crossing of ½ instead: "
                   + "; ".join(iso_notes) + ".")  # fmt: skip
    cover = pooled_coverage(ctx)
    out.append("These intervals count every outcome as independent. The PG19 targets share passages across lengths, and "
               "the published curves give rates, not per-passage outcomes. So the natural-text intervals, and the slope "
               "intervals built from them, are too narrow"
               + (f": such pooled intervals covered the true n50 in only {cover} of the simulated experiments of the lab "
                  "notes." if cover else "."))  # fmt: skip
    return out


def pooled_coverage(ctx) -> str:
    """``"51–58 %"``: how often pooled profile intervals on shared passages covered the true n50 in the stored
    simulations (``passage_intervals`` benchmark, grid design); ``""`` without that benchmark."""
    pi = ctx.bench.get("passage_intervals") or {}
    pooled = [r["profile_coverage"] for r in pi.get("rows", []) if r["design"] == "grid" and r["passages"] == "shared"]
    return f"{100 * min(pooled):.0f}–{100 * max(pooled):.0f} %" if pooled else ""


def larger_budget_slopes(ctx, name: str, kind: str = "natural") -> dict:
    """Budget (steps) -> the SlopeFit of ``name``'s ``kind`` at every complete budget above the base budget
    (m = 1–4 complete, :func:`accessibility_lib.runs.table1_measured.slopes_by_budget`)."""
    by = table1_measured.slopes_by_budget(name, kinds=(kind,), summaries=ctx.real.summaries[name])
    return {b: got[kind].fit for b, got in by.items() if b > BASE_STEPS and kind in got}


def _ratio(C, fit) -> str:
    if fit is None or not fit.reliable:
        return "– (no reliable slope)"
    r, (lo, hi) = table1_measured.ratio(C, fit)
    return f"{r:.1f} [{lo:.1f}, {hi:.1f}]"


def results_table(ctx) -> list:
    """One row a series and kind: the measured slope C_exp, the ball bound C (``rinf_fp16``) and C / C_exp.

    Series: the paper's two published curves (re-fitted; the natural-text rows marked ‡, their intervals too
    narrow), each real model's stored runs at the base budget and at every larger budget with m = 1–4 complete,
    and the page's own runs. The paper's reported slope is given where the model is one of the paper's.
    """
    rows = []
    for (model, kind), (_, s) in ctx.refit.items():
        shape = capacity.read_shape(PAPER_NAMES[model])
        C = ball_C(shape.d_model, shape.d_vocab)
        theirs = paper.MEASURED_SLOPES[PAPER_NAMES[model]][0 if kind == "natural" else 1]
        mark = " ‡" if kind == "natural" else ""
        rows.append([f"{PAPER_NAMES[model]} (authors' curves, re-fitted)", KIND_LABEL.get(kind, kind),
                     s.describe(1) + mark, f"{C:.0f}", _ratio(C, s) + mark, f"{theirs:.2f}"])  # fmt: skip
    for (name, kind), (s, pts) in sorted(ctx.real.slopes.items(), key=lambda kv: ctx.real.names.index(kv[0][0])):
        shape = ctx.real.shapes[name]
        C = ball_C(shape.d_model, shape.d_vocab)
        col = next((v for v in paper.MEASURED_SLOPES if v.lower() == name.lower()), None)
        theirs = paper.MEASURED_SLOPES[col][0 if kind == "natural" else 1] if col and kind != "random_tokens" else None
        more = larger_budget_slopes(ctx, name, kind) if kind != "random_tokens" else {}
        for steps, fit in [(pts[0].max_steps, s), *more.items()]:
            rows.append([f"{label(name)} (stored runs, {steps:,} steps)", kind.replace("_", " "), fit.describe(1),
                         f"{C:.0f}", _ratio(C, fit), "–" if theirs is None else f"{theirs:.2f}"])  # fmt: skip
    C_own = ctx.C_by_conv["rinf_fp16"]
    for kind, s in ctx.slopes.items():
        rows.append([f"{label(ctx.params['model_name'])} (this page's runs, {ctx.params['max_steps']:,} steps)",
                     kind.replace("_", " "), s.describe(1), f"{C_own:.0f}", _ratio(C_own, s), "–"])  # fmt: skip
    cover = pooled_coverage(ctx)
    note = Markdown(
        "Each slope's interval is the Student-t interval of an ordinary least-squares line through the n50 points "
        "(with k values of m, k − 2 degrees of freedom). Where a line weighted by the n50 intervals gives a wider normal "
        "interval, the wider one is printed. "
        "‡ The natural-text intervals of the authors' curves count every outcome as independent, so they are too "
        + (f"narrow: such intervals covered the true n50 in only {cover} of simulations" if cover else "narrow")
        + " ({ref}`sec-passage-intervals`). "
        "The ratios take 2r/ε = 4096 for every model, not the larger 2r/ε each of Table 1's columns implies. So "
        "they are smaller than the paper's for the same slope. The paper's slopes come from their own runs: PG19 "
        f"text and {paper.AUTHORS_CRAMMING_STEPS['max_steps']:,} steps a target. The stored runs differ in the text, "
        "the budget and the weights ({ref}`sec-cramming-gemma-authors`). They also differ in the loop's initial "
        "prompt, patience rule and success test ({ref}`sec-cramming-loop`). No ratio is taken of an unreliable slope."
    )
    return [md_table(["model (source)", "target kind", "C_exp [95 % CI] (tokens/vector)", "C (ball, rinf_fp16)",
                      "C / C_exp [95 %]", "paper's slope"], rows), note]  # fmt: skip


def _headline_steps(ctx, name) -> int:
    """The step budget of the headline model's natural-text slope units."""
    return ctx.real.slopes[name, "natural"][1][0].max_steps


def _headline_slope(ctx):
    """The first real model (smallest first) with a reliable natural-text slope, else None."""
    for name in ctx.real.names:
        s_pts = ctx.real.slopes.get((name, "natural"))
        if s_pts and s_pts[0].reliable:
            return name, s_pts[0]
    return None


def answer(ctx) -> dict:
    """The opening box's glued strings: ``cram_answer`` (a few sentences with the real-model slope and its ratio to
    the bound at the base budget and at every larger complete budget), ``base_steps``, the authors' budget
    ``authors_steps``, and the trust box's ``budget_trend`` and ``budget_condition``."""
    out = {"base_steps": f"{BASE_STEPS}", "authors_steps": f"{paper.AUTHORS_CRAMMING_STEPS['max_steps']:,}"}
    out["budget_trend"] = budget_trend(ctx) or "No budget curve is stored yet."
    out["budget_condition"] = budget_condition(ctx)
    head = _headline_slope(ctx)
    if head is None:
        out["cram_answer"] = ("No real-model slope is stored yet, so the answer rests on the paper's curves: "
                              "n50 grows linearly in m, far below the bound.")  # fmt: skip
        return out
    name, s = head
    shape = ctx.real.shapes[name]
    C = ball_C(shape.d_model, shape.d_vocab)
    r, (lo, hi) = table1_measured.ratio(C, s)
    text = (f"On {label(name)}, with {_headline_steps(ctx, name)} optimiser steps a target, each prompt vector crams "
            f"about {s.slope:.1f} tokens of natural text (95 % interval {s.ci[0]:.1f} to {s.ci[1]:.1f}). The bound "
            f"allows C = {C:.0f} tokens per vector, about {r:.0f} times more ({lo:.0f} to {hi:.0f}).")  # fmt: skip
    for steps, fit in larger_budget_slopes(ctx, name).items():
        if fit.reliable:
            r2, (lo2, hi2) = table1_measured.ratio(C, fit)
            text += (f" With {steps:,} steps it crams {fit.slope:.1f} ({fit.ci[0]:.1f} to {fit.ci[1]:.1f}), and the "
                     f"bound is about {r2:.0f} times more ({lo2:.0f} to {hi2:.0f}).")  # fmt: skip
    out["cram_answer"] = text + f" The authors' runs had {out['authors_steps']} steps a target."
    return out


def meaning(ctx) -> list:
    """ "What it means" as at most five points, each a few short sentences built from the page's numbers."""
    pts = []
    pyth = ctx.refit.get(("EleutherAI_pythia-160m", "natural"))
    if pyth is not None:
        s, rw = pyth[1], ctx.refit[("EleutherAI_pythia-160m", "random")][1]
        pts.append(f"**n50 grows linearly in m.** The paper's own curves give a straight line. Pythia-160M's "
                   f"natural-text slope re-fits to {s.slope:.1f} tokens per vector (the paper reports "
                   f"{paper.MEASURED_SLOPES['Pythia-160M'][0]:.2f}). Linearity is a measurement: for natural text the "
                   "corollary caps nothing.")  # fmt: skip
        pts.append(
            f"**Natural text crams further than random words.** On Pythia-160M the ratio of the two slopes is "
            f"{s.slope / rw.slope:.1f}. The model's weights already predict most of a natural sentence."
        )
    head = _headline_slope(ctx)
    if head is not None:
        name, s = head
        C = ball_C(ctx.real.shapes[name].d_model, ctx.real.shapes[name].d_vocab)
        more = "".join(f" At {b:,} steps it is {C / f.slope:.0f} times." for b, f in larger_budget_slopes(ctx, name).items()
                       if f.reliable)  # fmt: skip
        pts.append(f"**Real models sit far below the bound.** On {label(name)} at {_headline_steps(ctx, name)} steps a "
                   f"target, the ball bound is {C / s.slope:.0f} times the measured slope.{more}")  # fmt: skip
    tok = next(((n, u) for n in ctx.real.names for u in ctx.real.summaries[n]
                if (u.kind, u.m, u.max_steps, u.instrument, u.dtype, u.state)
                == ("random_tokens", 1, BASE_STEPS, "paper", "float32", "complete") and u.fit is not None and u.fit.ok), None)  # fmt: skip
    if tok is not None:
        name, u = tok
        C = ball_C(ctx.real.shapes[name].d_model, ctx.real.shapes[name].d_vocab)
        pts.append(
            f"**Random tokens are the one kind the corollary caps.** On {label(name)} at m = 1 and {u.max_steps} steps "
            f"they cram to {u.fit.n50:.1f} tokens. The cap C·m at m = 1 is {C:.0f} tokens, {C / u.fit.n50:.0f} times more."
        )
    pts.append("**Three things narrow the gap, and this chapter does not split it.** The search and its step budget "
               "may miss prompts that exist. The embeddings fill an ellipsoid, not a ball. The greedy map's cells are "
               "large for frequent tokens and tiny for rare ones. {doc}`Chapter 5 <05_support>` gives each "
               "refinement's C.")  # fmt: skip
    return [Markdown("\n".join(f"{i}. {p}" for i, p in enumerate(pts[:5], 1)))]


def natural_vs_random(ctx) -> list:
    """The page's own n50 per kind at each m beside the paper's re-fit slopes (natural, random words)."""
    p = ctx.params
    rows = []
    for m in p["ms"]:
        per = [ctx.runs.get((k, m)) for k in p["kinds"]]
        if any(r is None for r in per):
            continue
        rows.append([f"{p['model_name']}, m = {m}",
                     f"n50 (tokens; {p['max_steps']} steps, patience {p['patience']}; failures at the cap)",
                     *[f"{r.fit.describe()}; {at_cap(r, p['max_steps'])}" for r in per]])  # fmt: skip
    for (model, kind), (_, s) in ctx.refit.items():
        if kind == "natural":
            rows.append([f"paper's {PAPER_NAMES[model]}", "slope C_exp (tokens per vector), our re-fit of their "
                         f"{paper.AUTHORS_CRAMMING_STEPS['max_steps']}-step curves; natural (PG19) interval too narrow",
                         s.describe(1), ctx.refit[model, "random"][1].describe(1), *["–"] * (len(p["kinds"]) - 2)])  # fmt: skip
    return [md_table(["", "quantity", *p["kinds"]], rows)]


def exercise_values(ctx) -> dict:
    """The by-hand exercise's glued numbers: the headline model's d, |V|, natural slope, C under ``rinf_fp16`` and
    the ratio; the page's own model and slope where no real model has a reliable natural slope (``–`` without one)."""
    head = _headline_slope(ctx)
    if head is not None:
        name, s = head
        d, v = ctx.real.shapes[name].d_model, ctx.real.shapes[name].d_vocab
    else:
        name, s = ctx.params["model_name"], ctx.slopes.get("natural")
        d, v = ctx.handle.d_model, ctx.handle.d_vocab
    C = ball_C(d, v)
    ok = s is not None and s.reliable
    return {"ex_model": label(name), "ex_d": f"{d}", "ex_v": f"{v:,}", "ex_slope": f"{s.slope:.1f}" if ok else "–",
            "ex_C": f"{C:.1f}", "ex_ratio": f"{C / s.slope:.0f}" if ok else "–"}  # fmt: skip


def three_nano_runs(ctx) -> list:
    """nano's natural n50 at m = 1 from the three runs that measure it: the page's own, the search benchmark's
    sequential replay and the instrument comparison's ``paper`` row, and whether their intervals share a range.

    Empty unless the page runs ``nano`` and the benchmark and instrument artifact are stored.
    """
    bench = ctx.bench["search"].get("nano")
    if ctx.params["model_name"] != "nano" or ("natural", 1) not in ctx.runs or not bench or "nano" not in ctx.inst_art:
        return []
    own = ctx.runs["natural", 1].fit
    b = next((r for r in bench["rows"] if r["kind"] == "natural" and r["m"] == 1), None)
    i = next((u for u in ctx.inst_art["nano"] if (u.kind, u.m, u.instrument, u.max_steps, u.state)
              == ("natural", 1, "paper", BASE_STEPS, "complete")), None)  # fmt: skip
    if b is None or i is None or i.fit is None:
        return []
    patience = bench["command"].split("--patience ")[1].split()[0] if "--patience " in bench["command"] else "none"
    cis = [own.ci, tuple(b["sequential"]["ci"]), i.fit.ci]
    overlap = max(c[0] for c in cis) <= min(c[1] for c in cis)
    return [Markdown(
        "nano's natural n50 at m = 1 from three runs, all with the authors' optimiser on the same held-out "
        "windows:\n\n"
        f"- this page's own ({ctx.params['n_targets']} targets a length, {ctx.params['max_steps']} steps, patience "
        f"{ctx.params['patience']}): "
        f"{own.describe()};\n"
        f"- the search benchmark's sequential design ({max(b['sequential']['trials'])} targets, {BASE_STEPS} steps, "
        f"patience {patience}): "
        f"{b['sequential']['describe']};\n"
        f"- the instrument comparison's paper row ({i.n_targets} targets, {BASE_STEPS} steps, no patience): "
        f"{i.fit.describe()}.\n\n"
        "They differ in target count, budget and patience. Their intervals "
        + ("share a common range." if overlap else "do not all overlap.")
    )]  # fmt: skip


def lab_summary(ctx) -> str:
    """The lab notes' opening box: at most five bullets, each a key number and the chapter 3 claim it supports,
    with links (MyST); bullets whose inputs are missing are left out."""
    ch3, out = "{doc}`chapter 3 <03_cramming>`", []
    head = _headline_slope(ctx)
    if head is not None:
        name, s = head
        more = "".join(f", {f.describe(1)} at {b:,}" for b, f in larger_budget_slopes(ctx, name).items() if f.reliable)
        out.append(f"{label(name)}'s natural-text slope: {s.describe(1)} tokens per vector at "
                   f"{_headline_steps(ctx, name):,} steps{more}. It is {ch3}'s answer ({{ref}}`sec-cramming-budgets`).")  # fmt: skip
    pyth = ctx.refit.get(("EleutherAI_pythia-160m", "natural"))
    if pyth is not None:
        out.append(f"Our re-fit of the authors' Pythia-160M curves: {pyth[1].slope:.1f} tokens per vector, against the "
                   f"paper's {paper.MEASURED_SLOPES['Pythia-160M'][0]:.2f}. It supports {ch3}'s linear growth of n50.")  # fmt: skip
    if cover := pooled_coverage(ctx):
        out.append(f"Pooled intervals on shared passages covered the true n50 in only {cover} of simulations. Hence "
                   f"{ch3}'s ‡ on the paper's natural-text intervals ({{ref}}`sec-passage-intervals`).")  # fmt: skip
    if _gemma_paragraph(ctx):
        s = ctx.real.slopes["gemma-3-270m", "natural"][0]
        out.append(f"Gemma-3-270M's natural-text slope: {s.describe(1)} here, "
                   f"{paper.MEASURED_SLOPES['Gemma-3-270m'][0]:.2f} in the paper. {ch3} sets them side by side; the "
                   "differences are listed in {ref}`sec-cramming-gemma-authors`.")  # fmt: skip
    return "\n".join(f"- {line}" for line in out[:5])
