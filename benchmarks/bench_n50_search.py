"""The n50 search's cost: the sequential design against the bisection design, same targets, one run.

Both designs run through ``accessibility_lib.runs.cramming_units.run_cramming_unit`` on one result store, so
an (n, target) outcome is crammed once and read by both; each design is charged the forward+backward
token-steps of every outcome *it* used (steps × input positions, ``accessibility_lib.experiments.n50.token_steps``),
whether it crammed it or found it. Each design chooses its lengths as it would on an empty store
(``prefer_stored=False``): stored outcomes answer its look-ups but do not steer it, so its cost does not
depend on which lengths an earlier run or the other design happened to store. The bisection design starts where the first artifacts' runner
started it (12·m natural, 6·m random words, 4·m random tokens, or 0.9·m·n50(1) when larger), doubles,
and gives every length all targets; the sequential design starts as the runners start it (at the first m
from ``COLD_START``, climbing from the shortest lengths; then from the line through the n50s it found) and
settles each length's side sequentially.

A third search is the sequential design held to the bisection's precision: the same search with
``max_width`` set to the width of the bisection's interval, so it stops adding targets once its own interval is
no wider (closed, not extrapolated, steepness below its cap): the comparison at identical interval widths where
it gets there; where it cannot, it ends as the plain sequential search (``width_reached`` says which).
Natural-text intervals are the passage-horizon intervals in every design.

Prints one line per (kind, m) — the n50s with their 95 % intervals, whether each sequential n50 lies in
the bisection's interval, the costs and their ratios — and writes them as JSON (``--json``), with each
design's failures and how many of them used the whole step budget (``failures_at_cap``).

Usage::

    .venv/bin/python benchmarks/bench_n50_search.py --model nano --corpus heldout --patience 100 --ms 1,2,4
    .venv/bin/python benchmarks/bench_n50_search.py --model smollm2-135m --ms 1 --kinds natural
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import replace
from pathlib import Path

import torch

from accessibility_lib.experiments.n50_sequential import predict_n50
from accessibility_lib.ground import provenance
from accessibility_lib.ground.results import ResultStore, default_store
from accessibility_lib.models.loading import load_model
from accessibility_lib.runs import cramming_artifacts as CA
from accessibility_lib.runs.cramming_units import COLD_START, DEFAULT_PER_M, CrammingUnit, run_cramming_unit

LEGACY_GUESS = {"natural": 12, "random_words": 6, "random_tokens": 4}  # the first runner's start, per m


def _row(res, max_steps: int) -> dict:
    f = res.fit
    fails = [r for r in res.outcomes if not r["success"]]
    return {
        "n50": float(res.n50),
        "ci": [float(c) for c in f.ci],
        "describe": f.describe(),
        "token_steps": int(res.token_steps),
        "crammed_here": int(res.runs),
        "outcomes": len(res.outcomes),
        "failures": len(fails),
        "failures_at_cap": sum(int(r["steps"]) >= max_steps for r in fails),  # used the whole step budget
        "lengths": [int(x) for x in res.lengths],
        "trials": [int(x) for x in res.trials],
    }


def _write(path: str | None, rows: list, argv, threads: int, final: bool) -> tuple[int, int]:
    """Write the rows so far (after every (kind, m), so a killed benchmark keeps what it measured)."""
    total_old = sum(r["bisect"]["token_steps"] for r in rows)
    total_new = sum(r["sequential"]["token_steps"] for r in rows)
    matched = [r for r in rows if r.get("matched")]
    if path:
        out = {
            "rows": rows,
            "complete": final,
            "command": provenance.command_line(".venv/bin/python", "benchmarks/bench_n50_search.py", argv=argv),
            "commit": provenance.git_commit(),
            "machine": provenance.machine_text(threads),
            "date": provenance.now_utc(),
            "ratio_total": total_old / max(total_new, 1),
            "ratio_total_matched": (
                sum(r["bisect"]["token_steps"] for r in matched)
                / max(sum(r["matched"]["token_steps"] for r in matched), 1)
                if matched
                else None
            ),
        }
        Path(path).write_text(json.dumps(out, indent=1) + "\n")
    return total_old, total_new


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="nano")
    ap.add_argument("--kinds", default="natural,random_words")
    ap.add_argument("--ms", default="1,2,4")
    ap.add_argument("--corpus", default="austen")
    ap.add_argument("--max-steps", type=int, default=300)
    ap.add_argument("--patience", type=int, default=None, help="default: none")
    ap.add_argument("--n-targets", type=int, default=10)
    ap.add_argument("--store", default=None, help="result store (default: the repository's)")
    ap.add_argument("--seed-artifact", action="store_true", help="first copy the model's artifact into the store")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default=None)
    ap.add_argument(
        "--prefer-stored",
        action="store_true",
        help="let each design take stored lengths in place of its own choices (the runners' resume rule; "
        "the first benchmarks ran so): its cost then depends on what was stored before it",
    )
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="a seconds-long run on tiny sizes (the test suite runs it): checks that the script runs, not its numbers"
        + " (random words, m = 1, 2 targets, 10 steps, a temporary store)",
    )
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.tiny:
        args.kinds, args.ms, args.max_steps, args.n_targets = "random_words", "1", 10, 2
        if args.store is None:  # never the repository's store
            import tempfile

            args.store = tempfile.mkdtemp(prefix="bench_n50_search_")
    store = ResultStore(args.store) if args.store else default_store()
    if args.seed_artifact:
        print(f"imported {CA.import_artifact(CA.artifact_path(args.model), store)} stored outcomes")
    handle = load_model(args.model, dtype=torch.float32)
    rows = []
    for kind in args.kinds.split(","):
        old_n50, new_n50 = {}, {}
        for m in [int(x) for x in args.ms.split(",")]:
            unit = CrammingUnit(
                kind, m, max_steps=args.max_steps, patience=args.patience, corpus=args.corpus, n_targets=args.n_targets
            )
            start = max(LEGACY_GUESS[kind] * m, round(0.9 * m * old_n50.get(1, 0.0)), 2)
            t0 = time.time()
            old = run_cramming_unit(
                handle,
                replace(unit, design="bisect"),
                store,
                model_name=args.model,
                n_pred=start / 0.9,
                prefer_stored=args.prefer_stored,
            )
            t_old = time.time() - t0
            pred = predict_n50(m, new_n50, DEFAULT_PER_M[kind]) if new_n50 else COLD_START  # as predict_for
            t0 = time.time()
            new = run_cramming_unit(
                handle, unit, store, model_name=args.model, n_pred=pred, prefer_stored=args.prefer_stored
            )
            t_new = time.time() - t0
            for d, r in ((old_n50, old), (new_n50, new)):
                if r.fit.ok:
                    d[m] = r.n50
            inside = bool(old.fit.ok and new.fit.ok and old.fit.ci[0] <= new.n50 <= old.fit.ci[1])
            width = float(old.fit.ci[1] - old.fit.ci[0]) if old.fit.ok and not any(old.fit.ci_open) else None
            same = None
            if width is not None:  # the sequential search held to the bisection's interval width
                t0 = time.time()
                same = run_cramming_unit(
                    handle,
                    unit,
                    store,
                    model_name=args.model,
                    n_pred=pred,
                    prefer_stored=args.prefer_stored,
                    max_width=width,
                )
                t_same = time.time() - t0
            row = {
                "model": args.model,
                "prefer_stored": bool(args.prefer_stored),
                "kind": kind,
                "m": m,
                "budget": unit.budget_label,
                "bisect": {**_row(old, unit.max_steps), "start": int(start), "seconds": round(t_old, 1)},
                "sequential": {**_row(new, unit.max_steps), "start": round(pred, 2), "seconds": round(t_new, 1)},
                "ratio": old.token_steps / max(new.token_steps, 1),
                "sequential_n50_inside_bisect_interval": inside,
                "matched": None
                if same is None
                else {
                    **_row(same, unit.max_steps),
                    "max_width": round(width, 3),
                    "width_reached": bool(same.fit.ok and same.fit.ci[1] - same.fit.ci[0] <= width),
                    "seconds": round(t_same, 1),
                    "ratio": old.token_steps / max(same.token_steps, 1),
                    "n50_inside_bisect_interval": bool(same.fit.ok and old.fit.ci[0] <= same.n50 <= old.fit.ci[1]),
                },
            }
            rows.append(row)
            print(
                f"{args.model} {kind} m={m}: bisect n50 {old.fit.describe()} ({old.token_steps:,} token-steps), "
                f"sequential {new.fit.describe()} ({new.token_steps:,}); ratio {row['ratio']:.2f}, "
                f"inside: {inside}"
                + (
                    ""
                    if same is None
                    else f"; at the bisection's width {width:.1f}: {same.fit.describe()} ({same.token_steps:,}), "
                    f"ratio {row['matched']['ratio']:.2f}, inside: {row['matched']['n50_inside_bisect_interval']}"
                ),
                flush=True,
            )
            _write(args.json, rows, argv, args.threads, final=False)
    total_old, total_new = _write(args.json, rows, argv, args.threads, final=True)
    print(
        f"total: bisect {total_old:,} token-steps, sequential {total_new:,}: ratio {total_old / max(total_new, 1):.2f}"
    )
    matched = [r for r in rows if r["matched"]]
    if matched:
        b, q = sum(r["bisect"]["token_steps"] for r in matched), sum(r["matched"]["token_steps"] for r in matched)
        print(
            f"at the bisection's widths ({len(matched)} of {len(rows)} searches): bisect {b:,}, sequential {q:,}: "
            f"ratio {b / max(q, 1):.2f}"
        )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("ACCESSIBILITY_PROGRESS", "0")
    raise SystemExit(main())
