"""Target token strings for the experiments: natural text and uniformly random tokens.

The paper asks which target strings of m tokens a model can be made to emit (paper §1, §5). Two
sources of targets, both deterministic per ``(seed, index)`` — row ``index`` of a request depends
only on the seed and on ``index``, not on how many rows were asked for:

- **natural text**: windows of n consecutive tokens cut at a seeded random offset from a held-out
  corpus, tokenized by the caller's tokenizer (so the same source serves ``nano``, SmolLM2, Gemma).
  The default corpus is the held-out split of the ``nano`` model's training data: 59 chapters of the
  King James Bible (public domain), shipped as ``accessibility_lib/data/nano/heldout.txt`` (see
  ``scripts/train_nano.py`` for the split). The paper used PG19; ``source="pg19"`` loads it through
  the optional ``datasets`` package when the network allows (never required).
- **random tokens**: i.i.d. uniform over the vocabulary, excluding special tokens (BOS/EOS/PAD, ...)
  and the padded rows of the unembedding (ids ≥ ``len(tokenizer)`` when ``d_vocab`` is larger).

All lengths are in tokens. Results are ``torch.int64`` tensors of shape ``(count, n_tokens)``.

Example:
    >>> from accessibility_lib.text import random_targets
    >>> random_targets(100, n_tokens=5, count=2, seed=0).shape
    torch.Size([2, 5])
"""

from __future__ import annotations

import weakref
from pathlib import Path

import numpy as np
import torch

from ._checks import check_int

__all__ = [
    "HELDOUT_PATH",
    "heldout_text",
    "NaturalText",
    "natural_targets",
    "allowed_token_ids",
    "random_targets",
]

HELDOUT_PATH = Path(__file__).resolve().parent / "data" / "nano" / "heldout.txt"
SOURCES = ("heldout", "pg19")
PG19_DATASET = "emozilla/pg19"  # a parquet mirror of deepmind/pg19 (no loading script needed)
_SALT_NATURAL, _SALT_RANDOM = 0x6E61, 0x7261  # keep the two sources' streams independent


def _rng(seed: int, index: int, salt: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, index, salt]))


def heldout_text() -> str:
    """The held-out KJV text shipped with the package (about 220 KB, chapters separated by a blank line)."""
    if not HELDOUT_PATH.exists():
        raise FileNotFoundError(
            f"{HELDOUT_PATH} is missing; it is written by scripts/train_nano.py and shipped with the package"
        )
    return HELDOUT_PATH.read_text(encoding="utf-8")


def _pg19_text(split: str, books: int) -> str:
    """Text of the first ``books`` books of PG19's ``split`` (needs ``datasets`` and the network)."""
    hint = (
        "source='pg19' needs network access to the Hugging Face hub and the optional package "
        "`datasets` (`pip install datasets`); it is never required — use source='heldout' offline"
    )
    try:
        import datasets  # noqa: PLC0415 (optional, imported lazily)
    except ImportError as exc:
        raise RuntimeError(hint) from exc
    try:
        stream = datasets.load_dataset(PG19_DATASET, split=split, streaming=True)
        texts = [row["text"] for _, row in zip(range(books), stream)]
    except Exception as exc:  # network, hub or dataset errors: one clear message
        raise RuntimeError(f"{hint} (loading {PG19_DATASET!r} failed: {exc})") from exc
    return "\n\n".join(texts)


def _tokenize(tokenizer, text: str) -> np.ndarray:
    """All token ids of ``text`` without special tokens, as one int64 array (shape ``(N,)``)."""
    if not callable(tokenizer):
        raise ValueError(f"tokenizer must be a Hugging Face tokenizer (callable), got {type(tokenizer).__name__}")
    ids = tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]
    return np.asarray(ids, dtype=np.int64)


class NaturalText:
    """Windows of natural text, tokenized by a given tokenizer, cut at seeded random offsets.

    The whole corpus is tokenized once (about 50k tokens for ``nano``'s tokenizer, < 1 s); window
    ``index`` for ``seed`` starts at a uniform offset in ``[0, N - n_tokens]`` drawn from a generator
    seeded by ``(seed, index)``. A window's tokens are the corpus's tokens, so decoding and
    re-tokenizing it can differ at its two ends (a word cut in half).

    Args:
        tokenizer: a Hugging Face tokenizer (anything called as ``tokenizer(text)["input_ids"]``).
        source: ``"heldout"`` (default, offline) or ``"pg19"`` (needs network and ``datasets``).
        pg19_split: PG19 split for ``source="pg19"``.
        pg19_books: how many books of that split (in the data set's order) form the corpus.

    Raises:
        ValueError: unknown ``source``, bad ``pg19_books``, or a tokenizer that is not callable.
        RuntimeError: ``source="pg19"`` without ``datasets`` or without network.
    """

    def __init__(self, tokenizer, source: str = "heldout", *, pg19_split: str = "test", pg19_books: int = 5):
        if source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
        if source == "heldout":
            text = heldout_text()
        else:
            text = _pg19_text(pg19_split, check_int("pg19_books", pg19_books, minimum=1))
        self.source = source
        self.ids = _tokenize(tokenizer, text)  # (N,)
        if self.ids.size == 0:
            raise ValueError(f"the {source} corpus tokenized to zero tokens")

    def __len__(self) -> int:
        """Number of tokens N in the tokenized corpus."""
        return int(self.ids.size)

    def _check_n(self, n_tokens: int) -> int:
        n = check_int("n_tokens", n_tokens, minimum=1)
        if n > len(self):
            raise ValueError(f"n_tokens must be at most the corpus length ({len(self)} tokens of {self.source!r}), got {n}")
        return n

    def target(self, n_tokens: int, seed: int = 0, index: int = 0) -> torch.Tensor:
        """Window ``index`` of ``n_tokens`` tokens for ``seed``: int64 tensor of shape ``(n_tokens,)``.

        Raises:
            ValueError: ``n_tokens`` < 1 or longer than the corpus, ``seed`` or ``index`` < 0.
        """
        n = self._check_n(n_tokens)
        seed = check_int("seed", seed, minimum=0)
        index = check_int("index", index, minimum=0)
        start = int(_rng(seed, index, _SALT_NATURAL).integers(0, len(self) - n + 1))
        return torch.from_numpy(self.ids[start : start + n].copy())

    def targets(self, n_tokens: int, count: int, seed: int = 0, start_index: int = 0) -> torch.Tensor:
        """Windows ``start_index, ..., start_index + count - 1``: int64 tensor ``(count, n_tokens)``.

        Raises:
            ValueError: ``count`` < 1, ``start_index`` < 0, or as for :meth:`target`.
        """
        n = self._check_n(n_tokens)
        count = check_int("count", count, minimum=1)
        start_index = check_int("start_index", start_index, minimum=0)
        return torch.stack([self.target(n, seed, start_index + i) for i in range(count)])


_CACHE: "weakref.WeakKeyDictionary[object, dict[str, NaturalText]]" = weakref.WeakKeyDictionary()


def natural_targets(tokenizer, n_tokens: int, count: int, seed: int = 0, source: str = "heldout") -> torch.Tensor:
    """``count`` natural-text targets of ``n_tokens`` tokens each: int64 tensor ``(count, n_tokens)``.

    Row i is :meth:`NaturalText.target` ``(n_tokens, seed, i)``; the tokenized corpus is cached per
    tokenizer object (weakly), so repeated calls do not re-tokenize.

    Example:
        >>> from transformers import AutoTokenizer
        >>> tok = AutoTokenizer.from_pretrained(str(HELDOUT_PATH.parent))
        >>> x = natural_targets(tok, n_tokens=8, count=3, seed=1)
        >>> x.shape, bool((x == natural_targets(tok, 8, 3, seed=1)).all())
        (torch.Size([3, 8]), True)

    Raises:
        ValueError: bad ``n_tokens``, ``count``, ``seed`` or ``source`` (see :class:`NaturalText`).
        RuntimeError: ``source="pg19"`` without ``datasets`` or without network.
    """
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
    check_int("n_tokens", n_tokens, minimum=1)
    check_int("count", count, minimum=1)
    check_int("seed", seed, minimum=0)
    try:
        per_tok = _CACHE.setdefault(tokenizer, {})
    except TypeError:  # not weak-referenceable: no caching
        per_tok = {}
    if source not in per_tok:
        per_tok[source] = NaturalText(tokenizer, source)
    return per_tok[source].targets(n_tokens, count, seed)


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


def random_targets(
    tokenizer_or_vocab, n_tokens: int, count: int, seed: int = 0, d_vocab: int | None = None
) -> torch.Tensor:
    """``count`` strings of ``n_tokens`` i.i.d. uniform tokens: int64 tensor ``(count, n_tokens)``.

    Tokens are uniform over :func:`allowed_token_ids` ``(tokenizer_or_vocab, d_vocab)`` — never a
    special token, the pad token, or a padded row of ``W_U``. Row i depends only on ``(seed, i)``.

    Args:
        tokenizer_or_vocab: a Hugging Face tokenizer, or the vocabulary size |V| (int).
        n_tokens: tokens per target (m in the paper), ≥ 1.
        count: number of targets, ≥ 1.
        seed: ≥ 0.
        d_vocab: number of rows of the unembedding ``W_U``; ids ≥ ``d_vocab`` are excluded.

    Raises:
        ValueError: ``n_tokens`` or ``count`` < 1, ``seed`` < 0, or as for :func:`allowed_token_ids`.
    """
    n = check_int("n_tokens", n_tokens, minimum=1)
    count = check_int("count", count, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    ids = allowed_token_ids(tokenizer_or_vocab, d_vocab)
    rows = [ids[_rng(seed, i, _SALT_RANDOM).integers(0, ids.size, size=n)] for i in range(count)]
    return torch.from_numpy(np.stack(rows))
