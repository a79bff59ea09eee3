"""n50 against the step budget: fit the stored budget curve of one (model, kind, m) and predict a larger budget.

Every stored n50 comes from a step budget b (300, 600, 1,200 optimiser steps) well below the authors' 3,000, and
the book's budget curves have not levelled off (issue 54). Before a 3,000-step unit runs, its n50 is *predicted*
from the same targets at the smaller budgets, and the prediction is stored beside the measurement.

Two two-parameter forms are fitted to the curve's n50s (tokens) against ln b:

- ``"power"``: ln n50 = a + γ·ln b — n50 grows by the same *factor* at every doubling of the budget;
- ``"loglinear"``: n50 = a + β·ln b — n50 grows by the same *number of tokens* at every doubling (a curve
  that slows down in ratio, but has no asymptote).

With three or more budgets each form keeps at least one residual degree of freedom and the one with the smaller
weighted squared residual (on ln n50, each n50 weighted by its interval) is chosen: the choice is a measurement,
not an assumption. With two budgets both forms pass through both points, so the form is taken from a longer
curve of the same model and kind (``form=``) or, failing that, ``"loglinear"`` (the lower of the two
extrapolations for a rising curve). A third, saturating form n50 = n∞ − c·b^(−δ) needs the increments per
doubling to shrink; where they do not, the asymptote is **not identified** and the record says so.

The interval is a parametric bootstrap: each budget's n50 is drawn from a split normal on ln n50 whose two halves
reach the unit's 95 % interval ends, the form is refitted and evaluated at the new budget; the 2.5 and 97.5
percentiles are the interval. The draws at different budgets are independent, while the nested budgets share
their targets (their errors are positively correlated), so the interval on the *growth* is conservative.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

__all__ = ["FORMS", "BudgetPrediction", "fit_budget_curve", "predict_from_summaries", "saturation", "unit_prediction"]

FORMS = ("power", "loglinear")
Z975 = 1.959963984540054


@dataclass
class BudgetPrediction:
    """A predicted n50 at one step budget from a budget curve (:func:`fit_budget_curve`).

    Attributes:
        target_steps: the budget predicted (optimiser steps).
        form: the form used (:data:`FORMS`); chosen_by: ``"residuals"`` (three or more budgets) or ``"given"``
            / ``"default"`` (two budgets).
        n50: the prediction (tokens); interval: its 95 % bootstrap interval (tokens; ``inf`` upper end where an
            input interval is open above).
        other: the other form's prediction and interval (``{"form", "n50", "interval"}``): the spread between
            the two is the model uncertainty a curve of three budgets cannot remove.
        budgets, n50s, intervals: the curve it was fitted to (steps, tokens, tokens).
        growth_per_doubling: the curve's n50 ratio at each doubling (or per step of the curve, per doubling).
        saturation: :func:`saturation`'s reading of the curve.
        residuals: form -> weighted sum of squared residuals on ln n50 (0 for two budgets).
    """

    target_steps: int
    form: str
    chosen_by: str
    n50: float
    interval: tuple[float, float]
    other: dict
    budgets: list[int]
    n50s: list[float]
    intervals: list[tuple[float, float]]
    growth_per_doubling: list[float]
    saturation: dict
    residuals: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-able (tuples as lists)."""
        d = asdict(self)
        d["interval"] = list(self.interval)
        d["intervals"] = [list(c) for c in self.intervals]
        return d

    def describe(self) -> str:
        """e.g. ``"52.3 [41.0, 66.8] tokens at 3,000 steps (power law, chosen by residuals; loglinear: 45.1)"``."""
        lo, hi = self.interval
        return (
            f"{self.n50:.1f} [{lo:.1f}, {hi:.1f}] tokens at {self.target_steps:,} steps ({self.form}, chosen by "
            f"{self.chosen_by}; {self.other['form']}: {self.other['n50']:.1f})"
        )


def _fit(form: str, lb: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, float]:
    """Weighted least squares of ``form`` on (ln b, n50): (coefficients [a, slope], weighted SSR on ln n50)."""
    target = np.log(y) if form == "power" else y
    X = np.stack([np.ones_like(lb), lb], 1)
    W = np.sqrt(w)
    coef, *_ = np.linalg.lstsq(X * W[:, None], target * W, rcond=None)
    fitted = X @ coef
    fitted_log = fitted if form == "power" else np.log(np.maximum(fitted, 1e-9))
    return coef, float(np.sum(w * (np.log(y) - fitted_log) ** 2))


def _eval(form: str, coef: np.ndarray, lb: float) -> float:
    v = coef[0] + coef[1] * lb
    return float(math.exp(v)) if form == "power" else float(v)


def saturation(budgets, n50s) -> dict:
    """Whether the curve identifies an asymptote n∞ (n50 = n∞ − c·b^(−δ)), from its last three budgets.

    Returns:
        ``{"identified": bool, "text": ..., "asymptote": n∞ or None}``: identified only when the budgets double
        and the last increment is positive and smaller than the one before (the curve slows in tokens, not only
        in ratio); then n∞ = n_last + d_last·q/(1 − q), q = d_last/d_before.
    """
    b, y = list(budgets), list(n50s)
    if len(b) < 3:
        return {"identified": False, "asymptote": None, "text": f"not identified: {len(b)} budgets (three are needed)"}
    (b0, b1, b2), (y0, y1, y2) = b[-3:], y[-3:]
    d1, d2 = y1 - y0, y2 - y1
    if not (math.isclose(b1 / b0, 2.0) and math.isclose(b2 / b1, 2.0)):
        return {"identified": False, "asymptote": None, "text": "not identified: the last budgets do not double"}
    if d2 <= 0 or d2 >= d1:
        return {
            "identified": False,
            "asymptote": None,
            "text": f"not identified: the increments per doubling are {d1:+.1f} then {d2:+.1f} tokens, no slowing",
        }
    q = d2 / d1
    n_inf = y2 + d2 * q / (1 - q)
    return {
        "identified": True,
        "asymptote": n_inf,
        "text": f"increments {d1:+.1f} then {d2:+.1f} tokens per doubling: asymptote about {n_inf:.1f} (3 points, no check)",
    }


def _log_sds(n50: float, ci) -> tuple[float, float]:
    lo, hi = float(ci[0]), float(ci[1])
    lo_sd = (math.log(n50) - math.log(lo)) / Z975 if 0 < lo < n50 else 0.05
    hi_sd = (math.log(hi) - math.log(n50)) / Z975 if math.isfinite(hi) and hi > n50 else math.inf
    return max(lo_sd, 1e-3), max(hi_sd, 1e-3)


def fit_budget_curve(
    budgets, n50s, intervals, target_steps: int, *, form: str | None = None, reps: int = 4000, seed: int = 0
) -> BudgetPrediction:
    """Fit n50 against the step budget and predict n50 at ``target_steps``, with a bootstrap interval.

    Args:
        budgets: (K,) step budgets (optimiser steps), K ≥ 2, distinct, all below ``target_steps``.
        n50s: (K,) n50s at those budgets (tokens, > 0).
        intervals: (K, 2) their 95 % intervals (tokens; an upper end may be ``inf``: the prediction's upper end
            is then ``inf`` too).
        target_steps: the budget to predict (optimiser steps).
        form: force a form of :data:`FORMS` (used as given with two budgets); None: choose by residuals with
            three or more budgets, ``"loglinear"`` with two.
        reps: bootstrap replicates; seed: their seed.

    Returns:
        A :class:`BudgetPrediction`.

    Raises:
        ValueError: fewer than two budgets, lengths that differ, repeated budgets, a budget ≥ ``target_steps``, a
            non-positive or non-finite n50, an interval that does not contain its n50, or an unknown form.
    """
    b = np.asarray(budgets, dtype=float)
    y = np.asarray(n50s, dtype=float)
    cis = [tuple(map(float, c)) for c in intervals]
    if b.ndim != 1 or len(b) < 2 or len(y) != len(b) or len(cis) != len(b):
        raise ValueError(
            f"a budget curve needs two or more budgets with one n50 and one interval each, got {len(b)} budgets, "
            f"{len(y)} n50s, {len(cis)} intervals"
        )
    if len(set(b.tolist())) != len(b):
        raise ValueError(f"budgets must be distinct, got {b.tolist()}")
    if b.max() >= target_steps:
        raise ValueError(f"target_steps = {target_steps} must exceed every budget of the curve, got {b.tolist()}")
    if not np.all(np.isfinite(y)) or np.any(y <= 0):
        raise ValueError(f"n50s must be finite and > 0 tokens, got {y.tolist()}")
    for n, (lo, hi) in zip(y, cis):
        if not lo <= n <= hi:
            raise ValueError(f"interval [{lo}, {hi}] does not contain its n50 {n}")
    if form is not None and form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    order = np.argsort(b)
    b, y, cis = b[order], y[order], [cis[i] for i in order]
    lb = np.log(b)
    sds = [_log_sds(n, c) for n, c in zip(y, cis)]
    w = np.array([1.0 / (0.5 * (lo + hi if math.isfinite(hi) else 2 * lo)) ** 2 for lo, hi in sds])
    fits = {f: _fit(f, lb, y, w) for f in FORMS}
    residuals = {f: fits[f][1] for f in FORMS}
    if form is not None:
        chosen, how = form, "given"
    elif len(b) >= 3:
        chosen, how = min(FORMS, key=lambda f: residuals[f]), "residuals"
    else:
        chosen, how = "loglinear", "default"
    lt = math.log(target_steps)
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((reps, len(b)))
    lo_sd = np.array([s[0] for s in sds])
    hi_sd = np.array([s[1] for s in sds])
    open_above = not np.all(np.isfinite(hi_sd))  # an open interval: draw it symmetric, report the end as inf
    hi_sd = np.where(np.isfinite(hi_sd), hi_sd, lo_sd)
    draws = np.exp(np.log(y)[None, :] + np.where(z < 0, z * lo_sd, z * hi_sd))  # (reps, K) tokens

    def boot(f: str) -> tuple[float, float]:
        preds = np.maximum(1.0, [_eval(f, _fit(f, lb, d, w)[0], lt) for d in draws])  # n50 ≥ 1 token
        return float(np.percentile(preds, 2.5)), math.inf if open_above else float(np.percentile(preds, 97.5))

    other = next(f for f in FORMS if f != chosen)
    pred = {f: _eval(f, fits[f][0], lt) for f in FORMS}
    growth = [float((y[i + 1] / y[i]) ** (math.log(2) / (lb[i + 1] - lb[i]))) for i in range(len(b) - 1)]
    return BudgetPrediction(
        int(target_steps),
        chosen,
        how,
        pred[chosen],
        boot(chosen),
        {"form": other, "n50": pred[other], "interval": list(boot(other))},
        [int(x) for x in b],
        [float(x) for x in y],
        cis,
        growth,
        saturation(b, y),
        residuals,
    )


def predict_from_summaries(
    summaries, *, kind: str, m: int, target_steps: int, instrument: str = "paper", dtype: str = "float32", **kw
) -> BudgetPrediction | None:
    """The prediction at ``target_steps`` from an artifact's budget curve of one kind and m.

    Uses :func:`accessibility_lib.runs.cramming_budget.budget_curve` (complete fitted units of one instrument and
    dtype, one stopping rule, the same targets at every budget), restricted to budgets below ``target_steps``. With
    two budgets only, the form is the one the same kind's m = 1 curve chooses, where that has three budgets.

    Returns:
        A :class:`BudgetPrediction`, or None where fewer than two budgets below ``target_steps`` are stored.
    """
    from accessibility_lib.runs.cramming_budget import budget_curve

    def curve_at(mm: int):
        below = [s for s in summaries if s.max_steps < target_steps]
        return budget_curve(below, kind, mm, instrument).get(dtype, [])

    curve = curve_at(m)
    if len(curve) < 2:
        return None
    by_ref = False
    if len(curve) == 2 and "form" not in kw:
        ref = curve_at(1)
        if len(ref) >= 3:
            kw["form"] = fit_budget_curve(
                [u.max_steps for u in ref], [u.fit.n50 for u in ref], [u.fit.ci for u in ref], target_steps
            ).form
            by_ref = True
    pred = fit_budget_curve(
        [u.max_steps for u in curve], [u.fit.n50 for u in curve], [u.fit.ci for u in curve], target_steps, **kw
    )
    if by_ref:
        pred.chosen_by = "the m = 1 curve's residuals"
    return pred


def unit_prediction(unit, summaries) -> dict | None:
    """The stored prediction of a unit's n50 from the budget curve of its kind and m, made before it runs.

    The curve is the unit's own instrument's where that has two or more smaller budgets stored, else the book's
    ``paper`` instrument's (its stored 300 … 1,200-step units, no patience): a prediction for the book's loop at
    the unit's budget, which the record says differs from the unit where the instrument or the patience differ.

    Args:
        unit: a :class:`~accessibility_lib.runs.cramming_units.CrammingUnit`.
        summaries: the artifact's units (:func:`accessibility_lib.runs.cramming_summary.summarize`).

    Returns:
        ``{"n50", "interval", "form", ..., "curve_instrument", "like_for_like", "differs"}`` (JSON-able), or None
        where no curve of two budgets below the unit's is stored.
    """
    for inst in dict.fromkeys((unit.instrument, "paper")):
        pred = predict_from_summaries(
            summaries, kind=unit.kind, m=unit.m, target_steps=unit.max_steps, instrument=inst, dtype=unit.dtype
        )
        if pred is not None:
            break
    else:
        return None
    differs = []
    if inst != unit.instrument:
        differs.append(f"instrument {unit.instrument} (the curve's: {inst})")
    if unit.patience is not None and unit.patience < unit.max_steps:
        differs.append(f"patience {unit.patience} (the curve's: none)")
    return {
        **pred.to_dict(),
        "curve_instrument": inst,
        "like_for_like": not differs,
        "differs": "; ".join(differs),
        "text": pred.describe(),
    }
