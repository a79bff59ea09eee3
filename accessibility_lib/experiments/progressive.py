"""Progressive cramming: one prompt per target, grown a token at a time; a target's horizon.

After Tarasov, Lashukov, Goncharova, Kuznetsov (2026), "Progressive Cramming" (their code:
FusionBrainLab/progressive_cramming), in our words and with our verification: each target keeps one
soft prompt; the prompt is optimised on the target's first L tokens until greedy decoding reproduces
them exactly (the same verification as :func:`accessibility_lib.experiments.cramming.cram`), then L grows by
``stage`` tokens and the optimisation continues from the verified prompt (a warm start, fresh Adam
state). When a stage fails within its budget, the target gets **one fresh fixed-length attempt** at
that length (a new random prompt, the fixed protocol's budget); a success resumes the growth from
there, a second failure ends the target. Its *horizon* is the longest verified prefix.

A prompt that greedily generates n tokens generates every shorter prefix, so the horizons give the
success rate at every n at once (the share of horizons ≥ n: one monotone curve per target) and n50 is
the median horizon. Two known biases, measured in chapter 3 rather than assumed away: a horizon is the
first failure in a chain of about n50 noisy trials (biased low, more so at larger m), and warm-started
stages can stall where a fresh prompt would not (the fresh retry is there for that).

The stage budget grows with the length: ``base_steps + steps_per_token·L`` updates (no separate
patience). Every stage outcome, with its prompt, goes to the result store as it finishes, so a killed
run resumes by replaying its stages from the store.

Targets must be prefix-consistent: ``source(n_cap, i)[:L]`` is target i at length L (natural text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import torch

from accessibility_lib.ground.checks import check_int

if TYPE_CHECKING:
    from accessibility_lib.models.handle import ModelHandle

__all__ = ["ProgressiveResult", "progressive_cram", "median_interval"]


@dataclass
class ProgressiveResult:
    """Per-target horizons of :func:`progressive_cram`.

    Attributes:
        horizons: (B,) int — longest verified prefix (tokens, the source's length convention; n_given
            when not even the first stage was crammed).
        capped: (B,) bool — the horizon reached ``n_cap`` (a lower bound only).
        token_steps: forward+backward token-steps spent (Σ stage steps × input positions).
        stages: per-stage records (target, length, attempt, success, steps).
        prompts: per target, the (m, d_model) prompt verified at its horizon (None when none was).
    """

    horizons: np.ndarray
    capped: np.ndarray
    token_steps: int
    stages: list = field(default_factory=list)
    prompts: list = field(default_factory=list)

    def rates(self, lengths) -> np.ndarray:
        """Success rate at each length n: the share of targets whose horizon is ≥ n."""
        return np.array([float(np.mean(self.horizons >= n)) for n in lengths])


def median_interval(horizons, level: float = 0.95) -> tuple[float, tuple[float, float]]:
    """The median horizon with a distribution-free interval from order statistics.

    The interval [x_(j), x_(k)] covers the population median with probability ≥ ``level`` (binomial
    order-statistic interval; exact, no resampling).

    Returns:
        (median, (low, high)) in tokens; an end is NaN when B is too small for that level.
    """
    from scipy import stats

    x = np.sort(np.asarray(horizons, dtype=float))
    b = x.size
    if b == 0:
        raise ValueError("median_interval needs at least one horizon")
    med = float(np.median(x))
    tail = (1 - level) / 2
    j = int(stats.binom.ppf(tail, b, 0.5))  # P(Bin <= j - 1) <= tail
    while j > 0 and stats.binom.cdf(j - 1, b, 0.5) > tail:
        j -= 1
    lo = float(x[j - 1]) if j >= 1 else float("nan")
    hi = float(x[b - j]) if j >= 1 else float("nan")
    return med, (lo, hi)


def progressive_cram(
    handle: ModelHandle,
    source,
    m: int,
    n_targets: int,
    n_cap: int,
    *,
    stage: int = 1,
    base_steps: int = 100,
    steps_per_token: int = 10,
    retry_steps: int = 300,
    seed: int = 0,
    store=None,
    key_base: dict | None = None,
    lr: float = 1e-2,
    betas=(0.9, 0.9),
    weight_decay: float = 0.0,
    init_scale: float = 1.0,
    should_stop=None,
) -> ProgressiveResult:
    """Grow one prompt per target until it fails twice; return the horizons.

    Args:
        handle: model handle (float32 or bfloat16).
        source: a :class:`~accessibility_lib.experiments.targets.TargetSource` of prefix-consistent targets.
        m: prompt length (soft vectors). n_targets: targets 0..B−1. n_cap: longest length tried (tokens).
        stage: tokens added per stage.
        base_steps, steps_per_token: a stage at length L gets base_steps + steps_per_token·L updates.
        retry_steps: budget of the fresh fixed-length attempt after a failed stage.
        seed: target i starts from seed + i; its fresh retry at length L from seed + i + 7919·L.
        store, key_base: a result store and the key fields that identify the run (model, weights,
            source, settings ...); each stage is stored under key_base + (target, length, attempt).
        lr, betas, weight_decay, init_scale: the optimiser (:func:`accessibility_lib.experiments.cramming.cram`).
        should_stop: optional callable; True before a stage raises
            :class:`accessibility_lib.experiments.n50.StopSearch` (finished stages are in the store).

    Returns:
        A :class:`ProgressiveResult`.

    Raises:
        ValueError: m, counts or budgets < 1, n_cap not above the source's shortest length.
    """
    from accessibility_lib.experiments.cramming import cram
    from accessibility_lib.experiments.n50 import StopSearch

    m = check_int("m", m, minimum=1)
    n_targets = check_int("n_targets", n_targets, minimum=1)
    stage = check_int("stage", stage, minimum=1)
    for name, v in (("base_steps", base_steps), ("retry_steps", retry_steps)):
        check_int(name, v, minimum=1)
    steps_per_token = check_int("steps_per_token", steps_per_token, minimum=0)
    g = int(getattr(source, "n_given", 0))
    prefix = list(getattr(source, "prefix_ids", None) or [])
    n_cap = check_int("n_cap", n_cap, minimum=g + 1)
    full = [list(source(n_cap, i)) for i in range(n_targets)]
    opt = dict(lr=lr, betas=tuple(betas), weight_decay=weight_decay, init_scale=init_scale, patience=10**9)
    horizon = np.full(n_targets, g, dtype=np.int64)
    length = np.full(n_targets, min(g + stage, n_cap), dtype=np.int64)  # the length each target tries next
    prompt: list[torch.Tensor | None] = [None] * n_targets
    alive = np.ones(n_targets, dtype=bool)
    retried = np.zeros(n_targets, dtype=bool)  # the current length has had its fresh attempt
    stages, spent = [], 0

    def key(i, L, attempt):
        return {
            **(key_base or {}),
            "m": m,
            "target": i,
            "length": int(L),
            "attempt": attempt,
            "stage": stage,
            "base_steps": base_steps,
            "steps_per_token": steps_per_token,
            "retry_steps": retry_steps,
            "seed": seed + i,
        }

    def state(i: int) -> str:
        return "retry" if retried[i] else ("first" if prompt[i] is None else "warm")

    while alive.any():
        # group the live targets by (length, state) and run each group as one batch
        groups: dict[tuple[int, str], list[int]] = {}
        for i in np.nonzero(alive)[0]:
            groups.setdefault((int(length[i]), state(int(i))), []).append(int(i))
        for (L, attempt), idx in sorted(groups.items()):
            steps_cap = retry_steps if attempt == "retry" else base_steps + steps_per_token * L
            recs, todo = {}, []
            for i in idx:
                got = store.get("progressive", key(i, L, attempt)) if store is not None else None
                if got is None:
                    todo.append(i)
                else:
                    recs[i] = got
            if todo:
                if should_stop is not None and should_stop():
                    raise StopSearch(f"stopped before a progressive stage at L = {L} ({len(todo)} targets)")
                res = cram(
                    handle,
                    [full[i][:L] for i in todo],
                    m,
                    max_steps=steps_cap,
                    seed=[seed + i + (7919 * L if attempt == "retry" else 0) for i in todo],
                    n_given=g,
                    prefix_ids=prefix or None,
                    init_prompts=torch.stack([prompt[i] for i in todo]) if attempt == "warm" else None,
                    **opt,
                )
                for j, i in enumerate(todo):
                    rec = {"success": bool(res.success[j]), "steps": int(res.steps[j])}
                    arr = res.prompts[j].numpy()
                    if store is not None:
                        store.put("progressive", key(i, L, attempt), rec, arrays={"prompt": arr})
                    recs[i] = {**rec, "prompt": arr}
            for i in idx:
                r = recs[i]
                spent += int(r["steps"]) * (len(prefix) + m + L - 1)
                stages.append(
                    {
                        "target": i,
                        "length": L,
                        "attempt": attempt,
                        "success": bool(r["success"]),
                        "steps": int(r["steps"]),
                    }
                )
                if r["success"]:
                    horizon[i] = L
                    prompt[i] = torch.as_tensor(np.asarray(r["prompt"]), dtype=torch.float32)
                    retried[i] = False
                    alive[i] = L < n_cap
                    length[i] = min(L + stage, n_cap)
                elif not retried[i]:
                    retried[i] = True  # one fresh fixed-length attempt at this length
                else:
                    alive[i] = False
    return ProgressiveResult(horizon, horizon >= n_cap, spent, stages, prompt)
