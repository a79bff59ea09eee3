"""Tests of accessibility_lib.geometry.convolution: the Dirac case is Cor 4.6, the lognormal case matches Monte Carlo."""

import math

import numpy as np
import pytest

from accessibility_lib.geometry import convolution as C
from accessibility_lib.theory import bounds


@pytest.mark.parametrize(
    "d,ratio,vocab",
    [(768, 4096.0, 50304), (768, 2.0**17, 50304), (2048, 2.0**17, 50304), (640, 2.0**14.4, 262144), (7, 3.0, 11)],
)
def test_dirac_is_cor_4_6_exactly(d, ratio, vocab):
    log_p = [-math.log(vocab)]
    log_packing = bounds.log_packing_ball(d, ratio / 2, 1.0)
    c = bounds.ball_slope(d, ratio / 2, 1.0, vocab)
    assert C.threshold_length(log_p, log_packing) == math.floor(c) + 1
    assert C.refined_slope(log_p, log_packing) == pytest.approx(c, rel=1e-14)
    # many equal atoms are still a Dirac
    assert (
        C.threshold_length(np.full(vocab if vocab < 100 else 100, -math.log(vocab)), log_packing) == math.floor(c) + 1
    )
    assert C.median_log_volume(log_p, 37) == -37 * math.log(vocab)


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
