"""What a dtype's grid counts: chapter 7's tables and sentences on the representable values of fp32, bf16 and fp16.

A model that reads its input in a dtype can produce at most as many outputs as there are representable inputs.
:mod:`accessibility_lib.theory.fp_grid` counts the values N(r) of a dtype in [−r, r] exactly; this module puts
those counts beside the paper's uniform grids (the replication code's 2r/ε = 4096, the ratios Table 1's ball row
implies) and beside the measured cramming slopes of the paper's models: :func:`grid_intro`,
:func:`whole_range_text`, :func:`probe_table`, :func:`paper_model_tables`, :func:`per_coordinate_text`, and the
one number chapter 7's answer states, :func:`smallest_margin`.

Two counts, kept apart. The count over each dtype's whole finite range (:func:`input_slopes`) counts input prompts:
it is the bound of chapter 7's proposition, with no ε and no assumed box. The count in the cube of half-width r∞
(:func:`h_cube_slopes`) counts last-layer states h in a box taken from h: the paper's geometry, a modelling step,
not a theorem (:func:`h_cube_margin`). Menu entries of the paper's models come from
:func:`accessibility_lib.figures.widgets.precision.paper_entries` (passed in: this stage does not import figures).
"""

from __future__ import annotations

import math

from accessibility_lib.theory import fp_grid, paper

__all__ = ["DTYPES", "MAX_FINITE", "whole_range", "grid_intro", "whole_range_text", "probe_table",
           "paper_model_tables", "per_coordinate_text", "smallest_margin", "h_cube_margin", "input_slopes", "h_cube_slopes",
           "ln_rep", "chapter_numbers", "floor_sig"]  # fmt: skip

#: the three dtypes compared, by their short names
DTYPES = ("fp32", "bf16", "fp16")
#: the largest finite value of each dtype
MAX_FINITE = {"fp16": 65504.0, "bf16": 3.3895313892515355e38, "fp32": 3.4028234663852886e38}


def floor_sig(x: float, digits: int = 3, keep_zeros: bool = False) -> str:
    """``x`` rounded *down* to ``digits`` significant digits, as text: what "at least x" or "x or more" may say.

    ``keep_zeros``: keep trailing zeros after the point, so that the text shows the digits it has.

    >>> floor_sig(121.6), floor_sig(7.56, 2), floor_sig(145.2, 2), floor_sig(3.0), floor_sig(16_532_000.0)
    ('121', '7.5', '140', '3', '1.65e+07')
    >>> floor_sig(8.003, 2), floor_sig(8.003, 2, keep_zeros=True)
    ('8', '8.0')

    Raises:
        ValueError: x not a finite positive number.
    """
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"x must be finite and positive, got {x!r}")
    e = math.floor(math.log10(x)) - digits + 1
    v = math.floor(x / 10**e + 1e-9) * 10**e  # the 1e-9 keeps an exact 7.5 from flooring to 7.4
    if not -6 < e < 4:
        return f"{v:.{digits}g}"
    text = f"{v:.{max(0, -e)}f}"
    return text.rstrip("0").rstrip(".") if "." in text and not keep_zeros else text


def ln_rep() -> float:
    """ln(1 + 4096): the per-coordinate count of the replication code's uniform grid (2r/ε = 4096), in nats."""
    return math.log(4097)


def whole_range() -> dict[str, int]:
    """N over each dtype's whole finite range: the number of finite values a coordinate can take."""
    return {dt: fp_grid.count_in_interval(v, dt) for dt, v in MAX_FINITE.items()}


def grid_intro() -> str:
    """How a floating-point grid is laid out: M significand bits, 2^M values a binade, subnormals, the closed form."""
    bits = {dt: fp_grid.get_format(dt).mantissa_bits for dt in DTYPES}
    return (
        "A floating-point number is a sign, an exponent and M significand bits ("
        + ", ".join(f"M = {b} for {dt}" for dt, b in bits.items())
        + "). Its grid is not uniform. Between 2^e and 2^(e+1) there are exactly 2^M equally spaced values, so the "
        "spacing near x is about |x|·2^−M. Below the smallest normal number the *subnormal* values are evenly "
        "spaced. The non-negative values, sorted, are the bit patterns read as integers in order. That gives an "
        "exact closed form for the number N(r) of values in [−r, r] (`accessibility_lib.theory.fp_grid`, checked "
        f"against an enumeration of all {2**16:,} 16-bit patterns of fp16 and bf16 and a hand count for fp32)."
    )


def whole_range_text() -> str:
    """The count over the whole finite range (the worst case over any soft prompt), against the uniform grid's."""
    whole = whole_range()
    return (
        " ".join(
            f"In {dt} a coordinate takes N = {n:,} values over the whole finite range (ln N = {math.log(n):.2f} nats)."
            for dt, n in whole.items()
        )
        + " Any soft prompt of m vectors is one of N^(d·m) representable prompts, whatever the model: the "
        "worst-case count. The number of values in [−r, r] grows with r only through the number of binades, so "
        "bounding the support changes a dtype's count little. What makes the slopes of the authors' replication "
        f"code small is its uniform grid: ln(1 + 2r/ε) = {ln_rep():.2f} nats per coordinate at 2r/ε = 4096, "
        f"against {math.log(whole['fp16']):.2f} (fp16) and {math.log(whole['fp32']):.2f} (fp32) over the whole range."
    )


def probe_table(r_probe: float | None = None) -> str:
    """N(r) at r = 1, at ``r_probe`` (default Pythia-160M's r∞) and at 1000 for each dtype, with ln N and the
    2r/ε of the uniform grid with as many points; then what that says about the authors' 2r/ε = 4096."""
    r0 = paper.models()["Pythia-160M"].r_inf if r_probe is None else float(r_probe)
    probe = [1.0, r0, 1000.0]
    lines = [
        "| dtype | " + " | ".join(f"N(r), r = {r:g}" for r in probe) + f" | ln N({r0:g}) | 2r/ε of a uniform grid "
        f"with N({r0:g}) points |",
        "|---|" + "---|" * (len(probe) + 2),
    ]
    for dt in DTYPES:
        lines.append(
            f"| {dt} | " + " | ".join(f"{fp_grid.count_in_interval(r, dt):,}" for r in probe)
            + f" | {math.log(fp_grid.count_in_interval(r0, dt)):.2f} | {fp_grid.equivalent_ratio(r0, dt):,.0f} |"
        )  # fmt: skip
    n16, n32 = fp_grid.count_in_interval(r0, "fp16"), fp_grid.count_in_interval(r0, "fp32")
    share = fp_grid.count_in_interval(1.0, "fp16") / fp_grid.count_in_interval(MAX_FINITE["fp16"], "fp16")
    return "\n".join(lines) + (
        f"\n\nAt r = {r0:g} (Pythia-160M's largest coordinate) fp16 has {n16:,} values in [−r, r]. The uniform grid "
        f"with as many points has 2r/ε = {n16 - 1:,}, {(n16 - 1) / 4096:.1f}× the replication code's 4096, although "
        f"the authors' ε = r∞·2^−11 is about the fp16 spacing *at* r∞ ({fp_grid.spacing(r0, 'fp16'):g}). A uniform "
        f"grid at the coarsest spacing misses the values that crowd near zero: {share:.0%} of all finite fp16 "
        f"values lie in [−1, 1]. In fp32 the same interval holds {n32:,} values: ln N = {math.log(n32):.1f} nats per "
        f"coordinate against ln 4097 = {ln_rep():.2f}."
    )


def input_slopes(e: dict) -> dict[str, float]:
    """C of each dtype over its whole finite range, d·ln N(max finite)/ln|V|: the count of input prompts, the bound
    with no ε (:func:`accessibility_lib.theory.fp_grid.whole_range_count`). ``e``: a paper entry (d, d_vocab)."""
    return {dt: fp_grid.whole_range_count(e["d"], dt, e["d_vocab"]).slope for dt in DTYPES}


def h_cube_slopes(e: dict) -> dict[str, float]:
    """C of each dtype in the cube of half-width r∞ in d dimensions, Σ ln N(r∞)/ln|V|: a count of last-layer states
    h in a box taken from h (the paper's geometry, not an assumption-free bound). ``e``: a paper entry."""
    return {dt: fp_grid.box_count([e["r_inf"]] * e["d"], dt, e["d_vocab"]).slope for dt in DTYPES}


def paper_model_tables(entries: list[dict], gemma_r_inf: float | None = None) -> str:
    """The paper's models under each dtype: two tables (the dtype counts as slopes C; the conventions against the
    measured slope), then where the measured slopes' two sources disagree and, given our own r∞ of Gemma-3-270m,
    how its count would change at it.

    Args:
        entries: :func:`~accessibility_lib.figures.widgets.precision.paper_entries` (name, d, d_vocab, r_inf,
            slope, table1_ratio).
        gemma_r_inf: r∞ of our own Gemma-3-270m support artifact, or None.
    """
    lines = ["| model | d | \\|V\\| | r∞ | C fp16, any input | C bf16, any input | C fp32, any input | C fp16, h cube | "
             "C bf16, h cube | C fp32, h cube |", "|---" * 10 + "|"]  # fmt: skip
    lines2 = ["| model | C rinf_fp16 (4096) | C Table 1 (implied 2r/ε) | measured slope | fp16 any input / measured | "
              "fp16 h cube / measured | rinf_fp16 / measured |", "|---" * 7 + "|"]  # fmt: skip
    for e in entries:
        c, a = h_cube_slopes(e), input_slopes(e)
        rep = e["d"] * ln_rep() / math.log(e["d_vocab"])
        ratio = e["table1_ratio"]
        t1 = (
            "—"
            if ratio is None
            else f"{e['d'] * math.log1p(ratio) / math.log(e['d_vocab']):.0f} (2^{math.log2(ratio):.1f})"
        )
        s = e["slope"]
        lines.append(f"| {e['name']} | {e['d']} | {e['d_vocab']:,} | {e['r_inf']:g} | {a['fp16']:.0f} | {a['bf16']:.0f} | "
                     f"{a['fp32']:.0f} | {c['fp16']:.0f} | {c['bf16']:.0f} | {c['fp32']:.0f} |")  # fmt: skip
        lines2.append(f"| {e['name']} | {rep:.0f} | {t1} | {s:.1f} | {a['fp16'] / s:.2f} | {c['fp16'] / s:.2f} | "
                      f"{rep / s:.2f} |")  # fmt: skip
    odd = [(e["name"], paper.measured_slope(e["name"])) for e in entries if paper.measured_slope(e["name"]).other]
    notes = ["Measured slopes: `paper.measured_slope`, the one source of every chapter (the paper's cramming figures; "
             "the authors' models list for the models the figures do not show)."]  # fmt: skip
    if odd:
        notes.append("Where the two sources disagree: " + "; ".join(f"{n} {s.describe()}" for n, s in odd)
                     + " (chapter 1 compares them).")  # fmt: skip
    gemma = next((e for e in entries if e["name"] == "Gemma-3-270m"), None)
    if gemma_r_inf is not None and gemma is not None:
        dn = {dt: math.log(fp_grid.count_in_interval(gemma_r_inf, dt)) - math.log(fp_grid.count_in_interval(gemma["r_inf"], dt))
              for dt in ("fp32", "fp16")}  # fmt: skip
        notes.append(f"The r∞ column is the authors' models list. For Gemma-3-270m our own embeddings of the 4-bit "
                     f"checkpoint reach r∞ = {gemma_r_inf:.0f} against their {gemma['r_inf']:g}, a gap chapter 5 "
                     "cannot explain. At our r∞ the per-coordinate count ln N(r∞) would change by "
                     + " and ".join(f"{v:+.2f} nats ({dt})" for dt, v in dn.items()) + ".")  # fmt: skip
    return "\n".join(lines) + "\n\n" + "\n".join(lines2) + "\n\n" + " ".join(notes)


def _least(entries: list[dict], slopes) -> tuple[float, str, str]:
    return min((c / e["slope"], e["name"], dt) for e in entries for dt, c in slopes(e).items())


def smallest_margin(entries: list[dict]) -> float:
    """The smallest ratio, over the paper's models and the three dtypes, of the count over any input (each dtype's
    whole finite range, :func:`input_slopes`) to the measured cramming slope: how far above every measured slope
    the bound with no ε stays."""
    return _least(entries, input_slopes)[0]


def h_cube_margin(entries: list[dict]) -> float:
    """The same smallest ratio for the counts in the cube of half-width r∞ of h (:func:`h_cube_slopes`): the paper's
    geometry, not a bound of its own."""
    return _least(entries, h_cube_slopes)[0]


def per_coordinate_text(entries: list[dict]) -> str:
    """How little ln N(r∞) changes from model to model, against ln 4097 and Table 1's implied ratios; the margin."""
    per = {dt: [math.log(fp_grid.count_in_interval(e["r_inf"], dt)) for e in entries] for dt in DTYPES}
    t1 = [math.log1p(e["table1_ratio"]) for e in entries if e["table1_ratio"]]
    rep = ln_rep()

    def rng(v):
        lo, hi = f"{min(v):.1f}", f"{max(v):.1f}"
        return lo if lo == hi else f"{lo}–{hi}"

    out = ["The dtype's count depends on r only through the number of binades below it.",
           "So the per-coordinate count ln N(r∞) hardly changes from model to model: "
           + ", ".join(f"{rng(v)} nats for {dt}" for dt, v in per.items()) + ".",
           f"That compares with ln 4097 = {rep:.2f} for the `rinf_fp16` convention"
           + (f" and {min(t1):.1f}–{max(t1):.1f} for the ratios Table 1's ball row implies." if t1 else ".")]  # fmt: skip
    if rep < min(min(v) for v in per.values()):
        out.append("The `rinf_fp16` convention counts fewer inputs than any of the three dtypes can represent.")
    if t1 and min(min(per["bf16"]), min(per["fp16"])) <= min(t1) and max(t1) <= max(per["fp32"]):
        out.append("Table 1's implied ratios lie inside the range spanned by the 16-bit dtypes and fp32.")
    m_in, who_in, dt_in = _least(entries, input_slopes)
    m_h, who_h, dt_h = _least(entries, h_cube_slopes)
    out.append(f"Over any input, each dtype's whole finite range, the count is the bound with no ε. Its smallest "
               f"slope ({dt_in}, {who_in}) stays {floor_sig(m_in, 2, True)}× or more above every measured slope. The counts "
               f"in the h cube are the paper's geometry, not a theorem: the dtype rounds the input, and the cube is "
               f"taken from the last-layer states. Their smallest ({dt_h}, {who_h}) stays {floor_sig(m_h, 2, True)}× or "
               "more above. Counting representable values gives a bound far from the measured cramming, not a tight "
               "one.")  # fmt: skip
    return " ".join(out)


def chapter_numbers(entries: list[dict]) -> dict[str, str]:
    """The numbers chapter 7's prose states about the dtypes' counts, as text to glue: ``prec_margin``
    (:func:`smallest_margin`, any input), ``prec_margin_h`` (:func:`h_cube_margin`, the h cube), ``prec_ln_rep``
    (ln 4097), ``prec_ln_whole_<dtype>`` (ln N over the whole finite range, nats) and ``prec_binade_<dtype>`` (2^M
    values a binade)."""
    out = {
        "prec_margin": floor_sig(smallest_margin(entries), 2, True),
        "prec_margin_h": floor_sig(h_cube_margin(entries), 2, True),
        "prec_ln_rep": f"{ln_rep():.2f}",
    }
    out.update({f"prec_ln_whole_{dt}": f"{math.log(n):.1f}" for dt, n in whole_range().items()})
    out.update({f"prec_binade_{dt}": f"{2 ** fp_grid.get_format(dt).mantissa_bits:,}" for dt in DTYPES})
    return out
