"""Target sources (accessibility_lib.models.text): determinism per (seed, index), exact lengths, exclusions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from accessibility_lib.models import text as T

NANO = T.HELDOUT_PATH.parent


@pytest.fixture(scope="module")
def tok():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(NANO))


@pytest.fixture(scope="module")
def corpus(tok):
    return T.NaturalText(tok)


def test_heldout_is_shipped_and_small():
    text = T.heldout_text()
    assert 100_000 < len(text.encode("utf-8")) <= 300_000
    assert "[" not in text and "]" not in text  # translators' italics markers were stripped
    assert text.count("\n\n") == 58  # 59 held-out chapters (k % 20 == 10 of 1,189)


def test_natural_shapes_and_dtype(tok):
    for n, count in [(1, 1), (7, 3), (256, 2)]:
        x = T.natural_targets(tok, n, count, seed=0)
        assert x.shape == (count, n) and x.dtype == torch.int64


def test_natural_deterministic_per_seed_and_index(tok, corpus):
    a = T.natural_targets(tok, 12, 5, seed=4)
    b = T.natural_targets(tok, 12, 5, seed=4)
    assert torch.equal(a, b)
    # row i depends on (seed, i) only: a shorter request is a prefix, an offset request is a slice
    assert torch.equal(T.natural_targets(tok, 12, 2, seed=4), a[:2])
    assert torch.equal(corpus.targets(12, 3, seed=4, start_index=2), a[2:])
    assert torch.equal(corpus.target(12, seed=4, index=3), a[3])
    c = T.natural_targets(tok, 12, 5, seed=5)
    assert not torch.equal(a, c)
    assert len({tuple(r.tolist()) for r in a}) == 5  # distinct windows


def test_natural_windows_are_corpus_substrings(tok, corpus):
    ids = corpus.ids
    for row in T.natural_targets(tok, 20, 4, seed=1):
        r = row.numpy()
        hits = np.flatnonzero(ids[: len(ids) - 19] == r[0])
        assert any(np.array_equal(ids[h : h + 20], r) for h in hits)
    decoded = tok.decode(T.natural_targets(tok, 40, 1, seed=2)[0])
    assert decoded.strip()[:10] and all(ch.isprintable() or ch == "\n" for ch in decoded)


def test_natural_whole_corpus_and_too_long(corpus):
    n = len(corpus)
    assert torch.equal(corpus.target(n, seed=9, index=0), torch.from_numpy(corpus.ids))
    with pytest.raises(ValueError, match="n_tokens"):
        corpus.target(n + 1)


def test_natural_any_tokenizer(tmp_path):
    """A different tokenizer (here a byte-level one trained on the fly) tokenizes the same text itself."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<s>"],
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    raw.train_from_iterator(["In the beginning God created the heaven and the earth."], trainer=trainer)
    other = PreTrainedTokenizerFast(tokenizer_object=raw, bos_token="<s>")
    x = T.natural_targets(other, 30, 2, seed=0)
    assert x.shape == (2, 30) and int(x.max()) < len(other)
    assert len(T.NaturalText(other)) > 150_000  # a small vocabulary: many more tokens than nano's ~48k


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(n_tokens=0, count=1),
        dict(n_tokens=5, count=0),
        dict(n_tokens=5, count=1, seed=-1),
        dict(n_tokens=2.0, count=1),
        dict(n_tokens=5, count=1, source="gutenberg"),
    ],
)
def test_natural_bad_inputs(tok, kwargs):
    with pytest.raises(ValueError):
        T.natural_targets(tok, **kwargs)


def test_natural_bad_tokenizer():
    with pytest.raises(ValueError, match="tokenizer"):
        T.NaturalText("not a tokenizer")


def test_pg19_clear_error_without_datasets_or_network(tok):
    try:
        import datasets  # noqa: F401
    except ImportError:
        pass
    # without `datasets`, or offline (the test suite sets HF_HUB_OFFLINE=1): one clear RuntimeError
    with pytest.raises(RuntimeError, match="pip install datasets"):
        T.natural_targets(tok, 5, 1, source="pg19")


def test_random_shapes_determinism(tok):
    a = T.random_targets(tok, 9, 6, seed=2)
    assert a.shape == (6, 9) and a.dtype == torch.int64
    assert torch.equal(a, T.random_targets(tok, 9, 6, seed=2))
    assert torch.equal(a[:3], T.random_targets(tok, 9, 3, seed=2))
    assert not torch.equal(a, T.random_targets(tok, 9, 6, seed=3))
    # the two sources use independent streams: different values for the same (seed, index)
    assert not torch.equal(T.random_targets(len(tok), 9, 1, seed=0), T.natural_targets(tok, 9, 1, seed=0))


def test_random_excludes_special_and_padded_rows(tok):
    special = set(tok.all_special_ids) | {tok.pad_token_id}
    assert special == {0, 1}
    x = T.random_targets(tok, 200, 50, seed=0, d_vocab=len(tok) + 64)  # W_U padded by 64 rows
    assert not set(x.unique().tolist()) & special
    assert int(x.max()) < len(tok)
    allowed = T.allowed_token_ids(tok, d_vocab=len(tok) + 64)
    assert allowed.size == len(tok) - 2
    # a smaller d_vocab cuts the range
    y = T.random_targets(tok, 100, 10, seed=0, d_vocab=100)
    assert int(y.max()) < 100 and int(y.min()) >= 2


def test_random_is_uniform_over_allowed():
    x = T.random_targets(10, 1000, 20, seed=0)  # 20,000 draws over 10 ids
    counts = np.bincount(x.reshape(-1).numpy(), minlength=10)
    assert counts.min() > 1_800 and counts.max() < 2_200  # expected 2,000, sd ~42


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((0, 5, 1), {}),
        ((10, 0, 1), {}),
        ((10, 5, 0), {}),
        ((10, 5, 1), dict(seed=-2)),
        ((10, 5, 1), dict(d_vocab=0)),
        (("vocab", 5, 1), {}),
        ((True, 5, 1), {}),
    ],
)
def test_random_bad_inputs(args, kwargs):
    with pytest.raises(ValueError):
        T.random_targets(*args, **kwargs)


def test_random_nothing_left(tok):
    with pytest.raises(ValueError, match="no token id left"):
        T.random_targets(tok, 3, 1, d_vocab=2)  # ids 0, 1 are both special


# ---- random words (the authors' "random" targets) and passages (natural targets as prefixes) ---------


def test_random_word_targets_are_frequent_words_cut_to_n_tokens(tok):
    words = set(T.frequent_words())
    assert len(words) == T.TOP_WORDS
    for n in (1, 5, 23):
        for i in range(3):
            ids = T.random_word_target(tok, n, seed=7, index=i)
            assert ids.shape == (n,) and ids.dtype == torch.int64
            text = T.random_word_text(5 * n, seed=7, index=i)
            assert all(w in words for w in text.split(" ")) and len(text.split(" ")) == 5 * n
            full = tok(text, add_special_tokens=False)["input_ids"]
            assert ids.tolist() == full[:n]  # the tokenized words, truncated to exactly n tokens
            assert torch.equal(ids, T.random_word_target(tok, n, seed=7, index=i))  # reproducible from (seed, index)


def test_random_targets_are_independent_across_lengths(tok):
    # the targets of length n + 1 are not the targets of length n extended (no shared prefixes)
    for make in (lambda n, i: T.random_word_target(tok, n, 0, i), lambda n, i: T.random_targets(tok, n, i + 1, 0)[i]):
        shared = sum(torch.equal(make(n + 1, i)[:n], make(n, i)) for n in range(4, 12) for i in range(5))
        assert shared <= 1  # chance agreement of 4+ tokens is negligible


def test_natural_prefix_targets_are_prefixes_of_one_passage(tok):
    nat = T.NaturalText(tok, "austen")
    a, b = nat.prefix_target(30, 0, 3), nat.prefix_target(12, 0, 3)
    assert torch.equal(a[:12], b)  # as the authors' PG19 chunks: targets of different lengths share a prefix
    assert not torch.equal(nat.prefix_target(12, 0, 4), b)
    text = tok.decode(a)
    assert text[:1].isupper() or text[:1] in "\"'‘“(", text  # a passage starts at a sentence
    with pytest.raises(ValueError, match="n_tokens must be at most"):
        nat.prefix_target(10**6, 0, 3)
