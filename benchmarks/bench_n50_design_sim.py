"""Search designs on simulated targets calibrated to the stored fits: where a saving can and cannot come from.

``bench_n50_search.py`` measures the designs on real cramming outcomes, one search per (kind, m). One search is
one draw: whether a design saves 3× or 1.4× there depends on where its lengths happened to fall. This benchmark
repeats each search on ``--reps`` simulated models whose success curve and step counts are calibrated to a
stored unit (its fitted n50 and steepness; the steps a success took as a fraction of the budget, against n/n50,
fitted on the unit's own successes), so each design's cost, bias and interval coverage are averages, measured
in one run on the same simulated targets (widths as the median over the searches whose fit closed, and as the
effective width ``(mean 1/w²)^(−1/2)`` with a failed fit counting as no precision, with the share of failed fits;
a fit whose interval has an end at the edge of the lengths searched, a bound rather than an interval, counts
as failed; each design's bias and RMSE of n50, the bisection's included):

- **bisect**: the first artifacts' design (``n50_bisect.locate_n50``: fixed start 12·m natural, 6·m random words,
  or 0.9·m·n50(1); doubling; every target at every length);
- **sequential**: the book's design (``n50_sequential.locate_n50_sequential``), started as the runners start it
  (``COLD_START`` at the first m, else the line through the n50s of the smaller m);
- two variants of it: ``bracket_alpha`` 0.2 (3 targets settle a far length while bracketing) and ``max_full``
  2 (no more pins once two lengths hold every target);
- the sequential design and its ``bracket_alpha`` variant held to the bisection's precision ("at the
  bisection's width": ``max_width`` = the width of the bisection's interval on the same simulated model, so
  the two are compared at identical interval widths, and the coverage says whether stopping on the width
  keeps the interval honest);
- and, not a design, the sequential search started at the true n50 ("oracle start"): what a perfect prediction
  gives (not an upper bound on the saving: a start below n50, where lengths are cheap, can cost less).

A failure costs the whole budget, a success the steps it took, each × (m + n − 1) input positions (token-steps,
``accessibility_lib.experiments.n50.token_steps``). Prints one block per calibrated unit and writes JSON (``--json``).

Usage::

    .venv/bin/python benchmarks/bench_n50_design_sim.py --models nano,smollm2-135m --reps 100 \\
        --json book/data/cramming/benchmarks/design_sim.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path

import numpy as np

from accessibility_lib.experiments.fitting import logistic
from accessibility_lib.experiments.n50_bisect import locate_n50
from accessibility_lib.experiments.n50_bound import success_step_fit
from accessibility_lib.experiments.n50_sequential import locate_n50_sequential, predict_n50
from accessibility_lib.ground import provenance
from accessibility_lib.runs import cramming_artifacts as CA
from accessibility_lib.runs import cramming_summary as CS
from accessibility_lib.runs.cramming_units import BASE_STEPS, COLD_START, DEFAULT_PER_M

LEGACY_GUESS = {"natural": 12, "random_words": 6, "random_tokens": 4}  # as bench_n50_search.py
VARIANTS = {
    "sequential": {},
    "sequential, bracket_alpha 0.2": {"bracket_alpha": 0.2},
    "sequential, max_full 2": {"max_full": 2},
    # not a design: started at the true n50, what a perfect prediction gives (not an upper bound)
    "sequential, oracle start": {"oracle": True},
    # held to the bisection's precision: max_width = the width of the same simulated model's bisection interval
    "sequential, at the bisection's width": {"matched": True},
    "sequential, bracket_alpha 0.2, at the bisection's width": {"bracket_alpha": 0.2, "matched": True},
}


def step_model(art: dict, uid: str, n50: float) -> tuple[float, float, np.ndarray]:
    """(a, b, residuals): a success's steps / budget ≈ a + b·n/n50 on the unit's own successes, and the residuals."""
    unit = next(u for u in art["units"] if u["uid"] == uid)
    return success_step_fit(unit["outcomes"], n50, int(unit["max_steps"]))


def effective_width(widths) -> float | None:
    """(mean of 1/w²)^(−1/2) over searches, a failed fit (NaN) counting as no precision (1/w² = 0); None if all failed.

    The width a bound on the expected precision speaks of (``bench_n50_design_bound.py``): the asymptotic interval
    is 2z/√(information), so the mean of 1/w² is the mean information up to (2z)².
    """
    w = np.asarray(widths, dtype=float)
    inv = np.where(np.isfinite(w) & (w > 0), 1.0 / np.where(w > 0, w, 1.0) ** 2, 0.0)
    return float(1.0 / math.sqrt(inv.mean())) if inv.mean() > 0 else None


def reading(fit, n50: float) -> tuple[bool, float]:
    """(does the interval cover the true n50, its width) for one search's fit.

    An end that reached the edge of the searched lengths (``fit.ci_open``) is a bound, not an interval end: it
    counts as infinite, so the interval may still cover n50, but its width is NaN, a failed fit (no precision),
    like a fit that did not converge.
    """
    if not fit.ok or not all(map(math.isfinite, fit.ci)):
        return False, math.nan
    lo, hi = fit.ci
    lo = -math.inf if fit.ci_open[0] else lo
    hi = math.inf if fit.ci_open[1] else hi
    return bool(lo <= n50 <= hi), hi - lo if math.isfinite(hi - lo) else math.nan


def simulated(n50, k, steps, m, seed, budget=BASE_STEPS):
    """A simulated model: (evaluate, cost). Target i at length n succeeds with the logistic probability."""
    a, b, resid = steps
    rng = np.random.default_rng(seed)
    memo: dict[tuple[int, int], tuple[bool, int]] = {}

    def outcome(n, i):
        if (n, i) not in memo:
            ok = bool(rng.random() < logistic(n, n50, k))
            frac = a + b * n / n50 + (rng.choice(resid) if resid.size else 0.0)
            memo[n, i] = (ok, int(np.clip(frac, 1 / budget, 1.0) * budget) if ok else budget)
        return memo[n, i]

    def evaluate(n, count):
        return float(np.mean([outcome(n, i)[0] for i in range(count)])), count, 0

    def cost(res):
        return sum(
            outcome(int(n), i)[1] * (m + int(n) - 1) for n, t in zip(res.lengths, res.trials) for i in range(int(t))
        )

    return evaluate, cost


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="nano,smollm2-135m")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n-targets", type=int, default=10)
    ap.add_argument("--json", default=None)
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="a seconds-long run on tiny sizes (the test suite runs it): checks that the script runs, not its numbers"
        + " (nano, its first unit, 2 searches)",
    )
    args = ap.parse_args(argv)
    if args.tiny:
        args.models, args.reps = "nano", 2
    if args.reps < 1:
        raise SystemExit(f"--reps must be ≥ 1, got {args.reps}")
    rows = []
    for model in args.models.split(","):
        art = CA.load_artifact(model)
        for kind, (units, _) in CS.slopes(CS.summarize(art), BASE_STEPS, dtype="float32").items():
            if kind not in LEGACY_GUESS:
                continue
            true_n50 = {}
            for u in units:
                if args.tiny and rows:
                    break
                n50, k = float(u.fit.n50), float(u.fit.steepness)
                if not (math.isfinite(n50) and math.isfinite(k) and k > 0):
                    continue
                steps = step_model(art, u.uid, n50)
                start = max(LEGACY_GUESS[kind] * u.m, round(0.9 * u.m * true_n50.get(1, 0.0)), 2)
                pred = predict_n50(u.m, true_n50, DEFAULT_PER_M[kind]) if true_n50 else COLD_START
                out = {
                    v: {"ratio": [], "err": [], "cover": [], "width": [], "cost": [], "reached": []} for v in VARIANTS
                }
                old_cost, old_cover, old_width, old_err = [], [], [], []
                for rep in range(args.reps):
                    ev, cost = simulated(n50, k, steps, u.m, rep)
                    old = locate_n50(ev, start, 4096, n_trials=args.n_targets, n_probe=args.n_targets, n_around=0)
                    old_cost.append(cost(old))
                    covers, width = reading(old.fit, n50)
                    old_cover.append(covers)
                    old_width.append(width)
                    old_err.append(old.n50 - n50 if old.fit.ok else math.nan)
                    for v, kw in VARIANTS.items():
                        kw = dict(kw)
                        start_v = n50 if kw.pop("oracle", False) else pred
                        if kw.pop("matched", False):
                            kw["max_width"] = (
                                old_width[-1] if math.isfinite(old_width[-1]) and old_width[-1] > 0 else None
                            )
                        new = locate_n50_sequential(ev, start_v, 4096, n_trials=args.n_targets, **kw)
                        o = out[v]
                        o["cost"].append(cost(new))
                        o["ratio"].append(old_cost[-1] / max(o["cost"][-1], 1))
                        covers, width = reading(new.fit, n50)
                        o["err"].append(new.n50 - n50 if new.fit.ok else math.nan)
                        o["cover"].append(covers)
                        o["width"].append(width)
                        if kw.get("max_width") is not None:  # held to the bisection's width: did it get there?
                            o["reached"].append(bool(width <= kw["max_width"]))
                true_n50[u.m] = n50
                row = {
                    "model": model,
                    "kind": kind,
                    "m": u.m,
                    "n50": n50,
                    "steepness": k,
                    "start_bisect": start,
                    "start_sequential": round(pred, 2),
                    "bisect_token_steps": float(np.mean(old_cost)),
                    "bisect_bias": float(np.nanmean(old_err)),
                    "bisect_rmse": float(np.sqrt(np.nanmean(np.square(old_err)))),
                    "bisect_coverage": float(np.mean(old_cover)),
                    "bisect_median_width": float(np.nanmedian(old_width)),
                    "bisect_effective_width": effective_width(old_width),
                    "bisect_failed_fit_share": float(np.mean(np.isnan(old_width))),
                    "designs": {},
                }
                print(
                    f"{model} {kind} m={u.m}: n50 {n50:.1f}, k {k:.2f}/token; bisection {np.mean(old_cost):,.0f} "
                    f"token-steps on average ({args.reps} simulated searches); bias {row['bisect_bias']:+.2f}, RMSE "
                    f"{row['bisect_rmse']:.2f}, its interval covers n50 in {100 * np.mean(old_cover):.0f} %, width "
                    f"{np.nanmedian(old_width):.1f}"
                )
                for v, o in out.items():
                    err = np.array(o["err"])
                    d = {
                        "token_steps": float(np.mean(o["cost"])),
                        "ratio_of_means": float(np.mean(old_cost) / np.mean(o["cost"])),
                        "bias": float(np.nanmean(err)),
                        "rmse": float(np.sqrt(np.nanmean(err**2))),
                        "coverage": float(np.mean(o["cover"])),
                        "median_width": float(np.nanmedian(o["width"])),
                        "effective_width": effective_width(o["width"]),
                        "failed_fit_share": float(np.mean(np.isnan(o["width"]))),
                        "width_reached": float(np.mean(o["reached"])) if o["reached"] else None,
                    }
                    row["designs"][v] = d
                    print(
                        f"   {v:32s} {d['ratio_of_means']:.2f}× fewer token-steps; bias {d['bias']:+.2f}, RMSE "
                        f"{d['rmse']:.2f}, 95 % interval covers n50 in {100 * d['coverage']:.0f} %, width {d['median_width']:.1f}"
                    )
                rows.append(row)
    if args.json:
        out = {
            "rows": rows,
            "reps": args.reps,
            "n_targets": args.n_targets,
            "command": provenance.command_line(".venv/bin/python", "benchmarks/bench_n50_design_sim.py", argv=argv),
            "commit": provenance.git_commit(),
            "date": provenance.now_utc(),
        }
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("ACCESSIBILITY_PROGRESS", "0")
    raise SystemExit(main())
