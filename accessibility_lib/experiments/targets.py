"""What is crammed: target kinds and length conventions, as one deterministic source per run.

**Target kinds** (:data:`TARGET_KINDS`):

- ``"natural"`` — the first n tokens of a natural-text passage that starts at a sentence
  (:meth:`accessibility_lib.models.text.NaturalText.prefix_target`); targets of different lengths are
  prefixes of one another, as the authors' PG19 targets are. Corpus: ``"heldout"`` (KJV, nano's
  held-out split) or ``"austen"`` (two Gutenberg novels, the offline stand-in for PG19).
- ``"random_words"`` — what the authors' replication code uses as "random" targets: 5·n words from
  the 100,000 most frequent English words, tokenized and cut to n tokens
  (:func:`accessibility_lib.models.text.random_word_target`); independent across lengths.
- ``"random_tokens"`` — what the paper's text describes: uniform token ids without special or
  padded rows (:func:`accessibility_lib.models.text.random_targets`); independent across lengths.

**Length conventions** (:data:`LENGTH_CONVENTIONS`) — how a target of "length n" is laid out:

- ``"all_generated"`` (the book's): all n tokens are generated from the prompt; inputs
  [prefix, Y, t_1 … t_{n−1}], n tokens scored. Optionally a BOS *before* the prompt (``bos_prefix``:
  Llama-family models turn position 0 into an attention sink).
- ``"first_given"`` (the authors'): the soft prompt ("memory") comes first, then the text; the first
  of the n tokens is given, not generated, and the loss covers tokens 2 … n. For tokenizers that add a
  BOS (Llama, Gemma) that first token is the BOS, placed after the memory; otherwise (Pythia, Qwen,
  SmolLM2) it is the first text token. So n counts one given token and n − 1 generated ones.

A slope n50(m) ≈ C_exp·m does not depend on the convention when the offset between them is the same
for every m (one given token), but n50 values do: compare n50 with the authors' only under
``"first_given"``.

Example:
    >>> from accessibility_lib.models.loading import load_model
    >>> src = target_source(load_model("nano"), "random_tokens", "all_generated", seed=0)
    >>> len(src(5, 0)), src.n_given, src.name
    (5, 0, 'random_tokens/generated/s0')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from accessibility_lib.ground.checks import check_int

if TYPE_CHECKING:
    from accessibility_lib.models.handle import ModelHandle

__all__ = ["TARGET_KINDS", "LENGTH_CONVENTIONS", "CORPORA", "TargetSource", "target_source", "tokenizer_adds_bos"]

TARGET_KINDS = ("natural", "random_words", "random_tokens")
LENGTH_CONVENTIONS = ("all_generated", "first_given")
#: the tag of each convention in result-store keys and target-source names (the names of the first runs,
#: kept so that every stored outcome stays valid)
KEY_TAG = {"all_generated": "generated", "first_given": "replication"}
CORPORA = ("heldout", "austen", "pg19")


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(repr(a) for a in allowed)}; got {value!r}")
    return str(value)


def tokenizer_adds_bos(tokenizer) -> int | None:
    """The BOS id a tokenizer puts in front of text by default (Llama, Gemma), or None (Pythia, Qwen, SmolLM2)."""
    bos = getattr(tokenizer, "bos_token_id", None)
    if bos is None:
        return None
    ids = tokenizer("a", add_special_tokens=True, verbose=False)["input_ids"]
    return int(bos) if ids and int(ids[0]) == int(bos) else None


@dataclass
class TargetSource:
    """A deterministic source of targets: ``source(n, i)`` is target ``i`` of length ``n`` (tokens).

    Attributes:
        kind: one of :data:`TARGET_KINDS`.
        convention: one of :data:`LENGTH_CONVENTIONS`.
        seed: seed of the text draws (≥ 0).
        corpus: the natural-text corpus (``"natural"`` only; else None).
        n_given: leading target tokens given as input, not generated (0 or 1).
        prefix_ids: fixed token ids before the prompt (empty, or ``[bos]``).
        first_id: under ``"first_given"``, the BOS that is the given first token, or None.
        name: a label for result-store keys, e.g. ``"natural[austen]/replication/s0"``.
        min_length: the shortest length allowed (n_given + 1).
    """

    kind: str
    convention: str
    seed: int
    corpus: str | None
    n_given: int
    prefix_ids: list[int]
    first_id: int | None
    name: str
    _draw: object = field(repr=False, default=None)

    @property
    def min_length(self) -> int:
        return self.n_given + 1

    def __call__(self, n: int, i: int) -> list[int]:
        """Target ``i`` of ``n`` tokens (given ones included): a list of n token ids.

        Raises:
            ValueError: ``n`` below :attr:`min_length`, or ``i`` < 0.
        """
        n = check_int("n", n, minimum=self.min_length)
        i = check_int("i", i, minimum=0)
        if self.first_id is not None:
            return [self.first_id] + self._draw(n - 1, i)
        return self._draw(n, i)

    def layout(self) -> dict:
        """The settings that decide what is crammed, for result-store keys and artifacts."""
        return {
            "kind": self.kind,
            "convention": KEY_TAG[self.convention],
            "corpus": self.corpus,
            "seed": self.seed,
            "n_given": self.n_given,
            "prefix_ids": list(self.prefix_ids),
            "first_id": self.first_id,
        }


def target_source(
    handle: ModelHandle,
    kind: str,
    convention: str = "all_generated",
    *,
    seed: int = 0,
    corpus: str = "heldout",
    bos_prefix: bool = False,
) -> TargetSource:
    """The target source for a model, a target kind and a length convention.

    Args:
        handle: model handle with a ``tokenizer`` and ``d_vocab``.
        kind: ``"natural"``, ``"random_words"`` or ``"random_tokens"``.
        convention: ``"all_generated"`` (the book's) or ``"first_given"`` (the authors').
        seed: seed of the draws (≥ 0).
        corpus: natural-text corpus, ``"heldout"``, ``"austen"`` or ``"pg19"`` (``"natural"`` only).
        bos_prefix: under ``"all_generated"``, put the tokenizer's BOS before the prompt (Llama-family
            position-0 sink). Not allowed under ``"first_given"`` (the memory comes first there).

    Returns:
        A :class:`TargetSource`.

    Raises:
        ValueError: an unknown kind, convention or corpus (the message lists the valid ones), a
            handle without a tokenizer, ``bos_prefix`` under ``"first_given"`` or without a BOS token.
    """
    from accessibility_lib.models import text

    kind = _choice("kind", kind, TARGET_KINDS)
    convention = _choice("convention", convention, LENGTH_CONVENTIONS)
    seed = check_int("seed", seed, minimum=0)
    tok = getattr(handle, "tokenizer", None)
    if tok is None:
        raise ValueError("target_source needs a model handle with a tokenizer")
    corpus_name = _choice("corpus", corpus, CORPORA) if kind == "natural" else None
    if kind == "natural":
        nat = text.NaturalText(tok, corpus_name)

        def draw(n, i):
            return nat.prefix_target(n, seed, i).tolist()
    elif kind == "random_words":

        def draw(n, i):
            return text.random_word_target(tok, n, seed, i).tolist()
    else:

        def draw(n, i):
            return text.random_targets(tok, n, i + 1, seed, d_vocab=handle.d_vocab)[i].tolist()

    prefix: list[int] = []
    first_id = None
    n_given = 0
    if convention == "first_given":
        if bos_prefix:
            raise ValueError(
                "bos_prefix is for the 'all_generated' convention; under 'first_given' the memory comes first "
                "and the tokenizer's BOS (if it adds one) is the given first token after it"
            )
        n_given = 1
        first_id = tokenizer_adds_bos(tok)
    elif bos_prefix:
        bos = getattr(tok, "bos_token_id", None)
        if bos is None:
            raise ValueError("bos_prefix=True but the tokenizer has no BOS token")
        prefix = [int(bos)]
    label = f"{kind}[{corpus_name}]" if kind == "natural" else kind
    name = f"{label}/{KEY_TAG[convention]}/s{seed}" + ("/bos-prefix" if prefix else "")
    return TargetSource(kind, convention, seed, corpus_name, n_given, prefix, first_id, name, draw)
