"""Resumable resolved cells (geometry.cell_resume) and the fused coordinate move they run on.

A run killed after k tokens and resumed from the result store must give, token for token, what an
uninterrupted run gives; so must any batch or chunk size. The fused move
(:meth:`CellProblem.coordinate_move`) must take the step the general chord (:meth:`CellProblem.chord`)
gives for the same axis and uniform.
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from accessibility_lib.geometry.cell_distribution import plan_tokens, resolve_tokens
from accessibility_lib.geometry.cell_problem import CellProblem
from accessibility_lib.geometry.cell_resume import NAMESPACE, import_cells, resolve_resumable, store_base
from accessibility_lib.geometry.regions import Box, Ellipsoid
from accessibility_lib.ground.results import ResultStore

ROOT = Path(__file__).resolve().parents[2]
KW = dict(seed=3, n_reps=2, n_particles=16, n_moves=5, max_levels=40)


def _problem(shape="ball", d=3, V=24, seed=0):
    g = np.random.default_rng(seed)
    W = g.normal(size=(V, d)) * g.uniform(0.5, 3.0, size=(V, 1))
    b = g.normal(size=V) * 2.0
    b[5] = -40.0  # a token whose cell misses the region: its certificate must be kept too
    region = (
        Ellipsoid(torch.zeros(d, dtype=torch.float64), torch.tensor([2.0, 1.0, 0.5][:d], dtype=torch.float64))
        if shape == "ball"
        else Box(torch.full((d,), -1.0, dtype=torch.float64), torch.ones(d, dtype=torch.float64))
    )
    return CellProblem.from_region(torch.from_numpy(W), torch.from_numpy(b), region, dtype=torch.float64)


def _same(a, b):
    np.testing.assert_array_equal(a.tokens, b.tokens)
    for name in ("log_p", "se", "levels"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.status.tolist() == b.status.tolist() and a.certificate.tolist() == b.certificate.tolist()


class _Killed(Exception):
    pass


def test_a_killed_and_resumed_run_equals_an_uninterrupted_one(tmp_path):
    problem = _problem()
    tokens = plan_tokens(problem.d_vocab, 12, seed=1)
    tokens = np.unique(np.r_[tokens[:11], 5])[::-1]  # include the empty token 5
    whole = resolve_resumable(problem, tokens, store=ResultStore(tmp_path / "a"), chunk=3, **KW)
    assert (whole.status == "empty").sum() >= 1 and (whole.status == "resolved").sum() >= 3

    store = ResultStore(tmp_path / "b")
    seen = []

    def kill_after_six(cells, n_done):
        seen.append(n_done)
        if n_done >= 6:
            raise _Killed  # as if the process died right after storing its second chunk

    with pytest.raises(_Killed):
        resolve_resumable(problem, tokens, store=store, chunk=3, on_progress=kill_after_six, **KW)
    assert seen == [0, 3, 6] and len(list(store.entries(NAMESPACE))) == 6
    calls = []
    resumed = resolve_resumable(
        problem, tokens, store=store, chunk=4, on_progress=lambda c, n: calls.append((c.tokens.size, n)), **KW
    )
    assert calls[0] == (6, 6)  # the six stored tokens were read back, not resolved again
    _same(resumed, whole)
    assert resumed.tokens.tolist() == tokens.tolist()
    # and a third run resolves nothing: every token is stored
    again = resolve_resumable(problem, tokens, store=store, on_progress=lambda c, n: calls.append(n), **KW)
    _same(again, whole)
    assert calls[-1] == tokens.size


def test_an_artifacts_tokens_seed_a_fresh_store(tmp_path):
    """A fresh machine: the committed cells become store entries and the run resolves only the rest."""
    problem = _problem()
    tokens = plan_tokens(problem.d_vocab, 10, seed=2)
    whole = resolve_resumable(problem, tokens, store=None, **KW)
    part = resolve_resumable(problem, tokens[:4], store=None, **KW)
    fresh = ResultStore(tmp_path / "fresh")
    base = store_base(problem, None, **{k: KW[k] for k in ("seed", "n_reps", "n_particles", "n_moves", "max_levels")})
    cells = json.loads(json.dumps(part.to_dict()))  # as read back from the artifact
    assert import_cells(fresh, base, cells) == 4
    assert import_cells(fresh, base, cells) == 0  # already there: kept, not put twice
    calls = []
    resumed = resolve_resumable(problem, tokens, store=fresh, on_progress=lambda c, n: calls.append(n), **KW)
    assert calls[0] == 4
    _same(resumed, whole)
    bad = {k: v for k, v in cells.items() if k != "levels"}
    with pytest.raises(ValueError, match="levels"):
        import_cells(fresh, base, bad)
    with pytest.raises(ValueError, match="unequal"):
        import_cells(fresh, base, {**cells, "se": cells["se"][:-1]})


def test_results_depend_on_the_token_not_on_batch_chunk_or_neighbours():
    problem = _problem("cube", d=2, V=16, seed=4)
    tokens = plan_tokens(problem.d_vocab, 8, seed=0)
    a = resolve_tokens(problem, tokens, batch=1, **KW)
    b = resolve_resumable(problem, tokens, store=None, chunk=5, batch=3, **KW)
    _same(a, b)
    c = resolve_tokens(problem, tokens[::-1][:3], batch=8, **KW)  # other neighbours, other order
    _same(c, resolve_tokens(problem, tokens[::-1][:3], batch=2, **KW))
    k = {int(t): i for i, t in enumerate(tokens)}
    np.testing.assert_array_equal(c.log_p, a.log_p[[k[int(t)] for t in c.tokens]])
    other = resolve_tokens(problem, tokens[:3], **{**KW, "seed": 4})
    assert not np.array_equal(other.log_p, a.log_p[:3])  # the seed does matter


def test_the_plan_is_a_uniform_order_whose_prefixes_extend():
    p = plan_tokens(1000, 300, seed=2)
    assert np.unique(p).size == 300 and p.min() >= 0 and p.max() < 1000
    np.testing.assert_array_equal(plan_tokens(1000, 100, seed=2), p[:100])
    assert not np.all(np.diff(p) > 0)  # not sorted: a prefix is a uniform sample, not the smallest ids
    np.testing.assert_array_equal(plan_tokens(10, 50), np.arange(10))


@pytest.mark.parametrize("shape", ["ball", "cube"])
def test_the_fused_coordinate_move_takes_the_chords_step(shape):
    d, V, P = 4, 30, 50
    g = np.random.default_rng(7)
    W = torch.from_numpy(g.normal(size=(V, d)))
    M = W * 0.7
    a = torch.from_numpy(g.normal(size=V))
    problem = CellProblem(M, a, shape, {"kind": "test"})
    gen = torch.Generator().manual_seed(0)
    U = problem.sample(P, gen)
    Z = problem.logits(U)
    t = torch.from_numpy(g.integers(0, V, size=P))
    gam = problem.margins(Z.clone(), t) - torch.rand(P, generator=gen, dtype=torch.float64)  # U inside K_γ
    axis = torch.randint(0, d, (P,), generator=gen)
    r = torch.rand(P, generator=gen, dtype=torch.float64)
    v = torch.zeros(P, d, dtype=torch.float64)
    v[torch.arange(P), axis] = 1.0
    lo, hi = problem.chord(U, Z.clone(), v, problem.Mt[axis], t, gam)
    want = U + (lo + (hi - lo) * r).unsqueeze(1) * v
    U2, Z2 = U.clone(), Z.clone()
    problem.coordinate_move(U2, Z2, axis, t, gam, r, rows_per_chunk=7)
    torch.testing.assert_close(U2, want, rtol=0, atol=1e-12)
    torch.testing.assert_close(Z2, problem.logits(U2), rtol=0, atol=1e-10)
    assert bool((problem.margins(Z2.clone(), t) >= gam - 1e-9).all())  # still inside the level set


@pytest.mark.slow
def test_the_script_resumes_and_extends_to_the_same_artifact(tmp_path):
    def run(store, n, out):
        env = {**os.environ, "ACCESSIBILITY_RESULTS": str(tmp_path / store), "ACCESSIBILITY_PROGRESS": "0"}
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])  # this checkout's library
        cmd = [sys.executable, "scripts/table1_resolved.py", "--model", "nano", "--n-tokens", str(n), "--reps", "1"]
        cmd += ["--particles", "8", "--moves", "4", "--convergence", "16", "--n-per-length", "16", "--lengths", "4,16"]
        cmd += ["--chunk", "2", "--write-every", "2", "--out-dir", str(tmp_path / out)]
        res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr[-2000:]
        logs.append(res.stdout)
        return json.loads((tmp_path / out / "nano.json").read_text())

    logs = []

    whole = run("a", 6, "whole")
    assert whole["state"] == "complete" and whole["tokens_done"] == whole["tokens_planned"] == 6
    part = run("b", 3, "part")  # a shorter plan is a prefix: as if a 6-token run had stopped after 3
    assert part["inputs"]["cells"]["tokens"] == whole["inputs"]["cells"]["tokens"][:3]
    resumed = run("b", 6, "resumed")
    for k in ("inputs", "rows", "sweep", "convergence", "state", "tokens_done", "tokens_planned"):
        assert resumed[k] == whole[k], k
    assert math.isfinite(resumed["rows"]["ellipsoid + non-uniform cells"]["C"])
    # a fresh machine: an empty store beside the committed 3-token artifact goes on from it
    run("b", 3, "fresh")
    fresh = run("c", 6, "fresh")
    assert "imported 3 resolved tokens" in logs[-1]
    for k in ("inputs", "rows", "sweep", "store_key", "tokens_done"):
        assert fresh[k] == whole[k], k


def test_a_partial_artifact_loads_and_says_it_is_partial(tmp_path):
    from accessibility_lib.geometry import table1_resolved as T

    art = json.loads((ROOT / "book" / "data" / "support" / "resolved" / "nano.json").read_text())
    assert T.partial_text(art) == ""  # written before the state field: complete
    n = len(art["inputs"]["cells"]["tokens"])
    art.update(state="partial", tokens_done=n, tokens_planned=2 * n)
    (tmp_path / "nano.json").write_text(json.dumps(art))
    arts, notes = T.load_resolved(["nano"], folder=tmp_path)
    assert f"partial: {n:,} of {2 * n:,} planned tokens" in " ".join(notes)
    assert T.partial_text(arts["nano"]).startswith(" partial")
    rows = T.rows_from_inputs(arts["nano"]["inputs"])  # the rows are computed from the tokens done
    assert math.isfinite(rows["ellipsoid + non-uniform cells"]["C"])
