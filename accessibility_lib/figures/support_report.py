"""Chapter 5's support tables: the models' runs, their geometry, the cell Monte Carlo and the rows of each method.

Chapter 5 and its lab notes call :func:`run_models` once each (the result store makes the second call
cheap); the lab notes print the tables below. Each table function returns ``(header, rows)`` for
:func:`~accessibility_lib.figures.tables.md_table`.
"""

from __future__ import annotations

import math

from accessibility_lib.geometry import support, table1
from accessibility_lib.geometry import table1_resolved as T1R
from accessibility_lib.theory import paper

__all__ = [
    "run_models",
    "geometry_table",
    "cells_table",
    "rows_table",
    "row_ratio_table",
    "conv_slope_table",
]


def run_models(handles, names, params: dict, store) -> tuple[list, list[str]]:
    """Every model of ``names``: computed where loaded, else shown from its stored support artifact.

    Args:
        handles: ``[(name, handle)]`` loaded by :func:`~accessibility_lib.geometry.support.load_available`.
        names: the chapter's ``models`` parameter, in order. params: the checked parameters. store: the result store.

    Returns:
        ``(results, notes)``: :class:`~accessibility_lib.geometry.support.ModelSupport` per model (computed
        first), and one line per model shown from an artifact (its command, commit, date) or missing.
    """
    from accessibility_lib.ground.provenance import portable_command
    from accessibility_lib.runs import work

    results = [work.run_support(handle, name, params, store) for name, handle in handles]
    computed = {r.name for r in results}
    notes = []
    for name in names:
        if name in computed:
            continue
        try:
            res = support.load_artifact(name)
        except support.SupportArtifactMissingError as exc:
            notes.append(" ".join(str(exc).split()))
            continue
        results.append(res)
        src = res.source
        notes.append(
            f"{name}: not available here; shown from its stored artifact ({portable_command(src['command'])}, "
            f"commit {src['commit'][:12]}, {src['date']})"
        )
    return results, notes


def geometry_table(results) -> tuple[list, list]:
    """Per model: d, |V|, samples, largest L2 norm and coordinate, cosines, the two cone half-angles."""
    rows = []
    for r in results:
        st = r.stats
        rows.append([r.name, r.d, r.d_vocab, st["samples"], f"{st['l2']:.2f}", f"{st['linf']:.2f}",
                     f"{st['mean_cos']:.3f}", f"{st['min_cos']:.3f}", f"{st['alpha_enclosing_deg']:.1f}",
                     f"{st['alpha_paper_deg']:.1f}"])  # fmt: skip
    head = ["model", "d", "|V|", "samples", "L2 max", "L∞ max", "mean cos", "min cos", "α enclosing (°)",
            "α Voronoi box (°)"]  # fmt: skip
    return head, rows


def cells_table(results) -> tuple[list, list]:
    """Per model and method, what the uniform cell Monte Carlo resolved and how much the fill sets."""
    rows = []
    for r in results:
        for method, col in r.columns.items():
            c = col.cells
            fill = method == "argmax_region"
            rows.append([r.name, table1.METHOD_NAMES[method], c.n_samples, f"{c.tokens_hit} of {r.d_vocab}",
                         f"{100 * c.top_share:.1f} %",
                         f"{c.mean_log_p:.2f}" + (" (mostly fill: no SE)" if fill and c.fill_share > 0.5 else f" ± {c.se:.2f}"),
                         f"{100 * c.fill_share:.0f} %" if fill else "dropped (no fill)", col.extras.get("cells", "")])  # fmt: skip
    head = ["model", "method", "points S", "tokens hit", "largest cell", "E[ln p] ± SE (nats)",
            "share of Σ ln p from the fill", "cells"]  # fmt: skip
    return head, rows


def _fmt(x, spec=".1f") -> str:
    return "—" if x is None else format(x, spec)


def rows_table(result) -> tuple[list, list]:
    """One model's Table 1 rows under both methods, each with C, ln P, r, ε, 2r/ε and how it was computed."""
    rows = []
    for method, col in result.columns.items():
        for name in (*table1.ROWS, *table1.EXTRA_ROWS):
            if name not in col.rows:
                continue
            row = col.rows[name]
            rows.append([table1.METHOD_NAMES[method], name, _fmt(row.C), _fmt(row.log_packing, ".5g"),
                         _fmt(row.r, ".4g"), _fmt(row.eps, ".4g"), _fmt(row.two_r_over_eps, ".4g"),
                         row.note + (f" **Caveat:** {row.caveat}" if row.caveat else "")])  # fmt: skip
    head = ["method", "support model", "C (tokens/vector)", "ln P (nats)", "r (by row, see above)", "ε", "2r/ε", "how"]
    return head, rows


def row_ratio_table(results, resolved: dict) -> tuple[list, list]:
    """cone/ball, ellipsoid/ball and cells/ellipsoid: the paper's columns, then ours by model and method.

    Args:
        resolved: model -> resolved artifact; where it holds ``inputs``, the argmax-region cells/ellipsoid is
            the resolved one (with the measured variance where a replicate run rejects the ideal one).
    """
    implied = T1R.paper_implied_log2()
    rows = [[f"paper: {c}", f"2^{implied[c]:.1f} (implied)", *[f"{v:.3f}" for v in paper.TABLE1_ROW_RATIOS[c]]]
            for c in paper.TABLE1_COLUMNS]  # fmt: skip
    for r in results:
        for method, col in r.columns.items():
            rat = col.ratios()
            cells = f"{rat['cells/ellipsoid']:.3f}"
            a = resolved.get(r.name)
            if method == "argmax_region" and a is not None and "inputs" in a:
                rr = T1R.rows_from_inputs(a["inputs"])
                part = T1R.partial_text(a).strip()
                vc = T1R.variance_corrected(a)
                checked = "ideal splitting variance" + ("" if vc or T1R.se_check(a) else ", unchecked")
                cells = (f"{rr['ellipsoid + non-uniform cells']['C'] / rr['ellipsoid']['C']:.3f} resolved ({checked})"
                         + (f"; {vc['ratio']:.3f} [{vc['ratio_ci'][0]:.3f}, {vc['ratio_ci'][1]:.3f}] measured variance"
                            if vc else "")
                         + (f" ({part})" if part else "") + f"; {cells} Monte Carlo with fill")  # fmt: skip
            elif method == "argmax_region":
                cells += " (Monte Carlo with fill)"
            rows.append([f"ours: {r.name}, {table1.METHOD_NAMES[method]}",
                         f"2^{math.log2(col.rows['ball'].two_r_over_eps):.1f}",
                         f"{rat['cone/ball']:.3f}", f"{rat['ellipsoid/ball']:.3f}", cells])  # fmt: skip
    return ["column", "2r/ε", "cone/ball", "ellipsoid/ball", "cells/ellipsoid"], rows


def conv_slope_table() -> tuple[list, list]:
    """The paper's cells/ellipsoid against ln|V|/|slope| of the convolution slope each column was assigned,
    and of its own (the authors' code assigns the slopes by list position, in another order)."""
    rows = []
    own = paper.cells_ratio_own_slope()
    for col, pm_name in paper.TABLE1_COLUMNS.items():
        lnV = math.log(paper.models()[pm_name].d_vocab)
        got = paper.AUTHORS_CONV_SLOPE_ORDER_BUG[col]
        rows.append([col, f"{paper.TABLE1_ROW_RATIOS[col][2]:.3f}",
                     f"{lnV / abs(paper.AUTHORS_CONV_SLOPES[got]):.3f} (slope of {got})", f"{own[col]:.3f}"])  # fmt: skip
    return ["column", "paper's cells/ellipsoid", "ln|V|/|slope| as assigned", "with the column's own slope"], rows
