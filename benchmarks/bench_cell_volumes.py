"""Throughput of cells.cell_volumes against a plain matmul of the same shape (goal: ratio ≥ 0.5).

cell_volumes draws n points uniform in a region, computes the (n, |V|) logits in blocks, keeps a
running argmax and counts. Its floor is the matmul (n, d) @ (d, |V|); the ratio printed is
matmul time / cell_volumes time (1.0 = no overhead beyond the matmul).

Run: ``.venv/bin/python benchmarks/bench_cell_volumes.py [--device cuda] [--n 8192] [--d 576] [--vocab 49152]``
(``--tiny``: n = 256, d = 16, |V| = 64, what the test suite runs)
"""

import argparse
import time

import torch

from accessibility_lib.geometry import support_shape as G
from accessibility_lib.geometry.cells import cell_volumes


def main():
    import os

    print(f"load average (1 min) at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--d", type=int, default=576)  # SmolLM2-135M's shape by default
    ap.add_argument("--vocab", type=int, default=49152)
    ap.add_argument("--chunk", type=int, default=65536)
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="a seconds-long run on tiny sizes (the test suite runs it): checks that the script runs, not its numbers",
    )
    args = ap.parse_args()
    if args.tiny:
        args.n, args.d, args.vocab, args.chunk = 256, 16, 64, 128
    dev = torch.device(args.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    g = torch.Generator().manual_seed(0)
    W = torch.randn(args.vocab, args.d, generator=g).to(dev)
    b = torch.randn(args.vocab, generator=g).to(dev)
    region = G.Ball(torch.zeros(args.d), 10.0)
    cell_volumes(W, b, region, min(args.n, 2048), seed=1)  # warm-up
    sync()
    t0 = time.perf_counter()
    res = cell_volumes(W, b, region, args.n, seed=0, chunk=args.chunk)
    sync()
    t_cv = time.perf_counter() - t0

    x = torch.randn(2048, args.d, generator=g).to(dev)
    out = torch.empty(2048, args.vocab, device=dev)
    torch.mm(x, W.T, out=out)
    sync()
    t0 = time.perf_counter()
    for _ in range(0, args.n, 2048):
        torch.mm(x, W.T, out=out)
    sync()
    t_mm = (time.perf_counter() - t0) * args.n / (2048 * len(range(0, args.n, 2048)))
    flops = 2.0 * args.n * args.d * args.vocab
    print(f"shape: n={args.n} points, d={args.d}, |V|={args.vocab}, device={dev}, threads={torch.get_num_threads()}")
    print(
        f"cell_volumes: {t_cv:.3f} s = {args.n / t_cv:,.0f} samples/s ({flops / t_cv / 1e9:.1f} GFLOP/s), {res.n_no_hit} tokens without a hit"
    )
    print(f"plain matmul: {t_mm:.3f} s = {args.n / t_mm:,.0f} samples/s ({flops / t_mm / 1e9:.1f} GFLOP/s)")
    print(f"ratio (matmul time / cell_volumes time): {t_mm / t_cv:.2f}  (goal >= 0.5)")


if __name__ == "__main__":
    main()
