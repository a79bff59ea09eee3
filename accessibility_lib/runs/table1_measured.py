"""Table 1 on our own models: each support row's slope C over the cramming slope C_exp we measured.

The paper's Table 1 (Section 5.2) prints, per model, theoretical slope / measured cramming slope for
the ball (Cor 4.6), cone, ellipsoid and ellipsoid + cells rows. Here the measured slope is re-fitted
from a stored cramming artifact (``book/data/cramming/<model>.json``, chapter 3) — complete units of one
step budget, instrument and dtype — and the ratio carries the slope's interval:
C / C_exp ∈ [C / hi, C / lo] for C_exp ∈ [lo, hi] (C itself is computed, not sampled, at the column's ε).

Example:
    >>> from accessibility_lib.experiments.slope_fit import fit_slope
    >>> fit = fit_slope([1, 2, 3], [10.0, 20.0, 30.5], n50_ci=[(9, 11), (19, 21), (29, 32)])
    >>> r, (lo, hi) = ratio(1000.0, fit)
    >>> round(r, 1), lo < r < hi
    (97.6, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accessibility_lib.runs import cramming_artifacts as CA
from accessibility_lib.runs import cramming_summary as CS
from accessibility_lib.runs.cramming_units import BASE_STEPS
from accessibility_lib.theory import paper

__all__ = [
    "MeasuredSlope",
    "TABLE1_MS",
    "complete_budgets",
    "differences_from_authors",
    "measured_slopes",
    "ratio",
    "ratio_text",
    "slopes_by_budget",
]

#: the prompt sizes m a Table 1 column's slope needs complete units at (the m every real-model plan runs)
TABLE1_MS = (1, 2, 3, 4)


@dataclass
class MeasuredSlope:
    """One model's cramming slope for one target kind, from its stored artifact.

    Attributes:
        model, kind: e.g. ``"smollm2-135m"``, ``"natural"``.
        fit: the :class:`~accessibility_lib.experiments.slope_fit.SlopeFit` (tokens per prompt vector), or
            None with fewer than two complete m.
        units: the complete :class:`~accessibility_lib.runs.cramming_summary.UnitSummary` it rests on, by m.
        budget_label: the units' budget and instrument, e.g. "300 steps (no patience), paper".
        cap_share: share of the units' failures that used the whole step budget (NaN without failures).
    """

    model: str
    kind: str
    fit: object
    units: list
    budget_label: str
    cap_share: float

    @property
    def reliable(self) -> bool:
        """Three or more bracketed n50 and a slope interval that excludes 0 (what a ratio may be taken of)."""
        return self.fit is not None and self.fit.reliable

    def describe(self, notes: bool = True) -> str:
        """e.g. ``"C_exp = 11.2 [9.8, 12.6] (m = 1, 2, 3; R² 0.99)"`` or why there is none; the m whose n50
        interval is extrapolated past the lengths tried, or whose point the steepness cap sets, are named
        (``notes=False``: only said to exist, for a page that has already named them once)."""
        ms = ", ".join(str(u.m) for u in self.units)
        if self.fit is None:
            open_ms = [str(u.m) for u in self.units if any(getattr(u.fit, "ci_open", (False, False)))]
            why = (
                f"; the n50 interval at m = {', '.join(open_ms)} is open, a bound rather than an interval, so "
                "fewer than two m can be fitted"
                if open_ms
                else "; fewer than two m"
            )
            return f"no slope (complete at m = {ms or 'none'}{why})"
        lo, hi = self.fit.ci
        flag = (
            ""
            if self.reliable
            else "; not reliable: " + ("fewer than 3 m" if self.fit.n_points < 3 else "interval includes 0")
        )
        interval = f"[{lo:.1f}, {hi:.1f}]" if np.isfinite(lo) and np.isfinite(hi) else "(no interval from two points)"
        fit_text = (
            f"R² {self.fit.r_squared:.3f}" if self.fit.n_points >= 3 else "a line through two points, R² says nothing"
        )
        edges = "".join("; " + note for note in CS.edge_notes(self.units))
        if edges and not notes:
            edges = "; some n50s at the edge of the lengths tried, as its notes above say"
        return f"C_exp = {self.fit.slope:.1f} {interval} (m = {ms}; {fit_text}{flag}{edges})"


def measured_slopes(
    model: str,
    *,
    max_steps: int = BASE_STEPS,
    instrument: str = "paper",
    dtype: str = "float32",
    artifact: dict | None = None,
) -> dict[str, MeasuredSlope]:
    """Target kind -> the model's cramming slope from its stored artifact (complete units only).

    Args:
        model: the artifact's model name (``book/data/cramming/<model>.json``).
        max_steps, instrument, dtype: which units (one budget, one instrument, one dtype).
        artifact: an artifact dict instead of the stored file (tests).

    Raises:
        accessibility_lib.runs.cramming_artifacts.ArtifactMissingError: no stored artifact (names the command).
    """
    art = artifact if artifact is not None else CA.load_artifact(model)
    return _slopes(model, CS.summarize(art), max_steps, instrument, dtype)


def _slopes(model: str, summaries, max_steps: int, instrument: str, dtype: str) -> dict[str, MeasuredSlope]:
    done = [s for s in summaries if s.state == "complete"]
    out = {}
    for kind, (pts, fit) in CS.slopes(done, max_steps, instrument=instrument, dtype=dtype).items():
        fails = sum(u.failures for u in pts)
        capped = sum(u.failures_at_cap for u in pts)
        label = pts[0].budget_label if pts else ""
        out[kind] = MeasuredSlope(model, kind, fit, pts, label, capped / fails if fails else float("nan"))
    return out


def _complete(u, kind: str, instrument: str, dtype: str) -> bool:
    return (
        u.kind == kind
        and u.instrument == instrument
        and u.dtype == dtype
        and u.state == "complete"
        and u.disagreements == 0
        and u.fit is not None
        and bool(getattr(u.fit, "ok", True))
    )


def complete_budgets(
    summaries, kind: str, ms=TABLE1_MS, *, instrument: str = "paper", dtype: str = "float32"
) -> list[int]:
    """The step budgets at which every m of ``ms`` has a complete unit of ``kind``, ascending.

    Partial and pending units never count (a new budget appears once its last m completes), nor units whose
    decode paths disagreed or whose n50 could not be fitted (what :func:`measured_slopes` leaves out).

    Args:
        summaries: :class:`~accessibility_lib.runs.cramming_summary.UnitSummary` of one model.
        kind: target kind (``"natural"``, ``"random_words"``). ms: the prompt sizes required (vectors).
        instrument, dtype: which units.

    Returns:
        e.g. ``[300, 600]`` (steps).
    """
    need = {int(m) for m in ms}
    by_budget: dict[int, set[int]] = {}
    for u in summaries:
        if _complete(u, kind, instrument, dtype):
            by_budget.setdefault(int(u.max_steps), set()).add(int(u.m))
    return sorted(b for b, got in by_budget.items() if need <= got)


def slopes_by_budget(
    model: str,
    *,
    kinds=("natural", "random_words"),
    ms=TABLE1_MS,
    instrument: str = "paper",
    dtype: str = "float32",
    artifact: dict | None = None,
    summaries: list | None = None,
) -> dict[int, dict[str, MeasuredSlope]]:
    """Budget (steps) -> kind -> the model's cramming slope at that budget, for every budget with complete ``ms``.

    Table 1's real-model columns: one column a budget, so no ratio of a short budget reads as the model's.
    A kind appears at a budget only when all of ``ms`` are complete there (:func:`complete_budgets`); the
    slope is :func:`measured_slopes`' at that budget (every complete unit of it, by m).

    Args:
        model: the artifact's model name. kinds: target kinds to read. ms, instrument, dtype: as
            :func:`complete_budgets`. artifact: an artifact dict instead of the stored file (tests).
        summaries: the artifact's unit summaries, where the caller has them already
            (:func:`~accessibility_lib.runs.cramming_summary.summarize`; then no artifact is read).

    Raises:
        accessibility_lib.runs.cramming_artifacts.ArtifactMissingError: no stored artifact (names the command).
    """
    if summaries is None:
        summaries = CS.summarize(artifact if artifact is not None else CA.load_artifact(model))
    out: dict[int, dict[str, MeasuredSlope]] = {}
    for kind in kinds:
        for budget in complete_budgets(summaries, kind, ms, instrument=instrument, dtype=dtype):
            got = _slopes(model, summaries, budget, instrument, dtype)
            if kind in got:
                out.setdefault(budget, {})[kind] = got[kind]
    return dict(sorted(out.items()))


def ratio(C: float, fit, C_ci: tuple[float, float] | None = None) -> tuple[float, tuple[float, float]]:
    """C / C_exp and its interval: [C / hi, C / lo] from the slope's interval [lo, hi].

    With ``C_ci = (C_lo, C_hi)``, an interval for C itself (e.g. the cells row's sampling error,
    :func:`accessibility_lib.geometry.table1_resolved.cells_C_interval`), the interval is
    [C_lo / hi, C_hi / lo]: it holds whenever both intervals hold, so two 95 % intervals give at least
    90 % (the union bound; no independence assumed).

    Args:
        C: a theoretical slope (tokens per prompt vector), finite and > 0.
        fit: a reliable :class:`~accessibility_lib.experiments.slope_fit.SlopeFit`.
        C_ci: optional (low, high) interval of C (tokens per prompt vector), 0 < low ≤ C ≤ high; high may
            be inf (the ratio's upper end is then inf).

    Raises:
        ValueError: C not finite and positive, a slope whose interval does not exclude 0 (no ratio exists),
            or a ``C_ci`` that is not an interval of positive values containing C.
    """
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a finite positive slope (tokens per prompt vector), got {C}")
    lo, hi = fit.ci
    if not (np.isfinite(lo) and np.isfinite(hi) and lo > 0):
        raise ValueError(f"the measured slope's interval [{lo}, {hi}] does not exclude 0: C / C_exp has no bound")
    if C_ci is None:
        return C / fit.slope, (C / hi, C / lo)
    c_lo, c_hi = (float(v) for v in C_ci)
    if not (np.isfinite(c_lo) and 0 < c_lo <= C <= c_hi):  # NaN fails every comparison
        raise ValueError(f"C_ci must be an interval (low, high) with 0 < low <= C = {C} <= high, got {C_ci}")
    return C / fit.slope, (c_lo / hi, c_hi / lo)


def ratio_text(C: float | None, slope: MeasuredSlope, digits: int = 1, C_ci: tuple[float, float] | None = None) -> str:
    """A table cell: ``"97.6 [82.8, 118.8]"``, or ``"—"`` without C or without a reliable slope.

    ``C_ci``: C's own interval, carried into the ratio's as in :func:`ratio` (an infinite end prints "∞").
    """
    if C is None or not slope.reliable:
        return "—"
    r, (lo, hi) = ratio(C, slope.fit, C_ci)
    hi_text = f"{hi:.{digits}f}" if np.isfinite(hi) else "∞"
    return f"{r:.{digits}f} [{lo:.{digits}f}, {hi_text}]"


def differences_from_authors(units, model: str = "gemma-3-270m") -> str:
    """Every known difference between our cramming units of one model and the authors' runs, as one phrase.

    Gemma-3-270M is the one model both the paper's cramming experiment (Section 5.1, its cramming figure and
    Table 1) and these runs measure; for the other fetched model (SmolLM2-135M) the same list says how our
    runs differ from the authors' protocol, the model itself aside. Chapters 3 and 5 set n50 and slopes beside
    the paper's with this list.

    Args:
        units: one or more :class:`~accessibility_lib.runs.cramming_summary.UnitSummary` of one budget and
            one target kind (e.g. a slope's units, by m); the first gives the budget and kind.
        model: the units' model, a name in :data:`accessibility_lib.models.fetch.SOURCES` (their natural
            targets are Austen passages); it names the checkpoint and, for Gemma, the precision caveat.

    Returns:
        e.g. ``"budget (their 3000 steps with patience 500 against our 300 with patience 100, ...), text
        (Austen against their PG19), targets (...), estimator (...), weights (...) and precision (...)"``.

    Raises:
        ValueError: no units, units of more than one budget or target kind, or a model not in ``SOURCES``
            (the book's own models train and cram on other text; their differences are not this list).
    """
    from accessibility_lib.models.fetch import SOURCES

    if model not in SOURCES:
        raise ValueError(
            f"differences_from_authors lists the fetched real models' differences ({', '.join(SOURCES)}), got {model!r}"
        )
    units = list(units)
    if not units:
        raise ValueError("differences_from_authors needs at least one cramming unit")
    u = units[0]
    if {(v.kind, v.max_steps, v.patience) for v in units} != {(u.kind, u.max_steps, u.patience)}:
        raise ValueError(
            "differences_from_authors takes units of one target kind and one budget, got "
            + ", ".join(sorted({f"{v.kind} at {v.max_steps} steps" for v in units}))
        )
    a_steps = paper.AUTHORS_CRAMMING_STEPS
    per_m: dict[int, list[str]] = {}
    for v in units:
        per_m.setdefault(v.n_targets, []).append(str(v.m))
    fewer = {t: ms for t, ms in per_m.items() if t < paper.AUTHORS_CRAMMING_TARGETS}
    targets = "ours, not theirs" + (
        "; "
        + ", ".join(f"{t} a length at m = {', '.join(ms)}" for t, ms in sorted(fewer.items(), reverse=True))
        + f" where the crossing is pinned, against their {paper.AUTHORS_CRAMMING_TARGETS}"
        if fewer
        else ""
    )
    budget = (
        f"their {a_steps['max_steps']} steps with patience {a_steps['patience']} against our {u.max_steps} "
        + ("with no patience" if u.patience is None else f"with patience {u.patience}")
        + ", and a larger budget can only help a search that was still improving"
    )
    text = "text (Austen against their PG19)" if u.kind == "natural" else "word list (ours against theirs)"
    weights = f"weights ({SOURCES[model]['model']}, a 4-bit file)"
    precision = (
        "float32 against a setting we could not reproduce with their published code: its fp16 autocast fails on Gemma"
        if model.startswith("gemma")
        else "float32 against their published code's fp16 autocast"
    )
    estimator = (
        "estimator (their sigmoid fitted to a fixed grid of lengths, with no interval; ours a logistic fitted to the "
        "lengths our search chose, with a 95 % interval)"
    )
    return f"budget ({budget}), {text}, targets ({targets}), {estimator}, {weights} and precision ({precision})"
