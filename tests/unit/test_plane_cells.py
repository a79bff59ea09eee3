"""Exact cell counts on a plane and in a disk (accessibility_lib.geometry.plane_cells), against cases with known
answers and against the grid (a lower bound) and the hull count (an upper bound)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from accessibility_lib.geometry import plane_cells, slices


def _fan(K: int) -> np.ndarray:
    """K unit rows at angles 2πk/K in the plane itself, no bias: token k owns the cone of angles within π/K of it."""
    ang = 2 * np.pi * np.arange(K) / K
    return np.column_stack([np.cos(ang), np.sin(ang), np.zeros(K)])


def test_fan_of_cones_on_the_plane_and_in_disks():
    coef = _fan(8)
    assert plane_cells.plane_winners(coef).tolist() == list(range(8))
    assert plane_cells.disk_winners(coef, [0.0, 0.0], 1.0).tolist() == list(range(8))  # every cone meets the apex
    # a disk of radius 1 at (10, 0) spans angles ±5.7°, inside token 0's ±22.5° cone
    assert plane_cells.disk_winners(coef, [10.0, 0.0], 1.0).tolist() == [0]
    # radius 5 spans ±30°: the two neighbours as well
    assert plane_cells.disk_winners(coef, [10.0, 0.0], 5.0).tolist() == [0, 1, 7]


def test_losers_duplicates_and_a_far_cell():
    # token 2 (x − 10 after the bias) wins only for x > 10; token 3 never wins; token 4 duplicates token 0
    coef = np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [2.0, 0.0, -10.0], [0.0, 0.0, -1.0], [1.0, 0.0, 0.0]])
    assert plane_cells.plane_winners(coef).tolist() == [0, 1, 2]  # a duplicate's ties go to the lowest id
    assert plane_cells.disk_winners(coef, [0.0, 0.0], 4.0).tolist() == [0, 1]
    assert plane_cells.disk_winners(coef, [0.0, 0.0], 11.0).tolist() == [0, 1, 2]
    assert plane_cells.disk_winners(coef, [-5.0, 0.0], 4.0).tolist() == [1]
    for bad in (np.zeros((3, 2)), np.array([[np.nan, 0.0, 0.0]])):
        with pytest.raises(ValueError, match=r"coef must be a finite \(d_vocab, 3\) array"):
            plane_cells.plane_winners(bad)
    with pytest.raises(ValueError, match="radius"):
        plane_cells.disk_winners(coef, [0.0, 0.0], 0.0)
    with pytest.raises(ValueError, match="center must be two finite numbers"):
        plane_cells.disk_winners(coef, [0.0], 1.0)
    with pytest.raises(ValueError, match="candidates must be token ids"):
        plane_cells.plane_winners(coef, candidates=[0, 7])


def test_exact_counts_lie_between_the_grid_and_the_hull_count():
    """On random rows with bias, in R^6: the tokens a fine grid sees are exact winners, and the exact winners are
    hull candidates (so the grid count ≤ exact ≤ hull count), for the whole window and for a disk."""
    gen = torch.Generator().manual_seed(3)
    W = torch.randn(300, 6, generator=gen, dtype=torch.float64)
    b = torch.randn(300, generator=gen, dtype=torch.float64)
    anchors = torch.randn(3, 6, generator=gen, dtype=torch.float64)
    pl = slices.plane_through(anchors)
    coef, _ = slices._plane_coefficients(pl, W, b, voronoi=False)
    cand = slices.plane_candidates(coef)
    exact = plane_cells.plane_winners(coef.numpy(), cand)
    assert np.array_equal(exact, plane_cells.plane_winners(coef.numpy()))  # candidates only: the same answer
    sl = slices.argmax_slice(pl, W, b, resolution=300, extent=8.0, voronoi=False)
    assert set(np.unique(sl.tokens)) <= set(exact.tolist()) <= set(cand.tolist())
    r = 1.2 * float(pl.origin.norm())
    c, rho = pl.ball_disk(r)
    in_disk = plane_cells.disk_winners(coef.numpy(), c, rho, cand)
    grid = slices.cells_in_ball(pl, W, b, r, resolution=300)
    assert set(grid["tokens"].tolist()) <= set(in_disk.tolist()) <= set(exact.tolist())
    assert len(in_disk) >= 3


def test_exact_counts_of_a_plane_match_the_parts():
    """exact_counts is plane_winners and disk_winners on the plane's coefficients (and 0 for a missed ball)."""
    pl = slices.Plane(origin=torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64),
                      basis=torch.eye(3, dtype=torch.float64)[:2], scale=1.0, anchors_uv=np.zeros((0, 2)))  # fmt: skip
    W = torch.tensor([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    b = torch.tensor([0.0, 0.0, -10.0])
    got = plane_cells.exact_counts(pl, W, b, 5.0)
    assert got["plane"] == 3 and got["disk"] == 2  # token 2 wins only at x > 10, beyond the disk of radius 4
    assert plane_cells.exact_counts(pl, W, b, 2.0)["disk"] == 0  # the plane misses the ball
