"""Tests of accessibility_lib.theory.bounds against hand-computed values, properties and bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from accessibility_lib.theory import bounds, precision

# Model facts from the models list of the paper's replication repository (accessibility_lib/data/paper/models_list.csv):
# name: (d, |V|, r_inf = L_inf max, measured slope "Slope exp")
MODELS = {
    "Pythia-160M": (768, 50304, 22.45, 90.4),
    "Pythia-1.4B": (2048, 50304, 66.94, 261.4),
    "Pythia-2.8B": (2560, 50304, 41.56, 197.9),
    "Pythia-6.9B": (4096, 50304, 42.16, 283.55),
}


def _replication_slope(d: int, vocab: int, r_inf: float) -> float:
    conv = precision.RINF_FP16
    return bounds.ball_slope(d, r_inf, conv.eps(r_inf=r_inf), vocab)


def test_pythia160m_replication_slope():
    # the authors' bound notebook: Pythia-160M under ε = r∞·2^-11 has C = 590.09 and ratio 6.53 to the measured 90.4
    d, vocab, r_inf, measured = MODELS["Pythia-160M"]
    c = _replication_slope(d, vocab, r_inf)
    assert round(c, 2) == 590.09
    assert round(c / measured, 2) == 6.53
    # by hand: 768·ln(4097)/ln(50304)
    assert c == pytest.approx(768 * math.log(4097) / math.log(50304), rel=1e-13)


@pytest.mark.parametrize(
    "name, ratio",
    # the replication notebook's ball ratios for the big Pythias
    [("Pythia-1.4B", 6.02), ("Pythia-2.8B", 9.94), ("Pythia-6.9B", 11.10)],
)
def test_big_pythia_replication_ratios(name, ratio):
    d, vocab, r_inf, measured = MODELS[name]
    assert round(_replication_slope(d, vocab, r_inf) / measured, 2) == ratio


@pytest.mark.parametrize(
    "r_inf, eps",
    # r∞ and ε printed by the replication notebook for Pythia 1.4B / 2.8B / 6.9B
    [(59.906, 0.029251), (52.219, 0.025497), (50.969, 0.024887)],
)
def test_replication_eps_values(r_inf, eps):
    assert precision.RINF_FP16.eps(r_inf=r_inf) == pytest.approx(eps, abs=1e-6)  # both printed to 6 decimals


def test_table1_ball_row_pythia160m_matches_2_pow_17():
    # paper, Table 1: the ball ratio 9.24 for Pythia-160M comes out with 2r/ε = 2^17
    # (measured slope 90.37, the paper's Fig 4 fit); 9.25 with the unrounded inputs.
    c = bounds.ball_slope(768, 1.0, 2.0 / 2**17, 50304)
    assert c / 90.37 == pytest.approx(9.24, abs=0.015)


def test_log_packing_and_fraction_by_hand():
    assert bounds.log_packing_ball(10, 1.0, 0.5, m=3) == pytest.approx(30 * math.log(5.0))
    # fraction: ln P − n ln|V|, clipped at 0
    lp = 2 * math.log(5.0)
    assert bounds.log_accessible_fraction(2, 1.0, 0.5, 7, 1, 0) == 0.0
    assert bounds.log_accessible_fraction(2, 1.0, 0.5, 7, 1, 1) == 0.0  # ln 25 > ln 7
    assert bounds.log_accessible_fraction(2, 1.0, 0.5, 7, 1, 3) == pytest.approx(lp - 3 * math.log(7))
    assert bounds.ball_threshold_length(2, 1.0, 0.5, 7, m=4) == pytest.approx(4 * lp / math.log(7))


def test_ellipsoid_reduces_to_ball_and_is_smaller():
    axes = np.full(64, 3.0)
    assert bounds.ellipsoid_slope(axes, 0.01, 1000) == pytest.approx(bounds.ball_slope(64, 3.0, 0.01, 1000))
    axes[:32] = 0.1
    assert bounds.ellipsoid_slope(axes, 0.01, 1000) < bounds.ball_slope(64, 3.0, 0.01, 1000)
    assert bounds.log_packing_ellipsoid([1.0, 2.0], 0.5, m=2) == pytest.approx(2 * (math.log(5) + math.log(9)))


def test_ellipsoid_at_a_per_coordinate_eps():
    # the "variable ε" row: ε_i = u·(|c_i| + a_i), the largest magnitude coordinate i reaches in the ellipsoid
    eps_i = bounds.per_coordinate_eps([0.0, -1.0], [1.0, 2.0], 0.25)
    assert eps_i == pytest.approx([0.25, 0.75])
    assert bounds.log_packing_ellipsoid([1.0, 2.0], eps_i) == pytest.approx(math.log(9) + math.log(1 + 4 / 0.75))
    # 2a_i/ε_i ≤ 2/u on every coordinate, so the row never exceeds the ball at 2r/ε = 2/u, whatever the ellipsoid
    g = np.random.default_rng(0)
    for _ in range(50):
        c, a = g.normal(scale=10, size=64), g.lognormal(size=64)
        lp = bounds.log_packing_ellipsoid(a, bounds.per_coordinate_eps(c, a, 2.0**-11))
        assert lp <= 64 * math.log1p(4096) * (1 + 1e-12)
    # a centred ellipsoid reaches the bound exactly
    assert bounds.log_packing_ellipsoid(a, bounds.per_coordinate_eps(0 * a, a, 2.0**-11)) == pytest.approx(
        64 * math.log1p(4096)
    )
    with pytest.raises(ValueError, match="2 coordinates but there are 3 semi-axes"):
        bounds.per_coordinate_eps([0.0, 1.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="eps has 2 per-coordinate values but there are 3 semi-axes"):
        bounds.log_packing_ellipsoid([1.0, 2.0, 3.0], eps_i)
    with pytest.raises(ValueError, match="eps must contain only numbers > 0"):
        bounds.log_packing_ellipsoid([1.0, 2.0], [0.5, 0.0])
    with pytest.raises(ValueError, match="semi_axes must contain only numbers > 0"):
        bounds.per_coordinate_eps([0.0, 0.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="unit_roundoff"):
        bounds.per_coordinate_eps([0.0], [1.0], 0.0)


def test_cone_fraction_special_values():
    for d in (2, 3, 10, 768, 4096):
        assert bounds.cone_log_fraction(d, math.pi / 2) == pytest.approx(math.log(0.5), abs=1e-12)
        assert bounds.cone_log_fraction(d, math.pi) == pytest.approx(0.0, abs=1e-12)
    # circle: the arc fraction is α/π
    for alpha in (0.1, 1.0, 2.0, 3.0):
        assert math.exp(bounds.cone_log_fraction(2, alpha)) == pytest.approx(alpha / math.pi, rel=1e-10)
    # S^2: cap area fraction is (1 − cos α)/2
    for alpha in (0.05, 0.7, 1.9, 3.1):
        assert math.exp(bounds.cone_log_fraction(3, alpha)) == pytest.approx((1 - math.cos(alpha)) / 2, rel=1e-10)


def test_cone_fraction_no_underflow_in_high_dimension():
    # d = 4096, α = 0.1: frac ≈ sin(α)^(d-1)/… ≈ e^{-9400}: far below the smallest double, yet finite
    value = bounds.cone_log_fraction(4096, 0.1)
    assert math.isfinite(value) and value < -9000
    # leading-order check: ln frac ≈ (d−1)·ln sin α + O(ln d)
    assert value == pytest.approx(4095 * math.log(math.sin(0.1)), rel=2e-3)
    # monotone in α
    alphas = np.linspace(0.01, math.pi, 50)
    values = [bounds.cone_log_fraction(2048, a) for a in alphas]
    assert all(b >= a for a, b in zip(values, values[1:]))


@pytest.mark.parametrize("d", [3, 5, 8])
def test_cone_fraction_matches_monte_carlo(d):
    rng = np.random.default_rng(d)
    x = rng.normal(size=(400_000, d))
    angle = np.arccos(np.clip(x[:, 0] / np.linalg.norm(x, axis=1), -1, 1))
    for alpha in (0.4, 1.2, 2.5):
        p = np.mean(angle <= alpha)
        se = math.sqrt(p * (1 - p) / len(x))
        assert math.exp(bounds.cone_log_fraction(d, alpha)) == pytest.approx(p, abs=5 * se + 1e-12)


#: the input of scipy/scipy#24566 (a Beta(a, b) CDF at its mean): SciPy 1.17.1's betainc returns NaN there
SCIPY_NAN_INPUT = (3.1622776601699636e16, 3.130654883566682e18, 0.010000000000005001)


def test_incomplete_beta_refuses_scipys_nan_and_agrees_with_scipy_beside_it():
    a, b, x = SCIPY_NAN_INPUT
    assert math.isnan(special.betainc(a, b, x)), "SciPy is fixed at scipy/scipy#24566's input: move this test's input"
    # before the guard this returned NaN (math.log(nan)); now it refuses, naming the SciPy issue
    with pytest.raises(ValueError, match=r"a = 3.16.*scipy/scipy#24566.*no bound is given"):
        bounds._log_betainc_lower(a, b, x)
    sd = math.sqrt(x * (1 - x) / (a + b))  # the distribution's standard deviation, 5.6e-11
    for k in (-10.0, -1.0, -0.1, 0.1, 1.0, 3.0):  # beside it SciPy is finite, and the function agrees with it
        assert bounds._log_betainc_lower(a, b, x + k * sd) == pytest.approx(
            math.log(special.betainc(a, b, x + k * sd)), rel=1e-12
        ), k  # at k = -1 and -10 the continued fraction alone gave ln I = +6061 and +6027 (its terms cancel)


def test_cone_fraction_falls_back_where_scipy_would_give_nan(monkeypatch):
    """The cone bound's only SciPy call (I_x above its mode) returns NaN for every input here: the symmetry
    I_x(a, b) = 1 − I_{1−x}(b, a) gives the same fractions. (With b = ½, as the cone's, SciPy 1.17.1 gave no NaN on a
    grid of a from 1 to 10^308 and 900 values of x: the bound stays out of scipy/scipy#24566's region.)"""
    cases = [(768, 1.5), (768, 1.0), (3, 1.2), (4096, 1.55), (20_000, 1.57)]
    expected = [bounds.cone_log_fraction(d, alpha) for d, alpha in cases]
    monkeypatch.setattr(bounds.special, "betainc", lambda a, b, x: math.nan)
    for (d, alpha), value in zip(cases, expected):
        assert bounds.cone_log_fraction(d, alpha) == pytest.approx(value, rel=1e-9, abs=1e-15), (d, alpha)
    assert bounds.cone_slope(768, 10.0, 0.01, 50304, 1.5) > 0


def test_cone_slope_between_zero_and_ball():
    ball = bounds.ball_slope(768, 10.0, 0.01, 50304)
    cone = bounds.cone_slope(768, 10.0, 0.01, 50304, 0.5)
    assert 0 < cone < ball
    assert bounds.cone_slope(768, 10.0, 0.01, 50304, math.pi) == pytest.approx(ball)


def test_mean_field_loglog_by_hand_and_huge():
    # ln ln (e + e·x^q)^{(1+x)^d} = d ln(1+x) + ln(1 + ln(1 + x^q)), x = 2r/ε
    x, d, q = 4.0, 3, 2
    expected = d * math.log(1 + x) + math.log(1 + math.log(1 + x**q))
    assert bounds.mean_field_loglog_count(d, 2.0, 1.0, q) == pytest.approx(expected)
    huge = bounds.mean_field_loglog_count(100_000, 1e200, 1e-200, 50)
    assert math.isfinite(huge)


def test_mean_field_fraction():
    # tiny setting: count = (e + e·2)^{3^1} = (3e)^3 ⇒ ln count = 3(1 + ln 3)
    ln_count = 3 * (1 + math.log(3))
    assert bounds.mean_field_log_accessible_fraction(1, 1.0, 1.0, 30, 10) == pytest.approx(ln_count - 10 * math.log(30))
    assert bounds.mean_field_log_accessible_fraction(1, 1.0, 1.0, 30, 1) == 0.0
    assert bounds.mean_field_log_accessible_fraction(768, 10.0, 0.01, 30, 10**9) == 0.0


# ---------------------------------------------------------------- properties (hypothesis)

dims = st.integers(min_value=1, max_value=100_000)
radii = st.floats(min_value=1e-6, max_value=1e6)
epss = st.floats(min_value=1e-8, max_value=1e3)
vocabs = st.integers(min_value=2, max_value=10_000_000)


@settings(max_examples=200, deadline=None)
@given(d=dims, r=radii, eps=epss, v=vocabs)
def test_slope_monotone(d, r, eps, v):
    c = bounds.ball_slope(d, r, eps, v)
    assert math.isfinite(c) and c > 0
    assert bounds.ball_slope(d + 1, r, eps, v) > c
    assert bounds.ball_slope(d, r * 2, eps, v) > c
    assert bounds.ball_slope(d, r, eps * 2, v) < c
    assert bounds.ball_slope(d, r, eps, v + 1) < c


@settings(max_examples=200, deadline=None)
@given(d=dims, r=radii, eps=epss, v=vocabs, m=st.integers(1, 1_000_000), n=st.integers(0, 10**12))
def test_fraction_nonpositive_nonincreasing_finite(d, r, eps, v, m, n):
    f = bounds.log_accessible_fraction(d, r, eps, v, m, n)
    g = bounds.log_accessible_fraction(d, r, eps, v, m, n + 1)
    assert math.isfinite(f) and f <= 0 and g <= f


@settings(max_examples=100, deadline=None)
@given(d=dims, r=st.floats(1e-300, 1e300), eps=st.floats(1e-300, 1e300), q=st.floats(1, 100))
def test_huge_inputs_stay_finite(d, r, eps, q):
    assert math.isfinite(bounds.log_packing_ball(d, r, eps, 1_000_000))
    assert math.isfinite(bounds.mean_field_loglog_count(d, r, eps, q))
    assert math.isfinite(bounds.ball_slope(d, r, eps, 10_000_000))


@settings(max_examples=100, deadline=None)
@given(d=st.integers(2, 20_000), alpha=st.floats(1e-3, math.pi))
def test_cone_fraction_is_log_probability(d, alpha):
    v = bounds.cone_log_fraction(d, alpha)
    assert math.isfinite(v) and v <= 1e-12


# ---------------------------------------------------------------- bad input

BAD = [
    (bounds.log_packing_ball, dict(d=0, r=1.0, eps=0.1), "d"),
    (bounds.log_packing_ball, dict(d=2.5, r=1.0, eps=0.1), "d"),
    (bounds.log_packing_ball, dict(d=True, r=1.0, eps=0.1), "d"),
    (bounds.log_packing_ball, dict(d="768", r=1.0, eps=0.1), "d"),
    (bounds.log_packing_ball, dict(d=4, r=0.0, eps=0.1), "r"),
    (bounds.log_packing_ball, dict(d=4, r=-1.0, eps=0.1), "r"),
    (bounds.log_packing_ball, dict(d=4, r=float("nan"), eps=0.1), "r"),
    (bounds.log_packing_ball, dict(d=4, r=1.0, eps=0.0), "eps"),
    (bounds.log_packing_ball, dict(d=4, r=1.0, eps=float("inf")), "eps"),
    (bounds.log_packing_ball, dict(d=4, r=1.0, eps=0.1, m=0), "m"),
    (bounds.ball_slope, dict(d=4, r=1.0, eps=0.1, d_vocab=1), "d_vocab"),
    (bounds.ball_slope, dict(d=4, r=1.0, eps=0.1, d_vocab=3.0), "d_vocab"),
    (bounds.log_accessible_fraction, dict(d=4, r=1.0, eps=0.1, d_vocab=5, m=1, n=-1), "n"),
    (bounds.log_accessible_fraction, dict(d=4, r=1.0, eps=0.1, d_vocab=5, m=0, n=1), "m"),
    (bounds.ellipsoid_slope, dict(semi_axes=[], eps=0.1, d_vocab=5), "semi_axes"),
    (bounds.ellipsoid_slope, dict(semi_axes=[1.0, -1.0], eps=0.1, d_vocab=5), "semi_axes"),
    (bounds.ellipsoid_slope, dict(semi_axes=[1.0, float("nan")], eps=0.1, d_vocab=5), "semi_axes"),
    (bounds.ellipsoid_slope, dict(semi_axes=[[1.0]], eps=0.1, d_vocab=5), "semi_axes"),
    (bounds.cone_log_fraction, dict(d=5, half_angle=0.0), "half_angle"),
    (bounds.cone_log_fraction, dict(d=5, half_angle=4.0), "half_angle"),
    (bounds.cone_log_fraction, dict(d=0, half_angle=1.0), "d"),
    (bounds.cone_slope, dict(d=5, r=1.0, eps=0.1, d_vocab=5, half_angle=-1.0), "half_angle"),
    (bounds.mean_field_loglog_count, dict(d=5, r=1.0, eps=0.1, q=0.5), "q"),
    (bounds.mean_field_loglog_count, dict(d=5, r=1.0, eps=-0.1), "eps"),
    (bounds.mean_field_log_accessible_fraction, dict(d=5, r=1.0, eps=0.1, d_vocab=1, n=3), "d_vocab"),
]


@pytest.mark.parametrize("func, kwargs, name", BAD, ids=[f"{f.__name__}-{n}-{i}" for i, (f, _, n) in enumerate(BAD)])
def test_bad_input_names_argument(func, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        func(**kwargs)


# ---------------------------------------------------------------- precision conventions


def test_precision_conventions():
    assert precision.unit_roundoff("fp16") == 2.0**-11
    assert precision.unit_roundoff("bfloat16") == 2.0**-8
    assert precision.unit_roundoff("torch.float32") == 2.0**-24
    assert precision.given(0.25).eps() == 0.25
    assert precision.relative(10).ratio(3.0) == pytest.approx(2.0**11)
    assert precision.from_dtype("fp16", reference="r_inf").eps(r_inf=2.0) == 2.0 * 2.0**-11
    assert precision.RINF_FP16.ratio(22.45, r_inf=22.45) == 4096.0
    assert precision.get("rinf_fp16") is precision.RINF_FP16
    with pytest.raises(ValueError, match="dtype must be"):
        precision.unit_roundoff("int8")
    with pytest.raises(ValueError, match="eps_convention must be one of"):
        precision.get("nope")
    with pytest.raises(ValueError, match="r_inf"):
        precision.RINF_FP16.eps(r=1.0)
    with pytest.raises(ValueError, match="eps must"):
        precision.given(0)
