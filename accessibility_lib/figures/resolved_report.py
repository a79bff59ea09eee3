"""The lab notes' record of the resolved cells row: rows, the sampled law D, the checks, ε and sample dependence.

Every table reads the resolved artifacts (``book/data/support/resolved/<model>.json``, written by
``scripts/table1_resolved.py``) through :mod:`accessibility_lib.geometry.table1_resolved`; each function
returns ``(header, rows)`` for :func:`~accessibility_lib.figures.tables.md_table`, or short Markdown lines.
"""

from __future__ import annotations

import math

import numpy as np

from accessibility_lib.figures.support_reading import empty_share_bound, meaning
from accessibility_lib.figures.table1_report import headline, model_label
from accessibility_lib.geometry import table1_resolved as T1R
from accessibility_lib.geometry.cell_distribution import ResolvedCells
from accessibility_lib.theory import paper

__all__ = [
    "RATIOS",
    "rows_table",
    "d_table",
    "empty_share_table",
    "brute_force_check",
    "se_check_lines",
    "ratios_at_implied_table",
    "convergence_table",
    "like_for_like_table",
    "gemma_radii_table",
    "gemma_radii_notes",
    "paper_radii_exponents",
    "lab_summary",
]

RATIOS = ("cone/ball", "ellipsoid/ball", "cells/ellipsoid")


def _from_text(name: str, row: dict) -> str:
    f = row["from"]
    if name in ("ball", "cone"):
        return f"r = max ‖h‖₂ = {f['r_l2']:.4g}" + (
            f", enclosing α = {f['half_angle_deg']:.1f}°" if name == "cone" else ""
        )
    ax = f["semi_axes"]
    if name == "ellipsoid + variable ε":
        e_ = f["eps_i"]
        return (f"semi-axes at ε_i = 2⁻¹¹·(|c_i| + a_i); ε_i largest {e_['largest']:.4g}, median {e_['median']:.4g}, "
                f"smallest {e_['smallest']:.4g}")  # fmt: skip
    text = f"{ax['d']} semi-axes: largest {ax['largest']:.4g}, median {ax['median']:.4g}, smallest {ax['smallest']:.4g}"
    if "D" in f:
        D, q = f["D"], f["D"]["quantiles"]
        text += (f"; D: {D['tokens_sampled']} tokens sampled, {D['empty']} empty, {D['undecided']} undecided, "
                 f"E[ln p] = {D['mean_log_p']:.2f} ± {D['se_mean']:.2f}, quantiles 5/50/95 % = "
                 f"{q['0.05']:.1f} / {q['0.5']:.1f} / {q['0.95']:.1f}")  # fmt: skip
    return text


def rows_table(art: dict) -> tuple[list, list]:
    """One resolved artifact's five rows: C, ln P, ε, 2r/ε (r = max ‖h‖₂ in every row) and what each is computed from."""
    rows = []
    for name, row in T1R.rows_from_inputs(art["inputs"]).items():
        rows.append([name, f"{row['C']:.1f}", f"{row['log_packing']:.5g}",
                     "—" if row["eps"] is None else f"{row['eps']:.4g}",
                     "—" if row["two_r_over_eps"] is None else f"{row['two_r_over_eps']:.4g}", _from_text(name, row)])  # fmt: skip
    r_note = "2r/ε (r = max ‖h‖₂ for every row; the table above uses the largest semi-axis for the ellipsoid rows)"
    return ["support model", "C (tokens/vector)", "ln P (nats)", "ε", r_note, "computed from"], rows


def _unhit_share(rc: ResolvedCells, S: int) -> float:
    lp = np.asarray(rc.log_p, dtype=float)[np.asarray(rc.status) == "resolved"]
    lp = lp[np.isfinite(lp)]
    return float(lp[lp < -math.log(S)].sum() / lp.sum()) if lp.size and lp.sum() < 0 else 0.0


def d_table(arts: dict, mc_points: dict | None = None) -> tuple[list, list]:
    """Per model, the sampled law D: tokens, empty cells (by certificate), E[ln p], the median, what a uniform
    sample of S points would miss, cells/ellipsoid with its interval, and the empty share's 95 % bound.

    Args:
        arts: model -> resolved artifact with ``inputs``.
        mc_points: model -> S of this run's uniform Monte Carlo (default: the artifact's reference S).
    """
    rows = []
    for m, a in arts.items():
        rr = T1R.rows_from_inputs(a["inputs"])
        D = rr["ellipsoid + non-uniform cells"]["from"]["D"]
        S = int((mc_points or {}).get(m, a["inputs"]["uniform_points"]))
        rc = ResolvedCells.from_dict(a["inputs"]["cells"])
        n_lp = int(sum(c == "lp" for c in rc.certificate))
        ratio = rr["ellipsoid + non-uniform cells"]["C"] / rr["ellipsoid"]["C"]
        ci = tuple(c / rr["ellipsoid"]["C"] for c in T1R.cells_C_interval(a["inputs"]))
        vc = T1R.variance_corrected(a)
        k, n = int(D["empty"]), int(D["tokens_sampled"])
        rows.append([m, f"{n} of {a['d_vocab']}" + (f" (partial, {a['tokens_planned']:,} planned)" if T1R.partial_text(a) else ""),
                     f"{k} ({k - n_lp} pairwise, {n_lp} LP)", D["undecided"], f"{D['mean_log_p']:.2f} ± {D['se_mean']:.2f}",
                     f"{D['quantiles']['0.5']:.2f} ± {D['quantile_se']['0.5']:.2f}",
                     f"{100 * _unhit_share(rc, S):.0f} % (ln p < −ln {S:,})",
                     f"{ratio:.3f} [{ci[0]:.3f}, {ci[1]:.3f}] ideal variance"
                     + (f"; {vc['ratio']:.3f} [{vc['ratio_ci'][0]:.3f}, {vc['ratio_ci'][1]:.3f}] measured" if vc else ""),
                     f"{100 * empty_share_bound(k, n):.1f} %"])  # fmt: skip
    head = ["model", "tokens sampled", "empty cells (certificate)", "undecided", "E[ln p] ± SE (nats)", "median ln p",
            "share of Σ ln p a uniform sample of S points would not hit", "cells/ellipsoid [≈95 %]",
            "empty share q₀, 95 % upper bound"]  # fmt: skip
    return head, rows


def empty_share_table(arts: dict) -> tuple[list, list]:
    """What the empty-cell bound would do: past which length a sequence meets an empty cell with probability > ½."""
    rows = []
    for m, a in arts.items():
        rr = T1R.rows_from_inputs(a["inputs"])
        D = rr["ellipsoid + non-uniform cells"]["from"]["D"]
        q = empty_share_bound(int(D["empty"]), int(D["tokens_sampled"]))
        n_q = math.log(2) / -math.log1p(-q) if 0 < q < 1 else math.inf
        vc = T1R.variance_corrected(a)
        C = vc["C"] if vc else rr["ellipsoid + non-uniform cells"]["C"]
        rows.append([m, f"{100 * q:.1f} %", f"{n_q:.0f}", f"{C:.1f}", f"{n_q / C:.2f}"])
    return ["model", "empty share q₀ (95 % bound)", "n past which the median of S_n is −∞ (tokens)",
            "cells row C (tokens/vector)", "m at which C·m reaches it"], rows  # fmt: skip


def brute_force_check(art: dict | None, others: dict) -> list[str]:
    """The resolved estimator against brute-force counts on ``nano``, as short Markdown sentences.

    Args:
        art: nano's resolved artifact (with ``brute``), or None. others: model -> resolved artifact, for their
            median ln p.
    """
    if art is None or "brute" not in art:
        return ["No `nano` artifact with a brute-force check is stored in this checkout."]
    counts = np.asarray(art["brute"]["counts"])
    cells = ResolvedCells.from_dict(art["inputs"]["cells"])
    sel = cells.resolved & (counts[cells.tokens] >= 20)
    if int(sel.sum()) < 2:
        return ["The `nano` brute-force check resolves fewer than two sampled tokens."]
    S_b = art["brute"]["n_samples"]
    diff = cells.log_p[sel] - np.log(counts[cells.tokens[sel]] / S_b)
    c_sel = counts[cells.tokens[sel]].astype(float)
    poisson_sd = math.sqrt(float(np.mean(1.0 / c_sel)))  # sd of ln(count/S) for a Poisson count, first order
    se_d = diff.std(ddof=1) / math.sqrt(sel.sum())
    raw = cells.log_p[sel] - cells.se[sel] ** 2 / 2  # one run a token: the Jensen term is se²/2
    diff_raw = raw - np.log(counts[cells.tokens[sel]] / S_b)
    unhit = cells.resolved & (counts[cells.tokens] == 0)
    unhit_share = float(cells.log_p[unhit].sum() / cells.log_p[cells.resolved].sum())
    empty_hits = int(counts[cells.tokens[cells.status == "empty"]].sum())
    medians = ", ".join(
        f"{m}'s {T1R.rows_from_inputs(a['inputs'])['ellipsoid + non-uniform cells']['from']['D']['quantiles']['0.5']:.1f}"
        for m, a in others.items()
        if m != "nano" and "inputs" in a
    )
    return [
        f"{S_b:,} uniform points in the same region hit {int((counts > 0).sum()):,} of the {art['d_vocab']:,} cells.",
        f"On the {int(sel.sum())} sampled tokens they resolve (≥ 20 hits), resolved minus brute-force ln p averages "
        f"{diff.mean():+.3f} ± {se_d:.3f} nats: {'within' if abs(diff.mean()) < 2 * se_d else 'outside'} two standard "
        "errors.",
        f"The per-token spread is {diff.std(ddof=1):.2f} nats. The counts' own Poisson noise is about {poisson_sd:.2f} "
        f"of it, leaving about {math.sqrt(max(diff.var(ddof=1) - poisson_sd**2, 0.0)):.2f} for one splitting run.",
        f"Without the Jensen term the mean difference would be {diff_raw.mean():+.3f} ± "
        f"{diff_raw.std(ddof=1) / math.sqrt(sel.sum()):.3f}.",
        f"The brute-force side is biased too: ln(count/S) is low by about 1/(2·count), {float(np.mean(0.5 / c_sel)):.3f} "
        "nats here.",
        f"The cells certified empty got {empty_hits} of the brute-force points. {int(unhit.sum())} resolved tokens got "
        f"none; they carry {100 * unhit_share:.1f} % of Σ ln p.",
        f"So the check reaches ln p ≥ ln(20/{S_b:,}) = {math.log(20 / S_b):.1f} nats, the larger cells only. The median "
        f"ln p of nano's D is {float(np.median(cells.log_p[cells.resolved])):.1f}"
        + (f"; {medians}" if medians else "")
        + ". Smaller cells rest on the exact-volume tests (d = 2, 3) and the replicate check below.",
    ]


def se_check_lines(arts: dict) -> list[str]:
    """The replicate check of one run's stated SE, and the cells row under the measured variance, per model."""
    out = []
    for m, a in arts.items():
        chk = T1R.se_check(a)
        if chk is None:
            continue
        lo, hi = chk["sd_z_ci"]
        verdict = (
            "consistent with 1: the stated SE is the run's error"
            if lo <= 1 <= hi
            else f"above 1: one run's SE understates its error about {chk['sd_z']:.1f}-fold"
            if lo > 1
            else "below 1: the stated SE is conservative"
        )
        out.append(
            f"`{m}`: {chk['n']} tokens resolved again (seed {chk['seed']}). The sd of the standardised difference is "
            f"{chk['sd_z']:.2f} [{lo:.2f}, {hi:.2f}] (95 %), {verdict}."
        )
        vc = T1R.variance_corrected(a)
        if vc is not None:
            plain = T1R.rows_from_inputs(a["inputs"])
            k, klo, khi = vc["kappa"]
            out.append(
                f"With κ = {k:.2f} [{klo:.2f}, {khi:.2f}], each resolved ln p̂ gains (κ − 1)·se²/2. Then E[ln p] = "
                f"{vc['mean_log_p']:.2f} nats (against {plain['ellipsoid + non-uniform cells']['from']['D']['mean_log_p']:.2f}) "
                f"and the cells row C = {vc['C']:.1f} (against {plain['ellipsoid + non-uniform cells']['C']:.1f})."
            )
    return out


def ratios_at_implied_table(arts: dict) -> tuple[list, list]:
    """The paper's three slope-free ratios per column beside ours at the 2r/ε that column implies."""
    implied, implied_list = T1R.paper_implied_log2(), T1R.paper_implied_log2("list")
    at = {m: T1R.sweep_of(a, list(implied.values())) for m, a in arts.items()}
    rows = []
    for k, (col, x) in enumerate(implied.items()):
        alt = implied_list[col]
        row = [col, f"2^{x:.1f}" + (f" (2^{alt:.1f}, list slope)" if abs(alt - x) > 0.05 else ""),
               " / ".join(f"{v:.3f}" for v in paper.TABLE1_ROW_RATIOS[col])]  # fmt: skip
        for m in arts:
            vals = [at[m][r][k] for r in RATIOS]
            row.append(" / ".join("—" if v != v else f"{v:.3f}" for v in vals))
        rows.append(row)
    head = ["paper column", "implied 2r/ε", "paper: cone/ball / ellipsoid/ball / cells/ellipsoid",
            *[f"ours at that 2r/ε: {m}" for m in arts]]  # fmt: skip
    return head, rows


def convergence_table(arts: dict) -> tuple[list, list]:
    """The support fits on nested samples: radii, ball and ellipsoid C and the shape ratios, per model and size."""
    rows = []
    for m, a in arts.items():
        for r in T1R.convergence_rows(a["convergence"], int(a["d_vocab"])):
            rows.append([m, r["n_embeddings"], f"{r['r_l2']:.4g}", f"{r['r_inf']:.4g}", f"{r['ball']:.1f}",
                         f"{r['ellipsoid']:.1f}", f"{r['cone/ball']:.4f}", f"{r['ellipsoid/ball']:.4f}"])  # fmt: skip
    return ["model", "embeddings", "r (max L2)", "r∞", "C ball", "C ellipsoid", "cone/ball", "ellipsoid/ball"], rows


def like_for_like_table(arts: dict, supports: dict) -> tuple[list, list]:
    """What still differs between each of our models and the paper's columns, one row per model, in two tables
    narrow enough for the text column: where each column's numbers come from (checkpoint, embeddings sampled), then
    its precision and the ratios between Table 1's rows.

    Args:
        arts: model -> resolved artifact. supports: model -> ModelSupport of this run (for the Voronoi-box ratios).

    Returns:
        ((sources head, rows), (ratios head, rows)).
    """
    from accessibility_lib.models.fetch import SOURCES

    own = list(paper.cells_ratio_own_slope().values())
    rng = {k: (min(v[i] for v in paper.TABLE1_ROW_RATIOS.values()), max(v[i] for v in paper.TABLE1_ROW_RATIOS.values()))
           for i, k in enumerate(RATIOS)}  # fmt: skip
    rows = [["paper (range over its columns)", "original bf16/fp16 weights",
             f"{paper.EMBED_PROMPTS:,} prompts, lengths {paper.AUTHORS_EMBED_LENGTHS[0]}–{paper.AUTHORS_EMBED_LENGTHS[1]:,}",
             "—", f"{rng['cone/ball'][0]:.3f}–{rng['cone/ball'][1]:.3f}",
             f"{rng['ellipsoid/ball'][0]:.3f}–{rng['ellipsoid/ball'][1]:.3f}",
             f"{rng['cells/ellipsoid'][0]:.3f}–{rng['cells/ellipsoid'][1]:.3f} as printed "
             f"({min(own):.3f}–{max(own):.3f} with each column's own slope)", "—"]]  # fmt: skip
    for m, a in arts.items():
        conv = T1R.convergence_rows(a["convergence"], int(a["d_vocab"]))
        ckpt = SOURCES[m]["model"] if m in SOURCES else "the book's own model (float32, trained here)"
        sample = (f"{conv[0]['n_embeddings']:,} to {conv[-1]['n_embeddings']:,} embeddings of random prompts "
                  f"(lengths {', '.join(map(str, a['lengths']))}); rows on {T1R.table_fit(a)['n_embeddings']:,}")  # fmt: skip
        if "inputs" in a:
            rr = T1R.rows_from_inputs(a["inputs"])
            vc = T1R.variance_corrected(a)
            alpha = rr["cone"]["from"]["half_angle_deg"]
            cells = f"{rr['ellipsoid + non-uniform cells']['C'] / rr['ellipsoid']['C']:.3f}" + (
                f" ({vc['ratio']:.3f} measured variance)" if vc else ""
            )
            shape = [f"2^{math.log2(rr['ball']['two_r_over_eps']):.1f}",
                     f"{rr['cone']['C'] / rr['ball']['C']:.3f} (α = {alpha:.1f}°{', wider than a hemisphere' if alpha >= 90 else ''})",
                     f"{rr['ellipsoid']['C'] / rr['ball']['C']:.3f}", cells]  # fmt: skip
        else:
            fit = T1R.table_fit(a)
            Cs = T1R.shape_slopes(fit, int(a["d_vocab"]))
            shape = [f"2^{math.log2(2 * fit['r_l2'] / fit['eps']):.1f}", f"{Cs['cone'] / Cs['ball']:.3f}",
                     f"{Cs['ellipsoid'] / Cs['ball']:.3f}", "not resolved"]  # fmt: skip
        vb = supports.get(m)
        vb_text = "—"
        if vb is not None:
            rv = vb.columns["voronoi_box"].ratios()
            vb_text = f"{rv['cone/ball']:.3f} / {rv['ellipsoid/ball']:.3f} / {rv['cells/ellipsoid']:.3f}"
        rows.append([m, ckpt, sample, *shape, vb_text])
    sources = (["column", "checkpoint", "embeddings"], [r[:3] for r in rows])
    ratios = (["column", "2r/ε (argmax region)", "cone/ball", "ellipsoid/ball", "cells/ellipsoid (resolved)",
               "Voronoi box: cone/ball / ellipsoid/ball / cells/ellipsoid"], [[r[0], *r[3:]] for r in rows])  # fmt: skip
    return sources, ratios


def gemma_radii_table(gemma, arts: dict) -> tuple[list, list]:
    """Our Gemma-3-270M radii and cosines beside the authors' models list, and the candidates checked for the gap.

    Args:
        gemma: Gemma's :class:`~accessibility_lib.geometry.support.ModelSupport` (None: an empty table).
        arts: model -> resolved artifact (its largest convergence fit gives the radii of a larger sample).
    """
    if gemma is None:
        return ["quantity", "ours", "the authors' list"], []
    pm = paper.models()["Gemma-3-270m"]
    st = gemma.stats
    rows = [
        ["sampled last-layer embeddings", f"{st['samples']:,}", f"{paper.EMBED_PROMPTS:,} prompts"],
        ["largest L2 norm r₂", f"{st['l2']:.0f}", f"{pm.r_l2:.0f}"],
        ["largest coordinate r∞", f"{st['linf']:.0f}", f"{pm.r_inf:.2f}"],
        ["r∞ / r₂", f"{st['linf'] / st['l2']:.2f}", f"{pm.r_inf / pm.r_l2:.2f}"],
        ["mean cosine", f"{st['mean_cos']:.3f}", f"{pm.mean_cos:.3f}"],
    ]
    conv = arts.get("gemma-3-270m", {}).get("convergence")
    if conv:
        last = T1R.convergence_rows(conv, int(arts["gemma-3-270m"]["d_vocab"]))[-1]
        rows.append(
            [f"r₂ / r∞ over {last['n_embeddings']:,} embeddings", f"{last['r_l2']:.0f} / {last['r_inf']:.0f}", "—"]
        )
    src = gemma.source if isinstance(gemma.source, dict) else {}
    var = src.get("radius_variants")
    if not var:
        try:
            from accessibility_lib.geometry import support

            var = support.load_artifact("gemma-3-270m").source.get("radius_variants")
        except (FileNotFoundError, AttributeError):
            var = None
    if var:
        rv = var["radii"]
        rows += [
            ["final-norm weight, largest (loaded)", f"{var['norm_weight_max']:.0f}", "—"],
            [
                "h reproduces the logits: largest difference",
                f"{var['logit_error']:.1e}" if var["logit_error"] else "0",
                "—",
            ],
            ["L2 of the pre-norm residual", f"{rv['pre-norm']['l2']:,.0f}", "—"],
            ["L2 of the normalised vector, no weight", f"{rv['normalised, no weight']['l2']:.0f}", "—"],
            ["L2 of h/√d", f"{rv['h/√d']['l2']:.0f}", "—"],
        ]
    return ["quantity", "ours (4-bit GGUF, dequantized)", "the authors' list"], rows


def paper_radii_exponents() -> dict:
    """Column -> (log2 of 2^12·r₂/r∞ from the authors' listed radii, log2 of the 2r/ε its ball entry implies)."""
    implied = T1R.paper_implied_log2()
    out = {}
    for c, pm_name in paper.TABLE1_COLUMNS.items():
        pm = paper.models()[pm_name]
        out[c] = (math.log2(4096 * pm.r_l2 / pm.r_inf), implied[c])
    return out


def gemma_radii_notes(gemma) -> list[str]:
    """What the Gemma radii table says, in short sentences (empty without Gemma)."""
    if gemma is None:
        return ["Gemma-3-270M is neither fetched nor stored as an artifact in this checkout: "
                "`.venv/bin/python scripts/support_artifact.py --model gemma-3-270m` writes it."]  # fmt: skip
    fits = paper_radii_exponents()
    agree = [c for c, (a, b) in fits.items() if abs(a - b) < 0.1]
    differ = [f"{c} (2^{a:.1f} against 2^{b:.1f})" for c, (a, b) in fits.items() if abs(a - b) >= 0.1]
    g = fits.get("Gemma-270M")
    out = [
        "The GGUF loader subtracts 1 from Gemma-3's norm weights (the file stores w + 1). None of the candidates in "
        "the table gives the authors' radii: the gap is unexplained on our side.",
        "With ε tied to r∞, the Voronoi box's ball slope does not depend on the radii at all. The argmax region's "
        "depends on them through r₂/r∞ only. The cone and ellipsoid rows read the shape, so our Gemma column's "
        "slope-free ratios are not like for like with the paper's.",
    ]
    if g is not None:
        out.append(
            f"The paper's Gemma ball entry implies 2r/ε = 2^{g[1]:.1f}; 2^12·r₂/r∞ of the authors' own radii is "
            f"2^{g[0]:.1f}. That is the argmax region's ball, not the code's 4096, "
            + ("and they match." if abs(g[0] - g[1]) < 0.1 else "and they differ.")
        )
    out.append(
        "Across the paper's columns the two agree within 0.1 in the exponent for "
        + (", ".join(agree) or "none")
        + "; they differ for "
        + (", ".join(differ) or "none")
        + (". No one convention reproduces every column, so a match may be a coincidence." if differ else ".")
    )
    return out


def lab_summary(report) -> list[str]:
    """The lab notes' opening box: at most five lines, each a key number and the chapter 5 claim it supports
    (MyST, with links); lines whose inputs are missing are left out."""
    ch5, out = "{doc}`chapter 5 <05_support>`", []
    h = headline(report)
    if h:
        b = h["budgets"]
        beside = ", ".join(f"{r:.1f}× at {s}" for s, r, _ in b[:-1])
        out.append(f"Ball bound over the measured slope on {model_label(h['model'])}: {b[-1][1]:.1f}× at {b[-1][0]} "
                   f"steps{f' ({beside})' if beside else ''}, against the paper's {h['paper_range'][0]:g}–"
                   f"{h['paper_range'][1]:g}×. It is {ch5}'s answer ({{ref}}`lab-support-table1`).")  # fmt: skip
    g = paper_radii_exponents().get("Gemma-270M")
    if g is not None:
        same = abs(g[0] - g[1]) < 0.1
        out.append(f"The paper's Gemma ball entry implies 2r/ε = 2^{g[1]:.1f}; 2^12·r₂/r∞ of the authors' own radii is "
                   f"2^{g[0]:.1f}. " + ("So that entry counts the ball of radius r₂ at ε = r∞·2⁻¹¹, not the code's 2r/ε = 4096" if same
                   else "The two differ") + f". It bears on {ch5}'s note on the checkpoints ({{ref}}`lab-support-gemma`).")  # fmt: skip
    mean = meaning(report)
    if "drop_lo" in mean:
        out.append(f"From the ball to the resolved cells row, the support and the cells lower C by "
                   f"{mean['drop_lo']:.0f}–{mean['drop_hi']:.0f} %, {ch5}'s first point of \"What it means\" "
                   "({ref}`sec-cells-resolved`).")  # fmt: skip
    if "tightest" in mean:
        t = mean["tightest"]
        out.append(f"The tightest entry, the {t['row']} row of {t['title']}, is still {t['ratio']:.1f}× the measured "
                   f"slope: cramming stays far below every bound, as {ch5} concludes ({{ref}}`lab-support-table1`).")  # fmt: skip
    return out[:5]
