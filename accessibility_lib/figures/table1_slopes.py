"""The lab notes' record of Table 1's measured slopes: each slope's notes, its budget, the same targets at two
budgets, the differences from the authors' runs, and the ratios at the paper's ε and against random words.

Every function reads a :class:`~accessibility_lib.figures.table1_report.Table1Report` (its slopes and the
cramming unit summaries behind them) and returns ``(header, rows)`` for
:func:`~accessibility_lib.figures.tables.md_table`.
"""

from __future__ import annotations

import math

from accessibility_lib.figures.table1_report import KIND_WORDS, Table1Report, model_label
from accessibility_lib.geometry import table1_resolved as T1R
from accessibility_lib.runs import cramming_budget as CB
from accessibility_lib.runs import table1_measured as TM
from accessibility_lib.theory import paper

__all__ = [
    "slope_notes_table",
    "decode_paths_table",
    "differences_table",
    "LOOP_DIFFERENCES",
    "same_targets_table",
    "m1_table",
    "random_words_table",
    "eps_table",
]


def slope_notes_table(report: Table1Report) -> tuple[list, list]:
    """Every complete budget's slope, per model and target kind: the fit, its stopping rule, the failures at the
    cap, and (once per model and kind) the budget curve at m = 1."""
    rows = []
    for m, by_budget in report.measured.items():
        seen = set()
        for budget, by_kind in by_budget.items():
            for kind, s in by_kind.items():
                curve = "" if kind in seen else CB.budget_curve_text(report.summaries[m], kind, dtype="float32")
                seen.add(kind)
                rows.append([model_label(m), KIND_WORDS.get(kind, kind), budget, s.describe(), s.budget_label,
                             CB.budget_reading(s.units)[1], curve or "as above"])  # fmt: skip
    head = ["model", "target kind", "budget (steps)", "measured slope", "stopping rule", "failures at the cap",
            "budget curve at m = 1"]  # fmt: skip
    return head, rows


def decode_paths_table(report: Table1Report) -> tuple[list, list]:
    """Per model: targets whose two decode paths disagreed, over the complete float32 units of the authors' optimiser."""
    rows = []
    for m in report.measured:
        done = [
            u for u in report.summaries[m] if u.state == "complete" and u.dtype == "float32" and u.instrument == "paper"
        ]
        bad = [u for u in done if u.disagreements]
        rows.append([model_label(m), len(done), f"{sum(u.n_outcomes for u in done):,}",
                     sum(u.disagreements for u in done),
                     ", ".join(f"{u.kind} m = {u.m} at {u.max_steps} steps" for u in bad) or "none"])  # fmt: skip
    return ["model", "complete float32 units", "outcomes", "targets whose decode paths disagreed",
            "units with one (no slope uses them)"], rows  # fmt: skip


#: The cramming loop's own differences (the conventions appendix, "The cramming loop"), the same for every model,
#: target kind and budget of the book's loop: (step, what differs, what it does to n50).
LOOP_DIFFERENCES = (
    ("initial prompt", "ours starts from the mean and spread of the model's input embeddings, theirs from zero-mean "
     "noise at the scale of the raw embedding table", "the book's start crams more: it raises our n50"),
    ("patience", "theirs counts checks without a strict rise of the teacher-forced accuracy; ours resets also when "
     "the loss falls (where ours has a patience)", "theirs ends more failing trials early: it lowers their n50"),
    ("success test", "theirs is teacher-forced accuracy at a check, keeping the prompt after the next update; ours is "
     "greedy decoding of the kept prompt", "theirs counts prompts that do not decode: it raises their n50"),
)  # fmt: skip


def differences_table(report: Table1Report) -> tuple[list, list]:
    """Every known difference between our cramming units and the authors' runs: one row per model, kind and budget
    (:func:`~accessibility_lib.runs.table1_measured.differences_from_authors`), then one row per difference in the
    cramming loop itself (:data:`LOOP_DIFFERENCES`), which holds for every model, kind and budget."""
    from accessibility_lib.models.fetch import SOURCES

    rows = []
    for m, by_budget in report.measured.items():
        if m not in SOURCES:
            continue
        for budget, by_kind in by_budget.items():
            for kind, s in by_kind.items():
                if s.units:
                    by_target = {}
                    for u in s.units:  # differences_from_authors takes one stopping rule: the first unit's
                        by_target.setdefault((u.max_steps, u.patience), []).append(u)
                    for units in by_target.values():
                        rows.append([model_label(m), KIND_WORDS.get(kind, kind), budget,
                                     TM.differences_from_authors(units, m)])  # fmt: skip
    for step, what, effect in LOOP_DIFFERENCES:
        rows.append(["every model", "both", "every budget", f"cramming loop, {step}: {what}; {effect}"])
    return ["model", "target kind", "budget (steps)", "differences from the authors' runs"], rows


def same_targets_table(report: Table1Report) -> tuple[list, list]:
    """The natural-text slope on the same targets at two budgets (chapter 3's budget pairs), per model."""
    rows = []
    for m in report.measured:
        for kind in KIND_WORDS:
            budgets = sorted({u.max_steps for u in report.summaries[m] if u.kind == kind})
            for base, big in zip(budgets, budgets[1:]):
                moves = CB.budget_moves(report.summaries[m], kind, big, base)
                if not moves:
                    continue
                both = CB.budget_slopes(report.summaries[m], kind, big, base)
                n50 = "; ".join(f"m = {mm}: {a.fit.n50:.1f} → {b.fit.n50:.1f}" for mm, a, b in moves)
                if both is None:
                    slope = "fewer than two m at both budgets"
                else:
                    _, lo, hi = both
                    slope = f"{lo.slope:.1f} → {hi.slope:.1f}" + (
                        "" if lo.reliable and hi.reliable else " (not reliable)"
                    )
                rows.append([model_label(m), KIND_WORDS[kind], f"{base} → {big}", n50, slope])
    return ["model", "target kind", "budgets (steps)", "n50 on the same targets (tokens)",
            "slope through them (tokens per vector)"], rows  # fmt: skip


def m1_table(report: Table1Report) -> tuple[list, list]:
    """Our n50 at m = 1 on the budget curve beside the authors' (their published results), each on its own targets.

    An authors' n50 at or below the first length their sweep tries (:data:`~accessibility_lib.theory.paper.AUTHORS_SWEEP_MIN_LENGTH`)
    is the sweep's floor, so it is printed as a bound (``"≤ 10.00 ..."``), as chapter 3's lab notes read it.
    """
    rows = []
    for m in report.measured:
        pm = next((p for p in paper.AUTHORS_N50_M1 if p.lower() == m.lower()), None)
        if pm is None:
            continue
        for kind, theirs in paper.AUTHORS_N50_M1[pm].items():
            curve = CB.budget_curve(report.summaries[m], kind).get("float32", [])
            ours = "; ".join(f"{u.fit.n50:.1f} at {u.max_steps} steps ({u.n_targets} targets)" for u in curve)
            floor = theirs <= paper.AUTHORS_SWEEP_MIN_LENGTH  # their sweep starts there: a bound, not a crossing
            rows.append([model_label(m), KIND_WORDS.get(kind, kind), ours or "no budget curve",
                         ("≤ " if floor else "") + f"{theirs:.2f} at {paper.AUTHORS_CRAMMING_STEPS['max_steps']:,} steps"
                         + (f" (their sweep starts at {paper.AUTHORS_SWEEP_MIN_LENGTH})" if floor else "")])  # fmt: skip
    return ["model", "target kind", "our n50 at m = 1", "the authors' n50 at m = 1 (their repository)"], rows


def random_words_table(report: Table1Report) -> tuple[list, list]:
    """The paper's ball row converted to its random-words slopes, beside our random-words ball ratios.

    The paper divides by its natural-text slope only; ball × natural slope / random-words slope (the slopes of
    its cramming figures) gives the value to set beside a random-words column.
    """
    t1 = paper.table1()["ball (Cor 4.6)"]
    rows = []
    for c, pm in paper.TABLE1_COLUMNS.items():
        nat, rw = paper.MEASURED_SLOPES[pm]
        alt = paper.models()[pm].slope_natural
        rows.append([f"paper: {c}", f"{t1[c] * nat / rw:.1f}"
                     + (f" ({t1[c] * alt / rw:.1f} with the list's natural slope)" if abs(alt / nat - 1) > 0.01 else "")])  # fmt: skip
    for col in report.columns:
        if col.kind == "random_words" and col.method == "argmax_region":
            rows.append([f"ours: {col.title}", col.cells["ball"]])
    return ["column", "ball ratio against the random-words slope"], rows


def eps_table(report: Table1Report) -> tuple[list, list]:
    """Our natural-text ball ratios (argmax region) at each paper column's implied 2r/ε, beside ours at our ε."""
    from accessibility_lib.figures.support_reading import ball_ratio_at

    implied = T1R.paper_implied_log2()
    cols = report.natural()
    rows = []
    for c, x in implied.items():
        rows.append([c, f"2^{x:.1f}", *[f"{ball_ratio_at(col, report, x):.1f}" for col in cols]])
    rows.append(["ours (as computed)", "—",
                 *[f"{col.ball_ratio[0]:.1f} at 2^{math.log2(report.supports[col.model].columns[col.method].rows['ball'].two_r_over_eps):.1f}"
                   for col in cols]])  # fmt: skip
    return ["paper column", "its implied 2r/ε", *[f"ball ratio: {col.title}" for col in cols]], rows
