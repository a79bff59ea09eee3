"""The ε a model really shows: how far a prompt (or h) must move before the greedy output changes.

The paper's precision ε (Assumption 4.3: the model is constant on every cube of an ε-grid) is a
modelling device. This module measures the corresponding quantity on a real model, at typical
prompts: the smallest L∞ perturbation that changes

- the **next token** (the argmax at the last position), and
- the **n-token greedy output** (any of the first n greedily decoded tokens),

in two places:

1. **the soft prompt** X ∈ R^{m×d} (the model's input vectors). Along a direction u with ‖u‖∞ = 1,
   t*(X, u) = the smallest t ≥ 0 at which the output of X + t·u differs from that of X. It is found
   on a geometric grid t_j = ‖X‖∞·2^{j/g} (g points per octave, from 2^−30·‖X‖∞ to 16·‖X‖∞, every grid
   point evaluated) and refined by bisection between the last unchanged grid point and the first changed
   one. The perturbed prompt is rounded to the model's dtype before it is read, so a perturbation below
   half the dtype's spacing of a coordinate changes nothing: the dtype's own grid is part of what is
   measured. This finds the first change *seen on the grid*: a sliver of another output thinner than one
   grid step before it can be missed, so t* is an upper bound on the first crossing along u.
2. **the last-layer embedding** h (the final hidden state after the final norm, which the unembedding
   reads: logits z = W_U h + b_U). Here everything is exact and closed form, because the argmax cells
   are polyhedra: with i the argmax and Δ_j = z_i − z_j ≥ 0,

       smallest L∞ change of h that lets token j win:   Δ_j / ‖w_i − w_j‖₁  (Hölder: L1 is dual to L∞),
       along a direction u (‖u‖∞ = 1):                  Δ_j / max(0, (w_j − w_i)·u)  (∞ if ≤ 0),

   minimised over j ≠ i. For the n-token output the same bounded change is allowed at every step of
   the greedy trajectory (h_1 … h_n of the unperturbed decoding), so its t* is the minimum over steps.
   Computed in float64 from the model's weights (the exact geometry of the cells, no rounding).

**Effective ε.** The paper's accessible sequences need a ball B(X, ε/2) inside one output region
(Def 4.1), so the quantity comparable with ε is the *diameter* 2·t*. :func:`summarize` reports
ε_eff = 2·median(t*) over prompts and random directions, or (h space, ``over="worst"``) over prompts of
the exact smallest perturbation in any direction, with a cluster-bootstrap interval (prompts resampled,
each with all its directions) and low quantiles. Random directions in d dimensions overestimate the
distance to the nearest other output by a large factor (most of a random direction is parallel to the
cell's faces): the worst-direction value is the one that matches "inputs closer than ε give the same
output" at a prompt. It enters the bounds as an ordinary given ε
(:meth:`EffectiveEps.convention`): C = d·ln(1 + 2r/ε_eff)/ln|V| (ball), Σ_i ln(1 + 2r_i/ε_eff)/ln|V|
(ellipsoid).

**What this can and cannot show.** It measures how sensitive the model is at *typical* prompts (natural
text, random directions). The theorem needs the *worst case*: a model constant on every cube of an
ε-grid. No real model is: every cube that a cell boundary crosses holds two outputs, so Assumption 4.3
holds for no ε larger than the dtype's own spacing, and the measured minimum over a sample can only
over-estimate the true minimum. ε_eff is therefore not a precision the theorem can use with a guarantee;
it says at what scale a typical prompt's output stops changing, i.e. how coarse a grid would have to be
for *most* of it to be constant. The exact worst-case statement for finite precision is the dtype's
count of representable inputs (:mod:`accessibility_lib.theory.fp_grid`), which needs no ε at all.

Reproducible: prompts and directions come from seeded generators (``seed``); the same seed gives the
same numbers on the same machine and dtype.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import torch

from accessibility_lib.ground.checks import check_int, check_real

if TYPE_CHECKING:
    from accessibility_lib.models.handle import ModelHandle

__all__ = [
    "NoSoftPromptError",
    "Sensitivity",
    "random_directions",
    "natural_prompts",
    "check_soft_prompt_path",
    "prompt_decoder",
    "prompt_sensitivity",
]


class NoSoftPromptError(ValueError):
    """The model cannot read input vectors (no ``inputs_embeds`` path), so a soft prompt cannot be perturbed."""


@dataclass
class Sensitivity:
    """Smallest output-changing perturbations for P prompts and K directions.

    Attributes:
        space: ``"prompt"`` (the soft prompt X) or ``"h"`` (the last-layer embedding).
        what: ``"next token"`` or ``"n-token output"``.
        n_tokens: tokens of the greedy output compared (1 for the next token).
        t: (P, K) smallest L∞ perturbation along each direction (units of the embeddings); inf when the
            output did not change up to the largest perturbation tried.
        scale: (P,) ‖X‖∞ (prompt space) or ‖h‖∞ (h space) of each prompt.
        worst: (P,) exact smallest L∞ perturbation over *all* directions (h space only; None otherwise).
        dtype: the model's dtype. seed: seed of prompts and directions. model: model name.
        settings: the search settings (grid, bisection).
    """

    space: str
    what: str
    n_tokens: int
    t: np.ndarray
    scale: np.ndarray
    worst: np.ndarray | None = None
    dtype: str = "float32"
    seed: int = 0
    model: str = "model"
    settings: dict = field(default_factory=dict)

    @property
    def relative(self) -> np.ndarray:
        """(P, K) t / scale: the perturbation relative to the prompt's largest coordinate."""
        return self.t / self.scale[:, None]


def random_directions(shape: tuple[int, ...], n_directions: int, seed: int = 0) -> torch.Tensor:
    """``n_directions`` Gaussian directions of ``shape`` scaled to ‖u‖∞ = 1: (K, *shape) float32.

    A Gaussian direction normalised in L∞ has exactly one coordinate of magnitude 1 (almost surely),
    the coordinate that reaches a grid face first.

    Raises:
        ValueError: n_directions < 1.
    """
    n_directions = check_int("n_directions", n_directions, minimum=1)
    gen = torch.Generator().manual_seed(int(seed))
    u = torch.randn((n_directions, *shape), generator=gen, dtype=torch.float64)
    u = u / u.flatten(1).abs().amax(1).view(-1, *([1] * len(shape)))
    return u.float()


def natural_prompts(handle: ModelHandle, n_prompts: int, m: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Hard prompts of natural text as input vectors: ``(ids (P, m), X (P, m, d) float32)``.

    Windows of the book's held-out text (:func:`accessibility_lib.models.text.natural_targets`) tokenized by the
    model's tokenizer, embedded as the model consumes them (``handle.embed``). A handle without a
    tokenizer gets uniformly random token ids instead (seeded).

    Raises:
        ValueError: bad counts.
    """
    n_prompts = check_int("n_prompts", n_prompts, minimum=1)
    m = check_int("m", m, minimum=1)
    if getattr(handle, "tokenizer", None) is not None:
        from accessibility_lib.models.text import natural_targets

        ids = natural_targets(handle.tokenizer, m, n_prompts, seed=seed)
    else:
        gen = torch.Generator().manual_seed(int(seed))
        ids = torch.randint(0, int(handle.d_vocab), (n_prompts, m), generator=gen)
    return ids, handle.embed(ids).float().cpu()


def check_soft_prompt_path(handle: ModelHandle) -> None:
    """Raise :class:`NoSoftPromptError` unless ``handle.model`` reads input vectors.

    A soft prompt needs ``model(inputs_embeds=...)`` and the model's input embedding (``handle.embed``).
    """
    model = getattr(handle, "model", None)
    name = getattr(handle, "name", type(handle).__name__)
    if model is None or not callable(getattr(handle, "embed", None)):
        raise NoSoftPromptError(
            f"{name!r} has no soft-prompt path: a model handle with .model and .embed is needed "
            "(accessibility_lib.models.loading.load_model gives one), or pass a decoder callable"
        )
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        params = {}
    if "inputs_embeds" not in params:
        raise NoSoftPromptError(
            f"{name!r} ({type(model).__name__}) has no soft-prompt path: its forward takes no inputs_embeds, "
            "so its input vectors cannot be set or perturbed"
        )


def prompt_decoder(handle: ModelHandle, n_tokens: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """A decoder X (B, m, d) -> (B, n_tokens) greedy tokens (KV-cache decoding, as ``generate``).

    Raises:
        NoSoftPromptError: the model reads no input vectors.
    """
    from accessibility_lib.models.decoding import greedy_decode

    check_soft_prompt_path(handle)
    n_tokens = check_int("n_tokens", n_tokens, minimum=1)
    return lambda x: greedy_decode(handle, x, n_tokens).cpu()


def _decode_batched(decoder, x: torch.Tensor, batch_size: int) -> torch.Tensor:
    return torch.cat([torch.as_tensor(decoder(x[i : i + batch_size])) for i in range(0, x.shape[0], batch_size)])


@torch.no_grad()
def prompt_sensitivity(
    model,
    prompts: torch.Tensor,
    n_tokens: int = 4,
    n_directions: int = 8,
    *,
    seed: int = 0,
    grid_per_octave: int = 2,
    low: float = 2.0**-30,
    high: float = 16.0,
    bisect_steps: int = 10,
    batch_size: int = 512,
    dtype: str | None = None,
    name: str | None = None,
) -> tuple[Sensitivity, Sensitivity]:
    """Smallest L∞ perturbation of the soft prompt that changes the next token / the n-token output.

    Args:
        model: a model handle (:func:`~accessibility_lib.models.loading.load_model`), or a decoder callable
            X (B, m, d) -> (B, n_tokens) token ids (any function of its input, e.g. a test model).
        prompts: (P, m, d) input vectors (e.g. :func:`natural_prompts`).
        n_tokens: length n of the greedy output compared (≥ 1).
        n_directions: K random directions per prompt (:func:`random_directions`, seed ``seed``).
        grid_per_octave: g, grid points per factor 2 of t.
        low, high: the grid spans [low, high]·‖X‖∞ (relative to each prompt's largest coordinate).
        bisect_steps: halvings (in log t) of the bracket around the first change on the grid.
        batch_size: prompts decoded per call.
        dtype, name: labels (default: the handle's dtype and name).

    Returns:
        ``(next_token, n_token_output)``: two :class:`Sensitivity` with t of shape (P, K).

    Raises:
        NoSoftPromptError: a handle whose model reads no input vectors.
        ValueError: bad shapes or settings.
    """
    if callable(model) and not hasattr(model, "model"):
        decoder, label, dt = model, name or getattr(model, "__name__", "decoder"), dtype or "float32"
    else:
        decoder = prompt_decoder(model, n_tokens)
        label = name or str(getattr(model, "name", "model"))
        dt = dtype or str(next(model.model.parameters()).dtype).replace("torch.", "")
    x = torch.as_tensor(prompts).float().cpu()
    if x.ndim != 3 or min(x.shape) == 0:
        raise ValueError(f"prompts must be a (P, m, d) tensor of input vectors, got shape {tuple(x.shape)}")
    n_tokens = check_int("n_tokens", n_tokens, minimum=1)
    g = check_int("grid_per_octave", grid_per_octave, minimum=1, maximum=64)
    low = check_real("low", low, minimum=0.0, min_inclusive=False)
    high = check_real("high", high, minimum=low, min_inclusive=False)
    bisect_steps = check_int("bisect_steps", bisect_steps, minimum=0, maximum=60)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    P, K = x.shape[0], check_int("n_directions", n_directions, minimum=1)
    u = random_directions(tuple(x.shape[1:]), P * K, seed=seed).view(P, K, *x.shape[1:])  # (P, K, m, d)
    scale = x.flatten(1).abs().amax(1).double()  # (P,)
    if not bool((scale > 0).all()):
        raise ValueError("every prompt needs a non-zero coordinate (the grid is relative to ‖X‖∞)")
    base = _decode_batched(decoder, x, batch_size)[:, :n_tokens]  # (P, n)
    if base.shape[1] < n_tokens:
        raise ValueError(f"the decoder returned {base.shape[1]} tokens, fewer than n_tokens = {n_tokens}")
    n_grid = int(math.floor(g * math.log2(high / low))) + 1
    rel = low * 2.0 ** (np.arange(n_grid) / g)  # (G,)
    rows_x = x[:, None].expand(P, K, *x.shape[1:]).reshape(P * K, *x.shape[1:])  # (R, m, d)
    rows_u = u.reshape(P * K, *x.shape[1:])
    rows_base = base[:, None].expand(P, K, n_tokens).reshape(P * K, n_tokens)
    rows_scale = scale[:, None].expand(P, K).reshape(-1)  # (R,)

    def changed(t_abs: torch.Tensor, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(r,) bools for the given rows: next token changed, any of the n tokens changed, at t_abs (r,)."""
        xp = (rows_x[rows].double() + t_abs.view(-1, 1, 1) * rows_u[rows].double()).float()
        diff = _decode_batched(decoder, xp, batch_size)[:, :n_tokens] != rows_base[rows]
        return diff[:, 0], diff.any(1)

    R = P * K
    first_next = torch.full((R,), -1, dtype=torch.long)  # first grid index with a changed next token
    first_any = torch.full((R,), -1, dtype=torch.long)
    for j in range(n_grid):
        rows = torch.nonzero((first_any < 0) | (first_next < 0))[:, 0]
        if rows.numel() == 0:
            break
        c_next, c_any = changed(rows_scale[rows] * rel[j], rows)
        first_next[rows[(first_next[rows] < 0) & c_next]] = j
        first_any[rows[(first_any[rows] < 0) & c_any]] = j
    results = []
    grid = torch.as_tensor(rel, dtype=torch.float64)
    for which, first in (("next", first_next), ("any", first_any)):
        found = first >= 0
        hi = torch.where(found, rows_scale * grid[first.clamp(min=0)], torch.full((R,), math.inf, dtype=torch.float64))
        lo = torch.where(found & (first > 0), rows_scale * grid[(first - 1).clamp(min=0)],
                         torch.zeros(R, dtype=torch.float64))  # fmt: skip
        rows = torch.nonzero(found)[:, 0]
        for _ in range(bisect_steps if rows.numel() else 0):
            mid = torch.where(lo[rows] > 0, torch.sqrt(lo[rows] * hi[rows]), hi[rows] / 2)  # geometric midpoint
            c_next, c_any = changed(mid, rows)
            c = c_next if which == "next" else c_any
            hi[rows] = torch.where(c, mid, hi[rows])
            lo[rows] = torch.where(c, lo[rows], mid)
        results.append(hi.view(P, K).numpy())
    settings = {"grid_per_octave": g, "low": low, "high": high, "bisect_steps": bisect_steps, "n_grid": n_grid,
                "directions": "Gaussian, L∞-normalised", "decode": "greedy (KV cache)"}  # fmt: skip
    common = dict(space="prompt", scale=scale.numpy(), dtype=dt, seed=int(seed), model=label, settings=settings)
    return (
        Sensitivity(what="next token", n_tokens=1, t=results[0], **common),
        Sensitivity(what=f"{n_tokens}-token output", n_tokens=n_tokens, t=results[1], **common),
    )
