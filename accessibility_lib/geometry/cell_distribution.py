"""D resolved: ln p_t for a uniform sample of tokens, empty cells certified, and the threshold it gives.

Section 5.3 of the paper models a length-n sequence's cell volume as a product of n independent draws
of p_t, t uniform over V, and calls the sequences of a length inaccessible once the median of
S_n = Σ ln p_{t_i} falls below −ln P(E, ε). This module measures that law D token by token:

1. **Pairwise certificate** (exact, O(d_vocab·d) a token): token j beats t everywhere in the region
   when (a_t − a_j) + h(m_t − m_j) < 0 (h the support function of the unit body: ‖·‖₂ for the ball,
   ‖·‖₁ for the cube; :mod:`accessibility_lib.geometry.cell_problem`). Then p_t = 0.
2. **Resolved volume** for the others: adaptive multilevel splitting
   (:func:`accessibility_lib.geometry.cell_resolve.split_log_volumes`), R independent runs a token,
   ln of their mean and its standard error; cost ~|ln p_t| levels, not 1/p_t points.
3. **LP certificate** (:func:`accessibility_lib.geometry.cell_certificate.max_margin`) for the runs that
   did not finish: empty (a dual certificate), or non-empty/undecided (counted apart, kept out of D).

The threshold keeps the empty cells as what they are: a draw with p_t = 0 makes the whole sequence's
volume 0. With q₀ the share of empty cells and S'_n the sum of n draws from the non-empty part,
P(S_n < x) = 1 − (1 − q₀)^n + (1 − q₀)^n·P(S'_n < x), so the median of S_n is the quantile
1 − 1/(2(1 − q₀)^n) of S'_n (−∞ once (1 − q₀)^n ≤ ½). :func:`crossing_length_with_empty` finds the
length where it falls below −ln P; with q₀ = 0 it is
:func:`accessibility_lib.geometry.convolution.crossing_length`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from accessibility_lib.geometry import convolution
from accessibility_lib.geometry.cell_certificate import max_margin
from accessibility_lib.geometry.cell_problem import CellProblem
from accessibility_lib.geometry.cell_resolve import combine_replicates, split_log_volumes
from accessibility_lib.ground.checks import check_int, check_real

__all__ = [
    "ResolvedCells",
    "pairwise_dominator",
    "resolve_cells",
    "resolve_tokens",
    "resolve_settings",
    "plan_tokens",
    "median_with_empty",
    "crossing_length_with_empty",
    "QUANTILES",
]

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
STATUSES = ("resolved", "empty", "undecided")


@dataclass
class ResolvedCells:
    """ln p_t for a sample of tokens (see the module docstring).

    Attributes:
        tokens: ``(n,)`` token ids, drawn uniformly without replacement from [0, d_vocab).
        log_p: ``(n,)`` ln p̂_t in nats; −inf for an empty cell; NaN for an undecided one.
        se: ``(n,)`` standard error of ln p̂_t (0 for empty, NaN for undecided).
        status: ``(n,)`` one of ``"resolved"``, ``"empty"``, ``"undecided"``.
        certificate: ``(n,)`` how it was decided: ``"splitting"``, ``"pairwise j=<id>"``, ``"lp"``, ``"none"``.
        d_vocab: |V|. settings: the estimator's settings (for the artifact).
        levels: ``(n,)`` splitting levels of each token's last pass (mean over replicates; 0 when the
            pairwise certificate decided it), or None (artifacts written before it was kept).
    """

    tokens: np.ndarray
    log_p: np.ndarray
    se: np.ndarray
    status: np.ndarray
    certificate: np.ndarray
    d_vocab: int
    settings: dict = field(default_factory=dict)
    levels: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = self.tokens.shape[0]
        for name in ("log_p", "se", "status", "certificate") + (("levels",) if self.levels is not None else ()):
            if getattr(self, name).shape != (n,):
                raise ValueError(f"{name} must have shape ({n},) like tokens, got {getattr(self, name).shape}")
        bad = set(self.status.tolist()) - set(STATUSES)
        if bad:
            raise ValueError(f"status must be one of {STATUSES}, got {sorted(bad)}")

    @property
    def resolved(self) -> np.ndarray:
        """``(n,)`` bool: the tokens with a measured, positive p_t."""
        return self.status == "resolved"

    @property
    def q_empty(self) -> float:
        """Share of the decided tokens whose cell misses the region (p_t = 0 exactly)."""
        decided = self.status != "undecided"
        return float((self.status[decided] == "empty").mean()) if decided.any() else 0.0

    def summary(self, unhit_below: float | None = None) -> dict:
        """D's summary: counts, E[ln p] over the non-empty cells with its SE, quantiles, unhit share.

        Args:
            unhit_below: a log-volume (nats), e.g. −ln S for a uniform Monte Carlo of S points; the share
                of Σ ln p from the resolved tokens below it is returned as ``share_unhit`` (the part a
                uniform sample of that size would not have seen).

        Returns:
            ``{"tokens_sampled", "empty", "undecided", "resolved", "q_empty", "mean_log_p", "se_mean",
            "quantiles": {q: value}, "quantile_se": {q: value}, "share_unhit"}`` (nats). ``se_mean`` adds
            the token-sampling variance s²/n and the estimates' own Σ se²/n²; the quantiles' SE is the
            order-statistic (binomial) interval half-width over 2 converted to nats.
        """
        lp, se = self.log_p[self.resolved], self.se[self.resolved]
        n = lp.size
        out = {
            "tokens_sampled": int(self.tokens.size),
            "empty": int((self.status == "empty").sum()),
            "undecided": int((self.status == "undecided").sum()),
            "resolved": int(n),
            "q_empty": self.q_empty,
        }
        if n == 0:
            return {**out, "mean_log_p": math.nan, "se_mean": math.nan, "quantiles": {}, "quantile_se": {}}
        var_tok = float(lp.var(ddof=1)) / n if n > 1 else math.nan
        out["mean_log_p"] = float(lp.mean())
        out["se_mean"] = math.sqrt(var_tok + float(np.sum(se**2)) / n**2)
        srt = np.sort(lp)
        out["quantiles"] = {str(q): float(np.quantile(lp, q)) for q in QUANTILES}
        qse = {}
        for q in QUANTILES:  # ±1 binomial sd of the rank, read on the sorted sample
            k = q * (n - 1)
            dk = math.sqrt(n * q * (1 - q))
            lo, hi = srt[max(0, int(k - dk))], srt[min(n - 1, int(math.ceil(k + dk)))]
            qse[str(q)] = float(hi - lo) / 2
        out["quantile_se"] = qse
        if unhit_below is not None:
            total = float(lp.sum())
            out["share_unhit"] = float(lp[lp < unhit_below].sum() / total) if total < 0 else 0.0
            out["unhit_below"] = float(unhit_below)
        return out

    def to_dict(self) -> dict:
        """JSON-able (−inf and NaN written as None)."""

        def clean(a):
            return [None if not math.isfinite(v) else float(v) for v in a.tolist()]

        out = {
            "tokens": self.tokens.tolist(),
            "log_p": clean(self.log_p),
            "se": clean(self.se),
            "status": self.status.tolist(),
            "certificate": self.certificate.tolist(),
            "d_vocab": int(self.d_vocab),
            "settings": self.settings,
        }
        if self.levels is not None:
            out["levels"] = [float(v) for v in self.levels.tolist()]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> ResolvedCells:
        """The inverse of :meth:`to_dict` (None read as −inf for empty cells, NaN otherwise)."""
        status = np.array(data["status"], dtype=object).astype(str)
        lp = np.array([math.nan if v is None else v for v in data["log_p"]], dtype=np.float64)
        lp[status == "empty"] = -math.inf
        se = np.array([math.nan if v is None else v for v in data["se"]], dtype=np.float64)
        return cls(
            np.asarray(data["tokens"], dtype=np.int64),
            lp,
            se,
            status,
            np.array(data["certificate"], dtype=object).astype(str),
            int(data["d_vocab"]),
            dict(data.get("settings", {})),
            None if data.get("levels") is None else np.asarray(data["levels"], dtype=np.float64),
        )


def pairwise_dominator(problem: CellProblem, t: int, n_check: int = 8) -> int | None:
    """A token j that beats t at every point of the region, or None (see the module docstring, step 1).

    The competitors are screened in the problem's dtype (‖m_t − m_j‖₂² = ‖m_t‖² − 2 m_t·m_j + ‖m_j‖², one
    matrix-vector product), then the ``n_check`` best are re-evaluated exactly in float64:
    (a_t − a_j) + h(m_t − m_j) < 0 with h = ‖·‖₂ (ball) or ‖·‖₁ (cube), with a margin of
    1e-9·(1 + |a_t − a_j| + h) against round-off. A returned j is therefore a checked certificate.
    """
    t = check_int("t", t, minimum=0, maximum=problem.d_vocab - 1)
    M, a = problem.M, problem.a
    if problem.shape == "ball":
        sq = getattr(problem, "_row_sq", None)
        if sq is None:
            sq = (M * M).sum(1)
            problem._row_sq = sq
        h = (sq[t] - 2.0 * (M @ M[t]) + sq).clamp_min(0.0).sqrt()
    else:
        h = (M[t] - M).abs().sum(1)
    f = (a[t] - a) + h
    f[t] = math.inf
    for j in torch.topk(f, min(n_check, f.numel() - 1), largest=False).indices.tolist():
        diff = M[t].double() - M[j].double()
        hj = float(diff.norm()) if problem.shape == "ball" else float(diff.abs().sum())
        gap = float(a[t].double() - a[j].double())
        if gap + hj < -1e-9 * (1 + abs(gap) + hj):
            return int(j)
    return None


def plan_tokens(d_vocab: int, n_tokens: int, seed: int = 0) -> np.ndarray:
    """The tokens a run resolves, in the order it resolves them: a uniform random order of V, its first n.

    Every prefix is a uniform sample of V without replacement (a partial run is an unbiased sample), and
    the plan for n tokens is the first n of the plan for any larger n (a run can be extended). All of V,
    in order, when n_tokens ≥ d_vocab.

    Returns:
        ``(min(n_tokens, d_vocab),)`` int64 token ids.
    """
    V = check_int("d_vocab", d_vocab, minimum=1)
    n_tokens = check_int("n_tokens", n_tokens, minimum=1)
    if n_tokens >= V:
        return np.arange(V, dtype=np.int64)
    rng = np.random.default_rng([check_int("seed", seed, minimum=0), 23])
    return rng.permutation(V)[:n_tokens].astype(np.int64)


def resolve_settings(seed=0, n_reps=2, n_particles=32, n_moves=30, max_levels=200, first_levels=60) -> dict:
    """The estimator settings of :func:`resolve_tokens`, as stored in artifacts and result-store keys."""
    return {
        "n_reps": check_int("n_reps", n_reps, minimum=1),
        "n_particles": check_int("n_particles", n_particles, minimum=4),
        "n_moves": check_int("n_moves", n_moves, minimum=1),
        "max_levels": check_int("max_levels", max_levels, minimum=1),
        "passes": [min(max_levels, first_levels), max_levels],
        "jensen_corrected": "in combine_replicates: + L/(2·N·R)",
        "directions": "coordinate",
        "seeding": "one generator a run: SeedSequence([seed, pass, token, replicate])",
        "seed": check_int("seed", seed, minimum=0),
    }


def resolve_tokens(
    problem: CellProblem,
    tokens,
    *,
    seed: int = 0,
    n_reps: int = 2,
    n_particles: int = 32,
    n_moves: int = 30,
    max_levels: int = 200,
    batch: int = 8,
    progress_desc: str | None = None,
) -> ResolvedCells:
    """Decide and measure ln p_t for the given ``tokens`` (module docstring: certificates, then splitting).

    Each token's result depends only on the token, the problem and the settings (every splitting run has
    its own random stream, :func:`~accessibility_lib.geometry.cell_resolve.run_generator`), not on the
    other tokens listed or on ``batch``: resolving a list in pieces gives the same results as in one go.

    Args:
        problem: the region's logits. tokens: ``(n,)`` distinct token ids. seed: seeds the splitting.
        n_reps: independent splitting runs a token (≥ 1; ≥ 2 gives a spread-based SE).
        n_particles, n_moves, max_levels, batch: passed to
            :func:`~accessibility_lib.geometry.cell_resolve.split_log_volumes` (coordinate hit-and-run).

    Returns:
        :class:`ResolvedCells` with the tokens in the given order.

    Raises:
        ValueError: repeated tokens, n_reps < 1 (and as split_log_volumes).
    """
    settings = resolve_settings(seed, n_reps, n_particles, n_moves, max_levels)
    tokens = np.asarray(tokens, dtype=np.int64).reshape(-1)
    if np.unique(tokens).size != tokens.size:
        raise ValueError("tokens must be distinct (replicates are n_reps)")
    n, V = tokens.size, problem.d_vocab
    lp, se, lv = np.full(n, math.nan), np.full(n, math.nan), np.zeros(n)
    status, cert = np.full(n, "undecided", dtype=object), np.full(n, "none", dtype=object)
    for i, t in enumerate(tokens):
        j = pairwise_dominator(problem, int(t))
        if j is not None:
            lp[i], se[i], status[i], cert[i] = -math.inf, 0.0, "empty", f"pairwise j={j}"
    # two passes: a short one (ln p ≥ −0.69·first_levels reachable), the LP for the runs it leaves, and a
    # long one only for the cells the LP proves non-empty (an empty cell never burns max_levels levels)
    todo = np.nonzero(status == "undecided")[0]
    for stream, pass_levels in enumerate(settings["passes"]):
        if todo.size == 0:
            break
        res = split_log_volumes(
            problem,
            np.repeat(tokens[todo], n_reps),
            n_particles=n_particles,
            n_moves=n_moves,
            max_levels=pass_levels,
            seed=seed,
            stream=stream,
            batch=batch,
            directions="coordinate",
            progress_desc=progress_desc,
        )
        comb = combine_replicates(res, n_particles)
        where = {int(t): k for k, t in enumerate(comb["tokens"])}
        again = []
        for i in todo:
            k = where[int(tokens[i])]
            lv[i] = comb["levels"][k]
            if comb["resolved"][k]:
                lp[i], se[i], status[i], cert[i] = comb["log_p"][k], comb["se"][k], "resolved", "splitting"
                continue
            if stream == 0:
                br = max_margin(problem, int(tokens[i]))
                if br.status == "empty":
                    lp[i], se[i], status[i], cert[i] = -math.inf, 0.0, "empty", "lp"
                    continue
                cert[i] = f"lp {br.status}"
            again.append(i)
        todo = np.asarray(again, dtype=np.int64) if pass_levels < max_levels else np.zeros(0, dtype=np.int64)
    settings = {"n_tokens": int(n), **settings, "region": problem.region.get("kind")}
    return ResolvedCells(tokens, lp, se, status.astype(str), cert.astype(str), V, settings, lv)


def resolve_cells(problem: CellProblem, n_tokens: int, *, seed: int = 0, **kw) -> ResolvedCells:
    """Resolve ln p_t for ``n_tokens`` tokens drawn uniformly from V (:func:`plan_tokens`; all of V when
    n_tokens ≥ d_vocab) with :func:`resolve_tokens` (its keyword arguments: n_reps, n_particles, n_moves,
    max_levels, batch, progress_desc). For a run that survives interruption see
    :func:`accessibility_lib.geometry.cell_resume.resolve_resumable`.

    Raises:
        ValueError: on n_tokens < 1 (and as resolve_tokens).
    """
    return resolve_tokens(problem, plan_tokens(problem.d_vocab, n_tokens, seed), seed=seed, **kw)


def _finite_part(log_p, q_empty: float):
    lp = np.asarray(log_p, dtype=np.float64)
    lp = lp[np.isfinite(lp)]
    if lp.size == 0:
        raise ValueError("log_p must hold at least one finite value (a non-empty cell)")
    if np.any(lp > 0):
        raise ValueError("log_p must be ≤ 0 (p_t ≤ 1)")
    q0 = check_real("q_empty", q_empty, minimum=0.0, maximum=1.0)
    if q0 >= 1.0:
        raise ValueError("q_empty must be < 1 (some token must have a non-empty cell)")
    return lp, q0


def median_with_empty(log_p, q_empty: float, n: int, grid_size: int = 2**14) -> float:
    """Median of S_n (nats) when a share ``q_empty`` of the draws has p = 0 (module docstring); −inf past ln 2/…

    Args:
        log_p: ``(A,)`` ln p ≤ 0 of the non-empty cells (equal weights; non-finite entries are ignored).
        q_empty: share of the empty cells in [0, 1). n: the length (≥ 1).

    Raises:
        ValueError: no finite value, a positive value, q_empty outside [0, 1), n < 1.
    """
    lp, q0 = _finite_part(log_p, q_empty)
    n = check_int("n", n, minimum=1)
    q = 1.0 - 1.0 / (2.0 * (1.0 - q0) ** n)
    if q <= 0.0:
        return -math.inf
    if lp.max() == lp.min():
        return n * float(lp[0])
    g = convolution.log_sum_grid(lp, n, None, grid_size)
    return float(g.quantiles([min(q, 1 - 1e-12)], [n])[0, 0])


def crossing_length_with_empty(log_p, q_empty: float, log_packing: float, grid_size: int = 2**14) -> float:
    """Length n* (tokens, interpolated) where the median of S_n falls below −ln P, empty cells included.

    Equals :func:`accessibility_lib.geometry.convolution.crossing_length` when ``q_empty`` = 0, and is at
    most ln 2/−ln(1 − q_empty) + 1 otherwise.

    Raises:
        ValueError: as :func:`median_with_empty`, and log_packing < 0.
    """
    lp, q0 = _finite_part(log_p, q_empty)
    lnP = check_real("log_packing", log_packing, minimum=0.0)
    if q0 == 0.0:
        return convolution.crossing_length(lp, lnP, None, grid_size)
    hi = 1
    while median_with_empty(lp, q0, hi, grid_size) >= -lnP:
        hi *= 2
    lo = 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if median_with_empty(lp, q0, mid, grid_size) < -lnP:
            hi = mid
        else:
            lo = mid
    m_hi = median_with_empty(lp, q0, hi, grid_size)
    m_lo = 0.0 if hi == 1 else median_with_empty(lp, q0, hi - 1, grid_size)
    if not math.isfinite(m_hi):
        return float(hi)
    t = (m_lo + lnP) / (m_lo - m_hi) if m_lo != m_hi else 1.0
    return (hi - 1) + min(1.0, max(0.0, t))
