"""The most any n50 search design could save: the simulated designs against a Fisher-information lower bound.

``bench_n50_design_sim.py`` measures what the bisection and the sequential designs cost, on average, on simulated
models calibrated to the stored units. This benchmark asks how much *any* design could save at the bisection's
precision. For each calibrated unit (its fitted n50 and steepness, and the share of the step budget its
successes used, ``accessibility_lib.experiments.n50_bound.success_step_share``) it computes the fewest token-steps
any design pays for an interval as wide as the bisection's median width
(``accessibility_lib.experiments.n50_bound.min_search_token_steps``: the steepness granted, the best length for
every target, the asymptotic interval), and from it

- ``max_saving``: the bisection's mean token-steps ÷ the bound, the largest saving any design could show at the
  bisection's width (for each ``p_window``: the success rates whose lengths may carry the information);
- ``max_saving_failures_stopped_at_a_third``: the same with every failure given up after a third of the budget and
  no success lost, the most a design and a trial-stopping rule together could save;
- for each simulated design, its saving beside ``max_saving``, and its ``efficiency``: the bound at the
  design's own median width ÷ its mean token-steps (1 would be a perfect design; a value above 1 would mean the
  asymptotic bound fails at these sample sizes, and is reported, not hidden).

Nothing is crammed or simulated here: the inputs are the design simulation's JSON and the stored artifacts.

Usage::

    .venv/bin/python benchmarks/bench_n50_design_bound.py --sim book/data/cramming/benchmarks/design_sim.json \\
        --json book/data/cramming/benchmarks/design_bound.json
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from accessibility_lib.experiments.n50_bound import min_search_token_steps, success_step_share
from accessibility_lib.ground import provenance
from accessibility_lib.runs import cramming_artifacts as CA
from accessibility_lib.runs import cramming_summary as CS
from accessibility_lib.runs.cramming_units import BASE_STEPS

WINDOWS = {"0.1-0.9": (0.1, 0.9), "0.05-0.95": (0.05, 0.95), "0.2-0.8": (0.2, 0.8)}
MAIN_WINDOW = "0.1-0.9"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default=str(CA.ARTIFACT_DIR / "benchmarks" / "design_sim.json"))
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    sim = json.loads(Path(args.sim).read_text())
    units = {}
    for model in sorted({r["model"] for r in sim["rows"]}):
        art = CA.load_artifact(model)
        for kind, (us, _) in CS.slopes(CS.summarize(art), BASE_STEPS, dtype="float32").items():
            for u in us:
                raw = next(x for x in art["units"] if x["uid"] == u.uid)
                units[model, kind, u.m] = (u, raw)
    rows = []
    for r in sim["rows"]:
        u, raw = units[r["model"], r["kind"], r["m"]]
        n50, k, m = float(r["n50"]), float(r["steepness"]), int(r["m"])
        if not math.isclose(n50, float(u.fit.n50), rel_tol=1e-9):
            raise SystemExit(
                f"{r['model']} {r['kind']} m={m}: the simulation was calibrated on n50 {n50}, the artifact now fits "
                f"{float(u.fit.n50)}; re-run bench_n50_design_sim.py first"
            )
        budget = int(raw["max_steps"])
        share = success_step_share(raw["outcomes"], n50, budget)

        def bound(width, window=MAIN_WINDOW):
            return min_search_token_steps(width, n50, k, m, budget, share, p_window=WINDOWS[window])

        b = bound(r["bisect_median_width"])
        row = {
            "model": r["model"],
            "kind": r["kind"],
            "m": m,
            "n50": n50,
            "steepness": k,
            "bisect_token_steps": r["bisect_token_steps"],
            "bisect_median_width": r["bisect_median_width"],
            "bound_token_steps": b.token_steps,
            "best_n": b.best_n,
            "best_n_over_n50": b.best_n / n50,
            "bound_targets": b.targets,
            "max_saving": {
                w: r["bisect_token_steps"] / bound(r["bisect_median_width"], w).token_steps for w in WINDOWS
            },
            "bisect_efficiency": b.token_steps / r["bisect_token_steps"],
            # the most a design *and* a trial that gives every failure up at a third of the budget (losing no
            # success) could save: the bound with failures costing a third
            "max_saving_failures_stopped_at_a_third": r["bisect_token_steps"]
            / min_search_token_steps(
                r["bisect_median_width"], n50, k, m, budget, share, p_window=WINDOWS[MAIN_WINDOW], failure_share=1 / 3
            ).token_steps,
            "designs": {},
        }
        for v, d in r["designs"].items():
            row["designs"][v] = {
                "saving": d["ratio_of_means"],
                "share_of_max_saving": d["ratio_of_means"] / row["max_saving"][MAIN_WINDOW],
                "efficiency": bound(d["median_width"]).token_steps / d["token_steps"],
            }
        rows.append(row)
        best = max((x for x in row["designs"].items() if "oracle" not in x[0]), key=lambda x: x[1]["saving"])
        print(
            f"{r['model']} {r['kind']} m={m}: n50 {n50:.1f}, k {k:.2f}; at the bisection's width {r['bisect_median_width']:.1f} "
            f"no design pays less than {b.token_steps:,.0f} token-steps ({b.targets:.0f} targets at n = {b.best_n}), so the most "
            f"any design saves is {row['max_saving'][MAIN_WINDOW]:.2f}× ("
            + ", ".join(f"window {w}: {x:.2f}×" for w, x in row["max_saving"].items() if w != MAIN_WINDOW)
            + f"); best simulated: {best[0]} {best[1]['saving']:.2f}×, efficiency {best[1]['efficiency']:.2f}; "
            f"bisection efficiency {row['bisect_efficiency']:.2f}"
        )
    worst = max(d["efficiency"] for row in rows for d in row["designs"].values())
    print(f"highest efficiency of any simulated design: {worst:.2f} (above 1 would break the bound)")
    if args.json:
        out = {
            "rows": rows,
            "main_window": MAIN_WINDOW,
            "windows": {w: list(x) for w, x in WINDOWS.items()},
            "max_efficiency": worst,
            "sim": {"path": args.sim, "commit": sim.get("commit"), "reps": sim.get("reps")},
            "command": provenance.command_line(".venv/bin/python", "benchmarks/bench_n50_design_bound.py", argv=argv),
            "commit": provenance.git_commit(),
            "date": provenance.now_utc(),
        }
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
