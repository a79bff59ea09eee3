"""The bisection design of the n50 search (the design of the book's first artifacts).

Doubles or halves from a fixed start until both sides of ½ are seen, bisects with the same number of
probe targets at every length, then evaluates a few lengths around the crossing with every target.
The design that spends its targets near n50 is :mod:`accessibility_lib.experiments.n50_sequential`.
"""

from __future__ import annotations

import numpy as np

from accessibility_lib.experiments.n50_result import N50Search
from accessibility_lib.ground.checks import check_int


def locate_n50(
    evaluate,
    n_start: int,
    n_max: int,
    *,
    n_trials: int,
    n_probe: int | None = None,
    rel_tol: float = 0.1,
    n_around: int = 4,
    spread: float = 0.25,
    seed: int = 0,
    n_min: int = 1,
    known=None,
) -> N50Search:
    """Find the 50 % point of a decreasing success curve with few optimisation runs.

    1. From ``n_start`` (``n_probe`` targets a length) double n while the rate is ≥ ½ and halve it
       while ≤ ½, until a length with rate > ½ lies below one with rate < ½ (capped at ``n_max`` and
       ``n_min``). If the cap is reached first the result is one-sided: ``bracketed`` is False and the
       fit says which side (never a crossing pinned to the end of the range).
    2. Bisect the bracket [lo, hi] until hi − lo ≤ max(1, rel_tol·lo); a length with rate exactly ½
       ends the bisection there.
    3. Evaluate ``n_around`` lengths spread over n50·(1 ± ``spread``) with all ``n_trials`` targets
       (the paper's curves are about ±15–30 % of n50 wide), then fit the logistic to every length.

    Args:
        evaluate: ``(n, count) -> (success fraction of targets 0..count-1, runs performed, runs
            cached)``; targets must be the same for a given (n, i) whatever ``count``.
        n_start: first length tried (tokens). n_max: longest allowed (context). n_min: shortest (≥ 1).
        n_trials: targets a length in step 3 (the paper: 20).
        n_probe: targets a length in steps 1–2 (default: min(n_trials, max(5, n_trials // 4))).
        known: optional ``(n, count) -> bool``: whether length n's targets are already evaluated (e.g. in
            the result store). Steps 1–2 then take such a length in place of the one they would try when
            it lies inside the same interval, so a resumed search reuses what a previous one crammed.

    Returns:
        An :class:`N50Search`.

    Raises:
        ValueError: bad lengths or counts (n_min > n_max, n_probe > n_trials, ...).
    """
    from accessibility_lib.experiments.fitting import fit_sigmoid

    n_min = check_int("n_min", n_min, minimum=1)
    n_max = check_int("n_max", n_max, minimum=n_min)
    n_trials = check_int("n_trials", n_trials, minimum=1)
    n_probe = (
        min(n_trials, max(5, n_trials // 4))
        if n_probe is None
        else check_int("n_probe", n_probe, minimum=1, maximum=n_trials)
    )
    n = min(max(check_int("n_start", n_start, minimum=1), n_min), n_max)
    seen: dict[int, tuple[float, int]] = {}  # n -> (rate, targets)
    runs = cached = 0

    def prefer_known(k: int, lo_: int, hi_: int) -> int:
        """A known length in (lo_, hi_) next to k (the closest one), else k itself."""
        if known is None:
            return k
        cands = [x for x in range(lo_ + 1, hi_) if x not in seen and known(x, n_probe)]
        return min(cands, key=lambda x: (abs(x - k), x)) if cands else k

    def ev(k: int, count: int) -> float:
        nonlocal runs, cached
        if k not in seen or seen[k][1] < count:
            rate, r, c = evaluate(k, count)
            seen[k] = (float(rate), count)
            runs += r
            cached += c
        return seen[k][0]

    # 1. bracket: hi = a length with rate < 1/2, lo = a shorter one with rate > 1/2
    r = ev(n, n_probe)
    k = n
    while r >= 0.5 and k < n_max:  # grow until a failure side is seen
        k = prefer_known(min(2 * k, n_max), k, min(2 * k, n_max) + 1)
        r = ev(k, n_probe)
    below = [x for x, (rate, _) in seen.items() if rate < 0.5]
    hi = min(below) if below else None
    if hi is not None:
        above = [x for x, (rate, _) in seen.items() if rate > 0.5 and x < hi]
        k = min(seen)
        while not above and k > n_min:  # shrink until a success side is seen
            k = max(k // 2, n_min)
            if ev(k, n_probe) > 0.5:
                above = [k]
            elif seen[k][0] < 0.5:
                hi = min(hi, k)
        lo = max(above) if above else None
    else:
        lo = max(x for x, (rate, _) in seen.items() if rate > 0.5) if any(v[0] > 0.5 for v in seen.values()) else None
    bracketed = lo is not None and hi is not None
    # 2. bisection
    centre = None
    if bracketed:
        while hi - lo > max(1, int(rel_tol * lo)):
            mid = prefer_known((lo + hi) // 2, lo, hi)
            rate = ev(mid, n_probe)
            if rate > 0.5:
                lo = mid
            elif rate < 0.5:
                hi = mid
            else:
                centre = float(mid)
                break
        centre = 0.5 * (lo + hi) if centre is None else centre
        # 3. the transition with every target
        for f in np.linspace(-spread, spread, n_around) if n_around > 1 else [0.0] * n_around:
            k = int(round(centre * (1 + f)))
            if n_min <= k <= n_max:
                ev(k, n_trials)
    lengths = np.array(sorted(seen), dtype=np.float64)
    rates = np.array([seen[int(x)][0] for x in lengths])
    trials = np.array([seen[int(x)][1] for x in lengths], dtype=np.float64)
    fit = fit_sigmoid(lengths, rates, trials, seed=seed, n_min=n_min) if lengths.size >= 1 else None
    return N50Search(fit.n50, fit, lengths, rates, (lo or 0, hi or 0), runs, cached, trials, bracketed)
