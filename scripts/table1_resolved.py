"""Chapter 5's resolved Table 1 column of a model, its ε sweep and its sample-size convergence, as an artifact.

    nice .venv/bin/python scripts/table1_resolved.py --model nano --n-tokens 1000 --reps 1 --particles 16 \
        --moves 30 --convergence 64,334,1667 --brute-factor 100                      # ~35 min on a shared core
    nice .venv/bin/python scripts/table1_resolved.py --model smollm2-135m --n-tokens 48 --reps 1 --particles 16 \
        --moves 30 --convergence 64,334                                              # hours on a shared core
    nice .venv/bin/python scripts/table1_resolved.py --model gemma-3-270m --n-tokens 0 --convergence 64,334

(``--n-tokens 0``: the convergence fits only. ``--debias-existing`` adds the Jensen correction of
``combine_replicates`` to an artifact written before it existed; the stored nano artifact was so corrected.
``--recompute-rows`` recomputes a stored artifact's rows from its inputs after a row's formula changed; the
stored artifacts were so updated when the variable-ε row took its present reading.)

Resumable: the embeddings and every resolved token go to the result store (``$ACCESSIBILITY_RESULTS``, else
``results/``; accessibility_lib.geometry.cell_resume) as soon as they are done, so the same command run
again after a kill skips them and writes the same artifact (provenance apart). On a fresh machine (an
empty store) the committed artifact's tokens are imported first, when its ``"store_key"`` (estimator,
problem digest, model, region, settings) equals the run's, so the run goes on where the artifact stops. While it runs, the artifact
is rewritten every ``--write-every`` tokens or ``--write-minutes`` with the tokens done so far and
``"state": "partial"``, ``"tokens_done"``, ``"tokens_planned"`` (chapter 5 says so); ``"state": "complete"``
at the end. The tokens are resolved in a uniform random order of V (every prefix a uniform sample; a
larger ``--n-tokens`` extends a run). The ≥ 1000-token runs of issue 23, in the background:

    nohup nice -n 10 .venv/bin/python scripts/table1_resolved.py --model smollm2-135m --n-tokens 1000 --reps 1 \
        --particles 16 --moves 30 --convergence 64,334 > smollm2-cells.log 2>&1 &
    nohup nice -n 10 .venv/bin/python scripts/table1_resolved.py --model gemma-3-270m --n-tokens 1000 --reps 1 \
        --particles 16 --moves 30 --convergence 64,334 > gemma-cells.log 2>&1 &

Writes ``book/data/support/resolved/<model>.json`` (JSON only), with:

- ``inputs``: what every Table 1 row is computed from (accessibility_lib.geometry.table1_resolved): d, |V|,
  r (max L2), r∞, ε = r∞·2⁻¹¹, the enclosing cone's half-angle, the enclosing ellipsoid's centre and
  semi-axes, the samples' per-coordinate range, and D: ln p_t with its SE for a uniform sample of tokens
  (resolved by multilevel splitting, empty cells certified; accessibility_lib.geometry.cell_distribution);
- ``rows``: every row recomputed from ``inputs`` (the chapter and tests/unit/test_table1_resolved.py
  recompute them again from ``inputs`` alone);
- ``sweep``: cone/ball, ellipsoid/ball, cells/ellipsoid at 2r/ε = 2^10 … 2^20 (region and D fixed);
- ``convergence``: r, r∞, cone angle and semi-axes fitted on the first N prompts per length (nested
  samples, forward passes only);
- ``replicate`` (with ``--replicate-tokens``): the first planned tokens resolved again with another splitting
  seed, so the stated SE of one run can be checked against the spread of two;
- ``brute`` (with ``--brute-factor``): hit counts of S = factor·|V| uniform points in the same ellipsoid,
  for every token, the independent check of the resolved ln p.

The embeddings are random prompts (uniform non-special token ids) at each of ``--lengths``, as chapter 5's
default preset; the table's column uses the first ``--n-per-length`` prompts of each length. Provenance
(command, commit, machine, date, wall time per stage) is recorded in the artifact.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=None, allow_nan=False) + "\n")
    os.replace(tmp, path)


def _fit(x, eps_factor: float) -> dict:
    import torch

    from accessibility_lib.geometry import support_shape
    from accessibility_lib.geometry.regions import enclosing_ellipsoid

    xt = torch.as_tensor(x, dtype=torch.float64)
    rad = support_shape.radii(xt)
    eps = rad["linf"] * eps_factor
    cone, _ = support_shape.fit_cone(xt)
    ell = enclosing_ellipsoid(xt, eps)
    return {
        "n_embeddings": int(xt.shape[0]),
        "r_l2": rad["l2"],
        "r_inf": rad["linf"],
        "eps": eps,
        "cone_half_angle": float(cone.half_angle),
        "semi_axes": ell.semi_axes.tolist(),
        "center": ell.center.tolist(),
        "lo": xt.min(dim=0).values.tolist(),
        "hi": xt.max(dim=0).values.tolist(),
    }


#: log2(2r/ε) of the stored ε sweep: 2^10 … 2^20 in half steps
SWEEP_LOG2 = [10.0 + 0.5 * k for k in range(21)]


def _stored(args) -> tuple[Path, dict]:
    """The stored artifact of ``args.model`` (path, JSON), for the options that rewrite it without a model."""
    from accessibility_lib.ground.paths import BOOK_DATA

    out = Path(args.out_dir or BOOK_DATA / "support" / "resolved") / f"{args.model}.json"
    return out, json.loads(out.read_text())


def _refresh(data: dict, argv) -> dict:
    """Recompute the rows and sweep from ``data["inputs"]``; return the provenance stamp of this command."""
    from accessibility_lib.geometry import table1_resolved as T
    from accessibility_lib.ground import provenance

    data["rows"] = T.rows_from_inputs(data["inputs"])
    data["sweep"] = T.ratio_sweep(data["inputs"], SWEEP_LOG2)
    argv_ = argv if argv is not None else sys.argv[1:]
    return {
        "command": provenance.command_line(".venv/bin/python", "scripts/table1_resolved.py", argv=argv_),
        "commit": provenance.git_commit(),
        "date": provenance.now_utc(),
    }


def _recompute_rows(args, argv) -> int:
    """Every row and the sweep of a stored artifact recomputed from its ``inputs`` (after a row's formula changed)."""
    out, data = _stored(args)
    if "inputs" not in data:
        raise SystemExit(f"{out} holds the convergence fits only: it has no rows to recompute")
    before = {k: v["C"] for k, v in data["rows"].items()}
    data["provenance"].setdefault("rows_recomputed", []).append({**_refresh(data, argv), "note": args.note})
    _write(out, data)
    for k, v in data["rows"].items():
        print(f"{k}: C {before.get(k, float('nan')):.2f} -> {v['C']:.2f}")
    return 0


def _debias_existing(args, argv) -> int:
    """The Jensen correction for an artifact whose runs predate it (one run a token: se² = L/N exactly)."""
    out, data = _stored(args)
    cells = data["inputs"]["cells"]
    st = cells["settings"]
    if st.get("jensen_corrected"):
        raise SystemExit(f"{out} is already corrected ({st['jensen_corrected']})")
    if st.get("n_reps") != 1:
        raise SystemExit("--debias-existing handles one run a token only (se² = L/N exactly)")
    for i, (lp, se, status) in enumerate(zip(cells["log_p"], cells["se"], cells["status"])):
        if status == "resolved":
            cells["log_p"][i] = lp + se * se / 2
    st["jensen_corrected"] = "post hoc by scripts/table1_resolved.py --debias-existing: + se²/2 = L/(2N)"
    data["provenance"]["debiased"] = {**_refresh(data, argv), "note": args.note}
    _write(out, data)
    print(f"corrected {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="a load_model name: nano, smollm2-135m, gemma-3-270m")
    ap.add_argument(
        "--n-tokens", type=int, default=1000, help="tokens of V whose cells are resolved (0: the convergence fits only)"
    )
    ap.add_argument("--reps", type=int, default=2, help="independent splitting runs per token")
    ap.add_argument("--moves", type=int, default=30, help="hit-and-run moves per splitting level")
    ap.add_argument("--particles", type=int, default=32)
    ap.add_argument("--n-per-length", type=int, default=64, help="prompts per length for the table's column")
    ap.add_argument("--lengths", default="4,16,64")
    ap.add_argument("--convergence", default="64,334,1667", help="prompts per length of the nested fits")
    ap.add_argument("--brute-factor", type=int, default=0, help="S = factor·|V| uniform points (0: none)")
    ap.add_argument(
        "--replicate-tokens",
        type=int,
        default=0,
        help="resolve the first this many planned tokens again with --replicate-seed: the check of the stated SE",
    )
    ap.add_argument("--replicate-seed", type=int, default=1, help="splitting seed of the replicate runs")
    ap.add_argument("--uniform-points", type=int, default=20000, help="S of the chapter's uniform Monte Carlo")
    ap.add_argument(
        "--batch", type=int, default=8, help="splitting runs advanced together (results do not depend on it)"
    )
    ap.add_argument("--chunk", type=int, default=8, help="tokens resolved between two stores of their results")
    ap.add_argument("--write-every", type=int, default=24, help="write the partial artifact every this many tokens")
    ap.add_argument("--write-minutes", type=float, default=20.0, help="… or after this many minutes")
    ap.add_argument(
        "--no-store", action="store_true", help="keep nothing in the result store (no resuming; same results)"
    )
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out-dir", default=None)
    ap.add_argument(
        "--debias-existing",
        action="store_true",
        help="add the Jensen correction + se²/2 (= L/2N for one run) to a stored artifact written before "
        "combine_replicates applied it, then recompute its rows and sweep (no model is loaded)",
    )
    ap.add_argument(
        "--recompute-rows",
        action="store_true",
        help="recompute a stored artifact's rows and sweep from its inputs (after a row's formula changed; "
        "no model is loaded)",
    )
    ap.add_argument(
        "--note", default="", help="with --debias-existing or --recompute-rows: a note kept in the provenance"
    )
    args = ap.parse_args(argv)
    if args.debias_existing:
        return _debias_existing(args, argv)
    if args.recompute_rows:
        return _recompute_rows(args, argv)

    import numpy as np
    import torch

    from accessibility_lib.geometry import cells as cells_mod
    from accessibility_lib.geometry import table1_resolved as T
    from accessibility_lib.geometry.cell_distribution import plan_tokens
    from accessibility_lib.geometry.cell_problem import CellProblem
    from accessibility_lib.geometry.cell_resume import import_cells, resolve_resumable, store_base
    from accessibility_lib.geometry.embeddings import sample_embeddings
    from accessibility_lib.geometry.regions import Ellipsoid
    from accessibility_lib.ground import provenance
    from accessibility_lib.ground.paths import BOOK_DATA
    from accessibility_lib.ground.results import default_store
    from accessibility_lib.models import fingerprint
    from accessibility_lib.models.loading import load_model

    torch.set_num_threads(args.threads)
    out = Path(args.out_dir or BOOK_DATA / "support" / "resolved") / f"{args.model}.json"
    lengths = [int(x) for x in args.lengths.split(",")]
    conv_n = sorted({int(x) for x in args.convergence.split(",")} | {args.n_per_length})
    eps_factor = 2.0**-11  # ε = r∞·2^-11 (the l2_fp16 convention of chapter 5's argmax_region column)
    t0 = time.time()
    handle = load_model(args.model)
    argv_ = argv if argv is not None else sys.argv[1:]
    prov = {
        "command": provenance.command_line("nice", ".venv/bin/python", "scripts/table1_resolved.py", argv=argv_),
        "commit": provenance.git_commit(),
        "machine": provenance.machine_text(args.threads),
        "date": provenance.now_utc(),
        "weights": fingerprint.weights_fingerprint(handle),
        "wall_seconds": {},
    }
    emb = sample_embeddings(
        handle,
        max(conv_n),
        lengths,
        seed=args.seed,
        store=None if args.no_store else default_store(),
        model_key=args.model,
        desc=f"{args.model}: embeddings",
    )
    prov["wall_seconds"]["embeddings"] = round(time.time() - t0, 1)
    convergence = [
        {"prompts_per_length": n, **_fit(np.concatenate([emb[ell][:n] for ell in lengths]), eps_factor)} for n in conv_n
    ]
    base = next(c for c in convergence if c["prompts_per_length"] == args.n_per_length)
    data = {
        "model": args.model,
        "d": int(handle.d_model),
        "d_vocab": int(handle.d_vocab),
        "lengths": lengths,
        "prompts_per_length": args.n_per_length,
        "convergence": convergence,
        "provenance": prov,
    }
    if args.n_tokens == 0:
        _write(out, {**data, "state": "complete", "tokens_done": 0, "tokens_planned": 0})
        print(f"wrote {out}: convergence fits only (--n-tokens 0)")
        return 0
    # the region's identity in the store keys: the fit it comes from (the problem digest pins it exactly)
    fit_key = {"lengths": lengths, "prompts_per_length": args.n_per_length, "embedding_seed": args.seed}
    W = handle.W_U.detach().float()
    b = handle.b_U.detach().float()
    ell = Ellipsoid(
        torch.tensor(base["center"], dtype=torch.float64), torch.tensor(base["semi_axes"], dtype=torch.float64)
    )
    problem = CellProblem.from_region(W, b, ell)
    planned = plan_tokens(problem.d_vocab, args.n_tokens, args.seed)
    labels = {"model": args.model, "weights": prov["weights"], "region": "enclosing ellipsoid", **fit_key}
    key_settings = dict(seed=args.seed, n_reps=args.reps, n_particles=args.particles, n_moves=args.moves)
    data["store_key"] = store_base(problem, labels, **key_settings)
    if not args.no_store and out.exists():  # a committed artifact (a fresh machine): its tokens seed the store
        old = json.loads(out.read_text())
        if old.get("store_key") == data["store_key"] and "cells" in old.get("inputs", {}):
            n_in = import_cells(default_store(), data["store_key"], old["inputs"]["cells"])
            print(f"imported {n_in} resolved tokens from {out} into the result store", flush=True)
        elif "cells" in old.get("inputs", {}):
            print(f"{out}: its store key differs from this run's (model, region, settings): not imported", flush=True)
    data["tokens_planned"] = int(planned.size)
    t1 = time.time()
    last = {"time": -math.inf, "done": -1}

    def inputs_of(cells) -> dict:
        return {
            "d": int(handle.d_model),
            "d_vocab": int(handle.d_vocab),
            **{k: base[k] for k in ("r_l2", "r_inf", "eps", "cone_half_angle", "semi_axes", "center", "lo", "hi")},
            "n_embeddings": base["n_embeddings"],
            "eps_convention": "l2_fp16: r = max L2 norm, eps = r_inf * 2^-11",
            "cells": cells.to_dict(),
            "uniform_points": args.uniform_points,
        }

    def write_partial(cells, n_done: int) -> None:
        """The artifact with the tokens done so far, every --write-every tokens or --write-minutes."""
        due = n_done - last["done"] >= args.write_every or time.time() - last["time"] >= 60 * args.write_minutes
        if n_done >= planned.size or not due or n_done == last["done"]:
            return
        last.update(time=time.time(), done=n_done)
        data.update(state="partial", tokens_done=int(n_done))
        prov["wall_seconds"]["cells_this_session"] = round(time.time() - t1, 1)
        if int(cells.resolved.sum()) >= 2:  # D needs two resolved tokens for its SE
            data["inputs"] = inputs_of(cells)
            data["rows"] = T.rows_from_inputs(data["inputs"])
            data["sweep"] = T.ratio_sweep(data["inputs"], SWEEP_LOG2)
        _write(out, data)
        print(f"wrote {out}: partial, {n_done} of {planned.size} tokens", flush=True)

    resolved = resolve_resumable(
        problem,
        planned,
        store=None if args.no_store else default_store(),
        labels=labels,
        chunk=args.chunk,
        on_progress=write_partial,
        **key_settings,
        batch=args.batch,
    )
    prov["wall_seconds"]["cells_this_session"] = round(time.time() - t1, 1)
    inputs = inputs_of(resolved)
    data.update(state="complete", tokens_done=int(resolved.tokens.size))
    data["inputs"] = inputs
    data["rows"] = T.rows_from_inputs(inputs)
    data["sweep"] = T.ratio_sweep(inputs, SWEEP_LOG2)
    if args.replicate_tokens > 0:
        # the same tokens, an independent splitting stream: (ln p̂ − ln p̂') / √(se² + se'²) has sd 1 if the SE is honest
        t2 = time.time()
        k = min(args.replicate_tokens, planned.size)
        rep = resolve_resumable(
            problem,
            planned[:k],
            store=None if args.no_store else default_store(),
            labels=labels,
            chunk=args.chunk,
            **{**key_settings, "seed": args.replicate_seed},
            batch=args.batch,
        )
        data["replicate"] = {"seed": args.replicate_seed, "cells": rep.to_dict()}
        prov["wall_seconds"]["replicate"] = round(time.time() - t2, 1)
    if args.brute_factor > 0:
        t2 = time.time()
        S = args.brute_factor * int(handle.d_vocab)
        cv = cells_mod.cell_volumes(W, b, ell, S, seed=args.seed + 1)
        data["brute"] = {"n_samples": S, "seed": args.seed + 1, "counts": cv.counts.tolist()}
        prov["wall_seconds"]["brute"] = round(time.time() - t2, 1)
    prov["wall_seconds"]["total"] = round(time.time() - t0, 1)
    _write(out, data)
    s = data["rows"]["ellipsoid + non-uniform cells"]["from"]["D"]
    print(
        f"wrote {out}: {s['resolved']} resolved, {s['empty']} empty, E[ln p] = {s['mean_log_p']:.3f} ± {s['se_mean']:.3f}"
    )
    print({k: round(v["C"], 2) for k, v in data["rows"].items()}, math.log(int(handle.d_vocab)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
