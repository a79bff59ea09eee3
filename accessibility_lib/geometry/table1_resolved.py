"""Table 1 rows recomputed from what they rest on: semi-axes, cone angle, ε and the resolved D.

The ``argmax_region`` column of :mod:`accessibility_lib.geometry.table1` fills the cells it does not see;
here the cells row uses D resolved token by token (:mod:`accessibility_lib.geometry.cell_distribution`),
and every row is a pure function of a small *inputs* record that the artifacts keep
(``book/data/support/resolved/<model>.json``):

    {"d", "d_vocab", "r_l2", "r_inf", "eps", "cone_half_angle" (radians), "semi_axes" (d,), "center" (d,),
     "lo" (d,), "hi" (d,) (the samples' per-coordinate range), "cells": ResolvedCells.to_dict(),
     "uniform_points": S (the uniform Monte Carlo the unhit share refers to)}

Rows (Section 5.2–5.3 of the paper; ln P in nats, C = slope in tokens per prompt vector):

- ball: ln P = d·ln(1 + 2r/ε), r = max ‖h‖₂; C = ln P/ln|V| (Cor 4.6).
- cone: ln P = ball + ln frac(α) (exact cap fraction, α the enclosing half-angle), clipped at 0.
- ellipsoid: ln P = Σ_i ln(1 + 2a_i/ε) over the semi-axes a_i of the enclosing axis-aligned ellipsoid.
- ellipsoid + non-uniform cells: C = n* where the median of S_n (D resolved, empty cells as p = 0)
  falls below −ln P_ellipsoid.
- ellipsoid + variable ε: ln P = Σ_i ln(1 + 2a_i/ε_i), ε_i = (ε/r∞)·(|c_i| + a_i) (the book's reading,
  :func:`accessibility_lib.theory.bounds.per_coordinate_eps`; at the stored ε, ε_i = 2⁻¹¹·(|c_i| + a_i)).

:func:`ratio_sweep`: the slope-free ratios (cone/ball, ellipsoid/ball, cells/ellipsoid) at other ε, region and D fixed.
"""

from __future__ import annotations

import math

import numpy as np

from accessibility_lib.geometry.cell_distribution import ResolvedCells, crossing_length_with_empty
from accessibility_lib.ground.checks import check_real
from accessibility_lib.theory import bounds

__all__ = [
    "ROW_NAMES",
    "cells_C_interval",
    "se_check",
    "variance_corrected",
    "REQUIRED",
    "rows_from_inputs",
    "shape_slopes",
    "convergence_rows",
    "ratio_sweep",
    "paper_implied_log2",
    "load_resolved",
    "partial_text",
]

ROW_NAMES = ("ball", "cone", "ellipsoid", "ellipsoid + non-uniform cells", "ellipsoid + variable ε")
REQUIRED = ("d", "d_vocab", "r_l2", "r_inf", "eps", "cone_half_angle", "semi_axes", "center", "lo", "hi", "cells")


def paper_implied_log2(slope_source: str = "figures") -> dict:
    """log2(2r/ε) that each of the paper's Table 1 columns implies: its ball row solved for 2r/ε.

    ball ratio = d·ln(1 + 2r/ε)/(ln|V|·C_exp) with C_exp the measured natural-text slope (paper §5), so
    log2(2r/ε) = log2(exp(ratio·C_exp·ln|V|/d) − 1). Pythia-160M gives 2^17.0, Qwen-0.5B 2^19.2,
    Gemma-270M 2^14.4.

    Args:
        slope_source: ``"figures"`` (the paper's cramming figures, :func:`accessibility_lib.theory.paper.measured_slope`)
            or ``"list"`` (the authors' models list where it differs from the figures: Pythia-1B's 287.4 against
            the figures' 261.42 gives 2^17.0 against 2^15.5, Pythia-410M's 112.4 against 111.14 2^16.8 against
            2^16.6; the other columns are the same).

    Returns:
        ``{column: log2(2r/ε)}`` over :data:`accessibility_lib.theory.paper.TABLE1_COLUMNS`.

    Raises:
        ValueError: an unknown slope_source.
    """
    from accessibility_lib.theory import paper

    if slope_source not in ("figures", "list"):
        raise ValueError(f"slope_source must be 'figures' or 'list', got {slope_source!r}")
    t1, models = paper.table1(), paper.models()
    out = {}
    for col, name in paper.TABLE1_COLUMNS.items():
        m = models[name]
        slope = (paper.MEASURED_SLOPES.get(col) or paper.MEASURED_SLOPES[name])[0]
        if slope_source == "list":
            alt = paper.measured_slope(name).other if name in paper.MEASURED_SLOPES else None
            slope = alt if alt is not None else slope
        x = t1["ball (Cor 4.6)"][col] * slope * math.log(m.d_vocab) / m.d_model
        out[col] = math.log2(math.expm1(x))
    return out


def _check(inp: dict) -> None:
    missing = [k for k in REQUIRED if k not in inp]
    if missing:
        raise ValueError(f"inputs lack {missing}; a Table 1 inputs record needs {list(REQUIRED)}")
    d = int(inp["d"])
    for k in ("semi_axes", "center", "lo", "hi"):
        if len(inp[k]) != d:
            raise ValueError(f"inputs[{k!r}] must have d = {d} entries, got {len(inp[k])}")


def _spread(v: np.ndarray) -> dict:
    return {"largest": float(v.max()), "median": float(np.median(v)), "smallest": float(v.min())}


def rows_from_inputs(inp: dict, eps: float | None = None) -> dict:
    """Every row of the column at precision ``eps`` (default: the stored ε), from ``inp`` alone.

    Args:
        inp: the inputs record (module docstring). eps: ε in embedding units (> 0).

    Returns:
        ``{row name: {"C", "log_packing", "eps", "two_r_over_eps", "from"}}``: slope (tokens per vector),
        ln P (nats), the ε used (None for the variable-ε row) and what the row was computed from.

    Raises:
        ValueError: a record without the required keys or with wrong lengths, eps ≤ 0.
    """
    _check(inp)
    e = check_real("eps", inp["eps"] if eps is None else eps, minimum=0.0, min_inclusive=False)
    d, V, r = int(inp["d"]), int(inp["d_vocab"]), float(inp["r_l2"])
    lnV = math.log(V)
    a = np.asarray(inp["semi_axes"], dtype=np.float64)
    x = 2.0 * r / e
    lp_ball = bounds.log_packing_ball(d, r, e, 1)
    alpha = float(inp["cone_half_angle"])
    lp_cone = max(0.0, lp_ball + bounds.cone_log_fraction(d, alpha))
    lp_ell = float(np.sum(np.log1p(2.0 * a / e)))
    cells = ResolvedCells.from_dict(inp["cells"])
    summ = cells.summary(-math.log(inp["uniform_points"]) if inp.get("uniform_points") else None)
    n_star = crossing_length_with_empty(cells.log_p[cells.resolved], cells.q_empty, lp_ell)
    eps_i = bounds.per_coordinate_eps(inp["center"], a, e / float(inp["r_inf"]))
    lp_var = bounds.log_packing_ellipsoid(a, eps_i, 1)
    axes = {**_spread(a), "d": d}
    return {
        "ball": {"C": lp_ball / lnV, "log_packing": lp_ball, "eps": e, "two_r_over_eps": x, "from": {"r_l2": r}},
        "cone": {
            "C": lp_cone / lnV,
            "log_packing": lp_cone,
            "eps": e,
            "two_r_over_eps": x,
            "from": {"r_l2": r, "half_angle_deg": math.degrees(alpha)},
        },
        "ellipsoid": {
            "C": lp_ell / lnV,
            "log_packing": lp_ell,
            "eps": e,
            "two_r_over_eps": x,
            "from": {"semi_axes": axes},
        },
        "ellipsoid + non-uniform cells": {
            "C": n_star,
            "log_packing": lp_ell,
            "eps": e,
            "two_r_over_eps": x,
            "from": {"semi_axes": axes, "D": summ},
        },
        "ellipsoid + variable ε": {
            "C": lp_var / lnV,
            "log_packing": lp_var,
            "eps": None,
            "two_r_over_eps": None,
            "from": {"semi_axes": axes, "eps_i": _spread(eps_i)},
        },
    }


def ratio_sweep(inp: dict, log2_x) -> dict:
    """Slope-free ratios at 2r/ε = 2^k for each k in ``log2_x`` (region and D fixed).

    Returns:
        ``{"log2_x": (K,), "cone/ball": (K,), "ellipsoid/ball": (K,), "cells/ellipsoid": (K,)}`` lists.

    Raises:
        ValueError: as :func:`rows_from_inputs`, or an empty ``log2_x``.
    """
    ks = [float(k) for k in log2_x]
    if not ks:
        raise ValueError("log2_x must name at least one value of log2(2r/ε)")
    out = {"log2_x": ks, "cone/ball": [], "ellipsoid/ball": [], "cells/ellipsoid": []}
    r = float(inp["r_l2"])
    for k in ks:
        rows = rows_from_inputs(inp, 2.0 * r / 2.0**k)
        C = {n: rows[n]["C"] for n in ROW_NAMES}
        out["cone/ball"].append(C["cone"] / C["ball"])
        out["ellipsoid/ball"].append(C["ellipsoid"] / C["ball"])
        out["cells/ellipsoid"].append(C["ellipsoid + non-uniform cells"] / C["ellipsoid"])
    return out


def shape_slopes(fit: dict, d_vocab: int, eps: float | None = None) -> dict:
    """Ball, cone and ellipsoid slopes (tokens per vector) of one support fit at ε (default: the fit's).

    Args:
        fit: ``{"r_l2", "eps", "cone_half_angle", "semi_axes"}`` (a convergence entry or an inputs record).
        d_vocab: |V|. eps: ε in embedding units.

    Raises:
        ValueError: missing keys, eps ≤ 0.
    """
    missing = [k for k in ("r_l2", "eps", "cone_half_angle", "semi_axes") if k not in fit]
    if missing:
        raise ValueError(f"fit lacks {missing}")
    e = check_real("eps", fit["eps"] if eps is None else eps, minimum=0.0, min_inclusive=False)
    a = np.asarray(fit["semi_axes"], dtype=np.float64)
    d, lnV = a.size, math.log(d_vocab)
    lp_ball = bounds.log_packing_ball(d, float(fit["r_l2"]), e, 1)
    lp_cone = max(0.0, lp_ball + bounds.cone_log_fraction(d, float(fit["cone_half_angle"])))
    return {"ball": lp_ball / lnV, "cone": lp_cone / lnV, "ellipsoid": float(np.sum(np.log1p(2.0 * a / e))) / lnV}


def convergence_rows(convergence: list, d_vocab: int) -> list:
    """Per nested sample size: embeddings, r, r∞, ε, the three shape slopes and their ratios (each at its own ε).

    Returns:
        a list of dicts ``{"n_embeddings", "r_l2", "r_inf", "eps", "ball", "cone", "ellipsoid",
        "cone/ball", "ellipsoid/ball"}`` sorted by sample size.
    """
    out = []
    for fit in sorted(convergence, key=lambda f: f["n_embeddings"]):
        C = shape_slopes(fit, d_vocab)
        out.append(
            {
                **{k: fit[k] for k in ("n_embeddings", "r_l2", "r_inf", "eps")},
                **C,
                "cone/ball": C["cone"] / C["ball"],
                "ellipsoid/ball": C["ellipsoid"] / C["ball"],
            }
        )
    return out


def load_resolved(names, folder=None) -> tuple[dict, list]:
    """The resolved-column artifacts of the models ``names`` that have one (JSON, ``book/data/support/resolved``).

    Returns:
        ``({name: artifact dict}, notes)``: one note per model without an artifact (or whose cells run did not
        finish: then only its convergence fits are returned), naming the command that writes it, and one per
        partial artifact (``"state": "partial"``: the tokens done so far of a run that continues).
    """
    import json
    from pathlib import Path

    from accessibility_lib.ground.paths import BOOK_DATA

    root = Path(folder or BOOK_DATA / "support" / "resolved")
    arts, notes = {}, []
    for name in names:
        path = root / f"{name}.json"
        if not path.exists():
            notes.append(
                f"{name}: no resolved-cells artifact ({path.name}); write it with "
                f"`nice .venv/bin/python scripts/table1_resolved.py --model {name}`"
            )
            continue
        arts[name] = json.loads(path.read_text())
        if "inputs" not in arts[name]:
            notes.append(f"{name}: its artifact holds the convergence fits only (the cells run did not finish)")
        elif partial_text(arts[name]):
            notes.append(
                f"{name}:{partial_text(arts[name])}; its cells row and D rest on those tokens (a uniform sample "
                f"of V all the same). Re-running its command ({arts[name]['provenance']['command']}) resumes it."
            )
    return arts, notes


def partial_text(art: dict) -> str:
    """``""`` for a finished artifact, else `` partial: k of n planned tokens resolved so far`` (words)."""
    if art.get("state", "complete") == "complete":
        return ""
    return f" partial: {art.get('tokens_done', 0):,} of {art.get('tokens_planned', 0):,} planned tokens resolved so far"


def shape_ratio_sweep(fit: dict, d_vocab: int, log2_x) -> dict:
    """cone/ball and ellipsoid/ball of one support fit at 2r/ε = 2^k (no D needed; semi-axes fixed).

    Returns:
        ``{"log2_x", "cone/ball", "ellipsoid/ball", "cells/ellipsoid"}`` lists, the last all NaN.
    """
    ks = [float(k) for k in log2_x]
    out = {"log2_x": ks, "cone/ball": [], "ellipsoid/ball": [], "cells/ellipsoid": [math.nan] * len(ks)}
    for k in ks:
        C = shape_slopes(fit, d_vocab, 2.0 * float(fit["r_l2"]) / 2.0**k)
        out["cone/ball"].append(C["cone"] / C["ball"])
        out["ellipsoid/ball"].append(C["ellipsoid"] / C["ball"])
    return out


def table_fit(art: dict) -> dict:
    """The support fit a resolved artifact's table uses (its ``inputs``, else the matching convergence fit)."""
    if "inputs" in art:
        return art["inputs"]
    return next(f for f in art["convergence"] if f["prompts_per_length"] == art["prompts_per_length"])


def sweep_of(art: dict, log2_x=None) -> dict:
    """An artifact's ratios against log2(2r/ε): its stored sweep, or (no D) the shape ratios of its fit."""
    if "sweep" in art and log2_x is None:
        return art["sweep"]
    ks = np.arange(10.0, 20.01, 0.5) if log2_x is None else log2_x
    if "inputs" in art:
        return ratio_sweep(art["inputs"], ks)
    return shape_ratio_sweep(table_fit(art), int(art["d_vocab"]), ks)


def se_check(art: dict, confidence: float = 0.95) -> dict | None:
    """How honest one run's stated SE is: the artifact's tokens resolved twice, with independent splitting seeds.

    For every token resolved in both the main run and ``art["replicate"]``, z = (ln p̂ − ln p̂') / √(se² + se'²)
    has mean 0 and standard deviation 1 when each SE is the run's true sampling error (and the two runs are
    independent). ``sd_z`` > 1 says the stated SE understates the spread of a single run by that factor.

    Returns:
        None without a replicate (or fewer than 3 common resolved tokens), else ``{"n", "sd_z", "sd_z_ci"
        (chi-square interval of a normal sample's sd, ``confidence``), "mean_diff" (nats), "mean_diff_se"
        (nats), "seed"}``. The check says nothing of a bias the two runs share (e.g. slow mixing at large d);
        only a reference volume (brute force, exact cells) can.
    """
    from scipy.stats import chi2

    rep = art.get("replicate")
    if not rep or "inputs" not in art:
        return None
    a, b = ResolvedCells.from_dict(art["inputs"]["cells"]), ResolvedCells.from_dict(rep["cells"])
    where = {int(t): i for i, t in enumerate(a.tokens.tolist())}
    pairs = [(where[int(t)], j) for j, t in enumerate(b.tokens.tolist()) if int(t) in where]
    pairs = [(i, j) for i, j in pairs if a.resolved[i] and b.resolved[j]]
    if len(pairs) < 3:
        return None
    i, j = np.array(pairs).T
    diff = a.log_p[i] - b.log_p[j]
    z = diff / np.sqrt(a.se[i] ** 2 + b.se[j] ** 2)
    n = z.size
    sd = float(np.sqrt(np.mean(z**2)))  # mean 0 under the hypothesis: n degrees of freedom
    lo, hi = chi2.ppf([(1 + confidence) / 2, (1 - confidence) / 2], n)
    return {
        "n": int(n),
        "sd_z": sd,
        "sd_z_ci": [float(sd * math.sqrt(n / lo)), float(sd * math.sqrt(n / hi))],
        "mean_diff": float(diff.mean()),
        "mean_diff_se": float(diff.std(ddof=1) / math.sqrt(n)),
        "seed": int(rep.get("seed", -1)),
    }


def cells_C_interval(inp: dict, confidence: float = 0.95) -> tuple[float, float]:
    """The cells row's C (tokens per prompt vector) with the sampling error of E[ln p]: first order,
    C ∝ 1/|E[ln p]|, so C·E/(E + z·SE) to C·E/(E − z·SE) (inf when E ≤ z·SE). The ideal splitting variance;
    :func:`variance_corrected` gives the interval under the measured one. Raises as :func:`rows_from_inputs`."""
    from scipy.stats import norm

    row = rows_from_inputs(inp)["ellipsoid + non-uniform cells"]
    return _sampling_interval(row["C"], row["from"]["D"], float(norm.ppf((1 + confidence) / 2)))


def _sampling_interval(x: float, D: dict, zq: float) -> tuple[float, float]:
    """x ∝ 1/|E[ln p]| (a cells-row C, or its ratio to the ellipsoid row) at E[ln p] ± zq·SE of ``D``."""
    E, se = abs(D["mean_log_p"]), D["se_mean"]
    return x * E / (E + zq * se), (x * E / (E - zq * se) if E > zq * se else math.inf)


def variance_corrected(art: dict, confidence: float = 0.95) -> dict | None:
    """The cells row again, with each token's Jensen term taken from the measured variance of one run.

    A resolved ln p̂ carries + se²/2 (se² = L/N, the ideal splitting variance; combine_replicates). When
    :func:`se_check` finds one run's spread κ = sd_z² times that, the unbiased correction is + κ·se²/2, so
    every resolved token gains (κ − 1)·se²/2 nats (first order: lognormal errors, one κ for all tokens).

    Returns:
        None unless the check shows the SE understated (its interval above 1); else ``{"kappa": [κ, lo, hi],
        "mean_log_p" (nats, at κ), "C" (tokens per vector, cells row at κ), "ratio" (cells/ellipsoid at κ),
        "ratio_ci", "C_ci"}``: the ratio's interval spans κ's interval and, at each end, E[ln p] ± z·SE (as the
        uncorrected row's), so it holds both the sampling error and the uncertainty of the correction; C_ci is
        the same interval for C (the ratio's times the ellipsoid row's C).
    """
    from scipy.stats import norm

    chk = se_check(art, confidence)
    if chk is None or chk["sd_z_ci"][0] <= 1:
        return None
    zq = float(norm.ppf((1 + confidence) / 2))
    cells = art["inputs"]["cells"]
    out = {"kappa": [chk["sd_z"] ** 2, chk["sd_z_ci"][0] ** 2, chk["sd_z_ci"][1] ** 2]}
    at = []
    for kappa in out["kappa"]:
        lp = [
            None if v is None else (v + (kappa - 1) * e * e / 2 if st == "resolved" else v)
            for v, e, st in zip(cells["log_p"], cells["se"], cells["status"])
        ]
        inputs = {**art["inputs"], "cells": {**cells, "log_p": lp}}
        rows = rows_from_inputs(inputs)
        D = rows["ellipsoid + non-uniform cells"]["from"]["D"]
        ratio = rows["ellipsoid + non-uniform cells"]["C"] / rows["ellipsoid"]["C"]
        at.append(
            (D["mean_log_p"], rows["ellipsoid + non-uniform cells"]["C"], ratio, _sampling_interval(ratio, D, zq))
        )
        C_ell = rows["ellipsoid"]["C"]
    mean_lp, C, ratio, _ = at[0]
    out.update(mean_log_p=mean_lp, C=C, ratio=ratio, ratio_ci=[min(c[0] for *_, c in at), max(c[1] for *_, c in at)])
    out["C_ci"] = [C_ell * v for v in out["ratio_ci"]]
    return out
