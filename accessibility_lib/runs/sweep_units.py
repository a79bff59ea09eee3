"""Sweep units: the independent pieces of a chapter's heavy work, each keyed in the result store.

A :class:`WorkUnit` names one chapter's piece of work (a cramming target kind, a support model, a copying
run) and the arguments of the one function in :mod:`accessibility_lib.runs.work` that does it, so the chapter,
a serial sweep and a Ray sweep (:mod:`accessibility_lib.runs.sweeps`) run the same call and write the same store
keys. :func:`plan_work` lists a preset's units; :data:`WORK` maps a chapter to the function that runs its unit;
:func:`one_thread` runs a unit with one torch thread on CPU, as the chapters do.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from accessibility_lib.ground.results import ResultStore
from accessibility_lib.runs.work import copying_runs

#: Chapters with sweep units, in the order the units are listed.
CHAPTERS = ("cramming", "support", "copying")


#: Result-store namespace of the per-unit records.
NAMESPACE = "sweep_units"
_FORMAT = 2  # bump when a unit's work changes (2: cramming units are one target kind, every m)


class SweepError(ValueError):
    """Bad input to a sweep (found before any unit starts) or a store that a worker cannot see."""


@dataclass
class WorkUnit:
    """One independent piece of work.

    Attributes:
        chapter: ``"cramming"``, ``"support"`` or ``"copying"``.
        spec: every value that determines the unit's result (JSON-able): the chapter's parameters it
            uses and the unit's coordinates (model, kind, m; model; base, width, training length).
        label: a short readable name.
        model: the model the unit loads (for the availability check), or None (a scratch model).
        device: where it runs (the chapter's ``device`` parameter; not part of the key).
    """

    chapter: str
    spec: dict
    label: str
    model: str | None = None
    device: str = "cpu"

    def key(self) -> dict:
        """The unit's key in namespace :data:`NAMESPACE` (the device is not part of it)."""
        return {"chapter": self.chapter, "spec": self.spec, "format": _FORMAT}

    def to_dict(self) -> dict:
        return {
            "chapter": self.chapter,
            "spec": self.spec,
            "label": self.label,
            "model": self.model,
            "device": self.device,
        }

    @classmethod
    def from_dict(cls, data: dict) -> WorkUnit:
        return cls(data["chapter"], data["spec"], data["label"], data.get("model"), data.get("device", "cpu"))


# ------------------------------------------------------------------------------------------ unit lists
_SPEC_KEYS = {
    "cramming": (
        "model_name",
        "dtype",
        "length_convention",
        "corpus",
        "n_targets",
        "max_steps",
        "patience",
        "instrument",
        "seed",
        "ms",
    ),
    "support": ("n_prompts", "lengths", "cell_samples", "cell_flops", "source", "token_budget"),
    "copying": ("eval_lengths", "n_strings", "seed"),
}


def plan_work(
    preset: str,
    chapters: Iterable[str] = CHAPTERS,
    overrides: dict[str, Any] | None = None,
    *,
    device: str | None = None,
    check_machine: bool = True,
) -> list[WorkUnit]:
    """The units of ``chapters`` under ``preset``, with ``overrides`` applied where a chapter has that parameter.

    Args:
        preset: a preset name (:data:`accessibility_lib.runs.presets.PRESET_NAMES`).
        chapters: some of :data:`CHAPTERS`.
        overrides: parameter -> value, applied to every listed chapter that declares the parameter
            (as ``scripts/rerun.py -p``); ``"chapter.name"`` applies to that chapter only.
        device: the device override (``"cpu"``, ``"cuda"``, ``"cuda:N"``), checked against this machine.
        check_machine: check the device (set False to list units for another machine).

    Raises:
        SweepError: an unknown chapter or an override no listed chapter has.
        ParameterError (a ValueError): a wrong value, preset or device (from :func:`presets.resolve`).
    """
    from accessibility_lib.runs import presets

    chapters = list(chapters)
    bad = [c for c in chapters if c not in CHAPTERS]
    if bad or not chapters:
        raise SweepError(f"chapters must be some of {list(CHAPTERS)}, got {chapters}")
    overrides = dict(overrides or {})
    used: set[str] = set()
    units: list[WorkUnit] = []
    for chapter in chapters:
        declared = presets.PARAMETERS[chapter]
        mine = {}
        for name, value in overrides.items():
            target, _, pname = name.rpartition(".")
            if (target in ("", chapter)) and pname in declared:
                mine[pname] = value
                used.add(name)
        if device is not None and "device" in declared:
            mine["device"] = device
        p = presets.resolve(chapter, preset, check_machine=check_machine, **mine)
        spec = {k: p[k] for k in _SPEC_KEYS[chapter]}
        dev = p["device"]
        if chapter == "cramming":  # one unit per target kind: its ms in order, each from the n50s before it
            for kind in p["kinds"]:
                units.append(
                    WorkUnit(
                        chapter,
                        {**spec, "kind": kind},
                        f"cramming {p['model_name']} {kind} m={p['ms']}",
                        p["model_name"],
                        dev,
                    )
                )
        elif chapter == "support":
            for name in p["models"]:
                units.append(WorkUnit(chapter, {**spec, "model": name}, f"support {name}", name, dev))
        else:
            for label, cfg in copying_runs(p):
                units.append(
                    WorkUnit(
                        chapter,
                        {**spec, "config": cfg.key()},
                        f"copying {label}",
                        None if cfg.base in ("scratch", "nano-shape") else cfg.base,
                        dev,
                    )
                )
    unused = sorted(set(overrides) - used)
    if unused:
        raise SweepError(f"override(s) {unused} are parameters of none of the chapters {chapters}")
    return units


# ------------------------------------------------------------------------------------------ the work
@contextlib.contextmanager
def one_thread(device: str):
    """One torch thread on CPU (as the chapters run; the same arithmetic whatever the worker), restored after."""
    import torch

    before = torch.get_num_threads()
    if str(device).startswith("cpu"):
        torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _fit_summary(fit) -> dict:
    return {"ok": bool(fit.ok), "n50": float(fit.n50), "ci": [float(c) for c in fit.ci], "describe": fit.describe()}


def _cramming(spec: dict, store: ResultStore, device: str) -> dict:
    import torch

    from accessibility_lib.models.loading import load_model
    from accessibility_lib.runs.cramming_units import run_cramming_series
    from accessibility_lib.runs.work import cramming_units

    handle = load_model(spec["model_name"], device=device, dtype=getattr(torch, spec["dtype"]))
    units = cramming_units({**spec, "kinds": [spec["kind"]]})[spec["kind"]]
    res = run_cramming_series(handle, units, store, model_name=spec["model_name"], prefer_stored=False)  # as chapter 3
    out = {}
    for u in units:
        r = res[u.uid]
        out[str(u.m)] = {
            "n50": float(r.n50),
            "fit": _fit_summary(r.fit),
            "bracketed": bool(r.bracketed),
            "lengths": r.lengths.tolist(),
            "rates": r.rates.tolist(),
            "trials": r.trials.tolist(),
            "outcomes": len(r.outcomes),
            "crammed": int(r.runs),
            "found": int(r.cached),
            "token_steps": int(r.token_steps),
        }
    return out


def _support(spec: dict, store: ResultStore, device: str) -> dict:
    from accessibility_lib.geometry import support
    from accessibility_lib.runs.work import run_support

    loaded, notes = support.load_available([spec["model"]], device, fallback=False, lengths=spec["lengths"])
    if not loaded:  # checked before the sweep started; the model went away since
        raise SweepError(notes[0] if notes else f"{spec['model']}: not available")
    (name, handle), *_ = loaded
    res = run_support(handle, name, spec, store)
    return {
        "d": res.d,
        "d_vocab": res.d_vocab,
        "stats": res.stats,
        "C": {m: {row: c.rows[row].C for row in c.rows} for m, c in res.columns.items()},
    }


def _copying(spec: dict, store: ResultStore, device: str) -> dict:
    from accessibility_lib.experiments import copying_model
    from accessibility_lib.runs.work import run_copying

    conf = {k: v for k, v in spec["config"].items() if k != "format"}
    cfg = copying_model.TrainConfig(**conf)
    _, info, res = run_copying(cfg, spec, store, device)
    return {
        "steps": int(info["steps"]),
        "reached": bool(info["reached"]),
        "cached": bool(info["cached"]),
        "length": [int(x) for x in res["length"]],
        "exact_rate": [float(x) for x in res["exact_rate"]],
    }


WORK = {"cramming": _cramming, "support": _support, "copying": _copying}


def describe(record: dict) -> str:
    """One line for a unit's record (:func:`accessibility_lib.runs.sweeps.run_unit`): its fits, analysis or run."""
    r = record["result"]
    if record.get("chapter") == "cramming" or (r and all(isinstance(v, dict) and "fit" in v for v in r.values())):
        return "; ".join(
            f"m = {m}: {v['fit']['describe']} ({v['crammed']} crammed, {v['found']} found)" for m, v in r.items()
        )
    if "C" in r:
        return f"d = {r['d']}, |V| = {r['d_vocab']}, ball C = {r['C'].get('corrected', {}).get('ball')}"
    return f"{r['steps']} steps, {'reached' if r['reached'] else 'did not reach'} 100 %"
