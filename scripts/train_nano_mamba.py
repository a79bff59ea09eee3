"""Train the book's shipped ``nano-mamba``: a small Mamba (state-space model) on the text ``nano`` was trained on.

The state-space counterpart of ``scripts/train_nano.py`` for chapter 7 (Remark 1.1 of the paper: the bound
holds for any architecture with a bounded internal representation and finite precision, state-space
models included). Everything that makes the comparison with ``nano`` like for like is shared with it:

- the same text, split and token streams (King James Bible chapters, chapter k held out iff k mod 20 = 10;
  the functions of ``scripts/train_nano.py`` are imported, not copied);
- **nano's tokenizer itself** (loaded from ``accessibility_lib/data/nano/``, not retrained);
- the same token budget (1,500 steps × 16 windows × 256 tokens = 6,144,000 tokens), the same batches
  (the batch of step s is drawn from a generator seeded with ``seed * 1000003 + s``), the same optimiser
  (AdamW, betas (0.9, 0.95), lr 2e-3, 100 warm-up steps, cosine decay to 2e-4, gradient clipping 1.0,
  weight decay 0.1 on matrices) — except that Mamba's ``A_log`` and ``D`` get no weight decay, as in the
  reference Mamba code (decay would pull every state's decay rate towards one value);
- the same width d = 128 (so the bounds, which depend on d, compare like for like), untied embedding
  and unembedding (as nano's) and a similar parameter count (1.80 M against nano's 1.84 M).

Architecture: ``transformers.MambaForCausalLM`` (Hugging Face's implementation; no custom kernels):
7 Mamba blocks, d_model 128, expand 2 (inner width 256), SSM state size 4, conv kernel 4, RMSNorm.
The state size is 4 instead of Mamba's usual 16 to make training affordable on 2 shared CPU cores
(the selective scan's cost grows with it; the parameter count hardly does).

Speed: Hugging Face's reference selective scan (the path without custom kernels) indexes one time step
at a time out of full (batch, inner, length, state) tensors, and its backward pass then writes a full-size
gradient per time step: quadratic in the length, about 150 s a step on this CPU. Training therefore
swaps in :class:`SelectiveScan` below — the same recurrence
h_t = exp(A·Δ_t) ⊙ h_{t−1} + (Δ_t·u_t) ⊗ B_t, y_t = h_t·C_t, computed on one time slice at a time in
both directions with a hand-written backward pass (checked against autograd through Hugging Face's
reference by ``tests/test_nano_mamba.py``, and by ``torch.autograd.gradcheck``). ``--scan mambapy``
uses the pure-PyTorch parallel scan of the ``mambapy`` package instead (Hugging Face's ``use_mambapy``
option; not a dependency of the book). The shipped config sets ``use_mambapy = false`` and the book never
patches the scan, so inference everywhere (chapters, tests) runs Hugging Face's reference scan; the
three agree to float rounding (checked before training starts).

Usage (the command recorded in the model card)::

    nice -n 10 .venv/bin/python scripts/train_nano_mamba.py --seed 0 --steps 1500 --warmup 100 --threads 1

A killed run resumes from its last checkpoint (``runs/nano_mamba_ckpt/``, git-ignored) with ``--resume``.
Writes ``accessibility_lib/data/nano_mamba/`` (config, fp32 safetensors, nano's tokenizer files,
``train_log.json``); ``MODEL_CARD.md`` there is written by hand from the log.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import train_nano as TN  # noqa: E402  (the shared data pipeline, optimiser schedule and evaluation)

OUT = ROOT / "accessibility_lib" / "data" / "nano_mamba"
NANO = ROOT / "accessibility_lib" / "data" / "nano"
TN.CKPT = ROOT / "runs" / "nano_mamba_ckpt"  # TN.save_ckpt / load_ckpt read this global


class SelectiveScan(torch.autograd.Function):
    """Mamba's selective scan, one time slice at a time, with a hand-written backward pass.

    h_t = exp(A·Δ_t) ⊙ h_{t−1} + (Δ_t·u_t) ⊗ B_t,  y_t = Σ_n h_t[:, :, n]·C_t[:, n]  (h_0 = 0).

    Shapes: Δ, u (b, I, L); A (I, N); B, C (b, L, N). Returns y (b, I, L) and the last state (b, I, N).
    Saves the states (L, b, I, N) once; every other tensor of the loops is a (b, I, N) slice.
    """

    @staticmethod
    def forward(ctx, dt, u, A, Bm, Cm):
        b, n_inner, L = dt.shape
        x = dt * u  # (b, I, L)
        h = torch.zeros(b, n_inner, A.shape[1], dtype=dt.dtype, device=dt.device)
        H = torch.empty(L, *h.shape, dtype=dt.dtype, device=dt.device)  # (L, b, I, N)
        ys = torch.empty(L, b, n_inner, dtype=dt.dtype, device=dt.device)
        dtT, xT, BT, CT = dt.permute(2, 0, 1), x.permute(2, 0, 1), Bm.transpose(0, 1), Cm.transpose(0, 1)
        for t in range(L):
            h = torch.exp(A * dtT[t][:, :, None]) * h + xT[t][:, :, None] * BT[t][:, None, :]
            H[t] = h
            ys[t] = torch.bmm(h, CT[t][:, :, None])[:, :, 0]
        ctx.save_for_backward(dt, u, A, Bm, Cm, H)
        return ys.permute(1, 2, 0), h

    @staticmethod
    def backward(ctx, gy, gh_last):
        dt, u, A, Bm, Cm, H = ctx.saved_tensors
        b, n_inner, L = dt.shape
        x = dt * u
        dtT, xT, BT, CT, gyT = (dt.permute(2, 0, 1), x.permute(2, 0, 1), Bm.transpose(0, 1), Cm.transpose(0, 1),
                                gy.permute(2, 0, 1))  # fmt: skip
        gh = gh_last.clone() if gh_last is not None else torch.zeros_like(H[0])
        g_dt, g_x = torch.empty_like(dtT), torch.empty_like(dtT)  # (L, b, I)
        g_B, g_C = torch.empty_like(BT), torch.empty_like(CT)  # (L, b, N)
        g_A = torch.zeros_like(A)
        zero = torch.zeros_like(H[0])
        for t in range(L - 1, -1, -1):
            gh = gh + gyT[t][:, :, None] * CT[t][:, None, :]  # dL/dh_t
            g_C[t] = torch.bmm(gyT[t][:, None, :], H[t])[:, 0]
            g_B[t] = torch.bmm(xT[t][:, None, :], gh)[:, 0]
            g_x[t] = torch.bmm(gh, BT[t][:, :, None])[:, :, 0]
            dA = torch.exp(A * dtT[t][:, :, None])
            tmp = gh * (H[t - 1] if t > 0 else zero) * dA  # dL/d(A·Δ_t), (b, I, N)
            g_dt[t] = (tmp * A).sum(-1)
            g_A += (tmp * dtT[t][:, :, None]).sum(0)
            gh = gh * dA  # dL/dh_{t−1}
        g_x = g_x.permute(1, 2, 0)
        return g_dt.permute(1, 2, 0) + g_x * u, g_x * dt, g_A, g_B.transpose(0, 1), g_C.transpose(0, 1)


def selective_scan(hidden_states, dt, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                   return_last_state=False, **kwargs):  # fmt: skip
    """Drop-in for ``transformers.models.mamba.modeling_mamba.mamba_selective_scan`` (same arguments:
    hidden_states, dt (b, I, L); A (I, N); B, C (b, N, L)), computed by :class:`SelectiveScan`."""
    import torch.nn.functional as F

    if delta_bias is not None:
        dt = dt + delta_bias.to(dt.dtype)[..., None]
    if delta_softplus:
        dt = F.softplus(dt)
    f = torch.promote_types(dt.dtype, torch.float32)
    y, last = SelectiveScan.apply(dt.to(f), hidden_states.to(f), A.to(f), B.transpose(1, 2).to(f),
                                  C.transpose(1, 2).to(f))  # fmt: skip
    y = y.to(hidden_states.dtype)
    if D is not None:
        y = y + hidden_states * D[None, :, None]
    if z is not None:
        y = y * F.silu(z)
    return (y, last) if return_last_state else y


def use_scan(model, scan: str) -> None:
    """Select the scan used while training: ``"loop"`` (:func:`selective_scan`), ``"mambapy"`` or ``"reference"``."""
    import transformers.models.mamba.modeling_mamba as MM

    if not hasattr(MM, "_reference_selective_scan"):
        MM._reference_selective_scan = MM.mamba_selective_scan
    MM.mamba_selective_scan = selective_scan if scan == "loop" else MM._reference_selective_scan
    set_scan(model, scan == "mambapy")


def make_mamba(vocab_size: int, d_model: int, n_layers: int, state_size: int, seed: int, use_mambapy: bool):
    from transformers import MambaConfig, MambaForCausalLM

    cfg = MambaConfig(
        vocab_size=vocab_size,
        hidden_size=d_model,
        state_size=state_size,
        num_hidden_layers=n_layers,
        expand=2,
        conv_kernel=4,
        use_bias=False,
        use_conv_bias=True,
        tie_word_embeddings=False,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=1,
        use_mambapy=use_mambapy,
    )
    torch.manual_seed(seed)
    return MambaForCausalLM(cfg)


def check_scan_agreement(model, scan: str) -> float:
    """Max |logit difference| between the training scan and Hugging Face's reference sequential scan."""
    x = torch.arange(40, dtype=torch.int64)[None] % model.config.vocab_size
    model.eval()
    with torch.no_grad():
        use_scan(model, "reference")
        ref = model(input_ids=x, use_cache=False).logits
        use_scan(model, scan)
        got = model(input_ids=x, use_cache=False).logits
    model.train()
    return float((ref - got).abs().max())


def set_scan(model, use_mambapy: bool) -> None:
    model.config.use_mambapy = use_mambapy
    for layer in model.backbone.layers:
        layer.mixer.use_mambapy = use_mambapy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--layers", type=int, default=7)
    ap.add_argument("--state-size", type=int, default=4)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ckpt-every", type=int, default=25)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--bench", type=int, default=0, help="only time this many steps and exit")
    ap.add_argument("--scan", default="loop", choices=["loop", "mambapy"], help="the scan used while training")
    args = ap.parse_args()

    if args.scan == "mambapy":
        try:
            import mambapy  # noqa: F401
        except ImportError:
            sys.exit("--scan mambapy needs the 'mambapy' package (pip install mambapy==1.2.0)")
    from transformers import AutoTokenizer

    torch.set_num_threads(args.threads)
    t0 = time.time()
    tok = AutoTokenizer.from_pretrained(NANO)  # nano's own tokenizer
    chapters = TN.load_chapters()
    train_texts, held_texts = TN.split_chapters(chapters)
    train_ids = TN.encode_docs(tok, train_texts)
    held_ids = TN.encode_docs(tok, held_texts)
    nano_log = json.loads((NANO / "train_log.json").read_text())
    if len(train_ids) != nano_log["tokens_train_stream"] or len(held_ids) != nano_log["tokens_heldout_stream"]:
        sys.exit(f"token streams differ from nano's ({len(train_ids)}, {len(held_ids)}): not the same data")
    print(
        f"chapters train={len(train_texts)} heldout={len(held_texts)}; tokens train={len(train_ids)} "
        f"heldout={len(held_ids)}; vocab={len(tok)}; prep {time.time() - t0:.1f}s",
        flush=True,
    )

    model = make_mamba(len(tok), args.d_model, args.layers, args.state_size, args.seed, use_mambapy=False)
    n_params = sum(p.numel() for p in model.parameters())
    print(
        f"params {n_params:,}; {args.scan} vs reference scan max |Δlogit| {check_scan_agreement(model, args.scan):.2e}",
        flush=True,
    )
    no_decay_names = ("A_log", "D")
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and n.split(".")[-1] not in no_decay_names]
    no_decay = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and n.split(".")[-1] not in no_decay_names)]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr,
        betas=(0.9, 0.95),
        eps=1e-8,
    )
    start = 0
    if args.resume and (TN.CKPT / "ckpt.json").exists():
        start = TN.load_ckpt(model, opt)
        print(f"resumed at step {start}", flush=True)
    TN.CKPT.mkdir(parents=True, exist_ok=True)
    log_path = TN.CKPT / "log.jsonl"
    train_t = torch.from_numpy(train_ids)
    n_start = len(train_ids) - args.ctx - 1
    model.train()
    t_train = time.time()
    for step in range(start, args.steps if not args.bench else args.bench):
        g = torch.Generator().manual_seed(args.seed * 1_000_003 + step)  # the same batches as nano's
        offs = torch.randint(0, n_start, (args.batch,), generator=g)
        x = torch.stack([train_t[o : o + args.ctx + 1] for o in offs.tolist()])  # (B, ctx+1)
        for group in opt.param_groups:
            group["lr"] = TN.lr_at(step, args.steps, args.lr, args.warmup)
        logits = model(input_ids=x[:, :-1], use_cache=False).logits  # (B, ctx, V)
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
            TN.save_ckpt(model, opt, step + 1, args)
    if args.bench:
        print(f"bench: {(time.time() - t_train) / args.bench:.2f} s/step", flush=True)
        return
    train_seconds = time.time() - t_train
    TN.save_ckpt(model, opt, args.steps, args)

    use_scan(model, "reference")  # evaluate with the reference sequential scan, as every user of the model will
    t_eval = time.time()
    nll, uni, n_eval = TN.heldout_eval(model, held_ids, args.ctx, len(tok), train_ids)
    print(f"heldout nll {nll:.4f} ppl {math.exp(nll):.2f}; unigram nll {uni:.4f} ppl {math.exp(uni):.2f}", flush=True)

    OUT.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(OUT, safe_serialization=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(NANO / name, OUT / name)
    log_lines = [json.loads(s) for s in log_path.read_text().splitlines() if s.strip()]
    summary = {
        "seed": args.seed,
        "args": vars(args),
        "n_params": n_params,
        "tokens_train_stream": int(len(train_ids)),
        "tokens_heldout_stream": int(len(held_ids)),
        "tokens_seen": int(args.steps * args.batch * args.ctx),
        "train_seconds_last_run": round(train_seconds, 1),
        "train_seconds_all_runs": round(_all_runs_seconds(log_lines), 1),
        "resumed_from_step": start,
        "heldout_nll_nats": nll,
        "heldout_ppl": math.exp(nll),
        "heldout_tokens_scored": n_eval,
        "heldout_eval_seconds": round(time.time() - t_eval, 1),
        "unigram_nll_nats": uni,
        "unigram_ppl": math.exp(uni),
        "scan_in_training": args.scan,
        "scan_in_evaluation": "transformers reference sequential scan (use_mambapy=False)",
        "torch": torch.__version__,
        "threads": args.threads,
    }
    (OUT / "train_log.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2), flush=True)


def _all_runs_seconds(log_lines: list[dict]) -> float:
    """Training seconds summed over invocations (a resumed run restarts its clock at 0): the elapsed time of
    each invocation's last logged step."""
    total, prev = 0.0, None
    for r in log_lines:
        if prev is not None and r["elapsed_s"] < prev["elapsed_s"]:  # a new invocation began
            total += prev["elapsed_s"]
        prev = r
    return total + (prev["elapsed_s"] if prev else 0.0)


if __name__ == "__main__":
    main()
