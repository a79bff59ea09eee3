"""Real-model cramming runs as resumable work units, and the artifacts the book shows.

A *run plan* is a list of independent :class:`Unit` s — one n50 search each (target kind, length
convention, prompt length m, step budget) — for one model. Every per-target outcome lands in the
result store as it finishes (:func:`accessibility_lib.n50.find_n50`); an *artifact*
(``book/data/cramming/<model>.json``) is written from the store, never by hand: it holds each unit's
per-target outcomes, settings and provenance, and the chapter re-fits every number from those
outcomes (:func:`refit_unit`). On a fresh machine the runner first copies an artifact's outcomes back
into the store, so a run interrupted on one machine resumes on another.

Produced by ``scripts/real_model_cramming.py`` (the command is recorded in each artifact).
"""

from __future__ import annotations

import math
import os
import platform
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from . import results
from .decoding import DECODE_PATH, VERIFY_PATH

__all__ = [
    "Unit",
    "PLANS",
    "ARTIFACT_DIR",
    "REPLICATION_STEPS",
    "artifact_path",
    "plan_units",
    "unit_settings",
    "export_artifact",
    "import_artifact",
    "load_artifact",
    "refit_unit",
    "ArtifactMissingError",
    "machine_text",
    "git_commit",
]

ARTIFACT_DIR = Path(__file__).resolve().parent.parent / "book" / "data" / "cramming"
#: the step budget of the units that make the slopes (m = 1, 2, 3); the budget check adds 2× and 4×
BASE_STEPS = 300
# the authors' optimiser: AdamW, lr 1e-2, betas (0.9, 0.9), weight decay 0.01, up to 3000 steps, patience 500
REPLICATION_STEPS = {"lr": 1e-2, "betas": (0.9, 0.9), "weight_decay": 0.01, "max_steps": 3000, "patience": 500}


class ArtifactMissingError(FileNotFoundError):
    """No cramming artifact for a model; the message gives the command that produces it."""


@dataclass(frozen=True)
class Unit:
    """One n50 search: a model's targets of one kind and convention, at one m and step budget.

    Attributes:
        kind: target kind (:data:`accessibility_lib.targets.TARGET_KINDS`).
        m: prompt length (soft vectors).
        convention: length convention (:data:`accessibility_lib.targets.LENGTH_CONVENTIONS`).
        max_steps, patience: the step budget (optimiser updates).
        corpus: natural-text corpus (natural targets only).
        n_targets: targets per length.
        seed: seed of the targets and of the prompts' initialisation.
    """

    kind: str
    m: int
    convention: str = "replication"
    max_steps: int = 300
    patience: int = 100
    corpus: str = "austen"
    n_targets: int = 10
    seed: int = 0

    @property
    def uid(self) -> str:
        return f"{self.kind}/{self.convention}/m{self.m}/steps{self.max_steps}"


def _table1_smollm2() -> list[Unit]:
    """In the order they run. A 300-step budget (patience 100) is what two CPU cores allow for m = 1, 2, 3;
    at m = 1 the same targets are also crammed with 2× and 4× the steps, to measure how much n50 moves."""
    return [
        Unit("natural", 1, max_steps=600, patience=200),
        Unit("natural", 1),
        Unit("random_words", 1),
        Unit("natural", 2),
        Unit("random_words", 2),
        Unit("natural", 3),
        Unit("random_words", 3),
        Unit("random_tokens", 1),
        Unit("random_words", 1, max_steps=1200, patience=400),
        Unit("random_tokens", 2),
        Unit("natural", 1, max_steps=1200, patience=400),
    ]


PLANS = {
    # the Table 1 column of SmolLM2-135M: m = 1, 2, 3, natural and random-words, uniform tokens at
    # m = 1, 2, and the budget check at m = 1 (2x and 4x the steps)
    ("smollm2-135m", "table1"): _table1_smollm2,
    # Gemma-3-270M at m = 1 beside the authors' n50 (17.07 natural, 10.00 random words)
    ("gemma-3-270m", "table1"): lambda: [Unit("natural", 1), Unit("random_words", 1)],
    # a quick plan for tests and demonstrations on the shipped model
    ("nano", "smoke"): lambda: [
        Unit("natural", 1, max_steps=40, patience=20, corpus="heldout", n_targets=4),
        Unit("random_words", 1, max_steps=40, patience=20, n_targets=4),
    ],
    # chapter 7: the transformer nano and the state-space model nano-mamba (same text, tokenizer, width and
    # token budget) under identical units: m = 1, 2, 4, natural (held-out KJV) and random words, chapter 3's
    # nano step budget (300 steps, patience 100)
    ("nano", "architectures"): lambda: _architectures_plan(),
    ("nano-mamba", "architectures"): lambda: _architectures_plan(),
}


def _architectures_plan() -> list[Unit]:
    return [
        Unit(kind, m, max_steps=300, patience=100, corpus="heldout", n_targets=10)
        for kind in ("natural", "random_words")
        for m in (1, 2, 4)
    ]


def plan_units(model: str, plan: str) -> list[Unit]:
    """The units of a named plan for a model.

    Raises:
        ValueError: no such (model, plan); the message lists the plans that exist.
    """
    if (model, plan) not in PLANS:
        known = ", ".join(f"{m}:{p}" for m, p in PLANS)
        raise ValueError(f"no cramming plan {plan!r} for model {model!r}; known (model:plan): {known}")
    return PLANS[(model, plan)]()


def unit_settings(unit: Unit) -> dict:
    """The cramming settings of a unit (passed to ``cram`` and part of every store key)."""
    return {
        "lr": REPLICATION_STEPS["lr"],
        "betas": list(REPLICATION_STEPS["betas"]),
        "weight_decay": REPLICATION_STEPS["weight_decay"],
        "max_steps": unit.max_steps,
        "patience": unit.patience,
    }


def artifact_path(model: str, folder: str | os.PathLike | None = None) -> Path:
    """``book/data/cramming/<model>.json`` (or under ``folder``)."""
    return Path(folder or ARTIFACT_DIR) / f"{model.replace('/', '__')}.json"


def git_commit() -> str:
    """The checked-out commit (with ``+dirty`` when tracked files differ), or "unknown"."""
    try:
        root = Path(__file__).resolve().parent.parent
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


def _unit_entries(store, model: str, weights: str, dtype: str, source_name: str, unit: Unit) -> list[dict]:
    settings = unit_settings(unit)
    rows = []
    for key, value in store.entries(
        "cramming", model=model, weights=weights, dtype=dtype, source=source_name, m=unit.m
    ):
        if all(key.get(k) == v for k, v in settings.items()):
            rows.append({"n": key["n"], "target": key["target"], **{k: v for k, v in value.items()}})
    return sorted(rows, key=lambda r: (r["n"], r["target"]))


def export_artifact(
    path,
    *,
    model: str,
    weights: str,
    dtype: str,
    plan: str,
    units: list[Unit],
    sources: dict,
    store,
    status: dict,
    provenance: dict,
) -> dict:
    """Write the artifact of a plan from the result store (atomically) and return it.

    Args:
        sources: unit uid -> (source name, layout dict) of its target source.
        status: unit uid -> {"state": "complete"|"partial"|"pending", "seconds": ..., "finished": ...,
            "commit": ..., "bracketed": ...}.
        provenance: command, commit, machine, date, wall time of the run.
    """
    out = {
        "model": model,
        "weights": weights,
        "dtype": dtype,
        "plan": plan,
        "decode_path": DECODE_PATH,
        "verified_by": VERIFY_PATH,
        "optimiser": {
            **{k: v for k, v in REPLICATION_STEPS.items() if k not in ("max_steps", "patience")},
            "name": "AdamW",
        },
        "provenance": provenance,
        "units": [],
    }
    for u in units:
        name, layout = sources[u.uid]
        rows = _unit_entries(store, model, weights, dtype, name, u)
        out["units"].append(
            {
                "uid": u.uid,
                **asdict(u),
                "source": name,
                "layout": layout,
                "settings": unit_settings(u),
                **status.get(u.uid, {"state": "pending"}),
                "outcomes": rows,
            }
        )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(results.dumps(out, indent=1) + "\n")  # strict JSON; NaN/inf as {"$float": ...}
    os.replace(tmp, path)
    return out


def import_artifact(path, store) -> int:
    """Copy an artifact's per-target outcomes into the store (missing entries only); returns how many."""
    from .n50 import cramming_key

    path = Path(path)
    if not path.exists():
        return 0
    art = results.loads(path.read_text())
    added = 0
    for u in art["units"]:
        for row in u["outcomes"]:
            key = cramming_key(
                art["model"],
                art["weights"],
                art["dtype"],
                u["source"],
                u["layout"],
                u["m"],
                row["n"],
                row["target"],
                row["seed"],
                u["settings"],
            )
            if not store.has("cramming", key):
                store.put("cramming", key, {k: v for k, v in row.items() if k not in ("n", "target")})
                added += 1
    return added


def load_artifact(model: str, folder: str | os.PathLike | None = None) -> dict:
    """The cramming artifact of a model.

    Raises:
        ArtifactMissingError: no artifact; the message names the command that produces it.
    """
    path = artifact_path(model, folder)
    if not path.exists():
        plans = [p for (m, p) in PLANS if m == model]
        how = (
            f".venv/bin/python scripts/real_model_cramming.py --model {model} --plan {plans[0]}"
            if plans
            else f"no plan exists for {model!r}; plans exist for: {sorted({m for m, _ in PLANS})}"
        )
        raise ArtifactMissingError(f"no cramming artifact for {model!r} at {path}; produce it with:\n    {how}")
    return results.loads(path.read_text())


def refit_unit(unit: dict, level: float = 0.95):
    """Re-fit a unit's n50 from its stored per-target outcomes.

    Returns:
        ``(lengths, rates, trials, fit)``: (L,) lengths (tokens, the unit's convention), success
        fractions, targets per length, and the :class:`~accessibility_lib.fitting.SigmoidFit`
        (``None`` when the unit has no outcome yet).
    """
    from .fitting import fit_sigmoid

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
        uid, kind, m, max_steps, state: the unit (state: complete, partial or pending).
        lengths, rates, trials: (L,) lengths (tokens, the unit's convention), success fractions, targets.
        fit: the :class:`~accessibility_lib.fitting.SigmoidFit` (None without outcomes).
        n_outcomes: per-target outcomes behind it; disagreements: KV-cache vs recompute disagreements
            summed over them; seconds: wall time of the unit (when finished).
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


def summarize(artifact: dict) -> list[UnitSummary]:
    """Every unit of an artifact with its n50 re-fitted from the stored outcomes."""
    out = []
    for u in artifact["units"]:
        lengths, rates, trials, fit = refit_unit(u)
        dis = sum(int(r.get("decode_disagreements", 0)) for r in u["outcomes"])
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
                dis,
                u.get("seconds"),
            )
        )
    return out


def slopes(summaries: list[UnitSummary], max_steps: int) -> dict[str, tuple[list[UnitSummary], object]]:
    """Per target kind, the units at ``max_steps`` with a bracketed n50 and their slope fit (or None).

    Returns:
        kind -> (units with a finite n50, sorted by m; :class:`~accessibility_lib.fitting.SlopeFit`
        through them with their n50 intervals, or None with fewer than two distinct m).
    """
    from .fitting import fit_slope

    out = {}
    for kind in sorted({s.kind for s in summaries}):
        pts = sorted(
            (s for s in summaries if s.kind == kind and s.max_steps == max_steps and s.fit is not None and s.fit.ok),
            key=lambda s: s.m,
        )
        fit = None
        if len({s.m for s in pts}) >= 2:
            ci = [s.fit.ci for s in pts]
            ok_ci = all(np.all(np.isfinite(c)) for c in ci)
            fit = fit_slope([s.m for s in pts], [s.fit.n50 for s in pts], n50_ci=ci if ok_ci else None)
        out[kind] = (pts, fit)
    return out


def now_utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def finite_or_none(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None
