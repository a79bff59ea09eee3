"""Argmax cells of the unembedding: which token wins at a point, and 2-D slices of the cells.

The argmax cell of token i (paper §1, Fig 1) is

    E_i = { x in R^d : (W_U x + b_U)_i >= (W_U x + b_U)_j for all j },

a convex polyhedron (a cone through the origin when b_U = 0). It is NOT the Voronoi cell of the row
f_i of W_U: argmin_i ||x - f_i|| = argmax_i (f_i . x - ||f_i||^2 / 2), which differs from
argmax_i f_i . x whenever the rows have unequal norms (the paper's replication code measured the
Voronoi assignment; :func:`nearest_rows` gives it for comparison).

Functions:

- :func:`argmax_tokens` — the argmax cell of every point, chunked over points and vocabulary.
- :func:`nearest_rows` — the Voronoi (nearest-row) assignment, same chunking.
- :func:`cell_volumes` — Monte Carlo volume fractions of the cells inside a region.

2-D slices of the cells (Fig 1) are in :mod:`accessibility_lib.geometry.slices`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from accessibility_lib.ground.checks import check_int, check_positive_real

__all__ = [
    "argmax_tokens",
    "nearest_rows",
    "compute_dtype_for",
    "CellVolumes",
    "cell_volumes",
]


def compute_dtype_for(*dtypes: torch.dtype) -> torch.dtype:
    """The dtype the cell computations run in: float64 if any input is float64, else float32.

    Half-precision inputs (bf16, fp16) are upcast to float32 so that the argmax does not depend on
    the accumulation order of a low-precision matmul; float64 is kept for exact tests.
    """
    return torch.float64 if any(dt == torch.float64 for dt in dtypes) else torch.float32


def as_tensor(name: str, value, ndim: int) -> torch.Tensor:
    """``value`` (a tensor, a NumPy array or a nested list of reals) as a non-empty tensor with ``ndim`` dimensions.

    Raises:
        ValueError: not real numbers, the wrong number of dimensions, or empty; the message names ``name``.
    """
    if isinstance(value, np.ndarray):
        value = torch.from_numpy(np.ascontiguousarray(value))
    if not isinstance(value, torch.Tensor):
        try:
            value = torch.as_tensor(np.asarray(value, dtype=np.float64))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be a real array or tensor, got {type(value).__name__}") from exc
    if not (value.is_floating_point() or value.dtype in (torch.int32, torch.int64)):
        raise ValueError(f"{name} must hold real numbers, got dtype {value.dtype}")
    if value.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {tuple(value.shape)}")
    if value.numel() == 0:
        raise ValueError(f"{name} must not be empty, got shape {tuple(value.shape)}")
    return value


def _argmax_multi(points, W_U, biases, *, point_chunk: int, vocab_chunk: int, compute_dtype=None) -> list[torch.Tensor]:
    """argmax_i (points @ W_U.T + bias)_i for each bias in ``biases`` (None = no bias), one matmul.

    Runs on W_U's device in ``compute_dtype``; returns CPU int64 tensors (N,). Ties go to the lowest id.
    """
    points = as_tensor("points", points, 2)  # (N, d)
    W_U = as_tensor("W_U", W_U, 2)  # (V, d)
    if points.shape[1] != W_U.shape[1]:
        raise ValueError(
            f"points must have shape (N, d_model={W_U.shape[1]}) to match W_U {tuple(W_U.shape)}, got {tuple(points.shape)}"
        )
    V = W_U.shape[0]
    dev = W_U.device
    dt = compute_dtype or compute_dtype_for(points.dtype, W_U.dtype)
    bs = []
    for b in biases:
        if b is None:
            bs.append(None)
            continue
        b = as_tensor("b_U", b, 1)
        if b.shape[0] != V:
            raise ValueError(f"b_U must have shape (d_vocab={V},), got {tuple(b.shape)}")
        bs.append(b.to(device=dev, dtype=dt))
    x = points.to(device=dev, dtype=dt)  # (N, d)
    if not torch.isfinite(x).all():
        raise ValueError("points must contain only finite numbers (found NaN or inf)")
    N = x.shape[0]
    best_val = [torch.full((N,), -torch.inf, device=dev, dtype=dt) for _ in bs]
    best_idx = [torch.zeros((N,), device=dev, dtype=torch.int64) for _ in bs]
    with torch.no_grad():
        for v0 in range(0, V, vocab_chunk):
            W = W_U[v0 : v0 + vocab_chunk].to(dtype=dt).T.contiguous()  # (d, c): converted once per chunk
            for p0 in range(0, N, point_chunk):
                logits = x[p0 : p0 + point_chunk] @ W  # (n, c)
                for k, b in enumerate(bs):
                    if b is None:
                        block = logits
                    elif k == len(bs) - 1:
                        block = logits.add_(b[v0 : v0 + W.shape[1]])  # last use of logits: in place
                    else:
                        block = logits + b[v0 : v0 + W.shape[1]]
                    val, idx = block.max(dim=1)  # first maximum within the chunk
                    if v0 == 0:
                        best_val[k][p0 : p0 + point_chunk] = val
                        best_idx[k][p0 : p0 + point_chunk] = idx
                        continue
                    bv, bi = best_val[k][p0 : p0 + point_chunk], best_idx[k][p0 : p0 + point_chunk]
                    better = val > bv  # strict: earlier chunks win ties -> lowest id overall
                    bv.copy_(torch.where(better, val, bv))
                    bi.copy_(torch.where(better, idx + v0, bi))
    return [i.cpu() for i in best_idx]


def argmax_tokens(
    points, W_U, b_U=None, *, chunk: int = 8192, point_chunk: int = 2048, compute_dtype: torch.dtype | None = None
) -> torch.Tensor:
    """The argmax cell of each point: argmax_i (W_U x + b_U)_i (paper §1, the cells E_i).

    Args:
        points: (N, d_model) tensor or array, any float dtype and device.
        W_U: (d_vocab, d_model) unembedding matrix, any float dtype and device. The work runs on
            W_U's device (points are moved there; W_U is never copied whole).
        b_U: optional (d_vocab,) bias (None or zeros: no bias).
        chunk: vocabulary rows per block (memory is point_chunk x chunk numbers).
        point_chunk: points per block.
        compute_dtype: dtype of the computation; default :func:`compute_dtype_for` (float64 if
            either input is float64, else float32 — bf16/fp16 inputs are upcast).

    Returns:
        (N,) int64 CPU tensor of token ids. Ties go to the lowest token id.

    Raises:
        ValueError: wrong shapes (points not (N, d_model), b_U not (d_vocab,)), empty or non-finite
            points, bad chunk sizes.
    """
    chunk = check_int("chunk", chunk, minimum=1)
    point_chunk = check_int("point_chunk", point_chunk, minimum=1)
    return _argmax_multi(points, W_U, [b_U], point_chunk=point_chunk, vocab_chunk=chunk, compute_dtype=compute_dtype)[0]


def nearest_rows(
    points, W_U, *, chunk: int = 8192, point_chunk: int = 2048, compute_dtype: torch.dtype | None = None
) -> torch.Tensor:
    """The Voronoi cell of each point: argmin_i ||x - f_i|| over the rows f_i of W_U (no bias).

    Computed as argmax_i (f_i . x - ||f_i||^2 / 2). This is what the paper's replication code
    measured; it differs from :func:`argmax_tokens` when the rows' norms differ.

    Returns:
        (N,) int64 CPU tensor of row ids. Same arguments and errors as :func:`argmax_tokens`.
    """
    chunk = check_int("chunk", chunk, minimum=1)
    point_chunk = check_int("point_chunk", point_chunk, minimum=1)
    W = as_tensor("W_U", W_U, 2)
    dt = compute_dtype or compute_dtype_for(as_tensor("points", points, 2).dtype, W.dtype)
    half_sq = -0.5 * (W.to(dt) ** 2).sum(dim=1)  # (V,)
    return _argmax_multi(points, W, [half_sq], point_chunk=point_chunk, vocab_chunk=chunk, compute_dtype=dt)[0]


# ----------------------------------------------------------------------------------------------
# Monte Carlo volumes of the argmax cells inside a region (paper Section 5.3)
# ----------------------------------------------------------------------------------------------


@dataclass
class CellVolumes:
    """Per-token volume fractions |E_t ∩ R| / |R| of the argmax cells inside a region R.

    Attributes:
        counts: (d_vocab,) int64 hits per token among ``n_samples`` uniform points of R.
        n_samples: number of points drawn.
        seed: seed of the draw (the result is a deterministic function of it).
    """

    counts: np.ndarray
    n_samples: int
    seed: int

    @property
    def fractions(self) -> np.ndarray:
        """(d_vocab,) estimated fractions p_t = counts/n_samples (they sum to 1)."""
        return self.counts / self.n_samples

    @property
    def stderr(self) -> np.ndarray:
        """(d_vocab,) binomial standard errors sqrt(p(1−p)/n_samples) of :attr:`fractions`."""
        p = self.fractions
        return np.sqrt(p * (1.0 - p) / self.n_samples)

    @property
    def n_no_hit(self) -> int:
        """Number of tokens whose cell got no sample (its fraction is below ~3/n_samples at 95%)."""
        return int(np.sum(self.counts == 0))

    def log_p(self, method: str = "good-turing", pseudo_count: float = 0.5) -> np.ndarray:
        """(d_vocab,) ln p_t for the convolution, with a finite value for the tokens that got no hit.

        Methods for the unseen tokens (their fractions are below the Monte Carlo resolution):

        - ``"good-turing"`` (default): the unseen tokens together own the missing mass, estimated by
          Good–Turing as N₁/n (N₁ = tokens hit exactly once) plus a rule-of-three margin 3/n, spread
          evenly over them (even spreading maximises Σ ln p for a fixed total: the least favourable,
          i.e. conservative, choice); the seen tokens keep counts/n.
        - ``"pseudo-count"``: each unseen token gets ``pseudo_count``/n (½ by default): a much larger
          value when many tokens are unseen, so a looser (larger) refined slope.

        Raises:
            ValueError: on an unknown method or ``pseudo_count`` outside (0, 1].
        """
        pc = check_positive_real("pseudo_count", pseudo_count)
        if pc > 1:
            raise ValueError(f"pseudo_count must be in (0, 1], got {pc}")
        n, counts = self.n_samples, self.counts
        if method == "pseudo-count":
            return np.log(np.where(counts > 0, counts, pc) / n)
        if method != "good-turing":
            raise ValueError(f"method must be 'good-turing' or 'pseudo-count', got {method!r}")
        unseen = int(np.sum(counts == 0))
        if unseen == 0:
            return np.log(counts / n)
        missing = min(1.0, (np.sum(counts == 1) + 3.0) / n)
        return np.log(np.where(counts > 0, counts / n, missing / unseen))


def cell_volumes(
    W_U,
    b_U,
    region,
    n_samples: int,
    seed: int = 0,
    *,
    chunk: int = 65536,
    vocab_chunk: int = 8192,
    point_chunk: int = 2048,
    compute_dtype: torch.dtype | None = None,
    progress_desc: str | None = None,
) -> CellVolumes:
    """Monte Carlo fractions of the argmax cells (with bias) inside ``region`` (paper Section 5.3).

    Draws ``n_samples`` points uniform in the region (in chunks of ``chunk`` points, each from one
    CPU ``torch.Generator`` seeded with ``seed``, so the result depends only on ``seed`` and
    ``chunk``), assigns each to its argmax cell argmax_t (W_U x + b_U)_t with :func:`argmax_tokens`
    (chunked over points and vocabulary, on W_U's device: CPU or CUDA) and counts. Not Voronoi cells
    (the replication code's mistake; see the book's appendix on conventions).

    Args:
        W_U: (d_vocab, d_model) unembedding, any float dtype, on the device to compute on.
        b_U: (d_vocab,) bias or None.
        region: any object with ``sample(n, generator) -> (n, d_model)`` tensor of points uniform in
            it (the regions of :mod:`accessibility_lib.geometry.support_shape`).
        n_samples: points to draw, ≥ 1.
        seed: seed of the generator.
        chunk: points drawn per step.
        vocab_chunk, point_chunk: block sizes of the argmax.
        compute_dtype: default float32 (float64 when W_U is float64).
        progress_desc: label of the progress bar.

    Returns:
        :class:`CellVolumes` with counts, fractions, binomial standard errors and the no-hit count.

    Raises:
        ValueError: on n_samples < 1, a region without ``sample``, samples of the wrong shape or
            non-finite, W_U/b_U of the wrong shape.
    """
    from accessibility_lib.ground.progress import progress

    n_samples = check_int("n_samples", n_samples, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    chunk = check_int("chunk", chunk, minimum=1)
    if not callable(getattr(region, "sample", None)):
        raise ValueError(f"region must have a sample(n, generator) method, got {type(region).__name__}")
    W = as_tensor("W_U", W_U, 2)
    dt = compute_dtype or (torch.float64 if W.dtype == torch.float64 else torch.float32)
    counts = torch.zeros(W.shape[0], dtype=torch.int64)
    g = torch.Generator().manual_seed(seed)
    steps = range(0, n_samples, chunk)
    for start in progress(steps, desc=progress_desc or "cell volumes", total=len(steps)):
        n = min(chunk, n_samples - start)
        x = region.sample(n, g)
        if not isinstance(x, torch.Tensor) or x.ndim != 2 or x.shape != (n, W.shape[1]):
            raise ValueError(
                f"region.sample({n}, g) must return a tensor of shape ({n}, {W.shape[1]}), got {getattr(x, 'shape', type(x))}"
            )
        ids = argmax_tokens(x.to(dt), W, b_U, chunk=vocab_chunk, point_chunk=point_chunk, compute_dtype=dt)  # (n,)
        counts += torch.bincount(ids, minlength=W.shape[0])
    return CellVolumes(counts=counts.numpy(), n_samples=n_samples, seed=seed)
