"""An n50 search that spends its targets near n50: predicted start, sequential sides, full counts at the crossing.

Where the cost of an n50 search goes (chapter 3): a length far above n50 is expensive — every target
fails and runs to the step cap, with the longest inputs — and a length far below is cheap but useless
once its side is clear. The bisection design (:func:`accessibility_lib.experiments.n50_bisect.locate_n50`) doubles from a
fixed start and gives every probe the same number of targets. This design:

1. **starts from a prediction** ``n_pred`` (e.g. the line through the n50s already found at smaller m,
   :func:`predict_n50`) and steps by a factor ``growth`` (not 2) until a length on each side of ½ is seen;
2. **decides each length's side sequentially** (:mod:`accessibility_lib.experiments.sidetest`): targets are added
   a few at a time and stop as soon as the side is settled at level ``alpha`` — 5 of 5 crammed far below
   n50, 0 of 5 far above; a length near n50 stays undecided and keeps every target;
3. **bisects** the bracket the same way until it is at most ``max(1, rel_tol·lo)`` wide;
4. **spends the full target count on the two lengths that pin the crossing** (the closest length on
   each side, or a length whose rate is exactly ½ with every target), then fits the logistic to *every* outcome seen (:func:`accessibility_lib.experiments.fitting.fit_sigmoid`);
5. **closes an open interval**: where the fit's interval is still open at an end (a flat curve whose
   rates stay near ½ over the lengths tried), it tries lengths beyond them on that side.

The outcomes of a length depend only on (n, target index) (the targets and the seeds are fixed), so
lengths already in the result store are free and preferred (``known``), and a killed search resumed
replays the same decisions from the store and ends with the same outcomes.
"""

from __future__ import annotations

import math

import numpy as np

from accessibility_lib.experiments.sidetest import ABOVE, BELOW, side_test
from accessibility_lib.ground.checks import check_int, check_real

__all__ = ["locate_n50_sequential", "predict_n50", "width_reached"]


def predict_n50(m: int, finished: dict[int, float], default_per_m: float) -> float:
    """A starting length for the n50 search at prompt length m, from the n50s already found.

    Args:
        m: the prompt length to search (≥ 1).
        finished: m' -> n50(m') (tokens) of finished searches of the same model, kind and budget;
            non-finite values are ignored.
        default_per_m: tokens per prompt vector to assume when nothing is finished.

    Returns:
        The least-squares line through two or more finished points evaluated at m; with one point
        (m', n'), n'·m/m'; with none, ``default_per_m``·m. Never below 2.

    Raises:
        ValueError: m < 1 or default_per_m ≤ 0.
    """
    m = check_int("m", m, minimum=1)
    default_per_m = check_real("default_per_m", default_per_m, minimum=0.0, min_inclusive=False)
    pts = sorted((int(k), float(v)) for k, v in finished.items() if v is not None and math.isfinite(v) and k != m)
    if len({k for k, _ in pts}) >= 2:
        x, y = np.array([k for k, _ in pts], float), np.array([v for _, v in pts])
        slope, icpt = np.polyfit(x, y, 1)
        guess = slope * m + icpt if slope > 0 else y[-1] * m / x[-1]
    elif pts:
        guess = pts[-1][1] * m / pts[-1][0]
    else:
        guess = default_per_m * m
    return max(2.0, float(guess))


def width_reached(fit, lengths, max_width: float) -> bool:
    """Whether a fit meets the search's precision target (the ``max_width`` stop of :func:`locate_n50_sequential`).

    Args:
        fit: a :class:`~accessibility_lib.experiments.fitting.SigmoidFit` of the outcomes at ``lengths``.
        lengths: shape (k,), the lengths tried (tokens).
        max_width: the widest interval accepted (tokens, > 0).

    Returns:
        True when the fit is ok, its interval closed and at most ``max_width`` wide, both ends lie within the
        lengths tried (not extrapolated) and its steepness is below its cap (an interval that one length alone
        places is not a measured width).
    """
    ns = np.asarray(lengths, dtype=np.float64)
    return bool(
        fit.ok
        and ns.size > 0
        and not any(fit.ci_open)
        and fit.capped_at is None
        and ns.min() <= fit.ci[0]
        and fit.ci[1] <= ns.max()
        and fit.ci[1] - fit.ci[0] <= max_width
    )


def locate_n50_sequential(
    evaluate,
    n_pred: float,
    n_max: int,
    *,
    n_trials: int,
    alpha: float = 0.05,
    first: int | None = None,
    batch: int | None = None,
    growth: float = 1.5,
    rel_tol: float = 0.25,
    n_min: int = 1,
    known=None,
    seed: int = 0,
    bracket_alpha: float | None = None,
    max_full: int | None = None,
    close_open: int = 2,
    stored=None,
    refit=None,
    max_width: float | None = None,
):
    """Find the 50 % point of a decreasing success curve, spending targets near it.

    Args:
        evaluate: ``(n, count) -> (success fraction of targets 0..count-1, runs performed, runs cached)``;
            target i of length n must be the same whatever ``count``.
        n_pred: predicted n50 (tokens), where the search starts (clamped to [n_min, n_max]).
        n_max, n_min: longest and shortest lengths allowed (tokens).
        n_trials: most targets a length gets (the paper: 20); the two lengths pinning the crossing get all.
        alpha: error level per side of the sequential test (:func:`accessibility_lib.experiments.sidetest.side_test`).
        first, batch: the test's first look and the targets added between looks.
        growth: factor by which the bracketing steps move away from the prediction (> 1).
        rel_tol: bisect until the bracket is at most max(1, rel_tol·lo) tokens wide.
        known: optional ``(n, count) -> bool``, whether length n's first ``count`` targets are stored;
            bracketing and bisection then take such a length in place of the one they would try when it
            lies in the same interval.
        seed: passed to the fit.
        bracket_alpha: the side test's level while bracketing (stepping away from the prediction); None:
            ``alpha``. A larger level settles a far length with fewer targets (3 at 0.2: 2^−3 ≤ 0.2); an
            error there only moves where later targets go, never the fit, which uses every outcome.
        max_full: stop giving the pins every target once this many lengths hold every target (None: no
            cap), and fit what there is; a length the side test leaves undecided still gets them all.
        close_open: where the fitted interval is still open at an end (a flat curve, rates near ½ at every
            length tried), try up to this many more lengths beyond the lengths tried on that side (0: none).
        stored: optional ``() -> {n: c}``, lengths whose targets 0 … c − 1 are already stored (other searches
            at the same settings): they join the final fit before the open-interval check, so the search
            closes the interval the chapters will fit from every stored outcome.
        refit: optional ``SigmoidFit -> SigmoidFit`` applied to every fit of the rates (the open-interval check
            included), e.g. :func:`~accessibility_lib.experiments.passage_horizons.with_horizon_interval` where
            targets of one passage are tried at several lengths.
        max_width: optional precision target (tokens): the lengths that pin the crossing get their targets a
            look of the side test at a time, and the search stops adding targets as soon as the fit of every
            outcome seen has a closed interval at most this wide, with both ends within the lengths tried and
            the steepness below its cap (None: every pin gets every target). A side test cut short by it takes
            the side of its rate so far, so the test's error level no longer holds there; stopping on a width
            is itself an optional-stopping rule, whose effect on coverage ``benchmarks/bench_n50_design_sim.py``
            measures. It lets two designs be compared at one interval width (``benchmarks/bench_n50_search.py``).

    Returns:
        An :class:`~accessibility_lib.experiments.n50_result.N50Search` (``design`` "sequential"); ``trials`` shows how
        many targets each length got.

    Raises:
        ValueError: bad lengths, counts, alpha, bracket_alpha, growth, rel_tol, max_full or max_width.
    """
    from accessibility_lib.experiments.fitting import fit_sigmoid
    from accessibility_lib.experiments.n50_result import N50Search

    n_min = check_int("n_min", n_min, minimum=1)
    n_max = check_int("n_max", n_max, minimum=n_min)
    n_trials = check_int("n_trials", n_trials, minimum=1)
    growth = check_real("growth", growth, minimum=1.0, min_inclusive=False)
    rel_tol = check_real("rel_tol", rel_tol, minimum=0.0)
    n_pred = check_real("n_pred", n_pred, minimum=0.0, min_inclusive=False)
    test = side_test(n_trials, alpha, first, batch)
    btest = test if bracket_alpha is None else side_test(n_trials, bracket_alpha, None, batch)
    if max_full is not None:
        max_full = check_int("max_full", max_full, minimum=1)
    if max_width is not None:
        max_width = check_real("max_width", max_width, minimum=0.0, min_inclusive=False)
    seen: dict[int, tuple[float, int]] = {}  # n -> (rate, targets)
    side: dict[int, str] = {}  # n -> "above" / "below" / "centre"
    counter = {"runs": 0, "cached": 0}
    memo: dict[tuple, bool] = {}  # seen-state -> narrow()

    def ev(k: int, count: int) -> float:
        if k not in seen or seen[k][1] < count:
            rate, r, c = evaluate(k, count)
            seen[k] = (float(rate), count)
            counter["runs"] += r
            counter["cached"] += c
        return seen[k][0]

    def fitted():
        ns = np.array(sorted(seen), dtype=np.float64)
        rs = np.array([seen[int(x)][0] for x in ns])
        ts = np.array([seen[int(x)][1] for x in ns], dtype=np.float64)
        fit_ = fit_sigmoid(ns, rs, ts, seed=seed, n_min=n_min)
        return ns, rs, ts, (fit_ if refit is None else refit(fit_))

    def narrow() -> bool:
        """Whether the precision target is met: the fit of every outcome seen is closed, ≤ max_width wide, has
        both ends within the lengths tried (not extrapolated) and a steepness below its cap (an interval that
        one length alone places is not a measured width)."""
        if max_width is None or len(seen) < 2:
            return False
        state = tuple(sorted(seen.items()))
        if state not in memo:
            ns, _, _, f = fitted()
            memo[state] = width_reached(f, ns, max_width)
        return memo[state]

    def decide(k: int, t=None) -> str:
        t = test if t is None else t
        if k in side:
            return side[k]
        for j in t.looks:
            rate = ev(k, j)
            d = t.decide(int(round(rate * j)), j)
            if d is not None:
                side[k] = d
                return d
            if j < t.looks[-1] and narrow():  # the precision target is met: this length's side no longer matters
                break
        rate = seen[k][0]
        side[k] = ABOVE if rate > 0.5 else BELOW if rate < 0.5 else "centre"
        return side[k]

    def prefer_known(k: int, lo_: int, hi_: int) -> int:
        if known is None:
            return k
        cands = [x for x in range(lo_ + 1, hi_) if x not in side and known(x, test.looks[0])]
        return min(cands, key=lambda x: (abs(x - k), x)) if cands else k

    def bracket() -> tuple[int | None, int | None]:
        """(lo, hi): the longest length on the 'above' side below the shortest on the 'below' side."""
        below = [x for x, s in side.items() if s == BELOW]
        hi = min(below) if below else None
        above = [x for x, s in side.items() if s == ABOVE and (hi is None or x < hi)]
        return (max(above) if above else None), hi

    def extend_up(k: int) -> None:
        while bracket()[1] is None and k < n_max:
            nxt = min(max(k + 1, int(math.ceil(k * growth))), n_max)
            k = prefer_known(nxt, k, nxt + 1)
            decide(k, btest)

    def extend_down(k: int) -> None:
        while bracket()[0] is None and k > n_min:
            nxt = max(min(k - 1, int(math.floor(k / growth))), n_min)
            k = prefer_known(nxt, nxt - 1, k)
            decide(k, btest)

    # 1. bracket, stepping away from the prediction by `growth`
    n = min(max(int(round(n_pred)), n_min), n_max)
    s = decide(n)
    if s != BELOW:
        extend_up(n)
    if s != ABOVE or bracket()[0] is None:
        extend_down(min(seen))
    lo, hi = bracket()
    # 2. bisect; 3. the full count on the lengths that pin the crossing (which may move the bracket)
    for _ in range(64):
        if lo is None or hi is None:
            break
        centre = None
        while hi - lo > max(1, int(rel_tol * lo)) and not narrow():
            mid = prefer_known((lo + hi) // 2, lo, hi)
            if decide(mid) == "centre":
                centre = mid  # a rate of exactly 1/2 with every target pins the crossing by itself
                break
            lo, hi = bracket()
        pins = [x for x in ((centre,) if centre is not None else (lo, hi)) if seen[x][1] < n_trials]
        if not pins or (max_full is not None and sum(c >= n_trials for _, c in seen.values()) >= max_full):
            break
        if narrow():
            break
        for count in (n_trials,) if max_width is None else test.looks:  # a precision target: a look at a time
            for x in pins:
                if seen[x][1] < count:
                    rate = ev(x, count)
                    side[x] = ABOVE if rate > 0.5 else BELOW if rate < 0.5 else "centre"
            if count < n_trials and narrow():
                break
        if narrow():
            break
        if bracket()[1] is None:
            extend_up(max(seen))
        if bracket()[0] is None:
            extend_down(min(seen))
        lo, hi = bracket()
    bracketed = lo is not None and hi is not None

    for k, c in sorted((stored or dict)().items()):  # outcomes of other searches at these settings: free, and fitted
        if c >= 1 and (k not in seen or seen[k][1] < min(c, n_trials)):
            ev(k, min(c, n_trials))
    lengths, rates, trials, fit = fitted()
    # 5. a flat curve can leave the interval open at an end although the crossing is bracketed (rates near
    #    ½ at every length tried): one more length beyond the lengths tried on that side, settled by the
    #    side test, up to `close_open` times
    for _ in range(close_open if bracketed else 0):
        if not fit.ok or not any(fit.ci_open):
            break
        if fit.ci_open[1] and max(seen) < n_max:
            decide(min(max(max(seen) + 1, int(math.ceil(max(seen) * growth))), n_max))
        elif fit.ci_open[0] and min(seen) > n_min:
            decide(max(min(min(seen) - 1, int(math.floor(min(seen) / growth))), n_min))
        else:
            break
        lengths, rates, trials, fit = fitted()
    return N50Search(
        fit.n50,
        fit,
        lengths,
        rates,
        (lo or 0, hi or 0),
        counter["runs"],
        counter["cached"],
        trials,
        bracketed,
        design="sequential",
    )
