"""The GPU check: one prepared script, models built from configs (no download), under 8 minutes on one GPU.

Checks, each printed as one line with its measured value and goal, all collected in ``--json``:

1. **matmul**: the device's measured dense matrix-multiply rate in bfloat16 and float32 (the yardstick);
2. **cramming throughput**: a Pythia-160M-shaped model (the real widths, random weights,
   :func:`accessibility_lib.models.standin_build.build_standin` ``full=True``) in bfloat16 crams 64 targets of 100
   tokens (``cramming.cram``, fixed steps): tokens/s and the FLOP rate of the scale plan's count
   (:func:`accessibility_lib.runs.flops.step_flops`) as a fraction of the bf16 matmul rate — goal ≥ 0.4;
3. **batched against one at a time**: the same targets and seeds crammed one target per call — the same
   outcomes (success, steps) and a speed-up — goal ≥ 10×;
4. **cell volumes**: ``cells.cell_volumes`` for a Gemma-3-270M-shaped unembedding (|V| = 262,144,
   d = 640) against a plain matmul of the same shape — goal ≥ 0.7 (1.0: no overhead beyond the matmul);
5. **identical argmax cells** on CPU and on the device for the same seed: per-point tokens and counts
   (where they differ, the top-2 logit margin of the point, to tell a float tie from a bug);
6. **the stand-in preset** (``paper_tiny``) on the device: the sweep's units
   (:mod:`accessibility_lib.runs.sweeps`), then every chapter from the store (``scripts/rerun.py``).

``--tiny`` shrinks every size so that the script runs on two CPU cores in a minute (CI runs it with
``--device cpu --tiny``; check 6 then runs one cramming unit); the goals are printed but only meaningful
on a GPU. Exit status: 1 when a correctness check fails (outcomes or cells differ beyond float ties, the
preset fails); performance goals are reported, and enforced only with ``--strict``.

Run: ``.venv/bin/python benchmarks/gpu_check.py --device cuda --json gpu_check.json``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]

from accessibility_lib.models import standin_build, standins  # noqa: E402
from accessibility_lib.models.handle import wrap_model  # noqa: E402
from accessibility_lib.runs import flops  # noqa: E402


def fmt_rate(x: float) -> str:
    """A FLOP rate in readable units (TFLOP/s on a GPU, GFLOP/s on a small CPU run)."""
    return f"{x / 1e12:.2f} TFLOP/s" if x >= 1e12 else f"{x / 1e9:.2f} GFLOP/s"


class Check:
    def __init__(self, device: str):
        self.device = torch.device(device)
        self.results: dict = {"device": str(self.device)}
        self.failed: list[str] = []
        self.below: list[str] = []

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def timed(self, fn, reps: int = 1):
        self.sync()
        t0 = time.perf_counter()
        for _ in range(reps):
            out = fn()
        self.sync()
        return out, (time.perf_counter() - t0) / reps

    def report(self, name: str, value: float, goal: float | None, text: str):
        self.results[name] = value
        mark = "" if goal is None else ("  [goal met]" if value >= goal else "  [BELOW GOAL]")
        if goal is not None and value < goal:
            self.below.append(name)
        print(f"{name:28s} {text}{mark}", flush=True)


def matmul(c: Check, size: int):
    for dtype in (torch.bfloat16, torch.float32):
        a = torch.randn(size, size, device=c.device, dtype=dtype)
        b = torch.randn(size, size, device=c.device, dtype=dtype)
        a @ b
        _, t = c.timed(lambda: a @ b, reps=5)
        rate = 2.0 * size**3 / t
        c.report(f"matmul_{str(dtype).split('.')[-1]}", rate, None, f"{fmt_rate(rate)} ({size}³)")


def cramming(c: Check, tiny: bool):
    from accessibility_lib.experiments.cramming import cram

    name = "EleutherAI/pythia-160m"
    if tiny:
        model, tok = standin_build.build_standin(name, dtype=torch.bfloat16)
        arch = standins.shrink(standins.architecture(name))
        B, n, steps, single = 4, 10, 3, 4
    else:
        model, tok = standin_build.build_standin(name, dtype=torch.bfloat16, full=True)
        arch = standins.architecture(name)
        B, n, steps, single = 64, 100, 40, 64
    h = wrap_model(model, tok, name=f"{name} shape", device=c.device, verify=False)
    m = 1
    g = torch.Generator().manual_seed(0)
    targets = torch.randint(2, 50000, (B, n), generator=g).tolist()
    kw = dict(max_steps=steps, patience=steps, lr=0.01, betas=(0.9, 0.9), weight_decay=0.01)
    cram(h, targets[:2], m, max_steps=2, patience=2)  # warm-up
    batched, t_b = c.timed(lambda: cram(h, targets, m, seed=list(range(B)), **kw))
    n_steps = float(batched.steps.sum())
    T = m + n - 1
    step_work = n_steps * flops.step_flops(arch, T, n, "cram")
    rate = step_work / t_b
    frac = rate / c.results["matmul_bfloat16"]
    c.results["cram_tokens_per_s"] = n_steps * T / t_b
    c.report(
        "cram_fraction_of_matmul",
        frac,
        0.4,
        f"{n_steps * T / t_b:,.0f} tokens/s, {fmt_rate(rate)} "
        f"= {frac:.2f} of bf16 matmul ({B} targets × {n} tokens, {steps} steps, bf16)",
    )
    t_s = 0.0
    same = 0
    for i in range(single):
        one, t = c.timed(lambda i=i: cram(h, [targets[i]], m, seed=[i], **kw))
        t_s += t
        same += int(bool(one.success[0]) == bool(batched.success[i]) and int(one.steps[0]) == int(batched.steps[i]))
    t_single = t_s * B / single
    c.results["batched_same_outcomes"] = same / single
    c.report(
        "batched_speedup",
        t_single / t_b,
        10.0,
        f"{t_single / t_b:.1f}× ({B} one at a time {t_single:.1f} s "
        f"against batched {t_b:.1f} s); same outcome for {same} of {single}",
    )
    if same != single:
        c.failed.append("batched and one-at-a-time cramming gave different outcomes")


def cell_volumes(c: Check, tiny: bool):
    from accessibility_lib.geometry import support_shape as geometry
    from accessibility_lib.geometry.cells import cell_volumes as cv

    V, d, N = (4096, 32, 4096) if tiny else (262144, 640, 16384)
    g = torch.Generator().manual_seed(0)
    W = torch.randn(V, d, generator=g).to(c.device)
    b = torch.randn(V, generator=g).to(c.device)
    region = geometry.Ball(torch.zeros(d), 10.0)
    cv(W, b, region, 1024, seed=1, progress_desc="warm-up")
    _, t_cv = c.timed(lambda: cv(W, b, region, N, seed=0))
    x = torch.randn(2048, d, generator=g).to(c.device)
    out = torch.empty(2048, V, device=c.device)
    torch.mm(x, W.T, out=out)
    _, t_mm = c.timed(lambda: [torch.mm(x, W.T, out=out) for _ in range(N // 2048)])
    ratio = t_mm / t_cv
    c.report(
        "cell_volumes_vs_matmul",
        ratio,
        0.7,
        f"{ratio:.2f} ({N:,} points, |V| = {V:,}, d = {d}: "
        f"{fmt_rate(2 * N * d * V / t_cv)} against {fmt_rate(2 * N * d * V / t_mm)})",
    )


def cells_cpu_vs_device(c: Check, tiny: bool):
    from accessibility_lib.geometry import support_shape as geometry
    from accessibility_lib.geometry.cells import argmax_tokens, cell_volumes

    V, d, N = (4096, 32, 2048) if tiny else (262144, 640, 4096)
    g = torch.Generator().manual_seed(1)
    W, b = torch.randn(V, d, generator=g), torch.randn(V, generator=g)
    region = geometry.Ball(torch.zeros(d), 10.0)
    x = region.sample(N, torch.Generator().manual_seed(7)).float()  # as cell_volumes computes: float32
    cpu = argmax_tokens(x, W, b)
    dev = argmax_tokens(x, W.to(c.device), b.to(c.device))
    differ = torch.nonzero(cpu != dev).flatten()
    margins = []
    for i in differ.tolist():  # a float tie: the two tokens' logits agree to rounding
        z = (x[i].double() @ W.double().T + b.double()).sort(descending=True).values
        margins.append(float((z[0] - z[1]) / z[0].abs()))
    counts_cpu = cell_volumes(W, b, region, N, seed=3).counts
    counts_dev = cell_volumes(W.to(c.device), b.to(c.device), region, N, seed=3).counts
    same_counts = bool((counts_cpu == counts_dev).all())
    ties = all(m < 1e-5 for m in margins)
    c.results["cells_points_differing"] = int(differ.numel())
    c.report(
        "cells_identical",
        float(differ.numel() == 0 and same_counts),
        None,
        f"{N - differ.numel()} of {N} points in the same cell on cpu and {c.device}; counts "
        f"{'identical' if same_counts else 'differ'}"
        + (f"; differing points' top-2 margins {margins}" if margins else ""),
    )
    if differ.numel() and not ties:
        c.failed.append("argmax cells differ between CPU and device beyond float ties")


def preset(c: Check, tiny: bool, out: Path):
    env = {**os.environ, "ACCESSIBILITY_PROGRESS": "0"}
    results = out / "paper_tiny" / "results"
    cmd = [
        sys.executable,
        "-m",
        "accessibility_lib.runs.sweeps",
        "--preset",
        "paper_tiny",
        "--device",
        str(c.device),
        "--results",
        str(results),
    ]
    if tiny:
        cmd += ["--chapters", "cramming", "-p", "ms=[1]", "-p", 'kinds=["natural"]']
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    print(proc.stdout[-2000:], proc.stderr[-2000:] if proc.returncode else "", flush=True)
    ok = proc.returncode == 0
    if ok and not tiny:
        proc = subprocess.run(
            [
                sys.executable,
                "scripts/rerun.py",
                "--preset",
                "paper_tiny",
                "--device",
                str(c.device),
                "--out",
                str(out / "paper_tiny"),
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        print(proc.stdout[-3000:], flush=True)
        ok = proc.returncode == 0
    c.report(
        "standin_preset",
        float(ok),
        None,
        f"paper_tiny on {c.device}: {'ran' if ok else 'FAILED'} in "
        f"{time.perf_counter() - t0:.0f} s" + (" (one cramming unit: --tiny)" if tiny else ""),
    )
    if not ok:
        c.failed.append("the stand-in preset failed")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--tiny", action="store_true", help="tiny sizes (CI on CPU)")
    ap.add_argument("--json", default=None, help="write every figure here")
    ap.add_argument("--out", default=None, help="folder for the stand-in preset's runs (default: a temporary one)")
    ap.add_argument("--skip-preset", action="store_true", help="leave out check 6")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a performance goal is missed")
    args = ap.parse_args(argv)
    os.environ.setdefault("ACCESSIBILITY_PROGRESS", "0")
    from accessibility_lib.runs.parameters import device_available

    try:
        device_available("--device", args.device)  # a device this machine lacks: a clear error before any work
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    torch.set_float32_matmul_precision("highest")  # float32 means float32 (no TF32), on every device
    if torch.device(args.device).type == "cpu":
        torch.set_num_threads(min(2, os.cpu_count() or 1) if args.tiny else os.cpu_count() or 1)
    c = Check(args.device)
    name = torch.cuda.get_device_name(c.device) if c.device.type == "cuda" else "CPU"
    print(f"GPU check on {c.device} ({name}){' — tiny sizes' if args.tiny else ''}", flush=True)
    t0 = time.perf_counter()
    matmul(c, 256 if args.tiny else 8192)
    cramming(c, args.tiny)
    cell_volumes(c, args.tiny)
    cells_cpu_vs_device(c, args.tiny)
    if not args.skip_preset:
        with tempfile.TemporaryDirectory() as tmp:
            preset(c, args.tiny, Path(args.out) if args.out else Path(tmp))
    c.results["seconds"] = time.perf_counter() - t0
    c.results["below_goal"], c.results["failed"] = c.below, c.failed
    print(f"done in {c.results['seconds']:.0f} s; below goal: {c.below or 'none'}; failed: {c.failed or 'none'}")
    if args.json:
        Path(args.json).write_text(json.dumps(c.results, indent=1) + "\n")
    return 1 if c.failed or (args.strict and c.below) else 0


if __name__ == "__main__":
    raise SystemExit(main())
