"""Fine-tune one pretrained base on the copy task x|x as the paper does (§5), resumably, into book/data/copying/.

    nice -n 15 nohup env PYTHONPATH=. .venv/bin/python scripts/copying_finetune.py --base smollm2-135m \\
        --threads 1 --checkpoint-every 50 > results/copying_smollm2-135m.log 2>&1 &

The base's input embedding and output head are cut to the task's |V| + 4 rows (the 26 letters a–z and
start, separator, end, pad, as the replication code cuts Pythia to 30 rows) and the whole model is fine-tuned
(AdamW, warm-up and cosine decay, gradient clipping) on strings x|x of lengths 1 … ``train_max_len`` until two
consecutive checks find 100 % exact match on 128 fresh training strings of the longest training length, or
until the step cap; then exact match against length is measured on 50 held-out strings a length, by greedy
decoding, on lengths up to almost three times the longest training length, and (``BEYOND``) on longer ones,
up to 256, that exceed the fine-tuning context but not the base's pretrained positions.

The same command resumes a killed run: the whole training state is checkpointed every ``--checkpoint-every``
steps into the result store (``$ACCESSIBILITY_RESULTS`` or ./results, ``copying_train/<hash>.ckpt/``) and a
restart continues from the last checkpoint, computing the steps an uninterrupted run would (the library's
resume test checks it bit for bit on a tiny model). A finished run is found in the store and only evaluated.

The artifact ``book/data/copying/finetune_<base>.json`` is rewritten at every checkpoint (``status``
"training", the loss and check curves so far, steps and wall time, the measured cost per step and the
projected time to the step cap), and once more when the run is evaluated (``status`` "done", the outcome in
``runs``, in the format chapter 6 reads). Weights are not part of it (they stay in the store).

A run that has not reached its stopping rule yet can be looked at without disturbing it:

    nice -n 15 env PYTHONPATH=. .venv/bin/python scripts/copying_finetune.py --base smollm2-135m --interim

loads the last checkpoint's weights (read-only), measures exact match against length with the same held-out
strings and lengths as the final evaluation, and stores it in the artifact as ``"interim"`` (the step it
was taken at, the training checks up to there, the evaluation, r and r∞), which chapter 6 shows, labelled
as interim, until the run is done.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The settings of each base (any other base takes "default"). SmolLM2-135M: full fine-tuning (what LoRA could
#: save of a step is measured by benchmarks/bench_finetune_step.py), lr 1e-4 (ten times the replication code's
#: 1e-5, which is paired with 10k packed steps).
PLANS = {
    "default": {
        "alphabet_size": 26,
        "context": 96,
        "train_min_len": 1,
        "train_max_len": 16,
        "batch_size": 16,
        "lr": 1e-4,
        "warmup_steps": 50,
        "max_steps": 3000,
        "check_every": 50,
        "seed": 0,
    },
}
EVAL = {"eval_lengths": [2, 4, 8, 12, 14, 16, 17, 18, 20, 22, 24, 28, 32, 40, 46], "n_strings": 50, "seed": 0}
#: Lengths beyond the fine-tuning context (2n + 3 > context): positions the pretrained base saw in pretraining,
#: never in fine-tuning. Measured when the base's positions allow them (``config.pretrained_positions``).
BEYOND = {"eval_lengths": [64, 96, 128, 192, 256], "n_strings": 50, "seed": 0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="smollm2-135m", help="a load_model name (smollm2-135m, nano, a folder)")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--checkpoint-every", type=int, default=50, help="steps between checkpoints")
    ap.add_argument("--max-steps", type=int, default=None, help="override the plan's step cap (a new run)")
    ap.add_argument("--out", default=None, help="artifact path (default book/data/copying/finetune_<base>.json)")
    ap.add_argument(
        "--interim",
        action="store_true",
        help="evaluate the running fine-tuning's last checkpoint (read-only) into the artifact's 'interim'",
    )
    args = ap.parse_args(argv)

    import torch

    from accessibility_lib.experiments.copying_model import TrainConfig
    from accessibility_lib.ground.provenance import command_line, git_commit, machine_text, now_utc
    from accessibility_lib.ground.results import default_store
    from accessibility_lib.runs import copying_outcomes as CO

    torch.set_num_threads(args.threads)
    plan = dict(PLANS.get(args.base, PLANS["default"]))
    if args.max_steps is not None:
        plan["max_steps"] = args.max_steps
    cfg = TrainConfig(base=args.base, **plan)
    out = Path(args.out) if args.out else CO.COPYING_DATA / f"finetune_{args.base.replace('/', '_')}.json"
    store = default_store()
    label = f"{args.base.split('/')[-1]} (fine-tuned), n ≤ {cfg.train_max_len}"
    command = command_line("env PYTHONPATH=. .venv/bin/python", "scripts/copying_finetune.py", argv=argv)
    old = CO.load_artifact(out) or {}
    started = old.get("provenance", {}).get("started") if old.get("settings") == cfg.key() else None
    t_session = time.time()

    def header(status: str, state: dict | None) -> dict:
        h = {
            "base": args.base,
            "status": status,
            "settings": cfg.key(),
            "eval_params": EVAL,
            "resume_command": f"nice -n 15 nohup {command} > results/copying_{args.base.split('/')[-1]}.log 2>&1 &",
            "provenance": {"command": command, "commit": git_commit(), "machine": machine_text(args.threads),
                           "started": started or now_utc(), "updated": now_utc(), "results_root": str(store.root)},
        }  # fmt: skip
        if state is not None:
            steps, secs = int(state["step"]), float(state["seconds"])
            per_step = secs / max(1, steps)
            h["progress"] = {
                "step": steps,
                "seconds": secs,
                "check_step": [int(s) for s in state["check_step"]],
                "check_exact": [float(x) for x in state["check_exact"]],
                "loss_curve": CO.loss_curve(state["loss"]),
            }
            h["plan"] = {"max_steps": cfg.max_steps, "checkpoint_every": args.checkpoint_every,
                         "seconds_per_step": per_step,
                         "projected_hours_to_cap": per_step * (cfg.max_steps - steps) / 3600}  # fmt: skip
        return h

    def on_checkpoint(state: dict) -> None:
        CO.write_artifact(out, header("training", state))
        last = state["check_exact"][-1] if state["check_exact"] else float("nan")
        print(f"[{now_utc()}] step {state['step']}/{cfg.max_steps}, {state['seconds'] / 3600:.2f} h, "
              f"loss {state['loss'][-1]:.4f}, training exact match {last:.3f}", flush=True)  # fmt: skip

    if args.interim:
        return _interim(cfg, store, out, label, command, args.threads)
    print(f"[{now_utc()}] {label}: {cfg.key()}", flush=True)
    from accessibility_lib.experiments.copying import CopyTask
    from accessibility_lib.runs.work import run_copying

    model, info, res = run_copying(cfg, EVAL, store, "cpu", checkpoint_every=args.checkpoint_every,
                                   on_checkpoint=on_checkpoint, show_progress=False, threads=args.threads)  # fmt: skip
    record = CO.outcome_record(label, cfg, EVAL, model, info, res)
    beyond = eval_beyond(model, CopyTask(cfg.alphabet_size), args.threads)
    if beyond:
        record["eval_beyond"] = beyond
    final = header("done", None)
    final["progress"] = {"step": record["train"]["steps"], "seconds": record["train"]["seconds"],
                         "check_step": record["train"]["check_step"], "check_exact": record["train"]["check_exact"],
                         "loss_curve": record["train"]["loss_curve"]}  # fmt: skip
    final["provenance"]["wall_seconds_this_session"] = round(time.time() - t_session, 1)
    CO.write_artifact(out, final, label, record)
    print(f"[{now_utc()}] done: steps {record['train']['steps']}, reached {record['train']['reached']}, exact "
          f"{record['eval']['exact']} at {record['eval']['length']} -> {out}", flush=True)  # fmt: skip
    return 0


def eval_beyond(model, task, threads: int) -> dict | None:
    """Exact match at the :data:`BEYOND` lengths that the base's pretrained positions hold, or None.

    The fine-tuning context (``max_position_embeddings`` of the task model) is lifted to the pretrained
    positions for this evaluation only. Returns ``{"eval_params", "eval" (evaluate_copying's arrays as lists),
    "context", "pretrained_positions"}``.
    """
    import numpy as np

    from accessibility_lib.experiments.copying import evaluate_copying

    limit = getattr(model.config, "pretrained_positions", None)
    lengths = [n for n in BEYOND["eval_lengths"] if limit is not None and 2 * n + 3 <= limit]
    if not lengths:
        return None
    context = model.config.max_position_embeddings
    model.config.max_position_embeddings = limit
    try:
        res = evaluate_copying(model, task, lengths, n_strings=BEYOND["n_strings"], seed=BEYOND["seed"],
                               threads=threads)  # fmt: skip
    finally:
        model.config.max_position_embeddings = context
    return {"eval_params": {**BEYOND, "eval_lengths": lengths}, "eval": {k: np.asarray(v).tolist() for k, v in res.items()},
            "context": int(context), "pretrained_positions": int(limit)}  # fmt: skip


def _interim(cfg, store, out: Path, label: str, command: str, threads: int) -> int:
    """Evaluate the last checkpoint of the running fine-tuning into the artifact's ``interim`` entry."""
    import numpy as np

    from accessibility_lib.experiments import copying_model
    from accessibility_lib.experiments.copying import CopyTask, evaluate_copying
    from accessibility_lib.ground.provenance import git_commit, machine_text, now_utc
    from accessibility_lib.runs import copying_outcomes as CO

    t0 = time.time()
    got = copying_model.checkpointed_model(cfg, store)
    if got is None:
        raise SystemExit(f"no checkpoint of this run in {store.root} (not started, or done: run without --interim)")
    model, state = got
    print(f"[{now_utc()}] {label}: interim evaluation of the checkpoint at step {state['step']}", flush=True)
    task = CopyTask(cfg.alphabet_size)
    res = evaluate_copying(model, task, EVAL["eval_lengths"], n_strings=EVAL["n_strings"], seed=EVAL["seed"],
                           threads=threads)  # fmt: skip
    h = copying_model.final_embeddings(model, task, [cfg.train_max_len], n_strings=32, seed=EVAL["seed"])
    beyond = eval_beyond(model, task, threads)
    interim = {
        "step": int(state["step"]),
        "train_seconds": float(state["seconds"]),
        "check_step": [int(x) for x in state["check_step"]],
        "check_exact": [float(x) for x in state["check_exact"]],
        "config": cfg.key(),
        "eval_params": CO.eval_params(EVAL),
        "eval": {k: np.asarray(v).tolist() for k, v in res.items()},
        "d_model": int(model.config.hidden_size),
        "r": float(np.linalg.norm(h, axis=1).max()),
        "r_inf": float(np.abs(h).max()),
        **({"eval_beyond": beyond} if beyond else {}),
        "provenance": {"command": f"{command}", "commit": git_commit(), "machine": machine_text(threads),
                       "date": now_utc(), "wall_seconds": round(time.time() - t0, 1)},
    }  # fmt: skip
    CO.write_artifact(out, {"interim": interim})
    ex = dict(zip(res["length"].tolist(), np.round(res["exact_rate"], 3).tolist()))
    if beyond:
        ex.update(zip(beyond["eval"]["length"], np.round(beyond["eval"]["exact_rate"], 3).tolist()))
    print(f"[{now_utc()}] interim at step {state['step']}: exact match by length {ex} -> {out}", flush=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("ACCESSIBILITY_PROGRESS", "0")
    raise SystemExit(main())
