"""Resolved cell volumes (geometry.cell_resolve) and emptiness certificates (geometry.cell_certificate).

The expected volumes are computed here exactly, independently of the modules under test: in d = 2
and 3 an argmax cell cut by a box is a convex polygon/polyhedron (scipy's halfspace intersection and
convex hull give its volume), and a polygon cut by a disk has an exact area (sum over the polygon's
edges of the signed area of the triangle (0, p_i, p_{i+1}) inside the disk: triangles and circular
sectors).
"""

import math

import numpy as np
import pytest
import torch
from scipy.optimize import linprog
from scipy.spatial import ConvexHull, HalfspaceIntersection

from accessibility_lib.geometry.cell_certificate import dual_bound, max_margin
from accessibility_lib.geometry.cell_problem import CellProblem
from accessibility_lib.geometry.cell_resolve import combine_replicates, split_log_volumes
from accessibility_lib.geometry.regions import Box, Ellipsoid


def _cell_polytope(problem: CellProblem, t: int):
    """Vertices of {u in [−1, 1]^d : z_t(u) ≥ z_j(u) ∀ j}, or None when it has no interior."""
    M, a = problem.M.double().numpy(), problem.a.double().numpy()
    d = M.shape[1]
    others = [j for j in range(M.shape[0]) if j != t]
    # halfspaces A u + b ≤ 0: (m_j − m_t)·u + (a_j − a_t) ≤ 0, and the cube
    A = np.vstack([M[others] - M[t], np.eye(d), -np.eye(d)])
    b = np.concatenate([a[others] - a[t], -np.ones(d), -np.ones(d)])
    norms = np.linalg.norm(A, axis=1)
    # Chebyshev centre: maximise r s.t. A u + r‖A_i‖ ≤ −b
    res = linprog(
        np.r_[np.zeros(d), -1.0], A_ub=np.hstack([A, norms[:, None]]), b_ub=-b, bounds=[(None, None)] * d + [(0, 10)]
    )
    if res.status != 0 or res.x[-1] < 1e-9:
        return None
    hs = HalfspaceIntersection(np.hstack([A, b[:, None]]), res.x[:d])
    return hs.intersections


def _polytope_fraction(problem, t):
    v = _cell_polytope(problem, t)
    return 0.0 if v is None else ConvexHull(v).volume / 2**problem.d


def _seg_disk_area(p, q):
    """Signed area of triangle (0, p, q) ∩ unit disk."""
    d = q - p
    A, B, C = d @ d, 2 * p @ d, p @ p - 1
    pts = [0.0]
    disc = B * B - 4 * A * C
    roots = (math.inf, -math.inf)  # the line's parameters inside the disk (none when it misses or touches it)
    if disc > 0:
        roots = ((-B - math.sqrt(disc)) / (2 * A), (-B + math.sqrt(disc)) / (2 * A))
        pts += [s for s in roots if 0 < s < 1]
    pts.append(1.0)
    area = 0.0
    for s0, s1 in zip(pts[:-1], pts[1:]):
        x, y = p + s0 * d, p + s1 * d
        cross = x[0] * y[1] - x[1] * y[0]
        if roots[0] < 0.5 * (s0 + s1) < roots[1]:  # the piece is a chord inside the disk (a tangent edge is not)
            area += 0.5 * cross
        else:
            area += 0.5 * math.atan2(cross, x @ y)
    return area


def _disk_fraction(problem, t):
    v = _cell_polytope(problem, t)  # cell ∩ square, which contains the disk
    if v is None:
        return 0.0
    hull = ConvexHull(v)
    ring = v[hull.vertices]  # counter-clockwise in 2-D
    return sum(_seg_disk_area(ring[i], ring[(i + 1) % len(ring)]) for i in range(len(ring))) / math.pi


def _toy(d, V, seed, region):
    g = np.random.default_rng(seed)
    W = g.normal(size=(V, d)) * g.uniform(0.5, 3.0, size=(V, 1))  # unequal row norms: not Voronoi cells
    b = g.normal(size=V) * 2.0
    return CellProblem.from_region(torch.from_numpy(W), torch.from_numpy(b), region, dtype=torch.float64)


def _check(problem, exact, tokens, n_reps=6):
    res = split_log_volumes(problem, np.repeat(tokens, n_reps), n_particles=64, n_moves=10, seed=1)
    comb = combine_replicates(res, 64)
    for t, lp, se, ok in zip(comb["tokens"], comb["log_p"], comb["se"], comb["resolved"]):
        assert ok, f"token {t}: not resolved"
        assert abs(lp - math.log(exact[t])) < 4 * se + 0.05, (t, lp, se, math.log(exact[t]))
    return comb


@pytest.mark.parametrize("d", [2, 3])
def test_box_cells_match_exact_polytope_volumes(d):
    box = Box(torch.full((d,), -2.0, dtype=torch.float64), torch.tensor([1.0, 3.0, 0.5][:d], dtype=torch.float64))
    problem = _toy(d, 14, seed=d, region=box)
    exact = np.array([_polytope_fraction(problem, t) for t in range(14)])
    assert exact.sum() == pytest.approx(1.0, abs=1e-9)  # the cells tile the box
    live = np.nonzero(exact > 0)[0]
    assert exact[live].min() < 5e-3  # a small cell is among them: the test covers the rare end
    _check(problem, exact, live)


def test_disk_cells_match_exact_areas_including_a_tiny_one():
    ell = Ellipsoid(torch.tensor([0.5, -1.0], dtype=torch.float64), torch.tensor([2.0, 0.7], dtype=torch.float64))
    problem = _toy(2, 16, seed=10, region=ell)
    # a token whose cell is a sliver of the disk: its line sits just inside the rim (p ~ 1e-7)
    M, a = problem.M.double().numpy(), problem.a.double().numpy()
    exact = np.array([_disk_fraction(problem, t) for t in range(16)])
    assert exact.sum() == pytest.approx(1.0, abs=1e-9)
    t0 = int(np.argmax(exact))
    # the rim point deepest inside t0's cell (largest margin over 3600 angles)
    ang = np.linspace(0, 2 * np.pi, 3600, endpoint=False)
    rim = np.stack([np.cos(ang), np.sin(ang)], 1)
    Z = rim @ M.T + a
    others = np.delete(Z, t0, axis=1).max(1)
    direction = rim[int(np.argmax(Z[:, t0] - others))]
    new_row = M[t0] + 50.0 * direction
    # its bias makes it beat t0 only where u·direction > 0.99995: a cap of area ~(4√2/3)·(5e-5)^1.5 ≈ 7e-7
    W = np.vstack([M, new_row])
    b = np.concatenate([a, [a[t0] - 50.0 * 0.99995]])
    tiny = CellProblem(torch.from_numpy(W), torch.from_numpy(b), "ball", {"kind": "test"})
    exact_t = np.array([_disk_fraction(tiny, t) for t in range(17)])
    assert 0 < exact_t[16] < 1e-5
    live = np.nonzero(exact_t > 1e-12)[0]  # not the round-off areas of cells that touch the disk at a point
    comb = _check(tiny, exact_t, live)
    assert comb["levels"][list(comb["tokens"]).index(16)] < 60  # ~1.44·|ln p| levels, not ~1/p points


@pytest.mark.parametrize("shape", ["box", "disk"])
def test_certificates_agree_with_the_exact_cells(shape):
    region = (
        Box(torch.tensor([-1.0, -1.0], dtype=torch.float64), torch.tensor([1.0, 2.0], dtype=torch.float64))
        if shape == "box"
        else Ellipsoid(torch.zeros(2, dtype=torch.float64), torch.tensor([1.0, 3.0], dtype=torch.float64))
    )
    problem = _toy(2, 30, seed=11, region=region)
    frac = _polytope_fraction if shape == "box" else _disk_fraction
    exact = np.array([frac(problem, t) for t in range(30)])
    assert (exact == 0).sum() >= 3 and (exact > 0).sum() >= 3  # both kinds are tested
    for t in range(30):
        br = max_margin(problem, t, n_initial=3, add=3)
        assert br.lower <= br.upper + 1e-9
        if exact[t] == 0:
            assert br.status == "empty", (t, br)
            assert dual_bound(problem, t, br.lam) < 0  # the certificate re-checks on its own
        elif exact[t] > 1e-9:
            assert br.status == "non-empty", (t, br)
            U = torch.from_numpy(br.witness).unsqueeze(0)
            assert int(problem.logits(U).argmax()) == t  # the witness lies in the cell


def test_ball_certificates_decide_every_token_in_high_dimension():
    """The ball's cone program decides each token in a few solves where d is large (d = 96, |V| = 600).

    Tangent cuts of the sphere (the previous method) need ~d of them before they pin a point on it; the
    exact cone decides from the working set alone. Each verdict re-checks with its own certificate.
    """
    d, V = 96, 600
    ball = Ellipsoid(torch.zeros(d, dtype=torch.float64), torch.ones(d, dtype=torch.float64))
    base = _toy(d, V, seed=5, region=ball)
    # 8 more tokens, each the average of two others' logits less 0.05: empty, but no single token dominates
    # it (the certificate needs both), so only the program over the working set can prove it
    pairs = np.random.default_rng(6).choice(V, size=(8, 2), replace=False)
    M = np.vstack([base.M.numpy(), base.M.numpy()[pairs].mean(1)])
    a = np.concatenate([base.a.numpy(), base.a.numpy()[pairs].mean(1) - 0.05])
    problem = CellProblem(torch.from_numpy(M), torch.from_numpy(a), "ball", {"kind": "test"})
    kinds = {"empty": 0, "non-empty": 0}
    for t in [*range(0, V, 15), *range(V, V + 8)]:
        br = max_margin(problem, t, n_initial=16, add=16, max_iter=20)
        assert br.status in kinds, (t, br.status, br.lower, br.upper, br.iterations)
        kinds[br.status] += 1
        if br.status == "empty":
            assert dual_bound(problem, t, br.lam) < 0
        else:
            assert np.linalg.norm(br.witness) <= 1 + 1e-9
            assert int(problem.logits(torch.from_numpy(br.witness).unsqueeze(0)).argmax()) == t
    assert kinds == {"empty": 8, "non-empty": 40}, kinds  # every averaged token empty, every original one not


def test_bad_input_is_refused():
    problem = _toy(2, 5, seed=0, region=Box(torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)))
    with pytest.raises(ValueError, match="tokens"):
        split_log_volumes(problem, [5])
    with pytest.raises(ValueError, match="n_particles"):
        split_log_volumes(problem, [0], n_particles=2)
    with pytest.raises(ValueError, match="sum to 1"):
        dual_bound(problem, 0, {1: 0.5})
    with pytest.raises(ValueError, match="region"):
        CellProblem.from_region(torch.zeros(5, 2), None, object())


def test_combined_log_volume_carries_the_jensen_correction():
    from accessibility_lib.geometry.cell_resolve import SplitResult

    # one run of N = 16 particles and L = 8 levels: ln p̂ = raw + L/(2N) = −5 + 0.25, SE = √(L/N)
    res = SplitResult(np.array([3]), np.array([-5.0]), np.array([8]), np.array([True]), np.array([0.1]))
    comb = combine_replicates(res, 16)
    assert comb["log_p"][0] == pytest.approx(-5.0 + 8 / 32)
    assert comb["se"][0] == pytest.approx(math.sqrt(0.5))
    # two runs with equal p̂: ln of their mean plus L/(2NR)
    res2 = SplitResult(
        np.array([3, 3]), np.array([-5.0, -5.0]), np.array([8, 8]), np.array([True, True]), np.array([0.1, 0.2])
    )
    assert combine_replicates(res2, 16)["log_p"][0] == pytest.approx(-5.0 + 8 / 64)
