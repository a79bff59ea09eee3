"""Shared by the benchmarks: the machine's measured matmul rate, the yardstick every ratio uses."""

import time

import torch


def matmul_rate(size: int = 1024, reps: int = 10, dtype: torch.dtype = torch.float32) -> float:
    """FLOP/s of a (size × size) @ (size × size) matmul on the CPU, measured now (one warm-up)."""
    a, b = torch.randn(size, size, dtype=dtype), torch.randn(size, size, dtype=dtype)
    a @ b
    t0 = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * size**3 * reps / (time.perf_counter() - t0)
