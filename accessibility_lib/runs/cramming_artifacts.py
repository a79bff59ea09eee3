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

from accessibility_lib.ground.paths import BOOK_DATA, REPO_ROOT
import math
import os
import platform
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from accessibility_lib.ground import results
from accessibility_lib.runs.cramming_units import Unit, unit_settings
from accessibility_lib.models.decoding import DECODE_PATH, VERIFY_PATH

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
    "refit_unit",
    "UnitSummary",
    "summarize",
    "slopes",
    "git_commit",
    "machine_text",
    "now_utc",
]

ARTIFACT_DIR = BOOK_DATA / "cramming"
FORMAT = 2
_UNIT_FIELDS = tuple(Unit.__dataclass_fields__)


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
        return art
    out = {k: v for k, v in art.items() if k not in ("dtype", "weights", "units", "plan", "optimiser")}
    out["format"] = FORMAT
    out["units"] = []
    for u in art["units"]:
        unit = Unit(
            u["kind"],
            int(u["m"]),
            u.get("convention", "replication"),
            int(u["max_steps"]),
            int(u["patience"]),
            u.get("corpus", "austen"),
            int(u.get("n_targets", 10)),
            int(u.get("seed", 0)),
            "paper",
            _short_dtype(art["dtype"]),
            "bisect",
        )
        rest = {k: v for k, v in u.items() if k not in (*_UNIT_FIELDS, "uid")}
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


def unit_outcomes(store, model: str, weights: str, unit: Unit, source_name: str) -> list[dict]:
    """Every fixed-length outcome in the store for a unit's settings (wherever it came from), sorted."""
    settings = unit_settings(unit)
    rows = []
    for key, value in store.entries(
        "cramming", model=model, weights=weights, dtype="torch." + unit.dtype, source=source_name, m=unit.m
    ):
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


def unit_record(unit: Unit, *, plan: str, weights: str, source: tuple[str, dict], outcomes: list, **status) -> dict:
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


def import_artifact(path, store) -> int:
    """Copy an artifact's fixed-length outcomes into the store (missing entries only); returns how many.

    Progressive units store their stages, not outcomes a fixed-length search could use; they are skipped
    (their stages are re-run, or found in the store, by the runner).
    """
    path = Path(path)
    if not path.exists():
        return 0
    art = upgrade(results.loads(path.read_text()))
    added = 0
    for u in art["units"]:
        if u.get("protocol") == "progressive" or u.get("instrument", "paper").startswith("progressive"):
            continue
        for row in u["outcomes"]:
            key = _key(art["model"], u, row)
            if not store.has("cramming", key):
                store.put("cramming", key, {k: v for k, v in row.items() if k not in ("n", "target")})
                added += 1
    return added


def refit_unit(unit: dict, level: float = 0.95):
    """Re-fit a fixed-length unit's n50 from its stored per-target outcomes.

    Returns:
        ``(lengths, rates, trials, fit)``: (L,) lengths (tokens, the unit's convention), success
        fractions, targets per length, and the :class:`~accessibility_lib.experiments.fitting.SigmoidFit`
        (``None`` when the unit has no outcome yet).
    """
    from accessibility_lib.experiments.fitting import fit_sigmoid

    per_n: dict[int, list[bool]] = {}
    for row in unit["outcomes"]:
        per_n.setdefault(int(row["n"]), []).append(bool(row["success"]))
    if not per_n:
        return np.zeros(0), np.zeros(0), np.zeros(0), None
    lengths = np.array(sorted(per_n), dtype=float)
    trials = np.array([len(per_n[int(n)]) for n in lengths], dtype=float)
    rates = np.array([np.mean(per_n[int(n)]) for n in lengths])
    n_min = 1 + int(unit.get("layout", {}).get("n_given", 0) or 0)
    return lengths, rates, trials, fit_sigmoid(lengths, rates, trials, level=level, n_min=n_min)


@dataclass
class UnitSummary:
    """One unit of an artifact, re-fitted from its per-target outcomes (:func:`summarize`).

    Attributes:
        uid, kind, m, max_steps, state, instrument, dtype, design: the unit (state: complete, partial, pending).
        lengths, rates, trials: (L,) lengths (tokens, the unit's convention), success fractions, targets.
        fit: the :class:`~accessibility_lib.experiments.fitting.SigmoidFit`, or for a progressive unit a
            :class:`ProgressiveFit`; None without outcomes.
        n_outcomes: per-target outcomes behind it; disagreements: KV-cache vs recompute disagreements.
        failures, failures_at_cap: failed outcomes, and those that used the whole step budget (a share
            near 1 says the budget, not the model, ended them).
        token_steps: forward+backward token-steps behind the outcomes; seconds: wall time when finished.
        budget_label: e.g. "300 steps (no patience), paper".
    """

    uid: str
    kind: str
    m: int
    max_steps: int
    state: str
    lengths: np.ndarray
    rates: np.ndarray
    trials: np.ndarray
    fit: object
    n_outcomes: int
    disagreements: int
    seconds: float | None
    instrument: str = "paper"
    dtype: str = "float32"
    design: str = "bisect"
    failures: int = 0
    failures_at_cap: int = 0
    token_steps: int = 0
    budget_label: str = ""

    @property
    def cap_share(self) -> float:
        """Share of failures that stopped at the step cap (NaN without failures)."""
        return self.failures_at_cap / self.failures if self.failures else float("nan")


@dataclass
class ProgressiveFit:
    """n50 of a progressive unit: the median horizon with an order-statistic interval."""

    n50: float
    ci: tuple[float, float]
    ok: bool
    capped: int

    def describe(self, digits: int = 1) -> str:
        if not self.ok:
            return "no n50 (no horizon)"
        lo, hi = self.ci
        return f"{self.n50:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}] (median horizon)"


def _summary_progressive(u: dict) -> tuple:
    from accessibility_lib.experiments.progressive import median_interval

    hz = np.array([int(r["horizon"]) for r in u["outcomes"]])
    if hz.size == 0:
        return np.zeros(0), np.zeros(0), np.zeros(0), None
    lengths = np.arange(max(1, hz.min()), hz.max() + 2, dtype=float)
    rates = np.array([np.mean(hz >= n) for n in lengths])
    med, ci = median_interval(hz)
    capped = int(sum(bool(r.get("capped")) for r in u["outcomes"]))
    return lengths, rates, np.full(lengths.shape, float(hz.size)), ProgressiveFit(med, ci, True, capped)


def summarize(artifact: dict) -> list[UnitSummary]:
    """Every unit of an artifact (format 1 or 2) with its n50 re-fitted from the stored outcomes."""
    from accessibility_lib.experiments.n50 import token_steps

    art = upgrade(artifact)
    out = []
    for u in art["units"]:
        progressive = u.get("instrument", "paper").startswith("progressive")
        lengths, rates, trials, fit = _summary_progressive(u) if progressive else refit_unit(u)
        fails = [r for r in u["outcomes"] if not progressive and not r["success"]]
        cap = int(u["settings"]["max_steps"])
        n_prefix = len(u.get("layout", {}).get("prefix_ids") or [])
        unit = Unit(**{k: u[k] for k in _UNIT_FIELDS if k in u})
        out.append(
            UnitSummary(
                u["uid"],
                u["kind"],
                int(u["m"]),
                int(u["max_steps"]),
                u.get("state", "pending"),
                lengths,
                rates,
                trials,
                fit,
                len(u["outcomes"]),
                sum(int(r.get("decode_disagreements", 0)) for r in u["outcomes"]),
                u.get("seconds"),
                u.get("instrument", "paper"),
                u.get("dtype", "float32"),
                u.get("design", "bisect"),
                len(fails),
                sum(int(r["steps"]) >= cap for r in fails),
                int(u["token_steps"])
                if "token_steps" in u
                else token_steps(u["outcomes"], int(u["m"]), n_prefix)
                if not progressive
                else 0,
                unit.budget_label,
            )
        )
    return out


def slopes(
    summaries: list[UnitSummary], max_steps: int, *, instrument: str = "paper", dtype: str | None = None
) -> dict[str, tuple[list[UnitSummary], object]]:
    """Per target kind, the units of one budget, instrument and dtype with a bracketed n50, and their slope.

    Units whose decode paths disagreed are left out (a bfloat16 run whose KV-cache decoding and full
    recompute differ does not measure one model). With several units at the same m (e.g. 10 and 20
    targets) the one with more outcomes is used.

    Args:
        dtype: one dtype, or None for the dtype most units of that budget and instrument have.

    Returns:
        kind -> (units with a finite n50, sorted by m; :class:`~accessibility_lib.experiments.fitting.SlopeFit`
        through them with their n50 intervals, or None with fewer than two distinct m).
    """
    from collections import Counter

    from accessibility_lib.experiments.fitting import fit_slope

    pool = [s for s in summaries if s.max_steps == max_steps and s.instrument == instrument]
    if dtype is None and pool:
        dtype = Counter(s.dtype for s in pool).most_common(1)[0][0]
    out = {}
    for kind in sorted({s.kind for s in pool}):
        best: dict[int, UnitSummary] = {}
        for s in pool:
            if s.kind == kind and s.dtype == dtype and s.fit is not None and s.fit.ok and s.disagreements == 0:
                if s.m not in best or s.n_outcomes > best[s.m].n_outcomes:
                    best[s.m] = s
        pts = [best[m] for m in sorted(best)]
        fit = None
        if len(pts) >= 2:
            ci = [s.fit.ci for s in pts]
            ok_ci = all(np.all(np.isfinite(c)) for c in ci)
            fit = fit_slope([s.m for s in pts], [s.fit.n50 for s in pts], n50_ci=ci if ok_ci else None)
        out[kind] = (pts, fit)
    return out


def git_commit() -> str:
    """The checked-out commit (with ``+dirty`` when tracked files differ), or "unknown"."""
    try:
        root = REPO_ROOT
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True, cwd=root
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, cwd=root
        ).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine_text(threads: int | None = None) -> str:
    import torch

    return f"{platform.node()} {platform.machine()}, {os.cpu_count()} cpus, torch {torch.__version__}" + (
        f", {threads} thread(s) a worker" if threads else ""
    )


def now_utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def finite_or_none(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None
