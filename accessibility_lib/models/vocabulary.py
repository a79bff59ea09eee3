"""The vocabulary a random target may draw from: every token id a tokenizer can produce, special and padding rows left out.

Random-token targets (chapter 3) and the cell statistics (chapter 5) must only use ids that are real tokens: a
model's unembedding ``W_U`` often has more rows than its tokenizer has tokens (padding to a multiple of 64 or
128), and special tokens (BOS, EOS, pad) are never text.
"""

from __future__ import annotations

import numpy as np

from accessibility_lib.ground.checks import check_int


def allowed_token_ids(tokenizer_or_vocab, d_vocab: int | None = None) -> np.ndarray:
    """Sorted token ids a random target may use: int64 array ``(k,)``.

    For an int ``|V|``: all ids ``0 .. |V|-1`` (below ``d_vocab`` when given). For a Hugging Face
    tokenizer: ids below ``len(tokenizer)`` (and below ``d_vocab``, the number of rows of ``W_U``,
    when given) minus ``tokenizer.all_special_ids`` and the pad id. Rows of ``W_U`` at ids
    ≥ ``len(tokenizer)`` are padding (e.g. Pythia pads 50277 tokens to 50304 rows) and never used.

    Raises:
        ValueError: a non-positive vocabulary size or ``d_vocab``, or no id left.
    """
    if d_vocab is not None:
        d_vocab = check_int("d_vocab", d_vocab, minimum=1)
    if isinstance(tokenizer_or_vocab, (int, np.integer)) and not isinstance(tokenizer_or_vocab, bool):
        size = check_int("tokenizer_or_vocab", tokenizer_or_vocab, minimum=1)
        excluded: set[int] = set()
    elif hasattr(tokenizer_or_vocab, "all_special_ids") and hasattr(tokenizer_or_vocab, "__len__"):
        size = len(tokenizer_or_vocab)
        excluded = set(int(i) for i in tokenizer_or_vocab.all_special_ids)
        if getattr(tokenizer_or_vocab, "pad_token_id", None) is not None:
            excluded.add(int(tokenizer_or_vocab.pad_token_id))
    else:
        raise ValueError(
            "tokenizer_or_vocab must be a vocabulary size (int >= 1) or a Hugging Face tokenizer, "
            f"got {type(tokenizer_or_vocab).__name__}"
        )
    if d_vocab is not None:
        size = min(size, d_vocab)
    ids = np.arange(size, dtype=np.int64)
    if excluded:
        ids = ids[~np.isin(ids, np.fromiter(excluded, dtype=np.int64))]
    if ids.size == 0:
        raise ValueError("no token id left after excluding special and padding ids")
    return ids
