"""Cramming units: one n50 measurement each, the plans that list them, and the one function that runs a unit.

A :class:`CrammingUnit` is one n50 measurement for one model: a target kind and length convention, a prompt
length m, an instrument (:mod:`accessibility_lib.experiments.instruments`), a step budget, a dtype and a search
design. :func:`run_cramming_unit` runs it into the result store, and it is the only code that does:
chapter 3's own run, the sweeps (serial or Ray) and ``scripts/real_model_cramming.py`` all call it,
so the same settings always give the same store keys.

Plans (:data:`PLANS`) are the lists of units of the long runs whose artifacts the book ships
(:mod:`accessibility_lib.runs.cramming_artifacts`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from accessibility_lib.experiments.instruments import check_budget, get_instrument, instrument_label
from accessibility_lib.experiments.targets import KEY_TAG

if TYPE_CHECKING:
    from accessibility_lib.models.handle import ModelHandle

__all__ = [
    "CrammingUnit",
    "BASE_STEPS",
    "AUTHORS_STEPS",
    "NESTED_BUDGETS",
    "DEFAULT_PER_M",
    "COLD_START",
    "cramming_plan",
    "unit_settings",
    "run_cramming_unit",
    "run_cramming_series",
    "predict_for",
]

#: the step budget of the units that make the slopes; the budget curve adds 2× and 4×
BASE_STEPS = 300
#: the authors' step cap (their replication code: up to 3,000 optimiser steps per target and length)
AUTHORS_STEPS = 3000
#: budgets whose stored outcomes answer one another where a run of the smaller is provably the start of the larger
NESTED_BUDGETS = (BASE_STEPS, 2 * BASE_STEPS, 4 * BASE_STEPS, 8 * BASE_STEPS, AUTHORS_STEPS)
#: tokens per prompt vector a bisection or progressive unit assumes for the first search of a kind
DEFAULT_PER_M = {"natural": 12.0, "random_words": 8.0, "random_tokens": 4.0}
#: where a sequential search with no prediction starts (tokens): it climbs from the shortest lengths,
#: because a length below n50 is cheap (its successes stop early) and one above costs every target the
#: whole step budget at the longest inputs — so without a prediction n50 is approached from below
COLD_START = 2.0


@dataclass(frozen=True)
class CrammingUnit:
    """One n50 measurement.

    Attributes:
        kind: target kind (:data:`accessibility_lib.experiments.targets.TARGET_KINDS`).
        m: prompt length (soft vectors).
        length_convention: length convention (:data:`accessibility_lib.experiments.targets.LENGTH_CONVENTIONS`).
        max_steps: optimiser updates per (target, length) at most (the budget).
        patience: stop a target after this many updates without progress; None: no patience (then a
            run with a smaller budget is exactly the first steps of this one).
        corpus: natural-text corpus (natural targets only).
        n_targets: targets a length gets where the crossing is pinned (the paper: 20).
        seed: seed of the targets and of the prompts' initialisation.
        instrument: a name in :data:`accessibility_lib.experiments.instruments.INSTRUMENTS`.
        dtype: ``"float32"`` or ``"bfloat16"``.
        design: n50 search design (:data:`accessibility_lib.experiments.n50.SEARCH_DESIGNS`).
    """

    kind: str
    m: int
    length_convention: str = "first_given"
    max_steps: int = BASE_STEPS
    patience: int | None = 100
    corpus: str = "austen"
    n_targets: int = 10
    seed: int = 0
    instrument: str = "paper"
    dtype: str = "float32"
    design: str = "sequential"

    def __post_init__(self) -> None:
        get_instrument(self.instrument)
        check_budget(self.max_steps, self.patience)
        if self.dtype not in ("float32", "bfloat16"):
            raise ValueError(f"dtype must be 'float32' or 'bfloat16', got {self.dtype!r}")
        if self.m < 1 or self.n_targets < 1:
            raise ValueError(f"m and n_targets must be ≥ 1, got m = {self.m}, n_targets = {self.n_targets}")

    @property
    def uid(self) -> str:
        """``kind/convention/m/steps/instrument/dtype`` (+ ``/t<n_targets>`` when not 10)."""
        tail = "" if self.n_targets == 10 else f"/t{self.n_targets}"
        return f"{self.kind}/{KEY_TAG[self.length_convention]}/m{self.m}/steps{self.max_steps}/{self.instrument}/{self.dtype}{tail}"

    @property
    def budget_label(self) -> str:
        """The budget as printed beside an n50, e.g. "300 steps (patience 100), book's loop (authors' optimiser)"
        (the instrument's printed name, :func:`~accessibility_lib.experiments.instruments.instrument_label`)."""
        if self.instrument.startswith("progressive"):
            base, per_token, retry = progressive_budget(self.max_steps)
            return f"{base} + {per_token}·ℓ steps a stage, a {retry}-step retry, {self.instrument}"
        pat = "no patience" if self.patience is None else f"patience {self.patience}"
        return f"{self.max_steps} steps ({pat}), {instrument_label(self.instrument)}"

    def to_dict(self) -> dict:
        return asdict(self)


def unit_settings(unit: CrammingUnit) -> dict:
    """The cramming settings of a unit: what is passed to ``cram`` and is part of every store key."""
    max_steps, patience = check_budget(unit.max_steps, unit.patience)
    return {**get_instrument(unit.instrument).optimiser(), "max_steps": max_steps, "patience": patience}


def cramming_plan(model: str, plan: str) -> list[CrammingUnit]:
    """The units of a named plan for a model (:data:`accessibility_lib.runs.cramming_plans.PLANS`).

    Raises:
        ValueError: no such (model, plan); the message lists the plans that exist.
    """
    from accessibility_lib.runs.cramming_plans import cramming_plan as _plan

    return _plan(model, plan)


def __getattr__(name: str):
    """``PLANS`` lives in :mod:`accessibility_lib.runs.cramming_plans`; kept importable from here."""
    if name == "PLANS":
        from accessibility_lib.runs.cramming_plans import PLANS

        return PLANS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def predict_for(unit: CrammingUnit, finished: list[tuple[CrammingUnit, float]]) -> float | None:
    """Where a unit's search starts, from the n50s already found for the same model (tokens).

    The same m at another budget (or target count) first — n50 grows by about half per doubling of the
    steps (chapter 3's budget curve) — else the line in m through the same kind, instrument, budget and
    dtype (:func:`accessibility_lib.experiments.n50_sequential.predict_n50`), else the same m with another
    instrument, else None: no prediction (:func:`run_cramming_unit` then starts a sequential search at
    :data:`COLD_START` and a bisection at :data:`DEFAULT_PER_M` [kind]·m).

    Args:
        unit: the unit about to run.
        finished: (unit, n50) of finished units; non-finite n50s are ignored.
    """
    from accessibility_lib.experiments.n50_sequential import predict_n50

    ok = [(u, n) for u, n in finished if n is not None and math.isfinite(n)]
    same = [(u, n) for u, n in ok if u.kind == unit.kind and u.dtype == unit.dtype and u.instrument == unit.instrument]
    at_m = [(u, n) for u, n in same if u.m == unit.m]
    if at_m:
        u, n = min(at_m, key=lambda p: abs(math.log(p[0].max_steps / unit.max_steps)))
        return max(2.0, n * (1 + 0.5 * math.log2(unit.max_steps / u.max_steps)))
    line = {u.m: n for u, n in same if u.max_steps == unit.max_steps}
    if line:
        return predict_n50(unit.m, line, DEFAULT_PER_M[unit.kind])
    other = [n for u, n in ok if u.kind == unit.kind and u.m == unit.m and u.max_steps == unit.max_steps]
    return max(2.0, other[0]) if other else None


def run_cramming_series(
    handle: ModelHandle, units: list[CrammingUnit], store, *, model_name: str, show_progress=False, prefer_stored=True
):
    """Run units one after another (in m order), each search starting from the n50s found before it.

    The chapters, the sweeps and the scripts run their cramming units through this function (or
    :func:`run_cramming_unit` with :func:`predict_for`), so the same units give the same searches and the
    same store entries. ``prefer_stored``: as in :func:`run_cramming_unit` (False: the lengths and the cost
    do not depend on what other runs stored before).

    Returns:
        uid -> the result of :func:`run_cramming_unit`.
    """
    done: list[tuple[CrammingUnit, float]] = []
    out = {}
    for unit in sorted(units, key=lambda u: (u.kind, u.max_steps, u.m)):
        kw = dict(n_pred=predict_for(unit, done), show_progress=show_progress, prefer_stored=prefer_stored)
        res = run_cramming_unit(handle, unit, store, model_name=model_name, **kw)
        n50 = float(res.n50) if hasattr(res, "n50") else float(np.median(res.horizons))
        done.append((unit, n50))
        out[unit.uid] = res
    return out


def progressive_budget(max_steps: int) -> tuple[int, int, int]:
    """A progressive unit's step budgets from its ``max_steps`` b: (b // 3, b // 30, b).

    A stage at prefix length ℓ gets ``b // 3 + (b // 30)·ℓ`` Adam updates (warm-started), a fresh retry
    the fixed protocol's b (:func:`accessibility_lib.experiments.progressive.progressive_cram`).
    """
    return max(1, max_steps // 3), max(1, max_steps // 30), max_steps


def progressive_cap(n_pred: float, n_max: int) -> int:
    """The longest prefix a progressive unit grows to: 3× the predicted n50, within the context."""
    return int(min(n_max, max(8, math.ceil(3 * n_pred))))


def run_cramming_unit(
    handle: ModelHandle,
    unit: CrammingUnit,
    store,
    *,
    model_name: str,
    n_pred: float | None = None,
    should_stop=None,
    show_progress: bool = False,
    prefer_stored: bool = True,
    max_width: float | None = None,
):
    """Run one unit into the store and return its result (the one place a cramming unit is run).

    Args:
        handle: the model handle, already in ``unit.dtype``.
        unit: the :class:`CrammingUnit`.
        store: a :class:`~accessibility_lib.ground.results.ResultStore` (or None: nothing cached).
        model_name: the model's name in the store keys.
        n_pred: predicted n50 (tokens) where the search starts (:func:`predict_for`); None: no prediction —
            a sequential search climbs from :data:`COLD_START`, a bisection or progressive unit assumes
            :data:`DEFAULT_PER_M` [kind]·m.
        should_stop: optional callable; True before a batch raises :class:`accessibility_lib.experiments.n50.StopSearch`.
        show_progress: a progress bar over crammed targets.
        prefer_stored: fixed-length searches only; False: the search chooses its lengths as on an empty
            store (see :func:`accessibility_lib.experiments.n50.find_n50`).
        max_width: sequential design only: stop adding targets once the n50 interval is at most this many
            tokens wide (``benchmarks/bench_n50_search.py`` compares designs at one width); None: off.

    Returns:
        For a fixed-length instrument, the :class:`~accessibility_lib.experiments.n50_result.N50Search`; for a progressive
        one, the :class:`~accessibility_lib.experiments.progressive.ProgressiveResult`.

    Raises:
        ValueError: a handle whose dtype is not the unit's, or bad unit settings.
    """
    from accessibility_lib.experiments.n50 import find_n50
    from accessibility_lib.experiments.progressive import progressive_cram
    from accessibility_lib.experiments.targets import target_source
    from accessibility_lib.models.decoding import model_dtype
    from accessibility_lib.models.fingerprint import weights_fingerprint
    from accessibility_lib.models.handle import context_length

    dtype = str(model_dtype(handle)).replace("torch.", "")
    if dtype != unit.dtype:
        raise ValueError(f"unit {unit.uid} runs in {unit.dtype}; the model handle is in {dtype}")
    inst = get_instrument(unit.instrument)
    source = target_source(handle, unit.kind, unit.length_convention, seed=unit.seed, corpus=unit.corpus)
    cold = n_pred is None
    n_pred = DEFAULT_PER_M[unit.kind] * unit.m if cold else n_pred
    settings = unit_settings(unit)
    if inst.protocol == "progressive":
        if unit.kind != "natural":
            raise ValueError("progressive cramming needs prefix-consistent targets: kind 'natural' only")
        ctx = context_length(handle)
        n_max = ctx - unit.m - len(source.prefix_ids or []) + 1
        key_base = {
            "model": model_name,
            "weights": weights_fingerprint(handle),
            "dtype": str(model_dtype(handle)),
            "source": source.name,
            "layout": source.layout(),
            **{k: v for k, v in settings.items() if k not in ("max_steps", "patience")},
        }
        return progressive_cram(
            handle,
            source,
            unit.m,
            unit.n_targets,
            progressive_cap(n_pred, n_max),
            **dict(zip(("base_steps", "steps_per_token", "retry_steps"), progressive_budget(unit.max_steps))),
            seed=unit.seed,
            store=store,
            key_base=key_base,
            lr=inst.lr,
            betas=inst.betas,
            weight_decay=inst.weight_decay,
            init_scale=inst.init_scale,
            should_stop=should_stop,
        )
    kw = {"design": unit.design}
    if unit.patience is None or inst.rule == "authors":  # budgets nest: a shorter run is the start of a longer one
        kw["nested_budgets"] = NESTED_BUDGETS  # (the authors' patience too: find_n50 checks where it is provable)
    if unit.design == "bisect":
        kw.update(n_start=max(source.min_length, int(round(0.9 * n_pred))), n_probe=unit.n_targets, n_around=0)
    else:
        kw.update(n_pred=COLD_START if cold else n_pred, max_width=max_width)
    return find_n50(
        handle,
        source,
        unit.m,
        unit.n_targets,
        store=store,
        model_name=model_name,
        seed=unit.seed,
        show_progress=show_progress,
        should_stop=should_stop,
        prefer_stored=prefer_stored,
        **kw,
        **settings,
    )
