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
- :func:`plane_through`, :func:`pca_plane` — an orthonormal 2-D plane in R^d.
- :func:`argmax_slice` — the token-id image of a plane on a grid (argmax and Voronoi), computed
  exactly and fast by restricting the logits to the plane (they are affine in the plane
  coordinates, so the slice is a 2-D problem with 3 numbers per token).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ._checks import check_int, check_positive_real

__all__ = [
    "argmax_tokens",
    "nearest_rows",
    "compute_dtype_for",
    "Plane",
    "plane_through",
    "pca_plane",
    "Slice",
    "argmax_slice",
    "plane_candidates",
    "CellVolumes",
    "cell_volumes",
]


def compute_dtype_for(*dtypes: torch.dtype) -> torch.dtype:
    """The dtype the cell computations run in: float64 if any input is float64, else float32.

    Half-precision inputs (bf16, fp16) are upcast to float32 so that the argmax does not depend on
    the accumulation order of a low-precision matmul; float64 is kept for exact tests.
    """
    return torch.float64 if any(dt == torch.float64 for dt in dtypes) else torch.float32


def _as_tensor(name: str, value, ndim: int) -> torch.Tensor:
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
    points = _as_tensor("points", points, 2)  # (N, d)
    W_U = _as_tensor("W_U", W_U, 2)  # (V, d)
    if points.shape[1] != W_U.shape[1]:
        raise ValueError(f"points must have shape (N, d_model={W_U.shape[1]}) to match W_U {tuple(W_U.shape)}, got {tuple(points.shape)}")
    V = W_U.shape[0]
    dev = W_U.device
    dt = compute_dtype or compute_dtype_for(points.dtype, W_U.dtype)
    bs = []
    for b in biases:
        if b is None:
            bs.append(None)
            continue
        b = _as_tensor("b_U", b, 1)
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


def argmax_tokens(points, W_U, b_U=None, *, chunk: int = 8192, point_chunk: int = 2048, compute_dtype: torch.dtype | None = None) -> torch.Tensor:
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


def nearest_rows(points, W_U, *, chunk: int = 8192, point_chunk: int = 2048, compute_dtype: torch.dtype | None = None) -> torch.Tensor:
    """The Voronoi cell of each point: argmin_i ||x - f_i|| over the rows f_i of W_U (no bias).

    Computed as argmax_i (f_i . x - ||f_i||^2 / 2). This is what the paper's replication code
    measured; it differs from :func:`argmax_tokens` when the rows' norms differ.

    Returns:
        (N,) int64 CPU tensor of row ids. Same arguments and errors as :func:`argmax_tokens`.
    """
    chunk = check_int("chunk", chunk, minimum=1)
    point_chunk = check_int("point_chunk", point_chunk, minimum=1)
    W = _as_tensor("W_U", W_U, 2)
    dt = compute_dtype or compute_dtype_for(_as_tensor("points", points, 2).dtype, W.dtype)
    half_sq = -0.5 * (W.to(dt) ** 2).sum(dim=1)  # (V,)
    return _argmax_multi(points, W, [half_sq], point_chunk=point_chunk, vocab_chunk=chunk, compute_dtype=dt)[0]


# ----------------------------------------------------------------------------------------------
# 2-D slices of the cells
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plane:
    """An affine 2-D plane {origin + u * basis[0] + v * basis[1]} in R^d_model (float64, CPU).

    Attributes:
        origin: (d_model,) the plane's point at (u, v) = (0, 0).
        basis: (2, d_model) orthonormal rows.
        scale: the plane's length unit for ``extent`` (see :func:`plane_through`, :func:`pca_plane`).
        anchors_uv: (k, 2) plane coordinates of the points that defined the plane.
    """

    origin: torch.Tensor
    basis: torch.Tensor
    scale: float
    anchors_uv: np.ndarray

    def points(self, uv) -> torch.Tensor:
        """(n, d_model) float64 points at plane coordinates ``uv`` (n, 2)."""
        uv = torch.as_tensor(np.asarray(uv, dtype=np.float64))
        return self.origin + uv @ self.basis


def plane_through(anchors) -> Plane:
    """The plane through three points (the paper's Fig 1 uses three last-layer embeddings).

    Origin: the anchors' centroid; basis[0] along anchors[1] - anchors[0]; basis[1] the
    Gram-Schmidt remainder of anchors[2] - anchors[0]. ``scale`` = the largest anchor distance from
    the origin, so ``extent=1`` just contains the anchors.

    Args:
        anchors: (3, d_model) points, any float dtype/device.

    Raises:
        ValueError: not three points, or the three points are (nearly) collinear.
    """
    A = _as_tensor("anchors", anchors, 2).detach().to(device="cpu", dtype=torch.float64)
    if A.shape[0] != 3:
        raise ValueError(f"anchors must have shape (3, d_model), got {tuple(A.shape)}")
    origin = A.mean(dim=0)
    e1 = A[1] - A[0]
    n1 = e1.norm()
    e2 = A[2] - A[0]
    e2 = e2 - (e2 @ e1) / (n1**2) * e1 if n1 > 0 else e2
    n2 = e2.norm()
    spread = (A - origin).norm(dim=1).max()
    if n1 <= 1e-9 * max(float(spread), 1.0) or n2 <= 1e-9 * max(float(spread), 1.0):
        raise ValueError("anchors must be three points that are not collinear (they span no plane)")
    basis = torch.stack([e1 / n1, e2 / n2])  # (2, d)
    uv = ((A - origin) @ basis.T).numpy()  # (3, 2)
    return Plane(origin=origin, basis=basis, scale=float(spread), anchors_uv=uv)


def pca_plane(samples) -> Plane:
    """The plane through the mean of ``samples`` spanned by their top-2 principal directions.

    ``scale`` = 2 x the standard deviation along the first principal direction, so ``extent=1``
    holds most samples; ``anchors_uv`` are the samples' plane coordinates.

    Args:
        samples: (n, d_model) points with n >= 3.

    Raises:
        ValueError: fewer than 3 samples, or samples that do not spread in two directions.
    """
    X = _as_tensor("samples", samples, 2).detach().to(device="cpu", dtype=torch.float64)
    if X.shape[0] < 3:
        raise ValueError(f"samples must have at least 3 rows, got shape {tuple(X.shape)}")
    origin = X.mean(dim=0)
    _, S, Vh = torch.linalg.svd(X - origin, full_matrices=False)
    if S.shape[0] < 2 or S[1] <= 1e-12 * max(float(S[0]), 1.0):
        raise ValueError("samples must spread in at least two directions (rank < 2)")
    basis = Vh[:2]  # (2, d)
    std1 = float(S[0]) / max(X.shape[0] - 1, 1) ** 0.5
    uv = ((X - origin) @ basis.T).numpy()
    return Plane(origin=origin, basis=basis, scale=2.0 * std1, anchors_uv=uv)


def _plane_coefficients(plane: Plane, W_U, b_U=None, *, voronoi: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(V, 3) float64 coefficients [p, q, a] with score_i(u, v) = a_i + u p_i + v q_i on the plane,
    for the logits (W_U x + b_U), and (if ``voronoi``) for the nearest-row scores f_i . x - ||f_i||^2 / 2
    (no bias), from one pass over W_U. Returns (coef, voronoi_coef or None).
    """
    W = _as_tensor("W_U", W_U, 2)
    if W.shape[1] != plane.origin.shape[0]:
        raise ValueError(f"W_U must have shape (d_vocab, d_model={plane.origin.shape[0]}), got {tuple(W.shape)}")
    B = torch.cat([plane.basis, plane.origin[None]], dim=0).to(device=W.device)  # (3, d)
    coefs, sqs = [], []
    for v0 in range(0, W.shape[0], 16384):
        Wc = W[v0 : v0 + 16384].to(torch.float64)  # (c, d)
        coefs.append((Wc @ B.T).cpu())  # (c, 3)
        if voronoi:
            sqs.append((Wc * Wc).sum(1).cpu())
    coef = torch.cat(coefs)
    vcoef = None
    if voronoi:
        vcoef = coef.clone()
        vcoef[:, 2] -= 0.5 * torch.cat(sqs)
    if b_U is not None:
        b = _as_tensor("b_U", b_U, 1)
        if b.shape[0] != W.shape[0]:
            raise ValueError(f"b_U must have shape (d_vocab={W.shape[0]},), got {tuple(b.shape)}")
        coef[:, 2] += b.detach().to(device="cpu", dtype=torch.float64)
    return coef, vcoef


def plane_candidates(coef: torch.Tensor) -> np.ndarray:
    """Token ids that can win somewhere on the (infinite) plane, from (V, 3) coefficients [p, q, a].

    max_i (a_i + u p_i + v q_i) is the support function of the points (p_i, q_i, a_i) in the
    direction (u, v, 1): token i wins somewhere iff its point is a vertex of their convex hull with
    an incident facet whose outward normal has a positive third component. Computed with Qhull
    (scipy); falls back to every token when the hull is degenerate. The result may be a superset
    (near-flat facets are kept), never a subset up to ties.
    """
    from scipy.spatial import ConvexHull, QhullError

    P = coef.numpy()
    keep = np.unique(P, axis=0, return_index=True)[1]  # duplicate rows: keep the lowest id (ties go low)
    try:
        hull = ConvexHull(P[keep])
    except (QhullError, ValueError):
        return np.arange(P.shape[0])
    upper = hull.equations[:, 2] > -1e-12 * np.abs(hull.equations[:, :3]).max()
    return np.sort(keep[np.unique(hull.simplices[upper])])


@dataclass
class Slice:
    """A 2-D slice of the argmax cells on a grid.

    Attributes:
        tokens: (resolution, resolution) int64 token ids of the argmax cells; row j is v[j]
            (bottom to top when drawn with ``origin="lower"``), column i is u[i].
        voronoi: same shape, the nearest-row (Voronoi) ids, or None.
        u, v: (resolution,) plane coordinates of the pixel centres (model-space length units).
        plane: the :class:`Plane`.
        center: (2,) plane coordinates of the grid centre; half_width: its half side length.
        n_cells_plane: how many argmax cells meet the whole infinite plane (hull count).
        n_voronoi_plane: how many Voronoi cells meet the whole plane (-1 when not computed).
    """

    tokens: np.ndarray
    voronoi: np.ndarray | None
    u: np.ndarray
    v: np.ndarray
    plane: Plane
    center: np.ndarray
    half_width: float
    n_cells_plane: int
    n_voronoi_plane: int = -1

    @property
    def n_cells(self) -> int:
        """Distinct argmax tokens in the grid."""
        return int(np.unique(self.tokens).size)

    @property
    def frac_differ(self) -> float:
        """Fraction of grid pixels where the Voronoi and argmax assignments differ (NaN without voronoi)."""
        return float("nan") if self.voronoi is None else float(np.mean(self.voronoi != self.tokens))


def _slice_ids(coef: torch.Tensor, uv1: torch.Tensor, check_uv1: torch.Tensor) -> tuple[np.ndarray, int]:
    """Grid ids (N,) over the hull candidates, and the number of cells meeting the whole plane."""
    cand = torch.as_tensor(plane_candidates(coef))
    n_plane = int(cand.numel())
    # safety net: on a coarse grid, the winners over all tokens must be candidates
    full = argmax_tokens(check_uv1, coef, point_chunk=512)
    missing = torch.as_tensor(np.setdiff1d(full.numpy(), cand.numpy()))
    if missing.numel():
        cand = torch.sort(torch.cat([cand, missing])).values
    ids = argmax_tokens(uv1, coef[cand], chunk=4096, point_chunk=16384)
    return cand[ids].numpy(), n_plane


def argmax_slice(plane: Plane, W_U, b_U=None, *, resolution: int = 200, extent: float = 1.5, center=(0.0, 0.0), voronoi: bool = True) -> Slice:
    """Token-id image of the argmax cells (and optionally the Voronoi cells) on a plane.

    On the plane x = origin + u e_1 + v e_2 the logits are affine in (u, v):
    (W_U x + b_U)_i = a_i + u p_i + v q_i, so the slice is an argmax over 3 numbers a token.
    Only the tokens whose (p_i, q_i, a_i) lie on the upper convex hull can win anywhere
    (:func:`plane_candidates`); the grid argmax runs over those, in float64. Equal (up to
    floating-point ties at cell boundaries) to :func:`argmax_tokens` on the grid's points.

    Args:
        plane: from :func:`plane_through` or :func:`pca_plane`.
        W_U: (d_vocab, d_model); b_U: (d_vocab,) or None.
        resolution: grid pixels per side (>= 2).
        extent: half side length of the square, in units of ``plane.scale``.
        center: (2,) grid centre, in units of ``plane.scale`` (for zooming).
        voronoi: also compute the nearest-row (Voronoi) image.

    Returns:
        :class:`Slice`.

    Raises:
        ValueError: bad resolution/extent/center, W_U or b_U of the wrong shape.
    """
    resolution = check_int("resolution", resolution, minimum=2, maximum=4096)
    extent = check_positive_real("extent", extent)
    c = np.asarray(center, dtype=np.float64)
    if c.shape != (2,) or not np.all(np.isfinite(c)):
        raise ValueError(f"center must be two finite numbers (plane coordinates / scale), got {center!r}")
    hw = extent * plane.scale
    c = c * plane.scale
    offs = (np.arange(resolution) + 0.5) / resolution * 2 * hw - hw  # pixel centres
    u, v = c[0] + offs, c[1] + offs
    uu, vv = np.meshgrid(u, v)  # (res, res): rows = v
    uv1 = torch.as_tensor(np.stack([uu.ravel(), vv.ravel(), np.ones(uu.size)], axis=1))  # (N, 3)
    cg = np.linspace(-hw, hw, 17)
    cu, cv = np.meshgrid(c[0] + cg, c[1] + cg)
    check = torch.as_tensor(np.stack([cu.ravel(), cv.ravel(), np.ones(cu.size)], axis=1))
    coef, vcoef = _plane_coefficients(plane, W_U, b_U, voronoi=voronoi)
    tokens, n_plane = _slice_ids(coef, uv1, check)
    tokens = tokens.reshape(resolution, resolution)
    vor, n_vor = None, -1
    if voronoi:
        vor, n_vor = _slice_ids(vcoef, uv1, check)
        vor = vor.reshape(resolution, resolution)
    return Slice(tokens=tokens, voronoi=vor, u=u, v=v, plane=plane, center=c, half_width=hw, n_cells_plane=n_plane, n_voronoi_plane=n_vor)


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
    (the replication code's mistake, PAPER.md §6).

    Args:
        W_U: (d_vocab, d_model) unembedding, any float dtype, on the device to compute on.
        b_U: (d_vocab,) bias or None.
        region: any object with ``sample(n, generator) -> (n, d_model)`` tensor of points uniform in
            it (the regions of :mod:`accessibility_lib.geometry`).
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
    from .progress import progress

    n_samples = check_int("n_samples", n_samples, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    chunk = check_int("chunk", chunk, minimum=1)
    if not callable(getattr(region, "sample", None)):
        raise ValueError(f"region must have a sample(n, generator) method, got {type(region).__name__}")
    W = _as_tensor("W_U", W_U, 2)
    dt = compute_dtype or (torch.float64 if W.dtype == torch.float64 else torch.float32)
    counts = torch.zeros(W.shape[0], dtype=torch.int64)
    g = torch.Generator().manual_seed(seed)
    steps = range(0, n_samples, chunk)
    for start in progress(steps, desc=progress_desc or "cell volumes", total=len(steps)):
        n = min(chunk, n_samples - start)
        x = region.sample(n, g)
        if not isinstance(x, torch.Tensor) or x.ndim != 2 or x.shape != (n, W.shape[1]):
            raise ValueError(f"region.sample({n}, g) must return a tensor of shape ({n}, {W.shape[1]}), got {getattr(x, 'shape', type(x))}")
        ids = argmax_tokens(x.to(dt), W, b_U, chunk=vocab_chunk, point_chunk=point_chunk, compute_dtype=dt)  # (n,)
        counts += torch.bincount(ids, minlength=W.shape[0])
    return CellVolumes(counts=counts.numpy(), n_samples=n_samples, seed=seed)
