"""Chapter 6's copying study, gathered and put in words: outcomes, cliffs, comparisons, and Cor 4.10 at them.

:func:`gather_runs` takes chapter 6's runs (:func:`~accessibility_lib.runs.work.copying_runs`) from the study
artifact (``book/data/copying/study.json``) or computes them, and locates each cliff
(:func:`~accessibility_lib.experiments.cliffs.locate_cliff`); :func:`describe_cliff` and :func:`describe_move`
phrase a cliff and a comparison only as far as the data show them; :func:`mean_field_at_cliff` is what the
mean-field bound (Thm 4.9 / Cor 4.10 of the paper, Section 4.3) says at a run's measured cliff.
"""

from __future__ import annotations

import math

from accessibility_lib.experiments import cliffs

__all__ = ["gather_runs", "describe_cliff", "rebound_text", "recheck_text", "cliff_position", "describe_move", "mean_field_at_cliff", "coarsest_nstar_log10",
           "widest_testable"]  # fmt: skip


def gather_runs(units, params: dict, artifact: dict | None, compute=None) -> tuple[list[dict], list[str]]:
    """Chapter 6's runs with their outcomes and cliffs, in the chapter's order.

    Args:
        units: ``(label, TrainConfig)`` pairs, :func:`~accessibility_lib.runs.work.copying_runs` of ``params``.
        params: the chapter's parameters (:func:`~accessibility_lib.runs.presets.resolve` of ``"copying"``).
        artifact: the study artifact (:func:`~accessibility_lib.runs.copying_outcomes.load_artifact`), or None.
        compute: ``compute(label, cfg) -> outcome record`` for a run the artifact lacks (the chapter passes
            :func:`~accessibility_lib.runs.work.run_copying` followed by
            :func:`~accessibility_lib.runs.copying_outcomes.outcome_record`); None lists it as missing instead.

    Returns:
        ``(runs, missing)``: ``runs`` one dict per available run, with ``label``, ``cfg`` (its
        :class:`~accessibility_lib.experiments.copying_model.TrainConfig`), ``rec`` (its outcome record,
        :func:`~accessibility_lib.runs.copying_outcomes.copying_outcome`), ``source`` ("artifact" or
        "computed") and ``cliff`` (a :class:`~accessibility_lib.experiments.cliffs.CliffEstimate`); ``missing``
        the labels of the runs neither found nor computed.
    """
    from accessibility_lib.runs import copying_outcomes as CO

    runs, missing = [], []
    for label, cfg in units:
        rec, source = CO.find_outcome(artifact, cfg, params), "artifact"
        if rec is None and compute is not None:
            rec, source = compute(label, cfg), "computed"
        if rec is None:
            missing.append(label)
            continue
        ev = rec["eval"]
        cliff = cliffs.locate_cliff(ev["length"], ev["exact"], params["n_strings"])
        runs.append({"label": label, "cfg": cfg, "rec": rec, "source": source, "cliff": cliff})
    return runs, missing


def _num(x: float) -> str:
    return f"{x:g}" if float(x).is_integer() else f"{x:.1f}"


def describe_cliff(c: cliffs.CliffEstimate, short: bool = False) -> str:
    """A cliff in a few words (lengths in symbols): the step's bracket, the fit of a fall, or the one-sided range.

    ``short``: a fall as its n50 and range only (for sentences that compare two cliffs); the tables give the rest.
    A fall whose data are separated prints no steepness k: the fit's bound on k sets it, not the data.

    >>> import numpy as np
    >>> describe_cliff(cliffs.locate_cliff(np.arange(2, 12), 50 * (np.arange(2, 12) <= 8), 50))
    'a step between 8 and 9'
    """
    if c.kind == "step":
        return f"a step between {_num(c.low)} and {_num(c.high)}"
    if c.kind == "fall" and short:
        return f"a fall, n50 = {c.n50:.1f} [{c.low:.1f}, {c.high:.1f}]"
    if c.kind == "fall":
        k_in = c.data.n_informative
        inside = (
            f"{k_in} lengths inside the fall"
            if k_in > 1
            else ("one length" if k_in == 1 else f"no length below {100 * cliffs.NEAR_FULL:.0f} %")
            + " inside the fall: R² near 1 by construction, and the range is where the rates' 95 % intervals lie"
            " either side of ½"
        )
        back = rebound_text(c)
        return (
            f"a fall, n50 = {c.n50:.1f} [{c.low:.1f}, {c.high:.1f}], "
            + (
                "k not measured (separated data: the one length inside places n50)"
                if getattr(c.fit, "capped_at", None) is not None
                else f"k = {c.steepness:.3g}"
            )
            + f", R² = {c.r_squared:.3f} over the {int(cliffs.fall_window(c.data).sum())} lengths it is fitted to"
            f" ({inside}{'; ' + back if back else ''})"
        )
    if c.kind == "beyond":
        return f"beyond {_num(c.low)} (copied at least half of the time at every tested length)"
    if c.kind == "below":
        return f"below {_num(c.high)} (copied less than half of the time at every tested length)"
    lo = _num(c.low) if math.isfinite(c.low) else "the shortest length"
    hi = _num(c.high) if math.isfinite(c.high) else "beyond the longest"
    return f"no clean cliff (between {lo} and {hi}; dips below it)"


def rebound_text(c: cliffs.CliffEstimate) -> str:
    """``"copied again at n = 17, 13 of 50, after a shorter length copied never"`` for a non-monotone curve, else ``""``."""
    d = c.data
    if not d.rebounds.size:
        return ""
    rate = dict(zip(d.lengths.tolist(), d.rates.tolist()))
    each = " and ".join(
        f"n = {_num(n)}, {round(rate[n] * d.n_strings)} of {d.n_strings},"
        if d.n_strings
        else f"n = {_num(n)}, {rate[n]:.2f},"
        for n in d.rebounds.tolist()
    )
    return f"copied again at {each} after a shorter length copied never"


def recheck_text(c: cliffs.CliffEstimate, entry: dict | None) -> str:
    """What ``scripts/copying_recheck.py`` found for a rebounding run (its ``recheck.json`` entry), or "".

    The rebound is the model's when every fresh evaluation seed copies some strings at each rebound length while
    copying none at the lengths between the last length it copied and the rebound (the gap); otherwise the
    sentence says it did not reproduce.
    """
    if not entry or not c.data.rebounds.size:
        return ""
    L = entry["lengths"]
    fresh = {s: dict(zip(L, k)) for s, k in entry["counts"].items() if int(s) != entry["study_seed"]}
    if not fresh:
        return ""
    reb = [int(n) for n in c.data.rebounds.tolist()]
    stored = dict(zip(L, entry["counts"][str(entry["study_seed"])]))
    gap = [n for n in L if n < reb[0] and stored[n] == 0 and all(stored[m] == 0 for m in L if n <= m < reb[0])]
    n_s = entry["n_strings"]
    at = "; ".join(f"n = {n}: " + " and ".join(str(k[n]) for k in fresh.values()) + f" of {n_s}" for n in reb)
    held = all(k[n] > 0 for k in fresh.values() for n in reb) and all(k[n] == 0 for k in fresh.values() for n in gap)
    where = f"n = {gap[0]}–{gap[-1]}" if len(gap) > 1 else (f"n = {gap[0]}" if gap else "")
    same = "the study's counts reproduced exactly" if entry["reproduced"] else "the study's counts NOT reproduced"
    return (
        f"retrained from its stored config ({same}) and evaluated on {len(fresh)} fresh sets of {n_s} strings, "
        f"it copied {at}"
        + (f", and none at {where}" if where and held else "")
        + (
            ": the rebound is the model's, not its strings'"
            if held
            else ": the rebound did not reproduce on fresh strings"
        )
    )


def cliff_position(c: cliffs.CliffEstimate) -> str:
    """Where the cliff is, in the fewest symbols: ``"8–9 (step)"``, ``"n50 = 9.2"``, ``"> 30"``, ``"< 2"``."""
    if c.kind == "step":
        return f"{_num(c.low)}–{_num(c.high)} (step)"
    if c.kind == "fall":
        return f"n50 = {c.n50:.1f}"
    if c.kind == "beyond":
        return f"> {_num(c.low)}"
    if c.kind == "below":
        return f"< {_num(c.high)}"
    lo = _num(c.low) if math.isfinite(c.low) else "?"
    hi = _num(c.high) if math.isfinite(c.high) else "?"
    return f"{lo}–{hi} (irregular)"


def describe_move(a: dict, b: dict) -> str:
    """Whether the cliff moved from run ``a`` to run ``b`` (dicts of :func:`gather_runs`), said as the data allow.

    A move needs disjoint ranges (:func:`~accessibility_lib.experiments.cliffs.compare_cliffs`); two identical
    steps are identical at the resolution of the tested lengths.
    """
    cmp = cliffs.compare_cliffs(a["cliff"], b["cliff"])
    ta, tb = describe_cliff(a["cliff"], short=True), describe_cliff(b["cliff"], short=True)
    if cmp.same_step:
        return (f"the same step between {_num(a['cliff'].low)} and {_num(a['cliff'].high)} for {a['label']} and "
                f"{b['label']}: identical at the resolution of the tested lengths")  # fmt: skip
    if cmp.moved:
        return f"the cliff moved {cmp.moved}: {ta} ({a['label']}) → {tb} ({b['label']}); the ranges do not overlap"
    if not cmp.comparable:
        return f"no comparison: {ta} ({a['label']}), {tb} ({b['label']})"
    return f"no move the data can show: {ta} ({a['label']}), {tb} ({b['label']}); the ranges overlap"


def coarsest_nstar_log10(d: int, alphabet_size: int, q: float = 1) -> float:
    """log10 n* at 2r/ε = 1, i.e. ε equal to the diameter of the support ball (Cor 4.10).

    n* grows with 2r/ε, so every precision finer than the ball's diameter gives a larger n*: this floor needs
    no convention for r or ε. (At ε ≥ 2r every two measures on the ball are within ε, W_q ≤ 2r; whether such a
    model must then write one output depends on how Assumption 4.8 is read, so the floor is stated as the
    bound's own value, not as a property of copying models.)

    Raises:
        ValueError: alphabet_size not an integer ≥ 2, or d as the bound.
    """
    from accessibility_lib.theory.bounds import mean_field_loglog_count

    if not (isinstance(alphabet_size, int) and alphabet_size >= 2):
        raise ValueError(f"alphabet_size must be an integer >= 2, got {alphabet_size!r}")
    return (mean_field_loglog_count(d, 0.5, 1.0, q) - math.log(math.log(alphabet_size))) / math.log(10)


def mean_field_at_cliff(rec: dict, cliff: cliffs.CliffEstimate, alphabet_size: int, convention) -> dict:
    """What Cor 4.10 says at a run's measured cliff, with ε from an ε convention.

    Args:
        rec: the run's outcome (``d_model``, ``r`` = max ‖h‖₂, ``r_inf`` = max |h_i| of its last-layer embeddings).
        cliff: its :class:`~accessibility_lib.experiments.cliffs.CliffEstimate`.
        alphabet_size: |V| (letters, not task ids).
        convention: an :class:`~accessibility_lib.theory.precision.EpsConvention` (e.g. ``L2_FP16``).

    Returns:
        ``{"d", "r", "ratio" (2r/ε), "log10_nstar", "cliff" (a point: n50 or the bracket's middle), "orders"
        (log10 n* − log10 cliff), "ratio_needed" (the 2r/ε at which n* would equal the cliff), "coarsest_log10"
        (log10 n* at 2r/ε = 1, :func:`coarsest_nstar_log10`)}``; ``orders`` and ``ratio_needed`` are NaN when the
        cliff has no finite position (beyond/below every tested length: then ``cliff`` is the finite end).
    """
    d, r = int(rec["d_model"]), float(rec["r"])
    eps = convention.eps(r=r, r_inf=float(rec["r_inf"]))
    log10_nstar = cliffs.mean_field_cliff_log10(d, r, eps, alphabet_size)
    point = cliff.centre
    ok = math.isfinite(point) and point * math.log(alphabet_size) > 1
    return {
        "d": d,
        "r": r,
        "ratio": 2 * r / eps,
        "log10_nstar": log10_nstar,
        "cliff": point,
        "orders": log10_nstar - math.log10(point) if ok else math.nan,
        "ratio_needed": cliffs.mean_field_ratio_for_cliff(d, point, alphabet_size) if ok else math.nan,
        "coarsest_log10": coarsest_nstar_log10(d, alphabet_size),
    }


def widest_testable(n: float, alphabet_size: int, q: float = 1) -> int:
    """The largest width d at which Cor 4.10 can forbid anything at length ``n``: the largest d whose n* at the
    coarsest meaningful precision (2r/ε = 1, :func:`coarsest_nstar_log10`) is at most ``n`` (0 if none).

    A copying test at lengths ≤ n can only contradict the bound for a model of at most this width: any wider
    model that tells two prompts apart has n* > n, where the bound allows every string.

    Raises:
        ValueError: n ≤ 0, or alphabet_size < 2.
    """
    if not n > 0:
        raise ValueError(f"n must be a positive length, got {n!r}")
    d = 0
    while coarsest_nstar_log10(d + 1, alphabet_size, q) <= math.log10(n):
        d += 1
    return d
