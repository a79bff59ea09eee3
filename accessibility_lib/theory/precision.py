"""The precision ε as an explicit, named convention.

The bounds depend on r and ε only through 2r/ε, and the paper does not state one ε for all models
(see the book's appendix on conventions): its replication code sets ε = r_∞·2^−11 (fp16 unit roundoff times the largest absolute
coordinate r_∞, with r = r_∞, so 2r/ε = 4096), while the ball row of its Table 1 implies 2r/ε ≈ 2^17
for Pythia and other ratios for other models. The book therefore never hides ε: every number is
computed under an :class:`EpsConvention` that is printed beside it.

Example:
    >>> RINF_FP16.eps(r_inf=22.45)          # Pythia-160M's r_∞ = 22.45
    0.0109619140625
    >>> RINF_FP16.ratio(r=22.45, r_inf=22.45)      # 2r/ε
    4096.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from accessibility_lib.ground.checks import check_int, check_positive_real

__all__ = [
    "unit_roundoff",
    "EpsConvention",
    "given",
    "relative",
    "from_dtype",
    "RINF_FP16",
    "L2_FP16",
    "CONVENTIONS",
    "get",
    "PLAIN_NAMES",
    "plain_name",
    "PrintedCheck",
    "check_printed",
    "identify",
]

# unit roundoff u = 2^-p for a p-bit significand (implicit bit included): fp32 p=24, bf16 p=8, fp16 p=11.
_UNIT_ROUNDOFF_BITS = {
    "float32": 24,
    "fp32": 24,
    "bfloat16": 8,
    "bf16": 8,
    "float16": 11,
    "fp16": 11,
    "half": 11,
    "float": 24,
    "float64": 53,
    "fp64": 53,
}


def unit_roundoff(dtype: object) -> float:
    """Unit roundoff of a floating-point format (the relative spacing 2^−p of its p-bit significand).

    Args:
        dtype: ``"fp32"``/``"float32"``, ``"bf16"``/``"bfloat16"``, ``"fp16"``/``"float16"``, ``"fp64"``, or
            a ``torch.dtype``/``numpy.dtype`` of those.

    Returns:
        2^−24 (fp32), 2^−8 (bf16), 2^−11 (fp16), 2^−53 (fp64). Dimensionless.

    Raises:
        ValueError: for any other dtype.
    """
    name = str(dtype).lower().replace("torch.", "")
    if name not in _UNIT_ROUNDOFF_BITS:
        raise ValueError(f"dtype must be one of fp32/float32, bf16/bfloat16, fp16/float16, fp64/float64, got {dtype!r}")
    return 2.0 ** -_UNIT_ROUNDOFF_BITS[name]


@dataclass(frozen=True)
class EpsConvention:
    """How ε is obtained: an absolute value, or a factor times a reference radius.

    Attributes:
        name: short label shown beside every number computed under it.
        description: one sentence for tables and captions.
        absolute: ε itself (same units as the embeddings), or None for a relative convention.
        factor: ε / reference radius for a relative convention (e.g. 2^−11), or None.
        reference: which radius the factor multiplies: ``"r"`` (the radius used in the bound) or
            ``"r_inf"`` (the largest absolute coordinate, as the replication code does).
        radius: which radius the ball B(0, r) of the bound uses: ``"l2"`` (the largest L2 norm of the
            samples: the smallest centred ball that contains them, what Thm 4.5 packs) or ``"r_inf"``
            (the largest absolute coordinate, what the replication code uses; that ball does not
            contain the samples).
    """

    name: str
    description: str
    absolute: float | None = None
    factor: float | None = None
    reference: str = "r"
    radius: str = "l2"

    def ball(self, r_l2: float, r_inf: float) -> tuple[float, float]:
        """(r, ε) of the ball bound under this convention, from the samples' largest L2 norm and L∞ norm.

        Raises:
            ValueError: if a radius is not > 0.
        """
        r_l2 = check_positive_real("r_l2", r_l2)
        r_inf = check_positive_real("r_inf", r_inf)
        r = r_l2 if self.radius == "l2" else r_inf
        return r, self.eps(r=r, r_inf=r_inf)

    @property
    def config_only(self) -> bool:
        """Whether 2r/ε is a constant, so that a bound needs only d and |V| (the capacity card)."""
        if self.absolute is not None:
            return False
        return self.reference == "r" or (self.reference == "r_inf" and self.radius == "r_inf")

    def eps(self, r: float | None = None, r_inf: float | None = None) -> float:
        """ε under this convention.

        Args:
            r: the support radius used in the bound (needed when ``reference == "r"``).
            r_inf: the largest absolute coordinate (needed when ``reference == "r_inf"``).

        Raises:
            ValueError: if the radius the convention needs is missing or not > 0.
        """
        if self.absolute is not None:
            return self.absolute
        radius = r if self.reference == "r" else r_inf
        if radius is None:
            raise ValueError(f"the ε convention {self.name!r} needs {self.reference} (a radius > 0), got None")
        return self.factor * check_positive_real(self.reference, radius)

    def ratio(self, r: float, r_inf: float | None = None) -> float:
        """2r/ε under this convention (the only way r and ε enter the bounds)."""
        r = check_positive_real("r", r)
        return 2.0 * r / self.eps(r=r, r_inf=r_inf)


def given(eps: float) -> EpsConvention:
    """ε given directly (same units as the embeddings).

    Raises:
        ValueError: if ``eps`` is not a finite number > 0.
    """
    eps = check_positive_real("eps", eps)
    return EpsConvention(name=f"ε = {eps:.4g}", description=f"ε given directly as {eps:.6g}", absolute=eps)


def relative(k: int, reference: str = "r") -> EpsConvention:
    """ε = radius·2^−k, so 2r/ε = 2^{k+1} when the reference is r itself.

    Raises:
        ValueError: if ``k`` is not an integer in [0, 1000] or ``reference`` is not ``"r"``/``"r_inf"``.
    """
    k = check_int("k", k, minimum=0, maximum=1000)
    if reference not in ("r", "r_inf"):
        raise ValueError(f"reference must be 'r' or 'r_inf', got {reference!r}")
    sym = "r" if reference == "r" else "r∞"
    return EpsConvention(
        name=f"ε = {sym}·2^-{k}",
        description=f"ε is the reference radius {sym} times 2^-{k}",
        factor=2.0**-k,
        reference=reference,
    )


def from_dtype(dtype: object, reference: str = "r") -> EpsConvention:
    """ε = radius × unit roundoff of ``dtype`` (fp32, bf16 or fp16).

    Raises:
        ValueError: for an unknown dtype or reference.
    """
    u = unit_roundoff(dtype)
    k = round(-math.log2(u))
    conv = relative(k, reference)
    name = str(dtype).replace("torch.", "")
    sym = "r" if reference == "r" else "r∞"
    return EpsConvention(
        name=f"ε = {sym}·u({name})",
        description=f"ε is {sym} times the unit roundoff of {name} (2^-{k})",
        factor=conv.factor,
        reference=reference,
    )


#: ``rinf_fp16`` — the authors' code: ε = r_∞·2^−11 (fp16 unit roundoff × largest absolute coordinate),
#: used with r = r_∞, so 2r/ε = 4096 and C = d·ln 4097/ln|V| whatever the embeddings (their bound notebook).
RINF_FP16 = EpsConvention(
    name="rinf_fp16 (r = r∞, ε = r∞·2^-11)",
    description="the authors' code: ε = r∞·2^-11 (fp16 unit roundoff × r∞), with r = r∞, so 2r/ε = 4096",
    factor=2.0**-11,
    reference="r_inf",
    radius="r_inf",
)

#: ``l2_fp16`` — the same precision with the radius fixed: ε = r∞·2^−11 but r = the largest L2 norm, the
#: smallest centred ball that contains the samples (the ball of radius r∞ does not: L2 norms exceed r∞).
L2_FP16 = EpsConvention(
    name="l2_fp16 (r = max ‖h‖₂, ε = r∞·2^-11)",
    description="ε = r∞·2^-11 as in the authors' code, with r = the largest L2 norm (a ball that contains the samples)",
    factor=2.0**-11,
    reference="r_inf",
    radius="l2",
)

#: Named conventions offered by the chapters' ``eps_convention`` parameter. Each name says what it is:
#: ``rinf_fp16``/``l2_fp16`` (radius r∞ or max ‖h‖₂, ε = r∞·2^-11), ``u_<dtype>`` (ε = r × the dtype's unit
#: roundoff), ``table1_pythia`` (2r/ε = 2^17, the ratio behind Table 1's ball row for Pythia-160M,
#: and for Pythia-1B with the list's slope; the figures' slope implies 2^15.5 for Pythia-1B).
CONVENTIONS: dict[str, EpsConvention] = {
    "rinf_fp16": RINF_FP16,
    "l2_fp16": L2_FP16,
    "u_fp16": from_dtype("fp16"),  # ε = r·u(fp16), r = max ‖h‖₂
    "u_bf16": from_dtype("bf16"),
    "u_fp32": from_dtype("fp32"),
    "table1_pythia": relative(16),  # 2r/ε = 2^17: Table 1's ball row for Pythia-160M (Pythia-1B: with the list's slope)
}


#: each convention in plain words, for prose and an explorer's status line (the keys are code names)
PLAIN_NAMES: dict[str, str] = {
    "rinf_fp16": "the replication code's ε (r = r∞, ε = r∞·2⁻¹¹)",
    "l2_fp16": "the replication code's ε with r = the largest L2 norm (ε = r∞·2⁻¹¹)",
    "u_fp16": "ε = r·u(fp16)",
    "u_bf16": "ε = r·u(bf16)",
    "u_fp32": "ε = r·u(fp32)",
    "table1_pythia": "ε = r·2^-16",
}


def plain_name(key: str) -> str:
    """The convention ``key`` in plain words (:data:`PLAIN_NAMES`, else the convention's ``name``).

    Raises:
        ValueError: listing the known names when ``key`` is unknown.
    """
    return PLAIN_NAMES.get(key, get(key).name)


def get(name: str) -> EpsConvention:
    """The named convention ``name`` (one of :data:`CONVENTIONS`).

    Raises:
        ValueError: listing the known names when ``name`` is unknown.
    """
    if name not in CONVENTIONS:
        raise ValueError(f"eps_convention must be one of {sorted(CONVENTIONS)}, got {name!r}")
    return CONVENTIONS[name]


def _printed(name: str, value: object) -> tuple[float, float]:
    """(value, half a unit of its last printed digit) of a printed number; a float is taken as exact (1e-9)."""
    if isinstance(value, str):
        text = value.strip().replace(",", "").replace("−", "-").replace("\u2009", "")
        try:
            x = float(text)
        except ValueError:
            raise ValueError(f"{name} must be a printed number, got {value!r}") from None
        mant = text.lower().split("e")[0]
        exp = int(text.lower().split("e")[1]) if "e" in text.lower() else 0
        decimals = len(mant.split(".")[1]) if "." in mant else 0
        return x, 0.5 * 10.0 ** (exp - decimals)
    x = check_positive_real(name, value)
    return x, 1e-9 * abs(x)


@dataclass(frozen=True)
class PrintedCheck:
    """Whether a printed (convention name, r, ε) matches that convention (:func:`check_printed`).

    Attributes:
        name: the convention key (a key of :data:`CONVENTIONS`).
        ok: True when every printed value agrees with the convention within its printed precision.
        problems: one sentence per disagreement ("" free when ok).
        expected: (r, ε, 2r/ε) the convention gives for the radii passed (None where a radius was missing).
        matches: the keys of :data:`CONVENTIONS` whose values agree with what was printed (what it really is).
    """

    name: str
    ok: bool
    problems: tuple[str, ...]
    expected: tuple[float | None, float | None, float | None]
    matches: tuple[str, ...]


def _eps_formula(c: EpsConvention) -> str:
    """ε of a convention as a formula, e.g. "r∞·2^-11"."""
    if c.absolute is not None:
        return f"the given ε = {c.absolute:g}"
    return f"{'r∞' if c.reference == 'r_inf' else 'r'}·2^{round(math.log2(c.factor))}"


def _agree(printed: tuple[float, float], want: float, rel_tol: float) -> bool:
    value, half_unit = printed
    return abs(value - want) <= half_unit + rel_tol * abs(want)


def check_printed(
    name: str,
    r: object = None,
    eps: object = None,
    *,
    ratio: object = None,
    r_l2: object = None,
    r_inf: object = None,
    rel_tol: float = 1e-6,
) -> PrintedCheck:
    """Does a printed (name, r, ε) — or (name, 2r/ε) — belong to the convention it is printed under?

    A chapter that prints "``rinf_fp16``" beside r = max ‖h‖₂ and ε = r∞·2^-11 (the ``l2_fp16`` pair) is
    wrong even though every number was computed correctly: this says so. Printed values are read with
    their printed precision (a string ``"0.01096"`` agrees with anything within half a unit of its last
    digit; a float is taken as exact up to ``rel_tol``).

    What is checked, from what is given:

    * r and ε (or 2r/ε) with both radii: r is the convention's radius (r∞ or the largest L2 norm) and ε
      is its ε (r∞·2^-11, r·u, r·2^-16), hence 2r/ε;
    * without the radii, for the conventions whose 2r/ε is a constant (all but ``l2_fp16``): 2r/ε (from
      ``ratio`` or from r and ε) is that constant (4096, 2/u, 2^17); for ``l2_fp16``: 2r/ε = 4096·r₂/r∞
      ≥ 4096 (r₂ ≥ r∞ for any vector), and equal to 4096·r/r∞ when ``r_inf`` is given.

    Args:
        name: the printed convention key, one of :data:`CONVENTIONS`.
        r, eps: the printed radius and precision (same units as the embeddings), as numbers or strings.
        ratio: the printed 2r/ε (dimensionless), when a table prints it.
        r_l2, r_inf: the model's radii the chapter measured: the largest L2 norm and the largest absolute
            coordinate of its sampled embeddings (numbers or printed strings).
        rel_tol: relative tolerance on top of the printed precision.

    Returns:
        A :class:`PrintedCheck`; ``matches`` names the conventions the printed values do fit.

    Raises:
        ValueError: unknown ``name``; nothing to check (neither r and ε nor ratio); a value not a number > 0.
    """
    conv = get(name)
    if ratio is None and (r is None or eps is None):
        raise ValueError(f"check_printed({name!r}) needs r and eps, or ratio (2r/ε), to check anything")
    pr = None if r is None else _printed("r", r)
    pe = None if eps is None else _printed("eps", eps)
    problems_pair: list[str] = []
    if ratio is not None:
        pq = _printed("ratio", ratio)
        if pr is not None and pe is not None:  # all three printed: they must agree with each other
            q = 2 * pr[0] / pe[0]
            if not _agree(pq, q, rel_tol + pr[1] / pr[0] + pe[1] / pe[0]):
                problems_pair.append(f"2r/ε = {pq[0]:g} is not 2·r/ε = {q:g} of the printed r and ε")
    else:  # 2r/ε from the printed pair, with the printed precision carried over (first order)
        q = 2 * pr[0] / pe[0]
        pq = (q, q * (pr[1] / pr[0] + pe[1] / pe[0]))
    rl = None if r_l2 is None else _printed("r_l2", r_l2)
    ri = None if r_inf is None else _printed("r_inf", r_inf)

    def verdict(c: EpsConvention) -> tuple[list[str], tuple]:
        probs: list[str] = []
        want_r = want_e = want_q = None
        tol_q = rel_tol
        if rl is not None and ri is not None:
            want_r, want_e = c.ball(rl[0], ri[0])
            want_q = 2 * want_r / want_e
            u_r = (rl if c.radius == "l2" else ri)[1] / want_r  # the printed radii's own rounding, carried over
            u_e = (
                0.0
                if c.absolute is not None
                else ((rl if c.reference == "r" else ri)[1] / (rl if c.reference == "r" else ri)[0])
            )
            if pr is not None and not _agree(pr, want_r, rel_tol + u_r):
                which = "r∞" if c.radius == "r_inf" else "the largest L2 norm"
                probs.append(f"r = {pr[0]:g} is not {which} ({want_r:g})")
            if pe is not None and not _agree(pe, want_e, rel_tol + u_e):
                probs.append(f"ε = {pe[0]:g} is not {_eps_formula(c)} ({want_e:g})")
            tol_q = rel_tol + u_r + u_e
        elif c.config_only:
            want_q = c.ratio(1.0, 1.0)
        elif ri is not None and pr is not None:  # l2_fp16 with r∞ known: ε = r∞·2^-11, so 2r/ε = 4096·r/r∞
            want_e = c.eps(r=pr[0], r_inf=ri[0])
            want_q = 2 * pr[0] / want_e
            tol_q = rel_tol + ri[1] / ri[0] + pr[1] / pr[0]
            if pe is not None and not _agree(pe, want_e, rel_tol + ri[1] / ri[0]):
                probs.append(f"ε = {pe[0]:g} is not r∞·2^-11 ({want_e:g})")
        elif pq[0] + pq[1] < 2.0 / c.factor * (1 - rel_tol):  # l2_fp16 alone: 2r/ε = 4096·r₂/r∞ ≥ 4096
            probs.append(f"2r/ε = {pq[0]:g} is below {2.0 / c.factor:g}, impossible with r = max L2 and ε = r∞·2^-11")
        if want_q is not None and not _agree(pq, want_q, tol_q):
            probs.append(f"2r/ε = {pq[0]:g}, the convention gives {want_q:g}")
        return probs, (want_r, want_e, want_q)

    problems, expected = verdict(conv)
    problems = problems_pair + problems
    matches = tuple(k for k, c in CONVENTIONS.items() if not verdict(c)[0])
    return PrintedCheck(name, not problems, tuple(problems), expected, matches)


def identify(r: object, eps: object, *, r_l2: object, r_inf: object, rel_tol: float = 1e-6) -> tuple[str, ...]:
    """The keys of :data:`CONVENTIONS` that a printed (r, ε) belongs to, given the model's radii (may be empty).

    Raises:
        ValueError: as :func:`check_printed`.
    """
    return check_printed("rinf_fp16", r, eps, r_l2=r_l2, r_inf=r_inf, rel_tol=rel_tol).matches
