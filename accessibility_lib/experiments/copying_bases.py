"""The models a copying run starts from: fresh task models, or pretrained bases cut to the task's rows.

Bases (the ``base`` field of :class:`~accessibility_lib.experiments.copying_model.TrainConfig`):

- ``"scratch"``: a GPT-NeoX of the given width and depth (rotary positions), random weights;
- ``"nano-shape"``: the architecture of the book's ``nano`` transformer (accessibility_lib/data/nano/config.json),
  random weights: nano's own shape trained from scratch, the control for fine-tuning ``"nano"``;
- ``"nano-mamba-shape"``: the same for the book's state-space model ``nano-mamba``;
- any other name: a pretrained causal LM for :func:`~accessibility_lib.models.loading.load_model` (``"nano"``,
  ``"nano-mamba"``, ``"smollm2-135m"``, a hub id or folder), whose input embedding and output head are cut to
  the |V|+4 rows of the task, as the replication code cuts Pythia to 30 rows (paper §5). Rows are the
  tokenizer's single-token ids of the symbols (a–z, ``^``, ``|``, ``$``, `` ``) when it has them, else the
  first |V|+4 rows.
"""

from __future__ import annotations

import json

import torch

from accessibility_lib.experiments.copying import CopyTask
from accessibility_lib.ground.paths import DATA_DIR

__all__ = ["SCRATCH_BASES", "cut_vocabulary", "build_task_model"]

#: Bases trained from random weights (everything else is loaded pretrained and fine-tuned).
SCRATCH_BASES = ("scratch", "nano-shape", "nano-mamba-shape")
_SHAPES = {"nano-shape": DATA_DIR / "nano" / "config.json", "nano-mamba-shape": DATA_DIR / "nano_mamba" / "config.json"}


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


def _scratch_config(cfg, task: CopyTask):
    from transformers import GPTNeoXConfig, MambaConfig

    if cfg.base in _SHAPES:
        path = _SHAPES[cfg.base]
        if not path.exists():
            raise ValueError(f"base={cfg.base!r} needs {path} (the shipped model's config); use base='scratch'")
        d = json.loads(path.read_text())
        d.update(vocab_size=task.d_vocab, bos_token_id=task.start, eos_token_id=task.end, pad_token_id=task.pad)
        d = {k: v for k, v in d.items() if k not in ("architectures", "transformers_version", "torch_dtype", "dtype")}
        if d.pop("model_type") == "mamba":  # no positions: the context is only a length limit of the task
            return MambaConfig(**d)
        return GPTNeoXConfig(**{**d, "max_position_embeddings": cfg.context})
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


def build_task_model(cfg, base_model=None, tokenizer=None):
    """A fresh causal LM over the task vocabulary (|V|+4 ids), float32, on CPU, seeded by ``cfg.seed``.

    Args:
        cfg: the run's :class:`~accessibility_lib.experiments.copying_model.TrainConfig`.
        base_model: optional already-loaded pretrained model (used instead of loading ``cfg.base``).
        tokenizer: its tokenizer, to pick the symbols' own rows (optional).

    Raises:
        ValueError: a shape base whose shipped config is missing, a context beyond the base model's positions, a
            pretrained vocabulary smaller than the task's; ``ModelNotAvailableError`` (a ValueError) for a base
            that cannot be loaded.
    """
    from transformers import AutoModelForCausalLM

    task = CopyTask(cfg.alphabet_size)
    torch.manual_seed(cfg.seed)
    if cfg.base in SCRATCH_BASES and base_model is None:
        return AutoModelForCausalLM.from_config(_scratch_config(cfg, task)).float()
    if base_model is None:
        from accessibility_lib.models.loading import load_model  # raises ModelNotAvailableError for unknown names

        handle = load_model(cfg.base)
        base_model, tokenizer = handle.model, handle.tokenizer
    context = getattr(base_model.config, "max_position_embeddings", None)
    if context is not None and context < cfg.context:
        raise ValueError(f"context {cfg.context} exceeds the base model's {context} positions")
    cut_vocabulary(base_model, _task_rows(task, tokenizer, base_model.get_input_embeddings().weight.shape[0]))
    base_model.config.max_position_embeddings = cfg.context  # evaluation checks lengths against this
    base_model.config.pretrained_positions = context  # what pretraining saw: lengths beyond cfg.context can be tried
    return base_model.float().requires_grad_(True)  # load_model hands out frozen models: fine-tune them all
