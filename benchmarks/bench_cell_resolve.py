"""Seconds per token of the splitting stage of scripts/table1_resolved.py, the old code against the new, in one run.

The old code is read from git (``--baseline``, default the commit before the fused coordinate move:
``accessibility_lib/geometry/cell_problem.py`` and ``cell_resolve.py`` as they were there) and loaded as
separate modules; the new one is the checkout's. Both run the first splitting pass of
:func:`accessibility_lib.geometry.cell_distribution.resolve_cells` (coordinate hit-and-run, max 60
levels) on the same tokens of the same problem (the stored artifact's ellipsoid: its ``inputs``, else
its fit at the table's prompts per length), in groups of ``--group`` tokens, old and new on each group
in turn (alternating which goes first), in one process, so that both see the same machine (the load
average at start and end is recorded). ``--old-batch`` is the old batch size (scripts/table1_resolved.py
ran ``resolve_cells``' default 24; a group smaller than the batch runs as one batch of the group's size,
which for the old code is faster per token than 24: its (batch·N, |V|) work arrays leave the cache);
``--new-batch`` the new one. Also reported: seconds per splitting level (the runs' level counts differ).

Prints s/token of each and, for the same tokens, ln p̂ (Jensen-corrected, one run each) with its SE;
the estimates come from different random streams, so they agree within SE, not bit for bit.

With an artifact that holds brute-force hit counts (``nano``), each estimate is also compared with
ln(hits/S) over the tokens with ≥ 20 hits (mean difference ± its SE).

Run: ``nice .venv/bin/python benchmarks/bench_cell_resolve.py --model smollm2-135m --tokens 16 --group 8``
(``--json PATH`` also writes the numbers).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "7425269"  # main before issue 23's resumable, fused splitting


def _old_modules(rev: str):
    """``(cell_problem, cell_resolve)`` of revision ``rev``, as fresh modules (not the checkout's)."""
    mods = []
    for name in ("cell_problem", "cell_resolve"):
        src = subprocess.run(
            ["git", "show", f"{rev}:accessibility_lib/geometry/{name}.py"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        mod = types.ModuleType(f"old_{name}")
        mod.__file__ = f"{rev}:{name}.py"
        sys.modules[mod.__name__] = mod  # dataclasses look the module up by name
        exec(compile(src, mod.__file__, "exec"), mod.__dict__)
        mods.append(mod)
    return mods


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--tokens", type=int, default=4, help="tokens of the artifact's sample to time")
    ap.add_argument("--particles", type=int, default=16)
    ap.add_argument("--moves", type=int, default=30)
    ap.add_argument("--group", type=int, default=8, help="tokens timed together; old and new alternate per group")
    ap.add_argument("--old-batch", type=int, default=24)
    ap.add_argument("--new-batch", type=int, default=8)
    ap.add_argument("--baseline", default=BASELINE)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default=None)
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="a seconds-long run on tiny sizes (the test suite runs it): checks that the script runs, not its numbers"
        + " (nano's artifact, 2 tokens, 4 particles, 3 moves)",
    )
    args = ap.parse_args(argv)
    if args.tiny:
        args.model, args.tokens, args.particles, args.moves, args.group = "nano", 2, 4, 3, 2
        args.old_batch = args.new_batch = 2

    import numpy as np
    import torch

    from accessibility_lib.geometry.cell_problem import CellProblem
    from accessibility_lib.geometry.cell_resolve import combine_replicates, split_log_volumes
    from accessibility_lib.geometry.regions import Ellipsoid
    from accessibility_lib.ground import provenance
    from accessibility_lib.models.loading import load_model

    torch.set_num_threads(args.threads)
    old_problem_mod, old_resolve = _old_modules(args.baseline)
    art = json.loads((ROOT / "book" / "data" / "support" / "resolved" / f"{args.model}.json").read_text())
    fit = art.get("inputs") or next(
        c for c in art["convergence"] if c["prompts_per_length"] == art["prompts_per_length"]
    )
    handle = load_model(args.model)
    W, b = handle.W_U.detach().float(), handle.b_U.detach().float()
    ell = Ellipsoid(
        torch.tensor(fit["center"], dtype=torch.float64), torch.tensor(fit["semi_axes"], dtype=torch.float64)
    )
    new_p = CellProblem.from_region(W, b, ell)
    old_p = old_problem_mod.CellProblem(new_p.M, new_p.a, new_p.shape, new_p.region)
    g = np.random.default_rng(0)
    toks = np.sort(g.choice(new_p.d_vocab, args.tokens, replace=False))
    kw = dict(n_particles=args.particles, n_moves=args.moves, max_levels=60, seed=0)
    load0 = os.getloadavg()[0]
    runs = {
        "old": (old_resolve.split_log_volumes, old_p, args.old_batch),
        "new": (split_log_volumes, new_p, args.new_batch),
    }
    out = {
        name: {"batch": batch, "seconds": 0.0, "levels": [], "log_p": [], "se": []}
        for name, (_, _, batch) in runs.items()
    }
    for gi, g0 in enumerate(range(0, toks.size, args.group)):
        group = toks[g0 : g0 + args.group]
        for name in ("old", "new") if gi % 2 == 0 else ("new", "old"):  # alternate who runs first
            fn, prob, batch = runs[name]
            t0 = time.perf_counter()
            res = fn(prob, group, batch=batch, progress_desc=f"{name} (batch {batch})", **kw)
            dt = time.perf_counter() - t0
            comb = combine_replicates(res, args.particles)
            o = out[name]
            o["seconds"] += dt
            o["levels"] += res.levels.tolist()
            o["log_p"] += comb["log_p"].tolist()
            o["se"] += comb["se"].tolist()
            print(f"group {gi} {name}: {dt / group.size:.1f} s/token, {dt / res.levels.sum():.3f} s/level", flush=True)
    for name, o in out.items():
        o["seconds_per_token"] = o["seconds"] / toks.size
        o["seconds_per_level"] = o["seconds"] / sum(o["levels"])
        print(
            f"{name}: {o['seconds_per_token']:.1f} s/token, {o['seconds_per_level']:.3f} s/level (batch {o['batch']})"
        )
    diff = np.array(out["new"]["log_p"]) - np.array(out["old"]["log_p"])
    se = np.hypot(out["new"]["se"], out["old"]["se"])
    print(
        f"speed-up {out['old']['seconds'] / out['new']['seconds']:.2f}×; new − old ln p̂: {np.round(diff, 2).tolist()}"
    )
    print(
        f"  (SE of each difference {np.round(se, 2).tolist()}; mean {diff.mean():.2f} ± {se.mean() / toks.size**0.5:.2f})"
    )
    brute = {}
    if "brute" in art:  # the artifact's brute-force hit counts in the same ellipsoid: the ground truth
        counts = np.asarray(art["brute"]["counts"], dtype=np.float64)[toks]
        sel = counts >= 20
        truth = np.log(counts[sel] / art["brute"]["n_samples"])
        for name, o in out.items():
            dd = np.asarray(o["log_p"])[sel] - truth
            brute[name] = {
                "tokens": int(sel.sum()),
                "mean": float(dd.mean()),
                "se": float(dd.std(ddof=1) / sel.sum() ** 0.5),
            }
            print(
                f"{name} − brute force ({int(sel.sum())} tokens with ≥ 20 hits): {dd.mean():+.3f} ± {brute[name]['se']:.3f}"
            )
    report = {
        "model": args.model,
        "tokens": toks.tolist(),
        "settings": {**kw, "directions": "coordinate"},
        "baseline": args.baseline,
        "machine": provenance.machine_text(args.threads),
        "load_average_1min": [load0, os.getloadavg()[0]],
        "date": provenance.now_utc(),
        **out,
        "minus_brute_force": brute,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
