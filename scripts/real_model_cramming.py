"""Real-model cramming runs (chapter 3 and the Table 1 of chapter 5): one resumable command per model.

    .venv/bin/python scripts/real_model_cramming.py --model smollm2-135m --plan table1
    .venv/bin/python scripts/real_model_cramming.py --model gemma-3-270m --plan table1
    .venv/bin/python scripts/real_model_cramming.py --model nano --plan instruments --out-dir book/data/cramming/instruments

Each plan is a list of independent units (target kind × length convention × m × instrument × budget ×
dtype, ``accessibility_lib.runs.cramming_units.PLANS``), each run by
``accessibility_lib.runs.cramming_units.run_cramming_unit``. Every per-target outcome goes to the result
store (``$ACCESSIBILITY_RESULTS`` or ./results) as soon as its batch finishes; the artifact
``book/data/cramming/<model>.json`` is rewritten after every unit and every ``--export-every`` minutes,
each unit marked complete, partial or pending, and the units of other plans or dtypes already in it are
kept. Re-running the same command resumes: it first copies the artifact's outcomes into the store (so a
fresh machine resumes too), then skips every finished target. ``--budget-min`` stops cleanly after that
many minutes. A unit at m > 1 starts its search from the line through the n50s already found for the
same kind, instrument, budget and dtype (or n50(1)·m).

The dtype is a property of each unit (float32 in every plan); ``--dtype bfloat16`` switches a plan's
units to bfloat16, and is refused where this CPU runs bfloat16 matmuls at under half the float32 rate
(measured before anything starts).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import dataclasses
import multiprocessing as mp
import os
import time

_WORKER: dict = {}


def _init_worker(model: str, threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    _WORKER["model"] = model
    _WORKER["handles"] = {}


def _handle(dtype: str):
    import torch

    from accessibility_lib.models.loading import load_model

    if dtype not in _WORKER["handles"]:
        _WORKER["handles"].clear()
        _WORKER["handles"][dtype] = load_model(_WORKER["model"], dtype=getattr(torch, dtype))
    return _WORKER["handles"][dtype]


def _run(unit, n_pred: float, deadline: float | None) -> dict:
    from accessibility_lib.experiments.n50 import StopSearch
    from accessibility_lib.ground.provenance import git_commit, now_utc
    from accessibility_lib.ground.results import default_store
    from accessibility_lib.runs.cramming_units import run_cramming_unit

    t0 = time.time()
    stop = (lambda: time.time() > deadline) if deadline else None
    info = {"state": "partial"}
    try:
        res = run_cramming_unit(
            _handle(unit.dtype), unit, default_store(), model_name=_WORKER["model"], n_pred=n_pred, should_stop=stop
        )
        info["state"] = "complete"
        if hasattr(res, "horizons"):  # progressive: the per-target horizons are the outcomes
            info["outcomes"] = [
                {"target": i, "horizon": int(h), "capped": bool(c)}
                for i, (h, c) in enumerate(zip(res.horizons, res.capped))
            ]
            info["token_steps"] = int(res.token_steps)
            info["stages"] = res.stages
        else:
            info.update(bracketed=bool(res.bracketed), bracket=[int(b) for b in res.bracket])
            info["search_token_steps"] = int(res.token_steps)
    except StopSearch:
        pass
    info.update(
        uid=unit.uid, seconds=round(time.time() - t0, 1), finished=now_utc(), commit=git_commit(), n_pred=n_pred
    )
    return info


def _prediction(unit, records: list[dict]) -> float:
    """Where the unit's search starts: :func:`accessibility_lib.runs.cramming_units.predict_for` on the
    artifact's complete units."""
    from accessibility_lib.runs.cramming_summary import summarize
    from accessibility_lib.runs.cramming_units import CrammingUnit, predict_for

    fields = CrammingUnit.__dataclass_fields__
    finished = [
        (CrammingUnit(**{k: r[k] for k in fields}), s.fit.n50)
        for r, s in zip(records, summarize({"format": 2, "units": records}))
        if s.state == "complete" and s.fit is not None and s.fit.ok
    ]
    return predict_for(unit, finished)


def _plans() -> list[tuple[str, str]]:
    """(model, plan) pairs a run can ask for."""
    from accessibility_lib.runs.cramming_units import PLANS

    return list(PLANS)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="smollm2-135m, gemma-3-270m, nano or nano-mamba")
    ap.add_argument(
        "--plan",
        default="table1",
        help="the plan of units for the model (accessibility_lib.runs.cramming_units.PLANS): "
        + "; ".join(f"{m} {p}" for m, p in sorted(_plans())),
    )
    ap.add_argument("--dtype", default=None, help="run the plan's units in this dtype (float32 or bfloat16)")
    ap.add_argument("--workers", type=int, default=1, help="units run in parallel, one process each")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per worker")
    ap.add_argument("--only", default=None, help="comma-separated unit ids to run (default: the whole plan)")
    ap.add_argument(
        "--reopen",
        default=None,
        help="comma-separated ids of complete units to run again: the search replays its stored outcomes and "
        "goes on where the design now asks for more (e.g. after a change to the search that closes open intervals)",
    )
    ap.add_argument("--budget-min", type=float, default=None, help="stop cleanly after this many minutes")
    ap.add_argument("--export-every", type=float, default=10.0, help="minutes between artifact rewrites")
    ap.add_argument("--out-dir", default=None, help="artifact folder (default book/data/cramming)")
    ap.add_argument(
        "--import-from",
        default=None,
        help="another artifact (a .json path) whose outcomes and states are first copied into the store, so this "
        "plan reuses what another plan measured on the same targets and settings",
    )
    ap.add_argument(
        "--predict-from",
        type=int,
        default=None,
        help="store a budget-model prediction (accessibility_lib.runs.budget_model) in the artifact before every "
        "unit of at least this many steps starts (default: the authors' 3,000)",
    )
    args = ap.parse_args(argv)
    if args.budget_min is not None and args.budget_min <= 0:
        ap.error(f"--budget-min must be > 0 minutes, got {args.budget_min}")

    import torch

    from accessibility_lib.experiments.dtype_choice import check_dtype
    from accessibility_lib.experiments.instruments import INSTRUMENTS
    from accessibility_lib.experiments.targets import target_source
    from accessibility_lib.ground import provenance
    from accessibility_lib.ground.results import default_store
    from accessibility_lib.models.fingerprint import weights_fingerprint
    from accessibility_lib.models.loading import load_model
    from accessibility_lib.runs import cramming_artifacts as CA
    from accessibility_lib.runs import cramming_units as CU

    t0 = time.time()
    try:
        all_units = CU.cramming_plan(args.model, args.plan)
        if args.dtype is not None:
            dtype, rates = check_dtype(args.dtype, "cpu")
            all_units = [dataclasses.replace(u, dtype=dtype) for u in all_units]
            if rates:
                print(f"matmul rates here (GFLOP/s, one thread): {rates}", flush=True)
    except ValueError as exc:
        ap.error(str(exc))
    units = all_units
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {u.uid for u in all_units}
        if unknown:
            ap.error(f"--only names unknown units {sorted(unknown)}; the plan has {[u.uid for u in all_units]}")
        units = [u for u in all_units if u.uid in wanted]
    reopen = set(args.reopen.split(",")) if args.reopen else set()
    if reopen - {u.uid for u in units}:
        ap.error(
            f"--reopen names units not in this run {sorted(reopen - {u.uid for u in units})}; it has {[u.uid for u in units]}"
        )
    path = CA.artifact_path(args.model, args.out_dir)
    store = default_store()
    if args.import_from:
        if not os.path.exists(args.import_from):
            ap.error(f"--import-from {args.import_from}: no such artifact")
        print(f"imported {CA.import_artifact(args.import_from, store)} outcomes from {args.import_from}", flush=True)
    added = CA.import_artifact(path, store)
    if added:
        print(f"resumed {added} outcomes from {path} into the store", flush=True)
    old = CA.load_artifact(args.model, args.out_dir) if path.exists() else {"units": []}
    status = {u["uid"]: u for u in old["units"]}
    for u in all_units:  # a stored unit of the same uid made with other settings is another measurement
        prev = status.get(u.uid)
        if prev is not None and prev.get("settings") != CU.unit_settings(u):
            ap.error(
                f"{path} holds unit {u.uid} made with settings {prev.get('settings')}, but the plan now asks for "
                f"{CU.unit_settings(u)}; move the artifact away or restore the plan (instruments: "
                f"{', '.join(INSTRUMENTS)})"
            )
    handles = {d: load_model(args.model, dtype=getattr(torch, d)) for d in {u.dtype for u in all_units}}
    meta = {}
    for d, h in handles.items():
        meta[d] = weights_fingerprint(h)
    sources = {}
    for u in all_units:
        s = target_source(handles[u.dtype], u.kind, u.length_convention, seed=u.seed, corpus=u.corpus)
        sources[u.uid] = (s.name, s.layout())
    del handles
    command = provenance.command_line(".venv/bin/python", "scripts/real_model_cramming.py", argv=argv)
    prov = {
        "command": command,
        "plan": args.plan,
        "commit": provenance.git_commit(),
        "machine": provenance.machine_text(args.threads),
        "workers": args.workers,
        "started": provenance.now_utc(),
    }
    extra: dict = {uid: {k: v for k, v in rec.items() if k not in ("outcomes",)} for uid, rec in status.items()}
    progressive_rows = {
        uid: rec["outcomes"] for uid, rec in status.items() if rec.get("instrument", "").startswith("progressive")
    }

    def records() -> list[dict]:
        out = []
        for u in all_units:
            st = {
                k: v
                for k, v in extra.get(u.uid, {}).items()
                if k
                in (
                    "state",
                    "seconds",
                    "finished",
                    "commit",
                    "bracketed",
                    "bracket",
                    "n_pred",
                    "token_steps",
                    "search_token_steps",
                    "stages",
                    "prediction",
                )
            }
            st.setdefault("state", "pending")
            if CU.get_instrument(u.instrument).protocol == "progressive":
                rows = progressive_rows.get(u.uid, [])
            else:
                rows = CA.unit_outcomes(store, args.model, meta[u.dtype], u, sources[u.uid][0])
            out.append(
                CA.unit_record(u, plan=args.plan, weights=meta[u.dtype], source=sources[u.uid], outcomes=rows, **st)
            )
        return out

    def export(final: bool = False):
        from accessibility_lib.runs.cramming_cost import plan_projection
        from accessibility_lib.runs.cramming_summary import summarize

        recs = records()
        prov_now = {**prov, "date": provenance.now_utc(), "wall_seconds_this_invocation": round(time.time() - t0, 1)}
        # the plan's cost so far and what is left, projected from the finished units (planning estimate)
        # (the rate and the reference units from every unit of the artifact, the rows for this plan's units only)
        mine = {r["uid"] for r in recs}
        summaries = summarize({"format": 2, "units": recs + [r for r in old["units"] if r["uid"] not in mine]})
        prov_now["projection"] = {}
        for d in sorted({u.dtype for u in all_units}):
            proj = plan_projection(summaries, d)
            proj["units"] = [r for r in proj["units"] if r["uid"] in mine]
            left = [r["hours_left_one_worker"] for r in proj["units"]]
            proj["hours_one_worker"] = None if None in left else round(sum(left), 2)
            prov_now["projection"][d] = proj
        CA.write_artifact(path, model=args.model, units=recs, provenance=prov_now)
        CA.write_states(path, store, args.model, recs)
        CA.write_stages(path, store, args.model, recs)
        print(f"[{provenance.now_utc()}] wrote {path}" + (" (final)" if final else ""), flush=True)

    predict_steps = CU.AUTHORS_STEPS if args.predict_from is None else args.predict_from

    def predict_before(u, recs) -> dict | None:
        """The unit's stored prediction (kept once made: it must precede the measurement), else a new one."""
        from accessibility_lib.runs.budget_model import unit_prediction
        from accessibility_lib.runs.cramming_summary import summarize

        if "prediction" in extra.get(u.uid, {}):
            return extra[u.uid]["prediction"]
        if u.max_steps < predict_steps or extra.get(u.uid, {}).get("state") == "complete":
            return None
        mine = {r["uid"] for r in recs}  # the plan's units as the store has them, beside the artifact's others
        others = [r for r in old["units"] if r["uid"] not in mine]
        pred = unit_prediction(u, summarize({"format": 2, "units": recs + others}))
        if pred is not None:
            pred.update(commit=provenance.git_commit(), made=provenance.now_utc())
        return pred

    todo = [u for u in units if extra.get(u.uid, {}).get("state") != "complete" or u.uid in reopen]
    print(f"{len(todo)} of {len(units)} units to run: {[u.uid for u in todo]}", flush=True)
    deadline = t0 + 60 * args.budget_min if args.budget_min else None
    pending = list(todo)
    running: dict = {}
    last_export = time.time()
    with cf.ProcessPoolExecutor(
        args.workers, mp_context=mp.get_context("spawn"), initializer=_init_worker, initargs=(args.model, args.threads)
    ) as pool:

        def waits_for(u) -> bool:
            """A unit waits while a unit it takes its prediction from (same kind, instrument, dtype,
            smaller m or the same m at a smaller budget) is still pending or running."""
            busy = pending + list(running.values())
            return any(
                v is not u
                and v.kind == u.kind
                and v.instrument == u.instrument
                and v.dtype == u.dtype
                and (
                    (v.m < u.m and v.max_steps == u.max_steps and v.n_targets <= u.n_targets)
                    or (v.m == u.m and v.max_steps < u.max_steps)
                    or (v.m == u.m and v.max_steps == u.max_steps and v.n_targets < u.n_targets)
                )
                for v in busy
            )

        def submit_ready():
            if deadline is not None and time.time() > deadline:
                return
            recs = None
            for u in list(pending):
                if len(running) >= args.workers:
                    break
                if waits_for(u):
                    continue
                recs = recs or records()
                pending.remove(u)
                predicted = predict_before(u, recs)
                extra[u.uid] = {"state": "partial", **({"prediction": predicted} if predicted else {})}
                if predicted and "prediction" not in status.get(u.uid, {}):
                    print(f"[{provenance.now_utc()}] {u.uid}: predicted n50 {predicted['text']}", flush=True)
                    export()  # the prediction is in the artifact before the unit's first step
                running[pool.submit(_run, u, _prediction(u, recs), deadline)] = u

        submit_ready()
        while running:
            done, _ = cf.wait(list(running), timeout=60, return_when=cf.FIRST_COMPLETED)
            for fut in done:
                u = running.pop(fut)
                info = fut.result()
                if "outcomes" in info:
                    progressive_rows[u.uid] = info.pop("outcomes")
                kept = {"prediction": extra[u.uid]["prediction"]} if "prediction" in extra.get(u.uid, {}) else {}
                extra[u.uid] = {**kept, **{k: v for k, v in info.items() if k != "uid"}}
                print(f"[{provenance.now_utc()}] {u.uid}: {info['state']} in {info['seconds']} s", flush=True)
                export()
                last_export = time.time()
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
