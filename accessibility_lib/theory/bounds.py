"""The paper's closed-form bounds, in log space (natural logs, nats).

Source: Meyer, Michelessa, Chaux, Tan, "How Many Different Outputs Can a Transformer Generate?",
ICML 2026, arXiv 2605.22223 — Thm 4.5, Cor 4.6 (finite prompt length), Thm 4.9, Cor 4.10 (mean
field), Section 5.2 (ellipsoid and cone supports).

Notation (paper → code): d → ``d`` (``d_model``), r → ``r``, ε → ``eps``, |V| → ``d_vocab``
(``d_vocab``), m → ``m`` (prompt vectors), n → ``n`` (generated tokens), q → ``q`` (Wasserstein
order). Packing numbers of real models overflow any float (Pythia-160M: e^{6389} for m = 1), so every
function returns a logarithm or a ratio of logarithms. They are exact, finite and NaN-free for d up
to 10^5, m up to 10^6 and |V| up to 10^7 (and far beyond), and raise ``ValueError`` on bad input.

Example:
    >>> round(ball_slope(768, 1.0, 2.0**-11, 50304), 2)   # Pythia-160M, replication ε convention
    590.09
"""

from __future__ import annotations

import math

import numpy as np
import scipy
from scipy import special

from accessibility_lib.ground.checks import check_array, check_int, check_positive_real, check_real

__all__ = [
    "log1p_ratio",
    "log_packing_ball",
    "ball_slope",
    "ball_threshold_length",
    "log_accessible_fraction",
    "log_packing_ellipsoid",
    "ellipsoid_slope",
    "per_coordinate_eps",
    "cone_log_fraction",
    "cone_slope",
    "mean_field_loglog_count",
    "mean_field_log_accessible_fraction",
]


def log1p_ratio(r: float, eps: float) -> float:
    """ln(1 + 2r/ε) in nats, exact also when 2r/ε overflows a float.

    Args:
        r: radius of the embedding support, > 0.
        eps: precision ε, > 0, in the same units as ``r``.

    Raises:
        ValueError: if ``r`` or ``eps`` is not a finite real number > 0.
    """
    r = check_positive_real("r", r)
    eps = check_positive_real("eps", eps)
    return _log1p_ratio(r, eps)


def _log1p_ratio(r: float, eps: float) -> float:
    x = 2.0 * r / eps
    if math.isfinite(x):
        return math.log1p(x)
    lx = math.log(2.0) + math.log(r) - math.log(eps)  # x = e^{lx} is huge: ln(1+x) = lx + ln(1+1/x)
    return lx + math.log1p(math.exp(-lx))


def _log_vocab(d_vocab: object) -> float:
    return math.log(check_int("d_vocab", d_vocab, minimum=2))


def log_packing_ball(d: int, r: float, eps: float, m: int = 1) -> float:
    """ln of the packing-number bound of the ball B_{d×m}(0, r) at precision ε (Thm 4.5).

    ln P ≤ d·m·ln(1 + 2r/ε): the number of inputs a finite-precision transformer can tell apart, hence
    the number of accessible sequences, with prompts of m vectors in R^d.

    Args:
        d: embedding width (``d_model``), integer ≥ 1.
        r: radius of the embedding support, > 0.
        eps: precision ε, > 0.
        m: prompt length in vectors, integer ≥ 1.

    Returns:
        ln P in nats (≥ 0).

    Raises:
        ValueError: on d < 1, r ≤ 0, ε ≤ 0, m < 1, non-finite or wrongly typed arguments.
    """
    d = check_int("d", d, minimum=1)
    m = check_int("m", m, minimum=1)
    return float(d) * float(m) * log1p_ratio(r, eps)


def ball_slope(d: int, r: float, eps: float, d_vocab: int) -> float:
    """C = d·ln(1 + 2r/ε) / ln|V| of Cor 4.6, in tokens per prompt vector.

    Inaccessible sequences of length n exist as soon as n > C·m.

    Raises:
        ValueError: on d < 1, r ≤ 0, ε ≤ 0, |V| < 2, non-finite or wrongly typed arguments.
    """
    return log_packing_ball(d, r, eps, 1) / _log_vocab(d_vocab)


def ball_threshold_length(d: int, r: float, eps: float, d_vocab: int, m: int = 1) -> float:
    """n* = C·m (Cor 4.6), in tokens: past this length some sequences are inaccessible.

    Raises:
        ValueError: as :func:`ball_slope`, and on m < 1.
    """
    m = check_int("m", m, minimum=1)
    return ball_slope(d, r, eps, d_vocab) * m


def log_accessible_fraction(d: int, r: float, eps: float, d_vocab: int, m: int, n: int) -> float:
    """ln of the bound on the fraction of the |V|^n length-n sequences that are accessible (Cor 4.6).

    min(0, ln P − n·ln|V|) with ln P = d·m·ln(1 + 2r/ε): 0 up to n* = C·m, then falling by ln|V| nats per
    token.

    Args:
        n: sequence length in tokens, integer ≥ 0.

    Raises:
        ValueError: on d < 1, r ≤ 0, ε ≤ 0, |V| < 2, m < 1, n < 0, non-finite or wrongly typed arguments.
    """
    log_p = log_packing_ball(d, r, eps, m)
    log_v = _log_vocab(d_vocab)
    n = check_int("n", n, minimum=0)
    return min(0.0, log_p - n * log_v)


def log_packing_ellipsoid(semi_axes: np.ndarray, eps: float, m: int = 1) -> float:
    """ln of the packing bound of an axis-aligned ellipsoid with semi-axes r_i (Section 5.2).

    ln P ≤ m·Σ_i ln(1 + 2r_i/ε_i), with one ε for every coordinate or a ``(d,)`` ε_i a coordinate (the
    "variable ε" row: :func:`per_coordinate_eps`).

    Args:
        semi_axes: (d,) semi-axes r_i > 0, same units as ε.
        eps: precision ε > 0, a number or a (d,) array of ε_i > 0.
        m: prompt length in vectors, ≥ 1.

    Raises:
        ValueError: if ``semi_axes`` is empty, not 1-D, or has a non-finite or non-positive entry,
            on ε ≤ 0 (or an ε_i that is not finite and > 0, or ε_i of another length than the axes), m < 1.
    """
    axes = check_array("semi_axes", semi_axes, ndim=1, positive=True)
    if np.ndim(eps) == 0:
        eps = check_positive_real("eps", eps)
    else:
        eps = check_array("eps", eps, ndim=1, positive=True)
        if eps.shape != axes.shape:
            raise ValueError(f"eps has {eps.shape[0]} per-coordinate values but there are {axes.shape[0]} semi-axes")
    m = check_int("m", m, minimum=1)
    ratio = 2.0 * axes / eps
    with np.errstate(over="ignore"):
        logs = np.where(np.isfinite(ratio), np.log1p(ratio), np.log(2.0) + np.log(axes) - np.log(eps))
    return float(m) * float(np.sum(logs))


def ellipsoid_slope(semi_axes: np.ndarray, eps: float, d_vocab: int) -> float:
    """C_ellipsoid = Σ_i ln(1 + 2r_i/ε) / ln|V| (Section 5.2), in tokens per prompt vector.

    Raises:
        ValueError: as :func:`log_packing_ellipsoid`, and on |V| < 2.
    """
    return log_packing_ellipsoid(semi_axes, eps, 1) / _log_vocab(d_vocab)


#: SciPy issue where ``special.betainc`` returns NaN inside its domain (still so in the pinned SciPy 1.17.1)
SCIPY_BETAINC_NAN = "scipy/scipy#24566"
#: largest rounding of the continued fraction's ln I_x, relative to max(1, |ln I_x|)
_CF_LOG_RTOL = 1e-6


def _log_betainc_cf(a: float, b: float, x: float, log_x: float, log_1mx: float) -> float | None:
    """ln I_x(a, b) by its continued fraction (Numerical Recipes §6.4, DLMF 8.17.22), the prefactor in log space.

    ``log_x`` and ``log_1mx`` are ln x and ln(1 − x), passed in so that a caller holding 1 − x more exactly than x
    keeps those digits. Fast for x below the mode (a+1)/(a+b+2); near the mode of a distribution with a, b ~ 10^18
    it needs O(√max(a, b)) terms. Returns None when 10,000 terms do not converge to 1e-15, or when the
    rounding of the prefactor's terms could exceed ``_CF_LOG_RTOL`` of |ln I| (or of 1 nat): they are each
    ~a·ln x and cancel, so for a, b ~ 10^17 the sum keeps no digit (ln I came out as +6026 there).
    """
    tiny = 1e-300  # modified Lentz evaluation
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    dd = 1.0 - qab * x / qap
    dd = 1.0 / (dd if abs(dd) > tiny else tiny)
    h = dd
    for k in range(1, 10_000):
        k2 = 2 * k
        aa = k * (b - k) * x / ((qam + k2) * (a + k2))
        dd = 1.0 + aa * dd
        dd = 1.0 / (dd if abs(dd) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= dd * c
        aa = -(a + k) * (qab + k) * x / ((a + k2) * (qap + k2))
        dd = 1.0 + aa * dd
        dd = 1.0 / (dd if abs(dd) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = dd * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            terms = (a * log_x, b * log_1mx, -float(special.betaln(a, b)), -math.log(a))
            if h <= 0 or not all(map(math.isfinite, terms)):
                return None
            value = math.fsum(terms) + math.log(h)
            # the terms cancel: with a, b ~ 10^17 each is ~10^17 and the sum's rounding is tens of nats
            rounding = 2.3e-16 * (sum(map(abs, terms)) + abs(math.log(h)))
            return value if value <= 0.0 and rounding <= _CF_LOG_RTOL * max(1.0, -value) else None
    return None


def _log_betainc_lower(a: float, b: float, x: float) -> float:
    """ln I_x(a, b), the regularized incomplete beta function, without underflow and never NaN.

    Below the mode of the integrand ((a+1)/(a+b+2)) the continued fraction is used, its prefactor kept in
    log space, so values like I = e^{-5000} stay exact; should it not converge (a, b ~ 10^18 near the mode),
    SciPy's value is used. Above the mode I_x is not small and SciPy's value is used; where SciPy returns
    NaN or a value outside (0, 1] (``special.betainc(3.16e16, 3.13e18, 0.010000000000005001)`` is NaN in
    SciPy 1.17.1, scipy/scipy#24566), the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) with the continued fraction
    is used instead.

    Raises:
        ValueError: where neither SciPy nor the continued fraction gives a value (at scipy/scipy#24566's input,
            the mode of a distribution with a, b ~ 10^16–10^18, SciPy gives NaN): no bound, rather than NaN.
    """
    if x <= 0.0:
        return -math.inf
    if x >= 1.0:
        return 0.0
    log_x, log_1mx = math.log(x), math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        value = _log_betainc_cf(a, b, x, log_x, log_1mx)
        if value is not None:
            return value
    scipy_value = float(special.betainc(a, b, x))
    if 0.0 < scipy_value <= 1.0:
        return math.log(scipy_value)
    upper = _log_betainc_cf(b, a, 1.0 - x, log_1mx, log_x)  # ln I_{1−x}(b, a) = ln(1 − I_x(a, b))
    if upper is not None and upper < 0.0:
        return math.log1p(-math.exp(upper))
    raise ValueError(
        f"the regularized incomplete beta function I_x(a, b) at a = {a!r}, b = {b!r}, x = {x!r} cannot be "
        f"evaluated: SciPy {scipy.__version__} returns {scipy_value!r} there ({SCIPY_BETAINC_NAN} reports such "
        f"NaNs) and the continued fraction does not converge or loses its digits (rounding above {_CF_LOG_RTOL:g} of ln I); "
        "no bound is given at this input"
    )


def cone_log_fraction(d: int, half_angle: float) -> float:
    """ln of the fraction of the unit sphere S^{d−1} ⊂ R^d within ``half_angle`` of a pole.

    frac(α) = ½·I_{sin²α}((d−1)/2, ½) for α ≤ π/2 and 1 − ½·I_{sin²α}((d−1)/2, ½) for α > π/2
    (I the regularized incomplete beta function). Exact in log space: for d in the thousands and small
    α the fraction is far below the smallest float (e.g. e^{-2000}) and is still returned exactly.
    The replication code's closed form is 4× too large (it gives 2 at α = π/2) and underflows to −inf
    (see the book's appendix on conventions); this one gives ½ at α = π/2 and 1 at α = π. For d = 1 the "sphere" is {−1, +1}:
    ½ for α < π, 1 at α = π.

    Args:
        d: dimension of the ambient space, integer ≥ 1.
        half_angle: α in radians, in (0, π].

    Returns:
        ln frac(α) ≤ 0, in nats.

    Raises:
        ValueError: on d < 1 or α outside (0, π].
    """
    d = check_int("d", d, minimum=1)
    alpha = check_real("half_angle", half_angle, minimum=0.0, maximum=math.pi, min_inclusive=False)
    if d == 1:
        return 0.0 if alpha >= math.pi else math.log(0.5)
    a = (d - 1) / 2.0
    if alpha <= math.pi / 2:
        x = math.sin(alpha) ** 2
        return math.log(0.5) + _log_betainc_lower(a, 0.5, x)
    x = math.sin(math.pi - alpha) ** 2
    return math.log1p(-0.5 * math.exp(_log_betainc_lower(a, 0.5, x)))


def cone_slope(d: int, r: float, eps: float, d_vocab: int, half_angle: float) -> float:
    """C_cone = max(0, d·ln(1 + 2r/ε) + ln frac(α)) / ln|V| (Section 5.2), tokens per prompt vector.

    The support is the cone of half-angle α inside B_d(0, r); its packing number is approximated by the
    ball's times the sphere fraction of the cap (the paper's approximation). A packing number is at
    least 1, so the log is clipped at 0.

    Raises:
        ValueError: on d < 1, r ≤ 0, ε ≤ 0, |V| < 2, α outside (0, π].
    """
    log_p = log_packing_ball(d, r, eps, 1) + cone_log_fraction(d, half_angle)
    return max(0.0, log_p) / _log_vocab(d_vocab)


def _softplus(x: float) -> float:
    """ln(1 + e^x) without overflow."""
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


def mean_field_loglog_count(d: int, r: float, eps: float, q: float = 1) -> float:
    """ln ln of the Thm 4.9 bound on the number of accessible sequences for prompts of any length.

    #accessible ≤ (e + e·(2r)^q/ε^q)^{(1+2r/ε)^d}, so
    ln ln = d·ln(1 + 2r/ε) + ln(1 + ln(1 + (2r/ε)^q)).
    The count itself is e^{e^{…}}: only its ln ln fits in a float.

    Args:
        d: embedding width, ≥ 1.
        r: support radius, > 0.
        eps: Wasserstein precision ε, > 0 (Assumption 4.8).
        q: order of the Wasserstein distance W_q, real ≥ 1.

    Returns:
        ln ln(#accessible), dimensionless (ln of a number of nats).

    Raises:
        ValueError: on d < 1, r ≤ 0, ε ≤ 0, q < 1, non-finite or wrongly typed arguments.
    """
    d = check_int("d", d, minimum=1)
    r = check_positive_real("r", r)
    eps = check_positive_real("eps", eps)
    q = check_real("q", q, minimum=1.0)
    log_x = math.log(2.0) + math.log(r) - math.log(eps)  # ln(2r/ε)
    log_count_over_base = math.log1p(_softplus(q * log_x))  # ln(1 + ln(1 + (2r/ε)^q))
    return d * _log1p_ratio(r, eps) + log_count_over_base


def mean_field_log_accessible_fraction(d: int, r: float, eps: float, d_vocab: int, n: int, q: float = 1) -> float:
    """ln of the Cor 4.10 bound on the accessible fraction of length-n sequences, prompts of any length.

    min(0, ln #accessible − n·ln|V|) with ln #accessible from Thm 4.9. When ln #accessible itself
    exceeds a float (e^{709} nats) the fraction bound is 1 (ln = 0) for every n a float can hold.

    Raises:
        ValueError: as :func:`mean_field_loglog_count`, and on |V| < 2, n < 0.
    """
    loglog = mean_field_loglog_count(d, r, eps, q)
    log_v = _log_vocab(d_vocab)
    n = check_int("n", n, minimum=0)
    if n == 0:
        return 0.0
    if loglog >= math.log(n * log_v):
        return 0.0
    return min(0.0, math.exp(loglog) - n * log_v)


def per_coordinate_eps(center, semi_axes, unit_roundoff: float = 2.0**-11) -> np.ndarray:
    """The "variable ε" of the paper's Table 1 as the book reads it: ε_i = u·(|c_i| + a_i).

    The paper's last Table 1 row (Section 5.2) refines the ellipsoid with a precision that varies by
    coordinate but gives no formula. Floating point's spacing grows with magnitude, and the code's one
    ε = r∞·u (u = 2⁻¹¹) is that spacing at the largest magnitude any coordinate reaches; the book applies
    the same rule a coordinate at a time, at the largest magnitude coordinate i reaches in the ellipsoid
    with centre c and semi-axes a, |c_i| + a_i. Since a_i ≤ |c_i| + a_i, 2a_i/ε_i ≤ 2/u, so the row's
    ln P = Σ_i ln(1 + 2a_i/ε_i) never exceeds d·ln(1 + 2/u): at u = 2⁻¹¹ the ball at 2r/ε = 4096.

    Args:
        center: ``(d,)`` the ellipsoid's centre c (embedding units).
        semi_axes: ``(d,)`` its semi-axes a_i > 0 (embedding units).
        unit_roundoff: u > 0, ε's share of the magnitude it is set at (ε/r∞; 2⁻¹¹ for float16).

    Returns:
        ``(d,)`` ε_i in embedding units.

    Raises:
        ValueError: ``center`` or ``semi_axes`` empty, not 1-D, of different lengths or not finite; a
            semi-axis ≤ 0; u not a finite number > 0.
    """
    a = check_array("semi_axes", semi_axes, ndim=1, positive=True)
    c = check_array("center", center, ndim=1)
    if c.shape != a.shape:
        raise ValueError(f"center has {c.shape[0]} coordinates but there are {a.shape[0]} semi-axes")
    u = check_positive_real("unit_roundoff", unit_roundoff)
    return u * (np.abs(c) + a)
