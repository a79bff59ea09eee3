"""Step budgets: whether a cramming n50 has converged, read from the units of one artifact.

A soft prompt that fails at one budget may succeed at a larger one, so every n50 is a lower estimate until a
budget curve (the same targets at 2x, 4x the budget) stops moving it. :func:`budget_reading` says what the
failures at the step cap show, :func:`budget_curve`, :func:`curve_trend` and :func:`budget_curve_text` read one
curve at m = 1,
and :func:`budget_moves` pairs the same targets at two budgets at every m (chapters 3, 5 and 7).
"""

from __future__ import annotations

import numpy as np

from accessibility_lib.runs.cramming_summary import UnitSummary


def budget_reading(units: list[UnitSummary]) -> tuple[bool | None, str]:
    """What the failures at the step cap say about a set of units (one model and target kind).

    Returns:
        (limited, text): ``limited`` is True when the units give up early (a patience) and still more than
        half of their failures used the whole budget — their loss was still improving when the budget ended
        them, so a larger budget may raise the n50s (whether it does, only a budget curve says); False when
        half or fewer did; None when no unit has a patience
        (then every failure runs the whole budget by construction and the share says nothing: a budget
        curve, the same targets at larger budgets, is the test) or there is no failure. ``text`` says so.
    """
    fails = sum(u.failures for u in units)
    at_cap = sum(u.failures_at_cap for u in units)
    if not fails:
        return None, "no failure"
    share = f"{at_cap} of its {fails} failures used the whole step budget"
    if all(u.patience is None for u in units):
        return None, (
            share + " — by construction, with no patience, so this says nothing about convergence; "
            "a budget curve (the same targets at larger budgets) is the test"
        )
    if at_cap > fails / 2:
        return True, (
            share + " while still improving, so a larger budget may raise its n50s "
            f"(its patience ended {'none' if at_cap == fails else f'only {fails - at_cap}'} of them)"
        )
    return False, share


def patience_share(u: UnitSummary) -> float:
    """A unit's patience as a share of its step budget: 1.0 with no patience (a trial runs to the cap unless
    it succeeds), e.g. 1/3 for 300 steps with patience 100. Two budgets of one share differ in the budget only.

    A patience that never ended a trial (every failure ran to the step cap) is no patience: it only ever ends a
    trial early, and each target's trial is its own row of the batch, so such a unit ran exactly the trials a
    unit without patience runs (Gemma's 300-step units with patience 100 are such units) and its share is 1.0.
    """
    if u.patience is None or u.failures_at_cap == u.failures:
        return 1.0
    return round(u.patience / u.max_steps, 6)


def budget_curve(summaries: list[UnitSummary], kind: str, m: int = 1, instrument: str = "paper") -> dict:
    """Per dtype, the complete fitted units of one kind, m and instrument at two or more step budgets.

    A curve changes the budget only: its units share one patience share (:func:`patience_share`: none, or
    the patience as the same share of each budget), so 300 steps with a patience of 100 that ended trials and
    600 steps with no patience are never one curve (that pair would change the stopping rule too); a patience
    that never ended a trial counts as none. Per dtype the share with
    the most budgets is used (ties: no patience). The budgets are compared on the same targets: per
    budget, the unit with the largest target count that every budget of the curve has (e.g. the 10-target
    unit at 300 steps, not the 20-target one, when 600 steps has only 10), else the one with the most
    outcomes.

    Returns:
        dtype -> units sorted by step budget, one per budget; only dtypes with at least two budgets.
    """
    groups: dict = {}
    for u in summaries:
        if (u.kind, u.m, u.instrument, u.state) != (kind, m, instrument, "complete") or u.fit is None or not u.fit.ok:
            continue
        groups.setdefault(u.dtype, {}).setdefault(patience_share(u), {}).setdefault(u.max_steps, []).append(u)
    by = {dtype: max(shares.items(), key=lambda kv: (len(kv[1]), kv[0] == 1.0))[1] for dtype, shares in groups.items()}
    out: dict = {}
    for dtype, budgets in sorted(by.items()):
        if len(budgets) < 2:
            continue
        common = set.intersection(*({u.n_targets for u in us} for us in budgets.values()))
        out[dtype] = [
            max(
                (u for u in us if not common or u.n_targets == max(common)),
                key=lambda u: u.n_outcomes,
            )
            for _, us in sorted(budgets.items())
        ]
    return out


MIN_GAP = 1.0  # tokens: facing interval ends closer than this are not read as a difference


def facing_ends(low: UnitSummary, high: UnitSummary) -> tuple[str, str]:
    """Whether ``high``'s n50 lies above ``low``'s, read from the two interval ends that face each other
    (``low``'s upper end, ``high``'s lower end): one rule for budget curves, budget pairs and target kinds.

    Returns:
        (verdict, text): ``"above"`` when the facing ends leave a gap of at least :data:`MIN_GAP` tokens and
        neither lies past the lengths its unit tried; ``"overlap"`` when they overlap; ``"unsettled"`` when
        they are disjoint but by less than :data:`MIN_GAP` or by an end the fitted curve's shape placed
        beyond the lengths tried (``text`` names which). The other two ends play no part.
    """
    a_hi, b_lo = low.fit.ci[1], high.fit.ci[0]
    if b_lo <= a_hi:
        return "overlap", "the intervals overlap"
    past = []
    if len(low.lengths) and a_hi > np.max(low.lengths):
        past.append(
            f"the lower n50's upper end {a_hi:.1f} lies past its longest length tried, {np.max(low.lengths):.0f}"
        )
    if len(high.lengths) and b_lo < np.min(high.lengths):
        past.append(
            f"the higher n50's lower end {b_lo:.1f} lies below its shortest length tried, {np.min(high.lengths):.0f}"
        )
    if past:
        return "unsettled", "the intervals are disjoint only by an extrapolated end (" + "; ".join(past) + ")"
    if b_lo - a_hi < MIN_GAP:
        return (
            "unsettled",
            f"the intervals are disjoint by only {b_lo - a_hi:.2f} tokens ({a_hi:.2f} against {b_lo:.2f})",
        )
    return "above", f"the intervals are disjoint, {b_lo - a_hi:.1f} tokens apart at their facing ends"


#: :func:`curve_trend`'s three readings, as a sentence says them
TREND_WORDS = {
    "growing": "growing over these budgets: the smallest and largest budgets' intervals are disjoint",
    "rising": "rising from budget to budget (no step down, a token or more a step on average), with overlapping intervals",
    "flat": "no move of a token or more shown, by the intervals or the point estimates",
}


def budget_curve_brief(summaries: list[UnitSummary], kind: str, m: int = 1, instrument: str = "paper") -> str:
    """The float32 budget curve in a few words, for a page that gives :func:`budget_curve_text` once already.

    Returns:
        e.g. ``"n50 at m = 1 of 9.1 → 12.0 → 15.0 tokens at 300 → 600 → 1,200 steps (rising from budget to budget,
        with overlapping intervals)"``, the parenthesis :func:`curve_trend`'s reading in words
        (:data:`TREND_WORDS`); ``""`` where no float32 curve of two or more budgets is stored.
    """
    curve = budget_curve(summaries, kind, m, instrument).get("float32", [])
    if len(curve) < 2:
        return ""
    trend = curve_trend(curve)
    words = TREND_WORDS[trend]
    if trend == "growing" and len(curve) == 2:  # one step measured: it shows no convergence, not a growth to come
        words = f"not converged at {curve[0].max_steps:,} steps: the two budgets' intervals are disjoint"
    return (
        f"n50 at m = {m} of {' → '.join(f'{u.fit.n50:.1f}' for u in curve)} tokens at "
        f"{' → '.join(f'{u.max_steps:,}' for u in curve)} steps ({words})"
    )


def curve_trend(curve: list[UnitSummary]) -> str:
    """How a budget curve (units sorted by step budget, :func:`budget_curve`) moves n50, in one word.

    Returns:
        ``"growing"`` when the smallest and largest budgets' intervals are disjoint (:func:`facing_ends` reads
        ``"above"``): the smaller budget's n50 has not converged; ``"rising"`` when they are not, but the point
        estimate never falls from one budget to the next and rises by at least :data:`MIN_GAP` tokens a step on
        average (9.1 → 12.0 → 15.0, or 5.1 → 6.0 → 8.0): the intervals are too wide to settle a curve that still
        moves up; ``"flat"`` otherwise (the
        curve is not shown to move).

    Raises:
        ValueError: fewer than two units.
    """
    if len(curve) < 2:
        raise ValueError(f"a budget curve needs two or more budgets, got {len(curve)}")
    if facing_ends(curve[0], curve[-1])[0] == "above":
        return "growing"
    steps = [v.fit.n50 - u.fit.n50 for u, v in zip(curve, curve[1:])]
    if min(steps) >= 0 and sum(steps) >= MIN_GAP * len(steps):
        return "rising"
    return "flat"


def budget_curve_text(
    summaries: list[UnitSummary], kind: str, m: int = 1, instrument: str = "paper", *, dtype: str | None = None
) -> str:
    """One sentence per dtype (only ``dtype``'s, where given) on what the budget curve says, or that none is
    stored (chapters 3 and 5).

    Every budget of the curve is named with its n50. Disjoint intervals at the smallest and largest budget mean
    the smaller budget's n50 has not converged (it is a lower estimate); overlapping ones only mean the budgets
    are not shown to differ. With three or more budgets the sentence gives n50's move from each budget to the
    next (in %) and whether the last step's intervals are disjoint: a curve that has levelled off moves less
    at each step and ends in overlapping intervals.
    """
    curves = {dt: us for dt, us in budget_curve(summaries, kind, m, instrument).items() if dtype in (None, dt)}
    if not curves:
        return f"no budget curve is complete for {kind.replace('_', ' ')} at m = {m} yet"
    parts = []
    for dt, us in curves.items():
        a, b = us[0], us[-1]
        dis = sum(int(u.disagreements) for u in us)
        caveat = f" (whose decode paths disagreed at {dis} checks)" if dis else ""
        points = [f"with {u.budget_label.split(',')[0]}, {u.fit.describe()}" for u in us]
        text = f"in {dt}{caveat}, n50 at m = {m} is: {'; '.join(points)}"
        quiet = [u for u in us if u.patience is not None and patience_share(u) == 1.0]
        if quiet and any(u.patience is None for u in us):
            text += (
                f" (the patience of the {', '.join(str(u.max_steps) for u in quiet)}-step unit never ended a trial, "
                "so it ran the trials of no patience)"
            )
        verdict, why = facing_ends(a, b)
        lead = "At the smallest and largest budget, " + why if len(us) > 2 else why[0].upper() + why[1:]
        text += (
            ". "
            + lead
            + {
                "above": ", so the smaller budget's n50 has not converged and is a lower estimate",
                "overlap": ", so the budgets are not shown to differ at this precision (which does not prove convergence)",
                "unsettled": ", so these runs do not show that the larger budget raises it",
            }[verdict]
        )
        if len(us) >= 3:
            moves = ", ".join(f"{100 * (v.fit.n50 / u.fit.n50 - 1):+.0f} %" for u, v in zip(us, us[1:]))
            last_verdict, last_why = facing_ends(us[-2], b)
            text += (
                f"; from each budget to the next the point estimate moves by {moves}, and at the last step "
                + last_why
                + (
                    ": the curve has not levelled off"
                    if last_verdict == "above"
                    else ": the point estimate still rises at every step, so these intervals cannot show that the "
                    "curve has levelled off"
                    if curve_trend(us) == "rising"
                    else ""
                )
            )
        parts.append(text)
    return "; ".join(parts)


def budget_moves(
    summaries: list[UnitSummary], kind: str, max_steps: int, base_steps: int, *, dtype: str = "float32"
) -> list[tuple[int, UnitSummary, UnitSummary]]:
    """Per m, the same targets at two step budgets: how a larger budget moves n50 at every m stored.

    A slope measured at ``base_steps`` is a slope of that budget; if a larger budget moved every n50 by the same
    factor, it would move the slope by that factor too. This pairs, per m, the complete fitted unit of the
    authors' optimiser at ``max_steps`` with the one at ``base_steps`` that has the same target count (so the
    same targets) and the same :func:`patience_share` (so the same stopping rule), chapter 3's test of that
    "alike".

    Returns:
        (m, unit at base_steps, unit at max_steps) for every m with both, sorted by m.
    """

    def pick(steps: int) -> dict:
        found: dict = {}
        for u in summaries:
            if (u.kind, u.instrument, u.dtype, u.state, u.max_steps) == (kind, "paper", dtype, "complete", steps):
                if u.fit is not None and u.fit.ok and u.disagreements == 0:
                    found[(u.m, u.n_targets, patience_share(u))] = u
        return found

    base, big = pick(base_steps), pick(max_steps)
    pairs = {}
    for (m, t, share), u in big.items():
        if (m, t, share) in base and (m not in pairs or t > pairs[m][1].n_targets):
            pairs[m] = (base[(m, t, share)], u)
    return [(m, *pairs[m]) for m in sorted(pairs)]


def budget_slopes(summaries: list[UnitSummary], kind: str, max_steps: int, base_steps: int):
    """The slope through the :func:`budget_moves` pairs at each of the two budgets, on the same targets and m.

    Returns:
        ``(ms, slope at base_steps, slope at max_steps)`` (each a
        :class:`~accessibility_lib.experiments.slope_fit.SlopeFit` with the n50 intervals; tokens per vector), or
        None with fewer than two m stored at both budgets.
    """
    from accessibility_lib.experiments.slope_fit import fit_slope

    moves = budget_moves(summaries, kind, max_steps, base_steps)
    if len(moves) < 2:
        return None
    ms = [m for m, _, _ in moves]
    at = [
        fit_slope(ms, [u.fit.n50 for u in us], n50_ci=[u.fit.ci for u in us])
        for us in zip(*[(a, b) for _, a, b in moves])
    ]
    return ms, at[0], at[1]


def budget_condition_text(summaries: list[UnitSummary], kind: str, base_steps: int) -> str:
    """Whether a larger budget raises n50 at least as much at larger m, read from the stored pairs of
    :func:`budget_moves` at twice ``base_steps`` (the condition under which a slope measured at ``base_steps`` is
    a lower estimate and a bound-to-slope ratio an upper one; chapter 5). Moves are point estimates, in tokens.

    Returns:
        A parenthesis, e.g. ``" (on the same targets, 600 steps move the point estimates by +7.8 tokens at m = 1,
        …, so the condition is not established)"``. It never says the condition holds: where the point estimates
        grow with m and every move is settled, it says the condition is indicated, since intervals that settle
        each move above zero do not settle that the moves grow.
    """
    pairs = budget_moves(summaries, kind, 2 * base_steps, base_steps)
    if len(pairs) < 2:
        return f" (no two m have a {2 * base_steps}-step unit on the same targets yet, so that is untested)"
    grows = all(
        b2.fit.n50 - a2.fit.n50 >= b1.fit.n50 - a1.fit.n50 for (_, a1, b1), (_, a2, b2) in zip(pairs, pairs[1:])
    )
    settled = [m for m, a, b in pairs if facing_ends(a, b)[0] == "above"]
    if len(settled) == len(pairs):
        settle = ", and every move is settled by its intervals"
    elif settled:
        settle = f", and the intervals settle the move at m = {', '.join(map(str, settled))} only"
    else:
        settle = ", and the intervals settle none of them"
    moves = ", ".join(f"{b.fit.n50 - a.fit.n50:+.1f} tokens at m = {m}" for m, a, b in pairs)
    return (
        f" (on the same targets, {2 * base_steps} steps move the point estimates by {moves}"
        + ("; these grow with m" if grows else "; these do not grow at every step in m")
        + settle
        + (
            ": the point estimates meet the condition, but the intervals settle only that each move is above "
            "zero, not that the moves grow, so the condition is indicated, not established"
            if grows and len(settled) == len(pairs)
            else ", so the condition is not established"
        )
        + ")"
    )
