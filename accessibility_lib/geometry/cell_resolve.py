"""Resolved argmax-cell volumes: ln p_t for chosen tokens at a cost that grows like |ln p_t|, not 1/p_t.

Section 5.3 of the paper needs D, the law of ln p_t for a token t uniform over V, where
p_t = |E_t ∩ R| / |R| is the share of the support region R in token t's argmax cell (bias included).
Uniform Monte Carlo with S points sees only cells with p_t ≳ 1/S: the rest of D is a fill, and its
mean is forced into |ln p| ≲ ln S. Here every chosen token's cell is measured.

Method: adaptive multilevel splitting (Cérou & Guyader 2007; Bréhier et al. 2016) on the nested convex
bodies K_γ = {u : s_t(u) ≥ γ} of :mod:`accessibility_lib.geometry.cell_problem`, with
s_t(u) = z_t(u) − max_{j≠t} z_j(u) concave, so that K_0 is the cell and K_{−∞} the whole region.
N particles start uniform in the region; each iteration takes the level γ = the k-th smallest margin
(k = N/2), keeps the n_γ particles above it, multiplies the estimate by n_γ/N, refills the dead with
copies of survivors and moves every particle by ``n_moves`` hit-and-run steps inside K_γ (Smith 1984:
a uniform direction, then a uniform point on the exact chord, which leaves the uniform law on K_γ
invariant). It stops when at least half the particles lie in the cell:

    ln p̂ = Σ_levels ln(n_γ/N) + ln(#{s_t ≥ 0}/N),

about 1.44·|ln p_t| levels, so the cost per token is ~N·n_moves·1.44|ln p_t| matrix-vector products
with M (d_vocab × d) — a multiphase volume estimate of a convex body, not a count of rare hits. A
finished run is also a certificate that the cell is not empty (a point in it, checked against every
token). Runs that reach ``max_levels`` are *unresolved*: their last estimate is the volume of a level
set that contains the cell, an upper bound in expectation; the caller decides them with
:func:`accessibility_lib.geometry.cell_certificate.max_margin`.

Error: R independent runs (the same token listed R times) are combined as ln of the mean of their p̂
(each p̂ is unbiased for p in the ideal splitting algorithm, so the mean is), with the standard error of
that log by the delta method, sd(p̂)/(√R·mean p̂), never below the ideal splitting error √(L/N)/√R (L
levels; the error if the moves mixed perfectly: each level keeps a share ½ of N particles, relative
variance 1/N a level). The log of an unbiased p̂ is biased low by about Var(ln p̂)/2 (Jensen; ≈ 0.5 nats
for N = 16 and ln p ≈ −11), so :func:`combine_replicates` adds the ideal L/(2NR): on ``nano`` this moves
the mean difference to brute-force counts from −0.43 ± 0.05 to −0.06 ± 0.05 nats. Under-mixing would
make the estimate low as well; the tests check it against exact volumes (d = 2, 3) and against
brute-force counts on the ``nano`` model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from accessibility_lib.geometry.cell_problem import CellProblem
from accessibility_lib.ground.checks import check_int

__all__ = ["SplitResult", "split_log_volumes", "combine_replicates", "run_generator"]


@dataclass
class SplitResult:
    """Per-run outcome of :func:`split_log_volumes` (one row per (token, replicate) job).

    Attributes:
        tokens: ``(J,)`` token ids. log_p: ``(J,)`` ln p̂ of each run (nats). levels: ``(J,)`` levels used.
        resolved: ``(J,)`` bool, the run ended with half its particles in the cell.
        best_margin: ``(J,)`` largest s_t seen in the last level (≥ 0 when a point of the cell was found).
    """

    tokens: np.ndarray
    log_p: np.ndarray
    levels: np.ndarray
    resolved: np.ndarray
    best_margin: np.ndarray


def run_generator(seed: int, token: int, rep: int, stream: int = 0) -> torch.Generator:
    """The random stream of one splitting run: a function of (seed, stream, token, replicate) only.

    Every run draws from its own generator (seeded by ``numpy.random.SeedSequence``), so a run's result
    does not depend on which other runs share its batch, on their order, or on an interrupted job: a
    token resolved again later (a resumed run) gets the same estimate.
    """
    state = np.random.SeedSequence([seed, stream, token, rep]).generate_state(1, np.uint64)[0]
    return torch.Generator().manual_seed(int(state))


def split_log_volumes(
    problem: CellProblem,
    tokens,
    *,
    n_particles: int = 32,
    n_moves: int = 10,
    max_levels: int = 400,
    seed: int = 0,
    stream: int = 0,
    batch: int = 8,
    directions: str = "coordinate",
    progress_desc: str | None = None,
) -> SplitResult:
    """ln p̂_t by adaptive multilevel splitting for each token in ``tokens`` (see the module docstring).

    Args:
        problem: the region's logits (:class:`~accessibility_lib.geometry.cell_problem.CellProblem`).
        tokens: token ids (repeat a token for independent replicates: its r-th occurrence is replicate r).
        n_particles: N ≥ 4 particles per run; n_moves: hit-and-run steps per level (≥ 1).
        max_levels: levels after which a run stops unresolved (≈ ln p ≥ −0.69·max_levels reachable).
        seed, stream: with the token and its replicate index, they seed each run's own generator
            (:func:`run_generator`): a run's result depends on (seed, stream, token, replicate) and the
            settings only, not on ``batch`` or the other tokens listed.
        batch: runs advanced together (one matrix product per level for batch·N particles).
        directions: ``"coordinate"`` (coordinate hit-and-run: a random axis per step, O(d_vocab) per step,
            :meth:`~accessibility_lib.geometry.cell_problem.CellProblem.coordinate_move`) or ``"random"``
            (hit-and-run along a uniform direction, O(d·d_vocab) per step). Both leave the uniform law on
            each level set invariant.

    Returns:
        :class:`SplitResult`.

    Raises:
        ValueError: on token ids outside [0, d_vocab), N < 4, n_moves < 1, max_levels < 1.
    """
    from accessibility_lib.ground.progress import progress

    toks = np.asarray(tokens, dtype=np.int64).reshape(-1)
    if toks.size == 0 or toks.min() < 0 or toks.max() >= problem.d_vocab:
        raise ValueError(f"tokens must be non-empty ids in [0, {problem.d_vocab}), got {toks[:8].tolist()}…")
    N = check_int("n_particles", n_particles, minimum=4)
    n_moves = check_int("n_moves", n_moves, minimum=1)
    max_levels = check_int("max_levels", max_levels, minimum=1)
    batch = check_int("batch", batch, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    if directions not in ("coordinate", "random"):
        raise ValueError(f"directions must be 'coordinate' or 'random', got {directions!r}")
    seen: dict[int, int] = {}
    gens = []
    for tok in toks.tolist():
        gens.append(run_generator(seed, tok, seen.get(tok, 0), stream))
        seen[tok] = seen.get(tok, 0) + 1
    J = toks.size
    out_lp = np.full(J, np.nan)
    out_lv = np.zeros(J, dtype=np.int64)
    out_ok = np.zeros(J, dtype=bool)
    out_best = np.full(J, -np.inf)
    k = N // 2
    dtype = problem.M.dtype
    starts = range(0, J, batch)
    for s0 in progress(starts, desc=progress_desc or "cell volumes (splitting)", total=len(starts)):
        ids = torch.from_numpy(toks[s0 : s0 + batch])
        B = ids.numel()
        g = gens[s0 : s0 + B]
        t = ids.repeat_interleave(N)  # (B·N,) token of each particle
        U = torch.cat([problem.sample(N, g[b]) for b in range(B)])  # (P, d)
        Z = problem.logits(U)  # (P, V)
        s = problem.margins(Z, t).view(B, N)
        logp = torch.zeros(B, dtype=torch.float64)
        levels = torch.zeros(B, dtype=torch.int64)
        active = torch.ones(B, dtype=torch.bool)
        while bool(active.any()):
            srt = s.sort(dim=1).values
            lev = srt[:, k - 1]
            finish = active & (lev >= 0)
            for b in torch.nonzero(finish).flatten().tolist():
                logp[b] += math.log(float((s[b] >= 0).sum()) / N)
                out_ok[s0 + b] = True
            stop = active & ~finish & (levels >= max_levels)
            active &= ~(finish | stop)
            if not bool(active.any()):
                break
            act = torch.nonzero(active).flatten()
            # kill the k lowest (every particle at or below the level), refill from the survivors
            Ui, Zi = U.view(B, N, -1), Z.view(B, N, -1)
            for b in act.tolist():
                surv = torch.nonzero(s[b] > lev[b]).flatten()
                if surv.numel() == 0:  # all margins equal: a flat region, no progress possible
                    active[b] = False
                    continue
                logp[b] += math.log(surv.numel() / N)
                pick = surv[torch.randint(0, surv.numel(), (N,), generator=g[b])]
                pick[: surv.numel()] = surv
                Ui[b] = Ui[b][pick]
                Zi[b] = Zi[b][pick]
                levels[b] += 1
            act = torch.nonzero(active).flatten()
            if act.numel() == 0:
                break
            every = act.numel() == B
            rows = None if every else (act.unsqueeze(1) * N + torch.arange(N)).reshape(-1)  # active particles
            Ua, Za, ta = (U, Z, t) if every else (U[rows], Z[rows], t[rows])
            gam = lev[act].repeat_interleave(N).to(dtype)
            act_l = act.tolist()
            for _ in range(n_moves):
                if directions == "coordinate":
                    axis = torch.cat([torch.randint(0, problem.d, (N,), generator=g[b]) for b in act_l])
                    r = torch.cat([torch.rand(N, generator=g[b], dtype=dtype) for b in act_l])
                    problem.coordinate_move(Ua, Za, axis, ta, gam, r)
                    continue
                v = torch.cat([torch.randn(N, problem.d, generator=g[b], dtype=dtype) for b in act_l])
                v = v / v.norm(dim=1, keepdim=True)
                W = v @ problem.Mt  # (P_a, V)
                lo, hi = problem.chord(Ua, Za, v, W, ta, gam)
                r = torch.cat([torch.rand(N, generator=g[b], dtype=dtype) for b in act_l])
                lam = lo + (hi - lo) * r
                Ua = Ua + lam.unsqueeze(1) * v
                Za.add_(lam.unsqueeze(1) * W)
            Za = problem.logits(Ua)  # exact logits: no drift from the incremental updates
            if every:
                U, Z = Ua, Za
            else:
                U[rows], Z[rows] = Ua, Za
            s.view(-1)[rows if rows is not None else slice(None)] = problem.margins(Za, ta)
        for b in range(B):
            out_lp[s0 + b] = float(logp[b])
            out_lv[s0 + b] = int(levels[b])
            out_best[s0 + b] = float(s[b].max())
    return SplitResult(toks, out_lp, out_lv, out_ok, out_best)


def combine_replicates(res: SplitResult, n_particles: int) -> dict:
    """Per distinct token: ln of the mean p̂ over its replicates (Jensen-corrected) and the SE of that log.

    ln p̂ = ln mean_r p̂_r + L̄/(2NR), the second term the bias of the log of an unbiased estimate with the
    ideal splitting variance L̄/(NR) (module docstring).

    SE = max(sd(p̂)/(√R·mean p̂), √(L̄/N)/√R): the replicates' spread (delta method), never below the
    ideal splitting error of R runs of N particles and L̄ levels.

    Returns:
        ``{"tokens", "log_p", "se", "resolved", "reps", "levels", "best_margin"}`` arrays over the distinct
        tokens (sorted); ``resolved`` is True when every replicate finished (else log_p is the largest
        replicate estimate, an upper bound in expectation, and se is NaN).
    """
    N = check_int("n_particles", n_particles, minimum=1)
    uniq = np.unique(res.tokens)
    lp, se, ok, reps, lv, best = (np.empty(uniq.size) for _ in range(6))
    for i, tok in enumerate(uniq):
        sel = res.tokens == tok
        R = int(sel.sum())
        vals = res.log_p[sel]
        reps[i], lv[i], best[i] = R, float(res.levels[sel].mean()), float(res.best_margin[sel].max())
        if bool(res.resolved[sel].all()):
            ok[i] = 1.0
            top = float(vals.max())
            rel = np.exp(vals - top)  # p̂_r / max p̂
            ideal_var = max(lv[i], 1.0) / (N * R)  # Var(ln p̂) of R ideal runs: L/N each
            # ln of the mean of the unbiased p̂_r, plus the Jensen correction Var/2 of taking its log
            lp[i] = top + math.log(float(rel.mean())) + ideal_var / 2
            spread = float(rel.std(ddof=1)) / (math.sqrt(R) * float(rel.mean())) if R > 1 else 0.0
            se[i] = max(spread, math.sqrt(ideal_var))
        else:
            ok[i], lp[i], se[i] = 0.0, float(vals.max()), math.nan
    return {
        "tokens": uniq,
        "log_p": lp,
        "se": se,
        "resolved": ok.astype(bool),
        "reps": reps.astype(int),
        "levels": lv,
        "best_margin": best,
    }
