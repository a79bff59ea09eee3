"""A sequential test of which side of ½ a success probability lies on, with an exact error rate.

The n50 search (:mod:`accessibility_lib.experiments.n50`) needs, at each length n it tries, one bit: is the share
p(n) of targets that can be crammed above or below ½? Far from n50 a handful of targets settles it
(5 of 5 crammed, or 0 of 5); near n50 no number of targets does. So targets are added in small groups
and the test stops as soon as the side is settled:

- after j targets with k crammed, decide **above** when k ≥ a_j and **below** when j − k ≥ a_j,
  at the *looks* j ∈ {first, first + batch, …, n_max};
- a_j is the smallest count with P(Bin(j, ½) ≥ a_j) ≤ γ (and a_j > j/2), one nominal level γ for
  every look, chosen as the largest γ whose **exact** error — the probability, when p = ½, that the
  test ever decides "above" (by symmetry the same for "below") — is at most ``alpha``;
- a length still undecided after ``n_max`` targets is *undecided*: its rate is close to ½, which is
  what pins the crossing, so it keeps every target.

Why this is an honest error rate: the chance of crossing the "above" boundary grows with p, so for
every p < ½ the chance of wrongly deciding "above" is below its value at p = ½, which the dynamic
programme of :func:`operating_characteristic` computes exactly (no normal approximation, no
simulation); likewise for "below" when p > ½. Repeated looks are accounted for, which a fixed-sample
binomial test applied after every target would not be (its error grows with the number of looks).

Example:
    >>> t = side_test(10, alpha=0.05)
    >>> t.looks[:3], t.error <= 0.05
    ((5, 7, 9), True)
    >>> t.decide(5, 5), t.decide(1, 5), t.decide(0, 7)
    ('above', None, 'below')
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from accessibility_lib.ground.checks import check_int, check_real

__all__ = ["SideTest", "side_test", "operating_characteristic"]

ABOVE, BELOW = "above", "below"


@dataclass(frozen=True)
class SideTest:
    """A calibrated sequential side-of-½ test (build it with :func:`side_test`).

    Attributes:
        n_max: most targets a length gets.
        alpha: the stated error level (each side).
        looks: (J,) target counts at which the test may stop, increasing, the last = ``n_max``.
        thresholds: (J,) a_j: "above" when successes ≥ a_j, "below" when failures ≥ a_j
            (a_j = j + 1 where no decision is possible at that look).
        error: the exact probability, at p = ½, of deciding "above" (= of deciding "below"); ≤ alpha.
    """

    n_max: int
    alpha: float
    looks: tuple[int, ...]
    thresholds: tuple[int, ...]
    error: float

    def decide(self, successes: int, trials: int) -> str | None:
        """``"above"``, ``"below"`` or None (go on) after ``trials`` targets with ``successes`` crammed.

        Raises:
            ValueError: ``trials`` is not one of :attr:`looks`, or successes is outside [0, trials].
        """
        if trials not in self.looks:
            raise ValueError(f"trials must be one of the test's looks {list(self.looks)}, got {trials}")
        if not 0 <= successes <= trials:
            raise ValueError(f"successes must lie in [0, {trials}], got {successes}")
        a = self.thresholds[self.looks.index(trials)]
        if successes >= a:
            return ABOVE
        if trials - successes >= a:
            return BELOW
        return None


def _thresholds(looks: tuple[int, ...], gamma: float) -> tuple[int, ...]:
    out = []
    for j in looks:
        a = next((a for a in range(j // 2 + 1, j + 1) if stats.binom.sf(a - 1, j, 0.5) <= gamma), j + 1)
        out.append(a)
    return tuple(out)


def operating_characteristic(test: SideTest, p: float) -> dict:
    """Exact probabilities of each decision, and the expected number of targets, when the rate is ``p``.

    A dynamic programme over (targets so far, successes) for the paths the test has not stopped.

    Args:
        test: a :class:`SideTest`.
        p: the true success probability, in [0, 1].

    Returns:
        ``{"above": P(decide above), "below": P(decide below), "undecided": P(neither after n_max),
        "expected_trials": E[targets used]}``.

    Raises:
        ValueError: p outside [0, 1].
    """
    p = check_real("p", p, minimum=0.0, maximum=1.0)
    alive = np.zeros(test.n_max + 1)  # alive[k]: P(k successes so far and not stopped)
    alive[0] = 1.0
    done_j = 0
    above = below = expected = 0.0
    for j, a in zip(test.looks, test.thresholds):
        for _ in range(j - done_j):  # add one target at a time
            alive = alive * (1 - p) + np.concatenate([[0.0], alive[:-1]]) * p
        done_j = j
        k = np.arange(alive.size)
        up, down = (k >= a) & (k <= j), (j - k >= a) & (k <= j)
        above += float(alive[up].sum())
        below += float(alive[down].sum())
        expected += j * float(alive[up].sum() + alive[down].sum())
        alive = np.where(up | down, 0.0, alive)
    undecided = float(alive.sum())
    expected += test.n_max * undecided
    return {"above": above, "below": below, "undecided": undecided, "expected_trials": expected}


def side_test(n_max: int, alpha: float = 0.05, first: int | None = None, batch: int | None = None) -> SideTest:
    """The sequential side-of-½ test with looks every ``batch`` targets from ``first`` to ``n_max``.

    Args:
        n_max: most targets a length gets (≥ 1), e.g. the paper's 20.
        alpha: error level per side, in (0, ½): at p = ½ the test decides "above" (or "below") with
            probability at most alpha, so at any p on the other side of ½ it errs less often.
        first: the first look (default: the smallest count at which a unanimous result can reach
            ``alpha``, i.e. the smallest j with 2^−j ≤ alpha, capped at n_max).
        batch: targets added between looks (default 2; 1 stops soonest, larger batches are
            cheaper per target on a CPU).

    Returns:
        A :class:`SideTest` whose exact error (:func:`operating_characteristic` at p = ½) is ≤ alpha.
        With n_max too small for any decision at that level (2^−n_max > alpha) every length is
        undecided and gets all n_max targets.

    Raises:
        ValueError: n_max < 1, alpha outside (0, ½), first or batch < 1.
    """
    n_max = check_int("n_max", n_max, minimum=1)
    alpha = check_real("alpha", alpha, minimum=0.0, maximum=0.5, min_inclusive=False, max_inclusive=False)
    if first is None:
        first = min(n_max, int(np.ceil(-np.log2(alpha))))
    first = check_int("first", first, minimum=1, maximum=n_max)
    batch = check_int("batch", 2 if batch is None else batch, minimum=1)
    looks = tuple(sorted(set(range(first, n_max + 1, batch)) | {n_max}))
    # candidate nominal levels: every tail probability a threshold can have, largest first
    cands = sorted(
        {float(stats.binom.sf(a - 1, j, 0.5)) for j in looks for a in range(j // 2 + 1, j + 1)}, reverse=True
    )
    for gamma in cands:
        if gamma > alpha:
            continue
        test = SideTest(n_max, alpha, looks, _thresholds(looks, gamma), 0.0)
        err = operating_characteristic(test, 0.5)["above"]
        if err <= alpha:
            return SideTest(n_max, alpha, looks, test.thresholds, err)
    return SideTest(n_max, alpha, looks, tuple(j + 1 for j in looks), 0.0)
