"""Table 1 rebuilt beside the paper's: the ratio columns, their tables and footnotes, chapter 5's headline.

The paper's Table 1 divides each support row's slope C (tokens per prompt vector) by the measured cramming
slope C_exp. Our columns divide our rows (:mod:`accessibility_lib.geometry.table1`, a model's
:class:`~accessibility_lib.geometry.support.ModelSupport`) by our slopes (:mod:`accessibility_lib.runs.table1_measured`),
**one column per step budget** that has complete units at every m = 1–4, so no ratio of a short budget reads as
the model's. The real models are read from the stored cramming artifacts
(:func:`~accessibility_lib.runs.real_models.with_cramming_artifacts`): a model crammed with the
documented command appears with no chapter edited. The cells row of the argmax-region method is the
resolved one where ``book/data/support/resolved/<model>.json`` exists
(:mod:`accessibility_lib.geometry.table1_resolved`).

Chapter 5 shows :func:`compact_table` and :func:`headline`; its lab notes show :func:`paper_table`,
:func:`our_table` and :func:`footnotes` for every model and budget. Both call :func:`build` once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from accessibility_lib.geometry import table1
from accessibility_lib.geometry import table1_resolved as T1R
from accessibility_lib.models import names
from accessibility_lib.runs import cramming_summary as CS
from accessibility_lib.runs import table1_measured as TM
from accessibility_lib.runs.real_models import with_cramming_artifacts
from accessibility_lib.theory import paper

__all__ = [
    "KINDS",
    "PAPER_ROW",
    "OurColumn",
    "Table1Report",
    "build",
    "ratio_cells",
    "paper_table",
    "our_table",
    "compact_table",
    "footnotes",
    "headline",
    "model_label",
]

KINDS = ("natural", "random_words")
#: our row name -> the paper's row label (the paper calls its ball row "ball (Cor 4.6)")
PAPER_ROW = {name: ("ball (Cor 4.6)" if name == "ball" else name) for name in table1.ROWS}
KIND_WORDS = {"natural": "natural text", "random_words": "random words"}


def model_label(name: str) -> str:
    """A model's name as the prose writes it: ``"smollm2-135m"`` -> ``"SmolLM2-135M"``
    (:func:`accessibility_lib.models.names.label`, the book's one mapping)."""
    return names.label(name)


@dataclass
class OurColumn:
    """One of our Table 1 columns: a model, a method, a target kind and a step budget.

    Attributes:
        model, method, kind: e.g. ``"smollm2-135m"``, ``"argmax_region"``, ``"natural"``.
        budget: optimiser steps per target (the slope's units all ran this budget).
        slope: the :class:`~accessibility_lib.runs.table1_measured.MeasuredSlope` it divides by.
        cells: row name (:data:`~accessibility_lib.geometry.table1.ROWS`) -> table text, e.g. ``"30.0 [26.1, 35.5]"``.
        C: row name -> the C divided (tokens per prompt vector; None where the method has no row).
        resolved: the cells row is the resolved one (§). edge: the slope rests on n50s at the edge of the
            lengths tried (‡).
    """

    model: str
    method: str
    kind: str
    budget: int
    slope: object
    cells: dict
    C: dict
    resolved: bool = False
    edge: bool = False

    @property
    def ball_ratio(self) -> tuple[float, tuple[float, float]]:
        """The ball row's ratio and its interval (the slope's, inverted)."""
        return TM.ratio(self.C["ball"], self.slope.fit)

    @property
    def title(self) -> str:
        """e.g. ``"SmolLM2-135M, natural text, 600 steps"``."""
        return f"{model_label(self.model)}, {KIND_WORDS.get(self.kind, self.kind)}, {self.budget} steps"


@dataclass
class Table1Report:
    """Everything the Table 1 tables read (:func:`build`).

    Attributes:
        columns: our columns, by model, budget, method, kind.
        supports: model -> its :class:`~accessibility_lib.geometry.support.ModelSupport`.
        measured: model -> budget -> kind -> MeasuredSlope (every complete budget, reliable or not).
        resolved: model -> resolved artifact (with its ``inputs``).
        notes: one line per model left out or read from a stored artifact, saying why.
        summaries: model -> its cramming units (:class:`~accessibility_lib.runs.cramming_summary.UnitSummary`).
    """

    columns: list
    supports: dict
    measured: dict
    resolved: dict
    notes: list = field(default_factory=list)
    summaries: dict = field(default_factory=dict)

    def natural(self, method: str = "argmax_region") -> list:
        """Our natural-text columns of one method (what the paper's columns are like for like with)."""
        return [c for c in self.columns if c.kind == "natural" and c.method == method]


def _resolved_cells(art: dict) -> dict:
    """The resolved cells row's C and interval: the measured splitting variance where a replicate rejects the ideal."""
    vc = T1R.variance_corrected(art)
    ideal = T1R.rows_from_inputs(art["inputs"])["ellipsoid + non-uniform cells"]["C"]
    return {
        "C": vc["C"] if vc else ideal,
        "C_ci": tuple(vc["C_ci"]) if vc else T1R.cells_C_interval(art["inputs"]),
        "ideal": ideal,
        "ideal_ci": T1R.cells_C_interval(art["inputs"]),
        "measured_variance": vc is not None,
    }


def ratio_cells(support, method: str, slope, resolved_art: dict | None = None) -> tuple[dict, dict, bool]:
    """One column's table texts: every Table 1 row's C divided by the slope, with its interval.

    Args:
        support: the model's :class:`~accessibility_lib.geometry.support.ModelSupport`.
        method: a key of :data:`~accessibility_lib.geometry.table1.METHODS`.
        slope: a :class:`~accessibility_lib.runs.table1_measured.MeasuredSlope`.
        resolved_art: the model's resolved artifact, whose cells row replaces the argmax-region one.

    Returns:
        ``(texts, C, resolved)``: row -> text (``"—"`` without C or a reliable slope; symbols † ¶ § as
        :func:`footnotes` explains), row -> C (tokens per prompt vector), and whether the cells row is resolved.
    """
    rows = support.columns[method].rows
    texts, Cs = {}, {}
    resolved = method == "argmax_region" and resolved_art is not None and "inputs" in resolved_art
    for name in table1.ROWS:
        C = rows[name].C if name in rows else None
        if name == "ellipsoid + non-uniform cells" and resolved:
            rc = _resolved_cells(resolved_art)
            C = rc["C"]
            text = TM.ratio_text(C, slope, C_ci=rc["C_ci"])
            text += " §" if text != "—" else ""
        else:
            text = TM.ratio_text(C, slope)
        if text != "—" and name == "ellipsoid + variable ε":
            text += " †"
        if text != "—" and name == "ellipsoid + non-uniform cells" and method == "voronoi_box":
            text += " ¶"
        texts[name], Cs[name] = text, C
    return texts, Cs, resolved


def build(results, models=None, *, kinds=KINDS, methods=table1.METHODS, cramming_folder=None) -> Table1Report:
    """Our Table 1 columns: every real model with a cramming artifact and a support result, every complete budget.

    Args:
        results: :class:`~accessibility_lib.geometry.support.ModelSupport` of this run (computed or stored); a
            real model not among them is read from its support artifact
            (:func:`~accessibility_lib.geometry.support.load_artifact`), and noted.
        models: the models to show (default: :func:`~accessibility_lib.runs.real_models.with_cramming_artifacts`).
        kinds, methods: which target kinds and support methods make columns.
        cramming_folder: where the cramming artifacts are (tests).

    Returns:
        A :class:`Table1Report`. A column is made only where the slope is reliable (at least three bracketed
        n50 and an interval that excludes 0); a model with neither a support result nor a support artifact is
        noted (with the command that writes the artifact), not shown.
    """
    from accessibility_lib.geometry import support as support_store
    from accessibility_lib.runs import cramming_artifacts as CA

    supports = {r.name: r for r in results}
    names = list(models) if models is not None else with_cramming_artifacts(cramming_folder)
    notes, measured, summaries = [], {}, {}
    for name in names:
        if name not in supports:  # crammed but not computed in this run: its stored support analysis
            try:
                supports[name] = support_store.load_artifact(name)
            except support_store.SupportArtifactMissingError as exc:
                notes.append(" ".join(str(exc).split()))
                continue
            notes.append(f"{model_label(name)}: support rows from its stored artifact (not computed in this run)")
        try:
            art = CA.load_artifact(name, cramming_folder)
        except CA.ArtifactMissingError as exc:
            notes.append(str(exc).splitlines()[0])
            continue
        summaries[name] = CS.summarize(art)
        measured[name] = TM.slopes_by_budget(name, kinds=kinds, summaries=summaries[name])
        if not measured[name]:
            notes.append(f"{name}: no budget has complete units at m = 1–4 yet")
    resolved_arts, _ = T1R.load_resolved(list(measured))
    resolved = {m: a for m, a in resolved_arts.items() if "inputs" in a}
    columns = []
    for name, by_budget in measured.items():
        for budget, by_kind in by_budget.items():
            for method in methods:
                for kind in kinds:
                    s = by_kind.get(kind)
                    if s is None or not s.reliable:
                        continue
                    texts, Cs, res = ratio_cells(supports[name], method, s, resolved.get(name))
                    edge = bool(CS.edge_notes(s.units))
                    columns.append(OurColumn(name, method, kind, budget, s, texts, Cs, res, edge))
    return Table1Report(columns, supports, measured, resolved, notes, summaries)


def _log2_x(report: Table1Report, col: OurColumn) -> float:
    return math.log2(report.supports[col.model].columns[col.method].rows["ball"].two_r_over_eps)


def paper_table() -> tuple[list, list]:
    """The paper's Table 1 as printed (ratios; PG19 slopes), with the 2r/ε each column's ball row implies.

    Returns:
        ``(header, rows)`` for :func:`~accessibility_lib.figures.tables.md_table`.
    """
    t1, cols = paper.table1_text(), list(paper.TABLE1_COLUMNS)
    implied, alt = T1R.paper_implied_log2(), T1R.paper_implied_log2("list")
    rows = [[name, *[t1[PAPER_ROW[name]][c] for c in cols]] for name in table1.ROWS]
    rows.append(
        [
            "2r/ε implied by the ball row",
            *[
                f"2^{implied[c]:.1f}" + (f" (2^{alt[c]:.1f}, list slope)" if abs(alt[c] - implied[c]) > 0.05 else "")
                for c in cols
            ],
        ]
    )
    return ["support model (paper's Table 1)", *[f"{c} / PG19" for c in cols]], rows


def our_table(report: Table1Report, model: str, budget: int) -> tuple[list, list]:
    """One model at one budget: both methods and both target kinds, every row, with the measured slope and 2r/ε.

    Returns:
        ``(header, rows)``; empty rows when the model has no column at that budget.
    """
    cols = [c for c in report.columns if c.model == model and c.budget == budget]
    head = [f"support model (ours: {model_label(model)}, {budget} steps)"]
    for c in cols:
        head.append(
            f"{table1.METHOD_NAMES[c.method]} / {KIND_WORDS[c.kind]}"
            + (" (cells resolved)" if c.resolved else "")
            + (" ‡" if c.edge else "")
        )
    rows = [[name, *[c.cells[name] for c in cols]] for name in table1.ROWS]
    rows.append(["measured slope C_exp (tokens per vector)", *[f"{c.slope.fit.slope:.1f}" for c in cols]])
    rows.append(["2r/ε", *[f"2^{_log2_x(report, c):.1f}" for c in cols]])
    return head, rows if cols else []


def compact_table(report: Table1Report) -> tuple[list, list]:
    """Chapter 5's results table: the paper's Gemma column and range beside our natural-text columns.

    Our columns are the argmax-region method's (natural text), one per model and complete budget; the paper's
    columns divide by its natural-text (PG19) slopes too. The last two rows give the measured slope and 2r/ε.
    A column whose slope rests on n50s at the edge of the lengths tried carries ‡ in its header
    (:func:`footnotes` explains it).

    Returns:
        ``(header, rows)`` for :func:`~accessibility_lib.figures.tables.md_table`.
    """
    t1, t1_text = paper.table1(), paper.table1_text()
    cols = list(paper.TABLE1_COLUMNS)
    ours = report.natural()
    implied = T1R.paper_implied_log2()
    gemma = "Gemma-270M"
    head = [
        "support model",
        f"paper: {gemma}",
        f"paper: range over its {len(cols)} models",
        *[f"ours: {c.title}" + (" ‡" if c.edge else "") for c in ours],
    ]
    rows = []
    for name in table1.ROWS:
        vals = t1[PAPER_ROW[name]]
        lo, hi = min(cols, key=vals.get), max(cols, key=vals.get)
        rng = f"{t1_text[PAPER_ROW[name]][lo]}–{t1_text[PAPER_ROW[name]][hi]}"
        rows.append([name, t1_text[PAPER_ROW[name]][gemma], rng, *[c.cells[name] for c in ours]])
    slopes = {c: paper.MEASURED_SLOPES[p][0] for c, p in paper.TABLE1_COLUMNS.items()}
    rows.append(
        [
            "measured slope C_exp (tokens per vector)",
            f"{slopes[gemma]:.2f}",
            f"{min(slopes.values()):.2f}–{max(slopes.values()):.2f}",
            *[f"{c.slope.fit.slope:.1f} [{c.slope.fit.ci[0]:.1f}, {c.slope.fit.ci[1]:.1f}]" for c in ours],
        ]
    )
    rows.append(
        [
            "2r/ε",
            f"2^{implied[gemma]:.1f} (implied)",
            f"2^{min(implied.values()):.1f}–2^{max(implied.values()):.1f} (implied)",
            *[f"2^{_log2_x(report, c):.1f}" for c in ours],
        ]
    )
    return head, rows


def footnotes(report: Table1Report, columns=None) -> list[str]:
    """One short note per symbol the given columns use (‡ § † ¶), each said once.

    Args:
        columns: the columns shown (default: all of the report's).
    """
    cols = report.columns if columns is None else list(columns)
    out = []
    edged = sorted({(c.model, c.kind, c.budget) for c in cols if c.edge})
    if edged:
        out.append(
            "‡ The slope rests on some n50s the data place only partly ("
            + "; ".join(f"{model_label(m)}, {KIND_WORDS[k]}, {b} steps" for m, k, b in edged)
            + "). Its interval, and the ratio's, leans on the fitted curve's shape there."
        )
    if any(c.resolved for c in cols):
        out.append(
            "§ The cells row is the resolved one. Its interval also holds that row's own sampling error: "
            "at least 90 % when both intervals are 95 %. The other rows carry the slope's error only."
        )
    if any(c.cells["ellipsoid + variable ε"].endswith("†") for c in cols):
        out.append(
            "† The paper gives no formula for this row; ours is the book's reading (ε_i a coordinate at a time)."
        )
    if any(c.method == "voronoi_box" and "¶" in c.cells["ellipsoid + non-uniform cells"] for c in cols):
        out.append(
            "¶ The Voronoi-box cells row keeps only the tokens its uniform points hit, as the authors' code does. "
            "It moves with the number of points."
        )
    return out


def headline(report: Table1Report) -> dict:
    """The numbers of chapter 5's answer: one real model's ball ratio at each budget, against the paper's.

    The model is the one with the most complete budgets (name order breaks ties); Gemma-3-270M, the one model
    in both the paper's table and ours, is given too where it has a column.

    Returns:
        ``{"model", "budgets": [(steps, ratio, (lo, hi))], "paper_range": (lo, hi), "paper_gemma",
        "gemma": [(steps, ratio, (lo, hi))], "text"}``; ``{}`` when no real model has a reliable natural slope.
        ``text`` is two sentences for the opening box.
    """
    nat = report.natural()
    if not nat:
        return {}
    by_model: dict[str, list] = {}
    for c in nat:
        by_model.setdefault(c.model, []).append(c)
    model = max(sorted(by_model), key=lambda m: len(by_model[m]))
    t1 = paper.table1()["ball (Cor 4.6)"]
    t1_text = paper.table1_text()["ball (Cor 4.6)"]
    lo_c, hi_c = min(t1, key=t1.get), max(t1, key=t1.get)
    budgets = [(c.budget, *c.ball_ratio) for c in sorted(by_model[model], key=lambda c: c.budget)]
    gemma = [(c.budget, *c.ball_ratio) for c in sorted(by_model.get("gemma-3-270m", []), key=lambda c: c.budget)]
    last = budgets[-1]
    falls = all(b[1] < a[1] for a, b in zip(budgets, budgets[1:]))
    earlier = ", ".join(f"{r:.1f}× [{lo:.1f}, {hi:.1f}] at {b}" for b, r, (lo, hi) in budgets[:-1])
    last_col = max(by_model[model], key=lambda c: c.budget)
    n_t = sorted({u.n_targets for u in getattr(last_col.slope, "units", [])})
    text = (
        f"On {model_label(model)}, the ball bound is {last[1]:.1f}× [{last[2][0]:.1f}, {last[2][1]:.1f}] the measured "
        f"cramming slope at {last[0]} steps"
        + (
            f" ({earlier}: the ratio {'falls' if falls else 'does not fall'} as the budget grows)."
            if len(budgets) > 1
            else "."
        )
        + (
            f" The {last[0]}-step slope rests on {n_t[0] if len(n_t) == 1 else f'{n_t[0]}–{n_t[-1]}'} targets a"
            " length, which sets the width of its interval."
            if n_t
            else ""
        )
        + f" The paper's ball row reads {t1_text[lo_c]}–{t1_text[hi_c]}× over its {len(t1)} models at "
        f"{paper.AUTHORS_CRAMMING_STEPS['max_steps']:,} steps"
    )
    if gemma and model != "gemma-3-270m":
        g = gemma[-1]
        text += f", {t1_text['Gemma-270M']}× for Gemma-3-270M, where ours is {g[1]:.1f}× at {g[0]} steps."
    else:
        text += "."
    return {
        "model": model,
        "budgets": budgets,
        "paper_range": (t1[lo_c], t1[hi_c]),
        "paper_gemma": t1["Gemma-270M"],
        "gemma": gemma,
        "text": text,
    }
