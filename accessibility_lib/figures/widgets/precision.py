"""The precision explorer of chapter 7: pick a dtype and a model, see the dtype's exact count against the paper's ε.

One anywidget (:class:`PrecisionExplorer`, front end ``precision.js``: our own plain ESM, no imports, no
URL) that recomputes in the browser, so it works in the kernel-less static site:

- the exact number of representable values of the dtype in [−r_i, r_i] per coordinate
  (:func:`accessibility_lib.theory.fp_grid.count_in_interval`, closed form), hence ln P = m·Σ_i ln N(r_i), the
  slope C_dtype = Σ_i ln N(r_i)/ln|V| and n* = C_dtype·m (paper Thm 4.5 / Cor 4.6 with the dtype's
  count in place of the ε-packing);
- beside it, under the paper's conventions: the replication code's ε = r∞·2^−11 (2r/ε = 4096,
  C = d·ln 4097/ln|V|), the 2r/ε implied by Table 1's ball row (paper models only), and a uniform
  grid at the dtype's unit roundoff u (ε = r∞·u, C = d·ln(1 + 2/u)/ln|V|);
- the ratio of each C to the model's measured cramming slope, when there is one.

Each model entry is a dict ``{name, group, d, d_vocab, r_inf, radii?, slope?, table1_ratio?}``:
``radii`` (per-coordinate half-widths of the box holding the sampled last-layer embeddings) when they
were measured, else the cube of half-width r∞; ``slope`` the measured (natural-text) cramming slope.
:func:`paper_entries` builds the paper's models.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from accessibility_lib.theory import fp_grid

__all__ = ["PrecisionExplorer", "paper_entries", "model_entry", "DTYPES"]

_HERE = Path(__file__).parent
#: dtypes offered by the menu (fp64's counts exceed 2^53: not exact in JavaScript)
DTYPES = ("fp32", "bf16", "fp16")


def model_entry(name: str, d: int, d_vocab: int, r_inf: float, *, radii=None, slope=None, table1_ratio=None,
                group: str = "book") -> dict:  # fmt: skip
    """One menu entry (see the module docstring).

    Raises:
        ValueError: d < 1, |V| < 2, r∞ ≤ 0, or radii of the wrong length or not > 0.
    """
    if int(d) < 1 or int(d_vocab) < 2 or not float(r_inf) > 0:
        raise ValueError(f"model {name!r}: need d ≥ 1, d_vocab ≥ 2, r_inf > 0, got {d}, {d_vocab}, {r_inf}")
    entry = {"name": str(name), "group": group, "d": int(d), "d_vocab": int(d_vocab), "r_inf": float(r_inf),
             "slope": None if slope is None else float(slope),
             "table1_ratio": None if table1_ratio is None else float(table1_ratio)}  # fmt: skip
    if radii is not None:
        radii = [float(x) for x in radii]
        if len(radii) != int(d) or min(radii) <= 0:
            raise ValueError(f"model {name!r}: radii must be {d} half-widths > 0, got {len(radii)} values")
        entry["radii"] = radii
    return entry


def paper_entries() -> list[dict]:
    """The paper's models (models_list): d, |V|, r∞, the measured natural slope and Table 1's implied 2r/ε."""
    from accessibility_lib.theory import paper

    cols = {v: k for k, v in paper.TABLE1_COLUMNS.items()}
    ball = paper.table1()["ball (Cor 4.6)"]
    out = []
    for name, pm in paper.models().items():
        slope = paper.measured_slope(name).value  # the one source (figures, else the authors' list)
        ratio = None
        if name in cols and slope:
            ratio = math.expm1(ball[cols[name]] * slope * math.log(pm.d_vocab) / pm.d_model)
        out.append(model_entry(name, pm.d_model, pm.d_vocab, pm.r_inf, slope=slope, table1_ratio=ratio, group="paper"))
    return out


class PrecisionExplorer(anywidget.AnyWidget):
    """Menus for the dtype and the model and a slider for m; readouts of the exact dtype count and the conventions.

    Args (keyword, synced traits):
        models: menu entries (:func:`model_entry`, :func:`paper_entries`); default the paper's models.
        model: the selected entry's name (default the first).
        dtype: one of :data:`DTYPES`.
        m: prompt length in vectors (≥ 1).
        title: heading.

    Raises:
        ValueError: an unknown dtype or model name, m < 1, no models.
    """

    _esm = _HERE / "precision.js"
    models = traitlets.List().tag(sync=True)
    model = traitlets.Unicode("").tag(sync=True)
    dtype = traitlets.Unicode("fp16").tag(sync=True)
    m = traitlets.Int(1).tag(sync=True)
    title = traitlets.Unicode("The grid a dtype has, against the paper's ε").tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        if not kwargs.get("models"):
            kwargs["models"] = paper_entries()
        super().__init__(**kwargs)
        if not self.model:
            self.model = self.models[0]["name"]
        self.values()  # validates

    def _entry(self) -> dict:
        for e in self.models:
            if e["name"] == self.model:
                return e
        raise ValueError(f"model must be one of {[e['name'] for e in self.models]}, got {self.model!r}")

    def values(self) -> dict[str, float | None]:
        """What the front end shows (natural logs), computed with :mod:`accessibility_lib.theory.fp_grid`."""
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {self.dtype!r}")
        if self.m < 1:
            raise ValueError(f"m must be ≥ 1, got {self.m}")
        e = self._entry()
        d, logV = e["d"], math.log(e["d_vocab"])
        radii = e.get("radii") or [e["r_inf"]] * d
        log_count = fp_grid.log_count_box(radii, self.dtype)
        C = log_count / logV
        u = fp_grid.get_format(self.dtype).unit_roundoff
        out = {
            "logCount": log_count,
            "C": C,
            "nstar": C * self.m,
            "log10P": self.m * log_count / math.log(10),
            "perCoordinate": log_count / d,
            "equivalentRatio": math.expm1(log_count / d),
            "C_replication": d * math.log1p(4096.0) / logV,
            "C_unit": d * math.log1p(2.0 / u) / logV,
            "C_table1": None if e.get("table1_ratio") is None else d * math.log1p(e["table1_ratio"]) / logV,
            "slope": e.get("slope"),
        }
        for key in ("C", "C_replication", "C_unit", "C_table1"):
            out[f"ratio_{key}"] = None if not e.get("slope") or out[key] is None else out[key] / e["slope"]
        return out
