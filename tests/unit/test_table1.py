"""Tests of accessibility_lib.geometry.table1 (Table 1 under the replication and corrected methods) and regions.

Expected values are written out here from the paper's formulas (Cor 4.6, Section 5.2) and from the
authors' code as read (ε = r∞·2^-11 with r = r∞; box widths; a cone fraction 4× the true one), not
taken from the module under test.
"""

import math

import numpy as np
import pytest
import torch
from scipy import special

from accessibility_lib.geometry import table1
from accessibility_lib.geometry.regions import enclosing_ellipsoid


@pytest.fixture(scope="module")
def cloud():
    g = np.random.default_rng(0)
    h = g.normal(size=(300, 12)) * np.linspace(0.2, 2.0, 12) + np.linspace(-1, 3, 12)  # anisotropic, off-centre
    W = torch.from_numpy(g.normal(size=(40, 12)))
    return h, W


def test_replication_rows_follow_the_authors_formulas(cloud):
    h, W = cloud
    col = table1.voronoi_box_column("toy", h, W, n_samples=2000)
    r_inf = np.abs(h).max()
    eps = r_inf / 2048
    lnV = math.log(40)
    assert col.rows["ball"].C == pytest.approx(12 * math.log(4097) / lnV, rel=1e-12)  # 2r/ε = 4096 whatever h is
    assert col.rows["ball"].two_r_over_eps == pytest.approx(4096)
    w = h.max(axis=0) - h.min(axis=0)
    assert col.rows["ellipsoid"].C == pytest.approx(np.log1p(w / eps).sum() / lnV, rel=1e-12)
    # cone: ln P_cone = d·ln(1 + 2r/ε) + ln(cap fraction), and their closed form is 4× the true fraction. The
    # fraction is estimated here by Monte Carlo (uniform directions in R^12), not by the beta-function formula
    cap = _cap_fraction_mc(12, _replication_half_angle(h))
    implied = math.exp(col.rows["cone"].C * lnV - 12 * math.log(4097))  # the fraction the row used
    assert implied / cap.value == pytest.approx(4.0, rel=4 * cap.rel_se)
    # not in the authors' code: the book's reading on their ellipsoid, ε_i = 2⁻¹¹·(|c_i| + a_i) = 2⁻¹¹·max|h_i| on
    # the box-inscribed ellipsoid (each ≤ ε), so the row lies between the ellipsoid's and the ball's at 2r/ε = 4096
    eps_i = np.abs(h).max(axis=0) / 2048
    assert col.rows["ellipsoid + variable ε"].C == pytest.approx(np.log1p(w / eps_i).sum() / lnV, rel=1e-12)
    assert col.rows["ellipsoid"].C <= col.rows["ellipsoid + variable ε"].C <= col.rows["ball"].C * (1 + 1e-12)
    assert col.cells.fill_share == 0.0 and col.cells.convolution_slope < 0


class _MC:
    def __init__(self, value: float, rel_se: float):
        self.value, self.rel_se = value, rel_se


def _cap_fraction_mc(d: int, alpha: float, n: int = 2_000_000, seed: int = 11) -> _MC:
    """Fraction of the unit sphere in R^d within angle α of an axis, by Monte Carlo (Gaussian directions)."""
    z = np.random.default_rng(seed).standard_normal((n, d))
    cos = z[:, 0] / np.linalg.norm(z, axis=1)
    p = float(np.mean(cos >= math.cos(alpha)))
    return _MC(p, math.sqrt((1 - p) / (p * n)))


def _replication_half_angle(h: np.ndarray) -> float:
    """The authors' α = ½·arccos(min pairwise cosine), computed here with numpy."""
    u = h / np.linalg.norm(h, axis=1, keepdims=True)
    return 0.5 * math.acos(float((u @ u.T + 2 * np.eye(len(u))).min()))


def _enclosing_half_angle(h: np.ndarray) -> float:
    """Largest angle between a sample and the mean of the unit rows (the cone that encloses every sample)."""
    u = h / np.linalg.norm(h, axis=1, keepdims=True)
    axis = u.sum(0) / np.linalg.norm(u.sum(0))
    return math.acos(float(np.clip(u @ axis, -1, 1).min()))


def test_cap_fraction_in_three_dimensions_is_archimedes():
    """In R^3 the cap of half-angle α covers (1 − cos α)/2 of the sphere (Archimedes' hat-box theorem): the
    library's log-space cap fraction and the Monte Carlo estimate both give it."""
    from accessibility_lib.theory import bounds

    for alpha in (0.3, 1.0, math.pi / 2, 2.5):
        exact = (1 - math.cos(alpha)) / 2
        assert math.exp(bounds.cone_log_fraction(3, alpha)) == pytest.approx(exact, rel=1e-10)
        mc = _cap_fraction_mc(3, alpha, n=400_000)
        assert mc.value == pytest.approx(exact, rel=4 * mc.rel_se)


def test_corrected_cone_uses_the_true_cap_fraction(cloud):
    h, W = cloud
    cor = table1.argmax_region_column("toy", h, W, torch.zeros(40, dtype=torch.float64), n_samples=500)
    ball = cor.rows["ball"]
    cap = _cap_fraction_mc(12, _enclosing_half_angle(h))
    implied = math.exp(cor.rows["cone"].C * math.log(40) - 12 * math.log1p(2 * ball.r / ball.eps))
    assert implied == pytest.approx(cap.value, rel=4 * cap.rel_se)


def test_corrected_rows_contain_the_samples(cloud):
    h, W = cloud
    col = table1.argmax_region_column("toy", h, W, torch.zeros(40, dtype=torch.float64), n_samples=2000)
    r_l2, r_inf = np.linalg.norm(h, axis=1).max(), np.abs(h).max()
    eps = r_inf / 2048
    assert col.rows["ball"].r == pytest.approx(r_l2) and col.rows["ball"].eps == pytest.approx(eps)
    assert col.rows["ball"].C == pytest.approx(12 * math.log1p(2 * r_l2 / eps) / math.log(40), rel=1e-12)
    assert col.rows["ball"].C > table1.voronoi_box_column("toy", h, W, n_samples=200).rows["ball"].C
    assert 0 <= col.cells.fill_share <= 1 and col.cells.tokens_hit >= 1
    # variable ε at the enclosing ellipsoid's extent: 2a_i/ε_i ≤ 4096, so at most the ball at r∞ (this ball's r ≥ r∞)
    assert col.rows["ellipsoid + variable ε"].C <= 12 * math.log1p(4096) / math.log(40) * (1 + 1e-12)
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


def test_every_row_recomputes_from_its_printed_r_eps_and_axes_on_nano():
    """On nano (d = 128, |V| = 4096) each row's C is recomputed from the r and ε printed beside it (4 significant
    digits, as the chapters print them) and the region's axes, measured here from the samples:

    * ball: C = d·ln(1 + 2r/ε)/ln|V|; under the authors' convention r = r∞, ε = r∞·2^-11, so C = 128·ln 4097/ln 4096;
    * cone: C = (d·ln(1 + 2r/ε) + ln frac(α))/ln|V| with α measured here and frac from scipy's incomplete beta
      (the toy tests check it by Monte Carlo), ×4 in the authors' code;
    * ellipsoid: C = Σ ln(1 + 2a_i/ε)/ln|V| with a_i = half the box widths (authors) or the enclosing
      ellipsoid's semi-axes (whose largest is the printed r), and every sample inside that ellipsoid;
    * cells: the authors' C = ln P_ellipsoid / |regression slope|; ours is at most the ellipsoid's (Jensen).
    """
    from accessibility_lib.geometry.embeddings import sample_embeddings
    from accessibility_lib.geometry.regions import enclosing_ellipsoid
    from accessibility_lib.models.loading import load_model

    nano = load_model("nano")
    emb = sample_embeddings(nano, 16, [8, 32], seed=0)
    h = np.concatenate([emb[8], emb[32]])
    rep = table1.voronoi_box_column("nano", h, nano.W_U, n_samples=500)
    cor = table1.argmax_region_column("nano", h, nano.W_U, nano.b_U, n_samples=500)
    lnV, d = math.log(4096), 128

    def printed(x: float) -> float:
        return float(f"{x:.4g}")

    assert rep.rows["ball"].C == pytest.approx(128 * math.log(4097) / math.log(4096), rel=1e-12)
    assert round(rep.rows["ball"].C, 1) == 128.0
    alphas = {"voronoi_box": _replication_half_angle(h), "argmax_region": _enclosing_half_angle(h)}
    widths = h.max(0) - h.min(0)
    for col in (rep, cor):
        ball, cone, ell = col.rows["ball"], col.rows["cone"], col.rows["ellipsoid"]
        r, eps = printed(ball.r), printed(ball.eps)
        assert ball.C == pytest.approx(d * math.log1p(2 * r / eps) / lnV, rel=2e-4)
        a = alphas[col.method]  # both below π/2 here: frac = ½·I_{sin²α}((d − 1)/2, ½), evaluated by scipy
        frac = 0.5 * special.betainc((d - 1) / 2, 0.5, math.sin(a) ** 2) if a <= math.pi / 2 else None
        assert frac is not None and frac > 0
        factor = 4.0 if col.method == "voronoi_box" else 1.0  # the authors' closed form is 4× the fraction
        assert cone.C == pytest.approx((d * math.log1p(2 * r / eps) + math.log(factor * frac)) / lnV, rel=2e-4)
        axes = widths / 2 if col.method == "voronoi_box" else enclosing_ellipsoid(h, ball.eps).semi_axes.numpy()
        if col.method == "argmax_region":
            q = (((h - enclosing_ellipsoid(h, ball.eps).center.numpy()) / axes) ** 2).sum(1)
            assert q.max() <= 1 + 1e-9  # the ellipsoid encloses every sample
        assert printed(ell.r) == printed(float(axes.max()))
        assert ell.C == pytest.approx(np.log1p(2 * axes / printed(ell.eps)).sum() / lnV, rel=2e-4)
        cells = col.rows["ellipsoid + non-uniform cells"]
        assert cells.log_packing == pytest.approx(ell.log_packing, rel=1e-12)
        if col.method == "voronoi_box":
            assert cells.C == pytest.approx(ell.log_packing / abs(col.cells.convolution_slope), rel=1e-12)
        else:
            assert cells.C <= ell.C * (1 + 1e-9)


LN4 = math.log(4.0)


def test_effective_eps_rows_use_the_measured_eps(cloud):
    h, W = cloud
    cor = table1.argmax_region_column("toy", h, W, torch.zeros(40, dtype=torch.float64), n_samples=500)
    rep = table1.voronoi_box_column("toy", h, W, n_samples=500)
    for col in (cor, rep):
        table1.add_effective_eps_rows(col, h, 0.01, (0.005, 0.02), "a test")
    r_l2 = np.linalg.norm(h, axis=1).max()
    row = cor.rows["ball, effective ε"]
    assert row.eps == 0.01 and row.C == pytest.approx(12 * math.log1p(2 * r_l2 / 0.01) / math.log(40), rel=1e-12)
    assert row.caveat and "typical" in row.caveat
    assert rep.rows["ball, effective ε"].C is None  # the authors' method has no such row
