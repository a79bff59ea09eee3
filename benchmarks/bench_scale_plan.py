"""The scale plan against a measured run: the four kinds of work on the Pythia-160M stand-in at two sizes.

For each kind of work the plan counts (:mod:`accessibility_lib.runs.scaleplan`) — a cramming step
(``cramming.cram``), a forward pass for embeddings (``embeddings.sample_embeddings``), argmax cells
(``cells.argmax_tokens``) and a training step (``copying_model.train_copying``) — this runs the library's
own code on the Pythia-160M stand-in at a small and a large size, one thread, and measures the thread's
CPU time (``time.thread_time``: what a busy shared machine does not inflate). It prints, per kind:

- the plan's FLOP count at both sizes and their ratio, the measured time ratio, and measured / plan
  (1.0: the cost grows as the plan says);
- η, the achieved FLOP/s as a fraction of this CPU's fp32 matrix-multiply rate on one thread (the
  yardstick of ``_common.matmul_rate``, measured in the same run): the plan's time estimates assume a GPU
  reaches the same fraction of its own rate.

``--write`` stores the result, with the command, commit, machine and date, in
``book/data/scale/cpu_throughput.json``, which ``scripts/scale_plan.py`` turns into book/scale.md.

Run: ``.venv/bin/python benchmarks/bench_scale_plan.py [--write]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]

from accessibility_lib.models import standin_build, standins  # noqa: E402
from accessibility_lib.models.handle import wrap_model  # noqa: E402
from accessibility_lib.runs import flops, scaleplan  # noqa: E402

MODEL = "EleutherAI/pythia-160m"
SIZES = {"small": (256, 2), "large": (512, 4)}  # (d_model, layers) of the stand-in


def _cpu_matmul_rate(size: int = 1024, reps: int = 6) -> float:
    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b
    t0 = time.thread_time()
    for _ in range(reps):
        a @ b
    return 2.0 * size**3 * reps / (time.thread_time() - t0)


def _handle(d: int, layers: int):
    model, tok = standin_build.build_standin(MODEL, d_model=d, n_layers=layers)
    return wrap_model(model, tok, name=f"standin {d}x{layers}", verify=False), standins.shrink(
        standins.architecture(MODEL), d, layers
    )


def measure(kind: str, d: int, layers: int) -> tuple[float, float]:
    """(FLOPs the plan counts, thread CPU seconds) of one kind of work at one size."""
    handle, arch = _handle(d, layers)
    g = torch.Generator().manual_seed(0)
    if kind == "cram":
        from accessibility_lib.experiments.cramming import cram

        m, n, B, steps = 2, 32, 4, 6
        targets = torch.randint(2, 50000, (B, n), generator=g).tolist()
        cram(handle, targets, m, max_steps=1, patience=1)  # warm-up
        t0 = time.thread_time()
        r = cram(handle, targets, m, max_steps=steps, patience=steps)
        secs = time.thread_time() - t0
        return float(r.steps.sum()) * flops.step_flops(arch, m + n - 1, n, "cram"), secs
    if kind == "forward":
        from accessibility_lib.geometry.embeddings import sample_embeddings

        N, T = 8, 256
        sample_embeddings(handle, 2, [T], token_budget=2048, desc="warm-up")
        t0 = time.thread_time()
        sample_embeddings(handle, N, [T], token_budget=2048, seed=1)
        return N * flops.forward_flops(arch, T), time.thread_time() - t0
    if kind == "cells":
        from accessibility_lib.geometry.cells import argmax_tokens

        N = 2048
        x = torch.randn(N, d, generator=g)
        argmax_tokens(x[:256], handle.W_U, handle.b_U)
        t0 = time.thread_time()
        argmax_tokens(x, handle.W_U, handle.b_U)
        return 2.0 * N * d * arch.d_vocab, time.thread_time() - t0
    if kind == "train":
        from dataclasses import replace

        from accessibility_lib.experiments.copying_model import TrainConfig, train_copying
        from accessibility_lib.ground.results import ResultStore

        L, B, steps = 24, 8, 6
        cfg = TrainConfig(
            base="standin:" + MODEL,
            train_min_len=L,
            train_max_len=L,
            batch_size=B,
            max_steps=steps,
            check_every=10**6,
            warmup_steps=1,
            context=128,
        )
        cut = replace(arch, d_vocab=cfg.alphabet_size + 4, tied=False)
        with tempfile.TemporaryDirectory() as tmp:
            base, tok = standin_build.build_standin(MODEL, d_model=d, n_layers=layers)
            t0 = time.thread_time()
            _, info = train_copying(cfg, store=ResultStore(tmp), base_model=base, tokenizer=tok, show_progress=False)
            secs = time.thread_time() - t0
        T = 2 * L + 3
        work = info["steps"] * B * flops.step_flops(cut, T, T, "train") + 128 * flops.forward_flops(cut, T, T)
        return work, secs
    raise ValueError(kind)


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True)
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except OSError:
        return "unknown"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"store the result in {scaleplan.THROUGHPUT_PATH}")
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="a seconds-long run on tiny sizes (the test suite runs it): checks that the script runs, not its numbers"
        + " (stand-ins of width 16 and 32, one layer; never --write)",
    )
    args = ap.parse_args(argv)
    if args.tiny and args.write:
        ap.error("--tiny measures nothing worth storing: drop --write")
    sizes_run = {"small": (16, 1), "large": (32, 1)} if args.tiny else SIZES
    torch.set_num_threads(1)
    os.environ.setdefault("ACCESSIBILITY_PROGRESS", "0")
    print(f"load average (1 min) at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; one torch thread")
    rate = _cpu_matmul_rate(256, 2) if args.tiny else _cpu_matmul_rate()
    print(f"fp32 matmul, one thread: {rate / 1e9:.1f} GFLOP/s (thread CPU time)")
    sizes, eta = {}, {}
    for kind in ("cram", "forward", "cells", "train"):
        got = {name: measure(kind, d, layers) for name, (d, layers) in sizes_run.items()}
        (f_s, t_s), (f_l, t_l) = got["small"], got["large"]
        flop_ratio, time_ratio = f_l / f_s, t_l / t_s
        eta[kind] = f_l / t_l / rate
        sizes[kind] = {
            "small": f"d = {sizes_run['small'][0]}, {sizes_run['small'][1]} layers",
            "large": f"d = {sizes_run['large'][0]}, {sizes_run['large'][1]} layers",
            "flops_small": f_s,
            "flops_large": f_l,
            "seconds_small": t_s,
            "seconds_large": t_l,
            "flop_ratio": flop_ratio,
            "time_ratio": time_ratio,
            "eta_small": f_s / t_s / rate,
            "eta_large": eta[kind],
        }
        print(
            f"{kind:8s} plan FLOP {f_s:.3g} -> {f_l:.3g} (x{flop_ratio:.2f}); CPU time {t_s:.2f} s -> {t_l:.2f} s "
            f"(x{time_ratio:.2f}); measured/plan {time_ratio / flop_ratio:.2f}; η = {f_s / t_s / rate:.2f} -> "
            f"{eta[kind]:.2f}"
        )
    record = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, one thread",
        "date": dt.date.today().isoformat(),
        "command": "benchmarks/bench_scale_plan.py --write",
        "commit": _commit(),
        "model": f"standin:{MODEL}",
        "matmul_flops": rate,
        "eta": eta,
        "sizes": sizes,
    }
    if args.write:
        path = scaleplan.THROUGHPUT_PATH
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1) + "\n")
        print(f"written: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
