"""The most any n50 search design could save: the simulated designs against a Fisher-information lower bound.

``bench_n50_design_sim.py`` measures what the bisection and the sequential designs cost, on average, on simulated
models calibrated to the stored units. This benchmark asks how much *any* design could save at the bisection's
precision. For each calibrated unit (its fitted n50 and steepness, and the share of the step budget its
successes used, ``accessibility_lib.experiments.n50_bound.success_step_share``) it computes the fewest token-steps
any design pays, on average, for the bisection's accuracy
(``accessibility_lib.experiments.n50_bound.min_search_token_steps``: the cost-weighted c-optimal design, granted
the true n50 and steepness to place its lengths by, with the asymptotic interval). Accuracy is the RMSE of the
n50 estimates over the simulated searches (stored by the simulation), worth an interval w = 2·z·RMSE wide. The
interval widths are not used for the conclusions: at ten
targets a length they are sometimes too narrow, and read from them (the effective width (mean 1/w²)^(−1/2), a
failed fit as no precision; ``*_by_interval_width``) a design can appear to beat the bound. From the bound

- ``max_saving``: the bisection's mean token-steps ÷ the bound, the largest saving any design could show at the
  bisection's accuracy; ``max_saving_steepness_known``: the same for a fit that knew the steepness (more
  generous still; ``steepness_known_lengths``, ``..._targets``, ``..._success_rates`` and
  ``..._success_step_shares`` say where that ideal puts its targets, which can be far below n50, on the
  logistic's extrapolated tail);
- ``max_saving_failures_stopped_at_a_third``: the same with every failure given up after a third of the budget and
  no success lost, the most a design and a trial-stopping rule together could save;
- for each simulated design, its ``efficiency``: the bound at the design's own RMSE ÷ its mean token-steps (1
  would be a perfect design; a value above 1 would mean the asymptotic bound fails at these sample sizes, and is
  reported, not hidden).

Nothing is crammed or searched here: the inputs are the design simulation's JSON and the stored artifacts (seconds).

Usage::

    .venv/bin/python benchmarks/bench_n50_design_bound.py --sim book/data/cramming/benchmarks/design_sim.json \\
        --json book/data/cramming/benchmarks/design_bound.json
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from accessibility_lib.experiments.n50_bound import min_search_token_steps, success_step_share
from accessibility_lib.ground import provenance
from accessibility_lib.runs import cramming_artifacts as CA
from accessibility_lib.runs import cramming_summary as CS
from accessibility_lib.runs.cramming_units import BASE_STEPS

Z95 = 1.959963984540054  # the normal quantile at 0.975: an interval of width 2·z·RMSE is what an RMSE is worth


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default=str(CA.ARTIFACT_DIR / "benchmarks" / "design_sim.json"))
    ap.add_argument("--json", default=None)
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="a seconds-long run on tiny sizes (the test suite runs it): checks that the script runs, not its numbers"
        + " (the first row of --sim)",
    )
    args = ap.parse_args(argv)
    sim = json.loads(Path(args.sim).read_text())
    if args.tiny:
        sim["rows"] = sim["rows"][:1]
    if sim["rows"] and "bisect_rmse" not in sim["rows"][0]:
        raise SystemExit(f"{args.sim} has no bisection RMSE: re-run bench_n50_design_sim.py")
    units = {}
    for model in sorted({r["model"] for r in sim["rows"]}):
        art = CA.load_artifact(model)
        for kind, (us, _) in CS.slopes(CS.summarize(art), BASE_STEPS, dtype="float32").items():
            for u in us:
                units[model, kind, u.m] = (u, next(x for x in art["units"] if x["uid"] == u.uid), art)
    rows = []
    for r in sim["rows"]:
        u, raw, art = units[r["model"], r["kind"], r["m"]]
        n50, k, m = float(r["n50"]), float(r["steepness"]), int(r["m"])
        if not math.isclose(n50, float(u.fit.n50), rel_tol=1e-9):
            raise SystemExit(
                f"{r['model']} {r['kind']} m={m}: the simulation was calibrated on n50 {n50}, the artifact now fits "
                f"{float(u.fit.n50)}; re-run bench_n50_design_sim.py first"
            )
        budget = int(raw["max_steps"])
        if budget != BASE_STEPS:
            raise SystemExit(f"{u.uid}: budget {budget} steps, the simulation charges {BASE_STEPS}")
        share = success_step_share(raw["outcomes"], n50, budget)

        def bound(width, **kw):
            return min_search_token_steps(width, n50, k, m, budget, share, **kw)

        cost, rmse = r["bisect_token_steps"], r["bisect_rmse"]
        w = 2 * Z95 * rmse  # the width an RMSE is worth: the bound's precision, measured by the error, not the interval
        b = bound(w)
        b_k = bound(w, steepness_known=True)
        p_k = [1.0 / (1.0 + math.exp(k * (n - n50))) for n in b_k.lengths]  # the logistic's success rate there
        row = {
            "model": r["model"],
            "kind": r["kind"],
            "m": m,
            "n50": n50,
            "steepness": k,
            "bisect_token_steps": cost,
            "bisect_rmse": rmse,
            "bisect_effective_width": r["bisect_effective_width"],
            "bisect_median_width": r["bisect_median_width"],
            "bisect_failed_fit_share": r["bisect_failed_fit_share"],
            "bound_token_steps": b.token_steps,
            "bound_lengths": list(b.lengths),
            "bound_cost_shares": list(b.cost_shares),
            "bound_targets": b.targets,
            "max_saving": cost / b.token_steps,
            "max_saving_steepness_known": cost / b_k.token_steps,
            # where the known-k ideal puts its targets: far below n50 it leans on the logistic's tail and on the
            # step-share line, extrapolated beyond the stored outcomes
            "steepness_known_lengths": list(b_k.lengths),
            "steepness_known_targets": b_k.targets,
            "steepness_known_success_rates": p_k,
            "steepness_known_success_step_shares": [float(x) for x in share(np.asarray(b_k.lengths))],
            "shortest_stored_length": min(int(o["n"]) for o in raw["outcomes"]),
            "max_saving_failures_stopped_at_a_third": cost / bound(w, failure_share=1 / 3).token_steps,
            "bisect_efficiency": b.token_steps / cost,
            # the same with the interval widths in place of the errors: the intervals of 10-target searches are
            # sometimes over-narrow, so this reading can exceed 1 (reported, not used for the conclusions)
            "bisect_efficiency_by_interval_width": bound(r["bisect_effective_width"]).token_steps / cost,
            "designs": {},
        }
        for v, d in r["designs"].items():
            row["designs"][v] = {
                "saving": d["ratio_of_means"],
                "rmse": d["rmse"],
                "effective_width": d["effective_width"],
                "failed_fit_share": d["failed_fit_share"],
                "efficiency": bound(2 * Z95 * d["rmse"]).token_steps / d["token_steps"],
                "efficiency_by_interval_width": bound(d["effective_width"]).token_steps / d["token_steps"]
                if d["effective_width"]
                else 0.0,
            }
        rows.append(row)
        best = max((x for x in row["designs"].items() if "oracle" not in x[0]), key=lambda x: x[1]["efficiency"])
        print(
            f"{r['model']} {r['kind']} m={m}: n50 {n50:.1f}, k {k:.2f}; at the bisection's RMSE {rmse:.2f} (width "
            f"2·z·RMSE = {w:.1f}) no design pays less than {b.token_steps:,.0f} token-steps (≈ {b.targets:.0f} targets "
            "at n = "
            + ", ".join(f"{n} ({100 * s_:.0f} % of the cost)" for n, s_ in zip(b.lengths, b.cost_shares))
            + f"), so the most any design saves is {row['max_saving']:.2f}× ({row['max_saving_steepness_known']:.2f}× "
            f"with the steepness known, {row['max_saving_failures_stopped_at_a_third']:.2f}× with failures stopped at a "
            f"third); bisection efficiency {row['bisect_efficiency']:.2f}, best simulated {best[0]} {best[1]['efficiency']:.2f}"
        )
    highest = max(d["efficiency"] for row in rows for d in row["designs"].values())
    by_width = max(d["efficiency_by_interval_width"] for row in rows for d in row["designs"].values())
    print(
        f"highest efficiency of any simulated design: {highest:.2f} (above 1 would break the bound); "
        f"read from the interval widths instead of the errors: {by_width:.2f}"
    )
    if args.json:
        out = {
            "rows": rows,
            "max_efficiency": highest,
            "max_efficiency_by_interval_width": by_width,
            "sim": {"path": args.sim, "commit": sim.get("commit"), "reps": sim.get("reps")},
            "command": provenance.command_line(".venv/bin/python", "benchmarks/bench_n50_design_bound.py", argv=argv),
            "commit": provenance.git_commit(),
            "date": provenance.now_utc(),
        }
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
