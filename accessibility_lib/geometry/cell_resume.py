"""Resolved cells that survive interruption: every token's result goes to the result store when it is done.

Resolving D for a real vocabulary takes seconds to minutes a token (SmolLM2-135M: d = 576,
|V| = 49,152; Gemma-3-270M: d = 640, |V| = 262,144), so a ≥ 1000-token sample takes many sessions.
:func:`resolve_resumable` resolves the planned tokens (:func:`~accessibility_lib.geometry.cell_distribution.plan_tokens`,
a uniform random order of V, so that every prefix is a uniform sample) a few at a time with
:func:`~accessibility_lib.geometry.cell_distribution.resolve_tokens`, and writes each token's outcome —
ln p̂ (nats), its SE, the levels of its last pass, its status and its certificate — as one entry of the
:class:`~accessibility_lib.ground.results.ResultStore` (namespace :data:`NAMESPACE`) as soon as its piece
is finished. A re-run with the same problem and settings reads those entries and resolves only the
rest; since every token's result depends on the token, the problem and the settings alone (one random
stream a splitting run), the resumed outcome equals the uninterrupted one token for token.

Store key of a token (:func:`token_key`): the estimator version :data:`ESTIMATOR`, a digest of the
problem (M and a, their dtype and the region's shape: the model's weights and the region together),
the caller's labels (model name, weights fingerprint), the settings of
:func:`~accessibility_lib.geometry.cell_distribution.resolve_settings` (seed included) and the token.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable

import numpy as np

from accessibility_lib.geometry.cell_distribution import ResolvedCells, resolve_settings, resolve_tokens
from accessibility_lib.geometry.cell_problem import CellProblem
from accessibility_lib.ground.checks import check_int
from accessibility_lib.ground.results import ResultStore

__all__ = ["NAMESPACE", "ESTIMATOR", "problem_digest", "store_base", "token_key", "import_cells", "resolve_resumable"]

NAMESPACE = "cell_volumes"
#: Changes whenever the estimator's per-token results would change (a stored token is then not reused).
ESTIMATOR = "amls-coordinate-v2 (one generator a run)"
FIELDS = ("log_p", "se", "status", "certificate", "levels")


def problem_digest(problem: CellProblem) -> str:
    """A sha256 digest (16 hex digits) of the problem's M, a, dtype and body shape."""
    h = hashlib.sha256()
    h.update(f"{problem.shape} {tuple(problem.M.shape)} {problem.M.dtype}".encode())
    h.update(problem.M.detach().cpu().contiguous().numpy().tobytes())
    h.update(problem.a.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def store_base(problem: CellProblem, labels: dict | None = None, **settings) -> dict:
    """The store key of a run, less the token: estimator, problem digest, ``labels`` and the settings.

    ``settings`` are those of resolve_settings (seed, n_reps, n_particles, n_moves, max_levels). An artifact
    that keeps this key can be imported into a fresh store (:func:`import_cells`) and the run resumed there.
    """
    return {
        "what": "resolved cell volume",
        "estimator": ESTIMATOR,
        "problem": problem_digest(problem),
        **(labels or {}),
        **resolve_settings(**settings),
    }


def import_cells(store: ResultStore, base: dict, cells: dict) -> int:
    """Put the tokens of an artifact's cells (``ResolvedCells.to_dict()``) into ``store`` under ``base``.

    What a fresh machine does with a committed partial artifact: its tokens become store entries, so a
    resumed run resolves only the rest. Entries already stored are kept; ``base`` must be the artifact's
    own key (its ``"store_key"``), which the caller checks equals the run's :func:`store_base`.

    Returns:
        the number of tokens put (not counting those already stored).

    Raises:
        ValueError: cells lacking a field, or of unequal lengths.
    """
    need = ("tokens", "d_vocab", *FIELDS)
    missing = [f for f in need if f not in cells]
    if missing:
        raise ValueError(f"the artifact's cells lack {missing} (need {list(need)})")
    if len({len(cells[f]) for f in ("tokens", *FIELDS)}) != 1:
        raise ValueError("the artifact's cells have fields of unequal lengths")
    rc = ResolvedCells.from_dict(cells)
    put = 0
    for i, t in enumerate(rc.tokens.tolist()):
        key = token_key(base, t)
        if store.get(NAMESPACE, key) is not None:
            continue
        store.put(NAMESPACE, key, {**_entry(rc, i), "imported": True})
        put += 1
    return put


def token_key(base: dict, token: int) -> dict:
    """The store key of one token: ``base`` (see :func:`resolve_resumable`) plus the token id."""
    return {**base, "token": int(token)}


def _entry(cells: ResolvedCells, i: int) -> dict:
    """The stored fields (:data:`FIELDS`) of the i-th token of ``cells``."""
    return {
        "log_p": float(cells.log_p[i]),
        "se": float(cells.se[i]),
        "status": str(cells.status[i]),
        "certificate": str(cells.certificate[i]),
        "levels": float(cells.levels[i]),
    }


def _assemble(tokens: np.ndarray, rows: dict, V: int, settings: dict, region: str | None) -> ResolvedCells:
    """The tokens of ``tokens`` that ``rows`` holds, in that order, as one :class:`ResolvedCells`."""
    done = np.array([t for t in tokens.tolist() if t in rows], dtype=np.int64)
    get = [rows[int(t)] for t in done.tolist()]
    lp = np.array([float(r["log_p"]) for r in get], dtype=np.float64)
    se = np.array([float(r["se"]) for r in get], dtype=np.float64)
    lv = np.array([float(r["levels"]) for r in get], dtype=np.float64)
    status = np.array([r["status"] for r in get], dtype=object).astype(str)
    cert = np.array([r["certificate"] for r in get], dtype=object).astype(str)
    st = {"n_tokens": int(done.size), **settings, "region": region}
    return ResolvedCells(done, lp, se, status, cert, V, st, lv)


def resolve_resumable(
    problem: CellProblem,
    tokens,
    *,
    store: ResultStore | None,
    labels: dict | None = None,
    chunk: int = 8,
    on_progress: Callable[[ResolvedCells, int], None] | None = None,
    seed: int = 0,
    n_reps: int = 2,
    n_particles: int = 32,
    n_moves: int = 30,
    max_levels: int = 200,
    batch: int = 8,
    progress_desc: str | None = None,
) -> ResolvedCells:
    """:func:`~accessibility_lib.geometry.cell_distribution.resolve_tokens` for ``tokens``, one stored entry a token.

    Args:
        problem: the region's logits. tokens: ``(n,)`` distinct token ids, in the order to resolve them.
        store: the result store (None: nothing stored or reused, the same results).
        labels: extra key fields that name the problem for a reader of the store (e.g. ``{"model":
            "smollm2-135m", "weights": fingerprint}``); the problem digest is always in the key.
        chunk: tokens resolved per call of resolve_tokens (each stored when its call returns).
        on_progress: called as ``on_progress(cells_done, n_done)`` once with what the store already
            held, then after every chunk: ``cells_done`` holds the finished tokens in ``tokens`` order.
        seed, n_reps, n_particles, n_moves, max_levels, batch, progress_desc: as resolve_tokens.

    Returns:
        :class:`~accessibility_lib.geometry.cell_distribution.ResolvedCells` of all ``tokens``, in order;
        equal, token for token, whether the run was interrupted and resumed or not, and whatever ``chunk``.

    Raises:
        ValueError: repeated tokens, chunk < 1, or a stored entry without the expected fields.
    """
    chunk = check_int("chunk", chunk, minimum=1)
    tokens = np.asarray(tokens, dtype=np.int64).reshape(-1)
    if np.unique(tokens).size != tokens.size:
        raise ValueError("tokens must be distinct")
    settings = resolve_settings(seed, n_reps, n_particles, n_moves, max_levels)
    base = store_base(
        problem, labels, seed=seed, n_reps=n_reps, n_particles=n_particles, n_moves=n_moves, max_levels=max_levels
    )
    V, region = problem.d_vocab, problem.region.get("kind")
    rows: dict[int, dict] = {}
    if store is not None:
        for t in tokens.tolist():
            got = store.get(NAMESPACE, token_key(base, t))
            if got is not None:
                missing = [f for f in FIELDS if f not in got]
                if missing:
                    raise ValueError(f"stored entry of token {t} lacks {missing} ({store!r}, {NAMESPACE})")
                rows[t] = got
    if on_progress is not None:
        on_progress(_assemble(tokens, rows, V, settings, region), len(rows))
    pending = [t for t in tokens.tolist() if t not in rows]
    for c0 in range(0, len(pending), chunk):
        part = pending[c0 : c0 + chunk]
        t0 = time.perf_counter()
        res = resolve_tokens(
            problem,
            part,
            seed=seed,
            n_reps=n_reps,
            n_particles=n_particles,
            n_moves=n_moves,
            max_levels=max_levels,
            batch=batch,
            progress_desc=progress_desc,
        )
        per_token = (time.perf_counter() - t0) / len(part)
        for i, t in enumerate(part):
            value = {**_entry(res, i), "seconds": round(per_token, 3)}
            if store is not None:
                store.put(NAMESPACE, token_key(base, t), value)
            rows[t] = value
        if on_progress is not None:
            on_progress(_assemble(tokens, rows, V, settings, region), len(rows))
    return _assemble(tokens, rows, V, settings, region)
