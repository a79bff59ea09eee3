"""Tests of accessibility_lib.geometry.cells.cell_volumes: exact areas of 2-D argmax cells (with a bias)."""

import math

import numpy as np
import pytest
import torch

from accessibility_lib.geometry import support_shape as G
from accessibility_lib.geometry.cells import cell_volumes

# Rows of unequal norms: argmax cells are not Voronoi cells. In the box [-1, 1]^2 with
# W = [[2, 0], [-1, 0], [0, 1]], b = [0, 0.5, -10]: token 0 wins iff 2x ≥ 0.5 − x, i.e. x ≥ 1/6, so its
# area fraction is (1 − 1/6)/2 = 5/12; token 1 gets 7/12; token 2 (bias −10) never wins.
# (The nearest-row rule would give token 0 the fraction 1/4 with b = 0, argmax gives 1/2.)
W = torch.tensor([[2.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
B = torch.tensor([0.0, 0.5, -10.0])
BOX = G.Box(torch.tensor([-1.0, -1.0]), torch.tensor([1.0, 1.0]))


def test_exact_areas_with_bias():
    res = cell_volumes(W, B, BOX, 40000, seed=1, chunk=7000)
    want = np.array([5 / 12, 7 / 12, 0.0])
    assert res.fractions.sum() == pytest.approx(1.0)
    assert np.all(np.abs(res.fractions - want) <= 4 * np.sqrt(want * (1 - want) / 40000) + 1e-12)
    assert res.n_no_hit == 1 and res.counts[2] == 0
    np.testing.assert_allclose(res.stderr, np.sqrt(res.fractions * (1 - res.fractions) / 40000))
    lp = res.log_p("pseudo-count")
    assert lp[2] == pytest.approx(math.log(0.5 / 40000)) and np.all(np.isfinite(lp))
    gt = res.log_p()  # Good-Turing: no token hit once, so the unseen token gets 3/n
    assert gt[2] == pytest.approx(math.log(3 / 40000)) and gt[0] == pytest.approx(math.log(res.fractions[0]))
    with pytest.raises(ValueError, match="method"):
        res.log_p("drop")


def test_no_bias_is_argmax_not_voronoi():
    res = cell_volumes(W[:2], None, BOX, 20000, seed=2)
    assert res.fractions[0] == pytest.approx(0.5, abs=0.015)  # Voronoi would give 0.25


def test_cones_in_a_ball_equal_sectors():
    # four unit rows on the axes, no bias: each cell is a quarter of the disc
    w = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]], dtype=torch.float64)
    res = cell_volumes(w, torch.zeros(4), G.Ball(torch.zeros(2), 3.0), 20000, seed=0)
    assert np.all(np.abs(res.fractions - 0.25) < 4 * math.sqrt(0.25 * 0.75 / 20000))


def test_deterministic_per_seed_and_chunked_over_vocab():
    a = cell_volumes(W, B, BOX, 5000, seed=7, chunk=1000)
    b = cell_volumes(W, B, BOX, 5000, seed=7, chunk=1000, vocab_chunk=1, point_chunk=333)
    c = cell_volumes(W, B, BOX, 5000, seed=8, chunk=1000)
    assert np.array_equal(a.counts, b.counts)
    assert not np.array_equal(a.counts, c.counts)


def test_bad_inputs():
    with pytest.raises(ValueError, match="n_samples"):
        cell_volumes(W, B, BOX, 0)
    with pytest.raises(ValueError, match="sample"):
        cell_volumes(W, B, object(), 10)
    with pytest.raises(ValueError, match="b_U"):
        cell_volumes(W, torch.zeros(2), BOX, 10)
    with pytest.raises(ValueError):
        cell_volumes(torch.zeros(3, 5), None, BOX, 10)  # region in R^2, W_U in R^5

    class NaNRegion:
        def sample(self, n, generator):
            return torch.full((n, 2), float("nan"))

    with pytest.raises(ValueError, match="finite"):
        cell_volumes(W, B, NaNRegion(), 10)
    with pytest.raises(ValueError, match="zero volume"):
        G.Box(torch.tensor([0.0, 0.0]), torch.tensor([1.0, 0.0]))
