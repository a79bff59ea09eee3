"""D resolved token by token (geometry.cell_distribution) and Table 1 rows from their inputs (geometry.table1_resolved).

Expected values come from hand derivations: the threshold with empty cells for a Dirac D, the pairwise
dominator of a 1-D toy, the paper's ball row solved for 2r/ε; and every stored artifact's printed rows
are recomputed from the artifact's ``inputs`` alone.
"""

import json
import math

import numpy as np
import pytest
import torch

from accessibility_lib.geometry import convolution
from accessibility_lib.geometry import table1_resolved as T
from accessibility_lib.geometry.cell_distribution import (
    ResolvedCells,
    crossing_length_with_empty,
    median_with_empty,
    pairwise_dominator,
    resolve_cells,
)
from accessibility_lib.geometry.cell_problem import CellProblem
from accessibility_lib.geometry.regions import Box
from accessibility_lib.ground.paths import BOOK_DATA
from accessibility_lib.theory import bounds

RESOLVED = sorted((BOOK_DATA / "support" / "resolved").glob("*.json"))


def test_threshold_with_empty_cells_matches_the_hand_derivation():
    lp = np.full(5, -math.log(100.0))  # Dirac at p = 1/100
    # no empty cell: Cor 4.6, n* = ln P / ln 100
    assert crossing_length_with_empty(lp, 0.0, 10 * math.log(100)) == pytest.approx(10.0)
    # q0 = 0.1: (0.9)^n ≤ ½ first at n = 7 (0.9^6 = 0.531, 0.9^7 = 0.478): the median is −inf from n = 7 on
    assert median_with_empty(lp, 0.1, 6) == pytest.approx(-6 * math.log(100))
    assert median_with_empty(lp, 0.1, 7) == -math.inf
    assert crossing_length_with_empty(lp, 0.1, 10 * math.log(100)) == 7.0
    # ln P small enough that the finite part crosses first: linear interpolation as for q0 = 0
    assert crossing_length_with_empty(lp, 0.1, 3.5 * math.log(100)) == pytest.approx(3.5)
    # q0 = 0 and a spread D: the same as convolution.crossing_length
    spread = np.log(np.array([0.5, 0.3, 0.15, 0.05]))
    assert crossing_length_with_empty(spread, 0.0, 12.0) == pytest.approx(
        convolution.crossing_length(spread, 12.0, None, 2**14)
    )
    with pytest.raises(ValueError, match="q_empty"):
        crossing_length_with_empty(lp, 1.0, 1.0)


def test_pairwise_dominator_finds_a_token_that_wins_everywhere():
    # d = 1, the interval [−1, 1] (cube): z0 = 0, z1 = u + 5 (> z0 on all of [−1, 1]), z2 = −u
    problem = CellProblem(
        torch.tensor([[0.0], [1.0], [-1.0]], dtype=torch.float64),
        torch.tensor([0.0, 5.0, 0.0], dtype=torch.float64),
        "cube",
        {},
    )
    assert pairwise_dominator(problem, 0) == 1  # 0 − 5 + |0 − 1| = −4 < 0
    assert pairwise_dominator(problem, 2) == 1  # 0 − 5 + |−1 − 1| = −3 < 0
    assert pairwise_dominator(problem, 1) is None


def test_resolve_cells_counts_empty_cells_and_measures_the_others():
    g = np.random.default_rng(3)
    V, d = 12, 2
    W = g.normal(size=(V, d))
    b = g.normal(size=V)
    W[11], b[11] = W[0], b[0] - 10.0  # token 11 is token 0 shifted down: empty everywhere, dominated by 0
    box = Box(torch.full((d,), -1.0, dtype=torch.float64), torch.full((d,), 1.0, dtype=torch.float64))
    problem = CellProblem.from_region(torch.from_numpy(W), torch.from_numpy(b), box, dtype=torch.float64)
    U = problem.sample(400_000, torch.Generator().manual_seed(0))
    counts = np.bincount(problem.logits(U).argmax(1).numpy(), minlength=V)
    res = resolve_cells(problem, V, n_reps=4, n_particles=32, n_moves=10)
    assert res.status[11] == "empty" and res.certificate[11] == "pairwise j=0"
    for t in range(V):
        if counts[t] >= 400:  # brute force resolves it to ≤ 5 %: the estimate agrees within 4 SE + 0.05
            assert res.status[t] == "resolved"
            assert abs(res.log_p[t] - math.log(counts[t] / 400_000)) < 4 * res.se[t] + 0.05, t
        elif counts[t] == 0:
            assert res.status[t] in ("empty", "resolved")
    s = res.summary(unhit_below=math.log(1e-3))
    assert s["empty"] == int((res.status == "empty").sum()) >= 1
    assert s["tokens_sampled"] == V and s["resolved"] + s["empty"] + s["undecided"] == V
    assert s["mean_log_p"] == pytest.approx(float(res.log_p[res.resolved].mean()))
    back = ResolvedCells.from_dict(json.loads(json.dumps(res.to_dict())))
    np.testing.assert_array_equal(back.log_p, res.log_p)
    assert list(back.status) == list(res.status)


def _toy_inputs(V=10, d=3, lp=None):
    lp = [-math.log(V)] * 4 if lp is None else lp
    cells = {
        "tokens": list(range(len(lp))),
        "log_p": lp,
        "se": [0.01] * len(lp),
        "status": ["resolved"] * len(lp),
        "certificate": ["splitting"] * len(lp),
        "d_vocab": V,
    }
    return {
        "d": d,
        "d_vocab": V,
        "r_l2": 2.0,
        "r_inf": 1.5,
        "eps": 0.01,
        "cone_half_angle": math.pi / 3,
        "semi_axes": [2.0, 1.0, 0.5],
        "center": [0.0] * d,
        "lo": [-1.0] * d,
        "hi": [1.0] * d,
        "cells": cells,
    }


def test_rows_follow_the_papers_formulas():
    inp = _toy_inputs()
    rows = T.rows_from_inputs(inp)
    lnV = math.log(10)
    assert rows["ball"]["log_packing"] == pytest.approx(3 * math.log(1 + 400))
    assert rows["ball"]["two_r_over_eps"] == pytest.approx(400)
    assert rows["cone"]["log_packing"] == pytest.approx(3 * math.log(401) + bounds.cone_log_fraction(3, math.pi / 3))
    ell = math.log(401) + math.log(201) + math.log(101)
    assert rows["ellipsoid"]["C"] == pytest.approx(ell / lnV)
    # D = Dirac(1/|V|): the cells row is the ellipsoid row (Cor 4.6's reduction)
    assert rows["ellipsoid + non-uniform cells"]["C"] == pytest.approx(ell / lnV)
    # a centred ellipsoid: ε_i = u·a_i with u = ε/r∞, so every term is ln(1 + 2/u), the ball's at 2r/ε = 2/u
    u = 0.01 / 1.5
    assert rows["ellipsoid + variable ε"]["log_packing"] == pytest.approx(3 * math.log1p(2 / u))
    # off centre, each ε_i grows with |c_i|: ε_i = u·(|c_i| + a_i)
    var = T.rows_from_inputs({**inp, "center": [0.5, -0.5, 0.0]})["ellipsoid + variable ε"]
    want = sum(math.log1p(2 * a / (u * (abs(c) + a))) for c, a in ((0.5, 2.0), (-0.5, 1.0), (0.0, 0.5)))
    assert var["log_packing"] == pytest.approx(want)
    assert var["from"]["eps_i"]["smallest"] == pytest.approx(0.5 * u)
    sw = T.ratio_sweep(inp, [10, 12])
    assert sw["ellipsoid/ball"][0] == pytest.approx(
        sum(math.log1p(2 * a * 2**10 / 4.0) for a in (2.0, 1.0, 0.5)) / (3 * math.log1p(2**10))
    )
    assert sw["cells/ellipsoid"] == pytest.approx([1.0, 1.0])
    with pytest.raises(ValueError, match="semi_axes"):
        T.rows_from_inputs({**inp, "semi_axes": [1.0]})
    with pytest.raises(ValueError, match="lack"):
        T.rows_from_inputs({"d": 3})


def test_paper_implied_ratios_from_the_ball_row():
    got = T.paper_implied_log2()
    # Pythia-160M: 9.24·90.37·ln 50304/768 = ln(1 + 2r/ε) ⇒ 2r/ε ≈ 2^17.0
    assert got["Pythia-160M"] == pytest.approx(17.0, abs=0.05)
    assert got["Qwen-0.5B"] == pytest.approx(19.2, abs=0.05)
    assert got["Gemma-270M"] == pytest.approx(14.4, abs=0.05)
    # Pythia-1B: the figures' slope 261.42 and the authors' models list's 287.4 imply
    # 7.77·C_exp·ln 50304/2048 = ln(1 + 2r/ε): 2^15.5 and 2^17.0; columns with one source are unchanged
    alt = T.paper_implied_log2("list")
    assert got["Pythia-1B"] == pytest.approx(15.5, abs=0.05) and alt["Pythia-1B"] == pytest.approx(17.0, abs=0.05)
    assert alt["Qwen-0.5B"] == got["Qwen-0.5B"]
    with pytest.raises(ValueError, match="slope_source"):
        T.paper_implied_log2("csv")


@pytest.mark.parametrize("path", RESOLVED, ids=[p.stem for p in RESOLVED])
def test_every_stored_row_is_recomputed_from_the_artifact_alone(path):
    art = json.loads(path.read_text())
    if "inputs" not in art:
        pytest.skip(f"{path.name} holds only the convergence fits (its cells run did not finish)")
    rows = T.rows_from_inputs(art["inputs"])
    for name in T.ROW_NAMES:
        for key in ("C", "log_packing"):
            assert rows[name][key] == pytest.approx(art["rows"][name][key], rel=1e-9), (name, key)
    assert len(art["inputs"]["semi_axes"]) == art["d"]
    cells = ResolvedCells.from_dict(art["inputs"]["cells"])
    assert cells.tokens.size == art["inputs"]["cells"]["settings"]["n_tokens"]
    sw = T.ratio_sweep(art["inputs"], art["sweep"]["log2_x"])
    for k in ("cone/ball", "ellipsoid/ball", "cells/ellipsoid"):
        assert sw[k] == pytest.approx(art["sweep"][k], rel=1e-9)


@pytest.mark.parametrize("path", [p for p in RESOLVED if p.stem == "nano"], ids=["nano"])
def test_resolved_ln_p_agrees_with_brute_force_on_nano(path):
    """S ≥ 100·|V| uniform points: on the tokens they resolve (≥ 20 hits) the mean ln p agrees within 3 SE."""
    art = json.loads(path.read_text())
    if "brute" not in art:
        pytest.skip("the nano artifact has no brute-force counts")
    S = art["brute"]["n_samples"]
    assert S >= 100 * art["d_vocab"]
    counts = np.asarray(art["brute"]["counts"])
    cells = ResolvedCells.from_dict(art["inputs"]["cells"])
    sel = cells.resolved & (counts[cells.tokens] >= 20)
    assert sel.sum() >= 100
    diff = cells.log_p[sel] - np.log(counts[cells.tokens[sel]] / S)
    se = diff.std(ddof=1) / math.sqrt(sel.sum())
    assert abs(diff.mean()) < 3 * se + 0.02, (diff.mean(), se)
    # tokens certified empty never got a brute-force hit
    assert counts[cells.tokens[cells.status == "empty"]].sum() == 0


def test_convergence_rows_use_each_fits_own_eps():
    fits = [
        {"n_embeddings": 10, "r_l2": 2.0, "eps": 0.01, "cone_half_angle": 1.0, "semi_axes": [2.0, 2.0]},
        {"n_embeddings": 5, "r_l2": 1.0, "eps": 0.01, "cone_half_angle": 1.0, "semi_axes": [1.0, 0.5]},
    ]
    for f in fits:
        f["r_inf"] = 1.0
    rows = T.convergence_rows(fits, 10)
    assert [r["n_embeddings"] for r in rows] == [5, 10]
    assert rows[1]["ellipsoid/ball"] == pytest.approx(1.0)  # semi-axes = r: the ellipsoid is the ball
    assert rows[0]["ellipsoid"] == pytest.approx((math.log(201) + math.log(101)) / math.log(10))


def test_shape_sweep_of_an_artifact_without_cells():
    fit = {
        "prompts_per_length": 4,
        "r_l2": 2.0,
        "eps": 0.01,
        "cone_half_angle": math.pi / 3,
        "semi_axes": [2.0, 1.0, 0.5],
    }
    art = {"d_vocab": 10, "prompts_per_length": 4, "convergence": [fit]}
    sw = T.sweep_of(art, [12.0])
    # ε = 2r/2^12 = 4/4096: ellipsoid/ball = Σ ln(1 + 2a_i·1024) / (3 ln(1 + 4096)), by hand
    want = sum(math.log1p(2 * a * 1024) for a in (2.0, 1.0, 0.5)) / (3 * math.log1p(4096))
    assert sw["ellipsoid/ball"][0] == pytest.approx(want)
    assert math.isnan(sw["cells/ellipsoid"][0])
    full = {**art, "inputs": _toy_inputs()}
    assert T.sweep_of(full, [12.0])["cells/ellipsoid"] == pytest.approx([1.0])


def test_se_check_detects_an_understated_error():
    """Two independent runs whose stated SE is right give sd(z) ≈ 1; a run stating half its error gives ≈ 2."""
    from accessibility_lib.geometry import table1_resolved as T
    from accessibility_lib.geometry.cell_distribution import ResolvedCells

    g = np.random.default_rng(0)
    n, V = 400, 10_000
    tokens = g.choice(V, n, replace=False)
    truth = g.uniform(-25, -5, n)

    def cells(noise, stated, order):
        k = order(np.arange(n))
        lp = truth[k] + g.normal(0, noise, n)
        status = np.full(n, "resolved").astype(object)
        return ResolvedCells(
            tokens[k], lp, np.full(n, stated), status.astype(str), np.full(n, "splitting"), V, {}, np.ones(n)
        ).to_dict()

    honest = {
        "inputs": {"cells": cells(0.5, 0.5, lambda i: i)},
        "replicate": {"seed": 1, "cells": cells(0.5, 0.5, lambda i: i[::-1])},
    }
    c = T.se_check(honest)
    assert c["n"] == n and c["sd_z_ci"][0] < 1 < c["sd_z_ci"][1] and abs(c["sd_z"] - 1) < 0.1
    assert abs(c["mean_diff"]) < 3 * c["mean_diff_se"]
    under = {
        "inputs": {"cells": cells(1.0, 0.5, lambda i: i)},
        "replicate": {"seed": 1, "cells": cells(1.0, 0.5, lambda i: i)},
    }
    u = T.se_check(under)
    assert u["sd_z_ci"][0] > 1.5 and abs(u["sd_z"] - 2) < 0.2
    assert T.se_check({"inputs": honest["inputs"]}) is None  # no replicate: nothing to say


def test_variance_corrected_cells_row_moves_with_the_measured_spread():
    """An understated SE (κ ≈ 4) shifts every resolved ln p by (κ − 1)·se²/2 and the cells row with it."""
    import copy
    import json

    from accessibility_lib.geometry import table1_resolved as T
    from accessibility_lib.geometry.cell_distribution import ResolvedCells

    art = json.loads((BOOK_DATA / "support" / "resolved" / "nano.json").read_text())
    base = ResolvedCells.from_dict(art["inputs"]["cells"])
    ok = base.resolved
    g = np.random.default_rng(1)
    n = int(ok.sum())
    se = np.where(ok, 0.5, base.se)

    def run(noise):
        lp = base.log_p.copy()
        lp[ok] += g.normal(0, noise, n)
        return ResolvedCells(
            base.tokens, lp, se, base.status, base.certificate, base.d_vocab, {}, base.levels
        ).to_dict()

    a = copy.deepcopy(art)
    a["inputs"]["cells"], a["replicate"] = run(1.0), {"seed": 1, "cells": run(1.0)}  # true sd 1.0, stated 0.5: κ = 4
    v = T.variance_corrected(a)
    assert 3.0 < v["kappa"][0] < 5.0 and v["kappa"][1] < v["kappa"][0] < v["kappa"][2]
    plain = T.rows_from_inputs(a["inputs"])["ellipsoid + non-uniform cells"]["from"]["D"]["mean_log_p"]
    assert v["mean_log_p"] - plain == pytest.approx((v["kappa"][0] - 1) * 0.5**2 / 2, rel=1e-9)
    assert v["ratio_ci"][0] < v["ratio"] < v["ratio_ci"][1]
    assert v["C_ci"][0] < v["C"] < v["C_ci"][1]
    honest = copy.deepcopy(art)
    honest["inputs"]["cells"], honest["replicate"] = run(0.5), {"seed": 1, "cells": run(0.5)}
    assert T.variance_corrected(honest) is None  # the SE is right: nothing to correct


def test_cells_C_interval_widens_with_the_standard_error_of_E_ln_p():
    """C ∝ 1/|E[ln p]| to first order: C·E/(E ± z·SE); equal cells give no width, spread ones an open top."""
    for lp, zero_width in (([-2.0] * 4, True), ([-2.0, -2.5, -3.0, -2.2], False)):
        inp = _toy_inputs(V=10, lp=lp)
        inp["cells"]["se"] = [0.0] * 4
        C = T.rows_from_inputs(inp)["ellipsoid + non-uniform cells"]["C"]
        lo, hi = T.cells_C_interval(inp)
        assert lo <= C <= hi and (lo == pytest.approx(C) and hi == pytest.approx(C)) == zero_width
    D = T.rows_from_inputs(inp)["ellipsoid + non-uniform cells"]["from"]["D"]
    E, se = abs(D["mean_log_p"]), D["se_mean"]
    assert se > 0
    assert lo == pytest.approx(C * E / (E + 1.959964 * se), rel=1e-5)
    assert hi == pytest.approx(C * E / (E - 1.959964 * se), rel=1e-5)
    inp = _toy_inputs(V=10, lp=[-0.1, -5.0, -0.1, -5.0])  # E ≤ z·SE: no finite upper end
    assert T.cells_C_interval(inp)[1] == math.inf


def test_ratio_figure_marks_the_measured_variance_ratio_where_the_replicate_rejects_the_ideal_one():
    """Chapter 5's ratio figure: a model whose replicate check rejects κ = 1 gets its measured-variance
    cells/ellipsoid, with its interval, at the table's 2r/ε in the cells panel (and in the legend); the curves
    stay the ideal variance's."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from accessibility_lib.figures import table1_plots

    art = json.loads((BOOK_DATA / "support" / "resolved" / "smollm2-135m.json").read_text())
    vc = T.variance_corrected(art)
    assert vc is not None  # the stored replicate rejects the ideal variance (κ's interval above 1)
    fig = table1_plots.ratio_sweep_figure({"smollm2-135m": art}, {"col": (1.0, 1.0, 1.0)}, {"col": 12.0})
    try:
        cells_ax = fig.axes[2]
        marks = [c for c in cells_ax.containers if "measured variance" in str(c.get_label())]
        assert len(marks) == 1
        x, y = marks[0].lines[0].get_data()
        inp = art["inputs"]
        assert x[0] == pytest.approx(math.log2(2 * inp["r_l2"] / inp["eps"]))
        assert y[0] == pytest.approx(vc["ratio"])
        assert not any("measured variance" in str(c.get_label()) for ax in fig.axes[:2] for c in ax.containers)
        legend_labels = [t.get_text() for ax in fig.axes for lg in [ax.get_legend()] if lg for t in lg.get_texts()]
        assert any("measured variance" in t for t in legend_labels)
    finally:
        plt.close(fig)


def test_ratio_figure_marks_the_papers_cells_ratio_with_each_columns_own_slope_only_where_it_moves():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from accessibility_lib.figures import table1_plots

    art = json.loads((BOOK_DATA / "support" / "resolved" / "nano.json").read_text())
    printed = {"a": (1.0, 1.0, 2.0), "b": (1.0, 1.0, 3.0)}
    fig = table1_plots.ratio_sweep_figure({"nano": art}, printed, {"a": 12.0, "b": 14.0}, {"a": 2.001, "b": 2.5})
    try:
        open_ = [
            ln
            for ln in fig.axes[2].lines
            if isinstance(ln.get_markerfacecolor(), str) and ln.get_markerfacecolor() == "none"
        ]
        assert len(open_) == 1  # column a's moves by 0.001 only: not drawn
        assert tuple(open_[0].get_data()[0]) == (14.0,) and tuple(open_[0].get_data()[1]) == (2.5,)
        assert not [
            ln
            for ax in fig.axes[:2]
            for ln in ax.lines
            if isinstance(ln.get_markerfacecolor(), str) and ln.get_markerfacecolor() == "none"
        ]
    finally:
        plt.close(fig)
