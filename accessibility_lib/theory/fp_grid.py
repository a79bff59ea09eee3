"""The grid a floating-point dtype really has: exact counts of representable values, and the bound they give.

The paper's precision assumption (Assumption 4.3: the model is constant on the cubes of a uniform
ε-grid) stands in for finite precision. A floating-point format is not a uniform grid: its spacing
near x is about |x|·2^−M (M explicit significand bits: 23 for fp32, 7 for bf16, 10 for fp16), with
evenly spaced *subnormal* numbers below the smallest normal number. But the count it implies can be
made exact: a model that reads its input in a dtype can tell apart at most as many inputs as that
dtype can represent, so the number of distinguishable prompts of m vectors in the box
Π_i [−r_i, r_i] is at most

    P_fp = Π_i N(r_i)^m,        N(r) = #{representable x : |x| ≤ r},

and the finite-prompt argument of the paper (Thm 4.5 → Cor 4.6) goes through with ln P_fp in place
of d·m·ln(1 + 2r/ε): inaccessible sequences exist once n > C_fp·m with C_fp = Σ_i ln N(r_i) / ln|V|.
No ε is assumed: the count is what the dtype allows.

**Closed form of N(r).** For an IEEE-style binary format with E exponent bits and M explicit
significand bits, the non-negative finite values sorted increasingly are exactly the bit patterns
0, 1, 2, … read as unsigned integers, up to the largest finite value (exponent field 2^E − 2,
significand all ones). So the number of non-negative representable values ≤ r is (bit pattern of the
largest representable value ≤ r) + 1, and with field = e + bias for r = (1 + f)·2^e (normal),

    K(r) = field·2^M + ⌊f·2^M⌋ + 1,      K(r) = ⌊r / 2^(e_min − M)⌋ + 1  (r below the normal range),

capped at (2^E − 1)·2^M (all finite non-negative values). N(r) = 2·K(r) − 1: +0 and −0 are one value
(they compare equal and give the same output almost everywhere), NaN and ±inf are not counted.

Example:
    >>> count_in_interval(1.0, "fp16")       # 2·(15·1024 + 1) − 1
    30721
    >>> count_in_interval(65504.0, "fp16")   # every finite fp16 value (±0 once)
    63487
    >>> count_in_interval(1.0, "bf16")
    32513

Sources: IEEE 754-2019 §3.4 (binary interchange formats: fp32 = binary32, fp16 = binary16); bfloat16
is the upper half of binary32 (8 exponent bits, 7 explicit significand bits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from accessibility_lib.ground.checks import check_int

__all__ = [
    "FloatFormat",
    "FORMATS",
    "get_format",
    "count_nonnegative",
    "count_in_interval",
    "log_count_box",
    "spacing",
    "BoxCount",
    "box_count",
    "whole_range_count",
    "equivalent_ratio",
]


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format with subnormals.

    Attributes:
        name: canonical short name (``"fp32"``, ``"bf16"``, ``"fp16"``).
        exponent_bits: E. mantissa_bits: M, the explicit significand bits (precision p = M + 1).
    """

    name: str
    exponent_bits: int
    mantissa_bits: int

    @property
    def bias(self) -> int:
        return 2 ** (self.exponent_bits - 1) - 1

    @property
    def e_min(self) -> int:
        """Exponent of the smallest normal number 2^e_min."""
        return 1 - self.bias

    @property
    def e_max(self) -> int:
        return self.bias

    @property
    def max_finite(self) -> float:
        """Largest finite value (2 − 2^−M)·2^e_max."""
        return (2.0 - 2.0**-self.mantissa_bits) * 2.0**self.e_max

    @property
    def smallest_subnormal(self) -> float:
        return 2.0 ** (self.e_min - self.mantissa_bits)

    @property
    def smallest_normal(self) -> float:
        return 2.0**self.e_min

    @property
    def unit_roundoff(self) -> float:
        """2^−(M+1): half the spacing just above 1 (fp32 2^−24, bf16 2^−8, fp16 2^−11)."""
        return 2.0 ** -(self.mantissa_bits + 1)

    @property
    def n_nonnegative_finite(self) -> int:
        """Finite values ≥ 0 (zero once): (2^E − 1)·2^M."""
        return (2**self.exponent_bits - 1) * 2**self.mantissa_bits


#: The formats counted here (fp64 included for completeness; the book uses the first three).
FORMATS: dict[str, FloatFormat] = {
    "fp32": FloatFormat("fp32", 8, 23),
    "bf16": FloatFormat("bf16", 8, 7),
    "fp16": FloatFormat("fp16", 5, 10),
    "fp64": FloatFormat("fp64", 11, 52),
}
_ALIASES = {
    "fp32": "fp32", "float32": "fp32", "float": "fp32", "single": "fp32",
    "bf16": "bf16", "bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16", "half": "fp16",
    "fp64": "fp64", "float64": "fp64", "double": "fp64",
}  # fmt: skip


def get_format(dtype: object) -> FloatFormat:
    """The :class:`FloatFormat` of a dtype name, ``torch.dtype`` or ``numpy.dtype``.

    Raises:
        ValueError: for any other dtype (int8, fp8 variants, complex, ...), listing the supported names.
    """
    if isinstance(dtype, FloatFormat):
        return dtype
    name = str(dtype).lower().replace("torch.", "").strip()
    if name not in _ALIASES:
        raise ValueError(
            f"dtype must be one of fp32/float32, bf16/bfloat16, fp16/float16, fp64/float64 "
            f"(a name, torch.dtype or numpy dtype), got {dtype!r}"
        )
    return FORMATS[_ALIASES[name]]


def _check_radius(r: object) -> float:
    try:
        value = float(r)
    except (TypeError, ValueError):
        raise ValueError(f"r must be a real number ≥ 0, got {r!r}") from None
    if math.isnan(value) or value < 0:
        raise ValueError(f"r must be a real number ≥ 0, got {r!r}")
    return value


def count_nonnegative(r: float, dtype: object) -> int:
    """K(r): the number of representable values x of ``dtype`` with 0 ≤ x ≤ r (zero included once).

    Args:
        r: a bound ≥ 0 (a Python float, read exactly; +inf allowed).
        dtype: see :func:`get_format`.

    Returns:
        An exact Python int (the closed form of the module docstring).

    Raises:
        ValueError: r negative or NaN, or an unsupported dtype.
    """
    fmt = get_format(dtype)
    r = _check_radius(r)
    M = fmt.mantissa_bits
    if r >= fmt.max_finite:
        return fmt.n_nonnegative_finite
    if r < fmt.smallest_normal:  # zero and the subnormals k·2^(e_min − M), k = 0 … 2^M − 1
        return math.floor(r / fmt.smallest_subnormal) + 1
    mant, exp = math.frexp(r)  # r = mant·2^exp, mant in [0.5, 1): r = (2·mant)·2^(exp − 1)
    e = exp - 1
    frac = 2.0 * mant - 1.0  # f in [0, 1), exact
    return (e + fmt.bias) * 2**M + math.floor(frac * 2**M) + 1


def count_in_interval(r: float, dtype: object) -> int:
    """N(r): the number of distinct representable values x of ``dtype`` with |x| ≤ r (±0 counted once).

    Raises:
        ValueError: r negative or NaN, or an unsupported dtype.
    """
    return 2 * count_nonnegative(r, dtype) - 1


def log_count_box(radii, dtype: object) -> float:
    """ln of the number of representable vectors in the box Π_i [−r_i, r_i]: Σ_i ln N(r_i).

    Args:
        radii: (d,) per-coordinate half-widths r_i ≥ 0 (e.g. the per-coordinate max |h_i| of sampled
            last-layer embeddings, or one radius repeated d times for a cube).
        dtype: see :func:`get_format`.

    Raises:
        ValueError: empty, negative or NaN radii, or an unsupported dtype.
    """
    radii = np.atleast_1d(np.asarray(radii, dtype=np.float64))
    if radii.ndim != 1 or radii.size == 0:
        raise ValueError(f"radii must be a non-empty 1-D array of half-widths, got shape {radii.shape}")
    return float(sum(math.log(count_in_interval(float(ri), dtype)) for ri in radii))


def spacing(x: float, dtype: object) -> float:
    """The gap from |x| to the next larger representable value of ``dtype`` (the local grid step, ulp).

    2^(e − M) for a normal |x| in [2^e, 2^(e+1)), 2^(e_min − M) in the subnormal range.

    Raises:
        ValueError: x not finite or beyond the largest finite value, or an unsupported dtype.
    """
    fmt = get_format(dtype)
    try:
        a = abs(float(x))
    except (TypeError, ValueError):
        raise ValueError(f"x must be a real number, got {x!r}") from None
    if not math.isfinite(a) or a > fmt.max_finite:
        raise ValueError(f"x must be finite and at most {fmt.max_finite} in {fmt.name}, got {x!r}")
    if a < fmt.smallest_normal:
        return fmt.smallest_subnormal
    return 2.0 ** (math.frexp(a)[1] - 1 - fmt.mantissa_bits)


def equivalent_ratio(r: float, dtype: object) -> float:
    """The 2r/ε of a *uniform* grid with as many points in [−r, r] as ``dtype`` has: N(r) − 1.

    A uniform grid of step ε has 1 + 2r/ε points in [−r, r] (the paper's per-coordinate packing), so
    the uniform ε with the dtype's count is ε = 2r/(N(r) − 1) — far below the dtype's spacing near r,
    because most representable values crowd near zero.
    """
    return float(count_in_interval(r, dtype) - 1)


@dataclass(frozen=True)
class BoxCount:
    """The dtype's bound for one model (see :func:`box_count`).

    Attributes:
        dtype: format name. d: width. d_vocab: |V|.
        log_count: Σ_i ln N(r_i), ln of the representable vectors in the box (per prompt vector).
        slope: C_fp = log_count / ln|V| (tokens per prompt vector).
        mean_log_per_coordinate: log_count / d (compare ln(1 + 2r/ε) of a uniform grid).
        equivalent_ratio: exp(mean_log_per_coordinate) − 1: the 2r/ε of the uniform grid with the same count.
    """

    dtype: str
    d: int
    d_vocab: int
    log_count: float
    slope: float
    mean_log_per_coordinate: float
    equivalent_ratio: float

    def n_star(self, m: int) -> float:
        """n* = C_fp·m: past this length some sequence is inaccessible with m prompt vectors."""
        return self.slope * check_int("m", m, minimum=1)


def box_count(radii, dtype: object, d_vocab: int) -> BoxCount:
    """The exact representable-vector count of the box Π_i [−r_i, r_i] in ``dtype`` and its slope.

    Args:
        radii: (d,) half-widths r_i > 0 of the box (same units as the embeddings).
        dtype: see :func:`get_format`.
        d_vocab: |V| ≥ 2.

    Raises:
        ValueError: bad radii, dtype or vocabulary size.
    """
    d_vocab = check_int("d_vocab", d_vocab, minimum=2)
    radii = np.atleast_1d(np.asarray(radii, dtype=np.float64))
    log_count = log_count_box(radii, dtype)
    per = log_count / radii.size
    return BoxCount(get_format(dtype).name, int(radii.size), d_vocab, log_count,
                    log_count / math.log(d_vocab), per, math.expm1(per))  # fmt: skip


def whole_range_count(d: int, dtype: object, d_vocab: int) -> BoxCount:
    """The count over the dtype's whole finite range in d dimensions: the bound with no ε and no assumed box.

    A prompt vector whose coordinates are bounded by nothing but the dtype itself is one of N(max finite)^d
    representable vectors, so C_dtype = d·ln N(max finite)/ln|V|: the input-space count of chapter 7's
    proposition, which assumes neither an ε nor a support radius. A box taken from the last-layer states h
    (:func:`box_count` with their radii) is the paper's geometry instead, a modelling step, not this bound.

    Example:
        >>> round(whole_range_count(768, "fp16", 50304).slope, 1)   # Pythia-160M's d and |V|
        784.5

    Raises:
        ValueError: d < 1, an unsupported dtype or a bad vocabulary size.
    """
    d = check_int("d", d, minimum=1)
    return box_count([get_format(dtype).max_finite] * d, dtype, d_vocab)
