"""Token strings for the experiments: natural text, random words and uniformly random tokens.

The paper asks which target strings a model can be made to emit (paper §1, §5). Three sources, all
deterministic per ``(seed, index)`` — row ``index`` of a request depends only on the seed, on
``index`` and (for the random kinds) on the length, never on how many rows were asked for:

- **natural text**, from a corpus tokenized by the caller's tokenizer (so one source serves ``nano``,
  SmolLM2 and Gemma). Two cuts: :meth:`NaturalText.target`, a window at a seeded random offset (used
  for prompts, e.g. embedding sampling), and :meth:`NaturalText.prefix_target`, the first n tokens of
  a passage that starts at a sentence — the cramming targets, so that targets of different lengths
  are prefixes of one another, as in the authors' runs on PG19 book chunks. Corpora: ``"heldout"``
  (default), the held-out split of ``nano``'s training data, 59 chapters of the King James Bible
  (``accessibility_lib/data/nano/heldout.txt``, see ``scripts/train_nano.py``); ``"austen"``, two
  Project Gutenberg novels (*Persuasion* and *Northanger Abbey*, 1818), the offline stand-in for the
  paper's PG19 books; ``"pg19"``, PG19 itself through the optional ``datasets`` package when the
  network allows (never required).
- **random words** (:func:`random_word_target`): what the authors' replication code calls random
  targets — 5·n words drawn uniformly with replacement from the 100,000 most frequent English words,
  joined by spaces, tokenized and cut to n tokens. Their list comes from GloVe-6B (it includes
  punctuation); ours from the ``wordfreq`` package (words only). Each length is an independent draw.
- **random tokens** (:func:`random_targets`): what the paper's text describes — i.i.d. uniform over
  the vocabulary, excluding special tokens (BOS/EOS/PAD, ...) and the padded rows of the unembedding
  (ids ≥ ``len(tokenizer)`` when ``d_vocab`` is larger). Each length is an independent draw.

All lengths are in tokens. Results are ``torch.int64`` tensors of shape ``(count, n_tokens)``.

Example:
    >>> from accessibility_lib.models.text import random_targets
    >>> random_targets(100, n_tokens=5, count=2, seed=0).shape
    torch.Size([2, 5])
"""

from __future__ import annotations

import re
import weakref
from functools import lru_cache

import numpy as np
import torch

from accessibility_lib.ground.checks import check_int
from accessibility_lib.ground.paths import DATA_DIR
from accessibility_lib.models.vocabulary import allowed_token_ids

__all__ = [
    "HELDOUT_PATH",
    "heldout_text",
    "NaturalText",
    "natural_targets",
    "random_targets",
    "AUSTEN_PATH",
    "TOP_WORDS",
    "frequent_words",
    "random_word_target",
]

HELDOUT_PATH = DATA_DIR / "nano" / "heldout.txt"
AUSTEN_PATH = DATA_DIR / "corpora" / "austen.txt"
SOURCES = ("heldout", "austen", "pg19")
TOP_WORDS = 100_000  # the authors' random words come from the 100,000 most frequent English words
WORDS_PER_TOKEN = 5  # and 5·L words are drawn for a target of L tokens (always at least L tokens)
PG19_DATASET = "emozilla/pg19"  # a parquet mirror of deepmind/pg19 (no loading script needed)
_SALT_NATURAL, _SALT_RANDOM, _SALT_WORDS, _SALT_PASSAGE = 0x6E61, 0x7261, 0x776F, 0x7061  # independent streams


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


def _corpus_text(source: str, pg19_split: str, pg19_books: int) -> str:
    if source == "heldout":
        return heldout_text()
    if source == "austen":
        if not AUSTEN_PATH.exists():
            raise FileNotFoundError(f"{AUSTEN_PATH} is missing; it is shipped with the package (see austen.SOURCE.txt)")
        return AUSTEN_PATH.read_text(encoding="utf-8")
    return _pg19_text(pg19_split, check_int("pg19_books", pg19_books, minimum=1))


_SENTENCE_START = re.compile(r"(?:(?<=[.!?])[\"'’”)]?\s+|\n\s*\n\s*)(?=[\"'‘“(]?[A-Z])")


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
        text = _corpus_text(source, pg19_split, pg19_books)
        self.source = source
        self.text = text
        self.tokenizer = tokenizer
        self.ids = _tokenize(tokenizer, text)  # (N,)
        if self.ids.size == 0:
            raise ValueError(f"the {source} corpus tokenized to zero tokens")
        # character offsets where a sentence (or a paragraph) starts, away from the very end
        starts = [0] + [mt.end() for mt in _SENTENCE_START.finditer(text)]
        self.sentence_starts = np.asarray([c for c in starts if c < len(text) - 2000], dtype=np.int64)
        self._passages: dict[tuple[int, int], np.ndarray] = {}

    def __len__(self) -> int:
        """Number of tokens N in the tokenized corpus."""
        return int(self.ids.size)

    def _check_n(self, n_tokens: int) -> int:
        n = check_int("n_tokens", n_tokens, minimum=1)
        if n > len(self):
            raise ValueError(
                f"n_tokens must be at most the corpus length ({len(self)} tokens of {self.source!r}), got {n}"
            )
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

    PASSAGE_CHARS = 3000  # a passage: this many characters from a sentence start (≥ 500 tokens for all our tokenizers)

    def passage(self, seed: int = 0, index: int = 0) -> np.ndarray:
        """Token ids of passage ``index`` for ``seed``: (P,) int64, P ≥ 400 for the shipped corpora.

        A passage is ``PASSAGE_CHARS`` characters of the corpus starting at a sentence start drawn
        uniformly (seeded by ``(seed, index)``), tokenized on its own (so it starts on a token
        boundary, as a tokenized book chunk does).

        Raises:
            ValueError: ``seed`` or ``index`` < 0.
        """
        seed = check_int("seed", seed, minimum=0)
        index = check_int("index", index, minimum=0)
        key = (seed, index)
        if key not in self._passages:
            start = int(self.sentence_starts[_rng(seed, index, _SALT_PASSAGE).integers(0, self.sentence_starts.size)])
            chunk = self.text[start : start + self.PASSAGE_CHARS].lstrip()
            self._passages[key] = _tokenize(self.tokenizer, chunk)
        return self._passages[key]

    def prefix_target(self, n_tokens: int, seed: int = 0, index: int = 0) -> torch.Tensor:
        """The first ``n_tokens`` tokens of :meth:`passage` ``(seed, index)``: int64 tensor ``(n_tokens,)``.

        Targets of different lengths with the same ``(seed, index)`` are prefixes of one another, as
        the authors' PG19 targets are (a book chunk truncated to L tokens).

        Raises:
            ValueError: ``n_tokens`` < 1 or longer than the passage, ``seed`` or ``index`` < 0.
        """
        n = check_int("n_tokens", n_tokens, minimum=1)
        ids = self.passage(seed, index)
        if n > ids.size:
            raise ValueError(
                f"n_tokens must be at most {ids.size} (the passage length of {self.source!r} passage {index}), got {n}"
            )
        return torch.from_numpy(ids[:n].copy())

    def targets(self, n_tokens: int, count: int, seed: int = 0, start_index: int = 0) -> torch.Tensor:
        """Windows ``start_index, ..., start_index + count - 1``: int64 tensor ``(count, n_tokens)``.

        Raises:
            ValueError: ``count`` < 1, ``start_index`` < 0, or as for :meth:`target`.
        """
        n = self._check_n(n_tokens)
        count = check_int("count", count, minimum=1)
        start_index = check_int("start_index", start_index, minimum=0)
        return torch.stack([self.target(n, seed, start_index + i) for i in range(count)])


_CACHE: weakref.WeakKeyDictionary[object, dict[str, NaturalText]] = weakref.WeakKeyDictionary()


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
    # the length is part of the seed: targets of different lengths are independent draws, not prefixes
    rows = [
        ids[np.random.default_rng(np.random.SeedSequence([seed, i, n, _SALT_RANDOM])).integers(0, ids.size, size=n)]
        for i in range(count)
    ]
    return torch.from_numpy(np.stack(rows))


@lru_cache(maxsize=1)
def frequent_words(count: int = TOP_WORDS) -> tuple[str, ...]:
    """The ``count`` most frequent English words, most frequent first (``wordfreq.top_n_list``).

    Lower-case words, contractions and numbers; no punctuation (the authors' GloVe-6B list has some).

    Raises:
        RuntimeError: the ``wordfreq`` package is not installed.
    """
    count = check_int("count", count, minimum=1)
    try:
        import wordfreq  # noqa: PLC0415 (imported lazily: only the random-words targets need it)
    except ImportError as exc:
        raise RuntimeError("random-words targets need the package `wordfreq` (in requirements.txt)") from exc
    words = tuple(wordfreq.top_n_list("en", count))
    if len(words) < count:
        raise RuntimeError(f"wordfreq lists only {len(words)} English words, fewer than the {count} asked for")
    return words


def random_word_text(n_words: int, seed: int = 0, index: int = 0, *, top: int = TOP_WORDS) -> str:
    """``n_words`` words drawn uniformly with replacement from :func:`frequent_words` ``(top)``,
    joined by single spaces; deterministic per ``(seed, index, n_words)``."""
    n_words = check_int("n_words", n_words, minimum=1)
    words = frequent_words(top)
    rng = np.random.default_rng(
        np.random.SeedSequence(
            [check_int("seed", seed, minimum=0), check_int("index", index, minimum=0), n_words, _SALT_WORDS]
        )
    )
    return " ".join(words[j] for j in rng.integers(0, len(words), size=n_words))


def random_word_target(
    tokenizer, n_tokens: int, seed: int = 0, index: int = 0, *, top: int = TOP_WORDS
) -> torch.Tensor:
    """A random-words target of exactly ``n_tokens`` tokens: int64 tensor ``(n_tokens,)``.

    The authors' "random" targets (their sweep's shuffled mode): 5·n words drawn uniformly with
    replacement from the ``top`` most frequent English words, joined by spaces, tokenized without
    special tokens and truncated to n tokens. Each ``(seed, index, n_tokens)`` is an independent
    draw: the target of length n + 1 is not the target of length n extended.

    Raises:
        ValueError: ``n_tokens`` < 1, ``seed`` or ``index`` < 0, or a tokenizer that is not callable.
        RuntimeError: ``wordfreq`` is missing.
    """
    n = check_int("n_tokens", n_tokens, minimum=1)
    ids = _tokenize(tokenizer, random_word_text(WORDS_PER_TOKEN * n, seed, index, top=top))
    if ids.size < n:  # 5 words always give ≥ 1 token each; guard against an odd tokenizer anyway
        raise ValueError(f"{WORDS_PER_TOKEN * n} random words tokenized to only {ids.size} tokens (< {n})")
    return torch.from_numpy(ids[:n].copy())
