"""Exact counts of representable values (accessibility_lib.theory.fp_grid) against enumeration and hand derivations."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from accessibility_lib.theory import fp_grid


def _all_values(dtype: str) -> np.ndarray:
    """Every finite value of a 16-bit format, by enumerating its 65,536 bit patterns (independent of fp_grid)."""
    bits = np.arange(2**16, dtype=np.uint32)
    if dtype == "fp16":
        vals = bits.astype(np.uint16).view(np.float16).astype(np.float64)
    else:  # bfloat16 is the upper half of a float32
        with np.errstate(invalid="ignore"):  # the NaN patterns
            vals = (bits << 16).astype(np.uint32).view(np.float32).astype(np.float64)
    return np.unique(vals[np.isfinite(vals)])  # ±0 merge (they compare equal)


VALUES = {name: _all_values(name) for name in ("fp16", "bf16")}


def _enumerated(r: float, dtype: str) -> int:
    v = VALUES[dtype]
    return int((np.abs(v) <= r).sum())


RADII = [0.0, 1e-9, 5.96e-8, 6.0e-8, 6.1e-5, 1e-3, 0.1, 0.5, 1.0, 1.0009765625, 1.5, 3.0, 9.95, 22.45, 51.0, 1000.0,
         65504.0, 65520.0, 1e6, 3.0e38, 3.5e38, math.inf]  # fmt: skip


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("r", RADII)
def test_count_matches_enumeration(dtype, r):
    assert fp_grid.count_in_interval(r, dtype) == _enumerated(r, dtype)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@settings(max_examples=300, deadline=None)
@given(r=st.floats(min_value=0.0, max_value=1e39, allow_nan=False))
def test_count_matches_enumeration_random_r(dtype, r):
    assert fp_grid.count_in_interval(r, dtype) == _enumerated(r, dtype)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_count_at_every_representable_value(dtype):
    """At r = each representable v ≥ 0 (and just below it) the count steps by exactly 2."""
    v = VALUES[dtype]
    pos = v[v > 0][::97]  # a spread of normal and subnormal values
    for x in pos:
        below = np.nextafter(x, 0)
        assert fp_grid.count_in_interval(x, dtype) == fp_grid.count_in_interval(below, dtype) + 2


def _fp32_nonneg_by_binades(k_binades_full: int, in_last: int) -> int:
    """Hand count: 2^23 values for zero + subnormals, 2^23 per full binade [2^e, 2^(e+1)) from e = −126,
    plus the values of the last, partial binade."""
    return 2**23 + k_binades_full * 2**23 + in_last


@pytest.mark.parametrize(
    "r, expected_nonneg",
    [
        # r = 1 = 2^0: binades e = −126 … −1 (126 of them) are full, then 1.0 itself
        (1.0, _fp32_nonneg_by_binades(126, 1)),
        # r = 2^k: (k + 126) full binades, then 2^k
        (2.0**10, _fp32_nonneg_by_binades(136, 1)),
        (2.0**-20, _fp32_nonneg_by_binades(106, 1)),
        # r = 1.5: [1, 1.5] holds 1 + j·2^−23 for j = 0 … 2^22
        (1.5, _fp32_nonneg_by_binades(126, 2**22 + 1)),
        # r = 3: [2, 3] holds 2 + j·2^−22, j = 0 … 2^22, after 127 full binades (e = −126 … 0)
        (3.0, _fp32_nonneg_by_binades(127, 2**22 + 1)),
        # r = 22.45 (Pythia-160M's r∞): [16, 22.45] holds 16 + j·2^−19 for j ≤ ⌊6.45·2^19⌋ (r read as a double)
        (22.45, _fp32_nonneg_by_binades(130, math.floor(6.45 * 2**19) + 1)),
        # subnormal range: k·2^−149 for k = 0 … ⌊r/2^−149⌋
        (1e-40, math.floor(1e-40 / 2.0**-149) + 1),
        (1e-46, 1),  # below the smallest subnormal: zero only
        # beyond the largest finite fp32: every finite non-negative value, (2^8 − 1)·2^23
        (3.5e38, 255 * 2**23),
    ],
)
def test_fp32_closed_form(r, expected_nonneg):
    assert fp_grid.count_nonnegative(r, "fp32") == expected_nonneg
    assert fp_grid.count_in_interval(r, torch.float32) == 2 * expected_nonneg - 1


def test_fp32_against_numpy_bit_patterns():
    """K(r) − 1 is the bit pattern of the largest float32 ≤ r, read as an integer (numpy, independent)."""
    rng = np.random.default_rng(0)
    for r in np.exp(rng.uniform(-100, 88, size=200)).astype(np.float32):
        bits = int(np.array([r], dtype=np.float32).view(np.uint32)[0])
        assert fp_grid.count_nonnegative(float(r), "fp32") == bits + 1


def test_spacing_matches_nextafter():
    for dtype, np_dtype in [("fp16", np.float16), ("fp32", np.float32)]:
        for x in [1e-7, 6e-5, 0.3, 1.0, 1.7, 22.45, 1000.0]:
            xv = np_dtype(x)
            assert fp_grid.spacing(float(xv), dtype) == float(np.nextafter(xv, np_dtype(np.inf)) - xv)


def test_unit_roundoff_matches_precision_module():
    from accessibility_lib.theory import precision

    for name in ("fp32", "bf16", "fp16"):
        assert fp_grid.get_format(name).unit_roundoff == precision.unit_roundoff(name)


def test_box_count_and_equivalent_ratio():
    radii = np.full(4, 1.0)
    bc = fp_grid.box_count(radii, "fp16", d_vocab=16)
    assert bc.log_count == pytest.approx(4 * math.log(30721))
    assert bc.slope == pytest.approx(4 * math.log(30721) / math.log(16))
    assert bc.equivalent_ratio == pytest.approx(30720)
    assert bc.n_star(3) == pytest.approx(3 * bc.slope)
    assert fp_grid.equivalent_ratio(1.0, "fp16") == 30720


@pytest.mark.parametrize("bad", ["int8", "float8_e4m3fn", torch.int32, "complex64", None])
def test_unsupported_dtype(bad):
    with pytest.raises(ValueError, match="dtype must be one of"):
        fp_grid.count_in_interval(1.0, bad)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), "x"])
def test_bad_radius(bad):
    with pytest.raises(ValueError, match="r must be"):
        fp_grid.count_in_interval(bad, "fp16")


def test_bad_radii_array():
    with pytest.raises(ValueError, match="radii"):
        fp_grid.log_count_box(np.zeros((2, 2)), "fp16")


# ---- the chapter's explorer: the browser computes what fp_grid computes --------------------------------


def _node(script: str):
    import json
    import subprocess

    proc = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.skipif(__import__("shutil").which("node") is None, reason="node is not installed")
def test_precision_explorer_js_equals_python():
    import json

    from accessibility_lib.figures.widgets.precision import PrecisionExplorer, model_entry, paper_entries

    js_file = __import__("pathlib").Path(fp_grid.__file__).parents[1] / "figures" / "widgets" / "precision.js"
    entries = paper_entries() + [model_entry("box", 3, 100, 2.0, radii=[0.5, 1e-6, 3.0], slope=2.0)]
    radii = [0.0, 1e-45, 1e-40, 6e-8, 0.3, 1.0, 22.45, 65504.0, 1e6, 3.5e38]
    script = (
        f"import {{ compute, countInInterval }} from {json.dumps(js_file.as_uri())};\n"
        f"const E = {json.dumps(entries)}; const R = {json.dumps(radii)};\n"
        "const out = {v: [], n: []};\n"
        "for (const e of E) for (const dt of ['fp32', 'bf16', 'fp16']) out.v.push(compute(e, dt, 3));\n"
        "for (const r of R) for (const dt of ['fp32', 'bf16', 'fp16']) out.n.push(countInInterval(r, dt));\n"
        "console.log(JSON.stringify(out));\n"
    )
    got = _node(script)
    i = 0
    for r in radii:
        for dt in ("fp32", "bf16", "fp16"):
            assert got["n"][i] == fp_grid.count_in_interval(r, dt), (r, dt)  # exact integers
            i += 1
    i = 0
    for e in entries:
        for dt in ("fp32", "bf16", "fp16"):
            py = PrecisionExplorer(models=entries, model=e["name"], dtype=dt, m=3).values()
            for key, value in py.items():
                if value is None:
                    assert got["v"][i][key] is None, (e["name"], dt, key)
                else:
                    assert got["v"][i][key] == pytest.approx(value, rel=1e-9), (e["name"], dt, key)
            i += 1


def test_precision_explorer_rejects_bad_input():
    from accessibility_lib.figures.widgets.precision import PrecisionExplorer, model_entry

    with pytest.raises(ValueError, match="dtype must be one of"):
        PrecisionExplorer(dtype="int8")
    with pytest.raises(ValueError, match="model must be one of"):
        PrecisionExplorer(model="GPT-5")
    with pytest.raises(ValueError, match="radii must be"):
        model_entry("x", 2, 10, 1.0, radii=[1.0])


def test_module_examples():
    import doctest

    assert doctest.testmod(fp_grid, optionflags=doctest.ELLIPSIS).failed == 0


def test_whole_range_count_is_every_finite_value_in_every_coordinate():
    """The bound with no ε: N(max finite)^d, i.e. C = d·ln N_all/ln|V| (Pythia-160M: 785 fp16, 786 bf16, 1573 fp32)."""
    for dt, n_all in (("fp16", 63487), ("bf16", 65279), ("fp32", 2 * 255 * 2**23 - 1)):
        c = fp_grid.whole_range_count(768, dt, 50304)
        assert c.d == 768 and c.log_count == pytest.approx(768 * math.log(n_all), rel=1e-12)
        assert c.slope > fp_grid.box_count([22.45] * 768, dt, 50304).slope  # any box of h holds fewer
    assert [round(fp_grid.whole_range_count(768, dt, 50304).slope) for dt in ("fp16", "bf16", "fp32")] == [
        785,
        786,
        1573,
    ]
    with pytest.raises(ValueError):
        fp_grid.whole_range_count(0, "fp16", 50304)
