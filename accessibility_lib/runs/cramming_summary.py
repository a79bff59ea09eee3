"""Cramming artifacts summarised: every unit re-fitted from its outcomes, and the slopes through them.

:func:`summarize` turns an artifact's units into :class:`UnitSummary` rows (n50 with its interval, the
budget label, the share of failures that stopped at the step cap, the token-steps spent); :func:`slopes`
fits n50 against m for one budget, instrument and dtype.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accessibility_lib.runs.cramming_artifacts import UNIT_FIELDS, own_outcomes, refit_unit, upgrade
from accessibility_lib.runs.cramming_units import CrammingUnit


@dataclass
class UnitSummary:
    """One unit of an artifact, re-fitted from its per-target outcomes (:func:`summarize`).

    Attributes:
        uid, kind, m, max_steps, state, instrument, dtype, design: the unit (state: complete, partial, pending).
        lengths, rates, trials: (L,) lengths (tokens, the unit's convention), success fractions, targets.
        fit: the :class:`~accessibility_lib.experiments.fitting.SigmoidFit`, or for a progressive unit a
            :class:`ProgressiveFit`; None without outcomes.
        n_outcomes: per-target outcomes behind it; disagreements: KV-cache vs recompute disagreements.
        failures, failures_at_cap: failed outcomes, and those that used the whole step budget (a share
            near 1, with a patience, says the searches were still improving when the budget ended them).
        token_steps: forward+backward token-steps: for a complete fixed-length unit, what its search spent
            (every outcome it used, as if it had run alone); else those behind the outcomes so far;
            seconds: wall time when finished.
        budget_label: e.g. "300 steps (no patience), paper".
        n_targets: targets at the lengths that pin the crossing (10 or 20).
        patience: steps without improvement before a target is given up (None: none, every failure runs
            the whole budget).
        implied_successes: failures counted as successes by the prefix closure (``summarize(...,
            prefix_closure=True)``, natural targets only; 0 otherwise).
    """

    uid: str
    kind: str
    m: int
    max_steps: int
    state: str
    lengths: np.ndarray
    rates: np.ndarray
    trials: np.ndarray
    fit: object
    n_outcomes: int
    disagreements: int
    seconds: float | None
    instrument: str = "paper"
    dtype: str = "float32"
    design: str = "bisect"
    failures: int = 0
    failures_at_cap: int = 0
    token_steps: int = 0
    budget_label: str = ""
    n_targets: int = 10
    patience: int | None = None
    implied_successes: int = 0

    @property
    def cap_share(self) -> float:
        """Share of failures that stopped at the step cap (NaN without failures)."""
        return self.failures_at_cap / self.failures if self.failures else float("nan")

    @property
    def extrapolated(self) -> bool:
        """Whether the n50 interval is closed but an end lies outside the lengths tried (placed by the fitted
        curve's shape, not by a length on that side); False without a fixed-length fit."""
        return fit_extrapolated(self.fit, self.lengths)

    @property
    def placed_by_cap(self) -> bool:
        """Whether the n50 point is set by the fit's steepness bound, not by the data: every target crammed up to
        one length and none from the next (``fit.step``), or one length between all and none crammed
        (``fit.capped_at``); the data then place n50 only within the interval. False without a fixed-length fit."""
        return fit_placed_by_cap(self.fit)


@dataclass
class ProgressiveFit:
    """n50 of a progressive unit: the median horizon with an order-statistic interval."""

    n50: float
    ci: tuple[float, float]
    ok: bool
    capped: int

    def describe(self, digits: int = 1) -> str:
        if not self.ok:
            return "no n50 (no horizon)"
        lo, hi = self.ci
        return f"{self.n50:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}] (median horizon)"


def _summary_progressive(u: dict) -> tuple:
    from accessibility_lib.experiments.progressive import median_interval

    hz = np.array([int(r["horizon"]) for r in u["outcomes"]])
    if hz.size == 0:
        return np.zeros(0), np.zeros(0), np.zeros(0), None
    lengths = np.arange(max(1, hz.min()), hz.max() + 2, dtype=float)
    rates = np.array([np.mean(hz >= n) for n in lengths])
    med, ci = median_interval(hz)
    capped = int(sum(bool(r.get("capped")) for r in u["outcomes"]))
    return lengths, rates, np.full(lengths.shape, float(hz.size)), ProgressiveFit(med, ci, True, capped)


def _cost(u: dict, progressive: bool, n_prefix: int, token_steps) -> int:
    """A unit's token-steps: a progressive unit's stored total; a complete fixed-length unit's search cost
    as it ran (``search_token_steps``: every outcome its search used, as if it had run alone); else (an
    unfinished unit, or one stored before searches recorded their cost) the outcomes' own token-steps."""
    if "token_steps" in u:
        return int(u["token_steps"])
    if progressive:
        return 0
    if u.get("state") == "complete" and "search_token_steps" in u:
        return int(u["search_token_steps"])
    return token_steps(u["outcomes"], int(u["m"]), n_prefix)


def summarize(artifact: dict, *, prefix_closure: bool = False) -> list[UnitSummary]:
    """Every unit of an artifact (format 1 or 2) with its n50 re-fitted from the stored outcomes.

    Args:
        prefix_closure: re-fit each fixed-length natural-text unit on its outcomes closed under prefixes
            (:func:`accessibility_lib.experiments.prefix_closure.close_under_prefixes`: a failure whose
            passage was crammed at a longer length counts as a success; no cramming is re-run). Its
            budget label then ends in "prefix-closed" and ``implied_successes`` counts the flipped
            failures. Other target kinds are independent across lengths and are left as they are. The
            paper counts each length on its own (False, the default).
    """
    from accessibility_lib.experiments.n50 import token_steps
    from accessibility_lib.experiments.passage_horizons import with_horizon_interval
    from accessibility_lib.experiments.prefix_closure import close_under_prefixes

    art = upgrade(artifact)
    out = []
    for u in art["units"]:
        u = {**u, "outcomes": own_outcomes(u)}  # its own targets only (units with the same settings share a store)
        progressive = u.get("instrument", "paper").startswith("progressive")
        closed = prefix_closure and u["kind"] == "natural" and not progressive
        implied = 0
        if closed:
            u["outcomes"], implied = close_under_prefixes(u["outcomes"])
        lengths, rates, trials, fit = _summary_progressive(u) if progressive else refit_unit(u)
        if fit is not None and u["kind"] == "natural" and not progressive:  # one passage at several lengths
            fit = with_horizon_interval(fit, u["outcomes"], n_min=1 + int(u.get("layout", {}).get("n_given", 0) or 0))
        fails = [r for r in u["outcomes"] if not progressive and not r["success"]]
        cap = int(u["settings"]["max_steps"])
        n_prefix = len(u.get("layout", {}).get("prefix_ids") or [])
        unit = CrammingUnit(**{k: u[k] for k in UNIT_FIELDS if k in u})
        out.append(
            UnitSummary(
                u["uid"],
                u["kind"],
                int(u["m"]),
                int(u["max_steps"]),
                u.get("state", "pending"),
                lengths,
                rates,
                trials,
                fit,
                len(u["outcomes"]),
                sum(int(r.get("decode_disagreements", 0)) for r in u["outcomes"]),
                u.get("seconds"),
                u.get("instrument", "paper"),
                u.get("dtype", "float32"),
                u.get("design", "bisect"),
                len(fails),
                sum(int(r["steps"]) >= cap for r in fails),
                _cost(u, progressive, n_prefix, token_steps),
                unit.budget_label + (", prefix-closed" if closed else ""),
                int(u.get("n_targets", 10)),
                patience=u.get("patience"),
                implied_successes=implied,
            )
        )
    return out


def fit_extrapolated(fit, lengths) -> bool:
    """Whether a fixed-length fit's n50 interval is closed but has an end outside ``lengths`` (the (L,) lengths
    tried, tokens): placed by the fitted curve's shape, not by a length on that side. False without such a fit."""
    lengths = np.asarray(lengths, dtype=float)
    if fit is None or not getattr(fit, "ok", False) or not hasattr(fit, "ci_open") or any(fit.ci_open):
        return False
    return bool(lengths.size) and bool(fit.ci[0] < lengths.min() or fit.ci[1] > lengths.max())


def fit_placed_by_cap(fit) -> bool:
    """Whether a fixed-length fit's n50 point is set by its steepness bound (``fit.step`` or ``fit.capped_at``),
    not by the data. False without such a fit."""
    if fit is None or not getattr(fit, "ok", False) or not hasattr(fit, "capped_at"):
        return False
    return fit.step is not None or fit.capped_at is not None


def edge_notes_of(points) -> list[str]:
    """:func:`edge_notes` for fits that are not units: ``points`` is ``(m, fit, lengths)`` per prompt length m
    (chapter 3's own ``nano`` runs)."""
    from types import SimpleNamespace

    return edge_notes(
        [
            SimpleNamespace(m=m, extrapolated=fit_extrapolated(f, n), placed_by_cap=fit_placed_by_cap(f))
            for m, f, n in points
        ]
    )


#: a unit whose highest success rate over the lengths tried is below this has no rate near 1: its n50 is where a
#: plateau meets ½ (edge_notes)
PLATEAU_TOP = 0.75


def edge_notes(units: list) -> list[str]:
    """Clauses naming the m whose n50 interval has an end past the lengths tried (``extrapolated``), the m whose
    n50 point the steepness cap sets (``placed_by_cap``) and the m whose success rates stay below
    :data:`PLATEAU_TOP` at every length tried (``rates``; the logistic's fall from 1 is then never seen, and the
    share of targets the budget misses at every length moves n50 as much as the length does); empty when none.
    One wording for every printed slope."""
    ext = ", ".join(str(u.m) for u in units if getattr(u, "extrapolated", False))
    cap = ", ".join(str(u.m) for u in units if getattr(u, "placed_by_cap", False))
    notes = []
    if ext:
        many = "," in ext
        notes.append(
            f"the n50 interval{'s' if many else ''} at m = {ext} {'have' if many else 'has'} an end past the lengths "
            "tried, placed by the fitted curve's shape"
        )
    if cap:
        many = "," in cap
        notes.append(
            f"the n50 point{'s' if many else ''} at m = {cap} {'are' if many else 'is'} set by the fit's steepness "
            f"cap, the data placing {'them' if many else 'it'} only within {'their intervals' if many else 'its interval'}"
        )
    plateau = plateau_note(units)
    return notes + ([plateau] if plateau else [])


def plateau_note(units: list) -> str:
    """The clause naming the m whose success rates stay below :data:`PLATEAU_TOP` at every length tried, with
    each one's highest rate (%); empty when none. Part of :func:`edge_notes`, and said alone of one unit."""
    low = [u for u in units if len(getattr(u, "rates", ())) and float(max(u.rates)) < PLATEAU_TOP]
    if not low:
        return ""
    many = len(low) > 1
    return (
        f"at m = {', '.join(str(u.m) for u in low)} no length tried crams {100 * PLATEAU_TOP:.0f} % of its "
        f"targets (at most {', '.join(f'{100 * float(max(u.rates)):.0f} %' for u in low)}), so the "
        f"n50{'s sit' if many else ' sits'} where a plateau meets ½ and the targets the budget misses at "
        "every length move it as much as the length does"
    )


def one_per_settings(summaries: list[UnitSummary]) -> list[UnitSummary]:
    """The units with one complete unit per setting: where complete units differ only in their target
    count (10 and 20 targets of the same kind, m, budget, patience, instrument and dtype), the one with
    the most targets — the one :func:`slopes` fits — so a figure does not draw the same curve twice.
    Unfinished units are kept as they are; order is preserved."""
    best: dict = {}
    for u in summaries:
        if u.state == "complete":
            k = (u.kind, u.m, u.max_steps, u.patience, u.instrument, u.dtype)
            if k not in best or u.n_targets > best[k].n_targets:
                best[k] = u
    keep = {id(u) for u in best.values()}
    return [u for u in summaries if u.state != "complete" or id(u) in keep]


def slopes(
    summaries: list[UnitSummary], max_steps: int, *, instrument: str = "paper", dtype: str | None = None
) -> dict[str, tuple[list[UnitSummary], object]]:
    """Per target kind, the complete units of one budget, instrument and dtype with an n50, and their slope.

    Only complete units count: a partial unit's n50 rests on the lengths its search happened to reach
    (chapter 3 and chapter 5 read the same slopes). Units whose decode paths disagreed are left out (a
    bfloat16 run whose KV-cache decoding and full recompute differ does not measure one model). With
    several units at the same m (e.g. 10 and 20 targets) the one with more outcomes is used. A unit whose
    n50 interval is open at an end (it reached the edge of the lengths searched, ``fit.ci_open``) is
    returned but not fitted: its interval is a bound, not an interval, and would make the slope's look
    closed.

    Args:
        dtype: one dtype, or None for the dtype most units of that budget and instrument have.

    Returns:
        kind -> (complete units with a finite n50, sorted by m; the
        :class:`~accessibility_lib.experiments.slope_fit.SlopeFit` through those of them with a closed
        interval, with their n50 intervals, or None with fewer than two distinct m).
    """
    from collections import Counter

    from accessibility_lib.experiments.slope_fit import fit_slope

    pool = [s for s in summaries if s.max_steps == max_steps and s.instrument == instrument]
    if dtype is None and pool:
        dtype = Counter(s.dtype for s in pool).most_common(1)[0][0]
    out = {}
    for kind in sorted({s.kind for s in pool}):
        best: dict[int, UnitSummary] = {}
        for s in pool:
            ok = s.kind == kind and s.dtype == dtype and s.state == "complete" and s.disagreements == 0
            if ok and s.fit is not None and s.fit.ok:
                if s.m not in best or s.n_outcomes > best[s.m].n_outcomes:
                    best[s.m] = s
        pts = [best[m] for m in sorted(best)]
        fit = None
        closed = [s for s in pts if not any(getattr(s.fit, "ci_open", (False, False)))]
        if len(closed) >= 2:
            ci = [s.fit.ci for s in closed]
            ok_ci = all(np.all(np.isfinite(c)) for c in ci)
            fit = fit_slope([s.m for s in closed], [s.fit.n50 for s in closed], n50_ci=ci if ok_ci else None)
        out[kind] = (pts, fit)
    return out
