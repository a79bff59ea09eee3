"""The copying task x|x (Jelassi et al. 2024; paper §5): data, task model, training, evaluation.

A model reads a string x over an alphabet of |V| symbols and must write it again. The paper (§5)
fine-tunes on strings with |x| ≤ 50 until 100 % training accuracy and finds that exact-match copying
falls like a step (a sigmoid in the length n) at a prompt-independent length, as Cor 4.10 predicts.

Token layout (task vocabulary of |V| + 4 ids). With alphabet size |V| = A the ids are
``0 … A−1`` for the symbols, ``START = A``, ``SEP = A+1``, ``END = A+2``, ``PAD = A+3``. A string x of
length n becomes ``[START, x_1 … x_n, SEP, x_1 … x_n, END]`` (2n + 3 tokens), right-padded with PAD.
The loss counts only the copy: the n copied symbols and END (``labels`` is −100 elsewhere, HF style:
``labels[t]`` is the token predicted from position t−1). Worked example, A = 26 (a–z), x = "cab":

====== ===== == == == === == == == === ===
pos    0     1  2  3  4   5  6  7  8   9
token  START c  a  b  SEP c  a  b  END PAD
id     26    2  0  1  27  2  0  1  28  29
label  −100  −100 … −100  2  0  1  28  −100
====== ===== == == == === == == == === ===

Example:
    >>> task = CopyTask(26)
    >>> batch = encode_batch(task, [np.array([2, 0, 1])])
    >>> task.decode(batch["input_ids"][0]), batch["labels"][0].tolist()
    ('^cab|cab$', [-100, -100, -100, -100, -100, 2, 0, 1, 28])

Training and evaluation strings never overlap: a string belongs to the evaluation split iff the top
bit of a 64-bit hash (FNV-1a over its length and symbols, splitmix64 finaliser) is set; both
generators draw uniform strings from their own seeded stream and keep only those of their split.

Exact match: greedy decoding from ``[START, x, SEP]`` reproduces x_1 … x_n exactly (END not
required). It equals "teacher-forced argmax correct at every copy position" (both fail at the first
wrong token); :func:`teacher_forced_exact` uses that for fast checks during training. Character
accuracy: the fraction of the n greedily decoded symbols equal to x_i.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import torch

from accessibility_lib.ground.checks import check_int, check_real

__all__ = [
    "CopyTask",
    "string_split",
    "sample_strings",
    "encode_batch",
    "wilson_interval",
    "cpu_threads",
    "teacher_forced_exact",
    "greedy_copy",
    "evaluate_copying",
    "PAPER_COPYING",
]

#: What the paper (Section 5, copying) and its replication code report about the copying experiment, for
#: labels beside our own numbers: training strings of length ≤ 50 until 100 % training accuracy or 10k steps;
#: exact match falls like a sigmoid with a median R² of 0.95 over the fits; the authors' task vocabulary has 30
#: ids (the 26 letters a–z plus start, separator, end and pad), and their evaluation uses 12 strings per length.
PAPER_COPYING: dict[str, float | int] = {
    "train_max_len": 50,
    "max_steps": 10_000,
    "median_r2": 0.95,
    "letters": 26,
    "task_vocab": 30,
    "eval_strings_per_length": 12,
    "lr": 1e-5,
    "train_min_len": 5,
    "context": 2048,
}

_FNV_OFFSET, _FNV_PRIME = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)


@dataclass(frozen=True)
class CopyTask:
    """The x|x task over an alphabet of ``alphabet_size`` symbols (|V| = alphabet_size, task vocab |V|+4).

    Raises:
        ValueError: if alphabet_size < 2 (one symbol has a single string per length: nothing to copy).
    """

    alphabet_size: int = 26

    def __post_init__(self) -> None:
        check_int("alphabet_size", self.alphabet_size, minimum=2, maximum=100_000)

    start = property(lambda self: self.alphabet_size)
    sep = property(lambda self: self.alphabet_size + 1)
    end = property(lambda self: self.alphabet_size + 2)
    pad = property(lambda self: self.alphabet_size + 3)
    d_vocab = property(lambda self: self.alphabet_size + 4)

    def seq_len(self, n: int) -> int:
        """Tokens of one example with |x| = n: 2n + 3."""
        return 2 * n + 3

    def max_length(self, context: int) -> int:
        """The longest |x| whose example fits a context of ``context`` tokens: ⌊(context − 3)/2⌋."""
        return (context - 3) // 2

    def check_lengths(self, name: str, lengths, context: int | None) -> list[int]:
        """Validate a non-empty list of string lengths ≥ 1 that fit ``context`` tokens (None: no limit)."""
        lengths = [lengths] if isinstance(lengths, (int, np.integer)) else list(lengths)
        if not lengths:
            raise ValueError(f"{name} must be a non-empty list of string lengths, got an empty one")
        top = None if context is None else self.max_length(context)
        for n in lengths:
            check_int(f"{name} entry", n, minimum=1)
            if top is not None and n > top:
                raise ValueError(
                    f"{name} entry {n} exceeds the context: an example needs 2n+3 = {2 * n + 3} tokens but the "
                    f"model holds {context}; the longest string is {top}"
                )
        return [int(n) for n in lengths]

    def decode(self, ids) -> str:
        """Readable text of task ids: symbols as a–z (then ⟨k⟩), specials as ^ | $ and · for PAD."""
        special = {self.start: "^", self.sep: "|", self.end: "$", self.pad: "·"}
        return "".join(special.get(int(i), chr(97 + int(i)) if int(i) < 26 else f"⟨{int(i)}⟩") for i in ids)


def string_split(strings: np.ndarray) -> np.ndarray:
    """(N,) bool: True for the evaluation split, False for training. ``strings``: (N, n) symbol ids."""
    strings = np.asarray(strings)
    h = np.full(strings.shape[0], _FNV_OFFSET, dtype=np.uint64)
    with np.errstate(over="ignore"):
        h = (h ^ np.uint64(strings.shape[1])) * _FNV_PRIME
        for col in strings.T.astype(np.uint64):
            h = (h ^ col) * _FNV_PRIME
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return (h >> np.uint64(63)).astype(bool)


def sample_strings(task: CopyTask, rng: np.random.Generator, n: int, count: int, split: str) -> np.ndarray:
    """(count, n) int64 uniform strings of length n from ``split`` ("train" or "eval").

    Strings are drawn i.i.d. uniformly then kept if they hash into ``split`` (rejection, about half kept).
    For tiny spaces (|V|^n < 4·count) strings may repeat within a batch.

    Raises:
        ValueError: on n < 1, count < 1, an unknown split, or a split with no string of length n.
    """
    n = check_int("n", n, minimum=1)
    count = check_int("count", count, minimum=1)
    if split not in ("train", "eval"):
        raise ValueError(f"split must be 'train' or 'eval', got {split!r}")
    want_eval = split == "eval"
    out, have = [], 0
    for _ in range(200):
        draw = rng.integers(0, task.alphabet_size, size=(2 * count + 8, n), dtype=np.int64)
        keep = draw[string_split(draw) == want_eval]
        out.append(keep)
        have += len(keep)
        if have >= count:
            return np.concatenate(out)[:count]
    raise ValueError(f"split {split!r} has (almost) no strings of length {n} over {task.alphabet_size} symbols")


def encode_batch(task: CopyTask, strings: list[np.ndarray]) -> dict[str, torch.Tensor]:
    """Encode strings (any lengths) as ``input_ids``, ``attention_mask``, ``labels``, each (B, T).

    T = 2·max n + 3; padding is PAD on the right with attention 0 and label −100.
    """
    T = max(task.seq_len(len(s)) for s in strings)
    ids = np.full((len(strings), T), task.pad, dtype=np.int64)
    labels = np.full((len(strings), T), -100, dtype=np.int64)
    mask = np.zeros((len(strings), T), dtype=np.int64)
    for b, s in enumerate(strings):
        n = len(s)
        row = np.concatenate([[task.start], s, [task.sep], s, [task.end]])
        ids[b, : len(row)] = row
        mask[b, : len(row)] = 1
        labels[b, n + 2 : 2 * n + 3] = row[n + 2 :]  # the copy and END
    return {
        "input_ids": torch.from_numpy(ids),
        "attention_mask": torch.from_numpy(mask),
        "labels": torch.from_numpy(labels),
    }


def wilson_interval(k, n, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for k successes out of n (elementwise). Returns (low, high) in [0, 1]."""
    from scipy.stats import norm

    check_real("confidence", confidence, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError("wilson_interval needs 0 <= k <= n and n >= 1")
    z = norm.ppf(0.5 + confidence / 2)
    p = k / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    return np.clip(np.minimum(centre - half, p), 0, 1), np.clip(np.maximum(centre + half, p), 0, 1)


@contextlib.contextmanager
def cpu_threads(n: int | None):
    """Run the block with ``torch.set_num_threads(n)`` (None: unchanged), restoring the old value.

    The task models here are tiny: on a busy 2-core machine two intra-op threads made training 12×
    slower than one (measured: 166 s against 13 s for 300 steps of the smoke preset).
    """
    old = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(check_int("threads", n, minimum=1))
    try:
        yield
    finally:
        torch.set_num_threads(old)


@torch.no_grad()
def teacher_forced_exact(model, task: CopyTask, strings: np.ndarray) -> np.ndarray:
    """(N,) bool: argmax correct at every copy position under teacher forcing (== greedy exact match)."""
    batch = encode_batch(task, list(strings))
    dev = next(model.parameters()).device
    logits = model(input_ids=batch["input_ids"].to(dev), attention_mask=batch["attention_mask"].to(dev)).logits
    n = strings.shape[1]
    pred = logits[:, n + 1 : 2 * n + 1].argmax(-1).cpu()  # (B, n) predictions of the copy
    return (pred == torch.from_numpy(np.asarray(strings))).all(-1).numpy()


@torch.no_grad()
def greedy_copy(model, task: CopyTask, strings: np.ndarray) -> np.ndarray:
    """(N, n) greedy continuation of ``[START, x, SEP]`` for n tokens (same-length batch, KV cache)."""
    strings = np.asarray(strings)
    N, n = strings.shape
    dev = next(model.parameters()).device
    prompt = np.concatenate([np.full((N, 1), task.start), strings, np.full((N, 1), task.sep)], axis=1)
    ids = torch.from_numpy(prompt).to(dev)
    out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
    cache, step = out.cache, out.logits[:, -1].argmax(-1)  # (N,)
    result = [step]
    for _ in range(n - 1):
        out = model(input_ids=step[:, None], cache=cache, use_cache=True)
        cache, step = out.cache, out.logits[:, -1].argmax(-1)
        result.append(step)
    return torch.stack(result, 1).cpu().numpy()


def evaluate_copying(
    model,
    task: CopyTask,
    lengths,
    n_strings: int = 50,
    seed: int = 0,
    batch_size: int = 64,
    confidence: float = 0.95,
    show_progress: bool = True,
    threads: int | None = 1,
) -> dict[str, np.ndarray]:
    """Exact match and character accuracy against length on held-out strings, by greedy decoding.

    Args:
        model: a causal LM over the task vocabulary (``model(input_ids).logits``: (B, T, |V|+4)).
        lengths: non-empty list of string lengths n ≥ 1, each with 2n+3 ≤ the model's context.
        n_strings: strings per length (≥ 50 for the book's intervals; any ≥ 1 accepted).
        seed: seed of the evaluation stream (strings of the evaluation split only).
        batch_size: strings decoded together; results do not depend on it.
        threads: CPU threads for the evaluation (None: torch's setting; see :func:`cpu_threads`).

    Returns:
        Arrays over lengths: ``length``, ``exact`` (count), ``n``, ``exact_rate``, ``ci_low``,
        ``ci_high`` (Wilson, ``confidence``), ``char_acc`` (mean fraction of correct symbols).

    Raises:
        ValueError: on empty lengths, a length beyond the context, n_strings or batch_size < 1.
    """
    from accessibility_lib.ground.progress import progress

    context = getattr(model.config, "max_position_embeddings", None)
    lengths = task.check_lengths("lengths", lengths, context)
    n_strings = check_int("n_strings", n_strings, minimum=1)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    was_training = model.training
    model.eval()
    exact, chars = [], []
    with cpu_threads(threads):
        for n in progress(lengths, desc="copying eval", total=len(lengths)) if show_progress else lengths:
            rng = np.random.default_rng([seed, 1, n])  # eval stream: (seed, 1, n); training: (seed, 0)
            xs = sample_strings(task, rng, n, n_strings, "eval")
            hits = np.concatenate(
                [
                    greedy_copy(model, task, xs[i : i + batch_size]) == xs[i : i + batch_size]
                    for i in range(0, n_strings, batch_size)
                ]
            )  # (n_strings, n)
            exact.append(int(hits.all(1).sum()))
            chars.append(float(hits.mean()))
    model.train(was_training)
    k, total = np.array(exact), np.full(len(lengths), n_strings)
    lo, hi = wilson_interval(k, total, confidence)
    return {
        "length": np.array(lengths),
        "exact": k,
        "n": total,
        "exact_rate": k / total,
        "ci_low": lo,
        "ci_high": hi,
        "char_acc": np.array(chars),
    }
