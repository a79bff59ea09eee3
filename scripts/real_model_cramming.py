"""Real-model cramming check (chapter 3): n50 at m = 1 for natural and random targets, one run.

Usage (documented in book/03_cramming.ipynb; resumable — rerun the same command after a kill):

    .venv/bin/python scripts/real_model_cramming.py --model smollm2-135m \
        --out book/data/real_model_cramming.json

Every (m, n, target) outcome goes into the result store (``$ACCESSIBILITY_RESULTS`` or ./results), so
a killed run resumes where it stopped. The artifact written at the end holds the per-length success
rates, the sigmoid fits, and the provenance: command, git commit, machine, date, wall time, settings.

The budget is bounded for a shared two-core CPU: fewer steps and patience than the paper's code
(3000 steps, patience 500, lr 1e-2) and 8 targets a length instead of 20; the settings are recorded
in the artifact and the chapter states them. Reference (paper, Gemma-3-270M): n50(m=1) = 17.07
natural, 10.00 random.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

from accessibility_lib.cramming import find_n50, target_source
from accessibility_lib.models import load_model
from accessibility_lib.results import default_store


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


class _OutOfTime(RuntimeError):
    pass


def _partial(store, args, source_name, settings, dtype):
    """The lengths whose targets all finished before the budget ran out, from the result store."""
    from accessibility_lib.cramming import N50Search
    from accessibility_lib.fitting import fit_sigmoid

    per_n: dict[int, list[bool]] = {}
    for key, value in store.entries("cramming", model=args.model, source=source_name, m=args.m, dtype=dtype):
        if all(key.get(k) == v for k, v in settings.items()):
            per_n.setdefault(key["n"], []).append(value["success"])
    per_n = {n: v for n, v in per_n.items() if len(v) >= args.n_targets}
    lengths = np.array(sorted(per_n), dtype=float)
    rates = np.array([np.mean(per_n[int(n)]) for n in lengths])
    if lengths.size >= 2:
        fit = fit_sigmoid(lengths, rates, args.n_targets)
    else:
        from accessibility_lib.fitting import SigmoidFit

        fit = SigmoidFit(float("nan"), float("nan"), float("nan"), (float("nan"),) * 2, 0.95, False,
                         "budget ran out before two lengths finished", None, "none", lengths, rates)
    fit.message = ("budget ran out; " + fit.message).strip("; ") if fit.message else "budget ran out (partial search)"
    return N50Search(fit.n50, fit, lengths, rates, (0, 0), 0, 0, None)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--m", type=int, default=1)
    ap.add_argument("--n-targets", type=int, default=8)
    ap.add_argument("--max-steps", type=int, default=200)
    ap.add_argument("--patience", type=int, default=50)
    ap.add_argument("--lr", type=float, default=0.03)
    ap.add_argument("--rel-tol", type=float, default=0.35)
    ap.add_argument("--n-probe", type=int, default=None, help="targets a length while bracketing (default: all)")
    ap.add_argument("--dtype", default="bfloat16", choices=["float32", "bfloat16"])
    ap.add_argument("--n-around", type=int, default=0)
    ap.add_argument("--start-natural", type=int, default=16)
    ap.add_argument("--start-random", type=int, default=10)
    ap.add_argument("--prefix", default="bos", choices=["bos", "none"],
                    help="a fixed BOS token before the soft prompt (Llama-family position-0 attention sink)")
    ap.add_argument("--sources", default="natural,random", help="comma-separated: natural, random")
    ap.add_argument("--budget-min", type=float, default=None,
                    help="stop the search after this many minutes and record the lengths finished so far")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1 is fastest on a loaded shared machine)")
    ap.add_argument("--out", default="book/data/real_model_cramming.json")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    t0 = time.time()
    commit = _commit()  # the code that runs is this commit's (recorded at the start)
    handle = load_model(args.model, dtype=getattr(torch, args.dtype))
    store = default_store()
    settings = dict(max_steps=args.max_steps, patience=args.patience, lr=args.lr)
    if args.prefix == "bos":
        settings["prefix_ids"] = [int(handle.model.config.bos_token_id)]
    out = {
        "model": args.model,
        "m": args.m,
        "n_targets": args.n_targets,
        "settings": {**settings, "prefix": args.prefix, "betas": [0.9, 0.9], "dtype": args.dtype, "rel_tol": args.rel_tol,
                     "n_probe": args.n_probe or args.n_targets,
                     "n_around": args.n_around},
        "sources": {},
    }
    starts = {"natural": args.start_natural, "random": args.start_random}
    for kind in args.sources.split(","):
        start = starts[kind]
        base = target_source(handle, kind)
        ts = time.time()

        def src(n, i, base=base):
            if args.budget_min is not None and time.time() - t0 > 60 * args.budget_min:
                raise _OutOfTime
            return base(n, i)

        src.name = base.name
        try:
            res = find_n50(handle, src, args.m, args.n_targets, store=store, model_name=args.model,
                           n_start=start, n_probe=args.n_probe or args.n_targets, rel_tol=args.rel_tol,
                           n_around=args.n_around, **settings)
        except _OutOfTime:
            res = _partial(store, args, base.name, settings, str(handle.model.dtype))
        fit = res.fit
        out["sources"][kind] = {
            "lengths": res.lengths.tolist(),
            "rates": res.rates.tolist(),
            "bracket": list(res.bracket),
            "n50": None if not fit.ok else fit.n50,
            "ci": None if not fit.ok or not np.isfinite(fit.ci[0]) else list(fit.ci),
            "steepness": None if not fit.ok else fit.steepness,
            "fit_message": fit.message,
            "runs": res.runs,
            "cached_runs": res.cached,
            "seconds": round(time.time() - ts, 1),
        }
        print(kind, out["sources"][kind], flush=True)
    out["provenance"] = {
        "command": " ".join(shlex.quote(a) for a in [".venv/bin/python", "scripts/real_model_cramming.py", *(argv if argv is not None else sys.argv[1:])]),
        "commit": commit,
        "machine": f"{platform.node()} {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} cpus, torch {torch.__version__}, {args.threads} thread(s)",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_seconds": round(time.time() - t0, 1),
        "paper_reference": {"model": "Gemma-3-270M", "n50_m1_natural": 17.07, "n50_m1_random": 10.00},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print("wrote", args.out, "in", out["provenance"]["wall_seconds"], "s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
