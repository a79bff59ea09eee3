"""Measuring the mean-field premises on real attention, and the mean-field bound's comparisons.

Thm 4.9 of Meyer et al. 2026 (arXiv 2605.22223, Section 4.3) bounds the number of accessible
sequences independently of the prompt length m by viewing the model as a map on empirical measures.
That view rests on two structural facts of attention without positions and without a causal mask
(Sander et al. 2022): (i) permutation equivariance L(Xσ) = L(X)σ and (ii) duplication invariance
L([X, X])_{:,i} = L(X)_{:,i}; and on Assumption 4.8 (W_q precision). This module measures

* :func:`permutation_deviation`, :func:`duplication_deviation`, :func:`structural_sweep` — how far a
  forward pass (any of :data:`accessibility_lib.theory.positionfree.CASES`) is from (i) and (ii), per layer
  and at the last position's next-token distribution (total variation), against m;
* :func:`lipschitz_pairs` — W_q between prompts' measures against the total-variation change of the
  next-token distribution, for pairs of prompts that share their last vector;
* :func:`finite_m_loglog`, :func:`crossover_log_m`, :func:`mean_field_log10_threshold` — ln ln of the
  finite-m bound (Thm 4.5) to set against ``bounds.mean_field_loglog_count`` (Thm 4.9), the prompt
  length past which the mean-field bound is the tighter one, and the Cor 4.10 length threshold.

Prompts are (batch, m, d_model) tensors (``inputs_embeds``); a forward is a callable
``inputs_embeds -> ForwardOutput``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch

from accessibility_lib.ground.checks import check_int, check_real
from accessibility_lib.ground.progress import progress
from accessibility_lib.theory import bounds
from accessibility_lib.theory.measures import wasserstein
from accessibility_lib.theory.positionfree import ForwardOutput

__all__ = [
    "total_variation",
    "random_prompts",
    "permutation_deviation",
    "duplication_deviation",
    "structural_sweep",
    "lipschitz_pairs",
    "lipschitz_summary",
    "readout_moves",
    "finite_m_loglog",
    "crossover_log_m",
    "mean_field_log10_threshold",
]

Forward = Callable[[torch.Tensor], ForwardOutput]


def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """TV(p, q) = ½ Σ_v |p_v − q_v| along the last axis: (..., d_vocab) × 2 -> (...), in [0, 1]."""
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same shape, got {tuple(p.shape)} and {tuple(q.shape)}")
    return 0.5 * (p.double() - q.double()).abs().sum(-1)


def _rel_dev(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Relative deviation ‖a − b‖ / ‖b‖ over positions and width: (B, T, d) × 2 -> (B,)."""
    num = (a.double() - b.double()).flatten(1).norm(dim=1)
    return num / b.double().flatten(1).norm(dim=1).clamp_min(1e-30)


def random_prompts(handle: object, batch: int, m: int, generator: torch.Generator) -> torch.Tensor:
    """(batch, m, d_model) hard prompts: token ids drawn uniformly in [0, |V|), embedded by the model itself.

    The ids go through :meth:`accessibility_lib.models.handle.ModelHandle.embed`, the input-embedding module the
    model calls on ``input_ids`` (so Gemma's √d scale is included): fed as ``inputs_embeds`` they give
    the model's own logits for those ids. Raw rows of the embedding weight are *not* the model's inputs
    for every architecture, and are never used here.

    Args:
        handle: a :class:`~accessibility_lib.models.handle.ModelHandle` (``.embed(ids)``, ``.d_vocab``).
        batch, m: number of prompts and their length (≥ 1 each).
        generator: torch random generator of the ids.

    Raises:
        ValueError: if ``handle`` is not a model handle, or batch, m < 1.
    """
    if not (callable(getattr(handle, "embed", None)) and isinstance(getattr(handle, "d_vocab", None), int)):
        raise ValueError(
            "handle must be a model handle with .embed(ids) and .d_vocab (accessibility_lib.models.loading.load_model or "
            f"wrap_model), got {type(handle).__name__}: hard prompts come from the model's own embedding module"
        )
    batch = check_int("batch", batch, minimum=1)
    m = check_int("m", m, minimum=1)
    ids = torch.randint(0, handle.d_vocab, (batch, m), generator=generator)  # (batch, m)
    return handle.embed(ids).detach().float().cpu()  # (batch, m, d)


def _non_identity_perm(k: int, generator: torch.Generator) -> torch.Tensor:
    """A uniformly random permutation of range(k), k ≥ 2, redrawn until it is not the identity."""
    while True:
        p = torch.randperm(k, generator=generator)
        if not torch.equal(p, torch.arange(k)):
            return p


def permutation_deviation(
    forward: Forward, X: torch.Tensor, generator: torch.Generator, base: ForwardOutput | None = None
) -> dict[str, np.ndarray]:
    """Deviation from permutation equivariance, L(Xσ) vs L(X)σ, for a random σ fixing the last position.

    σ is drawn independently per prompt among the non-identity permutations of the first m − 1
    positions (the last one is kept, so that the next-token distribution read there must be unchanged
    too).

    Args:
        forward: ``inputs_embeds -> ForwardOutput``.
        X: (batch, m, d_model) prompts, m ≥ 3.
        generator: torch random generator.
        base: ``forward(X)`` if already computed (saves one pass).

    Returns:
        ``layers``: (batch, L) relative deviation ‖L_l(Xσ) − L_l(X)σ‖ / ‖L_l(X)‖ for layers l = 1..L;
        ``tv``: (batch,) total variation between the last position's next-token distributions.

    Raises:
        ValueError: if X is not (batch, m ≥ 3, d).
    """
    if X.ndim != 3 or X.shape[1] < 3:
        raise ValueError(
            f"X must have shape (batch, m >= 3, d_model) (a permutation fixing the last of m < 3 positions is the identity), got {tuple(X.shape)}"
        )
    B, m, _ = X.shape
    perm = torch.stack(
        [torch.cat([_non_identity_perm(m - 1, generator), torch.tensor([m - 1])]) for _ in range(B)]
    )  # (B, m)
    idx = perm[:, :, None]
    Xp = torch.gather(X, 1, idx.expand_as(X))
    base = forward(X) if base is None else base
    moved = forward(Xp)
    layers = [
        _rel_dev(hp, torch.gather(h, 1, idx.expand_as(h)))
        for h, hp in zip(base.hidden_states[1:], moved.hidden_states[1:])
    ]
    tv = total_variation(moved.last_probs(), base.last_probs())
    return {"layers": torch.stack(layers, 1).numpy(), "tv": tv.numpy()}


def duplication_deviation(
    forward: Forward, X: torch.Tensor, base: ForwardOutput | None = None
) -> dict[str, np.ndarray]:
    """Deviation from duplication invariance, L([X, X]) vs [L(X), L(X)], per layer and at the last position.

    All 2m positions of the doubled prompt are compared with the tiled single-prompt states (for a
    causal model the first copy matches trivially; the second copy is where duplication shows).

    ``base`` is ``forward(X)`` if already computed.

    Returns:
        ``layers``: (batch, L) relative deviations for layers 1..L; ``tv``: (batch,) total variation
        between the next-token distributions at the last position of [X, X] and of X.

    Raises:
        ValueError: if X is not (batch, m ≥ 1, d).
    """
    if X.ndim != 3 or X.shape[1] < 1:
        raise ValueError(f"X must have shape (batch, m >= 1, d_model), got {tuple(X.shape)}")
    base = forward(X) if base is None else base
    doubled = forward(torch.cat([X, X], dim=1))
    layers = [_rel_dev(h2, torch.cat([h, h], 1)) for h, h2 in zip(base.hidden_states[1:], doubled.hidden_states[1:])]
    tv = total_variation(doubled.last_probs(), base.last_probs())
    return {"layers": torch.stack(layers, 1).numpy(), "tv": tv.numpy()}


def structural_sweep(
    forward: Forward,
    handle: object,
    ms: Sequence[int],
    n_prompts: int,
    seed: int = 0,
    desc: str = "structural sweep",
) -> dict[str, np.ndarray]:
    """Both deviations for random hard prompts at each prompt length m.

    Args:
        forward: ``inputs_embeds -> ForwardOutput``.
        handle: the model handle whose embedding makes the hard prompts (:func:`random_prompts`).
        ms: prompt lengths (each ≥ 3); n_prompts: prompts per length; seed: of the ids and permutations.
        desc: progress-bar label.

    Returns:
        ``ms`` (k,), ``perm_layers``/``dup_layers`` (k, n_prompts, L), ``perm_tv``/``dup_tv`` (k, n_prompts).

    Raises:
        ValueError: on an empty ``ms``, any m < 3 or n_prompts < 1.
    """
    ms = [check_int("m", m, minimum=3) for m in ms]
    if not ms:
        raise ValueError("ms must contain at least one prompt length")
    n_prompts = check_int("n_prompts", n_prompts, minimum=1)
    gen = torch.Generator().manual_seed(seed)
    out: dict[str, list] = {"perm_layers": [], "perm_tv": [], "dup_layers": [], "dup_tv": []}
    for m in progress(ms, desc=desc):
        X = random_prompts(handle, n_prompts, m, gen)
        base = forward(X)
        p, d = permutation_deviation(forward, X, gen, base), duplication_deviation(forward, X, base)
        out["perm_layers"].append(p["layers"]), out["perm_tv"].append(p["tv"])
        out["dup_layers"].append(d["layers"]), out["dup_tv"].append(d["tv"])
    result = {k: np.stack(v) for k, v in out.items()}
    result["ms"] = np.array(ms)
    return result


KINDS = ("noise", "replace", "drop", "permute")


def lipschitz_pairs(
    forward: Forward,
    handle: object,
    m: int,
    n_pairs: int,
    q: float = 1.0,
    seed: int = 0,
    desc: str = "W_q pairs",
) -> dict[str, np.ndarray]:
    """Pairs of prompts (X, Y) sharing their last vector: W_q(M(X), M(Y)) against TV of the next-token law.

    Y is made from a random hard prompt X of length m (:func:`random_prompts`, through ``handle``'s embedding)
    by one of :data:`KINDS`, cycled: ``noise`` adds
    Gaussian noise of relative size 10^U(−3, 0) (times the RMS norm of X's vectors) to the first m − 1
    vectors; ``replace`` swaps k ~ U{1..m−1} of them for random tokens; ``drop`` deletes k of them
    (Y is shorter: measures compare prompts of different lengths); ``permute`` shuffles them (W_q = 0).

    Returns:
        ``w`` (n_pairs,) W_q in embedding units; ``tv`` (n_pairs,) total variation; ``argmax_changed``
        (n_pairs,) bool; ``kind`` (n_pairs,) str.

    Raises:
        ValueError: on m < 3, n_pairs < 1, q < 1, or ``handle`` not a model handle.
    """
    m = check_int("m", m, minimum=3)
    n_pairs = check_int("n_pairs", n_pairs, minimum=1)
    q = check_real("q", q, minimum=1.0)
    gen = torch.Generator().manual_seed(seed)
    w, tv, changed, kinds = [], [], [], []
    for i in progress(range(n_pairs), desc=desc, total=n_pairs):
        kind = KINDS[i % len(KINDS)]
        X = random_prompts(handle, 1, m, gen)  # (1, m, d)
        rms = float(X[0].double().norm(dim=1).pow(2).mean().sqrt())
        head, last = X[:, :-1], X[:, -1:]
        k = int(torch.randint(1, m, (1,), generator=gen))
        if kind == "noise":
            scale = 10 ** float(torch.empty(1).uniform_(-3, 0, generator=gen)) * rms / math.sqrt(X.shape[-1])
            head2 = head + scale * torch.randn(head.shape, generator=gen)
        elif kind == "replace":
            pos = torch.randperm(m - 1, generator=gen)[:k]
            head2 = head.clone()
            head2[:, pos] = random_prompts(handle, 1, k, gen)
        elif kind == "drop":
            keep = torch.sort(torch.randperm(m - 1, generator=gen)[: m - 1 - min(k, m - 2)]).values
            head2 = head[:, keep]
        else:
            head2 = head[:, torch.randperm(m - 1, generator=gen)]
        Y = torch.cat([head2, last], dim=1)
        px, py = forward(X).last_probs()[0], forward(Y).last_probs()[0]
        w.append(0.0 if kind == "permute" else wasserstein(X[0], Y[0], q=q))
        tv.append(float(total_variation(px, py)))
        changed.append(bool(px.argmax() != py.argmax()))
        kinds.append(kind)
    return {"w": np.array(w), "tv": np.array(tv), "argmax_changed": np.array(changed), "kind": np.array(kinds)}


def lipschitz_summary(pairs: dict[str, np.ndarray]) -> dict[str, float]:
    """Empirical Lipschitz constant TV / W_q over pairs with W_q > 0: median, quartiles, 90th pct, max.

    Also ``tv_at_w0``: the largest TV among pairs with W_q = 0 (permutations; 0 for a map on
    measures), ``flips_at_w0``: how many of those changed the greedy token, and ``w_flip_min``: the smallest W_q at which the argmax changed (NaN if never), an
    empirical precision at the model's argmax; ``n`` and ``n_w0`` count the pairs with W_q > 0 and W_q = 0.

    Raises:
        ValueError: if ``pairs`` lacks the keys of :func:`lipschitz_pairs` or has no pair with W_q > 0.
    """
    try:
        w, tv, ch = np.asarray(pairs["w"]), np.asarray(pairs["tv"]), np.asarray(pairs["argmax_changed"])
    except KeyError as exc:
        raise ValueError(f"pairs must be the output of lipschitz_pairs, missing {exc}") from None
    pos = w > 0
    if not pos.any():
        raise ValueError("pairs must contain at least one pair with W_q > 0")
    ratio = tv[pos] / w[pos]
    q25, med, q75, q90 = np.quantile(ratio, [0.25, 0.5, 0.75, 0.9])
    return {
        "median": float(med),
        "q25": float(q25),
        "q75": float(q75),
        "q90": float(q90),
        "max": float(ratio.max()),
        "tv_at_w0": float(tv[~pos].max()) if (~pos).any() else float("nan"),
        "w_flip_min": float(w[pos & ch].min()) if (pos & ch).any() else float("nan"),
        "n": int(pos.sum()),
        "n_w0": int((~pos).sum()),
        "flips_at_w0": int((~pos & ch).sum()),
    }


def readout_moves(
    forward: Forward, handle: object, m: int, n_prompts: int, seed: int = 0, desc: str = "read-out moved"
) -> dict[str, np.ndarray]:
    """Permutations that move another vector to the read-out (last) position: W_q = 0, the last vector changed.

    A causal LM reads its next token off the last position, so even a model whose layers are maps on
    measures (no mask, no positions) is a function of the measure *and* the last vector. Each prompt X is a
    random hard prompt of length m (:func:`random_prompts`); Y is X with its last vector swapped with another
    position's (drawn uniformly, its token differing from the last one), so M(X) = M(Y).

    Returns:
        ``tv`` (n_prompts,) total variation of the next-token laws; ``argmax_changed`` (n_prompts,) bool.

    Raises:
        ValueError: on m < 2 or n_prompts < 1.
    """
    m = check_int("m", m, minimum=2)
    n_prompts = check_int("n_prompts", n_prompts, minimum=1)
    gen = torch.Generator().manual_seed(seed)
    tv, changed = [], []
    for _ in progress(range(n_prompts), desc=desc, total=n_prompts):
        X = random_prompts(handle, 1, m, gen)  # (1, m, d)
        differ = [j for j in range(m - 1) if not torch.equal(X[0, j], X[0, -1])]
        if not differ:  # every vector equals the last: no permutation moves the read-out
            continue
        j = differ[int(torch.randint(len(differ), (1,), generator=gen))]
        Y = X.clone()
        Y[:, [j, m - 1]] = X[:, [m - 1, j]]
        px, py = forward(X).last_probs()[0], forward(Y).last_probs()[0]
        tv.append(float(total_variation(px, py)))
        changed.append(bool(px.argmax() != py.argmax()))
    return {"tv": np.array(tv), "argmax_changed": np.array(changed, dtype=bool)}


def finite_m_loglog(d: int, r: float, eps: float, m: int) -> float:
    """ln ln of the finite-length bound (1 + 2r/ε)^{d·m} (Thm 4.5): ln(d·m·ln(1 + 2r/ε)).

    Raises:
        ValueError: on d < 1, r ≤ 0, ε ≤ 0, m < 1.
    """
    return math.log(bounds.log_packing_ball(d, r, eps, m))


def crossover_log_m(d: int, r: float, eps: float, q: float = 1.0) -> float:
    """ln m*: for prompts longer than m* the mean-field bound (Thm 4.9) is tighter than Thm 4.5.

    Thm 4.5 gives ln ln = ln m + ln(d·ln(1 + 2r/ε)), growing with m; Thm 4.9 does not depend on m, so
    the two cross at ln m* = loglog_{4.9} − ln(d·ln(1 + 2r/ε)).

    Raises:
        ValueError: as :func:`bounds.mean_field_loglog_count`.
    """
    return bounds.mean_field_loglog_count(d, r, eps, q) - math.log(bounds.log_packing_ball(d, r, eps, 1))


def mean_field_log10_threshold(d: int, r: float, eps: float, d_vocab: int, q: float = 1.0) -> float:
    """log10 n*, the length past which the Cor 4.10 fraction bound drops below 1, prompts of any length.

    n* = ln(#accessible_{4.9}) / ln|V|, so log10 n* = (loglog − ln ln|V|) / ln 10. Finite even when n*
    itself overflows a float (it does for every real model).

    Raises:
        ValueError: as :func:`bounds.mean_field_loglog_count`, and on |V| < 2.
    """
    v = check_int("d_vocab", d_vocab, minimum=2)
    return (bounds.mean_field_loglog_count(d, r, eps, q) - math.log(math.log(v))) / math.log(10.0)
