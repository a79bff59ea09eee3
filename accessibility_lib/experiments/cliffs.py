"""Copying cliffs: where exact-match copying falls from 1 to 0, as a step or as a resolved fall.

:func:`cliff_data` finds the last length copied (nearly) always and the first copied never;
:func:`locate_cliff` fits a sigmoid only where the fall has intermediate rates and reports a step as a step
with its bracket; :func:`compare_cliffs` says whether two cliffs moved, as structured data (the chapter
phrases it). :func:`mean_field_cliff_log10` is the length Cor 4.10 puts the cliff at, in log10 symbols, and
:func:`mean_field_ratio_for_cliff` the precision at which it would sit at a measured cliff.
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

    @property
    def rebounds(self) -> np.ndarray:
        """Tested lengths copied at least once after a shorter tested length copied never (a non-monotone curve:
        the fall's fitted logistic cannot follow it), sorted; empty for a monotone curve."""
        after_zero = np.concatenate([[False], np.cumsum(self.rates == 0)[:-1] > 0])
        return self.lengths[after_zero & (self.rates > 0)]

    @property
    def n_informative(self) -> int:
        """Tested lengths that pin a fall's position and steepness: a rate in (0, :data:`NEAR_FULL`) after the last
        length at or above it and before the curve first reaches 0 (a near-full rate is the plateau, a rate after
        a 0 a rebound). A logistic fitted through one of them fits almost exactly, as through a step."""
        zero = np.nonzero(self.rates == 0)[0]
        head = self.rates[: zero[0]] if zero.size else self.rates
        full = np.nonzero(head >= NEAR_FULL)[0]
        tail = head[full[-1] + 1 :] if full.size else head
        return int(np.sum((tail > 0) & (tail < NEAR_FULL)))

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
                "(any steep enough sigmoid fits the fall exactly, so its R² is 1 by construction"
                + (
                    " — just below 1 here, from the misses at shorter lengths, which say nothing about the fall)"
                    if self.n_misses_below
                    else ")"
                )
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


@dataclass(frozen=True)
class CliffEstimate:
    """Where a copying cliff is, as far as the data say (:func:`locate_cliff`).

    Attributes:
        kind: ``"step"`` (rates 1 then 0 with no tested length in between: only a bracket), ``"fall"`` (a fall
            through intermediate rates, with a fitted logistic), ``"beyond"`` (every tested length copied at
            least half of the time), ``"below"`` (none), or ``"irregular"`` (no clean cliff, no fit).
        low, high: the range of the cliff position the data allow (symbols): a step's bracket
            [last length at 1, first length at 0]; a fall's 95 % profile-likelihood interval on n50 (with one
            length inside the fall, the model-free :func:`crossing_bracket`); [longest
            tested, ∞) for ``"beyond"``, (−∞, shortest tested] for ``"below"``; for ``"irregular"`` the lengths
            between the last at 1 and the first from which all are 0 (±∞ where missing).
        n50, steepness, r_squared: the fitted logistic's 50 % length (symbols), slope k (per symbol) and R², for
            a ``"fall"`` only (None otherwise: a step has no steepness, and a sigmoid fitted to it has R² = 1 by
            construction).
        fit: the :class:`~accessibility_lib.experiments.fitting.SigmoidFit` (fall only) or None.
        data: the :class:`CliffData` behind it.
    """

    kind: str
    low: float
    high: float
    n50: float | None
    steepness: float | None
    r_squared: float | None
    fit: object | None
    data: CliffData

    @property
    def centre(self) -> float:
        """A point to plot: n50 for a fall, the middle of a finite range, else its finite end (NaN if none)."""
        if self.n50 is not None:
            return self.n50
        finite = [v for v in (self.low, self.high) if math.isfinite(v)]
        return sum(finite) / len(finite) if finite else math.nan


def locate_cliff(lengths, exact, n_strings: int) -> CliffEstimate:
    """Locate the copying cliff in exact-match counts: a step's bracket, or a logistic fitted to a fall.

    A sigmoid is fitted (binomial maximum likelihood, :func:`~accessibility_lib.experiments.fitting.fit_sigmoid`)
    only when the fall has at least one tested length with an intermediate rate: on a step it would only
    restate the bracket with an arbitrary steepness. It is fitted to the fall's own lengths
    (:func:`fall_window`): a miss on the plateau far below the cliff (49 of 50 at n = 3) would otherwise hold the
    logistic's steepness down and move n50 by about k·(n50 − n) nats' worth, and a rebound after a length copied
    never would drag n50 outwards. Where one length only lies inside the fall, the range is the model-free
    :func:`crossing_bracket`, not the logistic's interval. A step is a fall from a rate of at least :data:`NEAR_FULL` at
    the last tested length before the first length at 0 straight to 0, with every shorter length above ½ (so
    the rate crosses ½ only in that gap): its bracket is [that last length, the first length at 0]. Misses at
    shorter lengths (say 44 of 50 at n = 2) say nothing about where in the gap the cliff lies, so they do not
    turn a step into a fall whose fitted position inside the gap would rest on the sigmoid's shape alone.

    Args:
        lengths: (L,) tested string lengths (symbols), distinct.
        exact: (L,) numbers of strings copied exactly, each in [0, n_strings].
        n_strings: strings per length.

    Raises:
        ValueError: as :func:`cliff_data`, and on counts outside [0, n_strings].
    """
    from accessibility_lib.experiments.fitting import fit_sigmoid

    n_strings = check_int("n_strings", n_strings, minimum=1)
    k = np.asarray(exact, dtype=np.float64)
    if np.any(k < 0) or np.any(k > n_strings):
        raise ValueError(f"exact counts must lie in [0, n_strings = {n_strings}], got [{k.min()}, {k.max()}]")
    data = cliff_data(lengths, k / n_strings, n_strings)
    inf = math.inf
    if data.first_zero is not None and data.first_zero > data.lengths.min():
        before = data.lengths < data.first_zero
        # from ≥ 90 % straight to 0 (no tested length in the fall), every shorter length above ½ (one crossing)
        if data.rates[before][-1] >= NEAR_FULL and np.all(data.rates[before] > 0.5):
            lo = float(data.lengths[before].max())
            return CliffEstimate("step", lo, float(data.first_zero), None, None, None, None, data)
    if data.n_intermediate > 0:
        win = fall_window(data)
        fit = fit_sigmoid(data.lengths[win], data.rates[win], n_trials=np.full(int(win.sum()), n_strings))
        if fit.ok:
            lo, hi = fit.ci if np.all(np.isfinite(fit.ci)) else (fit.n50, fit.n50)
            if data.n_informative <= 1:  # one length inside: the logistic's interval would lean on its shape
                lo, hi = crossing_bracket(data, n_strings)
            return CliffEstimate("fall", float(lo), float(hi), float(fit.n50), float(fit.steepness),
                                 float(fit.r_squared), fit, data)  # fmt: skip
    if np.all(data.rates >= 0.5):
        return CliffEstimate("beyond", float(data.lengths.max()), inf, None, None, None, None, data)
    if np.all(data.rates <= 0.5):
        return CliffEstimate("below", -inf, float(data.lengths.min()), None, None, None, None, data)
    lo = float(data.last_full) if data.last_full is not None else -inf
    hi = float(data.first_zero) if data.first_zero is not None else inf
    return CliffEstimate("irregular", lo, hi, None, None, None, None, data)


def fall_window(data: CliffData) -> np.ndarray:
    """The lengths a fall's logistic is fitted to, as a (L,) mask over ``data.lengths``: from the last length
    at or above :data:`NEAR_FULL` before the first rate below ½, through the first length at 0 after that
    rate (every length when no rate is below ½; to the longest when none after it is 0)."""
    p = data.rates
    mask = np.zeros(p.size, bool)
    below = np.nonzero(p < 0.5)[0]
    if not below.size:
        mask[:] = True
        return mask
    c = int(below[0])
    full = np.nonzero(p[:c] >= NEAR_FULL)[0]
    zero = np.nonzero(p[c:] == 0)[0]
    mask[(int(full[-1]) if full.size else 0) : (c + int(zero[0]) if zero.size else p.size - 1) + 1] = True
    return mask


def crossing_bracket(data: CliffData, n_strings: int, confidence: float = 0.95) -> tuple[float, float]:
    """Where a monotone fall crosses ½, without a curve: (the longest length of :func:`fall_window` whose rate's
    Wilson interval lies wholly above ½, the shortest longer one whose interval lies wholly below ½), in symbols;
    a window end where no length qualifies.

    >>> d = cliff_data([11, 12, 13, 14, 17], [1.0, 0.98, 0.4, 0.0, 0.26], 50)
    >>> crossing_bracket(d, 50)  # 20 of 50 at n = 13 is [0.28, 0.54]: either side of ½
    (12.0, 14.0)
    """
    from accessibility_lib.experiments.copying import wilson_interval

    win = fall_window(data)
    n, p = data.lengths[win], data.rates[win]
    lo_ci, hi_ci = wilson_interval(np.round(p * n_strings), n_strings, confidence)
    above = n[lo_ci > 0.5]
    low = float(above.max()) if above.size else float(n.min())
    under = n[(hi_ci < 0.5) & (n > low)]
    return low, float(under.min()) if under.size else float(n.max())


@dataclass(frozen=True)
class CliffComparison:
    """Whether a cliff moved between two settings (:func:`compare_cliffs`), said only as far as the data show.

    Attributes:
        moved: ``"out"`` (b's range lies wholly above a's), ``"in"`` (wholly below), or None (the ranges overlap,
            or one is unbounded on both sides).
        same_step: both are steps with the same bracket: identical at the resolution of the tested lengths.
        comparable: both ranges are bounded on at least one side (otherwise nothing can be said).
        a, b: the two :class:`CliffEstimate`.
    """

    moved: str | None
    same_step: bool
    comparable: bool
    a: CliffEstimate
    b: CliffEstimate


def compare_cliffs(a: CliffEstimate, b: CliffEstimate) -> CliffComparison:
    """Compare two cliffs by their ranges (:attr:`CliffEstimate.low`, ``high``): disjoint ranges are a move.

    Two identical steps are reported as ``same_step`` (never "from 8.5 to 8.5"); overlapping ranges as no move
    the data can show (``moved`` None).
    """
    same = a.kind == b.kind == "step" and (a.low, a.high) == (b.low, b.high)
    comparable = all(math.isfinite(c.low) or math.isfinite(c.high) for c in (a, b))
    moved = None
    if comparable and not same:
        if b.low > a.high or (b.low == a.high and b.kind == a.kind == "step" and b.high > a.high):
            moved = "out"
        elif b.high < a.low or (b.high == a.low and b.kind == a.kind == "step" and b.low < a.low):
            moved = "in"
    return CliffComparison(moved, same, comparable, a, b)


def mean_field_ratio_for_cliff(d: int, n: float, alphabet_size: int, q: float = 1) -> float:
    """The 2r/ε at which Cor 4.10's n* (:func:`mean_field_cliff_log10`) equals the length ``n``.

    n* grows with 2r/ε, so this is the coarsest precision at which the mean-field bound would start to bite at
    a measured cliff: a model of width ``d`` must be unable to tell apart measures closer than ε = 2r/(this).
    Solved by bisection on ln(2r/ε) (to 1e-12 relative).

    Args:
        d: embedding width ≥ 1.
        n: a length (symbols), with n·ln|V| > 1.
        alphabet_size: |V| ≥ 2.
        q: the order of the Wasserstein distance, ≥ 1.

    Raises:
        ValueError: d < 1, alphabet_size < 2, or n·ln|V| ≤ 1 (then no positive ratio gives n* = n).
    """
    from accessibility_lib.theory.bounds import mean_field_loglog_count

    check_int("d", d, minimum=1)
    check_int("alphabet_size", alphabet_size, minimum=2)
    target = math.log(n * math.log(alphabet_size)) if n > 0 else -math.inf
    if not target > 0:
        raise ValueError(f"n·ln|V| must exceed 1 for a positive 2r/ε, got n = {n}, |V| = {alphabet_size}")

    def excess(log_x: float) -> float:
        return mean_field_loglog_count(d, math.exp(log_x) / 2, 1.0, q) - target

    lo, hi = -60.0, 60.0
    if excess(lo) > 0:
        return math.exp(lo)
    while excess(hi) < 0:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if excess(mid) < 0 else (lo, mid)
        if hi - lo < 1e-12 * max(1.0, abs(hi)):
            break
    return math.exp((lo + hi) / 2)
