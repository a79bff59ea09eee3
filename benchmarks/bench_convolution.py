"""The n-fold convolution of ln p to n = 1000: FFT grid (this library) against dense outer sums.

FFT: :func:`accessibility_lib.geometry.convolution.quantiles` — median and deciles of S_n for every n ≤ 1000 on
a 2^16-point grid (goal < 1 s). Dense: what the replication code does (the authors' code builds dense outer sums) — keep the law of
S_{n−1} as (values, probabilities), form the outer sum with the |D| atoms, then compress back to a
fixed number of bins by histogramming; its cost grows like n·bins·|D|. It is run to a smaller n and
extrapolated linearly to n = 1000 (it is linear in n), and the medians of the two are compared where
both exist.

Run: ``.venv/bin/python benchmarks/bench_convolution.py``
"""

import time

import numpy as np

from accessibility_lib.geometry import convolution as C


def dense_medians(log_p, n_max, bins):
    """Replication-style: dense outer sum S_{n-1} ⊕ D, compressed to ``bins`` histogram bins each step."""
    w = np.full(log_p.size, 1.0 / log_p.size)
    vals, probs = log_p.copy(), w.copy()
    meds = []
    for n in range(1, n_max + 1):
        if n > 1:
            v = (vals[:, None] + log_p[None, :]).ravel()  # (k·|D|,) dense outer sum
            p = (probs[:, None] * w[None, :]).ravel()
            hist, edges = np.histogram(v, bins=bins, weights=p)  # compression
            vals, probs = (edges[:-1] + edges[1:]) / 2, hist
        order = np.argsort(vals)
        cdf = np.cumsum(probs[order])
        meds.append(vals[order][np.searchsorted(cdf, 0.5 * cdf[-1])])
    return np.array(meds)


def main():
    import os

    print(f"load average (1 min) at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    rng = np.random.default_rng(0)
    log_p = np.minimum(rng.normal(-11.0, 2.5, 4096), -1e-3)  # a lognormal D with |D| = 4096 atoms
    C.quantiles(log_p, 10, (0.5,))  # warm-up
    t0 = time.perf_counter()
    q = C.quantiles(log_p, 1000, (0.1, 0.5, 0.9), grid_size=2**16)
    t_fft = time.perf_counter() - t0
    t0 = time.perf_counter()
    g = C.log_sum_grid(log_p, 1000, grid_size=2**16)
    med_1000 = g.quantiles((0.5,), [1000])[0, 0]
    t_one = time.perf_counter() - t0
    n_dense, bins = 40, 2**12
    t0 = time.perf_counter()
    med_dense = dense_medians(log_p, n_dense, bins)
    t_dense = time.perf_counter() - t0
    t_dense_1000 = t_dense * 1000 / n_dense
    diff = np.abs(q[:n_dense, 1] - med_dense).max()
    step = (log_p.max() - log_p.min()) / ((2**16 - 1) // 1000)
    print(f"D: {log_p.size} atoms, ln p in [{log_p.min():.1f}, {log_p.max():.1f}]")
    print(f"FFT grid 2^16, all n <= 1000, 3 quantiles each: {t_fft:.3f} s (goal < 1 s); grid step {step:.3f} nats")
    print(
        f"FFT grid 2^16, the law of S_1000 alone (φ^1000 by repeated squaring, one inverse FFT): {t_one * 1e3:.1f} ms; median {med_1000:.1f} nats"
    )
    print(
        f"dense outer sum + compression to {bins} bins: {t_dense:.2f} s for n <= {n_dense} -> {t_dense_1000:.0f} s extrapolated to n = 1000"
    )
    print(
        f"ratio dense / FFT (all n <= 1000): {t_dense_1000 / t_fft:.0f}x; dense / FFT (S_1000 alone): {t_dense_1000 / t_one:.0f}x; max |median difference| for n <= {n_dense}: {diff:.3f} nats"
    )
    print(
        f"memory of one dense step: {bins * log_p.size * 16 / 1e6:.0f} MB (values + probabilities); FFT grid: {2**16 * 8 / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    main()
