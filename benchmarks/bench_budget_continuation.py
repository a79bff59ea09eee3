"""The budget curve's larger budget continued from the smaller one, against running it from scratch, one run.

With no patience a run of b steps is the first b steps of a longer one. So the 2× budget of chapter 3's
budget curve can (a) reuse every success of the base budget and (b) continue each of its failures from
the stored optimiser state (prompt, Adam's two moments) instead of repeating the first b steps. Both
2×-budget searches here run the same design on the same targets and choose their lengths as on an empty
store (``prefer_stored=False``), one on the store that holds the base-budget search, one on an empty
store. The benchmark checks that their per-target outcomes are identical (success and steps), and
reports the optimiser steps and token-steps each actually ran (steps × input positions), their ratio and
the wall time of each.

Usage::

    .venv/bin/python benchmarks/bench_budget_continuation.py --model nano --json book/data/cramming/benchmarks/continuation_nano.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch

from accessibility_lib.experiments.targets import target_source
from accessibility_lib.ground import provenance
from accessibility_lib.ground.results import ResultStore
from accessibility_lib.models.loading import load_model
from accessibility_lib.runs.cramming_units import BASE_STEPS, CrammingUnit, predict_for, run_cramming_unit


def _ran(res, m: int, n_prefix: int) -> tuple[int, int]:
    """(optimiser steps, token-steps) this search actually ran: a success read off the smaller budget costs
    nothing, a continued failure costs the steps past the state it started from."""
    steps = tokens = 0
    for r in res.outcomes:
        new = 0 if r.get("derived_from") is not None else int(r["steps"]) - int(r.get("continued_from", 0))
        steps += new
        tokens += new * (n_prefix + m + int(r["n"]) - 1)
    return steps, tokens


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="nano")
    ap.add_argument("--corpus", default="heldout")
    ap.add_argument("--kinds", default="natural,random_words")
    ap.add_argument("--factor", type=int, default=2, help="the larger budget, in multiples of the base budget")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default=None)
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="seconds: natural text only, 2 targets, a 10-step base budget (checks it runs)",
    )
    args = ap.parse_args(argv)
    base_steps, n_targets = (10, 2) if args.tiny else (BASE_STEPS, 10)
    if args.tiny:
        args.kinds, args.json = "natural", None
    if args.factor < 2:
        ap.error(f"--factor must be ≥ 2 (the larger budget is factor × {base_steps} steps), got {args.factor}")
    torch.set_num_threads(args.threads)
    handle = load_model(args.model, dtype=torch.float32)
    rows = []
    for kind in args.kinds.split(","):
        base = CrammingUnit(kind, 1, max_steps=base_steps, patience=None, corpus=args.corpus, n_targets=n_targets)
        big = CrammingUnit(
            kind, 1, max_steps=base_steps * args.factor, patience=None, corpus=args.corpus, n_targets=n_targets
        )
        with tempfile.TemporaryDirectory() as tmp:
            shared, empty = ResultStore(Path(tmp) / "shared"), ResultStore(Path(tmp) / "empty")
            first = run_cramming_unit(handle, base, shared, model_name=args.model, prefer_stored=False)
            n_pred = predict_for(big, [(base, float(first.n50))])
            t0 = time.perf_counter()
            cont = run_cramming_unit(handle, big, shared, model_name=args.model, n_pred=n_pred, prefer_stored=False)
            t_cont = time.perf_counter() - t0
            t0 = time.perf_counter()
            scratch = run_cramming_unit(handle, big, empty, model_name=args.model, n_pred=n_pred, prefer_stored=False)
            t_scratch = time.perf_counter() - t0
        strip = lambda res: [(r["n"], r["target"], bool(r["success"]), int(r["steps"])) for r in res.outcomes]  # noqa: E731
        same = strip(cont) == strip(scratch)
        src = target_source(handle, kind, base.length_convention, seed=base.seed, corpus=args.corpus)
        n_prefix = len(src.prefix_ids or [])
        s_cont, ts_cont = _ran(cont, 1, n_prefix)
        s_scr, ts_scr = _ran(scratch, 1, n_prefix)
        row = {
            "kind": kind,
            "base_steps": base_steps,
            "steps": big.max_steps,
            "n50_base": first.fit.describe(),
            "n50": scratch.fit.describe(),
            "identical_outcomes": same,
            "outcomes": len(scratch.outcomes),
            "continued": sum(1 for r in cont.outcomes if "continued_from" in r),
            "reused_successes": sum(1 for r in cont.outcomes if r.get("derived_from") is not None),
            "steps_run": {"continued": s_cont, "scratch": s_scr},
            "token_steps_run": {"continued": ts_cont, "scratch": ts_scr},
            "ratio_token_steps": ts_scr / max(ts_cont, 1),
            # what each reuse saved (token-steps): the successes read off the base budget (reused before
            # continuation existed) and the failures continued from their state (the steps not repeated)
            "saved_by_reused_successes": sum(
                int(r["steps"]) * (n_prefix + 1 + int(r["n"]) - 1) for r in cont.outcomes if r.get("derived_from")
            ),
            "saved_by_continued_failures": sum(
                int(r.get("continued_from", 0)) * (n_prefix + 1 + int(r["n"]) - 1) for r in cont.outcomes
            ),
            "seconds": {"continued": round(t_cont, 1), "scratch": round(t_scratch, 1)},
            "ratio_seconds": t_scratch / max(t_cont, 1e-9),
        }
        rows.append(row)
        print(
            f"{args.model} {kind} m = 1, {big.max_steps} steps after {base_steps}: outcomes identical: {same}; "
            f"{row['continued']} failures continued (saving {row['saved_by_continued_failures']:,} token-steps), "
            f"{row['reused_successes']} successes reused (saving {row['saved_by_reused_successes']:,}); token-steps run "
            f"{ts_cont:,} against {ts_scr:,} from scratch ({row['ratio_token_steps']:.2f}× fewer), wall "
            f"{t_cont:.0f} s against {t_scratch:.0f} s ({row['ratio_seconds']:.2f}×)",
            flush=True,
        )
    if args.json:
        out = {
            "rows": rows,
            "provenance": {
                "command": provenance.command_line(
                    ".venv/bin/python", "benchmarks/bench_budget_continuation.py", argv=argv
                ),
                "commit": provenance.git_commit(),
                "machine": provenance.machine_text(args.threads),
                "date": provenance.now_utc(),
            },
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0 if all(r["identical_outcomes"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
