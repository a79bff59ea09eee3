"""Choosing a dtype for long CPU runs by measurement, never by assumption.

CPUs of the same kind differ: on one, bfloat16 matmuls ran at 2.3× the float32 rate (AVX-512 BF16); on
another (AVX2 only) at 1/370 of it, in PyTorch's scalar fallback. A long cramming run in the slow dtype
wastes hours, so :func:`check_dtype` measures both rates on this machine, in one run, before a run
starts, and refuses a dtype that is much slower than float32 here. float32 is the default on a CPU:
bfloat16 also changes what is measured (its KV-cache decoding and full recompute disagree on some
targets, chapter 3).
"""

from __future__ import annotations

import time

import torch

__all__ = ["DTYPES", "matmul_rate", "check_dtype"]

DTYPES = ("float32", "bfloat16")
#: a dtype slower than this fraction of float32's matmul rate is refused
MIN_RELATIVE_RATE = 0.5


def matmul_rate(dtype: str, size: int = 512, seconds: float = 0.3, device: str = "cpu") -> float:
    """GFLOP/s of a size×size matmul in ``dtype`` on one thread of this machine (a short measurement)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a = torch.randn(size, size, device=device).to(getattr(torch, dtype))
        a @ a  # warm-up
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            a @ a
            n += 1
        return 2 * size**3 * n / (time.perf_counter() - t0) / 1e9
    finally:
        torch.set_num_threads(before)


def check_dtype(dtype: str | None, device: str = "cpu", *, rate=matmul_rate) -> tuple[str, dict]:
    """The dtype a run should use, checked against this machine.

    Args:
        dtype: ``"float32"``, ``"bfloat16"`` or None (float32).
        device: where the run goes; on a GPU nothing is measured.
        rate: the measurement (``(dtype) -> GFLOP/s``), replaceable in tests.

    Returns:
        (dtype, {"float32": GFLOP/s, "bfloat16": GFLOP/s} measured, empty on a GPU or for float32).

    Raises:
        ValueError: an unknown dtype (the message lists the choices), or bfloat16 on a CPU where it runs
            below half float32's matmul rate (the message gives both rates).
    """
    dtype = "float32" if dtype is None else str(dtype).replace("torch.", "")
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)} (float16 needs a gradient scaler); got {dtype!r}")
    if dtype == "float32" or not str(device).startswith("cpu"):
        return dtype, {}
    rates = {d: float(rate(d)) for d in DTYPES}
    if rates["bfloat16"] < MIN_RELATIVE_RATE * rates["float32"]:
        raise ValueError(
            f"bfloat16 runs at {rates['bfloat16']:.2f} GFLOP/s on this CPU against {rates['float32']:.1f} for float32 "
            f"({rates['float32'] / max(rates['bfloat16'], 1e-9):.0f}× slower): use --dtype float32"
        )
    return dtype, rates
