"""Interactive widgets of the book: live in JupyterLab and in the kernel-less static site.

:class:`BoundExplorer` is one anywidget class whose front end (``explorer.js``, our own plain ESM)
recomputes the paper's closed forms in the browser — the same formulas as
:mod:`accessibility_lib.bounds`, in log space — and redraws the readout and an SVG plot whenever a
slider moves. Because the computation runs in JavaScript, the sliders keep working in the built
HTML pages, where there is no kernel: the book's build vendors require.js, the widget html-manager
and anywidget's AMD module into ``book/_vendor`` (``scripts/vendor_assets.py``) and serves them
locally, never from a CDN.

Two formulas are built in (trait ``formula``):

- ``"ball"`` (default; chapter 1): Thm 4.5 / Cor 4.6 — ln P = d·m·ln(1 + 2r/ε), C = d·ln(1 + 2r/ε)/ln|V|,
  n* = C·m, ln fraction(n) = min(0, ln P − n·ln|V|). Sliders: ε (log scale), r, d, |V| (log scale), m, n.
- ``"mean_field"`` (chapter 4): Thm 4.9 / Cor 4.10 — ln ln #accessible = d·ln(1 + 2r/ε) + ln(1 + ln(1 + (2r/ε)^q)),
  ln n* = ln ln #accessible − ln ln|V|, ln fraction(n) = min(0, ln #accessible − n·ln|V|).
  Sliders: ε (log scale), r, d, |V| (log scale), q, n. Use :class:`MeanFieldExplorer` or
  ``BoundExplorer(formula="mean_field")``.

Reusing it in another chapter (e.g. the mean-field chapter)::

    from accessibility_lib.widgets import MeanFieldExplorer
    MeanFieldExplorer(d=4, r=1.0, eps=0.25, vocab_size=30, n=50,
                      ranges={"d": (1, 16), "n": (0, 400)})   # last expression of a cell: it displays

Adding a third formula means adding a branch to ``compute()`` and a slider list to ``SLIDERS`` in
``explorer.js`` and the matching Python in :meth:`BoundExplorer.values` (the browser test compares
the two). Pages showing the widget need nothing else: the build config (``_config.yml``) already
loads the local widget runtime on every page with widget output.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from .. import bounds
from .._checks import check_int, check_positive_real, check_real

__all__ = ["BoundExplorer", "MeanFieldExplorer", "DEFAULT_RANGES", "FORMULAS"]

_HERE = Path(__file__).parent

#: Formulas the front end knows.
FORMULAS = ("ball", "mean_field")

#: Default slider ranges (min, max) in the parameters' own units; ε and |V| sliders are log-scaled.
DEFAULT_RANGES: dict[str, tuple[float, float]] = {
    "eps": (1e-8, 1.0),
    "r": (0.1, 300.0),
    "d": (1, 8192),
    "vocab_size": (2, 10_000_000),
    "m": (1, 1000),
    "n": (0, 20000),
    "q": (1.0, 4.0),
}


class BoundExplorer(anywidget.AnyWidget):
    """Sliders for ε, r, d, |V|, m, n that recompute C, ln P, n* = C·m and the accessible-fraction curve.

    Source: the paper's Thm 4.5 and Cor 4.6 (``formula="ball"``), Thm 4.9 and Cor 4.10
    (``formula="mean_field"``); the browser computes exactly what :mod:`accessibility_lib.bounds`
    computes (natural logs; tested to 4 significant digits in tests/test_browser.py).

    Args (all keyword, all synced traits):
        eps: precision ε > 0 (same units as r). Default 1/2048, i.e. 2r/ε = 4096 at r = 1 (the
            replication code's convention).
        r: support radius r > 0.
        d: embedding width d ≥ 1.
        vocab_size: |V| ≥ 2.
        m: prompt length in vectors, ≥ 1 (ignored by ``"mean_field"``).
        n: sequence length in tokens, ≥ 0, at which the fraction is read out.
        q: Wasserstein order q ≥ 1 (``"mean_field"`` only).
        formula: ``"ball"`` or ``"mean_field"``.
        ranges: slider ranges ``{name: (min, max)}`` overriding :data:`DEFAULT_RANGES` (ε and |V| on
            a log10 scale, d, m, n integer).
        title: heading shown above the sliders ("" for the formula's default).

    Raises:
        ValueError: on construction, if a parameter is outside its allowed range (as in ``bounds``),
            or ``formula`` is unknown.
    """

    _esm = _HERE / "explorer.js"

    formula = traitlets.Unicode("ball").tag(sync=True)
    eps = traitlets.Float(2.0**-11).tag(sync=True)
    r = traitlets.Float(1.0).tag(sync=True)
    d = traitlets.Int(768).tag(sync=True)
    vocab_size = traitlets.Int(50304).tag(sync=True)
    m = traitlets.Int(1).tag(sync=True)
    n = traitlets.Int(600).tag(sync=True)
    q = traitlets.Float(1.0).tag(sync=True)
    ranges = traitlets.Dict().tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        ranges = {k: list(v) for k, v in DEFAULT_RANGES.items()}
        for k, v in dict(kwargs.pop("ranges", None) or {}).items():
            if k not in DEFAULT_RANGES:
                raise ValueError(f"ranges keys must be among {sorted(DEFAULT_RANGES)}, got {k!r}")
            lo, hi = (check_real(f"ranges[{k!r}][0]", v[0]), check_real(f"ranges[{k!r}][1]", v[1]))
            if not lo < hi:
                raise ValueError(f"ranges[{k!r}] must satisfy min < max, got {tuple(v)}")
            ranges[k] = [lo, hi]
        super().__init__(ranges=ranges, **kwargs)
        self.values()  # validates every parameter now, with the library's error messages

    def values(self) -> dict[str, float]:
        """What the front end displays, computed by :mod:`accessibility_lib.bounds`.

        Returns:
            ``"ball"``: ``C`` (tokens per vector), ``logP`` (nats), ``nstar`` (tokens), ``lnFracN`` (nats).
            ``"mean_field"``: ``loglog`` (ln ln #accessible), ``logNstar`` (ln of tokens), ``nstar``
            (tokens, ``inf`` when it exceeds a float), ``lnFracN`` (nats).

        Raises:
            ValueError: on an invalid parameter or formula.
        """
        if self.formula not in FORMULAS:
            raise ValueError(f"formula must be one of {FORMULAS}, got {self.formula!r}")
        d, r, eps = (
            check_int("d", self.d, minimum=1),
            check_positive_real("r", self.r),
            check_positive_real("eps", self.eps),
        )
        n = check_int("n", self.n, minimum=0)
        if self.formula == "mean_field":
            loglog = bounds.mean_field_loglog_count(d, r, eps, self.q)
            log_nstar = loglog - math.log(math.log(check_int("vocab_size", self.vocab_size, minimum=2)))
            nstar = math.exp(log_nstar) if log_nstar < 709.0 else math.inf
            frac = bounds.mean_field_log_accessible_fraction(d, r, eps, self.vocab_size, n, self.q)
            return {"loglog": loglog, "logNstar": log_nstar, "nstar": nstar, "lnFracN": frac}
        return {
            "C": bounds.ball_slope(d, r, eps, self.vocab_size),
            "logP": bounds.log_packing_ball(d, r, eps, self.m),
            "nstar": bounds.ball_threshold_length(d, r, eps, self.vocab_size, self.m),
            "lnFracN": bounds.log_accessible_fraction(d, r, eps, self.vocab_size, self.m, n),
        }


class MeanFieldExplorer(BoundExplorer):
    """:class:`BoundExplorer` with ``formula="mean_field"`` (Thm 4.9, Cor 4.10) and toy-sized defaults.

    Defaults d = 4, r = 1, ε = 0.25, |V| = 30, n = 100 keep ln #accessible small enough that the threshold n*
    is a plottable number; real models give n* ≈ e^{thousands} (shown as ∞, with ln n* still exact).
    """

    formula = traitlets.Unicode("mean_field").tag(sync=True)
    d = traitlets.Int(4).tag(sync=True)
    eps = traitlets.Float(0.25).tag(sync=True)
    vocab_size = traitlets.Int(30).tag(sync=True)
    n = traitlets.Int(100).tag(sync=True)
