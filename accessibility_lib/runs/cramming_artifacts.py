"""Cramming artifacts: the stored long runs the book shows, written from the result store, re-fitted by the chapters.

An artifact (``book/data/cramming/<model>.json``, format 2) holds every unit ever run for a model — from
any plan, in any dtype, with any instrument — each with its settings, its state, its cost and its
per-target outcomes. A unit's dtype, weights fingerprint and instrument are properties of the unit, not
of the file: a float32 run adds float32 units beside earlier bfloat16 ones and never overwrites them.
The chapters re-fit every number from the outcomes (:func:`refit_unit`, :func:`summarize`); a runner
on a fresh machine first copies an artifact's outcomes back into the store (:func:`import_artifact`),
so an interrupted run resumes anywhere.

Format 1 (one dtype and weights for the whole file, uids without instrument or dtype, the bisection
design) is read by :func:`load_artifact` and converted in memory (:func:`upgrade`).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from accessibility_lib.ground import results
from accessibility_lib.ground.paths import BOOK_DATA
from accessibility_lib.models.decoding import DECODE_PATH, VERIFY_PATH
from accessibility_lib.runs.cramming_units import CrammingUnit, unit_settings

__all__ = [
    "ARTIFACT_DIR",
    "FORMAT",
    "ArtifactMissingError",
    "artifact_path",
    "load_artifact",
    "upgrade",
    "unit_record",
    "write_artifact",
    "import_artifact",
    "states_path",
    "write_states",
    "stages_path",
    "write_stages",
    "refit_unit",
    "own_outcomes",
]

ARTIFACT_DIR = BOOK_DATA / "cramming"
FORMAT = 2
UNIT_FIELDS = tuple(CrammingUnit.__dataclass_fields__)
#: the length conventions of the first artifacts, by their names now
LEGACY_LENGTH = {"replication": "first_given", "generated": "all_generated"}


class ArtifactMissingError(FileNotFoundError):
    """No cramming artifact for a model; the message gives the command that produces it."""


def artifact_path(model: str, folder: str | os.PathLike | None = None) -> Path:
    """``book/data/cramming/<model>.json`` (or under ``folder``)."""
    return Path(folder or ARTIFACT_DIR) / f"{model.replace('/', '__')}.json"


def _short_dtype(dtype: str) -> str:
    return str(dtype).replace("torch.", "")


def upgrade(art: dict) -> dict:
    """A format-1 artifact as format 2 (per-unit dtype, weights, instrument and design); format 2 as is."""
    if art.get("format") == FORMAT:
        for u in art["units"]:  # the first format-2 files: "convention", with the first runs' names
            if "convention" in u and "length_convention" not in u:
                u["length_convention"] = u.pop("convention")
            if "length_convention" in u:
                u["length_convention"] = LEGACY_LENGTH.get(u["length_convention"], u["length_convention"])
        return art
    out = {k: v for k, v in art.items() if k not in ("dtype", "weights", "units", "plan", "optimiser")}
    out["format"] = FORMAT
    out["units"] = []
    for u in art["units"]:
        unit = CrammingUnit(
            u["kind"],
            int(u["m"]),
            LEGACY_LENGTH.get(u.get("convention", "replication"), u.get("convention")),
            int(u["max_steps"]),
            int(u["patience"]),
            u.get("corpus", "austen"),
            int(u.get("n_targets", 10)),
            int(u.get("seed", 0)),
            "paper",
            _short_dtype(art["dtype"]),
            "bisect",
        )
        rest = {k: v for k, v in u.items() if k not in (*UNIT_FIELDS, "uid", "convention")}
        out["units"].append(
            {"uid": unit.uid, **unit.to_dict(), "plan": art.get("plan"), "weights": art["weights"], **rest}
        )
    return out


def load_artifact(model: str, folder: str | os.PathLike | None = None) -> dict:
    """The cramming artifact of a model, in format 2.

    Raises:
        ArtifactMissingError: no artifact; the message names the command that produces it.
    """
    from accessibility_lib.runs.cramming_units import PLANS

    path = artifact_path(model, folder)
    if not path.exists():
        plans = [p for (m, p) in PLANS if m == model]
        how = (
            f".venv/bin/python scripts/real_model_cramming.py --model {model} --plan {plans[0]}"
            if plans
            else f"no plan exists for {model!r}; plans exist for: {sorted({m for m, _ in PLANS})}"
        )
        raise ArtifactMissingError(f"no cramming artifact for {model!r} at {path}; produce it with:\n    {how}")
    return upgrade(results.loads(path.read_text()))


def _key(model: str, u: dict, row: dict) -> dict:
    from accessibility_lib.experiments.n50 import cramming_key

    return cramming_key(
        model,
        u["weights"],
        "torch." + u["dtype"],
        u["source"],
        u["layout"],
        u["m"],
        row["n"],
        row["target"],
        row["seed"],
        u["settings"],
    )


def unit_outcomes(store, model: str, weights: str, unit: CrammingUnit, source_name: str) -> list[dict]:
    """Every fixed-length outcome in the store for a unit's settings, at any length wherever it came from,
    but for its own targets 0 … n_targets − 1 only (:func:`own_outcomes`), sorted."""
    settings = unit_settings(unit)
    rows = []
    for key, value in store.entries(
        "cramming", model=model, weights=weights, dtype="torch." + unit.dtype, source=source_name, m=unit.m
    ):
        if int(key.get("target", 0)) >= unit.n_targets:
            continue
        if all(key.get(k) == (list(v) if isinstance(v, tuple) else v) for k, v in settings.items()) and set(key) - {
            "layout"
        } == {"model", "weights", "dtype", "source", "m", "n", "target", "seed", *settings}:
            if "prompt_l2" not in value and value.get("success"):  # outcomes stored before norms were recorded
                from accessibility_lib.experiments.n50 import prompt_norms

                full = store.get("cramming", key)
                if full is not None and "prompt" in full:
                    value = {**value, **prompt_norms(full["prompt"])}
            rows.append({"n": key["n"], "target": key["target"], **value})
    return sorted(rows, key=lambda r: (r["n"], r["target"]))


def unit_record(
    unit: CrammingUnit, *, plan: str, weights: str, source: tuple[str, dict], outcomes: list, **status
) -> dict:
    """A unit as stored in an artifact: its fields, uid, plan, weights, source, settings, status, outcomes."""
    name, layout = source
    return {
        "uid": unit.uid,
        **unit.to_dict(),
        "plan": plan,
        "weights": weights,
        "source": name,
        "layout": layout,
        "settings": unit_settings(unit),
        **status,
        "outcomes": outcomes,
    }


def write_artifact(path, *, model: str, units: list[dict], provenance: dict) -> dict:
    """Write a format-2 artifact atomically: the given unit records replace those with the same uid,
    every other unit already in the file is kept as it is.

    Args:
        units: unit records (:func:`unit_record`).
        provenance: command, commit, machine, date, wall time of this invocation (appended to the history).
    """
    path = Path(path)
    old = upgrade(results.loads(path.read_text())) if path.exists() else {"units": [], "history": []}
    new_ids = {u["uid"] for u in units}
    kept = [u for u in old["units"] if u["uid"] not in new_ids]
    history = list(old.get("history", []))
    if "provenance" in old and not history:
        history.append(old["provenance"])
    history = [h for h in history if h.get("started") != provenance.get("started")] + [provenance]
    out = {
        "format": FORMAT,
        "model": model,
        "decode_path": DECODE_PATH,
        "verified_by": VERIFY_PATH,
        "provenance": provenance,
        "history": history,
        "units": kept + list(units),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(results.dumps(out, indent=1) + "\n")  # strict JSON; NaN/inf as {"$float": ...}
    os.replace(tmp, path)
    return out


def _savez_atomic(out: Path, arrays: dict) -> None:
    """``np.savez_compressed`` to ``out`` through a temporary file, so a reader never sees half a file."""
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "wb") as fh:
        np.savez_compressed(fh, **arrays)
    os.replace(tmp, out)


def states_path(path) -> Path:
    """``<model>.states.npz`` beside an artifact: the Adam states of the failures a larger budget continues."""
    path = Path(path)
    return path.with_name(path.name.removesuffix(".json") + ".states.npz")


def _state_name(uid: str, row: dict, array: str) -> str:
    return f"{uid.replace('/', '~')}~n{int(row['n'])}~t{int(row['target'])}~{array}"


def _continued_units(units: list[dict]) -> list[dict]:
    """The units whose capped failures a larger budget of the same measurement (kind, m, convention, corpus, seed,
    instrument, dtype; the same targets) may continue: with no patience, the larger budget's patience none or
    longer than the smaller budget; under the authors' rule also the same patience. Book-rule units pair only with
    the same target count (as the first artifacts did); the authors' units share targets 0 … n − 1 across counts."""
    from accessibility_lib.experiments.instruments import INSTRUMENTS

    def group(u):
        return tuple(u.get(k) for k in ("kind", "m", "length_convention", "corpus", "seed", "instrument", "dtype"))

    def authors(u):
        inst = INSTRUMENTS.get(u.get("instrument", "paper"))
        return inst is not None and inst.rule == "authors"

    def continues(small: dict, big: dict) -> bool:
        if group(small) != group(big) or int(big["max_steps"]) <= int(small["max_steps"]):
            return False
        if not authors(small) and small.get("n_targets") != big.get("n_targets"):
            return False
        p, q = small.get("patience"), big.get("patience")
        if p is None:
            return q is None or (authors(big) and int(q) > int(small["max_steps"]))
        return authors(small) and p == q

    return [u for u in units if any(continues(u, v) for v in units)]


def write_states(path, store, model: str, units: list[dict]) -> int:
    """Write the Adam states (prompt, exp_avg, exp_avg_sq; float32, m × d_model each) of the capped failures
    of every unit a larger budget continues (:func:`_continued_units`) to :func:`states_path`, atomically.

    Together with the outcome rows (which carry the state's scalars) they let a fresh machine continue
    those failures (:func:`import_artifact`). Returns how many states were written (0: no file).
    """
    from accessibility_lib.experiments.n50 import STATE_ARRAYS

    arrays = {}
    for u in _continued_units(units):
        for row in u["outcomes"]:
            if row.get("success") or "adam_steps" not in row:
                continue
            full = store.get("cramming", _key(model, u, row))
            if full is None or not all(k in full for k in STATE_ARRAYS):
                continue
            for k in STATE_ARRAYS:
                arrays[_state_name(u["uid"], row, k)] = np.asarray(full[k], dtype=np.float32)
    if not arrays:
        return 0
    _savez_atomic(states_path(path), arrays)
    return len(arrays) // len(STATE_ARRAYS)


def stages_path(path) -> Path:
    """``<model>.stages.npz`` beside an artifact: the finished stages of unfinished progressive units."""
    path = Path(path)
    return path.with_name(path.name.removesuffix(".json") + ".stages.npz")


def _is_progressive(u: dict) -> bool:
    return u.get("protocol") == "progressive" or str(u.get("instrument", "paper")).startswith("progressive")


def write_stages(path, store, model: str, units: list[dict]) -> int:
    """Write every stored stage (key, outcome, verified prompt) of the progressive units that are not
    complete to :func:`stages_path`, atomically, so a fresh machine replays them instead of re-running them.

    A progressive unit's outcomes (its horizons) exist only once every target has failed twice; until then
    its finished work is its stages. The keys are copied verbatim (a ``keys`` array of JSON strings, one
    ``prompt_<i>`` (m, d_model) float32 array each), so :func:`import_artifact` restores exactly the
    entries :func:`accessibility_lib.experiments.progressive.progressive_cram` looks up. When no unfinished
    unit has a stage, a stale file is removed. Returns how many stages were written.
    """
    keys, arrays = [], {}
    for u in units:
        if not _is_progressive(u) or u.get("state") == "complete":
            continue
        match = dict(model=model, weights=u["weights"], dtype="torch." + u["dtype"], source=u["source"], m=u["m"])
        for key, _ in store.entries("progressive", **match):
            full = store.get("progressive", key)
            if full is None or "prompt" not in full:
                continue
            value = {k: v for k, v in full.items() if k != "prompt"}
            arrays[f"prompt_{len(keys)}"] = np.asarray(full["prompt"], dtype=np.float32)
            keys.append(results.dumps({"key": key, "value": value}))
    out = stages_path(path)
    if not keys:
        out.unlink(missing_ok=True)
        return 0
    _savez_atomic(out, {"keys": np.array(keys, dtype=str), **arrays})
    return len(keys)


def _import_stages(path: Path, store) -> int:
    sp = stages_path(path)
    if not sp.exists():
        return 0
    added = 0
    with np.load(sp, allow_pickle=False) as data:
        for i, text in enumerate(data["keys"]):
            rec = results.loads(str(text))
            if not store.has("progressive", rec["key"]):
                store.put("progressive", rec["key"], rec["value"], arrays={"prompt": data[f"prompt_{i}"]})
                added += 1
    return added


def import_artifact(path, store) -> int:
    """Copy an artifact's fixed-length outcomes into the store (missing entries only); returns how many.

    Outcomes whose Adam state is in :func:`states_path` get it back as arrays, so a larger budget
    continues them. Progressive units have no fixed-length outcomes; the stages of the unfinished ones
    come back from :func:`stages_path` (counted in the total), so their runs replay instead of re-running.
    """
    from accessibility_lib.experiments.n50 import STATE_ARRAYS

    path = Path(path)
    if not path.exists():
        return 0
    art = upgrade(results.loads(path.read_text()))
    sp = states_path(path)
    states = np.load(sp, allow_pickle=False) if sp.exists() else None
    added = _import_stages(path, store)
    try:
        for u in art["units"]:
            if _is_progressive(u):
                continue
            for row in u["outcomes"]:
                key = _key(art["model"], u, row)
                if not store.has("cramming", key):
                    names = [_state_name(u["uid"], row, k) for k in STATE_ARRAYS]
                    arrays = None
                    if states is not None and all(nm in states.files for nm in names):
                        arrays = {k: states[nm] for k, nm in zip(STATE_ARRAYS, names)}
                    store.put(
                        "cramming", key, {k: v for k, v in row.items() if k not in ("n", "target")}, arrays=arrays
                    )
                    added += 1
    finally:
        if states is not None:
            states.close()
    return added


def own_outcomes(unit: dict) -> list[dict]:
    """A stored unit's outcomes for its own targets 0 … n_targets − 1 (at any length).

    Units with the same settings share the store, so an older runner wrote the extra targets of a 20-target
    unit into the 10-target one too; its n50, cost and failures are its own target set's, so it keeps its
    number while the larger unit runs and instruments are compared on the same targets."""
    cap = int(unit.get("n_targets", 10))
    return [r for r in unit["outcomes"] if int(r.get("target", 0)) < cap]


def refit_unit(unit: dict, level: float = 0.95):
    """Re-fit a fixed-length unit's n50 from its stored per-target outcomes.

    Returns:
        ``(lengths, rates, trials, fit)``: (L,) lengths (tokens, the unit's convention), success
        fractions, targets per length, and the :class:`~accessibility_lib.experiments.fitting.SigmoidFit`
        (``None`` when the unit has no outcome yet).

    Raises:
        ValueError: for a progressive unit, whose outcomes are per-target horizons, not per-length
            trials (``accessibility_lib.runs.cramming_summary.summarize`` reads those).
    """
    from accessibility_lib.experiments.fitting import fit_sigmoid

    if _is_progressive(unit):
        raise ValueError(
            f"unit {unit.get('uid')!r} is progressive: its outcomes are per-target horizons, not per-length "
            "trials; read it with cramming_summary.summarize (a median horizon), not refit_unit"
        )

    per_n: dict[int, list[bool]] = {}
    for row in own_outcomes(unit):
        per_n.setdefault(int(row["n"]), []).append(bool(row["success"]))
    if not per_n:
        return np.zeros(0), np.zeros(0), np.zeros(0), None
    lengths = np.array(sorted(per_n), dtype=float)
    trials = np.array([len(per_n[int(n)]) for n in lengths], dtype=float)
    rates = np.array([np.mean(per_n[int(n)]) for n in lengths])
    n_min = 1 + int(unit.get("layout", {}).get("n_given", 0) or 0)
    return lengths, rates, trials, fit_sigmoid(lengths, rates, trials, level=level, n_min=n_min)
