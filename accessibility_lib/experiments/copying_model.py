"""Task models for copying (x|x) and their training, cached by every hyperparameter.

Two kinds of model (paper §5): a causal LM trained **from scratch** on the task vocabulary (a GPT-NeoX of a
given width, or the shape of one of the book's shipped models: ``"nano-shape"``, ``"nano-mamba-shape"``), or a
**pretrained** causal LM (``"nano"``, ``"nano-mamba"``, ``"smollm2-135m"``, Pythia, …) whose input embedding and
output head are cut to the |V|+4 rows of the task, as the replication code cuts Pythia to 30 rows
(:mod:`accessibility_lib.experiments.copying_bases`).

Training: AdamW, linear warm-up then cosine decay to 10 % of the peak rate, gradient clipping,
batches of uniform random training-split strings with lengths uniform in
[``train_min_len``, ``train_max_len``], loss on the copy only; every ``check_every`` steps the exact
match (teacher forcing == greedy) on ``check_strings`` fresh training strings of the longest training
length is measured, and training stops after ``stop_checks`` consecutive checks at 100 % (one lucky
check is not enough: a 98 % model passes 64 strings one time in four) or at ``max_steps``.

Cache: a finished run is stored in a :class:`~accessibility_lib.ground.results.ResultStore` under namespace
``copying_train`` keyed by every field of :class:`TrainConfig` (ResultStore hashing); the weights go
beside the JSON entry as ``<hash>.safetensors`` (no pickle). The device is not part of the key.

Resume: with ``checkpoint_every`` set, the whole training state is written every that many steps into
``<hash>.ckpt/`` beside the entry (:mod:`accessibility_lib.experiments.copying_checkpoint`); a run that is
killed and started again with the same config continues from the last checkpoint and computes the same steps
an uninterrupted run would. The checkpoint is removed once the run is finished and stored.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from accessibility_lib.experiments.copying import CopyTask, encode_batch, sample_strings, teacher_forced_exact
from accessibility_lib.experiments.copying_bases import build_task_model, cut_vocabulary
from accessibility_lib.experiments.copying_checkpoint import (
    checkpoint_weights,
    load_checkpoint,
    remove_checkpoint,
    save_checkpoint,
)
from accessibility_lib.ground.checks import check_int, check_positive_real, check_real
from accessibility_lib.ground.results import ResultStore, default_store

__all__ = ["TrainConfig", "build_task_model", "cut_vocabulary", "train_copying", "checkpointed_model", "final_embeddings",
           "evaluate_run"]  # fmt: skip

_FORMAT = 1  # bump when the training code changes what a key produces


@dataclass(frozen=True)
class TrainConfig:
    """Every hyperparameter of one copying run (all of them enter the cache key).

    ``base``: ``"scratch"`` (GPT-NeoX with ``d_model``, ``n_layers``, ``n_heads``, ``d_ff`` (0 → 4·d_model),
    ``context`` tokens), ``"nano-shape"`` / ``"nano-mamba-shape"`` (the architecture of a shipped model, from
    scratch), or a pretrained model for :func:`~accessibility_lib.models.loading.load_model` (``"nano"``,
    ``"nano-mamba"``, ``"smollm2-135m"``, an HF id or folder), fine-tuned whole after cutting its embedding and
    head to the task vocabulary (width fields ignored except for ``"scratch"``). Lengths are in symbols, the
    context in tokens (an example of length n takes 2n + 3), ``lr`` is AdamW's peak rate.

    Raises:
        ValueError: a field out of range (named), ``d_model`` not a multiple of ``n_heads`` for ``"scratch"``, or
            a longest training string that does not fit the context.
    """

    alphabet_size: int = 26
    base: str = "scratch"
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 0
    context: int = 128
    train_min_len: int = 1
    train_max_len: int = 16
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.0
    warmup_steps: int = 100
    max_steps: int = 2000
    grad_clip: float = 1.0
    check_every: int = 100
    check_strings: int = 128
    stop_checks: int = 2
    seed: int = 0

    def __post_init__(self) -> None:
        task = CopyTask(self.alphabet_size)  # raises on alphabet_size < 2
        for name, lo in [
            ("d_model", 1),
            ("n_layers", 1),
            ("n_heads", 1),
            ("d_ff", 0),
            ("context", 5),
            ("train_min_len", 1),
            ("batch_size", 1),
            ("warmup_steps", 0),
            ("max_steps", 1),
            ("check_every", 1),
            ("check_strings", 1),
            ("stop_checks", 1),
            ("seed", 0),
        ]:
            check_int(name, getattr(self, name), minimum=lo)
        if self.base == "scratch" and self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of n_heads ({self.n_heads})")
        check_int("train_max_len", self.train_max_len, minimum=self.train_min_len)
        task.check_lengths("train_max_len", [self.train_max_len], self.context)
        check_positive_real("lr", self.lr)
        check_real("weight_decay", self.weight_decay, minimum=0.0)
        check_positive_real("grad_clip", self.grad_clip)

    def key(self) -> dict:
        """The cache key: every field plus the code format version."""
        return {**dataclasses.asdict(self), "format": _FORMAT}

    @classmethod
    def from_key(cls, key: dict) -> TrainConfig:
        """The config a :meth:`key` was made from (the format entry dropped).

        Raises:
            ValueError: if the key was made by another format of the training code (its results would differ).
        """
        if key.get("format") != _FORMAT:
            raise ValueError(f"copying key of format {key.get('format')!r}, this code makes format {_FORMAT}")
        return cls(**{k: v for k, v in key.items() if k != "format"})


def _lr_lambda(cfg: TrainConfig):
    def f(step: int) -> float:
        if step < cfg.warmup_steps:
            return (step + 1) / cfg.warmup_steps
        t = (step - cfg.warmup_steps) / max(1, cfg.max_steps - cfg.warmup_steps)
        return 0.1 + 0.9 * 0.5 * (1 + np.cos(np.pi * min(1.0, t)))

    return f


def _model_from_entry(value: dict, path: Path):
    from safetensors.torch import load_model
    from transformers import CONFIG_MAPPING, AutoModelForCausalLM

    conf = dict(value["model_config"])
    config = CONFIG_MAPPING[conf.pop("model_type")].from_dict(conf)
    model = AutoModelForCausalLM.from_config(config).float()
    load_model(model, str(path), strict=True)  # raises if the weights do not fit the model
    return model


def train_copying(
    cfg: TrainConfig,
    store: ResultStore | None = None,
    device: str = "cpu",
    base_model=None,
    tokenizer=None,
    force: bool = False,
    show_progress: bool = True,
    threads: int | None = 1,
    checkpoint_every: int | None = None,
    on_checkpoint=None,
):
    """Train (or load from the cache) a copying model. Returns ``(model, info)``.

    Args:
        cfg: every hyperparameter of the run (the cache key).
        store: the result store (default: :func:`~accessibility_lib.ground.results.default_store`).
        device: torch device of the training.
        base_model, tokenizer: an already-loaded pretrained base for ``cfg.base`` (optional).
        force: retrain even when the store holds the run.
        threads: CPU threads while training (None: torch's setting; 1 is fastest for small models, see
            ``copying.cpu_threads``).
        checkpoint_every: write the training state every that many steps, and resume from it when a run with
            this config was interrupted (None: no checkpoints; a stale checkpoint is then ignored).
        on_checkpoint: called after each checkpoint with ``{"step", "seconds", "loss", "check_step",
            "check_exact"}`` (lists so far), e.g. to publish a partial record of a long run.

    Returns:
        ``info``: ``steps`` run, ``seconds`` of training (all sessions), ``reached`` (100 % exact at
        ``train_max_len``), ``cached`` (loaded, not trained), ``sessions`` (one ``{"from_step", "to_step",
        "seconds"}`` per process that trained it: more than one when it was resumed), arrays ``loss`` (per step,
        nats/token), ``check_step``, ``check_exact`` (exact-match rate at ``train_max_len`` at each check).

    Raises:
        ValueError: a checkpoint of another run in this run's checkpoint folder; as :func:`build_task_model`.
    """
    from accessibility_lib.experiments.copying import cpu_threads

    if checkpoint_every is not None:
        check_int("checkpoint_every", checkpoint_every, minimum=1)
    with cpu_threads(threads):
        return _train(cfg, store, device, base_model, tokenizer, force, show_progress, checkpoint_every, on_checkpoint)


def _batch(cfg: TrainConfig, task: CopyTask, rng: np.random.Generator, device: str) -> dict:
    lens = rng.integers(cfg.train_min_len, cfg.train_max_len + 1, size=cfg.batch_size)
    strings = [s for n in np.unique(lens) for s in sample_strings(task, rng, int(n), int((lens == n).sum()), "train")]
    return {k: v.to(device) for k, v in encode_batch(task, strings).items()}


def _train(cfg, store, device, base_model, tokenizer, force, show_progress, checkpoint_every, on_checkpoint):
    from safetensors.torch import save_model

    from accessibility_lib.ground.progress import progress

    store = store if store is not None else default_store()
    key = cfg.key()
    weights = store._path("copying_train", key).with_suffix(".safetensors")
    ckpt = weights.with_suffix(".ckpt")
    entry = None if force else store.get("copying_train", key)
    if entry is not None and weights.exists():
        model = _model_from_entry(entry, weights).to(device).eval()
        return model, {**entry, "cached": True}

    task = CopyTask(cfg.alphabet_size)
    model = build_task_model(cfg, base_model, tokenizer).to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.98), weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, _lr_lambda(cfg))
    rngs = {"data": np.random.default_rng([cfg.seed, 0]), "check": np.random.default_rng([cfg.seed, 2])}
    saved = None
    if checkpoint_every is not None and not force:
        saved = load_checkpoint(ckpt, weights.stem, model, opt, sched, rngs)
    saved = saved or {"step": 0, "seconds": 0.0, "loss": [], "check_step": [], "check_exact": [], "sessions": []}
    losses, check_step, check_exact = list(saved["loss"]), list(saved["check_step"]), list(saved["check_exact"])
    start, reached = int(saved["step"]), False
    t0 = time.perf_counter()

    def elapsed() -> float:
        return float(saved["seconds"]) + time.perf_counter() - t0

    def sessions() -> list[dict]:
        return [*saved["sessions"], {"from_step": start, "to_step": len(losses), "seconds": time.perf_counter() - t0}]

    bar = (
        progress(total=cfg.max_steps, desc=f"copying train ({cfg.base}, n<={cfg.train_max_len})")
        if show_progress
        else None
    )
    if bar is not None and start:
        bar.update(start)
    for step in range(start, cfg.max_steps):
        batch = _batch(cfg, task, rngs["data"], device)
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits  # (B, T, |V|+4)
        loss = torch.nn.functional.cross_entropy(
            logits[:, :-1].reshape(-1, logits.shape[-1]), batch["labels"][:, 1:].reshape(-1), ignore_index=-100
        )
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        if bar is not None:
            bar.update(1)
            if hasattr(bar, "set_postfix"):
                bar.set_postfix(loss=f"{losses[-1]:.3f}", refresh=False)
        if (step + 1) % cfg.check_every == 0 or step + 1 == cfg.max_steps:
            model.eval()
            xs = sample_strings(task, rngs["check"], cfg.train_max_len, cfg.check_strings, "train")
            check_step.append(step + 1)
            check_exact.append(float(teacher_forced_exact(model, task, xs).mean()))
            model.train()
            if len(check_exact) >= cfg.stop_checks and min(check_exact[-cfg.stop_checks :]) == 1.0:
                reached = True
                break
        if checkpoint_every is not None and (step + 1) % checkpoint_every == 0 and step + 1 < cfg.max_steps:
            state = {"step": step + 1, "seconds": elapsed(), "loss": losses, "check_step": check_step,
                     "check_exact": check_exact}  # fmt: skip
            save_checkpoint(ckpt, weights.stem, model, opt, sched, {**state, "sessions": sessions()}, rngs)
            if on_checkpoint is not None:
                on_checkpoint(state)
    if bar is not None:
        bar.close()
    model.eval()
    info = {
        "steps": len(losses),
        "seconds": elapsed(),
        "reached": reached,
        "sessions": sessions(),
        "model_config": {**model.config.to_dict(), "model_type": model.config.model_type},
    }
    arrays = {"loss": np.array(losses), "check_step": np.array(check_step), "check_exact": np.array(check_exact)}
    weights.parent.mkdir(parents=True, exist_ok=True)
    tmp = weights.with_name(f".{weights.name}.{os.getpid()}.tmp")
    save_model(model, str(tmp))  # drops the duplicate of tied weights
    os.replace(tmp, weights)  # weights first, the JSON entry last: an entry is visible only once complete
    store.put("copying_train", key, info, arrays=arrays)
    remove_checkpoint(ckpt)
    return model, {**info, **arrays, "cached": False}


def checkpointed_model(cfg: TrainConfig, store: ResultStore | None = None, base_model=None, tokenizer=None):
    """The model of ``cfg``'s run as its last checkpoint holds it, while the run goes on: ``(model, state)``.

    Read-only (the training process is not disturbed). ``state`` has ``step``, ``seconds``, ``check_step``
    and ``check_exact`` (lists so far). Returns None when the run has no checkpoint (not started, or finished
    and stored: then :func:`train_copying` returns the final model).

    Raises:
        ValueError: as :func:`~accessibility_lib.experiments.copying_checkpoint.checkpoint_weights`.
    """
    store = store if store is not None else default_store()
    weights = store._path("copying_train", cfg.key()).with_suffix(".safetensors")
    model = build_task_model(cfg, base_model, tokenizer)
    state = checkpoint_weights(weights.with_suffix(".ckpt"), weights.stem, model)
    if state is None:
        return None
    return model.eval(), state


@torch.no_grad()
def final_embeddings(model, task: CopyTask, lengths, n_strings: int = 16, seed: int = 0) -> np.ndarray:
    """(N, d_model) last-layer embeddings after the final norm at copy positions of eval strings.

    Used to measure r (max ‖h‖₂) and r_∞ (max |h_i|) for the mean-field bound (Thm 4.9).
    """
    dev = next(model.parameters()).device
    out = []
    for n in task.check_lengths("lengths", lengths, getattr(model.config, "max_position_embeddings", None)):
        xs = sample_strings(task, np.random.default_rng([seed, 3, n]), n, n_strings, "eval")
        b = encode_batch(task, list(xs))
        h = model.base_model(input_ids=b["input_ids"].to(dev)).last_hidden_state  # (B, T, d)
        out.append(h[:, n + 1 : 2 * n + 2].reshape(-1, h.shape[-1]).cpu().numpy())
    return np.concatenate(out)


def evaluate_run(
    cfg: TrainConfig,
    model,
    lengths,
    n_strings: int = 50,
    seed: int = 0,
    store: ResultStore | None = None,
    batch_size: int = 64,
    threads: int | None = 1,
) -> dict:
    """:func:`~accessibility_lib.experiments.copying.evaluate_copying` of a trained run, cached under namespace
    ``copying_eval`` keyed by the run's key and the evaluation parameters (lengths, n_strings, seed)."""
    from accessibility_lib.experiments.copying import evaluate_copying

    store = store if store is not None else default_store()
    key = {"run": cfg.key(), "lengths": [int(n) for n in lengths], "n_strings": n_strings, "seed": seed}
    hit = store.get("copying_eval", key)
    if hit is not None:
        return hit
    res = evaluate_copying(
        model,
        CopyTask(cfg.alphabet_size),
        lengths,
        n_strings=n_strings,
        seed=seed,
        batch_size=batch_size,
        threads=threads,
    )
    store.put("copying_eval", key, {}, arrays=res)
    return res
