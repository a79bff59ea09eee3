"""The ε a model shows in last-layer space: how far h can move before a greedy token changes.

For each prompt the distance from h(X) to the nearest face of its argmax cell (exactly, from W_U and
b_U) and along random directions; summaries of those distances give the "effective ε" rows of Table 1
and of chapter 7 (:func:`model_effective_eps`). The input-space counterpart is
:mod:`accessibility_lib.experiments.perturbation`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from accessibility_lib.experiments.perturbation import (
    Sensitivity,
    check_soft_prompt_path,
    natural_prompts,
    prompt_sensitivity,
    random_directions,
)
from accessibility_lib.ground.checks import check_int, check_real

if TYPE_CHECKING:
    from accessibility_lib.models.handle import ModelHandle


@dataclass(frozen=True)
class EffectiveEps:
    """ε_eff = 2·(a quantile of t*) with its interval (see the module docstring).

    Attributes:
        eps: 2·median(t*) (or 2·the requested quantile), units of the embeddings.
        ci: (low, high) cluster-bootstrap interval of ``eps`` at ``level``.
        q05: 2·(5 % quantile of t*): a sensitive prompt's scale. min_seen: 2·min(t*) over the sample.
        relative: ε_eff / median scale (‖X‖∞ or ‖h‖∞).
        n_prompts, n_directions, space, what, dtype, model, level, quantile: what was measured
            (``n_directions`` 0: the exact smallest perturbation over all directions, h space).
        n_unchanged: directions along which the output never changed (t* = inf; they enter the median
            as +inf, so they can only raise it).
    """

    eps: float
    ci: tuple[float, float]
    q05: float
    min_seen: float
    relative: float
    n_prompts: int
    n_directions: int
    space: str
    what: str
    dtype: str
    model: str
    level: float
    quantile: float
    n_unchanged: int

    def convention(self):
        """This ε as a :class:`~accessibility_lib.theory.precision.EpsConvention` (for the bounds)."""
        from accessibility_lib.theory.precision import EpsConvention

        return EpsConvention(
            name=f"ε_eff ({self.space}, {self.model}) = {self.eps:.3g}",
            description=(
                f"effective ε of {self.model}: 2 × the {self.quantile:.0%} quantile of the smallest L∞ "
                f"perturbation of the {'soft prompt' if self.space == 'prompt' else 'last-layer embedding h'} "
                f"that changes the {self.what} ({self.n_prompts} prompts × "
                f"{self.n_directions or 'all'} directions, {self.dtype})"
            ),
            absolute=float(self.eps),
        )


def h_margin_distances(h, W_U, b_U=None, directions=None, chunk: int = 4096) -> tuple[np.ndarray, np.ndarray | None]:
    """Exact smallest L∞ change of last-layer embeddings that changes their argmax token.

    Args:
        h: (N, d) last-layer embeddings. W_U: (V, d) unembedding. b_U: (V,) bias or None.
        directions: optional (N, K, d) or (K, d) directions with ‖u‖∞ = 1 (shared by every row when 2-D).
        chunk: vocabulary rows per block (memory).

    Returns:
        ``(worst, along)``: (N,) min_j Δ_j/‖w_i − w_j‖₁ over all directions, and (N, K) the distance
        along each direction (inf when no token gains along it), or None without directions. float64.
        Ties (Δ_j = 0) give 0.

    Raises:
        ValueError: shape mismatches.
    """
    h = torch.as_tensor(h).double().cpu()
    W = torch.as_tensor(W_U).double().cpu()
    if h.ndim != 2 or W.ndim != 2 or h.shape[1] != W.shape[1]:
        raise ValueError(f"h must be (N, d) and W_U (V, d) with the same d, got {tuple(h.shape)} and {tuple(W.shape)}")
    b = torch.zeros(W.shape[0], dtype=torch.float64) if b_U is None else torch.as_tensor(b_U).double().cpu()
    if b.shape != (W.shape[0],):
        raise ValueError(f"b_U must have shape ({W.shape[0]},), got {tuple(b.shape)}")
    N = h.shape[0]
    u = None
    if directions is not None:
        u = torch.as_tensor(directions).double().cpu()
        if u.ndim == 2:
            u = u[None].expand(N, *u.shape)
        if u.ndim != 3 or u.shape[0] != N or u.shape[2] != h.shape[1]:
            raise ValueError(f"directions must be (N, K, d) or (K, d) with d = {h.shape[1]}, got {tuple(u.shape)}")
    z = h @ W.T + b  # (N, V)
    top = z.argmax(1)  # (N,)
    w_top = W[top]  # (N, d)
    z_top = z.gather(1, top[:, None])  # (N, 1)
    worst = torch.full((N,), math.inf, dtype=torch.float64)
    along = None if u is None else torch.full((N, u.shape[1]), math.inf, dtype=torch.float64)
    for s in range(0, W.shape[0], chunk):
        Wc = W[s : s + chunk]  # (c, d)
        delta = (z_top - z[:, s : s + chunk]).clamp(min=0)  # (N, c)
        l1 = (w_top[:, None, :] - Wc[None]).abs().sum(-1)  # (N, c)
        own = (torch.arange(s, s + Wc.shape[0])[None] == top[:, None]) | (l1 == 0)
        dist = torch.where(own, torch.full_like(delta, math.inf), delta / l1.clamp(min=1e-300))
        worst = torch.minimum(worst, dist.min(1).values)
        if u is not None:
            gain = torch.einsum("nkd,cd->nkc", u, Wc) - torch.einsum("nkd,nd->nk", u, w_top)[..., None]  # (N, K, c)
            t = torch.where((gain > 0) & ~own[:, None, :], delta[:, None, :] / gain.clamp(min=1e-300),
                            torch.full_like(gain, math.inf))  # fmt: skip
            along = torch.minimum(along, t.min(2).values)
    return worst.numpy(), None if along is None else along.numpy()


@torch.no_grad()
def greedy_trajectory_embeddings(
    handle: ModelHandle, prompts: torch.Tensor, n_tokens: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The last-layer embeddings h_1 … h_n along the greedy continuation of soft prompts.

    Returns:
        ``(tokens (P, n), h (P, n, d) float32)``: h_k is the embedding from which token k is read, i.e.
        of the input [X, t_1 … t_{k−1}].

    Raises:
        NoSoftPromptError: the model reads no input vectors.
    """
    from accessibility_lib.models.decoding import greedy_decode

    check_soft_prompt_path(handle)
    n_tokens = check_int("n_tokens", n_tokens, minimum=1)
    x = torch.as_tensor(prompts).to(device=handle.device)
    tokens = greedy_decode(handle, x, n_tokens)  # (P, n)
    hs = []
    for k in range(n_tokens):
        inp = x if k == 0 else torch.cat([x.to(handle.dtype), handle.embed(tokens[:, :k]).to(handle.dtype)], 1)
        hs.append(handle.final_embeddings(inputs_embeds=inp).float().cpu())
    return tokens.cpu(), torch.stack(hs, 1)


def h_sensitivity(
    handle: ModelHandle, prompts: torch.Tensor, n_tokens: int = 4, n_directions: int = 8, *, seed: int = 0
) -> tuple[Sensitivity, Sensitivity]:
    """Exact smallest L∞ change of h that changes the next token / the n-token output (module docstring).

    The next token: the cell distance of h_1. The n-token output: the minimum over the steps k of the
    cell distance of h_k (the same bounded change allowed at every step; the same direction at every
    step for the directional values).

    Returns:
        ``(next_token, n_token_output)`` :class:`Sensitivity` (space ``"h"``) with the exact ``worst``.

    Raises:
        NoSoftPromptError: the model reads no input vectors.
    """
    x = torch.as_tensor(prompts).float()
    if x.ndim != 3:
        raise ValueError(f"prompts must be a (P, m, d) tensor of input vectors, got shape {tuple(x.shape)}")
    n_tokens = check_int("n_tokens", n_tokens, minimum=1)
    _, hs = greedy_trajectory_embeddings(handle, x, n_tokens)  # (P, n, d)
    P, d = hs.shape[0], hs.shape[2]
    K = check_int("n_directions", n_directions, minimum=1)
    u = random_directions((d,), P * K, seed=seed).view(P, K, d)
    worst, along = [], []
    for k in range(n_tokens):
        w, a = h_margin_distances(hs[:, k], handle.W_U, handle.b_U, directions=u)
        worst.append(w)
        along.append(a)
    worst, along = np.stack(worst, 1), np.stack(along, 1)  # (P, n), (P, n, K)
    scale = hs[:, 0].abs().amax(1).double().numpy()
    common = dict(
        space="h",
        scale=scale,
        dtype=str(handle.dtype).replace("torch.", ""),
        seed=int(seed),
        model=str(getattr(handle, "name", "model")),
        settings={"method": "exact (argmax-cell geometry)"},
    )
    return (
        Sensitivity(what="next token", n_tokens=1, t=along[:, 0], worst=worst[:, 0], **common),
        Sensitivity(what=f"{n_tokens}-token output", n_tokens=n_tokens, t=along.min(1), worst=worst.min(1), **common),
    )


def summarize(
    sens: Sensitivity,
    *,
    over: str = "directions",
    quantile: float = 0.5,
    level: float = 0.95,
    n_boot: int = 1000,
    seed: int = 0,
) -> EffectiveEps:
    """ε_eff = 2·(the ``quantile`` of t*), with a cluster-bootstrap interval.

    Args:
        sens: a measurement.
        over: ``"directions"``: t* over prompts × random directions; ``"worst"``: the exact smallest
            perturbation over *all* directions, one per prompt (h space only: the L∞ distance from h to
            the nearest face of its argmax cell, the closest input with another output).
        quantile: which quantile (0.5: the median). level: interval level. n_boot: bootstrap resamples.
        seed: seed of the bootstrap.

    The bootstrap resamples prompts (each with all its directions: directions at one prompt are not
    independent draws of the model's sensitivity) ``n_boot`` times; the interval is the percentile
    interval at ``level``.

    Raises:
        ValueError: an unknown ``over`` (or ``"worst"`` without an exact worst case), quantile or level
            outside (0, 1), n_boot < 10, an empty sample.
    """
    quantile = check_real("quantile", quantile, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    level = check_real("level", level, minimum=0.0, maximum=1.0, min_inclusive=False, max_inclusive=False)
    n_boot = check_int("n_boot", n_boot, minimum=10)
    if over not in ("directions", "worst"):
        raise ValueError(f"over must be 'directions' or 'worst', got {over!r}")
    if over == "worst" and sens.worst is None:
        raise ValueError(f"over='worst' needs the exact worst case, which only the h space has (got {sens.space!r})")
    t = np.asarray(sens.t if over == "directions" else np.asarray(sens.worst)[:, None], dtype=np.float64)
    if t.ndim != 2 or t.size == 0:
        raise ValueError(f"the sensitivity holds no measurement (t has shape {t.shape})")
    P, K = t.shape
    flat = t.ravel()
    eps = 2.0 * float(np.quantile(flat, quantile, method="inverted_cdf"))
    rng = np.random.default_rng(seed)
    boots = np.empty(n_boot)
    for b in range(n_boot):
        idx = rng.integers(0, P, size=P)
        boots[b] = 2.0 * np.quantile(t[idx].ravel(), quantile, method="inverted_cdf")
    a = (1 - level) / 2
    ci = (float(np.quantile(boots, a)), float(np.quantile(boots, 1 - a)))
    return EffectiveEps(
        eps=eps,
        ci=ci,
        q05=2.0 * float(np.quantile(flat, 0.05, method="inverted_cdf")),
        min_seen=2.0 * float(flat.min()),
        relative=eps / float(np.median(sens.scale)),
        n_prompts=P,
        n_directions=K if over == "directions" else 0,
        space=sens.space,
        what=sens.what,
        dtype=sens.dtype,
        model=sens.model,
        level=level,
        quantile=quantile,
        n_unchanged=int(np.isinf(flat).sum()),
    )


def model_effective_eps(
    handle: ModelHandle,
    *,
    space: str = "h",
    n_prompts: int = 64,
    m: int = 4,
    n_directions: int = 8,
    n_tokens: int = 1,
    seed: int = 0,
    quantile: float = 0.5,
    over: str | None = None,
) -> EffectiveEps:
    """The effective ε of a model at natural-text prompts: one call for a Table 1 row.

    Args:
        handle: a model handle (:func:`~accessibility_lib.models.loading.load_model`).
        space: ``"h"`` (the last-layer embedding: the space whose radius r the paper's bounds use; exact
            and fast) or ``"prompt"`` (the soft prompt, by search; slower).
        n_prompts, m: natural-text prompts of m tokens (:func:`natural_prompts`, seed ``seed``).
        n_directions: random directions per prompt. n_tokens: 1 = the next token; n > 1 = the n-token output.
        quantile: the quantile of t* (0.5: the median).
        over: ``"worst"`` (default in h space: per prompt, the exact smallest perturbation over all
            directions, i.e. the L∞ distance to the nearest other output) or ``"directions"`` (random
            directions; the only choice in prompt space).

    Returns:
        :class:`EffectiveEps`; ``.eps`` is the ε to use, ``.convention()`` an ``EpsConvention``.

    Raises:
        ValueError: an unknown ``space`` or bad counts. NoSoftPromptError: no soft-prompt path.
    """
    if space not in ("h", "prompt"):
        raise ValueError(f"space must be 'h' or 'prompt', got {space!r}")
    check_soft_prompt_path(handle)
    _, x = natural_prompts(handle, n_prompts, m, seed=seed)
    if space == "h":
        pair = h_sensitivity(handle, x, n_tokens=n_tokens, n_directions=n_directions, seed=seed)
    else:
        pair = prompt_sensitivity(handle, x, n_tokens=n_tokens, n_directions=n_directions, seed=seed)
    over = over or ("worst" if space == "h" else "directions")
    return summarize(pair[0] if n_tokens == 1 else pair[1], over=over, quantile=quantile, seed=seed)
