"""What the explorers are loaded with: the models of the selector and the cramming series.

Model entries (the ``models`` trait of :class:`~accessibility_lib.figures.widgets.BoundExplorer`) are dicts::

    {"name": "Pythia-160M", "group": "paper" | "book", "d": 768, "d_vocab": 50304,
     "r_inf": 22.45, "r_l2": 271.0, "slope_natural": 90.37, "slope_random": 44.13, "source": "..."}

- the paper's models (:func:`paper_models`): d = ``d_model``, |V| = ``d_vocab``, r∞ = ``r_inf`` and the
  largest L2 norm r_l2 = ``r_l2`` from the authors' model list (:func:`accessibility_lib.theory.paper.models`); the
  measured cramming slopes (natural text, random) from :func:`accessibility_lib.theory.paper.measured_slope`
  (paper §5), or, for the models that table lacks, the natural-text slope of the authors' list (random: None);
- this book's models (:func:`book_models`): d and |V| from the config (:func:`accessibility_lib.theory.capacity.read_shape`),
  r∞ and r_l2 measured here on the last-layer embeddings of a few dozen random prompts
  (:func:`accessibility_lib.geometry.embeddings.sample_embeddings`); a model that is not fetched is skipped and named
  in the returned notes. Their cramming slopes are None unless passed in ``measured``; chapter 1 passes
  :func:`stored_slopes`, chapter 3's slopes read from the stored cramming artifacts, each with its step budget
  (``slope_steps``). The menu shows ``label``, the model's name as its authors write it
  (:func:`accessibility_lib.models.names.label`); ``name`` stays the key the chapters and tests select by.

Cramming series (the ``series`` trait of :class:`~accessibility_lib.figures.widgets.CrammingExplorer`) are dicts::

    {"name": "...", "points": [[m, n50, lo, hi], ...], "d": 768, "d_vocab": 50304, "r": 22.45,
     "eps": 0.01096, "convention": "rinf_fp16", "slope": 90.37, "slope_source": "..."}

``lo``/``hi`` is the n50 interval (None when there is none); ``slope`` the measured slope C_exp that the
ratio C / C_exp uses (None: the least-squares slope of the points); ``group`` is ``"paper"`` for the paper's
measurements (their slopes, the columns of its Table 1, make the explorer's reference band) and ``"book"``
(the default) for this book's runs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from accessibility_lib.ground.checks import check_int, check_positive_real
from accessibility_lib.theory import paper, precision

__all__ = [
    "BOOK_MODELS",
    "paper_models",
    "book_models",
    "model_entry",
    "conventions_table",
    "paper_cramming_series",
    "series_from_fits",
    "check_series",
    "stored_slopes",
]

#: The book's own models offered by the selectors (``nano`` is shipped; the others once fetched).
BOOK_MODELS = ("nano", "smollm2-135m", "gemma-3-270m")


def model_entry(
    name: str,
    d: int,
    d_vocab: int,
    r_inf: float,
    r_l2: float,
    *,
    group: str = "book",
    slope_natural: float | None = None,
    slope_random: float | None = None,
    slope_steps: int | None = None,
    source: str = "",
    label: str | None = None,
) -> dict[str, Any]:
    """One model of the selector, checked.

    ``label`` is what the menu and the status line show (default: ``name``); ``slope_steps`` the optimiser steps a
    target behind the slopes, where the book measured them (the readouts name it; None for the paper's slopes).

    Raises:
        ValueError: if d < 1, vocab < 2, a radius is not > 0, a slope is given and not > 0, or group
            is not ``"paper"``/``"book"``.
    """
    if group not in ("paper", "book"):
        raise ValueError(f"group must be 'paper' or 'book', got {group!r}")
    slopes = {}
    for key, s in (("slope_natural", slope_natural), ("slope_random", slope_random)):
        slopes[key] = None if s is None else check_positive_real(key, s)
    return {
        "name": str(name),
        "label": str(label or name),
        "group": group,
        "d": check_int("d", d, minimum=1),
        "d_vocab": check_int("d_vocab", d_vocab, minimum=2),
        "r_inf": check_positive_real("r_inf", r_inf),
        "r_l2": check_positive_real("r_l2", r_l2),
        **slopes,
        "slope_steps": None if slope_steps is None else check_int("slope_steps", slope_steps, minimum=1),
        "source": source,
    }


def paper_models() -> list[dict[str, Any]]:
    """The paper's ten models (authors' list order), with their measured cramming slopes."""
    out = []
    for name, pm in paper.models().items():
        nat = paper.measured_slope(name)  # the one source (the paper's figures, else the authors' list)
        rnd = paper.measured_slope(name, "random").value if nat.source == "figures" else None
        source = "authors' model list; slopes: " + nat.describe()
        nat = nat.value
        out.append(
            model_entry(
                name,
                pm.d_model,
                pm.d_vocab,
                pm.r_inf,
                pm.r_l2,
                group="paper",
                slope_natural=nat,
                slope_random=rnd,
                source=source,
            )
        )
    return out


def same_model_note(name: str, radii: Mapping[str, float]) -> str:
    """For a book model that is also one of the paper's (Gemma-3-270M), where its radii differ from the authors'
    list: both, and where the book compares them (chapter 5, which sets out what was checked; the gap is not
    explained). "" for a model that is not one of the paper's."""
    pm = next((p for n, p in paper.models().items() if n.lower() == name.lower()), None)
    if pm is None:
        return ""
    return (
        f"; the authors' list gives this model r∞ = {pm.r_inf:g} and L2 = {pm.r_l2:g} against our "
        f"{radii['linf']:.3g} and {radii['l2']:.3g} (chapter 5 sets out what was checked; the gap is unexplained)"
    )


def book_models(
    names: Iterable[str] = BOOK_MODELS,
    *,
    n_prompts: int = 64,
    length: int = 16,
    seed: int = 0,
    measured: Mapping[str, tuple] | None = None,
    stored: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The book's models with r∞ and r_l2 measured on ``n_prompts`` random prompts of ``length`` tokens, or
    taken from a stored measurement.

    Args:
        names: model names (``nano``, ``smollm2-135m``, ``gemma-3-270m``; any name ``load_model`` accepts).
        n_prompts, length: the random prompts whose last-layer embeddings (after the final norm) give
            r∞ (largest |coordinate|) and r_l2 (largest L2 norm); a few dozen prompts give maxima of a small
            sample, below the paper's 10,000 prompts (maxima only grow with the sample). A chapter that
            also prints a stored radius passes it as ``stored`` instead, so that it shows one r per model.
        seed: prompt seed.
        measured: optional ``{name: (natural slope, random slope)}`` or ``{name: (natural, random, steps)}``
            measured elsewhere (e.g. chapter 3's, :func:`stored_slopes`), steps the budget they were measured at.
        stored: optional ``{name: {"linf": r∞, "l2": r_l2, "sample": what they were measured on}}``, e.g. chapter
            5's support artifact, which chapter 3 passes so that the explorer, its tables and chapter 5 use one r;
            a model given here is neither loaded nor measured (it need not be fetched).

    Returns:
        (entries, notes): the entries of the fetched models; one note per model skipped (not fetched)
        and one per model measured (prompts, radii, seconds).

    Raises:
        ValueError: on n_prompts < 1 or length < 1.
    """
    import time

    from accessibility_lib.geometry import support_shape as geometry
    from accessibility_lib.geometry.embeddings import sample_embeddings
    from accessibility_lib.models.loading import cache_dir, load_model
    from accessibility_lib.models.names import label as model_label
    from accessibility_lib.theory import capacity

    n_prompts = check_int("n_prompts", n_prompts, minimum=1)
    length = check_int("length", length, minimum=1)
    measured = dict(measured or {})
    entries, notes = [], []
    stored = dict(stored or {})
    for name in names:
        t0 = time.perf_counter()
        if name in stored:
            rad = {"linf": float(stored[name]["linf"]), "l2": float(stored[name]["l2"])}
            source, how = f"r stored, measured on {stored[name]['sample']}", f"stored: {stored[name]['sample']}"
        elif name != "nano" and not (cache_dir() / name / "config.json").exists():
            notes.append(f"{name}: not fetched (python -m accessibility_lib fetch {name}); not in the selector")
            continue
        else:
            handle = load_model(name)
            rad = geometry.radii(
                sample_embeddings(handle, n_prompts, [length], seed=seed, desc=f"{name} embeddings")[length]
            )
            del handle
            sample = f"{n_prompts} random prompts of {length} tokens"
            source, how = f"r measured on {sample}", f"{sample}, {time.perf_counter() - t0:.0f} s"
        shape = capacity.read_shape(name)
        nat, rnd, steps = (tuple(measured.get(name, ())) + (None, None, None))[:3]
        if nat is not None or rnd is not None:
            at = f" at {steps} steps a target" if steps else ""
            source += f"; cramming slopes measured in chapter 3{at}"
        entries.append(
            model_entry(
                name,
                shape.d_model,
                shape.d_vocab,
                rad["linf"],
                rad["l2"],
                group="book",
                slope_natural=nat,
                slope_random=rnd,
                slope_steps=steps,
                source=f"config; {source}" + same_model_note(name, rad),
                label=model_label(name),
            )
        )
        notes.append(
            f"{name}: d = {shape.d_model}, |V| = {shape.d_vocab}, r∞ = {rad['linf']:.3g}, max L2 norm = {rad['l2']:.3g} "
            f"({how})"
            + (
                f"; natural-text cramming slope {nat:.1f}{f' at {steps} steps' if steps else ''}"
                if nat is not None
                else ""
            )
            + same_model_note(name, rad)
        )
    return entries, notes


def stored_slopes(names: Iterable[str] = BOOK_MODELS, folder=None) -> dict[str, tuple[float | None, float | None, int]]:
    """The cramming slopes chapter 3 measured for the book's real models, read from the stored artifacts.

    For each of ``names`` with a cramming artifact (:func:`accessibility_lib.runs.real_models.with_cramming_artifacts`),
    the natural-text and random-words slopes at its largest step budget with m = 1–4 complete and a reliable
    natural-text slope (:func:`accessibility_lib.runs.table1_measured.slopes_by_budget`, the budget Table 1's ratios
    divide by). An unreliable random-words slope there is None.

    Args:
        names: the models to look up (others are not read).
        folder: where the artifacts lie (default ``book/data/cramming``; tests).

    Returns:
        ``{name: (natural slope, random slope or None, steps)}`` for the models that have one; the form
        :func:`book_models` takes as ``measured``.
    """
    from accessibility_lib.runs import table1_measured as TM
    from accessibility_lib.runs.cramming_artifacts import load_artifact
    from accessibility_lib.runs.real_models import with_cramming_artifacts

    out: dict[str, tuple[float | None, float | None, int]] = {}
    wanted = set(names)
    for name in with_cramming_artifacts(folder):
        if name not in wanted:
            continue
        by_budget = TM.slopes_by_budget(name, artifact=load_artifact(name, folder))
        ok = [b for b, k in by_budget.items() if k.get("natural") is not None and k["natural"].reliable]
        if not ok:
            continue
        kinds = by_budget[max(ok)]
        rnd = kinds.get("random_words")
        out[name] = (kinds["natural"].fit.slope, rnd.fit.slope if rnd is not None and rnd.reliable else None, max(ok))
    return out


def conventions_table() -> list[dict[str, Any]]:
    """The named ε conventions of :data:`accessibility_lib.theory.precision.CONVENTIONS` that are relative to a radius,
    as the front end reads them: ``{key, name, plain, description, factor, reference, radius}`` (``plain``: the
    convention in plain words, :func:`accessibility_lib.theory.precision.plain_name`, for the status line)."""
    out = []
    for key, c in precision.CONVENTIONS.items():
        if c.absolute is not None:
            continue
        out.append(
            {
                "key": key,
                "name": c.name,
                "plain": precision.plain_name(key),
                "description": c.description,
                "factor": c.factor,
                "reference": c.reference,
                "radius": getattr(c, "radius", "r_inf" if c.reference == "r_inf" else "l2"),
            }
        )
    return out


def convention_ball(convention: str, r_l2: float, r_inf: float) -> tuple[float, float]:
    """(r, ε) of the ball bound under the named ``convention`` (as the front end computes it).

    r is the largest L2 norm r_l2 or r∞ by the convention's ``radius``; ε is its ``factor`` times r
    (reference ``"r"``) or times r∞ (reference ``"r_inf"``).

    Raises:
        ValueError: for an unknown convention name or a radius that is not > 0.
    """
    c = precision.get(convention)
    r_l2 = check_positive_real("r_l2", r_l2)
    r_inf = check_positive_real("r_inf", r_inf)
    radius = getattr(c, "radius", "r_inf" if c.reference == "r_inf" else "l2")
    r = r_inf if radius == "r_inf" else r_l2
    return r, c.eps(r=r, r_inf=r_inf)


def _finite_or_none(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def check_series(series: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Validate cramming series and return JSON-ready copies (NaN intervals become None).

    Raises:
        ValueError: naming the series and the field: empty list, duplicate names, no points, a point
            that is not (m, n50, lo, hi) with m > 0 and n50 > 0, d < 1, vocab < 2, r or eps not > 0, a group
            other than "paper" or "book".
    """
    if not series:
        raise ValueError("series must hold at least one series, got none")
    out, seen = [], set()
    for i, s in enumerate(series):
        name = str(s.get("name", ""))
        where = f"series[{i}] ({name!r})"
        if not name or name in seen:
            raise ValueError(f"{where}: name must be a non-empty string, unique among the series")
        seen.add(name)
        pts = []
        for j, p in enumerate(s.get("points") or []):
            if len(p) != 4:
                raise ValueError(f"{where}: points[{j}] must be (m, n50, lo, hi), got {p!r}")
            m, n50 = (
                check_positive_real(f"{where} points[{j}] m", p[0]),
                check_positive_real(f"{where} points[{j}] n50", p[1]),
            )
            pts.append([m, n50, _finite_or_none(p[2]), _finite_or_none(p[3])])
        if not pts:
            raise ValueError(f"{where}: points must hold at least one (m, n50, lo, hi), got none")
        slope = s.get("slope")
        out.append(
            {
                "name": name,
                "points": pts,
                "d": check_int(f"{where} d", s.get("d"), minimum=1),
                "d_vocab": check_int(f"{where} vocab", s.get("d_vocab"), minimum=2),
                "r": check_positive_real(f"{where} r", s.get("r")),
                "eps": check_positive_real(f"{where} eps", s.get("eps")),
                "convention": str(s.get("convention", "")),
                "slope": _finite_or_none(slope),
                "slope_source": str(s.get("slope_source", "") or ""),
                "reliable": None if s.get("reliable") is None else bool(s.get("reliable")),
                "group": _group(where, s.get("group", "book")),
            }
        )
    return out


def _group(where: str, group: Any) -> str:
    if group not in ("paper", "book"):
        raise ValueError(f"{where}: group must be 'paper' (the paper's measurements) or 'book', got {group!r}")
    return group


_CURVE_MODELS = {"EleutherAI_pythia-160m": "Pythia-160M", "Qwen_Qwen2.5-0.5B": "Qwen2.5-0.5B"}


def paper_cramming_series(convention: str = "rinf_fp16") -> list[dict[str, Any]]:
    """The paper's cramming curves re-fitted: one series per (model, target kind).

    Each curve of :func:`accessibility_lib.theory.paper.cramming_curves` (success rate over 20 targets against the
    length, per m) is fitted with :func:`accessibility_lib.experiments.fitting.fit_sigmoid` (binomial likelihood, 20
    trials a point); the points are (m, n50, profile-likelihood interval). d, |V|, r∞ and r_l2 come from the
    authors' model list, (r, ε) from the named ``convention``; ``slope`` is the paper's reported slope
    (:func:`accessibility_lib.theory.paper.measured_slope`, natural / random).

    Raises:
        ValueError: for an unknown convention.
    """
    from accessibility_lib.experiments.fitting import fit_sigmoid

    models = paper.models()
    out = []
    for key, per_kind in paper.cramming_curves()["models"].items():
        name = _CURVE_MODELS[key]
        pm = models[name]
        r, eps = convention_ball(convention, pm.r_l2, pm.r_inf)
        for kind, entry in per_kind.items():
            points = []
            for m, curve in sorted(entry["curves"].items(), key=lambda kv: int(kv[0])):
                arr = np.asarray(curve, dtype=float)
                fit = fit_sigmoid(arr[:, 0], arr[:, 1], 20)
                if fit.ok:
                    points.append([int(m), fit.n50, fit.ci[0], fit.ci[1]])
            slope = paper.measured_slope(name, "natural" if kind == "natural" else "random").value
            out.append(
                {
                    "name": f"{name}, {kind} (paper: n50 re-fitted, reported slope)",
                    "points": points,
                    "d": pm.d_model,
                    "d_vocab": pm.d_vocab,
                    "r": r,
                    "eps": eps,
                    "convention": convention,
                    "slope": slope,
                    "slope_source": "the paper's reported slope, §5",
                    "group": "paper",
                }
            )
    return check_series(out)


def series_from_fits(
    name: str,
    fits: Mapping[int, Any],
    *,
    d: int,
    d_vocab: int,
    r: float,
    eps: float,
    convention: str,
    slope: float | None = None,
    slope_source: str = "",
    reliable: bool | None = None,
) -> dict[str, Any]:
    """A cramming series from sigmoid fits ``{m: SigmoidFit}`` (e.g. a chapter's own runs).

    Fits without a bracketed crossing (``ok`` False) are left out. With ``slope`` None the explorer uses the
    least-squares slope of the points (the ``fit_slope`` line with intercept). ``reliable`` False (the
    series' slope rests on fewer than three bracketed n50 or its interval includes 0) shows the points but
    takes no ratio C / C_exp of them.

    Raises:
        ValueError: if no fit has a crossing, or as :func:`check_series`.
    """
    points = []
    for m, fit in sorted(fits.items()):
        if getattr(fit, "ok", False):
            lo, hi = getattr(fit, "ci", (None, None))
            points.append([m, fit.n50, lo, hi])
    if not points:
        raise ValueError(f"series {name!r}: no fit with a 50 % crossing among m = {sorted(fits)}")
    return check_series(
        [
            {
                "name": name,
                "points": points,
                "d": d,
                "d_vocab": d_vocab,
                "r": r,
                "eps": eps,
                "convention": convention,
                "slope": slope,
                "slope_source": slope_source,
                "reliable": reliable,
            }
        ]
    )[0]
