"""What the book finds, one sentence a finding, computed from the library and the stored artifacts.

The introduction states the book's results before any chapter does. Each :class:`Finding` is computed
here with the functions its chapter uses (no number is typed): the ball slope of chapter 1
(:func:`accessibility_lib.theory.bounds.ball_slope`), the measured cramming slope of chapter 3
(:func:`accessibility_lib.runs.table1_measured.measured_slopes` on ``book/data/cramming/<model>.json``), the
rebuilt Table 1 of chapter 5 (``book/data/support/<model>.json`` and the resolved-cells artifact), the
crossover of chapter 4 (:func:`accessibility_lib.theory.meanfield.crossover_log_m`), the copying cliff of
chapter 6 (``book/data/copying/finetune_smollm2-135m.json``) and the dtype grids of chapter 7.

Cost: a few seconds on two CPU cores, nearly all of it the re-fit of the cramming units (only the units
the slopes use are re-fitted: one model, one target kind, each complete budget).

Example:
    >>> f = bound_finding()
    >>> f.chapter, round(f.values["C"], 2), f.values["two_r_over_eps"]
    ('01_theory', 590.09, 4096.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from accessibility_lib.models.names import label as _label
from accessibility_lib.theory import bounds, meanfield, paper, precision

__all__ = [
    "Finding",
    "bound_finding",
    "cramming_finding",
    "table1_finding",
    "mean_field_finding",
    "copying_finding",
    "precision_finding",
    "findings",
    "budget_slopes",
    "complete_budgets",
    "measured_slope",
    "REAL_MODEL",
    "PAPER_MODEL",
]

#: the real model whose cramming the introduction reports (chapter 3's real-model section)
REAL_MODEL = "smollm2-135m"
#: the paper's model whose bound the introduction reports (chapter 1's worked example)
PAPER_MODEL = "Pythia-160M"


@dataclass(frozen=True)
class Finding:
    """One result of the book, as the introduction states it.

    Attributes:
        key: a short name, e.g. ``"bound"``.
        chapter: the stem of the chapter that derives it, e.g. ``"01_theory"``.
        sentence: one Markdown sentence holding the numbers (no link; the page adds it).
        values: the numbers the sentence holds, by name (for tests and glue).
    """

    key: str
    chapter: str
    sentence: str
    values: dict = field(default_factory=dict)


def bound_finding(model: str = PAPER_MODEL) -> Finding:
    """Chapter 1: the ball slope C (Cor 4.6) of one of the paper's models under the replication code's ε.

    C = d·ln(1 + 2r/ε)/ln|V| with r = r∞ and ε = r∞·2⁻¹¹ (``rinf_fp16``), so 2r/ε = 4096.

    Raises:
        KeyError: ``model`` is not in the authors' models list (:func:`accessibility_lib.theory.paper.models`).
    """
    pm = paper.models()[model]
    r, eps = precision.CONVENTIONS["rinf_fp16"].ball(pm.r_l2, pm.r_inf)
    C = bounds.ball_slope(pm.d_model, r, eps, pm.d_vocab)
    sentence = (
        f"Past n* = C·m tokens, most sequences are out of reach of every prompt of m vectors; for {model} at the "
        f"precision of the authors' public replication code (2r/ε = {2 * r / eps:.0f}), C = {C:.2f} tokens per "
        "prompt vector."
    )
    return Finding("bound", "01_theory", sentence, {"C": C, "two_r_over_eps": 2 * r / eps, "d": pm.d_model})


def _budget_units(artifact: dict, kind: str, max_steps: int, top_only: bool = True) -> dict:
    """The artifact with only the units a slope of ``kind`` at ``max_steps`` can use (their re-fit is the cost).

    ``top_only``: at each m only the complete unit with the most outcomes, the one
    :func:`accessibility_lib.runs.cramming_summary.slopes` takes when its fit is usable.
    """
    from accessibility_lib.runs.cramming_artifacts import own_outcomes

    keep = [
        u
        for u in artifact["units"]
        if u["kind"] == kind and u["max_steps"] == max_steps and u["instrument"] == "paper" and u["dtype"] == "float32"
    ]
    if top_only:
        top: dict = {}
        for u in keep:
            if u.get("state") == "complete" and (
                u["m"] not in top or len(own_outcomes(u)) > len(own_outcomes(top[u["m"]]))
            ):
                top[u["m"]] = u
        keep = list(top.values())
    return dict(artifact, units=keep)


def measured_slope(model: str = REAL_MODEL, kind: str = "natural", artifact: dict | None = None, max_steps=None):
    """The cramming slope of ``model`` at one step budget (a :class:`~accessibility_lib.runs.table1_measured.MeasuredSlope`).

    The same slope as ``table1_measured.measured_slopes(model, max_steps)[kind]``, re-fitting only the unit it
    takes at each m; where that unit's fit is not usable (fewer m come back), all candidate units are re-fitted.

    Args:
        max_steps: the budget (optimiser steps a target); None: the base budget
            (:data:`~accessibility_lib.runs.cramming_units.BASE_STEPS`).

    Raises:
        accessibility_lib.runs.cramming_artifacts.ArtifactMissingError: no stored artifact.
        KeyError: no unit of ``kind`` at that budget.
    """
    from accessibility_lib.runs import cramming_artifacts as CA
    from accessibility_lib.runs import table1_measured as TM
    from accessibility_lib.runs.cramming_units import BASE_STEPS

    steps = BASE_STEPS if max_steps is None else int(max_steps)
    art = artifact if artifact is not None else CA.load_artifact(model)
    top = _budget_units(art, kind, steps)
    s = TM.measured_slopes(model, max_steps=steps, artifact=top)[kind]
    if len(s.units) < len(top["units"]):  # a top unit without a usable fit: the next one may stand in
        s = TM.measured_slopes(model, max_steps=steps, artifact=_budget_units(art, kind, steps, top_only=False))[kind]
    return s


def complete_budgets(artifact: dict, kind: str = "natural", ms=(1, 2, 3, 4)) -> list[int]:
    """The step budgets at which every m of ``ms`` has a complete float32 unit of ``kind`` (the book's loop), ascending.

    Read from the stored units' states, with no re-fit (the chapters' :func:`~accessibility_lib.runs.table1_measured.
    complete_budgets` also drops units whose fit fails; :func:`budget_slopes` re-fits and drops those).
    """
    got: dict[int, set[int]] = {}
    for u in artifact["units"]:
        if (u["kind"], u["instrument"], u["dtype"], u.get("state")) == (kind, "paper", "float32", "complete"):
            got.setdefault(int(u["max_steps"]), set()).add(int(u["m"]))
    return sorted(b for b, m in got.items() if set(ms) <= m)


def budget_slopes(model: str = REAL_MODEL, kind: str = "natural", artifact: dict | None = None) -> dict:
    """Budget (steps) -> the reliable cramming slope of ``model`` at that budget, for every budget with m = 1–4 complete.

    Table 1 takes one slope a budget (chapter 5), so no slope of a short budget reads as the model's.

    Raises:
        accessibility_lib.runs.cramming_artifacts.ArtifactMissingError: no stored artifact.
        ValueError: no budget gives a reliable slope (the message says which budgets were tried).
    """
    from accessibility_lib.runs import cramming_artifacts as CA

    art = artifact if artifact is not None else CA.load_artifact(model)
    tried = complete_budgets(art, kind)
    out = {b: s for b in tried if (s := measured_slope(model, kind, art, b)).reliable}
    if not out:
        raise ValueError(f"{model}'s {kind} slope is not reliable at any complete budget (tried {tried} steps)")
    return out


def cramming_finding(slopes: dict | None = None, model: str = REAL_MODEL) -> Finding:
    """Chapter 3: the measured natural-text cramming slope of a real model at each complete step budget.

    Args:
        slopes: budget (steps) -> a reliable measured slope (:func:`budget_slopes`), to use instead of re-fitting.

    Raises:
        ValueError: no slope (no budget with a reliable one).
    """
    slopes = dict(sorted((slopes if slopes is not None else budget_slopes(model)).items()))
    if not slopes:
        raise ValueError(f"{model}: no reliable natural-text slope to report")
    (b0, s0), *rest = slopes.items()
    said = f"{s0.fit.slope:.1f} [{s0.fit.ci[0]:.1f}, {s0.fit.ci[1]:.1f}] tokens of natural text at {b0:,} optimisation steps a target"
    for b, s in rest:
        said += (
            f"{' and' if b == max(slopes) else ','} {s.fit.slope:.1f} [{s.fit.ci[0]:.1f}, {s.fit.ci[1]:.1f}] at {b:,}"
        )
    sentence = (
        f"On {_label(model)}, each prompt vector crams {said}: the measured slope is a lower bound that rises with "
        f"the step budget (the paper's is {paper.AUTHORS_CRAMMING_STEPS['max_steps']:,} steps)."
    )
    return Finding(
        "cramming", "03_cramming", sentence,
        {"slopes": {b: s.fit.slope for b, s in slopes.items()}, "ci": {b: tuple(s.fit.ci) for b, s in slopes.items()}},
    )  # fmt: skip


def table1_finding(slopes: dict | None = None, model: str = REAL_MODEL) -> Finding:
    """Chapter 5: the rebuilt Table 1 ratios (ball; ellipsoid + resolved cells) beside the paper's ranges.

    Our columns are chapter 5's ``argmax_region`` method; the cells row is the resolved one with the
    measured splitting variance where a replicate run measured it (else the ideal one), as chapter 5 reads it.
    The ratios divide by the slope at the largest complete step budget; the base budget's are given beside them.

    Args:
        slopes: budget (steps) -> a reliable measured slope (:func:`budget_slopes`), to use instead of re-fitting.
    """
    from accessibility_lib.geometry import support
    from accessibility_lib.geometry import table1_resolved as T1R

    slopes = dict(sorted((slopes if slopes is not None else budget_slopes(model)).items()))
    top, s = max(slopes), slopes[max(slopes)]
    first = slopes[min(slopes)]
    rows = support.load_artifact(model).columns["argmax_region"].rows
    ball_C, cells_C = rows["ball"].C, rows["ellipsoid + non-uniform cells"].C
    art = T1R.load_resolved([model])[0].get(model, {})
    if "inputs" in art:
        vc = T1R.variance_corrected(art)
        cells_C = vc["C"] if vc else T1R.rows_from_inputs(art["inputs"])["ellipsoid + non-uniform cells"]["C"]
    t1 = paper.table1()
    spans = {k: (min(t1[k].values()), max(t1[k].values())) for k in ("ball (Cor 4.6)", "ellipsoid + non-uniform cells")}
    ball_r, cells_r = ball_C / s.fit.slope, cells_C / s.fit.slope
    budget = paper.AUTHORS_CRAMMING_STEPS["max_steps"] / top  # their steps over ours
    implied, two_r = T1R.paper_implied_log2().values(), rows["ball"].two_r_over_eps  # the paper's ε and ours
    (b_lo, b_hi), (c_lo, c_hi) = spans.values()
    earlier = (
        f" ({ball_C / first.fit.slope:.1f} and {cells_C / first.fit.slope:.1f} at {min(slopes):,})"
        if len(slopes) > 1
        else ""
    )
    sentence = (
        f"Rebuilt for {_label(model)} with the radius of its own embeddings, the paper's Table 1 ratio of bound to "
        f"measured slope is {ball_r:.1f} for the ball and {cells_r:.1f} for the support's shape with unequal cells at "
        f"{top:,} optimisation steps{earlier}, against {b_lo:g}–{b_hi:g} and {c_lo:g}–{c_hi:g} over the paper's "
        f"{len(t1['ball (Cor 4.6)'])} models, which ran {budget:g}× our largest step budget at a finer ε "
        f"(2r/ε = 2^{min(implied):.1f}–2^{max(implied):.1f} against our 2^{math.log2(two_r):.1f})."
    )
    return Finding(
        "table1", "05_support", sentence,
        {"ball": ball_r, "cells": cells_r, "paper": spans, "budget": budget, "steps": top},
    )  # fmt: skip


def mean_field_finding(model: str = PAPER_MODEL, q: float = 1.0) -> Finding:
    """Chapter 4: how long a prompt must be before the mean-field bound beats the finite-length one.

    At 2r/ε = 4096 (chapter 4's comparison), for the width d of ``model``: m* = e^(ln m*) vectors, about
    10^k with k = floor(ln m* / ln 10) (m* has k + 1 decimal digits).
    """
    d = paper.models()[model].d_model
    ln_m = meanfield.crossover_log_m(d, 2048.0, 1.0, q)
    power = math.floor(ln_m / math.log(10))
    sentence = (
        f"The mean-field bound caps what prompts of any length can produce, but at {model}'s width (d = {d}) it "
        f"beats the finite-length bound only for prompts longer than about $10^{{{power}}}$ vectors."
    )
    return Finding(
        "mean_field", "04_mean_field", sentence, {"d": d, "ln_m_star": ln_m, "power": power, "digits": power + 1}
    )


def copying_finding() -> Finding | None:
    """Chapter 6: SmolLM2-135M fine-tuned to copy: where exact match falls, and Cor 4.10's n* beside it.

    n* under ``l2_fp16`` (r = the largest L2 norm, ε = r∞·2⁻¹¹), as chapter 6 computes it. None when the
    fine-tune's artifact holds no finished run.
    """
    from accessibility_lib.experiments import cliffs
    from accessibility_lib.runs import copying_outcomes, copying_report

    ft = copying_outcomes.load_artifact(copying_outcomes.COPYING_DATA / "finetune_smollm2-135m.json")
    if not ft or not ft.get("runs"):
        return None
    rec = next(iter(ft["runs"].values()))
    beyond = rec.get("eval_beyond")
    ev = {k: list(v) + (list(beyond["eval"][k]) if beyond else []) for k, v in rec["eval"].items()}
    c = cliffs.locate_cliff(ev["length"], ev["exact"], rec["eval_params"]["n_strings"])
    m = copying_report.mean_field_at_cliff(rec, c, rec["config"]["alphabet_size"], precision.L2_FP16)
    L = ft["settings"]["train_max_len"]
    digits = math.floor(m["log10_nstar"]) + 1  # decimal digits of n*, counted as chapter 4 counts them
    where = (
        f"its exact match falls through one half at n = {c.n50:.0f} [{c.low:.0f}, {c.high:.0f}] letters"
        if c.kind == "fall"
        else f"its exact match shows {copying_report.describe_cliff(c, short=True)}"
    )
    sentence = (
        f"Fine-tuned to copy strings of at most {L} letters, SmolLM2-135M copies longer ones too: {where}, while "
        f"the mean-field threshold n* has {digits:,} digits, so the cliff measures length generalisation, not the "
        "bound."
    )
    return Finding("copying", "06_copying", sentence,
                   {"L": L, "cliff": c, "log10_nstar": m["log10_nstar"], "digits": digits})  # fmt: skip


def precision_finding(model: str = PAPER_MODEL) -> Finding:
    """Chapter 7: the slope C from counting the values each number format can represent, no ε assumed.

    The bound is the count over each format's whole finite range (chapter 7's proposition, input prompts, no ε and
    no assumed box): C_dtype = d·ln N(max finite)/ln|V| (:func:`accessibility_lib.theory.fp_grid.whole_range_count`),
    for bf16, fp16 and fp32, beside the replication code's uniform grid, C = d·ln 4097/ln|V|. The counts in the cube
    of half-width r∞ of the last-layer states h (chapter 7's stand-in for the replication code's ball) stand beside
    them, labelled as the paper's geometry, not a theorem.

    Raises:
        KeyError: ``model`` is not in the authors' models list.
    """
    from accessibility_lib.theory import fp_grid

    pm = paper.models()[model]
    dts = ("bf16", "fp16", "fp32")
    C = {dt: fp_grid.whole_range_count(pm.d_model, dt, pm.d_vocab).slope for dt in dts}
    C_h = {dt: fp_grid.box_count([pm.r_inf] * pm.d_model, dt, pm.d_vocab).slope for dt in dts}
    grid = bounds.ball_slope(pm.d_model, 1.0, 2.0 / 4096, pm.d_vocab)
    sentence = (
        f"Counting the values a number format can represent over its whole finite range bounds C with no ε at all: "
        f"for {model} it gives {C['bf16']:.0f} in bf16, {C['fp16']:.0f} in fp16 and {C['fp32']:.0f} in fp32. Counted "
        f"in a cube of last-layer states of half-width r∞ = {pm.r_inf:g}, the paper's geometry rather than a theorem, "
        f"they are {C_h['bf16']:.0f}, {C_h['fp16']:.0f} and {C_h['fp32']:.0f}, against {grid:.0f} on the replication "
        "code's uniform grid in the same geometry."
    )
    return Finding("precision", "07_precision", sentence, {"C": C, "C_h_cube": C_h, "grid": grid})


def findings() -> list[Finding]:
    """The introduction's findings, in the order of the chapters (the copying one only where its run is stored)."""
    s = budget_slopes()
    out = [
        bound_finding(),
        cramming_finding(s),
        mean_field_finding(),
        table1_finding(s),
        copying_finding(),
        precision_finding(),
    ]
    return [f for f in out if f is not None]
