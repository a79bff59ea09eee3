"""A tiny random-weight GPT-NeoX handle, for tests and for the support chapter's explicit ``random-tiny`` choice."""

from __future__ import annotations

import torch


def random_tiny_handle(seed: int = 0, *, d_model: int = 64, d_vocab: int = 512, n_layers: int = 2, n_ctx: int = 256):
    """A random-weight GPT-NeoX (default d = 64, |V| = 512, 2 layers, 4 heads) wrapped as a model handle.

    Stands in when no trained model is available, so the chapter always runs; its numbers describe an
    untrained network, and the chapter says so. The sizes are arguments so benchmarks can build a wider
    one (MLP width 4·d).
    """
    import transformers

    from accessibility_lib.models.handle import wrap_model

    cfg = transformers.GPTNeoXConfig(
        vocab_size=d_vocab,
        hidden_size=d_model,
        num_hidden_layers=n_layers,
        num_attention_heads=4,
        intermediate_size=4 * d_model,
        max_position_embeddings=n_ctx,
    )
    torch.manual_seed(seed)
    model = transformers.GPTNeoXForCausalLM(cfg).eval()

    class _Tok:
        all_special_ids = [0]
        pad_token_id = 0
        pad_token = "<pad>"

        def __len__(self):
            return d_vocab

    name = "random-tiny" if (d_model, d_vocab, n_layers) == (64, 512, 2) else f"random-neox-{d_model}"
    return wrap_model(model, _Tok(), name=name, verify=False)
