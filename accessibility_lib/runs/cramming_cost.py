"""What the unfinished units of a cramming plan will cost: token-steps and hours, from the finished ones.

A unit's cost is counted in token-steps (optimiser steps × input positions, forward + backward;
:func:`accessibility_lib.experiments.n50.token_steps`). Its n50 grows about linearly in m and a failing
target costs the step budget × its length, so a pending unit is projected from the finished unit of the
same kind, instrument and dtype nearest in m (another fixed-length optimiser where none), scaled by m, by the step budget and by the target count. The rate
(token-steps per second of one worker) is the one the finished units of the same dtype measured on the
machine that ran them. Projections are estimates for planning, printed as such.

Example:
    >>> import numpy as np
    >>> from accessibility_lib.runs.cramming_summary import UnitSummary
    >>> def unit(m, state, ts, secs):
    ...     return UnitSummary(f"natural/m{m}", "natural", m, 300, state, np.zeros(0), np.zeros(0), np.zeros(0),
    ...                        None, 0, 0, secs, token_steps=ts)
    >>> p = plan_projection([unit(1, "complete", 100_000, 1000.0), unit(2, "pending", 0, None)])
    >>> p["rate_token_steps_per_s"], p["units"][0]["projected_token_steps"], p["hours_one_worker"]
    (100.0, 200000, 0.56)
"""

from __future__ import annotations

import math

__all__ = ["measured_rate", "projected_token_steps", "plan_projection"]


def measured_rate(summaries: list, dtype: str = "float32") -> float | None:
    """Token-steps per second of one worker over the complete units of ``dtype`` that recorded their time."""
    done = [s for s in summaries if s.state == "complete" and s.dtype == dtype and s.seconds and s.token_steps > 0]
    if not done:
        return None
    return sum(s.token_steps for s in done) / sum(float(s.seconds) for s in done)


def projected_token_steps(unit, summaries: list) -> float | None:
    """The token-steps a unit will have cost when complete, or None without a comparable finished unit.

    Args:
        unit: a :class:`~accessibility_lib.runs.cramming_summary.UnitSummary` (any state).
        summaries: every unit of the model (the finished ones are the reference).
    """
    if unit.state == "complete":
        return float(unit.token_steps)
    done = [s for s in summaries if s.state == "complete" and s.dtype == unit.dtype and s.token_steps > 0]
    ref = [s for s in done if s.kind == unit.kind and s.instrument == unit.instrument]
    if not ref and not unit.instrument.startswith("progressive"):  # another optimiser: same protocol, similar cost
        ref = [s for s in done if s.kind == unit.kind and not s.instrument.startswith("progressive")]
    if not ref:
        return None
    near = min(ref, key=lambda s: (abs(math.log(s.m / unit.m)), abs(math.log(s.max_steps / unit.max_steps))))
    scale = (unit.m / near.m) * (unit.max_steps / near.max_steps) * (unit.n_targets / near.n_targets)
    return max(float(unit.token_steps), near.token_steps * scale)


def plan_projection(summaries: list, dtype: str = "float32") -> dict:
    """The unfinished units of ``dtype``: spent and projected token-steps, and the hours left.

    Returns:
        ``{"rate_token_steps_per_s", "units": [{"uid", "state", "spent_token_steps",
        "projected_token_steps", "hours_left_one_worker"}], "hours_one_worker"}``; hours are None where
        no rate or no projection exists. Two workers on two cores take about half the hours.
    """
    rate = measured_rate(summaries, dtype)
    rows, total = [], 0.0
    for s in summaries:
        if s.state == "complete" or s.dtype != dtype:
            continue
        proj = projected_token_steps(s, summaries)
        left = None if proj is None or rate is None else max(0.0, proj - s.token_steps) / rate / 3600
        total += left or 0.0
        rows.append(
            {
                "uid": s.uid,
                "state": s.state,
                "spent_token_steps": int(s.token_steps),
                "projected_token_steps": None if proj is None else int(round(proj)),
                "hours_left_one_worker": None if left is None else round(left, 2),
            }
        )
    return {
        "rate_token_steps_per_s": None if rate is None else round(rate, 1),
        "units": rows,
        "hours_one_worker": round(total, 2) if rate is not None else None,
    }
