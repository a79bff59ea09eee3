"""accessibility_lib.figures.widgets: the explorers' Python side equals bounds, and their JS equals the Python.

Expected values come from the paper (C = 590.09 and C / C_exp = 590.09 / 90.37 = 6.53 for Pythia-160M under
the replication convention), from hand derivations, or from accessibility_lib.theory.bounds. The JS parity tests
import explorer.js in node (skipped when node is missing); the browser test (tests/test_browser.py) checks
the rendered static pages.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from accessibility_lib.figures.widgets import (
    AXIS_CHOICES,
    DEFAULT_RANGES,
    BoundExplorer,
    CrammingExplorer,
    MeanFieldExplorer,
    book_models,
    check_series,
    convention_ball,
    conventions_table,
    paper_cramming_series,
    paper_models,
    series_from_fits,
)
from accessibility_lib.theory import bounds, paper, precision

JS = Path(__file__).resolve().parents[2] / "accessibility_lib" / "figures" / "widgets" / "explorer.js"
PYTHIA_C = 768 * math.log(4097) / math.log(50304)  # Cor 4.6 at 2r/ε = 4096, by hand

CASES = [
    dict(d=768, r=1.0, eps=2.0**-11, d_vocab=50304, m=1, n=600, log10_n=2.5, q=1.0),  # Pythia-160M, replication
    dict(d=1, r=0.1, eps=1.0, d_vocab=2, m=1, n=1, log10_n=0.5, q=1.0),
    dict(d=100_000, r=1e3, eps=1e-300, d_vocab=10_000_000, m=1_000_000, n=10**9, log10_n=9.0, q=2.0),  # overflow
    dict(d=4, r=1.0, eps=0.25, d_vocab=30, m=3, n=5000, log10_n=4.0, q=1.5),
    dict(d=2048, r=57.38, eps=57.38 * 2.0**-11, d_vocab=50304, m=7, n=20000, log10_n=5000.0, q=1.0),
    dict(d=4096, r=300.0, eps=1e-10, d_vocab=50304, m=1000, n=10**9, log10_n=90000.0, q=4.0),
]


def test_defaults_are_pythia_160m_under_replication_convention() -> None:
    v = BoundExplorer().values()
    assert round(v["C"], 2) == 590.09 and v["C"] == pytest.approx(PYTHIA_C, rel=1e-12)
    assert v["nstar"] == v["C"]  # m = 1
    assert v["lnFracN"] == pytest.approx(768 * math.log(4097) - 600 * math.log(50304), rel=1e-12)


@pytest.mark.parametrize("case", CASES)
def test_ball_values_equal_bounds(case: dict) -> None:
    v = BoundExplorer(**case).values()
    d, r, eps, V, m, n = (case[k] for k in ("d", "r", "eps", "d_vocab", "m", "n"))
    assert v["C"] == bounds.ball_slope(d, r, eps, V)
    assert v["logP"] == bounds.log_packing_ball(d, r, eps, m)
    assert v["nstar"] == pytest.approx(v["C"] * m, rel=1e-15)
    assert v["log10Nstar"] == pytest.approx(math.log10(v["C"] * m), rel=1e-12)
    assert v["lnFracN"] == bounds.log_accessible_fraction(d, r, eps, V, m, n)
    assert all(math.isfinite(x) for x in v.values())


@pytest.mark.parametrize("case", CASES)
def test_mean_field_values_equal_bounds(case: dict) -> None:
    v = BoundExplorer(formula="mean_field", axis_max=5, **case).values()
    d, r, eps, V, q, m = (case[k] for k in ("d", "r", "eps", "d_vocab", "q", "m"))
    assert v["loglog"] == bounds.mean_field_loglog_count(d, r, eps, q)
    assert v["logNstar"] == pytest.approx(v["loglog"] - math.log(math.log(V)), rel=1e-15)
    assert v["log10Nstar"] == pytest.approx(v["logNstar"] / math.log(10), rel=1e-15)
    assert v["nstarBall"] == pytest.approx(bounds.ball_threshold_length(d, r, eps, V, m), rel=1e-12)
    assert all(x is None or math.isfinite(x) for x in v.values())


@pytest.mark.parametrize("n", [2, 50, 6145, 6146, 6200, 10**5])
def test_mean_field_fraction_in_log_space_equals_bounds(n: int) -> None:
    """negLog10FracN = log10(−log10 fraction) at n: compared with bounds' ln fraction where it fits a float."""
    w = MeanFieldExplorer(log10_n=math.log10(n))
    got = w.values()["negLog10FracN"]
    ln_frac = bounds.mean_field_log_accessible_fraction(4, 1.0, 0.25, 30, n, 1.0)
    if ln_frac == 0.0:
        assert got is None
    else:
        assert got == pytest.approx(math.log10(-ln_frac / math.log(10)), rel=1e-9, abs=1e-9)


def test_mean_field_threshold_of_a_real_model_is_finite_in_log_space() -> None:
    w = MeanFieldExplorer(models=paper_models(), model="Pythia-160M")
    v = w.values()
    # ln ln #acc = 768 ln 4097 + ln(1 + ln(1 + 4096)) at q = 1 (Thm 4.9), by hand
    loglog = 768 * math.log(4097) + math.log(1 + math.log(4097))
    assert v["loglog"] == pytest.approx(loglog, rel=1e-12)
    assert v["log10Nstar"] == pytest.approx((loglog - math.log(math.log(50304))) / math.log(10), rel=1e-12)
    assert 2774 < v["log10Nstar"] < 2775


def test_mean_field_explorer_defaults() -> None:
    w = MeanFieldExplorer()
    assert w.formula == "mean_field" and w.d == 4 and w.axis_max in AXIS_CHOICES["mean_field"]
    assert math.isfinite(w.values()["log10Nstar"])


def test_select_sets_the_documented_values() -> None:
    """Menu semantics: d, |V| from the model; r = r∞ and ε = r∞·2^-11 (replication); r = max L2 and ε = r·u (fp32)."""
    w = BoundExplorer(models=paper_models())
    w.select("Pythia-160M", "rinf_fp16")
    assert (w.d, w.d_vocab, w.r, w.eps) == (768, 50304, 22.45, 22.45 * 2.0**-11)
    assert w.values()["C"] == pytest.approx(PYTHIA_C, rel=1e-12)
    w.select("Qwen2.5-0.5B", "u_fp32")
    assert (w.d, w.d_vocab, w.r, w.eps) == (896, 151936, 326.0, 326.0 * 2.0**-24)
    if "l2_fp16" in precision.CONVENTIONS:
        w.select("Pythia-1B", "l2_fp16")
        assert (w.r, w.eps) == (116.0, 57.38 * 2.0**-11)
    w.select("")
    assert w.model == "" and w.d == 2048
    with pytest.raises(ValueError, match="model"):
        w.select("GPT-9")
    with pytest.raises(ValueError, match="convention"):
        w.select("Pythia-160M", "fp8")


def test_convention_ball_matches_precision() -> None:
    for key, conv in precision.CONVENTIONS.items():
        if conv.absolute is not None:
            continue
        r, eps = convention_ball(key, 271.0, 22.45)
        if hasattr(conv, "ball"):
            assert (r, eps) == pytest.approx(conv.ball(271.0, 22.45), rel=1e-15)
        assert eps == pytest.approx(conv.eps(r=r, r_inf=22.45), rel=1e-15)
    assert {c["key"] for c in conventions_table()} >= {"rinf_fp16", "u_fp32", "table1_pythia"}


def test_paper_models_carry_the_papers_numbers() -> None:
    ms = {m["name"]: m for m in paper_models()}
    assert len(ms) == len(paper.models()) == 10
    p = ms["Pythia-160M"]
    assert (p["d"], p["d_vocab"], p["r_inf"], p["r_l2"]) == (768, 50304, 22.45, 271.0)
    assert (p["slope_natural"], p["slope_random"]) == (90.37, 44.13)
    assert ms["Pythia-1.4B"]["slope_natural"] == 261.4 and ms["Pythia-1.4B"]["slope_random"] is None


def test_book_models_measures_nano_and_skips_what_is_not_fetched() -> None:
    entries, notes = book_models(["nano", "not-a-fetched-model"], n_prompts=8, length=8)
    assert [e["name"] for e in entries] == ["nano"]
    nano = entries[0]
    assert (nano["d"], nano["d_vocab"]) == (128, 4096)  # the shipped config
    assert 0 < nano["r_inf"] <= nano["r_l2"] <= math.sqrt(nano["d"]) * nano["r_inf"]  # ‖x‖∞ ≤ ‖x‖2 ≤ √d ‖x‖∞
    assert any("not-a-fetched-model" in n and "not fetched" in n for n in notes)


def test_book_models_take_stored_radii_as_given_without_loading_the_model() -> None:
    """A stored r (chapter 5's support artifact, as chapter 3 passes it) is used as is, for a model not fetched
    too, and the sample it came from is named in the entry and the note."""
    stored = {"gemma-3-270m": {"linf": 678.9, "l2": 702.8, "sample": "192 last-layer embeddings"}}
    entries, notes = book_models(["gemma-3-270m"], stored=stored)
    (e,) = entries
    assert (e["d"], e["r_inf"], e["r_l2"]) == (640, 678.9, 702.8)
    assert "192 last-layer embeddings" in e["source"] and "stored: 192 last-layer embeddings" in notes[0]


def test_paper_cramming_series_reproduce_the_reported_slopes() -> None:
    series = {s["name"]: s for s in paper_cramming_series("rinf_fp16")}
    assert len(series) == 4
    for name, s in series.items():
        model, kind = name.split(",")[0], ("natural" if "natural" in name else "random")
        reported = paper.MEASURED_SLOPES[model][0 if kind == "natural" else 1]
        assert s["slope"] == reported
        ms = [p[0] for p in s["points"]]
        assert ms == [1, 2, 3, 4, 5]
        for m, n50, lo, hi in s["points"]:
            assert lo < n50 < hi
        if kind == "natural" and model == "Pythia-160M":  # n50(m) within 3 % of 90.37·m (the paper's line)
            assert all(abs(n50 / (90.37 * m) - 1) < 0.03 for m, n50, _, _ in s["points"])


def test_cramming_explorer_reproduces_table1_for_pythia_160m() -> None:
    w = CrammingExplorer(series=paper_cramming_series("rinf_fp16"))
    v = w.values()
    assert w.selected.startswith("Pythia-160M, natural") and (w.r, w.eps) == (22.45, 22.45 * 2.0**-11)
    assert v["C"] == pytest.approx(PYTHIA_C, rel=1e-12) and round(v["C"], 2) == 590.09
    assert round(v["ratio"], 2) == 6.53 == round(590.09 / 90.37, 2)
    assert v["ratio2r"] == pytest.approx(4096.0)
    assert v["slopePoints"] == pytest.approx(90.37, rel=0.01)
    w.select("Qwen2.5-0.5B, random (paper: n50 re-fitted, reported slope)")
    assert (w.r, w.eps) == (226.75, 226.75 * 2.0**-11)
    assert w.values()["ratio"] == pytest.approx(896 * math.log(4097) / math.log(151936) / 36.65, rel=1e-12)


def test_series_from_fits_skips_one_sided_fits() -> None:
    class Fit:
        def __init__(self, ok, n50, ci):
            self.ok, self.n50, self.ci = ok, n50, ci

    s = series_from_fits(
        "nano",
        {
            1: Fit(True, 3.0, (2.0, 4.0)),
            2: Fit(False, float("nan"), (float("nan"),) * 2),
            4: Fit(True, 9.0, (float("nan"), float("nan"))),
        },
        d=128,
        d_vocab=4096,
        r=7.0,
        eps=7.0 * 2.0**-11,
        convention="rinf_fp16",
    )
    assert s["points"] == [[1.0, 3.0, 2.0, 4.0], [4.0, 9.0, None, None]]
    w = CrammingExplorer(series=[s])
    assert w.values()["slope"] == pytest.approx(2.0) and w.values()["ratio"] == pytest.approx(
        bounds.ball_slope(128, 7.0, 7.0 * 2.0**-11, 4096) / 2.0
    )
    with pytest.raises(ValueError, match="no fit"):
        series_from_fits("x", {1: Fit(False, 0.0, (0, 0))}, d=1, d_vocab=2, r=1.0, eps=1.0, convention="")


@pytest.mark.parametrize(
    "series, match",
    [
        ([], "at least one"),
        ([{"name": "a", "points": [], "d": 1, "d_vocab": 2, "r": 1.0, "eps": 1.0}], "points"),
        ([{"name": "a", "points": [[0, 1, None, None]], "d": 1, "d_vocab": 2, "r": 1.0, "eps": 1.0}], "m"),
        ([{"name": "a", "points": [[1, 1, None, None]], "d": 0, "d_vocab": 2, "r": 1.0, "eps": 1.0}], "d"),
        ([{"name": "a", "points": [[1, 1, None, None]], "d": 1, "d_vocab": 2, "r": -1.0, "eps": 1.0}], "r"),
        ([{"name": "a", "points": [[1, 1, None, None]], "d": 1, "d_vocab": 2, "r": 1.0, "eps": 1.0}] * 2, "unique"),
    ],
)
def test_bad_series_raise(series, match) -> None:
    with pytest.raises(ValueError, match=match):
        check_series(series)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"d": 0}, "d"),
        ({"r": -1.0}, "r"),
        ({"eps": 0.0}, "eps"),
        ({"d_vocab": 1}, "d_vocab"),
        ({"m": 0}, "m"),
        ({"n": 0}, "n"),
        ({"formula": "cube"}, "formula"),
        ({"ranges": {"zz": (0, 1)}}, "ranges"),
        ({"ranges": {"d": (5, 5)}}, "ranges"),
        ({"ranges": {"d": (0, 5)}}, "ranges"),
        ({"axis_max": 11}, "axis_max"),
        ({"floor": -7}, "floor"),
        ({"convention": "fp8"}, "convention"),
        ({"model": "GPT-9"}, "model"),
    ],
)
def test_bad_parameters_raise(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        BoundExplorer(**kwargs)


def test_ranges_are_synced_with_overrides() -> None:
    w = BoundExplorer(ranges={"d": (1, 16)})
    assert w.ranges["d"] == [1, 16] and w.ranges["eps"] == list(DEFAULT_RANGES["eps"])


def test_slider_ranges_hold_every_menu_model() -> None:
    """Every model of the paper, under every convention, lies inside the default slider ranges."""
    lo_eps, hi_eps = DEFAULT_RANGES["eps"]
    lo_r, hi_r = DEFAULT_RANGES["r"]
    for m in paper_models():
        assert DEFAULT_RANGES["d"][0] <= m["d"] <= DEFAULT_RANGES["d"][1]
        assert DEFAULT_RANGES["d_vocab"][0] <= m["d_vocab"] <= DEFAULT_RANGES["d_vocab"][1]
        for c in conventions_table():
            r, eps = convention_ball(c["key"], m["r_l2"], m["r_inf"])
            assert lo_r <= r <= hi_r and lo_eps <= eps <= hi_eps, (m["name"], c["key"], r, eps)


def test_esm_is_our_file_and_names_no_url() -> None:
    text = JS.read_text()
    assert "export default" in text and "function compute" in text
    assert "http://" not in text and "https://" not in text


def _node(script: str) -> object:
    proc = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _same(js: object, py: object, where: object) -> None:
    if py is None:
        assert js is None, where
    elif isinstance(js, str):
        assert js == "Infinity" and py == math.inf, where
    else:
        assert js == pytest.approx(py, rel=1e-12, abs=1e-12), (where, js, py)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_js_compute_equals_python() -> None:
    script = (
        f"import {{ compute }} from {json.dumps(JS.as_uri())};\n"
        f"const cases = {json.dumps(CASES)};\n"
        "const out = [];\n"
        "for (const c of cases) { for (const f of ['ball', 'mean_field']) {\n"
        "  const o = compute(f, c); const row = {};\n"
        "  for (const [k, v] of Object.entries(o)) if (typeof v === 'number' || v === null)\n"
        "    row[k] = v === null ? null : Number.isFinite(v) ? v : String(v);\n"
        "  out.push(row); } }\n"
        "console.log(JSON.stringify(out));\n"
    )
    results = _node(script)
    i = 0
    for case in CASES:
        for formula in ("ball", "mean_field"):
            kwargs = dict(case, axis_max=5) if formula == "mean_field" else case
            js, py = results[i], BoundExplorer(formula=formula, **kwargs).values()
            i += 1
            for key, value in py.items():
                _same(js[key], value, (formula, case, key))


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_js_cramming_and_conventions_equal_python() -> None:
    series = paper_cramming_series("rinf_fp16")
    moves = [(s["eps"], s["r"]) for s in series] + [(1e-10, 1000.0), (10.0, 0.01)]
    convs = conventions_table()
    script = (
        f"import {{ computeCramming, conventionBall }} from {json.dumps(JS.as_uri())};\n"
        f"const series = {json.dumps(series)}; const moves = {json.dumps(moves)}; const convs = {json.dumps(convs)};\n"
        "const out = {cram: [], conv: []};\n"
        "for (const s of series) for (const [eps, r] of moves) { const o = computeCramming(s, eps, r);\n"
        "  out.cram.push([o.C, o.slope, o.slopePoints, o.ratio, Math.pow(10, o.log10Ratio2rEps)]); }\n"
        "for (const c of convs) { const b = conventionBall(c, 271.0, 22.45); out.conv.push([b.r, b.eps]); }\n"
        "console.log(JSON.stringify(out));\n"
    )
    got = _node(script)
    i = 0
    for s in series:
        for eps, r in moves:
            w = CrammingExplorer(series=series, selected=s["name"], eps=eps, r=r)
            v = w.values()
            C, slope, slope_pts, ratio, ratio2r = got["cram"][i]
            i += 1
            _same(C, v["C"], (s["name"], eps, r))
            _same(slope, v["slope"], s["name"])
            assert slope_pts == pytest.approx(v["slopePoints"], rel=1e-9)
            _same(ratio, v["ratio"], s["name"])
            assert ratio2r == pytest.approx(v["ratio2r"], rel=1e-12)
    for c, (r, eps) in zip(convs, got["conv"]):
        assert (r, eps) == pytest.approx(convention_ball(c["key"], 271.0, 22.45), rel=1e-15), c["key"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_js_integer_sliders_land_on_the_models_values() -> None:
    """A log slider for d over [16, 16384] moves in steps of 10^0.003 (×1.007), so dragging alone reaches 763
    and 773 but never d = 768; with the menu's models' values listed, every position within half a step of
    log10(768) gives exactly 768 (and |V| = 50,304 likewise), and positions elsewhere still give integers."""
    lo, hi = 16, 16384
    step = (math.log10(hi) - math.log10(lo)) / 1000
    listed = [768, 1024, 2048, 896, 50304, 151936]
    positions = [math.log10(768) + f * step for f in (-0.49, -0.2, 0.0, 0.3, 0.49)]
    script = (
        f"import {{ snapped }} from {json.dumps(JS.as_uri())};\n"
        f"const step = {step}, list = {json.dumps(listed)};\n"
        f"const near = {json.dumps(positions)}.map((p) => snapped('logint', p, {lo}, step, list));\n"
        f"const bare = {json.dumps(positions)}.map((p) => snapped('logint', p, {lo}, step, null));\n"
        f"const grid = Array.from({{length: 1001}}, (_, k) => snapped('logint', Math.log10({lo}) + k * step, {lo}, step, list));\n"
        f"const vocab = snapped('logint', Math.log10(50304) + 0.4 * 0.0034, 2, 0.0034, list);\n"
        f"const away = snapped('logint', Math.log10(768) + 0.6 * step, {lo}, step, list);\n"
        "console.log(JSON.stringify({near, bare, grid, vocab, away}));\n"
    )
    got = _node(script)
    assert got["near"] == [768] * 5
    assert all(v == round(v) for v in got["grid"])  # integers everywhere
    assert {768, 1024, 2048, 896} <= set(got["grid"])  # each listed value is reached by some slider position
    assert 768 not in {round(10**p) for p in [math.log10(lo) + k * step for k in range(1001)]}  # not without snapping
    assert got["vocab"] == 50304
    assert got["away"] != 768 and got["away"] == round(10 ** (math.log10(768) + 0.6 * step))
    assert all(v == round(10**p) for v, p in zip(got["bare"], positions, strict=True))


def test_a_book_model_that_is_also_the_papers_names_both_radii() -> None:
    """Gemma-3-270M is in the paper's list (r∞ 9.95, L2 51, the authors' models list) and in the book's menu with
    our measured radii: the menu's source says both; nano, not a paper model, gets no note."""
    from accessibility_lib.figures.widgets.data import same_model_note

    note = same_model_note("gemma-3-270m", {"linf": 679.2, "l2": 702.5})
    assert "r∞ = 9.95 and L2 = 51 against our 679 and 702" in note and "unexplained" in note
    assert same_model_note("nano", {"linf": 3.0, "l2": 9.0}) == ""


def test_book_models_show_the_authors_spelling_and_chapter_3s_slopes_with_their_budget() -> None:
    """The menu shows SmolLM2-135M (its key stays smollm2-135m), with chapter 3's stored slope at its budget."""
    from accessibility_lib.figures.widgets import stored_slopes
    from accessibility_lib.runs import table1_measured

    stored = {"smollm2-135m": {"linf": 10.0, "l2": 50.0, "sample": "a test"}}
    slopes = stored_slopes(["smollm2-135m"])
    if "smollm2-135m" not in slopes:
        pytest.skip("no stored SmolLM2-135M cramming artifact")
    nat, rnd, steps = slopes["smollm2-135m"]
    want = table1_measured.slopes_by_budget("smollm2-135m")[steps]["natural"]
    assert nat == pytest.approx(want.fit.slope) and want.reliable
    assert steps == max(table1_measured.slopes_by_budget("smollm2-135m"))  # the largest complete budget
    (e,) = book_models(["smollm2-135m"], stored=stored, measured=slopes)[0]
    assert (e["name"], e["label"], e["slope_natural"], e["slope_steps"]) == ("smollm2-135m", "SmolLM2-135M", nat, steps)
    assert f"at {steps} steps" in e["source"]
    (bare,) = book_models(["smollm2-135m"], stored=stored)[0]  # without measured slopes: none, and no budget
    assert (bare["slope_natural"], bare["slope_steps"]) == (None, None)
    assert all(p["label"] == p["name"] and p["slope_steps"] is None for p in paper_models())


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_js_n_axis_follows_the_cliff_and_states_its_clamp() -> None:
    """Chapter 1's defaults (Pythia-160M, replication, m = 1) with d = 16384: n* = 16384·ln 4097/ln 50304 ≈ 12,589
    tokens lies past the menu's 10^4, so the n axis widens to 10^5 (the next choice); at d = 768 (n* ≈ 590) it
    stays at the menu's 10^4; past the widest choice (10^9) the axis stops there and says so (clamped)."""
    base = dict(r=1.0, eps=2.0**-11, d_vocab=50304, m=1, n=600, log10_n=3.0, q=1.0)
    cases = [dict(base, d=16384), dict(base, d=768), dict(base, d=16384, m=10**6)]
    script = (
        f"import {{ compute, followAxis }} from {json.dumps(JS.as_uri())};\n"
        f"const cases = {json.dumps(cases)};\n"
        "const ball = cases.map((c) => followAxis('ball', compute('ball', c), 4, -100));\n"
        "const mf = [compute('mean_field', {...cases[0], eps: 1e-10, r: 1000})].map((o) => [o.log10Nstar, followAxis('mean_field', o, 5, -100)]);\n"
        "console.log(JSON.stringify({ball, mf}));\n"
    )
    got = _node(script)
    assert 16384 * math.log(4097) / math.log(50304) == pytest.approx(12589, abs=1)
    assert got["ball"] == [{"k": 5, "clamped": False}, {"k": 4, "clamped": False}, {"k": 9, "clamped": True}]
    log10_nstar, follow = got["mf"][0]
    assert math.log10(log10_nstar) > 5 and follow == {"k": 6, "clamped": False}  # n* ≈ 10^(1.6·10^5)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_js_text_helpers_symbols_chart_size_presentation_and_the_paper_band() -> None:
    """Status lines name parameters by the paper's symbols (|V|, ε), never d_vocab or eps; the chart's viewBox is its
    drawn width (text at TICK_PX = 16 px) with a height 0.38 W in 250..330 (in a presentation: the window's height
    less 150, at most 0.7 W); ?present=k picks the k-th explorer; the reference band spans the paper's slopes."""
    series = paper_cramming_series("rinf_fp16")
    script = (
        f"import {{ symbol, chartSize, presentIndex, paperBand, isPaperSeries, TICK_PX }} from {json.dumps(JS.as_uri())};\n"
        f"const series = {json.dumps(series)};\n"
        "console.log(JSON.stringify({sym: ['d_vocab', 'eps', 'r', 'log10_n'].map(symbol), tick: TICK_PX,"
        " sizes: [chartSize(668), chartSize(340), chartSize(0), chartSize(760, true, 720), chartSize(300, true, 900)],"
        " present: [presentIndex('?present'), presentIndex('?x=1&present=2'), presentIndex('', '#present=3'), presentIndex('?presenter=1')],"
        " band: paperBand(series), paper: series.map(isPaperSeries),"
        " book: isPaperSeries({name: 'nano, natural (this run)', group: 'book'}), old: isPaperSeries({name: 'Pythia-160M, natural (paper: n50)'}) }));\n"
    )
    got = _node(script)
    assert got["sym"] == ["|V|", "ε", "r", "log₁₀ n"] and got["tick"] >= 16
    assert got["sizes"] == [
        {"W": 668, "H": 254},
        {"W": 340, "H": 250},
        {"W": 640, "H": 250},
        {"W": 760, "H": 532},
        {"W": 300, "H": 260},
    ]
    assert got["present"] == [1, 2, 3, None]
    slopes = [s["slope"] for s in series]
    assert all(got["paper"]) and not got["book"] and got["old"]
    assert got["band"] == {"lo": min(slopes), "hi": max(slopes), "n": len(slopes)}


def test_series_groups_are_checked() -> None:
    s = {"name": "a", "points": [[1, 1, None, None]], "d": 1, "d_vocab": 2, "r": 1.0, "eps": 1.0}
    assert check_series([s])[0]["group"] == "book"
    assert check_series([dict(s, group="paper")])[0]["group"] == "paper"
    assert all(x["group"] == "paper" for x in paper_cramming_series("rinf_fp16"))
    with pytest.raises(ValueError, match="group must be 'paper'"):
        check_series([dict(s, group="ours")])
