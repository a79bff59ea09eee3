"""Interactive widgets of the book: live in JupyterLab and in the kernel-less static site.

Three anywidget classes share one front end (``explorer.js``, our own plain ESM, no imports, no URL),
which recomputes the paper's closed forms in the browser — the same formulas as
:mod:`accessibility_lib.theory.bounds`, in log space — and redraws the readout and an SVG plot whenever a
slider or a menu moves. Because the computation runs in JavaScript, the explorers keep working in the
built HTML pages, where there is no kernel: the book's build vendors require.js, the widget
html-manager and anywidget's AMD module into ``book/_vendor`` (``scripts/vendor_assets.py``) and
serves them locally, never from a CDN.

- :class:`BoundExplorer` (``formula="ball"``, chapter 1): Thm 4.5 / Cor 4.6 — ln P = d·m·ln(1 + 2r/ε),
  C = d·ln(1 + 2r/ε)/ln|V|, n* = C·m, ln fraction(n) = min(0, ln P − n·ln|V|). Sliders ε, r, d, |V|, m
  and n; the fraction is drawn against n on a log axis from 1 to 10^``axis_max`` tokens and down to
  10^``floor``, both fixed until the reader picks another range in the menus, except that the n axis widens
  to the next choice when the cliff at n* would leave it (and says so under the chart).
- :class:`MeanFieldExplorer` (``formula="mean_field"``, chapter 4): Thm 4.9 / Cor 4.10 —
  ln ln #accessible = d·ln(1 + 2r/ε) + ln(1 + ln(1 + (2r/ε)^q)), ln n* = ln ln #accessible − ln ln|V|.
  n* of a real model is about 10^2774 tokens, so n is drawn on a double log axis (n from 2 to
  10^(10^``axis_max``)) and every large number is computed and shown from its log10; the ball bound at the
  same parameters and m is drawn beside it.
- :class:`CrammingExplorer` (``formula="cramming"``, chapter 3): the measured n50(m) points of the
  selected series (the others on request) against its bound line C·m, the paper's measured slopes (the
  columns of its Table 1) as a reference band, with ε and r sliders and the ratio C / C_exp shown live;
  a ratio below 1 (the measurement above the bound) is said in words.

The bound explorers carry a model menu (``models``: :func:`data.paper_models` and, measured here,
:func:`data.book_models`) and an ε-convention menu (:data:`accessibility_lib.theory.precision.CONVENTIONS`):
picking a model sets d = its width, |V| = its vocabulary, r = its largest L2 norm (r∞, its largest
absolute coordinate, under a convention whose ``radius`` is ``"r_inf"``, e.g. ``replication``) and
ε = the convention's factor × its reference radius; its measured cramming lengths slope·m are marked
beside n*. :meth:`BoundExplorer.select` does the same from Python.

Example (the last expression of a cell displays the widget)::

    from accessibility_lib.figures.widgets import BoundExplorer, paper_models
    BoundExplorer(models=paper_models(), model="Pythia-160M", convention="rinf_fp16")

Adding a formula means adding a branch to ``compute()`` and a slider list in ``explorer.js`` and the
matching Python in ``values()`` (tests/test_widgets.py compares the two in node, tests/test_browser.py
in the built page). Pages showing a widget need nothing else: the build config (``_config.yml``)
already loads the local widget runtime on every page with widget output.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from accessibility_lib.figures.widgets.data import (
    BOOK_MODELS,
    book_models,
    check_series,
    convention_ball,
    conventions_table,
    model_entry,
    paper_cramming_series,
    paper_models,
    series_from_fits,
    stored_slopes,
)
from accessibility_lib.ground.checks import check_int, check_positive_real, check_real
from accessibility_lib.theory import bounds

__all__ = [
    "BoundExplorer",
    "MeanFieldExplorer",
    "CrammingExplorer",
    "DEFAULT_RANGES",
    "FORMULAS",
    "AXIS_CHOICES",
    "FLOOR_CHOICES",
    "CRAMMING_AXES",
    "BOOK_MODELS",
    "paper_models",
    "book_models",
    "model_entry",
    "conventions_table",
    "convention_ball",
    "paper_cramming_series",
    "stored_slopes",
    "series_from_fits",
    "check_series",
]

_HERE = Path(__file__).parent
_LN10 = math.log(10.0)

#: Formulas the front end knows.
FORMULAS = ("ball", "mean_field", "cramming")

#: Slider ranges (min, max) in the parameters' own units; every slider but q moves on a log10 scale.
#: n (ball) and log10 n (mean field) follow the x axis chosen in the menu instead.
DEFAULT_RANGES: dict[str, tuple[float, float]] = {
    "eps": (1e-10, 10.0),
    "r": (0.01, 1000.0),
    "d": (1, 16384),
    "d_vocab": (2, 10_000_000),
    "m": (1, 1000),
    "q": (1.0, 4.0),
}

#: x-axis menus (``axis_max``): ball: n from 1 to 10^k tokens; mean field: n from 2 to 10^(10^k) tokens.
AXIS_CHOICES: dict[str, tuple[int, ...]] = {"ball": (2, 3, 4, 5, 6, 7, 8, 9), "mean_field": (1, 2, 3, 4, 5, 6)}
#: y-axis menu (``floor``): the fraction axis runs from 1 down to 10^floor.
FLOOR_CHOICES = (-10, -30, -100, -300, -1000, -10000)
#: axes of the cramming explorer (``axis``).
CRAMMING_AXES = ("log:3", "log:4", "log:5", "lin:50", "lin:500", "lin:5000")


def _ranges(kwargs: dict, allowed: dict[str, tuple[float, float]]) -> dict[str, list[float]]:
    ranges = {k: list(v) for k, v in allowed.items()}
    for k, v in dict(kwargs.pop("ranges", None) or {}).items():
        if k not in allowed:
            raise ValueError(f"ranges keys must be among {sorted(allowed)}, got {k!r}")
        lo, hi = (check_real(f"ranges[{k!r}][0]", v[0]), check_real(f"ranges[{k!r}][1]", v[1]))
        if not lo < hi:
            raise ValueError(f"ranges[{k!r}] must satisfy min < max, got {tuple(v)}")
        if lo <= 0:
            raise ValueError(f"ranges[{k!r}] must be > 0 (the slider is logarithmic), got {tuple(v)}")
        ranges[k] = [lo, hi]
    return ranges


class BoundExplorer(anywidget.AnyWidget):
    """Sliders and menus for ε, r, d, |V|, m, n that recompute C, ln P, n* = C·m and the fraction curve.

    Source: the paper's Thm 4.5 and Cor 4.6 (``formula="ball"``), Thm 4.9 and Cor 4.10
    (``formula="mean_field"``); the browser computes exactly what :meth:`values` computes with
    :mod:`accessibility_lib.theory.bounds` (natural logs; compared in tests/test_widgets.py and tests/test_browser.py).

    Args (all keyword, all synced traits):
        eps: precision ε > 0 (same units as r). Default 1/2048, i.e. 2r/ε = 4096 at r = 1.
        r: support radius r > 0.
        d: embedding width d ≥ 1.
        d_vocab: |V| ≥ 2.
        m: prompt length in vectors, ≥ 1 (mean field: for the ball bound and the cramming marks drawn beside it).
        n: sequence length in tokens, ≥ 1, at which the ball fraction is read out.
        log10_n: log10 of the sequence length at which the mean-field fraction is read out (≥ log10 2).
        q: Wasserstein order q ≥ 1 (``"mean_field"`` only).
        formula: ``"ball"`` or ``"mean_field"``.
        models: the model menu, a list of :func:`data.model_entry` dicts (default: the paper's models).
        model: the selected model's name, or ``""`` (custom values). Passing a name without d, |V|, r or
            ε applies :meth:`select`.
        convention: the ε convention's key in :data:`accessibility_lib.theory.precision.CONVENTIONS`.
        axis_max: the x axis's upper end, one of :data:`AXIS_CHOICES` for the formula.
        floor: the fraction axis's lower end, log10, one of :data:`FLOOR_CHOICES`.
        ranges: slider ranges ``{name: (min, max)}`` overriding :data:`DEFAULT_RANGES` (all > 0).
        title: heading shown above the menus (``""`` for the formula's default).

    Raises:
        ValueError: on construction, if a parameter is outside its allowed range (as in ``bounds``),
            the formula, model, convention, axis or floor is unknown.
    """

    _esm = _HERE / "explorer.js"

    formula = traitlets.Unicode("ball").tag(sync=True)
    eps = traitlets.Float(2.0**-11).tag(sync=True)
    r = traitlets.Float(1.0).tag(sync=True)
    d = traitlets.Int(768).tag(sync=True)
    d_vocab = traitlets.Int(50304).tag(sync=True)
    m = traitlets.Int(1).tag(sync=True)
    n = traitlets.Int(600).tag(sync=True)
    log10_n = traitlets.Float(3.0).tag(sync=True)
    q = traitlets.Float(1.0).tag(sync=True)
    models = traitlets.List().tag(sync=True)
    model = traitlets.Unicode("").tag(sync=True)
    convention = traitlets.Unicode("rinf_fp16").tag(sync=True)
    conventions = traitlets.List().tag(sync=True)
    axis_max = traitlets.Int(4).tag(sync=True)
    floor = traitlets.Int(-100).tag(sync=True)
    ranges = traitlets.Dict().tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        ranges = _ranges(kwargs, DEFAULT_RANGES)
        if "models" not in kwargs:
            kwargs["models"] = paper_models()
        explicit = any(k in kwargs for k in ("d", "d_vocab", "r", "eps"))
        super().__init__(ranges=ranges, conventions=conventions_table(), **kwargs)
        if self.model and not explicit:
            self.select(self.model)
        self.values()  # validates every parameter now, with the library's error messages

    def select(self, name: str, convention: str | None = None) -> None:
        """Load a model of the menu (as picking it in the page does).

        Sets d, |V| from the entry, and (r, ε) = :func:`data.convention_ball` under ``convention`` (default:
        the current one): r = the largest L2 norm, or r∞ under a convention whose radius is r∞; ε = factor ×
        reference radius. ``name=""`` keeps the values and only switches to custom.

        Raises:
            ValueError: for a name not in ``models`` or an unknown convention.
        """
        if convention is not None:
            if convention not in {c["key"] for c in self.conventions}:
                raise ValueError(
                    f"convention must be one of {[c['key'] for c in self.conventions]}, got {convention!r}"
                )
            self.convention = convention
        if name == "":
            self.model = ""
            return
        by_name = {m["name"]: m for m in self.models}
        if name not in by_name:
            raise ValueError(f"model must be one of {sorted(by_name)} or '', got {name!r}")
        entry = by_name[name]
        r, eps = convention_ball(self.convention, entry["r_l2"], entry["r_inf"])
        with self.hold_trait_notifications():
            self.model, self.d, self.d_vocab, self.r, self.eps = name, entry["d"], entry["d_vocab"], r, eps

    def values(self) -> dict[str, float | None]:
        """What the front end displays, computed by :mod:`accessibility_lib.theory.bounds` (and in log space).

        Returns:
            ``"ball"``: ``C`` (tokens per vector), ``logP`` (nats), ``nstar`` (tokens), ``log10Nstar``,
            ``lnFracN`` (nats, at n).
            ``"mean_field"``: ``loglog`` (ln ln #accessible), ``logNstar`` (ln of tokens), ``log10Nstar``,
            ``negLog10FracN`` = log10(−log10 fraction) at n = 10^log10_n (None when the fraction bound is 1),
            ``C`` and ``nstarBall`` (the ball bound at the same parameters and m).

        Raises:
            ValueError: on an invalid parameter, formula, model, convention, axis or floor.
        """
        if self.formula not in FORMULAS[:2]:
            raise ValueError(f"formula must be one of {FORMULAS[:2]}, got {self.formula!r}")
        if self.axis_max not in AXIS_CHOICES[self.formula]:
            raise ValueError(f"axis_max must be one of {AXIS_CHOICES[self.formula]}, got {self.axis_max!r}")
        if self.floor not in FLOOR_CHOICES:
            raise ValueError(f"floor must be one of {FLOOR_CHOICES}, got {self.floor!r}")
        if self.convention not in {c["key"] for c in self.conventions}:
            raise ValueError(
                f"convention must be one of {[c['key'] for c in self.conventions]}, got {self.convention!r}"
            )
        if self.model and self.model not in {m["name"] for m in self.models}:
            raise ValueError(f"model must be one of {sorted(m['name'] for m in self.models)} or '', got {self.model!r}")
        d, r, eps = (
            check_int("d", self.d, minimum=1),
            check_positive_real("r", self.r),
            check_positive_real("eps", self.eps),
        )
        vocab = check_int("d_vocab", self.d_vocab, minimum=2)
        m = check_int("m", self.m, minimum=1)
        C = bounds.ball_slope(d, r, eps, vocab)
        if self.formula == "mean_field":
            log10_n = check_real("log10_n", self.log10_n, minimum=math.log10(2.0))
            loglog = bounds.mean_field_loglog_count(d, r, eps, self.q)
            log_nstar = loglog - math.log(math.log(vocab))
            # −log10 fraction = (n ln|V| − ln #accessible)/ln 10 with n = 10^log10_n, in log space
            a = log10_n * _LN10 + math.log(math.log(vocab))  # ln(n ln|V|)
            neg = None if a <= loglog else (a + math.log(-math.expm1(loglog - a))) / _LN10 - math.log10(_LN10)
            return {
                "loglog": loglog,
                "logNstar": log_nstar,
                "log10Nstar": log_nstar / _LN10,
                "negLog10FracN": neg,
                "C": C,
                "nstarBall": C * m,
            }
        n = check_int("n", self.n, minimum=1)
        nstar = bounds.ball_threshold_length(d, r, eps, vocab, m)
        return {
            "C": C,
            "logP": bounds.log_packing_ball(d, r, eps, m),
            "nstar": nstar,
            "log10Nstar": math.log10(nstar),
            "lnFracN": bounds.log_accessible_fraction(d, r, eps, vocab, m, n),
        }


class MeanFieldExplorer(BoundExplorer):
    """:class:`BoundExplorer` with ``formula="mean_field"`` (Thm 4.9, Cor 4.10) and toy-sized defaults.

    Defaults d = 4, r = 1, ε = 0.25, |V| = 30, n = 10^4 tokens, x axis up to 10^(10^5) tokens: n* ≈ 10^3.8,
    and picking one of the paper's models in the menu moves it to about 10^2774 (Pythia-160M).
    """

    formula = traitlets.Unicode("mean_field").tag(sync=True)
    d = traitlets.Int(4).tag(sync=True)
    eps = traitlets.Float(0.25).tag(sync=True)
    d_vocab = traitlets.Int(30).tag(sync=True)
    log10_n = traitlets.Float(4.0).tag(sync=True)
    axis_max = traitlets.Int(5).tag(sync=True)


class CrammingExplorer(anywidget.AnyWidget):
    """Measured n50(m) of several series against the bound line C·m, with ε and r sliders (Table 1 live).

    Source: Cor 4.6 (C = d·ln(1 + 2r/ε)/ln|V|) and the cramming experiment of the paper's Section 5, whose
    ratios C / C_exp make its Table 1.

    Args (keyword):
        series: list of series dicts (see :mod:`accessibility_lib.figures.widgets.data`; checked by
            :func:`data.check_series`): ``{name, points [(m, n50, lo, hi)], d, vocab, r, eps, convention}``
            plus optional ``slope`` (the measured C_exp the ratio uses; None: least squares of the points)
            and ``slope_source``.
        selected: the series whose d, |V| make the bound line (default: the first). Its r and ε are loaded
            unless ``r``/``eps`` are given.
        eps, r: the precision and radius of the bound (sliders).
        axis: one of :data:`CRAMMING_AXES` (``"log:4"``: log–log, n50 from 1 to 10^4; ``"lin:500"``: linear).
        ranges: slider ranges for ``eps`` and ``r`` (log scale, > 0).
        title: heading ("" for the default).

    Raises:
        ValueError: for bad series, an unknown selected name or axis, r or ε not > 0.
    """

    _esm = _HERE / "explorer.js"

    formula = traitlets.Unicode("cramming").tag(sync=True)
    series = traitlets.List().tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    eps = traitlets.Float(1.0).tag(sync=True)
    r = traitlets.Float(1.0).tag(sync=True)
    axis = traitlets.Unicode("log:4").tag(sync=True)
    ranges = traitlets.Dict().tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        ranges = _ranges(kwargs, {"eps": DEFAULT_RANGES["eps"], "r": DEFAULT_RANGES["r"]})
        series = check_series(kwargs.pop("series", None) or [])
        selected = kwargs.pop("selected", None) or series[0]["name"]
        names = [s["name"] for s in series]
        if selected not in names:
            raise ValueError(f"selected must be one of {names}, got {selected!r}")
        chosen = series[names.index(selected)]
        kwargs.setdefault("r", chosen["r"])
        kwargs.setdefault("eps", chosen["eps"])
        super().__init__(ranges=ranges, series=series, selected=selected, **kwargs)
        self.values()

    def select(self, name: str) -> None:
        """Select a series and load its r and ε (as the page's menu does).

        Raises:
            ValueError: for a name that is not a series.
        """
        by_name = {s["name"]: s for s in self.series}
        if name not in by_name:
            raise ValueError(f"selected must be one of {sorted(by_name)}, got {name!r}")
        with self.hold_trait_notifications():
            self.selected, self.r, self.eps = name, by_name[name]["r"], by_name[name]["eps"]

    def values(self) -> dict[str, float | None]:
        """What the front end displays for the selected series at the current ε and r.

        Returns:
            ``C`` (Cor 4.6, tokens per vector), ``slope`` (the series' C_exp, or the least-squares slope of its
            points), ``slopePoints`` (least-squares slope with intercept of its points; None with fewer than
            two distinct m), ``ratio`` = C / slope (None when slope ≤ 0 or missing, or when the series marks its slope
            not reliable: fewer than three bracketed n50 or an interval that includes 0), ``ratio2r`` = 2r/ε.

        Raises:
            ValueError: on an unknown axis or series, r or ε not > 0.
        """
        if self.axis not in CRAMMING_AXES:
            raise ValueError(f"axis must be one of {CRAMMING_AXES}, got {self.axis!r}")
        by_name = {s["name"]: s for s in self.series}
        if self.selected not in by_name:
            raise ValueError(f"selected must be one of {sorted(by_name)}, got {self.selected!r}")
        s = by_name[self.selected]
        r, eps = check_positive_real("r", self.r), check_positive_real("eps", self.eps)
        C = bounds.ball_slope(s["d"], r, eps, s["d_vocab"])
        ms = [p[0] for p in s["points"]]
        slope_points = None
        if len(set(ms)) >= 2:
            from accessibility_lib.experiments.slope_fit import fit_slope

            slope_points = fit_slope(ms, [p[1] for p in s["points"]]).slope
        slope = s["slope"] if s["slope"] is not None else slope_points
        return {
            "C": C,
            "slope": slope,
            "slopePoints": slope_points,
            "ratio": C / slope if slope is not None and slope > 0 and s.get("reliable") is not False else None,
            "ratio2r": 2.0 * r / eps,
        }
