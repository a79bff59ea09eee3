"""Coverage of the search *held to a width* when natural-text outcomes share passages (simulated passages).

``bench_passage_intervals.py`` measures the passage-horizon interval under the book's sequential search. The
search held to a width (``locate_n50_sequential(..., max_width=w)``, the third design of chapter 3's search
benchmark) adds a stopping rule: it stops adding targets as soon as its interval is measured no wider than w.
Stopping on the interval is optional stopping, which can cost coverage; this benchmark measures how much, on
the same simulated passages as ``bench_passage_intervals.py`` (its outcome model, true n50 and start), by
running on each simulated experiment both the plain search and the held one, each with the passage-horizon
interval driving its own decisions:

- the held width is a stated multiple (``--width-share``, default 1.25) of the plain search's median horizon
  width at the same settings, measured here on the same experiments. The held search gives a length its
  targets a look at a time and stops once its interval is that narrow; it cannot go past the plain search's
  target count, so a width below what the plain search reaches changes nothing, while a wider one lets it
  stop early whenever its interval happens to be narrow: optional stopping, the case that threatens coverage
  (chapter 3's benchmark holds it to the bisection's width, which on SmolLM2 was the wider);
- per case: how often each interval covers the true n50, their median widths, how often the held search met
  its width (closed, both ends within the lengths tried, steepness below its cap), and the targets each
  crammed on average (the cost, in targets: every simulated target costs the same here).

Writes JSON (``--json``) for chapter 3. About 15 minutes at the default 100 experiments a case on one core.

Usage::

    .venv/bin/python benchmarks/bench_held_passage_coverage.py --reps 100 \\
        --json book/data/cramming/benchmarks/held_passage_coverage.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from bench_passage_intervals import TRUE_N50, _outcome_fn  # this folder is on the path when run as a script
from tqdm import tqdm

from accessibility_lib.experiments.n50_sequential import locate_n50_sequential, width_reached
from accessibility_lib.experiments.passage_horizons import with_horizon_interval
from accessibility_lib.ground import provenance


def _run(seed: int, noise: float, n_pass: int, max_width: float | None):
    """One search on fresh simulated passages (shared across lengths): (fit, targets crammed, lengths tried)."""
    rng = np.random.default_rng(seed)
    outcome, memo = _outcome_fn(rng, n_pass, True, noise)

    def evaluate(n, count):
        return float(np.mean([outcome(n, i) for i in range(count)])), count, 0

    def rows():
        return [{"n": n, "target": i, "success": s} for (n, i), s in memo.items()]

    res = locate_n50_sequential(
        evaluate,
        TRUE_N50 * 1.25,
        4096,
        n_trials=n_pass,
        refit=lambda f: with_horizon_interval(f, rows()),
        max_width=max_width,
    )
    return res.fit, len(memo), np.asarray(res.lengths, dtype=float)


def _case(n_pass: int, noise: float, reps: int, width_share: float) -> dict:
    plain = [_run(s, noise, n_pass, None) for s in tqdm(range(reps), desc=f"plain, {n_pass} targets, q {noise}")]
    ok_plain = [f for f, _, _ in plain if f.ok and np.all(np.isfinite(f.ci))]
    width = width_share * float(np.median([f.ci[1] - f.ci[0] for f in ok_plain]))
    held = [_run(s, noise, n_pass, width) for s in tqdm(range(reps), desc=f"held to {width:.1f}, {n_pass} targets")]
    ok_held = [(f, ls) for f, _, ls in held if f.ok and np.all(np.isfinite(f.ci))]
    return {
        "n_targets": n_pass,
        "noise": noise,
        "max_width": width,
        "plain_fits": len(ok_plain),
        "plain_coverage": float(np.mean([f.ci[0] <= TRUE_N50 <= f.ci[1] for f in ok_plain])),
        "plain_median_width": float(np.median([f.ci[1] - f.ci[0] for f in ok_plain])),
        "plain_targets": float(np.mean([t for _, t, _ in plain])),
        "held_fits": len(ok_held),
        "held_coverage": float(np.mean([f.ci[0] <= TRUE_N50 <= f.ci[1] for f, _ in ok_held])),
        "held_median_width": float(np.median([f.ci[1] - f.ci[0] for f, _ in ok_held])),
        "held_targets": float(np.mean([t for _, t, _ in held])),
        "held_width_reached": float(np.mean([width_reached(f, ls, width) for f, ls in ok_held])),
        "held_coverage_when_reached": float(
            np.mean([f.ci[0] <= TRUE_N50 <= f.ci[1] for f, ls in ok_held if width_reached(f, ls, width)])
        )
        if any(width_reached(f, ls, width) for f, ls in ok_held)
        else None,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--width-share", type=float, default=1.25)
    ap.add_argument("--json", default=None)
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="a seconds-long run on tiny sizes (the test suite runs it): checks that the script runs, not its numbers",
    )
    args = ap.parse_args(argv)
    if args.tiny:
        args.reps = 2
    elif args.reps < 10:
        ap.error(f"--reps must be at least 10 (a coverage from fewer says little), got {args.reps}")
    if not 0 < args.width_share <= 3:
        ap.error(
            f"--width-share must lie in (0, 3] (a multiple of the plain search's median width), got {args.width_share}"
        )
    rows = []
    for n_pass, noise in ((10, 0.0),) if args.tiny else ((20, 0.0), (10, 0.0), (20, 0.1)):
        row = _case(n_pass, noise, args.reps, args.width_share)
        rows.append(row)
        print(
            f"{n_pass} targets, q {noise}: plain covers {100 * row['plain_coverage']:.0f} % (width "
            f"{row['plain_median_width']:.1f}, {row['plain_targets']:.0f} targets); held to {row['max_width']:.1f} "
            f"covers {100 * row['held_coverage']:.0f} % (width {row['held_median_width']:.1f}, "
            f"{row['held_targets']:.0f} targets, width met in {100 * row['held_width_reached']:.0f} %)",
            flush=True,
        )
    if args.json:
        out = {
            "rows": rows,
            "reps": args.reps,
            "width_share": args.width_share,
            "true_n50": TRUE_N50,
            "command": provenance.command_line(
                ".venv/bin/python", "benchmarks/bench_held_passage_coverage.py", argv=argv
            ),
            "commit": provenance.git_commit(),
            "date": provenance.now_utc(),
        }
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
