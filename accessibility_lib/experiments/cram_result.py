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

__all__ = ["CramResult", "check_resume"]


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
        arrays = {
            "prompt": self.prompts[i].numpy(),
            "exp_avg": self.exp_avg[i].numpy(),
            "exp_avg_sq": self.exp_avg_sq[i].numpy(),
        }
        return scalars, arrays


def check_resume(resume, n_tg: int, m: int, d_model: int, max_steps: int) -> list:
    """Validate ``cram``'s resume states: one entry per target, (m, d_model) finite arrays, steps ≤ max_steps."""
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
    return resume
