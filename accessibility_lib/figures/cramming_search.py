"""What an n50 search costs: the stored search benchmarks, the design simulation, the design bound, the trial.

Stored results under ``book/data/cramming/benchmarks``: ``search_<model>.json`` (``benchmarks/bench_n50_search.py``:
the bisection, the sequential design and the sequential design held to the bisection's width on the same
targets), ``design_sim.json`` (``bench_n50_design_sim.py``: many simulated searches calibrated to stored units),
``design_bound.json`` (``bench_n50_design_bound.py``: the c-optimal lower bound on token-steps at a given
RMSE, :mod:`accessibility_lib.experiments.n50_bound`). Costs are token-steps (optimiser steps × input
positions, summed over a search's outcomes), comparable between designs on one model only. Returns page
items for :func:`~accessibility_lib.figures.cramming_context.show`.
"""

from __future__ import annotations

import numpy as np
from IPython.display import Markdown

from accessibility_lib.figures.cramming_context import BASE_STEPS
from accessibility_lib.figures.tables import md_table
from accessibility_lib.runs import cramming_artifacts as CA
from accessibility_lib.runs import cramming_summary as CS

__all__ = ["search_benchmark", "design_simulation", "design_bound", "trial_stop", "times", "pooled_saving"]


def times(x: float) -> str:
    """A cost ratio bisection ÷ other in words.

    >>> times(2.0), times(0.5)
    ('2.00 times cheaper', '2.00 times dearer')
    """
    return f"{x:.2f} times cheaper" if x >= 1 else f"{1 / x:.2f} times dearer"


def _held_ok(r) -> bool:  # the held search reached a measured width no wider than the bisection's
    h = r.get("matched")
    return bool(h and h.get("width_reached", h["ci"][1] - h["ci"][0] <= h["max_width"]))


def _unit(r) -> str:
    return f"{r['model']}, {r['kind'].replace('_', ' ')}, m = {r['m']}"


class _Notes:
    def __init__(self):
        self.lines = []

    def cell(self, r, design, d) -> str:  # n50 [CI] (cap k/f); the fit's shape note as a numbered footnote
        text, _, note = d["describe"].partition(" — ")
        if "failures_at_cap" in d:
            text += (f" (cap {d['failures_at_cap']}/{d['failures']}" + ("*" if "no patience" in r["budget"] else "") + ")"
                     if d["failures"] else " (no failure)")  # fmt: skip
        if note:
            self.lines.append(f"[{len(self.lines) + 1}] {_unit(r)}, {design}: {note}")
            text += f" [{len(self.lines)}]"
        return text


def _held_row(r, h, notes) -> list:
    width = h["ci"][1] - h["ci"][0]
    reached = h.get("width_reached", width <= h["max_width"])
    why = [w for w, hit in (("wider", width > h["max_width"]), ("an end extrapolated", "extrapolated" in h["describe"]),
                            ("steepness at its cap", "at its cap" in h["describe"])) if hit]  # fmt: skip
    why = "" if reached else f" (not reached: {', '.join(why) or 'not a measured width'})"
    nd = next((k for k in (1, 2) if f"{width:.{k}f}" != f"{h['max_width']:.{k}f}"), 3)  # digits to tell apart
    return [r["model"], r["kind"].replace("_", " "), r["m"], f"{h['max_width']:.{nd}f}", f"{width:.{nd}f}" + why,
            notes.cell(r, "held", h), f"{h['token_steps']:,}", f"{h['ratio']:.2f}" + ("" if reached else " (unequal widths)"),
            "yes" if h["n50_inside_bisect_interval"] else "no"]  # fmt: skip


def _tried(d) -> str:  # "3, 4, 6 (10 targets each)" or "2 (5), 3 (10), ..."
    ts = set(d["trials"])
    return (", ".join(map(str, d["lengths"])) + f" ({ts.pop()} targets each)" if len(ts) == 1 else
            ", ".join(f"{n} ({t})" for n, t in zip(d["lengths"], d["trials"])))  # fmt: skip


def _per_model(model, data) -> str:
    rows = data["rows"]
    by_m = {}
    for r in rows:
        by_m.setdefault(r["m"], []).append(r)
    per_m = "; ".join(f"m = {m}: {times(sum(r['bisect']['token_steps'] for r in rs) / sum(r['sequential']['token_steps'] for r in rs))}"
                      for m, rs in sorted(by_m.items()))  # fmt: skip
    widths = "; ".join(f"{r['kind'].replace('_', ' ')} m = {r['m']}: sequential {r['sequential']['ci'][1] - r['sequential']['ci'][0]:.1f}, "
                       f"bisection {r['bisect']['ci'][1] - r['bisect']['ci'][0]:.1f}" for r in rows)  # fmt: skip
    steered = any(r.get("prefer_stored", True) for r in rows)  # the first benchmarks let stored lengths steer
    mode = ("each design taking stored lengths in place of its own choices" if steered else
            "each design choosing its lengths as on an empty store")  # fmt: skip
    out = [f"{model} ({mode}; {data['machine']}, {data['date']}" + ("" if data.get("complete", True) else "; still running")
           + "):", f"  The sequential design was {times(data['ratio_total'])} in total ({per_m}).",
           f"  Interval widths (tokens): {widths}."]  # fmt: skip
    ok = [r for r in rows if _held_ok(r)]
    if ok:
        b, h = sum(r["bisect"]["token_steps"] for r in ok), sum(r["matched"]["token_steps"] for r in ok)
        out.append(f"  Held to the bisection's width, it got there in {len(ok)} of {len(rows)} searches and was {times(b / h)} "
                   "on those (" + "; ".join(f"{r['kind'].replace('_', ' ')} m = {r['m']}: {times(r['matched']['ratio'])}"
                                            for r in ok) + ").")  # fmt: skip
    wide = [r for r in ok if "extrapolated" in r["bisect"]["describe"]]
    if wide:
        out.append("  " + "; ".join(f"{r['kind'].replace('_', ' ')} m = {r['m']} (bisection {r['matched']['max_width']:.1f} tokens "
                                    f"wide, held {r['matched']['ci'][1] - r['matched']['ci'][0]:.1f})" for r in wide)
                   + ": the bisection's interval is extrapolated past its lengths, which widens it and flatters the "
                   "sequential design.")  # fmt: skip
    return "\n".join(out)


def search_benchmark(ctx) -> list:
    """The bisection against the sequential design (and the sequential design held to the bisection's width) on the
    same targets, per stored model: n50s, token-steps, ratios, footnotes, lengths tried and per-model totals."""
    bench = ctx.bench["search"]
    if not bench:
        return ["no search benchmark stored yet: python benchmarks/bench_n50_search.py --json ..."]
    notes, rows, held = _Notes(), [], []
    for data in bench.values():
        for r in data["rows"]:
            b, q = r["bisect"], r["sequential"]
            rows.append([r["model"], r["kind"].replace("_", " "), r["m"], notes.cell(r, "bisection", b), f"{b['token_steps']:,}",
                         notes.cell(r, "sequential", q), f"{q['token_steps']:,}", f"{r['ratio']:.2f}",
                         "yes" if r["sequential_n50_inside_bisect_interval"] else "no"])  # fmt: skip
            if r.get("matched"):
                held.append(_held_row(r, r["matched"], notes))
    head = []
    for model, data in bench.items():
        ok = [r for r in data["rows"] if _held_ok(r)]
        if ok:
            flat = [r for r in ok if "extrapolated" in r["bisect"]["describe"]]
            ratio = sum(r["bisect"]["token_steps"] for r in ok) / sum(r["matched"]["token_steps"] for r in ok)
            head.append(f"- {model}: {times(ratio)} at equal width ({len(ok)} of {len(data['rows'])} searches reached it"
                        + (f"; {len(flat)} against an extrapolated bisection interval, which flatters the sequential "
                           "design" if flat else "") + f"); {times(data['ratio_total'])} in total without holding it.")  # fmt: skip
    budgets = sorted({f"{d['rows'][0]['model']}: {d['rows'][0]['budget']}" for d in bench.values()})
    out = []
    if head:
        out.append(Markdown("The sequential design against the bisection, one run each:\n\n" + "\n".join(head)))
    out.append(Markdown(
        "Budgets: " + "; ".join(budgets) + ". Ratio: bisection ÷ sequential token-steps (above 1: the sequential design "
        "was cheaper). \"cap k/f\": k of the search's f failures ran the whole step budget. Marked *, a budget with no "
        "patience, where k = f by construction."))  # fmt: skip
    out.append(md_table(["model", "target kind", "m", "bisection: n50 [95 % CI]", "bisection token-steps",
                         "sequential: n50 [95 % CI]", "sequential token-steps", "ratio", "in the bisection's CI"], rows))  # fmt: skip
    if held:
        out.append(md_table(["model", "target kind", "m", "bisection's width (tokens)", "final width (tokens)",
                             "held: n50 [95 % CI]", "held token-steps", "ratio (bisection ÷ held)",
                             "in the bisection's CI"], held))  # fmt: skip
    out.append("\n".join(notes.lines))
    out.append(
        "Lengths tried (targets):\n"
        + "\n".join(
            f"  {_unit(r)}: bisection {_tried(r['bisect'])}; sequential {_tried(r['sequential'])}"
            + (f"; held {_tried(r['matched'])}" if r.get("matched") else "")
            for data in bench.values()
            for r in data["rows"]
        )
    )
    out.extend(_per_model(model, data) for model, data in bench.items())
    return out


def _best(r):
    return max(
        (v["ratio_of_means"], k) for k, v in r["designs"].items() if "oracle" not in k and "bisection's width" not in k
    )


def design_simulation(ctx) -> list:
    """Each design's mean cost, coverage and width over many simulated searches calibrated to stored units."""
    sim = ctx.bench.get("design_sim")
    if sim is None:
        return ["no design simulation stored yet: python benchmarks/bench_n50_design_sim.py --json "
                "book/data/cramming/benchmarks/design_sim.json"]  # fmt: skip
    designs = list(sim["rows"][0]["designs"]) if sim["rows"] else []
    out = [md_table(["calibrated on", "steepness k (per token)", "bisection: token-steps", "coverage",
                     "median CI width (tokens)", "sequential: bisection ÷ sequential cost", "coverage",
                     "median CI width (tokens)"],
                    [[_unit(r), f"{r['steepness']:.2f}", f"{r['bisect_token_steps']:,.0f}", f"{100 * r['bisect_coverage']:.0f} %",
                      f"{r['bisect_median_width']:.1f}", f"{r['designs']['sequential']['ratio_of_means']:.2f}×",
                      f"{100 * r['designs']['sequential']['coverage']:.0f} %", f"{r['designs']['sequential']['median_width']:.1f}"]
                     for r in sim["rows"]])]  # fmt: skip
    held = [v for v in designs if "bisection's width" in v]
    others = [v for v in designs if v != "sequential" and v not in held]
    out.append(md_table(["calibrated on", *[v.replace("sequential, ", "") + ": fewer token-steps (coverage)" for v in others]],
                        [[_unit(r), *[f"{r['designs'][v]['ratio_of_means']:.2f}× ({100 * r['designs'][v]['coverage']:.0f} %)"
                                      for v in others]] for r in sim["rows"]]))  # fmt: skip
    if held:  # held to the bisection's width: the comparison at identical widths, where the width is reached
        short = {v: "held" if "bracket_alpha" not in v else "held, bracket_alpha 0.2" for v in held}
        out.append(md_table(["calibrated on", *[f"{short[v]}: fewer token-steps (coverage; width reached)" for v in held]],
                            [[_unit(r), *[f"{r['designs'][v]['ratio_of_means']:.2f}× ({100 * r['designs'][v]['coverage']:.0f} %; "
                                          f"{100 * (r['designs'][v].get('width_reached') or 0):.0f} %)" for v in held]]
                             for r in sim["rows"]]))  # fmt: skip
    seq = [(r, r["designs"]["sequential"]) for r in sim["rows"]]
    first = [d["ratio_of_means"] for r, d in seq if r["m"] == 1]
    later = [d["ratio_of_means"] for r, d in seq if r["m"] > 1]
    cover, cover_b = [d["coverage"] for _, d in seq], [r["bisect_coverage"] for r in sim["rows"]]
    say = [f"- {sim['reps']} simulated searches a row, {sim['n_targets']} targets a length.",
           f"- At the first m the sequential design costs {min(first):.2f}–{max(first):.2f}× fewer token-steps than the "
           "bisection (no prediction: it climbs from the shortest lengths)."]  # fmt: skip
    if later:
        say.append(f"- At later m it costs {min(later):.2f}–{max(later):.2f}× fewer (started from the line through "
                   "the n50s before).")  # fmt: skip
    say.append(
        f"- Its 95 % intervals cover the true n50 in {100 * min(cover):.0f}–{100 * max(cover):.0f} % of the "
        f"searches, the bisection's in {100 * min(cover_b):.0f}–{100 * max(cover_b):.0f} %."
    )
    flat = [(r, _best(r)) for r in sim["rows"] if r["model"] != "nano"]
    if flat:
        steep = [_best(r)[0] for r in sim["rows"] if r["model"] == "nano"]
        oracle = [r["designs"]["sequential, oracle start"]["ratio_of_means"] for r, _ in flat]
        say.append(f"- The cheapest simulated design of each real-model row saves {min(b[0] for _, b in flat):.2f}–"
                   f"{max(b[0] for _, b in flat):.2f}× (k = {min(r['steepness'] for r, _ in flat):.2f}–"
                   f"{max(r['steepness'] for r, _ in flat):.2f} per token), at its own accuracy, against "
                   + (f"{min(steep):.2f}–{max(steep):.2f}× on nano" if steep else "no nano row")
                   + f". Started at the true n50 it saves {min(oracle):.2f}–{max(oracle):.2f}×.")  # fmt: skip
        say.append(
            "- On curves this flat no simulated choice of lengths makes a search three times cheaper."
            if max(b[0] for _, b in flat) < 3
            else "- On some of these curves a choice of lengths saves three times or more."
        )
        if held:
            hr = [r["designs"][v] for r, _ in flat for v in held]
            say.append(f"- Held to the bisection's width, the sequential designs reach it in only "
                       f"{100 * min(d.get('width_reached') or 0 for d in hr):.0f}–{100 * max(d.get('width_reached') or 0 for d in hr):.0f} % "
                       f"of the real-model searches. They save {min(d['ratio_of_means'] for d in hr):.2f}–"
                       f"{max(d['ratio_of_means'] for d in hr):.2f}× and cover {100 * min(d['coverage'] for d in hr):.0f}–"
                       f"{100 * max(d['coverage'] for d in hr):.0f} % (±{100 * 1.96 * (0.95 * 0.05 / sim['reps']) ** 0.5:.0f} "
                       "points of sampling error).")  # fmt: skip
    out.append(Markdown("\n".join(say)))
    return out


def pooled_saving(rows, key: str, reps: int) -> str:
    """The bound's saving pooled over units: Σ bisection token-steps ÷ Σ (bisection token-steps ÷ saving), in words.

    A saving scales as the bisection's RMSE², estimated from ``reps`` simulated searches, so each unit's relative
    calibration interval (:func:`~accessibility_lib.experiments.n50_bound.efficiency_interval` at 1) is carried to
    the pooled value. The units' errors are independent, so this bracket is conservative.

    Args:
        rows: ``design_bound.json`` rows with ``bisect_token_steps`` and ``key`` (both > 0). key: a saving column,
            e.g. ``"max_saving"``. reps: the simulated searches behind each RMSE (≥ 2).

    Returns:
        ``"<saving>× [<low>, <high>]"``: the pooled saving and its approximate 95 % bracket (two decimals).

    Raises:
        ValueError: no rows, or reps < 2.

    >>> pooled_saving([{"bisect_token_steps": 2.0, "s": 2.0}, {"bisect_token_steps": 1.0, "s": 1.0}], "s", 100)
    '1.50× [1.16, 2.02]'
    """
    from accessibility_lib.experiments.n50_bound import efficiency_interval

    if not rows:
        raise ValueError(f"pooled_saving needs at least one design_bound row to pool {key!r}, got none")
    x = sum(r["bisect_token_steps"] for r in rows) / sum(r["bisect_token_steps"] / r[key] for r in rows)
    lo, hi = efficiency_interval(1.0, reps)
    return f"{x:.2f}× [{x / hi:.2f}, {x / lo:.2f}]"


_KIND = {"natural": "natural text"}  # a kind in prose; the others read as their names


def _kind(kind: str) -> str:
    return _KIND.get(kind, kind.replace("_", " "))


def _kinds(rows, key, sav) -> str:  # "natural text 1.29× [1.00, 1.74] and random words 1.34× [1.04, 1.81]"
    return " and ".join(f"{_kind(r['kind'])} {sav(r[key])}" for r in rows)


def _ms(rows) -> str:  # "1–4" for consecutive m, else "1, 2, 4"
    ms = [r["m"] for r in rows]
    return f"{ms[0]}–{ms[-1]}" if len(ms) > 2 and ms == list(range(ms[0], ms[-1] + 1)) else ", ".join(map(str, ms))


def _spread(rows) -> float:  # the largest over the smallest fitted steepness
    ks = [r["steepness"] for r in rows]
    return max(ks) / min(ks)


def _three_fold(r, sav, rel) -> str:
    """Whether the bound for one m = 1 unit allows a three-fold saving, with k fitted and with k known.

    ``sav`` writes a saving with its bracket; ``rel`` is the relative calibration interval (low, high) of a saving.
    """
    kind = _kind(r["kind"])
    known, fitted = r["max_saving_steepness_known"], r["max_saving"]
    extrapolated = "steepness_known_lengths" in r and min(r["steepness_known_lengths"]) < r["shortest_stored_length"]
    if known / rel[0] < 3:
        return f"For {kind} not even a fit that knew k reaches three-fold: {sav(known)}."
    if fitted / rel[0] < 3:
        return (f"For {kind} only a fit that knew k could reach three-fold ({sav(known)})"
                + (", and only by extrapolating both curves (below)." if extrapolated else "."))  # fmt: skip
    return f"For {kind} a three-fold saving lies within the bound's bracket ({sav(fitted)} with k fitted)."


def design_bound(ctx) -> list:
    """The least token-steps any design needs for the bisection's accuracy (Elfving's c-optimal design), each
    design's efficiency against it, and where the steepness-known ideal rests on extrapolation."""
    from accessibility_lib.experiments.n50_bound import efficiency_interval

    db = ctx.bench.get("design_bound") or {}
    if not (db.get("rows") and "bisect_rmse" in db["rows"][0]):
        return [
            "no design bound in this format stored yet: python benchmarks/bench_n50_design_sim.py, then "
            "python benchmarks/bench_n50_design_bound.py --json book/data/cramming/benchmarks/design_bound.json"
        ]
    reps = db["sim"]["reps"]

    def best_eff(r):  # the most efficient simulated design, the bisection included (the oracle start is a reference)
        return max([("bisection", {"efficiency": r["bisect_efficiency"]}),
                    *((v, d) for v, d in r["designs"].items() if "oracle" not in v)], key=lambda x: x[1]["efficiency"])  # fmt: skip

    def eff(e):
        lo, hi = efficiency_interval(e, reps)
        return f"{e:.2f} [{lo:.2f}, {hi:.2f}]"

    def sav(x):  # a saving ∝ the bisection's RMSE²: the reciprocal relative interval
        lo, hi = efficiency_interval(1.0, reps)
        return f"{x:.2f}× [{x / hi:.2f}, {x / lo:.2f}]"

    out = [md_table(["calibrated on", "bisection's RMSE (tokens)", "ideal design: lengths (share of cost)", "its targets",
                     "bound (token-steps)", "most any design saves", "with k known", "with failures stopped at ⅓"],
                    [[_unit(r), f"{r['bisect_rmse']:.2f}",
                      ", ".join(f"{n} ({100 * s:.0f} %)" for n, s in zip(r["bound_lengths"], r["bound_cost_shares"])),
                      f"{r['bound_targets']:.0f}", f"{r['bound_token_steps']:,.0f}", sav(r["max_saving"]),
                      sav(r["max_saving_steepness_known"]), sav(r["max_saving_failures_stopped_at_a_third"])]
                     for r in db["rows"]]),
           md_table(["calibrated on", "efficiency: bisection", "sequential", "most efficient simulated design",
                     "its efficiency"],
                    [[_unit(r), eff(r["bisect_efficiency"]), eff(r["designs"]["sequential"]["efficiency"]), best_eff(r)[0],
                      eff(best_eff(r)[1]["efficiency"])] for r in db["rows"]])]  # fmt: skip
    top_lo, top_hi = efficiency_interval(db["max_efficiency"], reps)
    say = [f"- {reps} simulated searches a row behind each RMSE and efficiency. The brackets are approximate 95 % "
           "intervals from the number of searches (`n50_bound.efficiency_interval`).",
           f"- The highest efficiency of any simulated design is {eff(db['max_efficiency'])}"
           + (": no design beat the bound." if top_hi < 1 else
              ": these simulations cannot say whether the best design reaches the bound." if db["max_efficiency"] < 1 else
              ": at these sample sizes the asymptotic bound does not hold everywhere." if top_lo > 1 else
              ": these simulations cannot say whether the bound holds everywhere.")
           + f" Read from the interval widths instead of the errors it would be {db['max_efficiency_by_interval_width']:.2f}."]  # fmt: skip
    real = [r for r in db["rows"] if r["model"] != "nano"]
    nano = [r for r in db["rows"] if r["model"] == "nano"]
    rng = lambda rows, k, f=".2f": f"{min(r[k] for r in rows):{f}}–{max(r[k] for r in rows):{f}}"  # noqa: E731
    if real and nano:
        say.append(
            f"- On nano the bisection reached {rng(nano, 'bisect_efficiency')} of the ideal: a design could save "
            f"{rng(nano, 'max_saving', '.1f')}× at its accuracy."
        )
        rel = efficiency_interval(1.0, reps)  # a saving ∝ the bisection's RMSE²: its relative calibration interval
        say.append(f"- On {real[0]['model']} the bisection reached {rng(real, 'bisect_efficiency')} of the ideal. Unit by "
                   f"unit, the bound puts the most any design could save at {rng(real, 'max_saving')}× "
                   f"({rng(real, 'max_saving_steepness_known')}× had the fit known k). Those are the bound at each "
                   f"unit's simulated RMSE; with its calibration error the largest bracket reaches "
                   f"{max(r['max_saving'] for r in real) / rel[0]:.2f}×. The most efficient simulated designs reach "
                   f"{min(best_eff(r)[1]['efficiency'] for r in real):.2f}–{max(best_eff(r)[1]['efficiency'] for r in real):.2f}.")  # fmt: skip
        m1 = [r for r in real if r["m"] == 1 and r["kind"] in ("natural", "random_words")]
        if m1:
            say.append(f"- At m = 1 the bound allows {_kinds(m1, 'max_saving', sav)}, "
                       f"{pooled_saving(m1, 'max_saving', reps)} over both kinds. A point value is the bound at a simulated "
                       "RMSE, not a ceiling: the bracket is its calibration error, and only the bracket's upper end "
                       "bounds the saving. " + " ".join(_three_fold(r, sav, rel) for r in m1)
                       + f" Stopping every failure at a third of the budget would raise the bound to "
                       f"{pooled_saving(m1, 'max_saving_failures_stopped_at_a_third', reps)}.")  # fmt: skip
        slope = {kind: sorted((r for r in real if r["kind"] == kind), key=lambda r: r["m"])
                 for kind in ("natural", "random_words")}  # fmt: skip
        slope = {kind: rs for kind, rs in slope.items() if len({r["m"] for r in rs}) > 1}
        if slope:
            say.append("- Over the whole slope the bound allows "
                       + " and ".join(f"{_kind(kind)} {pooled_saving(rs, 'max_saving', reps)} (m = {_ms(rs)})"
                                      for kind, rs in slope.items())
                       + ", pooled by the bisection's token-steps.")  # fmt: skip
            say.append("- The fitted steepness differs across m: k per token is "
                       + "; ".join(f"{', '.join(format(r['steepness'], '.2f') for r in rs)} for {_kind(kind)} at m = "
                                   f"{_ms(rs)}" for kind, rs in slope.items())
                       + f" (up to {max(_spread(rs) for rs in slope.values()):.1f}-fold within a kind). Each bound grants "
                       "its own unit's k. A design that borrowed k from another m would place its lengths on the wrong "
                       "curve, and its interval could lose coverage. The stored simulations fit k afresh at every m, so "
                       "they do not measure that loss.")  # fmt: skip
        rt = [r for r in real if r["m"] == 1 and r["kind"] == "random_tokens"]
        if m1 and rt:
            say.append(f"- Random tokens at m = 1: the bound allows {sav(rt[0]['max_saving'])}. Their curve falls at k = "
                       f"{rt[0]['steepness']:.2f} per token (against {', '.join(format(r['steepness'], '.2f') for r in m1)}), so the "
                       f"bisection reached only {rt[0]['bisect_efficiency']:.2f} of the ideal.")  # fmt: skip
        for r in real:
            if "steepness_known_lengths" in r and min(r["steepness_known_lengths"]) < r["shortest_stored_length"]:
                n_k = min(r["steepness_known_lengths"])
                i = r["steepness_known_lengths"].index(n_k)
                say.append(f"- With k known, the ideal for {_unit(r)} puts ≈ {r['steepness_known_targets']:.0f} targets at "
                           f"n = {n_k}, {r['n50'] - n_k:.0f} tokens below n50 (success rate "
                           f"{r['steepness_known_success_rates'][i]:.3f}, {100 * r['steepness_known_success_step_shares'][i]:.0f} % "
                           f"of the budget a success). No target was tried below n = {r['shortest_stored_length']}, so its "
                           f"{r['max_saving_steepness_known']:.2f}× rests on extrapolating both curves.")  # fmt: skip
    out.append(Markdown("\n".join(say)))
    return out


def trial_stop(ctx, models=("nano", "smollm2-135m"), near_share: float = 0.15) -> list:
    """For complete m = 1 units at the base budget: the token-steps share of failures, the most a stop at a third
    of the budget saves, and how many successes within ``near_share`` of n50 came in the budget's last third."""
    rows, bound = [], {}
    for name in models:
        try:
            art = CA.load_artifact(name)
        except CA.ArtifactMissingError:
            continue
        raw = {u["uid"]: u for u in art["units"]}
        for u in CS.one_per_settings(CS.summarize(art)):
            if (u.state, u.m, u.instrument, u.dtype, u.max_steps) != (
                "complete",
                1,
                "paper",
                "float32",
                BASE_STEPS,
            ) or not u.fit.ok:
                continue
            outs = CA.own_outcomes(raw[u.uid])
            cost = lambda r: r["steps"] * (u.m + r["n"] - 1)  # noqa: E731, B023
            share = sum(cost(r) for r in outs if not r["success"]) / sum(cost(r) for r in outs)
            near = [r for r in outs if r["success"] and abs(r["n"] - u.fit.n50) <= near_share * u.fit.n50]
            late = sum(r["steps"] > 2 * u.max_steps / 3 for r in near)
            bound[name, u.kind] = (share, 1 / (1 - share * 2 / 3), late, len(near))
            rows.append([name, u.kind.replace("_", " "), u.n_targets, f"{100 * share:.0f} %", f"{bound[name, u.kind][1]:.2f}×",
                         f"{late} of {len(near)}", f"{np.median([r['steps'] / u.max_steps for r in near]):.2f}" if near else "–"])  # fmt: skip
    if not rows:
        return []
    out = [md_table(["model", "target kind", "targets a length", "token-steps in failures", "most a stop at ⅓ budget saves",
                     f"successes within {100 * near_share:.0f} % of n50 in the last third", "their median step / budget"], rows)]  # fmt: skip
    real = {k: v for (n, k), v in bound.items() if n != "nano"}
    if real:
        out.append(Markdown(
            f"On the real model the failures carry {100 * min(v[0] for v in real.values()):.0f}–"
            f"{100 * max(v[0] for v in real.values()):.0f} % of the token-steps. A stop at a third of the budget that never "
            f"lost a success would save at most {min(v[1] for v in real.values()):.2f}–{max(v[1] for v in real.values()):.2f}×. "
            f"It would have to tell every failure apart from the {sum(v[2] for v in real.values())} of the "
            f"{sum(v[3] for v in real.values())} successes near n50 that came in the last third. Each one it gave up "
            "would move n50 down. On nano, whose successes come early, a stopping rule has room."))  # fmt: skip
    return out
