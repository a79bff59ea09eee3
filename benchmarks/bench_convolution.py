"""The n-fold convolution of ln p to n = 1000: FFT grid (this library) against dense outer sums.

FFT: :func:`accessibility_lib.geometry.convolution.quantiles` — median and deciles of S_n for every n ≤ 1000 on
a 2^16-point grid (goal < 1 s). Dense: what the replication code does (the authors' code builds dense outer sums) — keep the law of
S_{n−1} as (values, probabilities), form the outer sum with the |D| atoms, then compress back to a
fixed number of bins by histogramming; its cost grows like n·bins·|D|. It is run to a smaller n and
extrapolated linearly to n = 1000 (it is linear in n), and the medians of the two are compared where
both exist.

Run: ``.venv/bin/python benchmarks/bench_convolution.py`` (``--tiny``: n ≤ 50 on a 2^12 grid, |D| = 256, what the test suite runs)
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
    import argparse
    import os

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="a seconds-long run on tiny sizes (the test suite runs it): checks that the script runs, not its numbers",
    )
    args = ap.parse_args()
    n_max, grid, atoms, n_dense, bins = (50, 2**12, 256, 5, 2**8) if args.tiny else (1000, 2**16, 4096, 40, 2**12)
    print(f"load average (1 min) at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    rng = np.random.default_rng(0)
    log_p = np.minimum(rng.normal(-11.0, 2.5, atoms), -1e-3)  # a lognormal D with |D| = 4096 atoms (--tiny: 256)
    C.quantiles(log_p, 10, (0.5,))  # warm-up
    t0 = time.perf_counter()
    q = C.quantiles(log_p, n_max, (0.1, 0.5, 0.9), grid_size=grid)
    t_fft = time.perf_counter() - t0
    t0 = time.perf_counter()
    g = C.log_sum_grid(log_p, n_max, grid_size=grid)
    med_1000 = g.quantiles((0.5,), [n_max])[0, 0]
    t_one = time.perf_counter() - t0
    t0 = time.perf_counter()
    med_dense = dense_medians(log_p, n_dense, bins)
    t_dense = time.perf_counter() - t0
    t_dense_1000 = t_dense * n_max / n_dense
    diff = np.abs(q[:n_dense, 1] - med_dense).max()
    step = (log_p.max() - log_p.min()) / ((grid - 1) // n_max)
    print(f"D: {log_p.size} atoms, ln p in [{log_p.min():.1f}, {log_p.max():.1f}]")
    print(f"FFT grid {grid}, all n <= {n_max}, 3 quantiles each: {t_fft:.3f} s (goal < 1 s); grid step {step:.3f} nats")
    print(
        f"FFT grid {grid}, the law of S_{n_max} alone (φ^{n_max} by repeated squaring, one inverse FFT): {t_one * 1e3:.1f} ms; median {med_1000:.1f} nats"
    )
    print(
        f"dense outer sum + compression to {bins} bins: {t_dense:.2f} s for n <= {n_dense} -> {t_dense_1000:.0f} s extrapolated to n = {n_max}"
    )
    print(
        f"ratio dense / FFT (all n <= {n_max}): {t_dense_1000 / t_fft:.0f}x; dense / FFT (S_{n_max} alone): {t_dense_1000 / t_one:.0f}x; max |median difference| for n <= {n_dense}: {diff:.3f} nats"
    )
    print(
        f"memory of one dense step: {bins * log_p.size * 16 / 1e6:.0f} MB (values + probabilities); FFT grid: {grid * 8 / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    main()
