"""Copying cliffs: where exact-match copying falls from 1 to 0, as a step or as a resolved fall.

:func:`cliff_data` finds the last length copied (nearly) always and the first copied never; a sigmoid is
fitted only where the fall has intermediate rates, and a step is reported as a step with its bracket.
:func:`mean_field_cliff_log10` is the length Cor 4.10 puts the cliff at, in log10 tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from accessibility_lib.ground.checks import check_int


def mean_field_cliff_log10(d: int, r: float, eps: float, alphabet_size: int) -> float:
    """log10 of the length n* beyond which Cor 4.10 forces the accessible fraction below 1.

    The mean-field bound (Thm 4.9, prompts of any length) gives ln #accessible ≤ e^{L} with
    L = :func:`~accessibility_lib.theory.bounds.mean_field_loglog_count` (d, r, ε); the fraction of the |V|^n
    strings of length n that any prompt can produce is ≤ exp(e^{L} − n·ln|V|), below 1 only for
    n > n* = e^{L}/ln|V|. Returned as log10 n* = (L − ln ln|V|)/ln 10 because n* overflows a float.

    Raises:
        ValueError: as the bound (d < 1, r ≤ 0, ε ≤ 0) and on alphabet_size < 2.
    """
    from accessibility_lib.theory.bounds import mean_field_loglog_count

    check_int("alphabet_size", alphabet_size, minimum=2)
    return (mean_field_loglog_count(d, r, eps) - math.log(math.log(alphabet_size))) / math.log(10)


@dataclass(frozen=True)
class CliffData:
    """What exact-match rates against length pin down about the cliff, before any curve is fitted.

    Attributes:
        lengths, rates: the data, sorted by length (symbols; fractions in [0, 1]).
        n_intermediate: how many tested lengths *in the fall* (strictly between ``last_full`` and
            ``first_zero``) have a rate strictly between 0 and 1: only these constrain the sigmoid.
        is_step: a length at 1 and a length at 0 with no intermediate rate between them, and every
            shorter length at a rate of at least :data:`NEAR_FULL`: the data are a step function of the
            length (apart from a few sporadic misses below the cliff, ``n_misses_below``).
        last_full: the longest tested length with rate 1 below ``first_zero`` (None if none).
        first_zero: the shortest tested length from which every rate is 0 (None if the longest
            length still copies a string).
        n_strings: strings per length behind each rate (None if unknown).
        n_misses_below: tested lengths shorter than ``last_full`` with a rate below 1.
    """

    lengths: np.ndarray
    rates: np.ndarray
    n_intermediate: int
    is_step: bool
    last_full: int | None
    first_zero: int | None
    n_strings: int | None = None
    n_misses_below: int = 0

    def _in_fall(self) -> np.ndarray:
        return _fall_mask(self.lengths, self.last_full, self.first_zero)

    def describe(self) -> str:
        """One sentence: what the data do and do not pin down (in symbols)."""
        per = f" ({self.n_strings} strings per length)" if self.n_strings else ""
        if self.is_step:
            below = self.rates[self.lengths < self.last_full]
            misses = (
                f" (apart from sporadic misses at {self.n_misses_below} shorter length"
                f"{'s' if self.n_misses_below > 1 else ''}, rates ≥ {below.min():.2f})"
                if self.n_misses_below
                else ""
            )
            return (
                f"a step: the held-out strings copied exactly up to n = {self.last_full}{misses}, none from "
                f"n = {self.first_zero} on{per}. The data pin the cliff between {self.last_full} and "
                f"{self.first_zero} symbols; they do not pin where inside that gap it lies, nor how steep it is "
                "(any steep enough sigmoid fits them exactly, so its R² is 1 by construction)"
            )
        if self.n_intermediate == 0:
            if np.all(self.rates == 1):
                return (
                    f"every string copied at every tested length{per}: the cliff lies beyond n = {self.lengths.max()}"
                )
            if np.all(self.rates == 0):
                return f"no string copied at any tested length{per}: the cliff lies below n = {self.lengths.min()}"
            return (
                f"no intermediate rate where the rates fall to 0, but rates below {NEAR_FULL} at shorter lengths"
                f"{per}: the data are not one clean cliff"
            )
        mid = self.lengths[self._in_fall() & (self.rates > 0) & (self.rates < 1)]
        where = f"n = {mid.min()}" if mid.size == 1 else f"n = {mid.min()} to {mid.max()}"
        return (
            f"{self.n_intermediate} tested length{'s' if self.n_intermediate > 1 else ''} ({where}) with "
            f"{'an intermediate rate' if self.n_intermediate == 1 else 'intermediate rates'}{per}: the sigmoid's "
            "position and steepness are both constrained by data"
        )


def cliff_data(lengths, rates, n_strings=None) -> CliffData:
    """Classify exact-match rates against length (:class:`CliffData`): a step, or a resolved fall.

    Args:
        lengths: (L,) tested string lengths (symbols), distinct.
        rates: (L,) exact-match fractions in [0, 1].
        n_strings: strings per length (int), or None.

    Raises:
        ValueError: mismatched or empty arrays, repeated lengths, rates outside [0, 1].
    """
    n = np.asarray(lengths)
    p = np.asarray(rates, dtype=np.float64)
    if n.ndim != 1 or n.shape != p.shape or n.size == 0:
        raise ValueError(f"lengths and rates must be non-empty 1-D arrays of one shape, got {n.shape} and {p.shape}")
    if np.unique(n).size != n.size:
        raise ValueError("lengths must be distinct")
    if np.any(~np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
        raise ValueError(f"rates must be fractions in [0, 1], got values in [{p.min()}, {p.max()}]")
    order = np.argsort(n, kind="stable")
    n, p = n[order], p[order]
    nonzero = np.nonzero(p > 0)[0]
    if nonzero.size == 0:
        first_zero = int(n[0])
    else:
        first_zero = int(n[nonzero[-1] + 1]) if nonzero[-1] + 1 < n.size else None
    full = n[(p == 1) & ((n < first_zero) if first_zero is not None else True)]
    last_full = int(full.max()) if full.size else None
    fall = _fall_mask(n, last_full, first_zero)
    intermediate = int(np.sum(fall & (p > 0) & (p < 1)))
    below = p[n < last_full] if last_full is not None else p[:0]
    step = last_full is not None and first_zero is not None and intermediate == 0 and bool(np.all(below >= NEAR_FULL))
    return CliffData(
        n,
        p,
        intermediate,
        bool(step),
        last_full,
        first_zero,
        None if n_strings is None else check_int("n_strings", n_strings, minimum=1),
        int(np.sum(below < 1)),
    )


#: The lowest rate a length below the cliff may have and still count as a sporadic miss of a step.
NEAR_FULL = 0.9


def _fall_mask(n: np.ndarray, last_full: int | None, first_zero: int | None) -> np.ndarray:
    """Lengths strictly between ``last_full`` and ``first_zero`` (open ends when None)."""
    lo = n > last_full if last_full is not None else np.ones(n.shape, bool)
    hi = n < first_zero if first_zero is not None else np.ones(n.shape, bool)
    return lo & hi


def cliff_interval(fit) -> tuple[float, float]:
    """The range of n50 the data allow, from a :class:`~accessibility_lib.experiments.fitting.SigmoidFit`.

    A fitted crossing gives its interval (its point when no interval was computed); a one-sided result
    ``n50 ≥ b`` gives [b, ∞), ``n50 ≤ b`` gives (−∞, b]; no crossing gives (−∞, ∞).
    """
    if fit.ok:
        lo, hi = fit.ci
        return (float(lo), float(hi)) if np.isfinite(lo) and np.isfinite(hi) else (fit.n50, fit.n50)
    if fit.bound is not None:
        return (fit.bound[1], math.inf) if fit.bound[0] == ">=" else (-math.inf, fit.bound[1])
    return (-math.inf, math.inf)


def _cliff_text(fit, cliff: CliffData | None) -> str:
    if cliff is not None and cliff.is_step:
        return f"a step between {cliff.last_full} and {cliff.first_zero}"
    return f"n50 = {fit.describe(1)}" if fit.ok else fit.describe(1)


def compare_cliffs(fit_a, fit_b, label_a: str, label_b: str, cliff_a=None, cliff_b=None) -> str:
    """Whether the cliff moved between two settings, said only as far as the data show it.

    Compares the ranges of :func:`cliff_interval`: disjoint ranges are a move (with its direction);
    overlapping ranges are "no move the data can show", and two identical steps are said to be identical
    at the resolution of the tested lengths — never "from 8.50 to 8.50".

    Args:
        fit_a, fit_b: :class:`~accessibility_lib.experiments.fitting.SigmoidFit` of the two settings.
        label_a, label_b: their names in the sentence.
        cliff_a, cliff_b: their :class:`CliffData` (optional; steps are then named as such).
    """
    (a0, a1), (b0, b1) = cliff_interval(fit_a), cliff_interval(fit_b)
    ta, tb = _cliff_text(fit_a, cliff_a), _cliff_text(fit_b, cliff_b)
    if cliff_a is not None and cliff_b is not None and cliff_a.is_step and cliff_b.is_step:
        if (cliff_a.last_full, cliff_a.first_zero) == (cliff_b.last_full, cliff_b.first_zero):
            return (
                f"the same step between {cliff_a.last_full} and {cliff_a.first_zero} symbols in both ({label_a}; "
                f"{label_b}): identical at the resolution of the tested lengths; a move smaller than their "
                "spacing cannot be seen"
            )
    if a1 < b0 or b1 < a0:
        direction = "out" if b0 > a1 else "in"
        return f"the cliff moved {direction}: {ta} ({label_a}), {tb} ({label_b}); the ranges do not overlap"
    if not (math.isfinite(max(a0, b0)) or math.isfinite(min(a1, b1))):
        return f"no comparison: {ta} ({label_a}), {tb} ({label_b})"
    return f"no move the data can show: {ta} ({label_a}), {tb} ({label_b}); the ranges overlap"
