"""How often the n50 intervals cover the true n50 on simulated passages: the stored interval benchmarks.

Two stored benchmarks (``book/data/cramming/benchmarks``): ``passage_intervals.json``
(``benchmarks/bench_passage_intervals.py``: the pooled profile interval, the interval widened by a design
effect and the passage-horizon interval, on a fixed grid and under the book's search) and
``held_passage_coverage.json`` (``benchmarks/bench_held_passage_coverage.py``: the search held to a width).
Coverages are shares of simulated experiments; widths are tokens. Returns page items for
:func:`~accessibility_lib.figures.cramming_context.show`.
"""

from __future__ import annotations

import numpy as np
from IPython.display import Markdown

from accessibility_lib.figures.tables import md_table

__all__ = ["passage_intervals", "held_coverage", "binomial_tolerance"]

_COLS = [("profile", "pooled profile"), ("widened", "widened by a design effect"), ("horizon", "passage horizons")]


def binomial_tolerance(n: int, level: float = 0.95) -> float:
    """Two binomial standard errors of a coverage near ``level`` measured on ``n`` experiments (a share, not %).

    >>> round(binomial_tolerance(200), 3)
    0.031
    """
    return 2 * float(np.sqrt(level * (1 - level) / n))


def _span(rows, key) -> str:
    lo, hi = min(r[key] for r in rows), max(r[key] for r in rows)
    return f"{100 * lo:.0f} %" if round(100 * lo) == round(100 * hi) else f"{100 * lo:.0f}–{100 * hi:.0f} %"


def _pi_table(pi) -> object:
    any_open = any(r[f"{k}_open"] for r in pi["rows"] for k, _ in _COLS)
    return md_table(
        ["lengths tried", "passage sharing", "passages (= targets a length)", "optimiser miss probability δ"]
        + [f"{label}: covers the true n50 (median width, tokens{', share open' if any_open else ''})" for _, label in _COLS],
        [[f"fixed grid of {len(pi['grid'])} lengths" if r["design"] == "grid" else "the book's search",
          "one passage at every length" if r["passages"] == "shared" else "drawn afresh per length (control)",
          r["n_targets"], f"{r['noise']:.1f}"]
         + [f"{100 * r[k + '_coverage']:.0f} % ({r[k + '_median_width']:.1f}"
            + (f", {100 * r[k + '_open']:.0f} %" if any_open else "") + ")" for k, _ in _COLS]
         for r in pi["rows"]])  # fmt: skip


def passage_intervals(ctx) -> list:
    """The coverage table of the three natural-text intervals on simulated passages, and what it shows."""
    pi = ctx.bench.get("passage_intervals")
    if pi is None or "stale" in pi:
        return [f"the stored passage-interval benchmark ({pi['stale']}) predates the horizon interval; rerun it" if pi else
                "no passage-interval benchmark stored: .venv/bin/python benchmarks/bench_passage_intervals.py --reps 200 "
                "--json book/data/cramming/benchmarks/passage_intervals.json"]  # fmt: skip
    rows = pi["rows"]
    grid = [r for r in rows if r["design"] == "grid" and r["passages"] == "shared"]
    grid_indep = [r for r in rows if r["design"] == "grid" and r["passages"] != "shared"]
    search = [r for r in rows if r["design"] == "search" and r["passages"] == "shared"]
    fits = sorted({r["fits"] for r in rows})
    note = (f"{pi['reps']} simulated experiments a row, true n50 = {pi['true_n50']:g} tokens, nominal coverage 95 %. "
            + (f"Coverage over all {pi['reps']}, every fit crossing ½." if fits == [pi["reps"]] else
               f"Coverage over the {fits[0]}–{fits[-1]} whose three fits all crossed ½.")
            + f" {pi['date'][:10]}, benchmarks/bench_passage_intervals.py.")  # fmt: skip
    tol = binomial_tolerance(min(fits))
    say = [
        f"- On a fixed grid with shared passages, the pooled interval covers {_span(grid, 'profile_coverage')}, "
        f"the widened one {_span(grid, 'widened_coverage')} and the horizon one {_span(grid, 'horizon_coverage')}."
    ]
    if grid_indep:
        say.append(
            f"- With targets drawn afresh per length they cover {_span(grid_indep, 'profile_coverage')}, "
            f"{_span(grid_indep, 'widened_coverage')} and {_span(grid_indep, 'horizon_coverage')}."
        )
    say.append(f"- Each coverage is good to about ±{100 * tol:.0f} points at 95 % ({min(fits)} experiments).")
    if search:
        h = min(r["horizon_coverage"] for r in search)
        say.append(
            f"- Under the book's search the pooled interval covers {_span(search, 'profile_coverage')}, the "
            f"widened {_span(search, 'widened_coverage')} and the horizon {_span(search, 'horizon_coverage')}."
        )
        tol_s = binomial_tolerance(min(r["fits"] for r in search))
        say.append("- The natural-text intervals of the book are the horizon ones. "
                   + (f"Here they keep their 95 % within two standard errors ({100 * tol_s:.0f} points)." if h >= 0.95 - tol_s
                      else f"Here they fall {100 * (0.95 - h):.0f} points short of 95 % at most, so their 95 % is "
                      "nominal."))  # fmt: skip
    say.append("- The simulation uses the interval's own model. Real departures from it (misses that depend on the "
               "passage, horizons that are not logistic) are not measured.")  # fmt: skip
    ext = max(r.get("horizon_extended", 0.0) for r in rows)
    if ext:
        say.append(f"- In up to {100 * ext:.0f} % of a row's experiments the pooled point fell outside the horizon "
                   "interval, which was then extended to it.")  # fmt: skip
    return [_pi_table(pi), note, Markdown("\n".join(say))]


def held_coverage(ctx) -> list:
    """Coverage of the search held to a width (it stops once its interval is that narrow) beside the plain search."""
    hp = ctx.bench.get("held")
    if hp is None:
        return ["no held-search coverage benchmark stored yet: .venv/bin/python benchmarks/bench_held_passage_coverage.py "
                "--json book/data/cramming/benchmarks/held_passage_coverage.json"]  # fmt: skip
    rows = hp["rows"]
    table = md_table(
        ["passages (= targets a length)", "optimiser miss probability δ", "held to (tokens)",
         "plain search: covers (median width; targets)", "held search: covers (median width; targets)",
         "held search met its width", "held search covers, when it met its width"],
        [[r["n_targets"], f"{r['noise']:.1f}", f"{r['max_width']:.1f}",
          f"{100 * r['plain_coverage']:.0f} % ({r['plain_median_width']:.1f}; {r['plain_targets']:.0f})",
          f"{100 * r['held_coverage']:.0f} % ({r['held_median_width']:.1f}; {r['held_targets']:.0f})",
          f"{100 * r['held_width_reached']:.0f} %",
          "–" if r["held_coverage_when_reached"] is None else f"{100 * r['held_coverage_when_reached']:.0f} %"]
         for r in rows])  # fmt: skip
    tol = binomial_tolerance(min(r["held_fits"] for r in rows))
    worst = min(rows, key=lambda r: r["held_coverage"])
    span = lambda k: f"{100 * min(r[k] for r in rows):.0f}–{100 * max(r[k] for r in rows):.0f} %"  # noqa: E731
    ratio = [r["held_targets"] / r["plain_targets"] for r in rows]
    say = [f"{hp['reps']} simulated experiments a row, true n50 = {hp['true_n50']:g} tokens, shared passages, "
           f"passage-horizon intervals (nominal 95 %), held to {hp['width_share']:g}× the plain search's median width; "
           f"{hp['date'][:10]}.",
           f"The held search covers the true n50 in {span('held_coverage')} of experiments, the plain search in "
           f"{span('plain_coverage')}.",
           (f"Stopping on the width keeps the 95 % within two standard errors ({100 * tol:.0f} points) here."
            if worst["held_coverage"] >= 0.95 - tol else
            f"Stopping on the width costs coverage here: at worst {100 * worst['held_coverage']:.0f} % with "
            f"{worst['n_targets']} targets a length, δ = {worst['noise']:.1f}."),
           f"It uses {min(ratio):.2f}–{max(ratio):.2f} of the plain search's targets."]  # fmt: skip
    return [table, Markdown(" ".join(say))]
