"""Tests of accessibility_lib.experiments.passage_bootstrap: n50 intervals when outcomes share passages.

Natural-text targets of one passage at several lengths are prefixes of one another, so their outcomes are
not independent draws; the widened interval must cover where the profile interval, which counts each
outcome as independent, does not — and must leave independent draws alone.
"""

from __future__ import annotations

import numpy as np
import pytest

from accessibility_lib.experiments.fitting import fit_sigmoid, logistic
from accessibility_lib.experiments.n50_sequential import locate_n50_sequential
from accessibility_lib.experiments.passage_bootstrap import (
    passage_bootstrap_n50,
    passage_design_effect,
    widen_for_passages,
)

LENGTHS = list(range(12, 29))  # 17 lengths, as the paper's curves have up to 40


def _rows(seed, shared, n_pass=20, n50=20.0, scale=3.0):
    """Each passage has a horizon (logistic around n50); it crams exactly the lengths up to it. ``shared``:
    one horizon per passage at every length (natural text); else a fresh draw per length (random targets)."""
    rng = np.random.default_rng(seed)
    c = n50 + scale * rng.logistic(size=n_pass)
    rows = []
    for n in LENGTHS:
        if not shared:
            c = n50 + scale * rng.logistic(size=n_pass)
        rows += [{"n": n, "target": t, "success": bool(n <= c[t])} for t in range(n_pass)]
    return rows


def _fit(rows):
    ns = np.array(LENGTHS, dtype=float)
    rates = np.array([np.mean([r["success"] for r in rows if r["n"] == n]) for n in LENGTHS])
    return fit_sigmoid(ns, rates, np.full(ns.size, 20.0))


@pytest.mark.slow
def test_shared_passages_widen_the_interval_enough_to_cover_and_independent_draws_stay():
    cover_profile = cover_wide = 0
    ratio, de_indep = [], []
    for seed in range(30):
        rows = _rows(seed, shared=True)
        fit = _fit(rows)
        wide = widen_for_passages(fit, rows, n_boot=150, seed=seed)
        cover_profile += fit.ci[0] <= 20.0 <= fit.ci[1]
        cover_wide += wide.ci[0] <= 20.0 <= wide.ci[1]
        assert wide.ci[0] <= fit.ci[0] and wide.ci[1] >= fit.ci[1] and wide.level == fit.level
        ratio.append((wide.ci[1] - wide.ci[0]) / (fit.ci[1] - fit.ci[0]))
        if seed < 8:
            indep = _rows(seed, shared=False)
            de_indep.append(passage_design_effect(indep, _fit(indep), n_boot=150, seed=seed))
    assert cover_profile <= 21  # the profile interval undercovers badly (about half of 30)
    assert cover_wide >= 25  # the widened one is near its 95 %
    assert np.median(ratio) > 2.0 and np.median(de_indep) < 1.6


def test_widened_fit_is_labelled_and_a_fit_without_an_interval_is_returned_as_is():
    rows = _rows(0, shared=True)
    wide = widen_for_passages(_fit(rows), rows, n_boot=100)
    assert "passage design effect" in wide.method
    one_sided = fit_sigmoid(np.array([5.0, 6.0]), np.array([1.0, 1.0]), np.array([10.0, 10.0]))
    assert widen_for_passages(one_sided, rows) is one_sided


def test_percentile_interval_brackets_n50_and_opens_without_a_crossing():
    rows = [{"n": n, "target": t, "success": n <= 10 + t} for t in range(12) for n in (8, 12, 16, 20, 24)]
    iv = passage_bootstrap_n50(rows, n_boot=200, seed=0)
    assert iv.lo < 16 < iv.hi and iv.open == (False, False) and iv.n_passages == 12
    always = [{"n": n, "target": t, "success": True} for t in range(5) for n in (4, 8)]
    assert passage_bootstrap_n50(always, n_boot=50).open[1]


@pytest.mark.parametrize(
    "rows, kw, match",
    [
        ([{"n": 3, "success": True}, {"n": 3, "target": 1, "success": True}], {}, "no target"),
        ([{"n": 3, "target": 0, "success": True}], {}, "at least two passages"),
        ([{"n": 3, "target": t, "success": True} for t in range(3)], {"n_boot": 10}, "n_boot"),
        ([{"n": 3, "target": t, "success": True} for t in range(3)], {"level": 1.0}, "level"),
    ],
)
def test_bad_input_is_refused(rows, kw, match):
    with pytest.raises(ValueError, match=match):
        passage_bootstrap_n50(rows, **kw)


def test_the_search_applies_refit_to_its_open_interval_check():
    """A refit that opens the upper end makes the search try lengths beyond the longest one, as a passage
    design effect does for natural targets; without it the same search stops."""

    def ev(n, count):
        return round(float(logistic(n, 20.0, 0.5)) * count) / count, count, 0

    plain = locate_n50_sequential(ev, 20, 4096, n_trials=20)
    assert not any(plain.fit.ci_open)
    opened = locate_n50_sequential(ev, 20, 4096, n_trials=20, refit=lambda f: _open_high(f, max(plain.lengths)))
    assert max(opened.lengths) > max(plain.lengths)


def _open_high(fit, longest):
    import dataclasses

    return dataclasses.replace(fit, ci_open=(fit.ci_open[0], max(fit.lengths) <= longest))
