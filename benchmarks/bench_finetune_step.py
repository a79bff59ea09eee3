"""What a LoRA step could save on SmolLM2-135M's copying fine-tune: the full step against the least a LoRA step costs.

Chapter 6 fine-tunes SmolLM2-135M whole (``scripts/copying_finetune.py``). LoRA trains a few low-rank
adapters instead, but its forward pass and its backward pass through every layer remain (the adapters sit
inside the layers, so the gradient must reach them). This benchmark times, on the fine-tune's own task
model (the vocabulary cut to the task, the plan's batch size and string lengths, one torch thread):

* **full**: forward, backward to every weight, gradient clipping, an AdamW step (the fine-tune's step);
* **all frozen**: every weight frozen, the input embeddings made to require a gradient, so the backward
  pass still runs through every layer (activation gradients, no weight gradients, no optimiser step): less
  than any LoRA step, which adds its adapters' gradients and optimiser step on top.

The two kinds of step alternate on the same batches, so a machine whose load changes during the run slows
both alike; the ratio of their medians is the measurement (seconds are also stored, with the machine and its
load average). The
result is the most LoRA could save of a step's time, ``1 - frozen / full``.

Usage::

    .venv/bin/python benchmarks/bench_finetune_step.py --json book/data/copying/finetune_step_cost.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from accessibility_lib.experiments.copying import CopyTask
from accessibility_lib.experiments.copying_bases import build_task_model
from accessibility_lib.experiments.copying_model import TrainConfig, _batch
from accessibility_lib.ground import provenance

ROOT = Path(__file__).resolve().parents[1]


def _plan(base: str) -> dict:
    spec = importlib.util.spec_from_file_location("copying_finetune", ROOT / "scripts" / "copying_finetune.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return dict(mod.PLANS.get(base, mod.PLANS["default"]))


def _loss(model, batch, inputs_embeds=None):
    kw = {"inputs_embeds": inputs_embeds} if inputs_embeds is not None else {"input_ids": batch["input_ids"]}
    logits = model(attention_mask=batch["attention_mask"], **kw).logits  # (B, T, |V|+4)
    return torch.nn.functional.cross_entropy(
        logits[:, :-1].reshape(-1, logits.shape[-1]), batch["labels"][:, 1:].reshape(-1), ignore_index=-100
    )


def measure(base: str = "smollm2-135m", reps: int = 5, warmup: int = 2, threads: int = 1) -> dict:
    """Median seconds of a full fine-tuning step and of an all-frozen step (module docstring), alternating.

    Returns:
        ``{"full", "all_frozen"}`` (median seconds a step), ``"full_steps"``, ``"all_frozen_steps"`` (every
        timed step), ``"lora_saving_at_most"`` (1 − all_frozen / full), the plan's ``batch_size`` and
        ``train_max_len`` (symbols), ``threads``.
    """
    torch.set_num_threads(threads)
    cfg = TrainConfig(base=base, **_plan(base))
    task = CopyTask(cfg.alphabet_size)
    model = build_task_model(cfg).train()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.98), weight_decay=cfg.weight_decay)
    embed = model.get_input_embeddings()
    rng = np.random.default_rng([cfg.seed, 0])
    times: dict[str, list[float]] = {"full": [], "all_frozen": []}
    for i in range(warmup + reps):
        batch = _batch(cfg, task, rng, "cpu")
        model.requires_grad_(True)
        t0 = time.perf_counter()
        loss = _loss(model, batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        t_full = time.perf_counter() - t0
        model.requires_grad_(False)
        t0 = time.perf_counter()
        x = embed(batch["input_ids"]).detach().requires_grad_(True)  # (B, T, d_model): gradients reach layer 0
        _loss(model, batch, inputs_embeds=x).backward()
        t_frozen = time.perf_counter() - t0
        if i >= warmup:
            times["full"].append(t_full)
            times["all_frozen"].append(t_frozen)
    full, frozen = statistics.median(times["full"]), statistics.median(times["all_frozen"])
    return {"full": full, "all_frozen": frozen, "full_steps": times["full"], "all_frozen_steps": times["all_frozen"],
            "lora_saving_at_most": 1 - frozen / full, "batch_size": cfg.batch_size,
            "train_max_len": cfg.train_max_len, "threads": threads}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="smollm2-135m")
    ap.add_argument("--reps", type=int, default=5, help="timed steps of each kind (after 2 warm-up steps)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default=None, help="write the result here")
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="a seconds-long run on tiny sizes (the test suite runs it): checks that the script runs, not its numbers",
    )
    args = ap.parse_args(argv)
    if args.tiny:  # the from-scratch copying model (no fetched model), one warm-up and one timed step
        args.base, args.reps = "scratch", 1
    if args.reps < 1:
        ap.error(f"--reps must be at least 1, got {args.reps}")
    load_before = os.getloadavg()[0]
    res = measure(args.base, args.reps, warmup=1 if args.tiny else 2, threads=args.threads)
    res["load_average"] = [
        load_before,
        os.getloadavg()[0],
    ]  # 1-minute load before and after: other work sharing the CPUs
    res["base"] = args.base
    res["provenance"] = {"command": provenance.command_line(".venv/bin/python", "benchmarks/bench_finetune_step.py",
                                                            argv=argv),
                         "commit": provenance.git_commit(), "machine": provenance.machine_text(args.threads),
                         "date": provenance.now_utc()}  # fmt: skip
    print(
        f"full step {res['full']:.2f} s, all frozen {res['all_frozen']:.2f} s (medians of {args.reps}): "
        f"LoRA would save at most {res['lora_saving_at_most']:.0%} of a step"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
