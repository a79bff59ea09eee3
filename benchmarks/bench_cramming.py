"""Cramming benchmarks (issue 5), measured in one run; prints ratios.

(a) batched cramming against one target at a time, same targets and seeds: wall time and outcomes
    (goal: >= 5x faster with the same outcomes);
(b) optimisation runs ``find_n50`` needs (bracketing + bisection with few probe targets, then a
    design around n50) against the authors' sweep (from n = 10 in steps of 100 while the success rate is
    above 0.9, then in steps of 10 until it is below 0.1, 20 targets a point), simulated on known success curves — the paper's
    own Pythia-160M curves as re-fitted by ``accessibility_lib.experiments.fitting`` — with binomial noise; both
    n50 estimates are compared with the truth (goal: >= 3x fewer runs);
(c) forward+backward throughput of a cramming step in tokens/s, against 6·params·tokens at the
    machine's measured fp32 matmul rate.

Usage: ``.venv/bin/python benchmarks/bench_cramming.py [--model nano] [--threads 1]`` (``--tiny``: seconds, what
the test suite runs)
(falls back to a random GPT-NeoX of nano's size when the nano weights are absent).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from _common import matmul_rate  # noqa: E402 (benchmarks/ is on sys.path when run as a script)

from accessibility_lib.experiments.cramming import cram
from accessibility_lib.experiments.fitting import fit_sigmoid, logistic
from accessibility_lib.experiments.n50_bisect import locate_n50

CURVES = Path(__file__).resolve().parents[1] / "accessibility_lib" / "data" / "paper" / "cramming_curves.json"


def _handle(name: str):
    from accessibility_lib.models.handle import wrap_model
    from accessibility_lib.models.loading import load_model

    try:
        return load_model(name), name
    except ValueError:
        import transformers

        torch.manual_seed(0)
        cfg = transformers.GPTNeoXConfig(
            vocab_size=4096,
            hidden_size=128,
            num_hidden_layers=4,
            num_attention_heads=4,
            intermediate_size=512,
            max_position_embeddings=512,
            initializer_range=0.2,
        )
        return wrap_model(transformers.GPTNeoXForCausalLM(cfg), verify=False), "random GPT-NeoX (nano absent)"


def bench_batched(handle, n_targets=16, steps=60, lengths=None, m=1):
    g = torch.Generator().manual_seed(0)
    lengths = lengths or [4 + (i * 3) % 24 for i in range(n_targets)]
    n_targets = len(lengths)
    targets = [torch.randint(0, handle.d_vocab, (n,), generator=g).tolist() for n in lengths]
    kw = dict(max_steps=steps, lr=0.05, patience=steps)
    t0 = time.perf_counter()
    batched = cram(handle, targets, m, seed=0, **kw)
    t_batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    singles = [cram(handle, [t], m, seed=[i], **kw) for i, t in enumerate(targets)]
    t_single = time.perf_counter() - t0
    same = all(s.success[0] == batched.success[i] for i, s in enumerate(singles))
    print(
        f"(a) batched {n_targets} targets (m = {m}, n = {min(lengths)}..{max(lengths)}, {steps} steps max): {t_batched:.1f} s; one at a time: "
        f"{t_single:.1f} s; speed-up {t_single / t_batched:.1f}x; same outcomes: {same} "
        f"({int(batched.success.sum())}/{n_targets} crammed)"
    )
    return t_single / t_batched, same


def authors_sweep_lengths(rate, n_start=10, coarse=100, fine=10, high=0.9, low=0.1, n_max=4096):
    """The lengths the authors' sweep measures, given ``rate(n)`` (the success rate it sees at n).

    It starts at ``n_start`` and steps by ``coarse`` while the rate is above ``high``; from the first length
    where it is not, it steps by ``fine`` until the rate is below ``low`` (that length is measured and ends
    the sweep). ``n_max`` only stops a curve that never falls.

    >>> authors_sweep_lengths(lambda n: 1.0 if n < 150 else 0.5 if n < 180 else 0.0)
    [10, 110, 210]
    >>> authors_sweep_lengths(lambda n: 1.0 if n < 150 else 0.5 if n < 240 else 0.0)
    [10, 110, 210, 220, 230, 240]
    >>> authors_sweep_lengths(lambda n: 0.5 if n < 40 else 0.0)
    [10, 20, 30, 40]
    """
    lengths, n, step = [], n_start, coarse
    while n <= n_max:
        r = rate(n)
        lengths.append(n)
        if step == coarse and r <= high:
            step = fine
        if step == fine and r < low:
            break
        n += step
    return lengths


def replication_sweep(true_n50, k, rng, trials=20):
    """The authors' sweep (:func:`authors_sweep_lengths`) on a logistic curve with binomial noise, 20 targets a
    point, then the logistic fit of every point: (n50, optimisation runs)."""
    seen = {}

    def rate(n):
        seen[n] = rng.binomial(trials, logistic(n, true_n50, k)) / trials
        return seen[n]

    authors_sweep_lengths(rate)
    ns = np.array(sorted(seen), dtype=float)
    fit = fit_sigmoid(ns, [seen[int(v)] for v in ns], trials)
    return fit.n50, trials * len(seen)


def bench_search(n_rep=10, tiny=False):
    data = json.loads(CURVES.read_text())["models"]["EleutherAI_pythia-160m"]
    rows = []
    for kind in ("natural",) if tiny else ("natural", "random"):
        for m, pts in list(data[kind]["curves"].items())[: 1 if tiny else None]:
            pts = np.asarray(pts)
            truth = fit_sigmoid(pts[:, 0], pts[:, 1], 20)
            for rep in range(n_rep):
                rng = np.random.default_rng(1000 * int(m) + rep)
                n50_grid, runs_grid = replication_sweep(truth.n50, truth.steepness, rng)
                ev = lambda n, c: (rng.binomial(c, logistic(n, truth.n50, truth.steepness)) / c, c, 0)  # noqa: E731
                res = locate_n50(ev, 10 * int(m), 2048, n_trials=20, seed=rep)
                rows.append((kind, int(m), truth.n50, runs_grid, res.runs, n50_grid, res.n50))
    r = np.array([row[2:] for row in rows], dtype=float)
    ratio = r[:, 1].sum() / r[:, 2].sum()
    err_grid = np.abs(r[:, 3] - r[:, 0]) / r[:, 0]
    err_ours = np.abs(r[:, 4] - r[:, 0]) / r[:, 0]
    print(
        f"(b) n50 search on the paper's Pythia-160M curves (natural+random, m = 1..5, {n_rep} noisy replicates): "
        f"the authors' sweep {r[:, 1].mean():.0f} runs/curve, find_n50 {r[:, 2].mean():.0f} runs/curve -> "
        f"{ratio:.1f}x fewer; median |n50 error| grid {100 * np.median(err_grid):.1f} %, ours "
        f"{100 * np.median(err_ours):.1f} % (90th pct {100 * np.quantile(err_grid, 0.9):.1f} % vs "
        f"{100 * np.quantile(err_ours, 0.9):.1f} %)"
    )
    return ratio


def bench_throughput(handle, batch=16, n=64, steps=5):
    params = sum(p.numel() for p in handle.model.parameters())
    g = torch.Generator().manual_seed(1)
    targets = torch.randint(0, handle.d_vocab, (batch, n), generator=g)
    cram(handle, targets, 1, max_steps=1, patience=10)  # warm-up
    t0 = time.perf_counter()
    res = cram(handle, targets, 1, max_steps=steps, patience=10 * steps, lr=1e-4)
    dt = time.perf_counter() - t0
    tokens = batch * n * (steps + 1)  # each step: one forward(+backward) over m + n - 1 ≈ n positions
    tps = tokens / dt
    achieved = 6 * params * tps
    rate = matmul_rate()
    print(
        f"(c) cramming throughput: {tps:.0f} tokens/s (batch {batch} x {n} tokens, {params / 1e6:.2f} M params) "
        f"= {achieved / 1e9:.2f} GFLOP/s at 6·params·tokens; fp32 matmul {rate / 1e9:.1f} GFLOP/s -> "
        f"{achieved / rate:.2f} of the matmul rate (embedding lookups counted as params: an upper estimate)"
    )
    assert not res.success.any()
    return achieved / rate


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="nano")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: leave torch's default)")
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="a seconds-long run on tiny sizes (the test suite runs it): checks that the script runs, not its numbers",
    )
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    handle, label = _handle(args.model)
    print(f"model: {label}; torch threads: {torch.get_num_threads()}")
    if args.tiny:  # one curve, one replicate; 4 targets of 4 steps; a 2 x 8 throughput batch
        bench_search(n_rep=1, tiny=True)
        bench_batched(handle, lengths=[2, 3, 4, 5], steps=4)
        bench_throughput(handle, batch=2, n=8, steps=1)
        return
    bench_search()
    bench_batched(
        handle, lengths=[2 + i % 4 for i in range(20)], m=4, steps=200
    )  # the nano chapter's regime (random n50(m=4) ~ 3)
    bench_batched(handle)
    bench_throughput(handle)


if __name__ == "__main__":
    main()
