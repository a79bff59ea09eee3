"""Everything chapter 3 and its lab notes present, gathered once: the page's own runs, the stored artifacts.

Chapter 3 (``book/03_cramming.md``) and its lab notes (``book/lab_cramming.md``) run the same cells at the top:
they load the model, run the chapter's cramming units (``work.cramming_units`` and
``run_cramming_series``, whose results the result store keeps) and call :func:`gather`. The
:class:`CrammingContext` it returns holds the slopes, radii, bounds, the re-fitted paper curves, the real
models' artifacts and the stored benchmarks, so the two pages print the same numbers from the same
functions (:mod:`~accessibility_lib.figures.cramming_report` and its siblings).

:func:`show` displays what those functions return: a Markdown object as Markdown, a string as printed text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from accessibility_lib.runs import cramming_artifacts as CA
from accessibility_lib.runs import cramming_summary as CS
from accessibility_lib.runs.cramming_units import BASE_STEPS

__all__ = ["CrammingContext", "RealModels", "gather", "load_real", "show", "at_cap", "n50_text", "BASE_STEPS"]


def show(items) -> None:
    """Display a list of page items: ``IPython.display.Markdown`` (or any display object) shown, ``str`` printed.

    ``None`` and empty strings are skipped, so a builder can return optional items as they are.
    """
    from IPython.display import display

    for item in items:
        if item is None or (isinstance(item, str) and not item):
            continue
        print(item) if isinstance(item, str) else display(item)


def at_cap(r, max_steps: int) -> str:
    """``"k/f"``: of a run's f failed outcomes, the k that used the whole step budget; ``"no failure"`` without one.

    Args:
        r: a run result with ``outcomes`` (dicts with ``success`` and ``steps``), e.g. a ``run_cramming_series`` value.
        max_steps: the step budget.
    """
    fails = [o for o in getattr(r, "outcomes", None) or [] if not o["success"]]
    return f"{sum(o['steps'] >= max_steps for o in fails)}/{len(fails)}" if fails else "no failure"


def n50_text(u) -> str:
    """A unit summary's n50 with its interval (``"–"`` without a fit), marked where the interval was extended."""
    if u.fit is None:
        return "–"
    extended = getattr(u.fit, "method", "").endswith("(extended to the pooled point)")  # a progressive fit has none
    return u.fit.describe() + (" (interval extended to the pooled point)" if extended else "")


@dataclass
class RealModels:
    """The real models' stored cramming runs (``book/data/cramming/<model>.json``).

    Attributes:
        names: the models with an artifact (:func:`accessibility_lib.runs.real_models.with_cramming_artifacts`).
        artifacts, summaries: name -> the artifact (format 2) and its units re-fitted (:func:`CS.summarize`).
        shapes: name -> d, |V| (:func:`accessibility_lib.theory.capacity.read_shape`).
        h_radii: name -> chapter 5's last-layer radii ``{"l2", "linf", "sample"}`` (one r for both chapters).
        radii: name -> the input-embedding norms of ``radii.json`` (``scripts/prompt_radii.py``).
        slopes: (name, kind) -> (SlopeFit, units) at the base budget, float32, the authors' optimiser.
        no_slope: (name, kind) -> units, where fewer than two m have a closed interval.
        notes: what could not be loaded, said where the page shows the models.
    """

    names: list
    artifacts: dict
    summaries: dict
    shapes: dict
    h_radii: dict
    radii: dict
    slopes: dict = field(default_factory=dict)
    no_slope: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)


def load_real(names=None, folder=None) -> RealModels:
    """Load the real models' artifacts, summaries, shapes, radii and base-budget slopes.

    Args:
        names: model names; None for every real model with an artifact in ``folder``.
        folder: the artifacts' folder (None: ``book/data/cramming``).

    Returns:
        A :class:`RealModels`; a model whose artifact is missing is named in ``notes``, not raised.
    """
    from accessibility_lib.geometry import support as support_store
    from accessibility_lib.runs.real_models import with_cramming_artifacts
    from accessibility_lib.theory import capacity

    names = list(with_cramming_artifacts(folder) if names is None else names)
    artifacts, notes = {}, []
    for name in names:
        try:
            artifacts[name] = CA.load_artifact(name, folder)
        except CA.ArtifactMissingError as exc:
            notes.append(str(exc))
    summaries = {name: CS.summarize(art) for name, art in artifacts.items()}
    shapes = {name: capacity.read_shape(name) for name in artifacts}
    radii_path = CA.ARTIFACT_DIR / "radii.json"
    radii = json.loads(radii_path.read_text()) if radii_path.exists() else {}
    h_radii, missing = support_store.stored_radii(artifacts)
    real = RealModels(list(artifacts), artifacts, summaries, shapes, h_radii, radii, notes=notes + list(missing))
    for name in real.names:
        for kind, (pts, s) in CS.slopes(summaries[name], BASE_STEPS, instrument="paper", dtype="float32").items():
            if not pts:
                continue
            if s is None:
                real.no_slope[name, kind] = pts
            else:
                real.slopes[name, kind] = (s, pts)
    return real


@dataclass
class CrammingContext:
    """What chapter 3 and its lab notes present (:func:`gather`).

    Attributes:
        params: the page's checked parameters. handle: the loaded model of ``params["model_name"]``.
        runs: (kind, m) -> this page's own cramming result (``run_cramming_series``).
        slopes: kind -> the SlopeFit through the own runs' closed n50s; slope_points: kind -> [(m, fit, lengths)].
        r_l2, r_inf: the own model's last-layer radii (largest L2 norm, largest coordinate) over random prompts.
        C_by_conv: ε convention -> the ball bound C (tokens per vector) of the own model.
        refit: (authors' model key, kind) -> ({m: SigmoidFit}, SlopeFit): the paper's curves re-fitted.
        real: the stored real-model runs (:class:`RealModels`).
        inst_art: name -> the unit summaries of the instrument comparison (``book/data/cramming/instruments``).
        bench: stored benchmarks by name (``passage_intervals``, ``held``, ``search`` (model -> data),
            ``design_sim``, ``design_bound``, ``continuation``); a missing file is None (``search``: empty).
    """

    params: dict
    handle: object
    runs: dict
    slopes: dict
    slope_points: dict
    r_l2: float
    r_inf: float
    C_by_conv: dict
    refit: dict
    real: RealModels
    inst_art: dict
    bench: dict


def own_slopes(runs: dict, params: dict) -> tuple[dict, dict]:
    """The slope of n50 against m through the page's own runs, per target kind.

    A run whose interval is open at an end is a bound and is not fitted; a kind needs two distinct m.

    Returns:
        (kind -> SlopeFit, kind -> [(m, fit, lengths)] of the points fitted).
    """
    from accessibility_lib.experiments.slope_fit import fit_slope

    slopes, points = {}, {}
    for kind in params["kinds"]:
        closed = [(m, runs[kind, m].fit) for m in params["ms"] if (kind, m) in runs and runs[kind, m].fit.ok]
        closed = [(m, f) for m, f in closed if not any(f.ci_open)]  # an open interval is a bound: not fitted
        if len({m for m, _ in closed}) >= 2:
            slopes[kind] = fit_slope(
                [m for m, _ in closed], [f.n50 for _, f in closed], n50_ci=[f.ci for _, f in closed]
            )
            points[kind] = [(m, f, runs[kind, m].lengths) for m, f in closed]
    return slopes, points


def paper_refit() -> dict:
    """The authors' published success curves (20 targets a length) re-fitted: (model key, kind) -> (fits, slope).

    Source: :func:`accessibility_lib.theory.paper.cramming_curves` (the replication repository's figure data).
    """
    from accessibility_lib.experiments.fitting import fit_sigmoid
    from accessibility_lib.experiments.slope_fit import fit_slope
    from accessibility_lib.theory import paper

    out = {}
    for model, per_kind in paper.cramming_curves()["models"].items():
        for kind, entry in per_kind.items():
            fits = {
                int(m): fit_sigmoid(np.asarray(p)[:, 0], np.asarray(p)[:, 1], 20) for m, p in entry["curves"].items()
            }
            ok = [m for m in sorted(fits) if fits[m].ok]
            out[model, kind] = (fits, fit_slope(ok, [fits[m].n50 for m in ok], n50_ci=[fits[m].ci for m in ok]))
    return out


def load_benchmarks(folder=None) -> dict:
    """The stored benchmark results under ``book/data/cramming/benchmarks`` (see :class:`CrammingContext`)."""
    folder = folder or CA.ARTIFACT_DIR / "benchmarks"

    def read(name):
        path = folder / name
        return json.loads(path.read_text()) if path.exists() else None

    pi = read("passage_intervals.json")
    if pi is not None and not all("horizon_coverage" in r for r in pi["rows"]):  # written before the horizon interval
        pi = {"stale": pi["date"][:10]}
    search = {}
    for path in sorted(folder.glob("search_*.json")):
        data = json.loads(path.read_text())
        search[data["rows"][0]["model"]] = data
    return {"passage_intervals": pi, "held": read("held_passage_coverage.json"), "search": search,
            "design_sim": read("design_sim.json"), "design_bound": read("design_bound.json"),
            "continuation": read("continuation_nano.json")}  # fmt: skip


def gather(params: dict, handle, store, runs: dict) -> CrammingContext:
    """Build the :class:`CrammingContext` of a page from its parameters, model, result store and own runs.

    Samples ``n_embed_prompts`` random prompts of ``embed_length`` tokens for the radii (cached in ``store``),
    computes C under every ε convention, re-fits the paper's curves and loads every stored artifact.
    """
    from accessibility_lib.geometry import support_shape
    from accessibility_lib.geometry.embeddings import sample_embeddings
    from accessibility_lib.theory import bounds, precision

    slopes, points = own_slopes(runs, params)
    emb = sample_embeddings(handle, params["n_embed_prompts"], [params["embed_length"]], store=store,
                            model_key=params["model_name"], desc="embeddings")[params["embed_length"]]  # fmt: skip
    rad = support_shape.radii(emb)
    C_by_conv = {}
    for name, conv in precision.CONVENTIONS.items():
        r_used, eps = conv.ball(rad["l2"], rad["linf"])
        C_by_conv[name] = bounds.ball_slope(handle.d_model, r_used, eps, handle.d_vocab)
    inst_art = {}
    try:
        inst_art["nano"] = CS.summarize(CA.load_artifact("nano", CA.ARTIFACT_DIR / "instruments"))
    except CA.ArtifactMissingError:
        pass
    return CrammingContext(params, handle, runs, slopes, points, rad["l2"], rad["linf"], C_by_conv, paper_refit(),
                           load_real(), inst_art, load_benchmarks())  # fmt: skip
