"""Real-model cramming runs (chapter 3 and the Table 1 of chapter 5): one resumable command per model.

    .venv/bin/python scripts/real_model_cramming.py --model smollm2-135m --plan table1
    .venv/bin/python scripts/real_model_cramming.py --model gemma-3-270m --plan table1

Each plan is a list of independent units (target kind × length convention × m × step budget,
``accessibility_lib.cramming_runs.PLANS``). Every per-target outcome goes to the result store
(``$ACCESSIBILITY_RESULTS`` or ./results) as soon as its batch finishes; the artifact
``book/data/cramming/<model>.json`` is rewritten from the store after every unit and every
``--export-every`` minutes, with each unit marked complete, partial or pending. Re-running the same
command resumes: it first copies the artifact's outcomes into the store (so a fresh machine resumes
too), then skips every finished target. ``--budget-min`` stops cleanly after that many minutes.

Settings: the authors' optimiser (AdamW, lr 1e-2, betas (0.9, 0.9), weight decay 0.01), the authors'
length convention, 10 targets a length, a step budget per unit (300 steps, patience 100, where the
authors allow 3000 / 500; the budget check at m = 1 uses 2× and 4× that). SmolLM2-135M runs in bf16;
Gemma-3-270M in float32 (`--dtype float32`: on this CPU its bf16 forward pass is about 8× slower). A
resumed run takes the dtype of the model's artifact; a different ``--dtype`` is refused.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import multiprocessing as mp
import os
import shlex
import sys
import time

_WORKER: dict = {}


def _init_worker(model: str, dtype: str, threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    from accessibility_lib.models import load_model

    _WORKER["handle"] = load_model(model, dtype=getattr(torch, dtype))
    _WORKER["model"] = model


def _run_unit(unit, n_start: int, deadline: float | None) -> dict:
    from accessibility_lib.cramming_runs import git_commit, now_utc, unit_settings
    from accessibility_lib.n50 import StopSearch, find_n50
    from accessibility_lib.results import default_store
    from accessibility_lib.targets import target_source

    handle = _WORKER["handle"]
    src = target_source(handle, unit.kind, unit.convention, seed=unit.seed, corpus=unit.corpus)
    t0 = time.time()
    stop = (lambda: time.time() > deadline) if deadline else None
    try:
        res = find_n50(
            handle,
            src,
            unit.m,
            unit.n_targets,
            store=default_store(),
            model_name=_WORKER["model"],
            n_start=n_start,
            n_probe=unit.n_targets,
            rel_tol=0.1,
            n_around=0,
            seed=unit.seed,
            show_progress=False,
            should_stop=stop,
            **unit_settings(unit),
        )
        state = "complete"
        extra = {"bracketed": bool(res.bracketed), "bracket": [int(b) for b in res.bracket]}
    except StopSearch:
        state, extra = "partial", {}
    return {
        "uid": unit.uid,
        "state": state,
        "seconds": round(time.time() - t0, 1),
        "finished": now_utc(),
        "commit": git_commit(),
        **extra,
    }


def _start_length(unit, done: dict) -> int:
    """10·m-ish guesses per kind, or n50(1)·m when the m = 1 unit of the same kind has a fit."""
    guess = {"natural": 12, "random_words": 6, "random_tokens": 4}[unit.kind] * unit.m
    n50_1 = done.get((unit.kind, unit.max_steps)) or max((v for (k, _), v in done.items() if k == unit.kind), default=0)
    return max(round(n50_1 * unit.m * 0.9), guess, 2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="smollm2-135m, gemma-3-270m or nano")
    ap.add_argument("--plan", default="table1")
    ap.add_argument(
        "--dtype",
        default=None,
        choices=["float32", "bfloat16"],
        help="default: the dtype of the model's existing artifact (resume as it ran), else bfloat16",
    )
    ap.add_argument("--workers", type=int, default=1, help="units run in parallel, one process each")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per worker")
    ap.add_argument("--only", default=None, help="comma-separated unit ids to run (default: the whole plan)")
    ap.add_argument("--budget-min", type=float, default=None, help="stop cleanly after this many minutes")
    ap.add_argument("--export-every", type=float, default=10.0, help="minutes between artifact rewrites")
    ap.add_argument("--out-dir", default=None, help="artifact folder (default book/data/cramming)")
    args = ap.parse_args(argv)

    import torch

    from accessibility_lib import cramming_runs as CR
    from accessibility_lib.models import load_model
    from accessibility_lib.results import default_store
    from accessibility_lib.support import weights_fingerprint
    from accessibility_lib.targets import target_source

    t0 = time.time()
    units = CR.plan_units(args.model, args.plan)
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {u.uid for u in units}
        if unknown:
            ap.error(f"--only names unknown units {sorted(unknown)}; the plan has {[u.uid for u in units]}")
        units = [u for u in units if u.uid in wanted] if args.only else units
    all_units = CR.plan_units(args.model, args.plan)
    path = CR.artifact_path(args.model, args.out_dir)
    stored = None
    if path.exists():  # an artifact of another dtype would be overwritten by this run's entries: refuse
        stored = CR.load_artifact(args.model, args.out_dir)["dtype"].replace("torch.", "")
        if args.dtype is not None and args.dtype != stored:
            ap.error(f"{path} holds a {stored} run; resume it with --dtype {stored} (or move the artifact away)")
    args.dtype = args.dtype or stored or "bfloat16"
    handle = load_model(args.model, dtype=getattr(torch, args.dtype))
    weights, dtype = weights_fingerprint(handle), str(next(handle.model.parameters()).dtype)
    store = default_store()
    added = CR.import_artifact(path, store)
    if added:
        print(f"resumed {added} outcomes from {path} into the store", flush=True)
    status = {}
    if path.exists():
        import json

        for u in json.loads(path.read_text())["units"]:
            status[u["uid"]] = {
                k: u[k] for k in ("state", "seconds", "finished", "commit", "bracketed", "bracket") if k in u
            }
    sources = {}
    for u in all_units:
        s = target_source(handle, u.kind, u.convention, seed=u.seed, corpus=u.corpus)
        sources[u.uid] = (s.name, s.layout())
    command = " ".join(
        shlex.quote(a)
        for a in [".venv/bin/python", "scripts/real_model_cramming.py", *(argv if argv is not None else sys.argv[1:])]
    )
    prov = {
        "command": command,
        "commit": CR.git_commit(),
        "machine": CR.machine_text(args.threads),
        "workers": args.workers,
        "started": CR.now_utc(),
    }

    def export(final: bool = False):
        prov_now = {**prov, "date": CR.now_utc(), "wall_seconds_this_invocation": round(time.time() - t0, 1)}
        CR.export_artifact(
            path,
            model=args.model,
            weights=weights,
            dtype=dtype,
            plan=args.plan,
            units=all_units,
            sources=sources,
            store=store,
            status=status,
            provenance=prov_now,
        )
        print(f"[{CR.now_utc()}] wrote {path}" + (" (final)" if final else ""), flush=True)

    n50_done: dict = {}
    for u in all_units:  # m = 1 results of earlier invocations seed the start lengths
        if u.m == 1 and status.get(u.uid, {}).get("state") == "complete":
            unit_dict = {
                "outcomes": CR._unit_entries(store, args.model, weights, dtype, sources[u.uid][0], u),
                "layout": sources[u.uid][1],
            }
            fit = CR.refit_unit(unit_dict)[3]
            if fit is not None and fit.ok:
                n50_done[(u.kind, u.max_steps)] = fit.n50
    todo = [u for u in units if status.get(u.uid, {}).get("state") != "complete"]
    print(f"{len(todo)} of {len(units)} units to run: {[u.uid for u in todo]}", flush=True)
    deadline = t0 + 60 * args.budget_min if args.budget_min else None
    del handle  # the workers load their own copy
    ctx = mp.get_context("spawn")
    pending = list(todo)
    running: dict = {}
    last_export = time.time()
    with cf.ProcessPoolExecutor(
        args.workers, mp_context=ctx, initializer=_init_worker, initargs=(args.model, args.dtype, args.threads)
    ) as pool:

        def submit_ready():
            # an m > 1 unit waits for its m = 1 sibling when that one is still to run (for its start length)
            for u in list(pending):
                if len(running) >= args.workers:
                    break
                sibling = next(
                    (v for v in todo if v.kind == u.kind and v.m == 1 and v.max_steps == u.max_steps and v is not u),
                    None,
                )
                if (
                    u.m > 1
                    and sibling is not None
                    and status.get(sibling.uid, {}).get("state") != "complete"
                    and (sibling in pending or sibling.uid in {r.uid for r in running.values()})
                ):
                    continue
                pending.remove(u)
                status[u.uid] = {"state": "partial"}
                running[pool.submit(_run_unit, u, _start_length(u, n50_done), deadline)] = u

        submit_ready()
        while running:
            done, _ = cf.wait(list(running), timeout=60, return_when=cf.FIRST_COMPLETED)
            for fut in done:
                u = running.pop(fut)
                info = fut.result()
                status[u.uid] = {k: v for k, v in info.items() if k != "uid"}
                print(f"[{CR.now_utc()}] {u.uid}: {info['state']} in {info['seconds']} s", flush=True)
                if u.m == 1 and info["state"] == "complete":
                    unit_dict = {
                        "outcomes": CR._unit_entries(store, args.model, weights, dtype, sources[u.uid][0], u),
                        "layout": sources[u.uid][1],
                    }
                    fit = CR.refit_unit(unit_dict)[3]
                    if fit is not None and fit.ok:
                        n50_done[(u.kind, u.max_steps)] = fit.n50
                export()
                last_export = time.time()
            if deadline is None or time.time() < deadline:
                submit_ready()
            if time.time() - last_export > 60 * args.export_every:
                export()
                last_export = time.time()
    export(final=True)
    print(f"done in {time.time() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("ACCESSIBILITY_PROGRESS", "0")
    raise SystemExit(main())
