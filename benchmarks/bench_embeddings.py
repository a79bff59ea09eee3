"""Embedding sampling throughput (tokens/s) against the forward FLOP count at the measured matmul rate.

Model: ``nano`` when it is available, else a random GPT-NeoX of Pythia-style shape built from a
config (no download). FLOPs per token of the forward pass ≈ 2·(non-embedding parameters) +
4·L·ℓ·d (attention scores and weighted sum), without the LM head (``final_embeddings`` stops at the
final norm). The ratio printed is achieved FLOP/s / the machine's fp32 matmul FLOP/s, measured here.

Run: ``.venv/bin/python benchmarks/bench_embeddings.py [--length 128] [--prompts 64]``
"""

import argparse
import time

import torch
from _common import matmul_rate  # noqa: E402 (benchmarks/ is on sys.path when run as a script)

from accessibility_lib.geometry import embeddings as E


def handle(random_width: int | None):
    """The shipped nano model, or (``--random-width D``) a random GPT-NeoX of width D, 4 layers, |V| 8192."""
    if random_width:
        from accessibility_lib.models.tiny import random_tiny_handle

        h = random_tiny_handle(0, d_model=random_width, d_vocab=8192, n_layers=4, n_ctx=512)
        return h, f"{h.name} (random weights)"
    from accessibility_lib.models import loading as models

    return models.load_model("nano"), "nano"


def main():
    import os

    print(f"load average (1 min) at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    ap = argparse.ArgumentParser()
    ap.add_argument("--length", type=int, default=128)
    ap.add_argument("--prompts", type=int, default=64)
    ap.add_argument("--budget", type=int, default=4096)
    ap.add_argument(
        "--random-width", type=int, default=None, help="use a random GPT-NeoX of this width instead of nano"
    )
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="a seconds-long run on tiny sizes (the test suite runs it): checks that the script runs, not its numbers",
    )
    args = ap.parse_args()
    if args.tiny:
        args.length, args.prompts, args.budget = 8, 4, 64
    h, label = handle(args.random_width)
    cfg = h.model.config
    L = cfg.num_hidden_layers
    d = h.d_model
    n_emb = h.model.get_input_embeddings().weight.numel() + h.W_U.numel()
    n_params = sum(p.numel() for p in h.model.parameters()) - n_emb
    if h.model.get_input_embeddings().weight.data_ptr() == h.W_U.data_ptr():
        n_params += h.W_U.numel()  # tied: the head was subtracted twice
    flops_tok = 2 * n_params + 4 * L * args.length * d
    E.sample_embeddings(h, 4, [args.length], token_budget=args.budget)  # warm-up
    t0 = time.perf_counter()
    E.sample_embeddings(h, args.prompts, [args.length], token_budget=args.budget)
    t = time.perf_counter() - t0
    tokens = args.prompts * args.length
    rate = matmul_rate()
    print(
        f"model: {label}, d={d}, L={L}, non-embedding params={n_params / 1e6:.2f}M, threads={torch.get_num_threads()}"
    )
    print(
        f"{args.prompts} prompts x {args.length} tokens (budget {args.budget} tokens/batch): {t:.2f} s = {tokens / t:,.0f} tokens/s"
    )
    print(f"forward FLOPs/token ≈ {flops_tok / 1e6:.1f} MFLOP -> {flops_tok * tokens / t / 1e9:.1f} GFLOP/s achieved")
    print(f"measured fp32 matmul rate: {rate / 1e9:.1f} GFLOP/s")
    print(f"ratio achieved / matmul rate: {flops_tok * tokens / t / rate:.2f}")


if __name__ == "__main__":
    main()
