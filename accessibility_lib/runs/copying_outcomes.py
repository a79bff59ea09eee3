"""Published outcomes of copying runs: what chapter 6 shows from ``book/data/copying/`` instead of retraining.

A copying run's *outcome* is everything the chapter needs from it, as JSON (no weights): its config key, the
evaluation it got (exact-match counts per length), its training summary (steps, wall time, whether it reached
100 %, the check and loss curves), the width d and the radii r, r∞ of its last-layer embeddings at copy
positions. :func:`copying_outcome` makes one with :func:`accessibility_lib.runs.work.run_copying` (the one
function that runs a copying unit); the scripts write them into an artifact (:func:`write_artifact`), and the
chapter takes an artifact's outcome only when its config key and evaluation parameters equal the unit's
(:func:`find_outcome`), so a changed parameter or training code (the key's ``format``) retrains instead of
showing a stale number.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from accessibility_lib.ground.paths import BOOK_DATA

__all__ = ["COPYING_DATA", "STUDY_ARTIFACT", "STEP_COST_ARTIFACT", "copying_outcome", "outcome_record", "eval_params", "find_outcome", "load_artifact",
           "write_artifact", "loss_curve"]  # fmt: skip

#: Where the copying artifacts live, and the artifact of chapter 6's default-preset study.
COPYING_DATA = BOOK_DATA / "copying"
STUDY_ARTIFACT = COPYING_DATA / "study.json"
#: Why SmolLM2-135M is fine-tuned whole rather than with LoRA (chapter 6): the seconds of a full fine-tuning step
#: and of a step with every weight frozen (the least a LoRA step could cost), written by
#: ``benchmarks/bench_finetune_step.py`` with its machine and load.
STEP_COST_ARTIFACT = COPYING_DATA / "finetune_step_cost.json"


def eval_params(params: dict) -> dict:
    """The evaluation parameters an outcome is valid for: ``eval_lengths``, ``n_strings``, ``seed``."""
    return {"eval_lengths": [int(n) for n in params["eval_lengths"]], "n_strings": int(params["n_strings"]),
            "seed": int(params["seed"])}  # fmt: skip


def loss_curve(loss, points: int = 200) -> dict:
    """The per-step training loss averaged over consecutive windows: ``{"step", "loss"}`` with ≤ ``points``
    entries (the step is each window's last step; nats per copied token)."""
    loss = np.asarray(loss, dtype=np.float64)
    if loss.size == 0:
        return {"step": [], "loss": []}
    k = max(1, int(np.ceil(loss.size / points)))
    edges = np.arange(0, loss.size, k)
    return {"step": [int(min(e + k, loss.size)) for e in edges],
            "loss": [float(loss[e : e + k].mean()) for e in edges]}  # fmt: skip


def copying_outcome(label: str, cfg, params: dict, store, device: str = "cpu", **train_options) -> dict:
    """Train (or find in the store) and evaluate one copying run, and return its outcome record (JSON-able).

    Args:
        label: the run's name in the chapter.
        cfg: its :class:`~accessibility_lib.experiments.copying_model.TrainConfig`.
        params: the chapter's parameters (``eval_lengths``, ``n_strings``, ``seed``).
        store: the result store.
        train_options: for :func:`~accessibility_lib.experiments.copying_model.train_copying`.

    Returns:
        ``{"label", "config", "eval_params", "architecture", "d_model", "n_params", "train", "eval", "r",
        "r_inf"}``: ``train`` has ``steps``, ``seconds``, ``reached``, ``sessions``, ``check_step``,
        ``check_exact`` and ``loss_curve``; ``eval`` the arrays of
        :func:`~accessibility_lib.experiments.copying.evaluate_copying` as lists; r = max ‖h‖₂ and r∞ = max |h_i|
        over 32 held-out strings of the longest training length.
    """
    from accessibility_lib.runs.work import run_copying

    model, info, res = run_copying(cfg, params, store, device, **train_options)
    out = outcome_record(label, cfg, params, model, info, res)
    del model
    return out


def outcome_record(label: str, cfg, params: dict, model, info: dict, res: dict) -> dict:
    """The outcome record of a run :func:`~accessibility_lib.runs.work.run_copying` has trained and evaluated
    (``model, info, res`` are what it returns); the fields are those of :func:`copying_outcome`."""
    from accessibility_lib.experiments import copying, copying_model

    task = copying.CopyTask(cfg.alphabet_size)
    h = copying_model.final_embeddings(model, task, [cfg.train_max_len], n_strings=32, seed=params["seed"])  # (N, d)
    out = {
        "label": label,
        "config": cfg.key(),
        "eval_params": eval_params(params),
        "architecture": type(model).__name__,
        "d_model": int(model.config.hidden_size),
        "n_params": int(sum(p.numel() for p in model.parameters())),
        "train": {
            "steps": int(info["steps"]),
            "seconds": float(info["seconds"]),
            "reached": bool(info["reached"]),
            "cached": bool(info["cached"]),
            "sessions": list(info.get("sessions", [])),
            "check_step": [int(s) for s in info["check_step"]],
            "check_exact": [float(x) for x in info["check_exact"]],
            "loss_curve": loss_curve(info["loss"]),
        },
        "eval": {k: np.asarray(v).tolist() for k, v in res.items()},
        "r": float(np.linalg.norm(h, axis=1).max()),
        "r_inf": float(np.abs(h).max()),
    }
    return out


def find_outcome(artifact: dict | None, cfg, params: dict) -> dict | None:
    """The artifact's outcome for this exact run and evaluation, or None (then the run must be computed)."""
    if not artifact:
        return None
    key, ev = cfg.key(), eval_params(params)
    for rec in artifact.get("runs", {}).values():
        if rec.get("config") == key and rec.get("eval_params") == ev:
            return rec
    return None


def load_artifact(path: str | os.PathLike) -> dict | None:
    """The artifact at ``path`` (strict JSON, :func:`~accessibility_lib.ground.results.loads`), or None if absent."""
    from accessibility_lib.ground.results import loads

    path = Path(path)
    return loads(path.read_text()) if path.exists() else None


def write_artifact(path: str | os.PathLike, header: dict, label: str | None = None, record: dict | None = None) -> dict:
    """Update the artifact at ``path`` and rewrite it atomically: ``header``'s entries (settings, provenance,
    plan, status) replace the top-level entries of the same names, and ``record`` (when given) is stored under
    ``runs[label]``. Runs another process added meanwhile are kept (the file is re-read under an exclusive lock
    on ``.<name>.lock`` beside it).

    Returns:
        The artifact as written.
    """
    import fcntl

    from accessibility_lib.ground.results import dumps

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two writers (a study split over processes) never lose each other's runs
        art = load_artifact(path) or {}
        art.update(header)
        if record is not None:
            art.setdefault("runs", {})[label] = record
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(dumps(art, indent=1) + "\n")
        os.replace(tmp, path)
    return art
