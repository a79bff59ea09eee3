"""The outcome of :func:`~accessibility_lib.experiments.cramming.cram` per target, and the optimiser state a
capped run can be continued from.

With no patience and a constant learning rate, a cramming run of b steps is exactly the first b steps of a
longer one (chapter 3's nested budgets). :meth:`CramResult.state` keeps what the continuation needs — the
prompt, Adam's two moment estimates and step count, the bookkeeping of the stopped run — and
:func:`check_resume` validates such states before ``cram(..., resume=[...])`` continues them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from accessibility_lib.models.decoding import DECODE_PATH, VERIFY_PATH

__all__ = ["CramResult", "check_resume", "continuation_settings", "effective_patience", "same_prefix"]


@dataclass
class CramResult:
    """Per-target outcome of :func:`cram` (B targets).

    Attributes:
        success: (B,) bool — greedy decoding from the prompt reproduces the target exactly.
        steps: (B,) int — optimiser updates used (0 if the initial prompt already worked).
        final_loss: (B,) float — mean cross-entropy per target token at the last check (nats/token).
        best_accuracy: (B,) float — best teacher-forced argmax token accuracy seen, in [0, 1].
        prompts: (B, m, d_model) float32 CPU tensor — the verified prompt (success) or the last one.
        restarts: (B,) int — restarts after a NaN/inf loss or an exploding prompt.
        diverged: (B,) bool — still diverging after ``max_restarts`` restarts (counted as failure).
        seeds: (B,) int — the seed each target's prompt was initialised from.
        disagreements: (B,) int — checks at which the full recompute reproduced the target but the
            KV-cache decode did not (0 in float32; the target then counts as not yet crammed).
        exp_avg, exp_avg_sq: (B, m, d_model) float32 CPU tensors — Adam's moment estimates at the end.
        adam_steps: (B,) int — Adam's step count (bias correction) at the end: ``steps`` since the last restart.
        best_loss: (B,) float — lowest finite loss seen (nats/token); since_best: (B,) int — checks since
            the last improvement (the patience counter).
        stopped_by: (B,) str — what ended the target: ``"success"``, ``"patience"``, ``"cap"`` or ``"diverged"``.
        verified: (B,) bool — the book's test on the prompt kept: greedy decoding reproduces the target (under the
            book's rule the same as ``success``; under the authors' rule their success test is ``success``).
        verified_at_hit: (B,) bool — the authors' rule: the prompt at which the teacher-forced accuracy reached
            100 % (one update before the kept one) decodes the target.
        settings: the run's :func:`continuation_settings` (stamped into every :meth:`state`).

    A target that stopped at the step cap can be continued to a larger budget from :meth:`state`
    (``cram(..., resume=[...])``): with no patience the continued run is the uninterrupted one.
    """

    success: np.ndarray
    steps: np.ndarray
    final_loss: np.ndarray
    best_accuracy: np.ndarray
    prompts: torch.Tensor
    restarts: np.ndarray
    diverged: np.ndarray
    seeds: np.ndarray
    disagreements: np.ndarray
    exp_avg: torch.Tensor
    exp_avg_sq: torch.Tensor
    adam_steps: np.ndarray
    best_loss: np.ndarray
    since_best: np.ndarray
    stopped_by: np.ndarray | None = None
    verified: np.ndarray | None = None
    verified_at_hit: np.ndarray | None = None
    settings: dict | None = None

    def __len__(self) -> int:
        return int(self.success.size)

    def record(self, i: int) -> dict:
        """Target ``i``'s scalars as a JSON-able dict (for the result store)."""
        return {
            "success": bool(self.success[i]),
            "steps": int(self.steps[i]),
            "final_loss": float(self.final_loss[i]),
            "best_accuracy": float(self.best_accuracy[i]),
            "restarts": int(self.restarts[i]),
            "diverged": bool(self.diverged[i]),
            "seed": int(self.seeds[i]),
            "decode_disagreements": int(self.disagreements[i]),
            "decode_path": DECODE_PATH,
            "verified_by": VERIFY_PATH,
            **({} if self.stopped_by is None else {"stopped_by": str(self.stopped_by[i])}),
            **(
                {
                    "success_test": "teacher-forced accuracy (the authors')",
                    "verified": bool(self.verified[i]),
                    "verified_at_hit": bool(self.verified_at_hit[i]),
                }
                if (self.settings or {}).get("rule") == "authors"
                else {}
            ),
        }

    def state(self, i: int) -> tuple[dict, dict[str, np.ndarray]]:
        """Target ``i``'s optimiser state, to continue it later (``cram(..., resume=[...])``).

        Returns:
            (scalars, arrays): JSON-able scalars (``steps``, ``adam_steps``, ``restarts``, ``best_loss``,
            ``final_loss``, ``best_accuracy``, ``since_best``, ``decode_disagreements``, ``seed``) and the float32 arrays
            ``prompt``, ``exp_avg``, ``exp_avg_sq``, each (m, d_model).
        """
        rec = self.record(i)
        scalars = {
            k: rec[k] for k in ("steps", "restarts", "final_loss", "best_accuracy", "decode_disagreements", "seed")
        }
        scalars.update(
            adam_steps=int(self.adam_steps[i]), best_loss=float(self.best_loss[i]), since_best=int(self.since_best[i])
        )
        if self.settings is not None:
            scalars["settings"] = dict(self.settings)
        arrays = {
            "prompt": self.prompts[i].numpy(),
            "exp_avg": self.exp_avg[i].numpy(),
            "exp_avg_sq": self.exp_avg_sq[i].numpy(),
        }
        return scalars, arrays


def effective_patience(patience: int | None, max_steps: int) -> int | None:
    """A patience as it acts within a budget: None where it cannot end a run of ``max_steps`` checks (none given,
    or ≥ ``max_steps``: the counter, reset at most to 0 and raised by one a check, never reaches it first)."""
    return None if patience is None or int(patience) >= int(max_steps) else int(patience)


def same_prefix(patience_a: int | None, patience_b: int | None, horizon: int) -> bool:
    """Whether two runs of one target, seed and optimiser that differ only in budget and patience are the same
    computation for their first ``horizon`` steps: their patiences act alike within it (both None or equal once
    :func:`effective_patience` is applied at ``horizon``)."""
    return effective_patience(patience_a, horizon) == effective_patience(patience_b, horizon)


def continuation_settings(
    *, lr, betas, weight_decay, init, init_scale, rule, n_given, prefix_ids, patience, max_steps
) -> dict:
    """The settings a cramming state carries, which a run continuing it must share (all but the budget).

    Returns:
        ``{"lr", "betas", "weight_decay", "init", "init_scale", "rule", "n_given", "prefix_ids", "patience"}``
        (JSON-able; ``patience`` the :func:`effective_patience`).
    """
    return {
        "lr": float(lr),
        "betas": [float(b) for b in betas],
        "weight_decay": float(weight_decay),
        "init": str(init),
        "init_scale": float(init_scale),
        "rule": str(rule),
        "n_given": int(n_given),
        "prefix_ids": [int(t) for t in (prefix_ids or [])],
        "patience": effective_patience(patience, max_steps),
    }


def _check_continuation(i: int, scalars: dict, settings: dict, seed: int | None) -> None:
    """Refuse a state that a run with ``settings`` would not provably continue (see :func:`check_resume`)."""
    stored = scalars.get("settings")
    if stored is None:
        raise ValueError(
            f"resume[{i}] carries no optimiser settings, so it cannot be shown to continue this run "
            f"(settings {settings}); take states from CramResult.state"
        )
    for k, v in settings.items():
        if k != "patience" and stored.get(k) != v:
            raise ValueError(
                f"resume[{i}] was run with {k} = {stored.get(k)!r}, this run has {k} = {v!r}: a continuation across "
                "different optimiser settings is another computation"
            )
    if seed is not None and "seed" in scalars and int(scalars["seed"]) != int(seed):
        raise ValueError(
            f"resume[{i}] was started from seed {int(scalars['seed'])}, this run's target from seed {seed}"
        )
    old, new, done = stored.get("patience"), settings["patience"], int(scalars["steps"])
    if new is not None and int(scalars.get("since_best", 0)) >= new:
        raise ValueError(
            f"resume[{i}] has gone {int(scalars['since_best'])} checks without progress: this run's patience {new} "
            "would have stopped it already"
        )
    if old != new and not (old is None and (new is None or new > done)):
        raise ValueError(
            f"resume[{i}] ran {done} steps with patience {old}, this run has patience {new}: the stopped run is not "
            "provably the start of this one (a patience the stored run did not have could have stopped it earlier)"
        )


def check_resume(
    resume, n_tg: int, m: int, d_model: int, max_steps: int, *, settings: dict | None = None, seeds=None
) -> list:
    """Validate ``cram``'s resume states: one entry per target, (m, d_model) finite arrays, steps ≤ max_steps and,
    with ``settings`` (:func:`continuation_settings` of the continuing run), the same settings and seed and a
    patience that provably did not and would not have stopped the stored run.

    Raises:
        ValueError: the first state that fails, naming what it holds and what this run has.
    """
    if resume is None:
        return [None] * n_tg
    resume = list(resume)
    if len(resume) != n_tg:
        raise ValueError(f"resume must have one entry (a state or None) per target ({n_tg}), got {len(resume)}")
    for i, st in enumerate(resume):
        if st is None:
            continue
        scalars, arrays = st
        for name in ("prompt", "exp_avg", "exp_avg_sq"):
            a = np.asarray(arrays.get(name) if name in arrays else np.empty(0), dtype=np.float32)
            if a.shape != (m, d_model):
                raise ValueError(f"resume[{i}][{name!r}] must have shape (m, d_model) = {(m, d_model)}, got {a.shape}")
            if not np.isfinite(a).all():
                raise ValueError(f"resume[{i}][{name!r}] contains NaN or inf values")
        if int(scalars["steps"]) > max_steps:
            raise ValueError(
                f"resume[{i}] has already run {int(scalars['steps'])} steps, more than max_steps = {max_steps}: "
                "a state can only be continued to a larger budget"
            )
        if settings is not None:
            _check_continuation(i, scalars, settings, None if seeds is None else seeds[i])
    return resume
