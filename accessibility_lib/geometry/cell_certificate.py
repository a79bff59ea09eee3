"""Does a token's argmax cell meet the support region at all? An exact answer by linear programming.

For a :class:`~accessibility_lib.geometry.cell_problem.CellProblem` (logits z(u) = a + M u on the unit
ball or cube) and a token t, the largest margin

    τ* = max_{u in the body} s_t(u),   s_t(u) = z_t(u) − max_{j≠t} z_j(u),

is the optimum of a convex program (an LP for the cube; an LP plus one second-order cone ‖u‖₂ ≤ 1 for
the ball). The cell E_t meets the region in a set of positive volume iff τ* > 0; if τ* < 0, token t is
never the argmax there (p_t = 0 exactly), whatever the sample size.

:func:`max_margin` brackets τ* from both sides, each side with a certificate anyone can re-check:

- **lower**: a point û of the body whose margin s_t(û), computed against *every* token, is the lower
  bound; s_t(û) > 0 proves the cell non-empty;
- **upper**: weights λ ≥ 0, Σ λ_j = 1 on a few competitors with
  f(λ) = Σ_j λ_j (a_t − a_j) + h(Σ_j λ_j (m_t − m_j)) < 0, where h is the support function of the body
  (the L2 norm for the ball, the L1 norm for the cube). For every u of the body,
  Σ_j λ_j (z_t − z_j)(u) ≤ f(λ) < 0, so some z_j(u) > z_t(u): the cell is empty (weak duality).

The program is solved over a working set of competitors, grown with the tokens that beat t at its
optimum: the cube's LP by HiGHS (``scipy.optimize.linprog``), the ball's second-order cone program by
Clarabel (an interior-point conic solver; Goulart & Chen 2024). The ball's cone is kept exact: an
earlier version replaced it by tangent cuts u·n ≤ 1 solved by HiGHS, which in d = 576 (SmolLM2-135M)
had not decided one token after 8 minutes, where the cone program decides it in 4 s and 4 solves.
The λ of the certificate are the solver's dual values, re-evaluated with the exact support function,
so a loose solver tolerance can weaken a bound but never make a wrong certificate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from accessibility_lib.geometry.cell_problem import CellProblem
from accessibility_lib.ground.checks import check_int

__all__ = ["MarginBracket", "max_margin", "dual_bound"]


@dataclass
class MarginBracket:
    """τ* of one token, bracketed: ``lower ≤ τ* ≤ upper``.

    Attributes:
        token: t. lower: s_t at ``witness`` (every token checked). upper: f(λ) of the dual certificate.
        witness: ``(d,)`` point of the body (unit coordinates). lam: ``{j: λ_j}`` the certificate's weights.
        status: ``"empty"`` (upper < 0), ``"non-empty"`` (lower > 0) or ``"undecided"``.
        iterations: LP solves used.
    """

    token: int
    lower: float
    upper: float
    witness: np.ndarray
    lam: dict
    status: str
    iterations: int


def dual_bound(problem: CellProblem, t: int, lam: dict) -> float:
    """f(λ) = Σ λ_j (a_t − a_j) + h(Σ λ_j (m_t − m_j)) in float64 (an upper bound on τ*, see the module docstring).

    Raises:
        ValueError: empty λ, negative weights, or weights that do not sum to 1 (to 1e-9).
    """
    if not lam:
        raise ValueError("lam must name at least one competitor")
    js = np.fromiter(lam.keys(), dtype=np.int64)
    w = np.fromiter(lam.values(), dtype=np.float64)
    if (w < 0).any() or abs(w.sum() - 1.0) > 1e-9:
        raise ValueError(f"lam must be ≥ 0 and sum to 1, got sum {w.sum()}")
    M = problem.M[js].double().numpy()
    a = problem.a[js].double().numpy()
    mt, at = problem.M[t].double().numpy(), float(problem.a[t])
    g = mt - w @ M  # Σ λ_j (m_t − m_j)
    h = float(np.linalg.norm(g)) if problem.shape == "ball" else float(np.abs(g).sum())
    return float(at - w @ a) + h


def _full_margin(problem: CellProblem, t: int, u: np.ndarray) -> tuple[float, np.ndarray]:
    U = torch.from_numpy(u).to(problem.M.dtype).unsqueeze(0)
    z = problem.logits(U)[0].double().numpy()
    other = np.delete(z, t)
    return float(z[t] - other.max()), z


def max_margin(
    problem: CellProblem, t: int, *, start=None, n_initial: int = 64, add: int = 64, max_iter: int = 60
) -> MarginBracket:
    """Bracket τ* = max s_t over the body and decide whether token t's cell meets it (module docstring).

    Args:
        problem: the region's logits. t: the token.
        start: optional ``(n, d)`` points of the body whose best competitors seed the working set
            (e.g. the particles of a splitting run); the centre u = 0 is always used.
        n_initial: competitors taken from each start point; add: violated competitors added per solve.
        max_iter: working-set solves before giving up with ``"undecided"``.

    Returns:
        :class:`MarginBracket`.

    Raises:
        ValueError: t outside [0, d_vocab); RuntimeError: HiGHS or Clarabel fails on a working-set program.
    """
    V, d = problem.d_vocab, problem.d
    t = check_int("t", t, minimum=0, maximum=V - 1)
    pts = [np.zeros(d)] + ([] if start is None else list(np.asarray(start, dtype=np.float64).reshape(-1, d)))
    work: set[int] = set()
    best_lower, best_u = -math.inf, np.zeros(d)
    for p in pts[:16]:
        s, z = _full_margin(problem, t, p)
        if s > best_lower:
            best_lower, best_u = s, p
        work.update(int(j) for j in np.argsort(-z)[: n_initial + 1] if j != t)
    Mt_, at = problem.M[t].double().numpy(), float(problem.a[t])
    solve = _solve_ball if problem.shape == "ball" else _solve_cube
    upper, lam = math.inf, {}
    for it in range(1, max_iter + 1):
        js = np.array(sorted(work), dtype=np.int64)
        G = Mt_ - problem.M[js].double().numpy()  # rows m_t − m_j
        h = at - problem.a[js].double().numpy()  # a_t − a_j
        # maximise τ over (u, τ) s.t. τ − (m_t − m_j)·u ≤ a_t − a_j for j in the working set, u in the body
        u, tau, duals = solve(G, h, t)
        pos = duals > 0  # solvers may return tiny negative duals: drop them, then renormalise what is kept
        if pos.any():
            w = duals[pos] / duals[pos].sum()
            cand = {int(j): float(x) for j, x in zip(js[pos], w)}
            f = dual_bound(problem, t, cand)
            if f < upper:
                upper, lam = f, cand
        feas = u / max(1.0, float(np.linalg.norm(u))) if problem.shape == "ball" else np.clip(u, -1.0, 1.0)
        s, z = _full_margin(problem, t, feas)
        if s > best_lower:
            best_lower, best_u = s, feas
        if upper < 0 or best_lower > 0:
            break
        slack = z[t] - z - tau  # < 0: token j beats t at the optimum by more than the working set's margin
        slack[t] = math.inf
        slack[js] = math.inf
        viol = [int(j) for j in np.argsort(slack)[:add] if slack[j] < 0]
        if not viol:
            break  # the working set's optimum is feasible for every token: it is τ* (to the solver's tolerance)
        work.update(viol)
    status = "empty" if upper < 0 else ("non-empty" if best_lower > 0 else "undecided")
    return MarginBracket(t, best_lower, upper, best_u, lam, status, it)


def _solve_cube(G: np.ndarray, h: np.ndarray, t: int) -> tuple[np.ndarray, float, np.ndarray]:
    """max τ s.t. τ − G u ≤ h, −1 ≤ u_i ≤ 1, by HiGHS: ``(u, τ, duals)``, duals ≥ 0 summing to ~1."""
    from scipy.optimize import linprog

    m, d = G.shape
    A = np.hstack([-G, np.ones((m, 1))])
    cost = np.zeros(d + 1)
    cost[-1] = -1.0
    scale = float(np.abs(h).max() + np.abs(G).sum(1).max()) + 1.0
    res = linprog(cost, A_ub=A, b_ub=h, bounds=[(-1, 1)] * d + [(-scale, scale)], method="highs")
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on token {t}'s margin LP: {res.message}")
    return res.x[:d], float(res.x[-1]), -res.ineqlin.marginals


def _solve_ball(G: np.ndarray, h: np.ndarray, t: int) -> tuple[np.ndarray, float, np.ndarray]:
    """max τ s.t. τ − G u ≤ h, ‖u‖₂ ≤ 1, by Clarabel: ``(u, τ, duals)``, duals ≥ 0 summing to ~1.

    Clarabel's form: minimise qᵀx s.t. A x + s = b, s in the cones; x = (u, τ), the m linear rows in the
    non-negative cone and s = (1, u) in the second-order cone of dimension d + 1.
    """
    import clarabel
    import scipy.sparse as sp

    m, d = G.shape
    A = sp.vstack(
        [
            sp.csc_matrix(np.hstack([-G, np.ones((m, 1))])),
            sp.csc_matrix((1, d + 1)),
            sp.hstack([-sp.identity(d), sp.csc_matrix((d, 1))]),
        ]
    ).tocsc()
    b = np.concatenate([h, [1.0], np.zeros(d)])
    q = np.zeros(d + 1)
    q[-1] = -1.0
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    cones = [clarabel.NonnegativeConeT(m), clarabel.SecondOrderConeT(d + 1)]
    sol = clarabel.DefaultSolver(sp.csc_matrix((d + 1, d + 1)), q, A, b, cones, settings).solve()
    if str(sol.status) not in ("Solved", "AlmostSolved"):
        raise RuntimeError(f"Clarabel failed on token {t}'s margin program: {sol.status}")
    x = np.asarray(sol.x, dtype=np.float64)
    return x[:d], float(x[-1]), np.asarray(sol.z, dtype=np.float64)[:m]
