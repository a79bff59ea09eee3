"""Tests of accessibility_lib.geometry.support_shape on synthetic point clouds with known answers."""

import math

import numpy as np
import pytest
import torch

from accessibility_lib.geometry import support_shape as G
from accessibility_lib.theory import bounds


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_radii_known_points():
    x = torch.tensor([[3.0, -4.0], [1.0, 1.0], [0.0, -5.5]])
    r = G.radii(x)
    assert r["l1"] == pytest.approx(7.0)
    assert r["l2"] == pytest.approx(5.5)
    assert r["linf"] == pytest.approx(5.5)


def test_ball_samples_fill_ball_uniformly():
    ball = G.Ball(torch.zeros(5), 3.0)
    x = ball.sample(20000, _gen())
    norms = x.norm(dim=1)
    assert norms.max() <= 3.0 + 1e-9
    # uniform in a 5-ball: P(‖x‖ ≤ r/2) = 2^-5
    assert (norms <= 1.5).double().mean().item() == pytest.approx(2.0**-5, abs=4 * math.sqrt(2**-5 / 20000))
    assert ball.log_volume() == pytest.approx(math.log(8 * math.pi**2 / 15 * 3.0**5))  # V_5 = 8π²/15


def test_fit_on_ball_recovers_radius_and_zero_mean_cosine():
    x = G.Ball(torch.zeros(8), 2.0).sample(4000, _gen(1))
    s = G.fit_support(x)
    assert s.radii["l2"] == pytest.approx(2.0, rel=0.02)
    assert abs(s.mean_cosine) < 0.01
    assert s.min_cosine < -0.9


def test_anisotropic_gaussian_box_and_ellipsoid():
    scales = torch.tensor([0.1, 1.0, 10.0], dtype=torch.float64)
    x = torch.randn(20000, 3, generator=_gen(2), dtype=torch.float64) * scales + torch.tensor(
        [5.0, 0.0, -3.0], dtype=torch.float64
    )
    box = G.fit_box(x)
    half = (box.hi - box.lo) / 2
    ratio = half / scales
    assert torch.allclose(ratio, ratio.mean().expand(3), rtol=0.1)  # half-widths ∝ the scales
    e = box.ellipsoid()
    assert torch.allclose(e.center, torch.tensor([5.0, 0.0, -3.0], dtype=torch.float64), atol=0.5)
    assert e.log_volume() == pytest.approx(math.log(4 * math.pi / 3) + float(half.log().sum()))
    eps = 0.01
    assert e.slope(eps, 100) == pytest.approx(bounds.ellipsoid_slope(half.numpy(), eps, 100))
    y = e.sample(5000, _gen(3))
    assert (((y - e.center) / e.semi_axes).norm(dim=1) <= 1 + 1e-9).all()
    b = box.sample(5000, _gen(4))
    assert ((b >= box.lo) & (b <= box.hi)).all()


def test_cone_encloses_samples_and_paper_angle_can_be_smaller():
    axis = torch.tensor([1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    cone = G.Cone(axis, 0.4, 7.0)
    x = cone.sample(3000, _gen(5))
    ang = torch.arccos((x @ cone.axis) / x.norm(dim=1))
    assert ang.max() <= 0.4 + 1e-9 and x.norm(dim=1).max() <= 7.0 + 1e-9
    # uniform in the cap: P(angle ≤ α/2) is the ratio of cap fractions
    want = math.exp(bounds.cone_log_fraction(6, 0.2) - bounds.cone_log_fraction(6, 0.4))
    assert (ang <= 0.2).double().mean().item() == pytest.approx(want, abs=4 * math.sqrt(want * (1 - want) / 3000))
    fit, paper_alpha = G.fit_cone(x)
    assert torch.allclose(fit.axis, cone.axis, atol=0.02)
    cos = (x / x.norm(dim=1, keepdim=True)) @ fit.axis
    assert (torch.arccos(cos.clamp(-1, 1)) <= fit.half_angle + 1e-12).all()  # encloses every sample
    assert 0.35 < fit.half_angle < 0.45  # the fitted axis is off by a little, so α is close to 0.4
    assert (
        paper_alpha <= fit.half_angle + 1e-9
    )  # the paper's ½·max pairwise angle never exceeds the enclosing angle here
    assert fit.log_volume() == pytest.approx(
        G.log_unit_ball_volume(6) + 6 * math.log(fit.r) + bounds.cone_log_fraction(6, fit.half_angle)
    )


def test_cone_sampling_high_dimension_no_underflow():
    d = 768
    cone = G.Cone(torch.ones(d), 0.3, 1.0)
    x = cone.sample(200, _gen(6))
    ang = torch.arccos((x @ cone.axis) / x.norm(dim=1))
    assert torch.isfinite(x).all() and ang.max() <= 0.3 + 1e-9
    assert ang.min() > 0.28  # in high d the cap's mass sits at its rim
    assert math.isfinite(cone.log_volume())


def test_cosines_linear_equals_quadratic():
    x = torch.randn(300, 16, generator=_gen(7), dtype=torch.float64) + 0.7
    u = x / x.norm(dim=1, keepdim=True)
    gram = u @ u.T
    mean_q = (gram.sum() - 300) / (300 * 299)
    min_q = (gram + 10 * torch.eye(300, dtype=torch.float64)).min()
    assert G.mean_pairwise_cosine(x) == pytest.approx(float(mean_q), abs=1e-12)
    assert G.min_pairwise_cosine(x, block=37) == pytest.approx(float(min_q), abs=1e-12)


@pytest.mark.parametrize(
    "bad",
    [np.zeros((0, 3)), np.array([[1.0, np.nan]]), np.array([1.0, 2.0]), np.array([[1.0, np.inf], [0.0, 1.0]])],
)
def test_bad_points_raise(bad):
    with pytest.raises(ValueError):
        G.fit_support(bad)


def test_zero_volume_regions_raise():
    with pytest.raises(ValueError, match="zero volume"):
        G.fit_box(np.array([[1.0, 2.0], [1.0, 3.0]]))
    with pytest.raises(ValueError):
        G.Ball(torch.zeros(2), 0.0)
    with pytest.raises(ValueError):
        G.Ellipsoid(torch.zeros(2), torch.tensor([1.0, 0.0]))
    with pytest.raises(ValueError):
        G.Cone(torch.zeros(3), 0.5, 1.0)
    with pytest.raises(ValueError):
        G.Ball(torch.zeros(2), 1.0).sample(0)
