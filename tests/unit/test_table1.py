"""Tests of accessibility_lib.geometry.table1 (Table 1 under the replication and corrected methods) and regions.

Expected values are written out here from the paper's formulas (Cor 4.6, Section 5.2) and from the
authors' code as read (ε = r∞·2^-11 with r = r∞; box widths; a cone fraction 4× the true one), not
taken from the module under test.
"""

import math

import numpy as np
import pytest
import torch

from accessibility_lib.geometry import table1
from accessibility_lib.geometry.regions import enclosing_ellipsoid
from accessibility_lib.theory import fp_grid


@pytest.fixture(scope="module")
def cloud():
    g = np.random.default_rng(0)
    h = g.normal(size=(300, 12)) * np.linspace(0.2, 2.0, 12) + np.linspace(-1, 3, 12)  # anisotropic, off-centre
    W = torch.from_numpy(g.normal(size=(40, 12)))
    return h, W


def test_replication_rows_follow_the_authors_formulas(cloud):
    h, W = cloud
    col = table1.replication_column("toy", h, W, n_samples=2000)
    r_inf = np.abs(h).max()
    eps = r_inf / 2048
    lnV = math.log(40)
    assert col.rows["ball"].C == pytest.approx(12 * math.log(4097) / lnV, rel=1e-12)  # 2r/ε = 4096 whatever h is
    assert col.rows["ball"].two_r_over_eps == pytest.approx(4096)
    w = h.max(axis=0) - h.min(axis=0)
    assert col.rows["ellipsoid"].C == pytest.approx(np.log1p(w / eps).sum() / lnV, rel=1e-12)
    # cone: their closed form is 4x the cap fraction, so the cone row exceeds "ball + ln frac" by ln 4 / ln|V|
    from scipy import special

    u = h / np.linalg.norm(h, axis=1, keepdims=True)
    min_cos = (u @ u.T + 2 * np.eye(len(u))).min()
    alpha = 0.5 * math.acos(min_cos)
    frac = 0.5 * special.betainc((12 - 1) / 2, 0.5, math.sin(alpha) ** 2)  # α ≤ π/2
    assert col.rows["cone"].C == pytest.approx((12 * math.log(4097) + math.log(4 * frac)) / lnV, rel=1e-9)
    assert col.rows["ellipsoid + variable ε"].C is None  # no such row in the authors' code
    assert col.cells.fill_share == 0.0 and col.cells.convolution_slope < 0


def test_corrected_rows_contain_the_samples(cloud):
    h, W = cloud
    col = table1.corrected_column("toy", h, W, torch.zeros(40, dtype=torch.float64), n_samples=2000)
    r_l2, r_inf = np.linalg.norm(h, axis=1).max(), np.abs(h).max()
    eps = r_inf / 2048
    assert col.rows["ball"].r == pytest.approx(r_l2) and col.rows["ball"].eps == pytest.approx(eps)
    assert col.rows["ball"].C == pytest.approx(12 * math.log1p(2 * r_l2 / eps) / math.log(40), rel=1e-12)
    assert col.rows["ball"].C > table1.replication_column("toy", h, W, n_samples=200).rows["ball"].C
    assert 0 <= col.cells.fill_share <= 1 and col.cells.tokens_hit >= 1
    back = table1.Column.from_dict(col.to_dict())
    assert back.rows["cone"].C == col.rows["cone"].C and back.cells == col.cells


def test_enclosing_ellipsoid_encloses_and_is_not_larger_than_needed(cloud):
    h, _ = cloud
    e = enclosing_ellipsoid(h)
    x = torch.from_numpy(h)
    q = (((x - e.center) / e.semi_axes) ** 2).sum(1)
    assert float(q.max()) <= 1.0 + 1e-9 and float(q.max()) > 0.999  # touches the farthest sample
    with pytest.raises(ValueError, match="constant"):
        enclosing_ellipsoid(np.c_[h[:, :2], np.ones(len(h))])


def test_enclosing_ellipsoid_at_a_given_eps_never_counts_more_cells_than_the_ball():
    # samples spread evenly on a sphere: every box-shaped ellipsoid that encloses them is wider than the
    # ball on some axis, and at a coarse ε the volume-chosen shape counts more cells than the ball
    g = np.random.default_rng(0)
    x = g.normal(size=(400, 16))
    x = 3.0 * x / np.linalg.norm(x, axis=1, keepdims=True)
    r = float(np.linalg.norm(x, axis=1).max())
    for eps in (0.5, 6.0, 60.0):
        ball = 16 * np.log1p(2 * r / eps)
        by_volume = float(np.log1p(2 * enclosing_ellipsoid(x).semi_axes.numpy() / eps).sum())
        by_count = float(np.log1p(2 * enclosing_ellipsoid(x, eps).semi_axes.numpy() / eps).sum())
        assert by_count <= ball * (1 + 1e-9) and by_count <= by_volume * (1 + 1e-9)
    assert by_volume > ball  # the volume criterion alone is not enough at this ε (why eps is passed)
    with pytest.raises(ValueError, match="eps must be"):
        enclosing_ellipsoid(x, 0.0)


def test_float16_grid_count_matches_enumeration():
    every = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float64)
    every = np.unique(every[np.isfinite(every)])  # all finite float16 values, ±0 once
    g = np.random.default_rng(1)
    lo = g.uniform(-70000, 100, 200) * g.choice([1e-6, 1e-2, 1, 1], 200)
    hi = lo + g.uniform(0, 200, 200) * g.choice([1e-6, 1e-2, 1, 300], 200)
    hi = np.minimum(hi, 65504.0)
    got = fp_grid.float16_grid_count(lo, hi)
    want = np.array([np.sum((every >= a) & (every <= b)) for a, b in zip(lo, hi)])
    assert np.array_equal(got, np.maximum(want, 1))
    assert fp_grid.float16_grid_count(np.array([-1.0]), np.array([1.0]))[0] == 2 * 15360 + 1  # ±[2^-24, 1] and 0


def test_every_row_recomputes_from_its_printed_r_and_eps_on_nano():
    """Under the replication convention the nano ball row is d·ln(1 + 4096)/ln|V| = 128.0 (d = 128, |V| = 4096),
    and every ball or cone row's C follows from the r and ε printed beside it."""
    from accessibility_lib.geometry.embeddings import sample_embeddings
    from accessibility_lib.models.loading import load_model

    nano = load_model("nano")
    emb = sample_embeddings(nano, 16, [8, 32], seed=0)
    h = np.concatenate([emb[8], emb[32]])
    rep = table1.replication_column("nano", h, nano.W_U, n_samples=500)
    cor = table1.corrected_column("nano", h, nano.W_U, nano.b_U, n_samples=500)
    assert rep.rows["ball"].C == pytest.approx(128 * math.log(4097) / math.log(4096), rel=1e-12)
    assert round(rep.rows["ball"].C, 1) == 128.0
    for col in (rep, cor):
        for name in ("ball", "cone", "ellipsoid", "ellipsoid + non-uniform cells"):
            row = col.rows[name]
            assert row.two_r_over_eps == pytest.approx(2 * row.r / row.eps)
        ball = col.rows["ball"]
        printed_r, printed_eps = float(f"{ball.r:.4g}"), float(f"{ball.eps:.4g}")  # as the chapters print them
        assert ball.C == pytest.approx(128 * math.log1p(2 * printed_r / printed_eps) / math.log(4096), rel=2e-4)
        assert col.rows["cone"].C <= ball.C + (LN4 / math.log(4096) if col.method == "voronoi_box" else 1e-9)


LN4 = math.log(4.0)


def test_effective_eps_rows_use_the_measured_eps(cloud):
    h, W = cloud
    cor = table1.corrected_column("toy", h, W, torch.zeros(40, dtype=torch.float64), n_samples=500)
    rep = table1.replication_column("toy", h, W, n_samples=500)
    for col in (cor, rep):
        table1.add_effective_eps_rows(col, h, 0.01, (0.005, 0.02), "a test")
    r_l2 = np.linalg.norm(h, axis=1).max()
    row = cor.rows["ball, effective ε"]
    assert row.eps == 0.01 and row.C == pytest.approx(12 * math.log1p(2 * r_l2 / 0.01) / math.log(40), rel=1e-12)
    assert row.caveat and "typical" in row.caveat
    assert rep.rows["ball, effective ε"].C is None  # the authors' method has no such row
