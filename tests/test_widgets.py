"""accessibility_lib.widgets: the explorer's Python side equals bounds, and its JS equals the Python.

The JS parity test imports ``compute`` from explorer.js in node (skipped when node is missing); the
browser test (tests/test_browser.py) checks the same numbers in the rendered static page.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from accessibility_lib import bounds
from accessibility_lib.widgets import DEFAULT_RANGES, BoundExplorer, MeanFieldExplorer

JS = Path(__file__).resolve().parent.parent / "accessibility_lib" / "widgets" / "explorer.js"

CASES = [
    dict(d=768, r=1.0, eps=2.0**-11, vocab_size=50304, m=1, n=600, q=1.0),  # Pythia-160M, replication
    dict(d=1, r=0.1, eps=1.0, vocab_size=2, m=1, n=0, q=1.0),
    dict(d=100_000, r=1e3, eps=1e-300, vocab_size=10_000_000, m=1_000_000, n=10**9, q=2.0),  # 2r/ε overflows
    dict(d=4, r=1.0, eps=0.25, vocab_size=30, m=3, n=5000, q=1.5),
    dict(d=2048, r=57.38, eps=57.38 * 2.0**-11, vocab_size=50304, m=7, n=20000, q=1.0),
]


def test_defaults_are_pythia_160m_under_replication_convention() -> None:
    v = BoundExplorer().values()
    assert round(v["C"], 2) == 590.09
    assert v["nstar"] == v["C"]  # m = 1
    assert v["lnFracN"] == pytest.approx(6388.2319 - 600 * math.log(50304), rel=1e-6)


@pytest.mark.parametrize("case", CASES)
def test_ball_values_equal_bounds(case: dict) -> None:
    v = BoundExplorer(**case).values()
    d, r, eps, V, m, n = (case[k] for k in ("d", "r", "eps", "vocab_size", "m", "n"))
    assert v["C"] == bounds.ball_slope(d, r, eps, V)
    assert v["logP"] == bounds.log_packing_ball(d, r, eps, m)
    assert v["nstar"] == pytest.approx(v["C"] * m, rel=1e-15)
    assert v["lnFracN"] == bounds.log_accessible_fraction(d, r, eps, V, m, n)
    assert all(math.isfinite(x) for x in v.values())


@pytest.mark.parametrize("case", CASES)
def test_mean_field_values_equal_bounds(case: dict) -> None:
    v = BoundExplorer(formula="mean_field", **case).values()
    d, r, eps, V, n, q = (case[k] for k in ("d", "r", "eps", "vocab_size", "n", "q"))
    assert v["loglog"] == bounds.mean_field_loglog_count(d, r, eps, q)
    assert v["logNstar"] == pytest.approx(v["loglog"] - math.log(math.log(V)), rel=1e-15)
    assert v["lnFracN"] == bounds.mean_field_log_accessible_fraction(d, r, eps, V, n, q)


def test_mean_field_explorer_defaults() -> None:
    w = MeanFieldExplorer()
    assert w.formula == "mean_field" and w.d == 4
    assert math.isfinite(w.values()["nstar"])


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"d": 0}, "d"),
        ({"r": -1.0}, "r"),
        ({"eps": 0.0}, "eps"),
        ({"vocab_size": 1}, "vocab_size"),
        ({"m": 0}, "m"),
        ({"n": -1}, "n"),
        ({"formula": "cube"}, "formula"),
        ({"ranges": {"zz": (0, 1)}}, "ranges"),
        ({"ranges": {"d": (5, 5)}}, "ranges"),
    ],
)
def test_bad_parameters_raise(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        BoundExplorer(**kwargs)


def test_ranges_are_synced_with_overrides() -> None:
    w = BoundExplorer(ranges={"d": (1, 16)})
    assert w.ranges["d"] == [1, 16] and w.ranges["eps"] == list(DEFAULT_RANGES["eps"])


def test_esm_is_our_file_and_names_no_url() -> None:
    text = JS.read_text()
    assert "export default" in text and "function compute" in text
    assert "http://" not in text and "https://" not in text


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_js_compute_equals_python() -> None:
    script = (
        f"import {{ compute }} from {json.dumps(JS.as_uri())};\n"
        f"const cases = {json.dumps(CASES)};\n"
        "const out = [];\n"
        "for (const c of cases) { for (const f of ['ball', 'mean_field']) {\n"
        "  const o = compute(f, c); const row = {};\n"
        "  for (const [k, v] of Object.entries(o)) if (typeof v === 'number') row[k] = Number.isFinite(v) ? v : String(v);\n"
        "  out.push(row); } }\n"
        "console.log(JSON.stringify(out));\n"
    )
    proc = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    i = 0
    for case in CASES:
        for formula in ("ball", "mean_field"):
            js, py = results[i], BoundExplorer(formula=formula, **case).values()
            i += 1
            for key, value in py.items():
                got = js[key]
                if isinstance(got, str):
                    assert got == "Infinity" and value == math.inf, (formula, case, key)
                else:
                    assert got == pytest.approx(value, rel=1e-12, abs=1e-12), (formula, case, key, got, value)
