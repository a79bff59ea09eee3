"""Task models for copying (x|x) and their training, cached by every hyperparameter.

Two kinds of model (paper §5, §6): a causal LM trained **from scratch** on the task vocabulary (a
GPT-NeoX of a given width, or the shape of the book's ``nano`` model: ``"nano-shape"``), or a
**pretrained** causal LM (``"nano"``, Pythia, …)
whose input embedding and output head are cut to the |V|+4 rows of the task (the replication code
cuts Pythia to 30 rows: a–z plus start, separator, end, pad). Rows are the tokenizer's single-token
ids of the symbols (a–z, ``^``, ``|``, ``$``, `` ``) when it has them, else the first |V|+4 rows.

Training: AdamW, linear warm-up then cosine decay to 10 % of the peak rate, gradient clipping,
batches of uniform random training-split strings with lengths uniform in
[``train_min_len``, ``train_max_len``], loss on the copy only; every ``check_every`` steps the exact
match (teacher forcing == greedy) on ``check_strings`` fresh training strings of the longest training
length is measured, and training stops after ``stop_checks`` consecutive checks at 100 % (one lucky
check is not enough: a 98 % model passes 64 strings one time in four) or at ``max_steps``.

Cache: a finished run is stored in a :class:`~accessibility_lib.ground.results.ResultStore` under namespace
``copying_train`` keyed by every field of :class:`TrainConfig` (ResultStore hashing); the weights go
beside the JSON entry as ``<hash>.safetensors`` (no pickle). The device is not part of the key.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from accessibility_lib.experiments.copying import CopyTask, encode_batch, sample_strings, teacher_forced_exact
from accessibility_lib.ground.checks import check_int, check_positive_real, check_real
from accessibility_lib.ground.paths import DATA_DIR
from accessibility_lib.ground.results import ResultStore, default_store

__all__ = ["TrainConfig", "build_task_model", "cut_vocabulary", "train_copying", "final_embeddings", "evaluate_run"]

_FORMAT = 1  # bump when the training code changes what a key produces
_NANO_CONFIG = DATA_DIR / "nano" / "config.json"


@dataclass(frozen=True)
class TrainConfig:
    """Every hyperparameter of one copying run (all of them enter the cache key).

    ``base``: ``"scratch"`` (GPT-NeoX with ``d_model``, ``n_layers``, ``n_heads``, ``d_ff`` (0 → 4·d_model),
    ``context`` tokens), ``"nano-shape"`` (the architecture of the book's nano model,
    accessibility_lib/data/nano/config.json, from scratch, with ``context``), or a pretrained model for
    :func:`~accessibility_lib.models.loading.load_model` (``"nano"``, an HF id or folder), fine-tuned whole after
    cutting its embedding and head to the task vocabulary (width fields ignored).
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


def cut_vocabulary(model, rows: list[int]) -> None:
    """Keep only ``rows`` of the input embedding and output head (in place, tied weights stay tied).

    The embedding module keeps its class (Gemma's √d scaling survives); ``config.vocab_size`` becomes len(rows).
    """
    emb, head = model.get_input_embeddings(), model.get_output_embeddings()
    tied = head is not None and head.weight is emb.weight
    idx = torch.as_tensor(rows, dtype=torch.long)
    emb.weight = torch.nn.Parameter(emb.weight.data[idx].clone())
    emb.num_embeddings, emb.padding_idx = len(rows), None
    if tied:
        head.weight = emb.weight
    else:
        head.weight = torch.nn.Parameter(head.weight.data[idx].clone())
    if getattr(head, "bias", None) is not None:
        head.bias = torch.nn.Parameter(head.bias.data[idx].clone())
    head.out_features = len(rows)
    model.config.vocab_size = len(rows)
    if hasattr(model.config, "get_text_config"):
        model.config.get_text_config().vocab_size = len(rows)


def _task_rows(task: CopyTask, tokenizer, vocab: int) -> list[int]:
    """Rows of a pretrained vocabulary for the task ids: single-token symbols if the tokenizer has them."""
    if tokenizer is not None and task.alphabet_size <= 26:
        texts = [chr(97 + i) for i in range(task.alphabet_size)] + ["^", "|", "$", " "]
        ids = [tokenizer.encode(t, add_special_tokens=False) for t in texts]
        rows = [i[0] for i in ids if len(i) == 1]
        if len(rows) == len(texts) and len(set(rows)) == len(rows) and max(rows) < vocab:
            return rows
    if vocab < task.d_vocab:
        raise ValueError(f"the pretrained vocabulary has {vocab} rows, fewer than the task's {task.d_vocab}")
    return list(range(task.d_vocab))


def _scratch_config(cfg: TrainConfig, task: CopyTask):
    from transformers import GPTNeoXConfig

    if cfg.base == "nano-shape":
        if not _NANO_CONFIG.exists():
            raise ValueError(f"base='nano-shape' needs {_NANO_CONFIG} (the nano model); use base='scratch'")
        d = json.loads(_NANO_CONFIG.read_text())
        d.update(
            vocab_size=task.d_vocab,
            max_position_embeddings=cfg.context,
            bos_token_id=task.start,
            eos_token_id=task.end,
            pad_token_id=task.pad,
        )
        d = {k: v for k, v in d.items() if k not in ("architectures", "transformers_version", "torch_dtype", "dtype")}
        return GPTNeoXConfig(**d)
    return GPTNeoXConfig(
        vocab_size=task.d_vocab,
        hidden_size=cfg.d_model,
        num_hidden_layers=cfg.n_layers,
        num_attention_heads=cfg.n_heads,
        intermediate_size=cfg.d_ff or 4 * cfg.d_model,
        max_position_embeddings=cfg.context,
        rotary_pct=1.0,
        use_parallel_residual=True,
        bos_token_id=task.start,
        eos_token_id=task.end,
        pad_token_id=task.pad,
        hidden_dropout=0.0,
        attention_dropout=0.0,
        tie_word_embeddings=False,
    )


def build_task_model(cfg: TrainConfig, base_model=None, tokenizer=None):
    """A fresh causal LM over the task vocabulary (|V|+4 ids), float32, on CPU, seeded by ``cfg.seed``.

    Args:
        cfg: the run's hyperparameters.
        base_model: optional already-loaded pretrained model (used instead of loading ``cfg.base``).
        tokenizer: its tokenizer, to pick the symbols' own rows (optional).
    """
    from transformers import GPTNeoXForCausalLM

    task = CopyTask(cfg.alphabet_size)
    torch.manual_seed(cfg.seed)
    if cfg.base in ("scratch", "nano-shape") and base_model is None:
        return GPTNeoXForCausalLM(_scratch_config(cfg, task)).float()
    if base_model is None:
        try:
            from accessibility_lib.models.loading import load_model  # the book's model handle (issue 3)

            handle = load_model(cfg.base)
            base_model, tokenizer = handle.model, handle.tokenizer
        except ImportError:
            from transformers import AutoModelForCausalLM, AutoTokenizer

            base_model = AutoModelForCausalLM.from_pretrained(cfg.base, dtype=torch.float32)
            try:
                tokenizer = AutoTokenizer.from_pretrained(cfg.base)
            except (OSError, ValueError):
                tokenizer = None
    context = getattr(base_model.config, "max_position_embeddings", None)
    if context is not None and context < cfg.context:
        raise ValueError(f"context {cfg.context} exceeds the base model's {context} positions")
    cut_vocabulary(base_model, _task_rows(task, tokenizer, base_model.get_input_embeddings().weight.shape[0]))
    base_model.config.max_position_embeddings = cfg.context  # evaluation checks lengths against this
    return base_model.float().requires_grad_(True)  # load_model hands out frozen models: fine-tune them all


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
):
    """Train (or load from the cache) a copying model. Returns ``(model, info)``.

    ``info``: ``steps`` run, ``seconds`` of training, ``reached`` (100 % exact at ``train_max_len``),
    ``cached`` (loaded, not trained), arrays ``loss`` (per step, nats/token), ``check_step``,
    ``check_exact`` (exact-match rate at ``train_max_len`` at each check). ``threads``: CPU threads
    while training (None: torch's setting; 1 is fastest for small models, see ``copying.cpu_threads``).
    """
    from accessibility_lib.experiments.copying import cpu_threads

    with cpu_threads(threads):
        return _train(cfg, store, device, base_model, tokenizer, force, show_progress)


def _train(cfg, store, device, base_model, tokenizer, force, show_progress):
    from safetensors.torch import save_model

    from accessibility_lib.ground.progress import progress

    store = store if store is not None else default_store()
    key = cfg.key()
    weights = store._path("copying_train", key).with_suffix(".safetensors")
    entry = None if force else store.get("copying_train", key)
    if entry is not None and weights.exists():
        model = _model_from_entry(entry, weights).to(device).eval()
        return model, {**entry, "cached": True}

    task = CopyTask(cfg.alphabet_size)
    model = build_task_model(cfg, base_model, tokenizer).to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.98), weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, _lr_lambda(cfg))
    rng, check_rng = np.random.default_rng([cfg.seed, 0]), np.random.default_rng([cfg.seed, 2])
    losses, check_step, check_exact, reached = [], [], [], False
    t0 = time.perf_counter()
    bar = (
        progress(total=cfg.max_steps, desc=f"copying train (d={cfg.d_model}, n<={cfg.train_max_len})")
        if show_progress
        else None
    )
    for step in range(cfg.max_steps):
        lens = rng.integers(cfg.train_min_len, cfg.train_max_len + 1, size=cfg.batch_size)
        strings = [
            s for n in np.unique(lens) for s in sample_strings(task, rng, int(n), int((lens == n).sum()), "train")
        ]
        batch = {k: v.to(device) for k, v in encode_batch(task, strings).items()}
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
            xs = sample_strings(task, check_rng, cfg.train_max_len, cfg.check_strings, "train")
            check_step.append(step + 1)
            check_exact.append(float(teacher_forced_exact(model, task, xs).mean()))
            model.train()
            if len(check_exact) >= cfg.stop_checks and min(check_exact[-cfg.stop_checks :]) == 1.0:
                reached = True
                break
    if bar is not None:
        bar.close()
    seconds = time.perf_counter() - t0
    model.eval()
    info = {
        "steps": len(losses),
        "seconds": seconds,
        "reached": reached,
        "model_config": {**model.config.to_dict(), "model_type": model.config.model_type},
    }
    arrays = {"loss": np.array(losses), "check_step": np.array(check_step), "check_exact": np.array(check_exact)}
    weights.parent.mkdir(parents=True, exist_ok=True)
    tmp = weights.with_name(f".{weights.name}.{os.getpid()}.tmp")
    save_model(model, str(tmp))  # drops the duplicate of tied weights
    os.replace(tmp, weights)  # weights first, the JSON entry last: an entry is visible only once complete
    store.put("copying_train", key, info, arrays=arrays)
    return model, {**info, **arrays, "cached": False}


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
