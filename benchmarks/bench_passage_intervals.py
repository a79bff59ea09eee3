"""Coverage of n50 intervals when natural-text outcomes share passages, measured on simulated passages.

Natural-text targets of one passage at several lengths are prefixes of one another, so a passage that crams
at one length tends to cram at the next. The simulation gives each passage a horizon (logistic, scale 3
tokens): it can be crammed at every length up to its horizon and at none beyond, and with ``noise`` the
optimiser misses each length within the horizon with that probability (it never succeeds beyond). The
horizons are centred so that the success rate (1 − noise)·P(horizon ≥ n) crosses ½ at the true n50 = 20
tokens, the n50 every interval here estimates.
Two ways of trying lengths are measured, each on ``--reps`` simulated experiments:

- **grid**: every passage at every length of a fixed grid (17 lengths, as the paper's curves), with
  passages shared across lengths (natural text) or drawn afresh per length (random targets, independent);
- **search**: the book's sequential n50 search (``locate_n50_sequential``, its defaults) with 20 or 10
  targets a length, started 25 % off the true n50, passages shared (and, to separate the two effects,
  drawn afresh per length: what an adaptive choice of lengths alone does to the coverage).

For each it reports how often the 95 % interval covers the true n50, and its median width: the profile-likelihood
interval (every outcome counted as independent), the interval widened by a passage design effect
(``passage_bootstrap.widen_for_passages``) and the passage-horizon profile interval
(``passage_horizons.with_horizon_interval``, what the book prints for natural text), each with how often it
is open at an end. Under the search each interval is the one of a search that used it for its own decisions
(where to extend an open interval), as the book's search does. Writes JSON (``--json``) for chapter 3.

Usage::

    .venv/bin/python benchmarks/bench_passage_intervals.py --reps 100 \\
        --json book/data/cramming/benchmarks/passage_intervals.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from tqdm import tqdm

from accessibility_lib.experiments.fitting import fit_sigmoid
from accessibility_lib.experiments.n50_sequential import locate_n50_sequential
from accessibility_lib.experiments.passage_bootstrap import widen_for_passages
from accessibility_lib.experiments.passage_horizons import with_horizon_interval
from accessibility_lib.ground import provenance

TRUE_N50, SCALE = 20.0, 3.0
GRID = list(range(12, 29))


def _outcome_fn(rng, n_pass: int, shared: bool, noise: float):
    """(n, i) -> success, memoised: passage i's horizon (one per passage if shared, else one per length)."""
    centre = TRUE_N50 - SCALE * np.log1p(-2.0 * noise)  # (1 − noise)·P(h ≥ n) = ½ at n = TRUE_N50
    horizon = centre + SCALE * rng.logistic(size=n_pass)
    fresh: dict[int, np.ndarray] = {}
    memo: dict[tuple[int, int], bool] = {}

    def outcome(n: int, i: int) -> bool:
        if (n, i) not in memo:
            h = horizon if shared else fresh.setdefault(n, centre + SCALE * rng.logistic(size=n_pass))
            memo[n, i] = bool(n <= h[i]) and not (noise and rng.random() < noise)  # a miss within the horizon
        return memo[n, i]

    return outcome, memo


def _target_id(n: int, i: int, shared: bool) -> int:
    """The passage an outcome belongs to: passage i at every length if shared, else a new one per length."""
    return i if shared else 10_000 * n + i


def _grid(seed: int, shared: bool, noise: float, n_pass: int = 20):
    rng = np.random.default_rng(seed)
    outcome, memo = _outcome_fn(rng, n_pass, shared, noise)
    rates = np.array([np.mean([outcome(n, i) for i in range(n_pass)]) for n in GRID])
    fit = fit_sigmoid(np.array(GRID, dtype=float), rates, np.full(len(GRID), float(n_pass)))
    rows = [{"n": n, "target": _target_id(n, i, shared), "success": s} for (n, i), s in memo.items()]
    return fit, widen_for_passages(fit, rows, n_boot=200, seed=seed), with_horizon_interval(fit, rows)


def _search(seed: int, noise: float, n_pass: int, shared: bool = True):
    """The three searches of one simulated experiment (same passages, same flips): profile, widened, horizons."""
    rng = np.random.default_rng(seed)
    outcome, memo = _outcome_fn(rng, n_pass, shared, noise)

    def evaluate(n, count):
        return float(np.mean([outcome(n, i) for i in range(count)])), count, 0

    def rows():
        return [{"n": n, "target": _target_id(n, i, shared), "success": s} for (n, i), s in memo.items()]

    def run(refit=None):
        return locate_n50_sequential(evaluate, TRUE_N50 * 1.25, 4096, n_trials=n_pass, refit=refit).fit

    return (
        run(),
        run(lambda f: widen_for_passages(f, rows(), n_boot=200, seed=seed)),
        run(lambda f: with_horizon_interval(f, rows())),
    )


def _summary(triples) -> dict:
    """Coverage, median width and open share of each interval, over the experiments whose fits all crossed ½."""
    ok = [t for t in triples if all(f.ok and np.all(np.isfinite(f.ci)) for f in t)]
    out: dict = {"fits": len(ok)}
    for j, name in enumerate(("profile", "widened", "horizon")):
        fits = [t[j] for t in ok]
        out[f"{name}_coverage"] = float(np.mean([f.ci[0] <= TRUE_N50 <= f.ci[1] for f in fits]))
        out[f"{name}_median_width"] = float(np.median([f.ci[1] - f.ci[0] for f in fits]))
        out[f"{name}_open"] = float(np.mean([any(f.ci_open) for f in fits]))
    out["horizon_extended"] = float(np.mean([f.method.endswith("(extended to the pooled point)") for _, _, f in ok]))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--json", default=None)
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="a seconds-long run on tiny sizes (the test suite runs it): checks that the script runs, not its numbers"
        + " (2 repetitions of the first grid and the first search case)",
    )
    args = ap.parse_args(argv)
    if args.tiny:
        args.reps = 2
    elif args.reps < 10:
        ap.error(f"--reps must be at least 10 (a coverage from fewer says little), got {args.reps}")
    cases = [
        ("grid", "shared", 20, 0.0, lambda s: _grid(s, True, 0.0)),
        ("grid", "independent", 20, 0.0, lambda s: _grid(s, False, 0.0)),
        ("grid", "shared", 20, 0.1, lambda s: _grid(s, True, 0.1)),
        ("search", "shared", 20, 0.0, lambda s: _search(s, 0.0, 20)),
        ("search", "shared", 20, 0.1, lambda s: _search(s, 0.1, 20)),
        ("search", "shared", 10, 0.0, lambda s: _search(s, 0.0, 10)),
        ("search", "independent", 20, 0.0, lambda s: _search(s, 0.0, 20, shared=False)),
    ]
    if args.tiny:
        cases = [cases[0], cases[3]]
    rows = []
    for design, passages, n_targets, noise, run in cases:
        triples = [run(seed) for seed in tqdm(range(args.reps), desc=f"{design}, {passages}, {n_targets}, {noise}")]
        row = {"design": design, "passages": passages, "n_targets": n_targets, "noise": noise, **_summary(triples)}
        rows.append(row)
        print(
            f"{design:6s} {passages:11s} {n_targets:2d} targets, noise {noise:.1f}: profile covers "
            f"{100 * row['profile_coverage']:.0f} % (width {row['profile_median_width']:.1f}); widened covers "
            f"{100 * row['widened_coverage']:.0f} % (width {row['widened_median_width']:.1f}, open "
            f"{100 * row['widened_open']:.0f} %); horizons cover {100 * row['horizon_coverage']:.0f} % (width "
            f"{row['horizon_median_width']:.1f}, open {100 * row['horizon_open']:.0f} %) over {row['fits']} fits",
            flush=True,
        )
    if args.json:
        out = {
            "rows": rows,
            "reps": args.reps,
            "true_n50": TRUE_N50,
            "grid": GRID,
            "scale": SCALE,
            "command": provenance.command_line(".venv/bin/python", "benchmarks/bench_passage_intervals.py", argv=argv),
            "commit": provenance.git_commit(),
            "date": provenance.now_utc(),
        }
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
