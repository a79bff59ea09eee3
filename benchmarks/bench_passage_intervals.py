"""Coverage of n50 intervals when natural-text outcomes share passages, measured on simulated passages.

Natural-text targets of one passage at several lengths are prefixes of one another, so a passage that crams
at one length tends to cram at the next. The simulation gives each passage a horizon (logistic around the true
n50 = 20 tokens, scale 3 tokens): it crams every length up to its horizon and none beyond, and, with
``noise``, each outcome is flipped with that probability (an optimiser that sometimes fails or gets lucky).
Two ways of trying lengths are measured, each on ``--reps`` simulated experiments:

- **grid**: every passage at every length of a fixed grid (17 lengths, as the paper's curves), with
  passages shared across lengths (natural text) or drawn afresh per length (random targets, independent);
- **search**: the book's sequential n50 search (``locate_n50_sequential``, its defaults) with 20 or 10
  targets a length, started 25 % off the true n50, passages shared (and, to separate the two effects,
  drawn afresh per length: what an adaptive choice of lengths alone does to the coverage).

For each it reports how often the 95 % interval covers the true n50, and its median width: the profile-likelihood
interval (every outcome counted as independent) and the interval widened for shared passages
(``passage_bootstrap.widen_for_passages``, what the book prints for natural text), plus how often the widened
one is open at an end. Writes JSON (``--json``) for chapter 3.

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
from accessibility_lib.ground import provenance

TRUE_N50, SCALE = 20.0, 3.0
GRID = list(range(12, 29))


def _outcome_fn(rng, n_pass: int, shared: bool, noise: float):
    """(n, i) -> success, memoised: passage i's horizon (one per passage if shared, else one per length)."""
    horizon = TRUE_N50 + SCALE * rng.logistic(size=n_pass)
    fresh: dict[int, np.ndarray] = {}
    memo: dict[tuple[int, int], bool] = {}

    def outcome(n: int, i: int) -> bool:
        if (n, i) not in memo:
            h = horizon if shared else fresh.setdefault(n, TRUE_N50 + SCALE * rng.logistic(size=n_pass))
            ok = bool(n <= h[i])
            memo[n, i] = (not ok) if noise and rng.random() < noise else ok
        return memo[n, i]

    return outcome, memo


def _grid(seed: int, shared: bool, noise: float, n_pass: int = 20):
    rng = np.random.default_rng(seed)
    outcome, memo = _outcome_fn(rng, n_pass, shared, noise)
    rates = np.array([np.mean([outcome(n, i) for i in range(n_pass)]) for n in GRID])
    fit = fit_sigmoid(np.array(GRID, dtype=float), rates, np.full(len(GRID), float(n_pass)))
    rows = [{"n": n, "target": i, "success": s} for (n, i), s in memo.items()]
    return fit, (widen_for_passages(fit, rows, n_boot=200, seed=seed) if fit.ok else fit)


def _search(seed: int, noise: float, n_pass: int, shared: bool = True):
    rng = np.random.default_rng(seed)
    outcome, memo = _outcome_fn(rng, n_pass, shared, noise)

    def evaluate(n, count):
        return float(np.mean([outcome(n, i) for i in range(count)])), count, 0

    def rows():
        return [{"n": n, "target": i, "success": s} for (n, i), s in memo.items()]

    plain = locate_n50_sequential(evaluate, TRUE_N50 * 1.25, 4096, n_trials=n_pass)
    wide = locate_n50_sequential(
        evaluate, TRUE_N50 * 1.25, 4096, n_trials=n_pass,
        refit=lambda f: widen_for_passages(f, rows(), n_boot=200, seed=seed),
    )  # fmt: skip
    return plain.fit, wide.fit


def _summary(pairs) -> dict:
    ok = [(p, w) for p, w in pairs if p.ok and np.all(np.isfinite(p.ci))]

    def cover(f):
        return float(f.ci[0] <= TRUE_N50 <= f.ci[1])

    return {
        "fits": len(ok),
        "profile_coverage": float(np.mean([cover(p) for p, _ in ok])),
        "profile_median_width": float(np.median([p.ci[1] - p.ci[0] for p, _ in ok])),
        "widened_coverage": float(np.mean([cover(w) for _, w in ok])),
        "widened_median_width": float(np.median([w.ci[1] - w.ci[0] for _, w in ok])),
        "widened_open": float(np.mean([any(w.ci_open) for _, w in ok])),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if args.reps < 10:
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
    rows = []
    for design, passages, n_targets, noise, run in cases:
        pairs = [run(seed) for seed in tqdm(range(args.reps), desc=f"{design}, {passages}, {n_targets}, {noise}")]
        row = {"design": design, "passages": passages, "n_targets": n_targets, "noise": noise, **_summary(pairs)}
        rows.append(row)
        print(
            f"{design:6s} {passages:11s} {n_targets:2d} targets, noise {noise:.1f}: profile covers "
            f"{100 * row['profile_coverage']:.0f} % (width {row['profile_median_width']:.1f}); widened covers "
            f"{100 * row['widened_coverage']:.0f} % (width {row['widened_median_width']:.1f}, open "
            f"{100 * row['widened_open']:.0f} %) over {row['fits']} fits",
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
