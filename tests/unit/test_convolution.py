"""Tests of accessibility_lib.geometry.convolution: the Dirac case is Cor 4.6, the lognormal case matches Monte Carlo."""

import math

import numpy as np
import pytest

from accessibility_lib.geometry import convolution as C


@pytest.mark.parametrize(
    "d,ratio,vocab",
    [(768, 4096.0, 50304), (768, 2.0**17, 50304), (2048, 2.0**17, 50304), (640, 2.0**14.4, 262144), (7, 3.0, 11)],
)
def test_dirac_is_cor_4_6_exactly(d, ratio, vocab):
    """D = Dirac(1/|V|): S_n = −n ln|V| exactly, so the threshold is the smallest integer n > ln P / ln|V| with
    ln P = d·ln(1 + 2r/ε) (Cor 4.6), written out here from the formula, not from the library's bounds."""
    log_p = [-math.log(vocab)]
    log_packing = d * math.log1p(ratio)
    c = log_packing / math.log(vocab)
    assert C.threshold_length(log_p, log_packing) == math.floor(c) + 1
    assert C.refined_slope(log_p, log_packing) == pytest.approx(c, rel=1e-14)
    # many equal atoms are still a Dirac
    assert (
        C.threshold_length(np.full(vocab if vocab < 100 else 100, -math.log(vocab)), log_packing) == math.floor(c) + 1
    )
    assert C.median_log_volume(log_p, 37) == -37 * math.log(vocab)


def test_threshold_of_a_three_atom_distribution_matches_monte_carlo_of_the_n_fold_sum():
    """A non-degenerate D: ln p ∈ {−2.3, −5.1, −8.7} with probabilities 0.5, 0.3, 0.2 (mean −4.35 nats). The
    median of the sum of n independent draws is estimated from 200,000 simulated sums for every n near the
    threshold; ln P is put halfway between the simulated medians at two consecutive lengths n0 − 1 and n0, so
    the Section 5.3 threshold must be n0 (the smallest n whose median falls below −ln P)."""
    rng = np.random.default_rng(7)
    atoms, w = np.array([-2.3, -5.1, -8.7]), np.array([0.5, 0.3, 0.2])
    reps, n0 = 200_000, 46
    med = {}
    for n in (n0 - 1, n0):
        counts = rng.multinomial(n, w, size=reps)  # (reps, 3): how many draws fell on each atom
        med[n] = float(np.median(counts @ atoms))
    gap = med[n0 - 1] - med[n0]  # ≈ 4.35 nats between consecutive lengths
    se = 1.2533 * math.sqrt(n0 * float(w @ atoms**2 - (w @ atoms) ** 2)) / math.sqrt(reps)  # s.e. of a median
    assert gap > 40 * se  # the crossing is far from either median in Monte Carlo units: a decidable case
    log_packing = -0.5 * (med[n0 - 1] + med[n0])
    assert C.threshold_length(atoms, log_packing, weights=w) == n0
    assert C.threshold_length(atoms, log_packing - 0.3 * gap, weights=w) == n0  # still between the two medians
    assert C.threshold_length(atoms, log_packing + gap, weights=w) == n0 + 1  # one length further
    for n in (n0 - 1, n0):  # the library's median itself, against the simulation
        assert C.median_log_volume(atoms, n, weights=w) == pytest.approx(med[n], abs=5 * se + 0.05)


def test_lognormal_matches_monte_carlo():
    rng = np.random.default_rng(0)
    log_p = np.minimum(rng.normal(-10.0, 2.0, 3000), -0.01)
    q = C.quantiles(log_p, 200, (0.1, 0.5, 0.9))
    reps = 20000
    for n in (1, 7, 60, 200):
        sums = rng.choice(log_p, (reps, n)).sum(axis=1)
        mc = np.quantile(sums, [0.1, 0.5, 0.9])
        sd = sums.std()
        # MC quantile standard error ≈ sqrt(q(1-q)/reps)/density ≤ 2.2·sd/sqrt(reps); grid step R/K
        tol = 4 * 2.2 * sd / math.sqrt(reps) + (log_p.max() - log_p.min()) / ((2**16 - 1) // 200)
        assert np.all(np.abs(q[n - 1] - mc) < tol), (n, q[n - 1], mc, tol)


def test_weights_and_threshold_monotone():
    log_p = np.log([0.5, 0.25, 0.125, 0.125])
    w = np.array([0.5, 0.25, 0.125, 0.125])
    # with weights = p, E[ln p] is the negative entropy: 1.75 bits
    n = C.threshold_length(log_p, 100.0, weights=w)
    assert abs(n - 100.0 / (1.75 * math.log(2))) < 3
    n_uniform = C.threshold_length(log_p, 100.0)
    assert n_uniform < n  # uniform weights put more mass on small cells: a smaller threshold
    # Jensen: the refinement never exceeds the uniform-cell (Dirac 1/|V|) threshold
    assert C.refined_slope(log_p, 100.0) <= 100.0 / math.log(4) + 1e-9
    med = C.quantiles(log_p, 50, (0.5,), weights=w)[:, 0]
    assert np.all(np.diff(med) <= 1e-9)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"log_p": [], "log_packing": 1.0},
        {"log_p": [0.1, -1.0], "log_packing": 1.0},
        {"log_p": [np.nan, -1.0], "log_packing": 1.0},
        {"log_p": [-1.0, -2.0], "log_packing": -1.0},
        {"log_p": [-1.0, -2.0], "log_packing": 1.0, "weights": [1.0]},
        {"log_p": [-1.0, -2.0], "log_packing": 1.0, "weights": [-1.0, 2.0]},
        {"log_p": [0.0, 0.0], "log_packing": 1.0},
    ],
)
def test_bad_input_raises(kwargs):
    with pytest.raises(ValueError):
        C.threshold_length(**kwargs)
    with pytest.raises(ValueError):
        C.quantiles([-1.0, -2.0], 0)
