"""Benchmark: a 400x400 slice of the argmax cells of SmolLM2-135M (chapter 2, paper Fig 1).

Prints, measured in one run:

1. the seconds of the whole 400x400 slice by ``slices.argmax_slice`` (logits restricted to the plane,
   hull candidates; argmax and Voronoi images);
2. the direct d-dimensional ``cells.argmax_tokens`` on the points of ``--rows`` rows of that grid
   (all 400 rows = 160,000 points = 9.1 TFLOP for SmolLM2; the default 40 rows = 10%), its
   achieved FLOP/s (2·N·d·|V|), and the ratio of that to a plain matmul of the same shapes
   ((N, d) @ (d, |V|) in the same blocks, no argmax), alternated with it and best-of-``--repeats``.
   Goal: ratio >= 0.5.

Usage: ``.venv/bin/python benchmarks/bench_slice.py [--model smollm2-135m] [--rows 40] [--repeats 2]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from accessibility_lib.geometry import cells, slices
from accessibility_lib.models import loading as models


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--resolution", type=int, default=400)
    ap.add_argument("--rows", type=int, default=40, help="grid rows for the direct d-dimensional argmax (400 = all)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="a seconds-long run on tiny sizes (the test suite runs it): checks that the script runs, not its numbers"
        + " (nano, a 24x24 slice, 4 rows, once)",
    )
    args = ap.parse_args()
    if args.tiny:
        args.model, args.resolution, args.rows, args.repeats = "nano", 24, 4, 1

    h = models.load_model(args.model)
    ids, mask = h.encode(["The quick brown fox", "https://", "In a distant future"])
    plane = slices.plane_through(h.final_embeddings(ids, attention_mask=mask))
    print(f"model {args.model}: d = {h.d_model}, |V| = {h.d_vocab}, torch threads = {torch.get_num_threads()}")

    t = time.perf_counter()
    sl = slices.argmax_slice(plane, h.W_U, h.b_U, resolution=args.resolution, extent=1.5)
    t_plane = time.perf_counter() - t
    print(
        f"{args.resolution}x{args.resolution} slice (plane method, argmax + Voronoi): {t_plane:.2f} s, "
        f"{sl.n_cells} cells in the picture, {sl.n_cells_plane} on the whole plane"
    )

    rows = np.linspace(0, args.resolution - 1, min(args.rows, args.resolution)).astype(int)
    uu, vv = np.meshgrid(sl.u, sl.v[rows])
    pts = plane.points(np.stack([uu.ravel(), vv.ravel()], axis=1)).to(torch.float32)  # (N, d)
    N, d, V = pts.shape[0], h.d_model, h.d_vocab
    flop = 2.0 * N * d * V
    W = h.W_U
    chunk, point_chunk = 8192, 2048  # argmax_tokens' defaults

    def plain_matmul():
        Wt = [W[v0 : v0 + chunk].T.contiguous() for v0 in range(0, V, chunk)]  # same conversion work as argmax_tokens
        out = torch.empty(point_chunk, chunk)
        for Wc in Wt:
            for p0 in range(0, N, point_chunk):
                x = pts[p0 : p0 + point_chunk]
                torch.mm(x, Wc, out=out[: x.shape[0], : Wc.shape[1]])

    t_mm, t_arg = [], []
    for _ in range(args.repeats):
        t = time.perf_counter()
        plain_matmul()
        t_mm.append(time.perf_counter() - t)
        t = time.perf_counter()
        got = cells.argmax_tokens(pts, W, h.b_U, chunk=chunk, point_chunk=point_chunk)
        t_arg.append(time.perf_counter() - t)
    agree = float(np.mean(got.numpy() == sl.tokens[rows].ravel()))
    f_mm, f_arg = flop / min(t_mm), flop / min(t_arg)
    print(
        f"direct argmax_tokens on {len(rows)} of {args.resolution} rows ({N} points, {flop / 1e12:.2f} TFLOP): "
        f"{min(t_arg):.2f} s = {f_arg / 1e9:.1f} GFLOP/s; agreement with the plane method {100 * agree:.3f}%"
    )
    print(f"plain matmul of the same shapes: {min(t_mm):.2f} s = {f_mm / 1e9:.1f} GFLOP/s")
    print(f"ratio argmax_tokens / plain matmul FLOP/s = {f_arg / f_mm:.2f} (goal >= 0.5)")
    print(
        f"estimated direct 400x400 slice: {min(t_arg) * args.resolution / len(rows):.0f} s; "
        f"plane method speed-up: {min(t_arg) * args.resolution / len(rows) / t_plane:.0f}x"
    )


if __name__ == "__main__":
    main()
