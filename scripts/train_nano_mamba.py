"""Train the book's shipped ``nano-mamba``: a small Mamba (state-space model) on the text ``nano`` was trained on.

The state-space counterpart of ``scripts/train_nano.py`` for chapter 7 (Remark 1.1 of the paper: the bound
holds for any architecture with a bounded internal representation and finite precision, state-space
models included). Everything that makes the comparison with ``nano`` like for like is shared with it:

- the same text, split and token streams (King James Bible chapters, chapter k held out iff k mod 20 = 10;
  the functions of :mod:`accessibility_lib.models.training`, shared with ``scripts/train_nano.py``);
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
swaps in :class:`accessibility_lib.models.mamba_scan.SelectiveScan` — the same recurrence
h_t = exp(A·Δ_t) ⊙ h_{t−1} + (Δ_t·u_t) ⊗ B_t, y_t = h_t·C_t, computed on one time slice at a time in
both directions with a hand-written backward pass (checked against autograd through Hugging Face's
reference by ``tests/unit/test_nano_mamba.py``, and by ``torch.autograd.gradcheck``). ``--scan mambapy``
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

import torch

from accessibility_lib.ground.paths import DATA_DIR, REPO_ROOT
from accessibility_lib.models import training as T
from accessibility_lib.models.nano_mamba import check_scan_agreement, make_mamba, use_scan

OUT = DATA_DIR / "nano_mamba"
NANO = DATA_DIR / "nano"
CKPT = REPO_ROOT / "runs" / "nano_mamba_ckpt"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    T.common_arguments(ap, layers=7, threads=1, ckpt_every=25)
    ap.add_argument("--state-size", type=int, default=4)
    ap.add_argument("--scan", default="loop", choices=["loop", "mambapy"], help="the scan used while training")
    args = ap.parse_args()
    if args.scan == "mambapy":
        try:
            import mambapy  # noqa: F401
        except ImportError:
            sys.exit("--scan mambapy needs the 'mambapy' package (pip install mambapy==1.2.0)")
    from transformers import AutoTokenizer

    torch.set_num_threads(args.threads)
    tok = AutoTokenizer.from_pretrained(NANO)  # nano's own tokenizer
    train_texts, held_texts = T.split_chapters(T.load_chapters())
    train_ids, held_ids = T.encode_docs(tok, train_texts), T.encode_docs(tok, held_texts)
    nano_log = json.loads((NANO / "train_log.json").read_text())
    if len(train_ids) != nano_log["tokens_train_stream"] or len(held_ids) != nano_log["tokens_heldout_stream"]:
        sys.exit(f"token streams differ from nano's ({len(train_ids)}, {len(held_ids)}): not the same data")
    model = make_mamba(len(tok), args.d_model, args.layers, args.state_size, args.seed, use_mambapy=False)
    agree = check_scan_agreement(model, args.scan)
    print(f"params {sum(p.numel() for p in model.parameters()):,}; {args.scan} vs reference scan max |Δlogit| "
          f"{agree:.2e}", flush=True)  # fmt: skip
    opt = T.adamw(model, args.lr, no_decay_names=("A_log", "D"))  # as the reference Mamba code
    start, seconds = T.train_lm(model, opt, train_ids, args, CKPT, use_cache=False)
    if args.bench:
        return
    use_scan(model, "reference")  # evaluate with the reference sequential scan, as every user of the model will
    t_eval = time.time()
    nll, uni, n_eval = T.heldout_eval(model, held_ids, args.ctx, len(tok), train_ids)
    print(f"heldout nll {nll:.4f} ppl {math.exp(nll):.2f}; unigram nll {uni:.4f} ppl {math.exp(uni):.2f}", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(OUT, safe_serialization=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(NANO / name, OUT / name)
    log_lines = [json.loads(s) for s in (CKPT / "log.jsonl").read_text().splitlines() if s.strip()]
    summary = T.run_summary(args, model, train_ids, held_ids, start, seconds, nll, uni, n_eval)
    summary.update(
        train_seconds_all_runs=round(_all_runs_seconds(log_lines), 1),
        heldout_eval_seconds=round(time.time() - t_eval, 1),
        scan_in_training=args.scan,
        scan_in_evaluation="transformers reference sequential scan (use_mambapy=False)",
        threads=args.threads,
    )
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
