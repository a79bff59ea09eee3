"""The ``authors`` cramming instrument against the authors' loop, and continuing a stored run to a larger budget.

The reference below follows the rules of the authors' replication code (``cramming/train.py`` of their public
repository) written out one target at a time with ``torch.optim.AdamW``: a prompt N(0, 1)·std(W_E) (raw table),
check, update, a patience counter reset only on a strict rise of the teacher-forced accuracy, success at 100 %
accuracy, at most ``cap`` updates. ``cram(..., rule="authors")`` runs many targets in one batch with its own Adam;
both must give the same stop (reason and step), the same best accuracy and the same kept prompt.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from accessibility_lib.experiments.cramming import cram
from accessibility_lib.experiments.instruments import get_instrument
from accessibility_lib.experiments.prompt_init import raw_table_std

torch.set_num_threads(1)

LR, CAP, PATIENCE, M, SEED = 0.05, 150, 60, 4, 5


@pytest.fixture(scope="module")
def tiny(make_tiny_neox):
    return make_tiny_neox()


def _targets(lengths=(3, 4, 6, 8, 12, 16), seed=3):
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(0, 64, (n,), generator=g).tolist() for n in lengths]


def _authors_reference(handle, target, m, seed, *, lr, cap, patience):
    """One target through the authors' rules, plainly (the first text token given, scored from the second)."""
    model = handle.model
    std = handle.model.get_input_embeddings().weight.detach().float().std()
    z = torch.randn(m, int(handle.d_model), generator=torch.Generator().manual_seed(seed))
    prompt = torch.nn.Parameter((z * std).clone())
    opt = torch.optim.AdamW([prompt], lr=lr, betas=(0.9, 0.9), weight_decay=0.01)
    t = torch.tensor(target)
    text = handle.embed(t[None, :-1])[0].detach()  # (n - 1, d): t_1 … t_{n-1}
    best, counter, steps, reason = 0.0, 0, 0, "cap"
    for _ in range(cap):
        logits = model(inputs_embeds=torch.cat([prompt, text])[None], use_cache=False).logits[0, m:]  # (n - 1, V)
        loss = F.cross_entropy(logits, t[1:])
        acc = (logits.argmax(-1) == t[1:]).float().mean().item()
        loss.backward()
        opt.step()
        opt.zero_grad()
        steps += 1
        if best < acc:
            best, counter = acc, 0
        else:
            counter += 1
        if best >= 1 - 1e-6:
            reason = "success"
            break
        if counter >= patience:
            reason = "patience" if steps < cap else "cap"  # the same failure; the book names a stop at the cap "cap"
            break
    return reason, steps, best, prompt.detach().clone()


def test_authors_instrument_is_the_authors_loop_on_a_stand_in(tiny):
    """Init, patience rule, cap and success test match the reference trace target by target; the targets cover
    every way the loop ends (success, patience, cap), so none of the three rules goes untested."""
    targets = _targets()
    opt = {**get_instrument("authors").optimiser(), "lr": LR}
    assert opt["init"] == "raw_table" and opt["rule"] == "authors"
    res = cram(tiny, targets, M, max_steps=CAP, patience=PATIENCE, seed=SEED, n_given=1, **opt)
    seen = set()
    for i, tg in enumerate(targets):
        reason, steps, best, prompt = _authors_reference(tiny, tg, M, SEED + i, lr=LR, cap=CAP, patience=PATIENCE)
        assert (res.stopped_by[i], int(res.steps[i])) == (reason, steps), f"target {i}"
        assert bool(res.success[i]) == (reason == "success")
        assert res.best_accuracy[i] == pytest.approx(best)
        torch.testing.assert_close(res.prompts[i], prompt, rtol=1e-4, atol=1e-5)  # the prompt the loop keeps
        seen.add(reason)
    assert seen == {"success", "patience", "cap"}
    # the book's verification beside theirs: a kept prompt (one update after the hit) may not decode its target
    assert res.verified[res.success].sum() < res.success.sum() <= res.verified_at_hit.sum()


def test_authors_init_is_zero_mean_at_the_raw_tables_spread(tiny):
    res = cram(tiny, [[1, 2, 3]], 3, max_steps=0, patience=1, seed=7, n_given=1, init="raw_table", rule="authors")
    z = torch.randn(3, int(tiny.d_model), generator=torch.Generator().manual_seed(7))
    torch.testing.assert_close(res.prompts[0], z * raw_table_std(tiny))
    assert res.stopped_by[0] == "cap" and int(res.steps[0]) == 0  # a cap of 0: no check, no update


@pytest.mark.parametrize(("short_patience", "patience"), [(None, 25), (15, 15)])
def test_a_continued_authors_run_is_the_fresh_run_at_the_larger_budget(tiny, short_patience, patience):
    """20 steps, then continued to 60 from the stored state = 60 steps in one go, with the authors' patience
    (the stored run had none and 25 > 20, or it had the same patience and had not used it up)."""
    targets = _targets((5, 6, 8, 9, 10, 12), seed=4)
    kw = dict(lr=LR, n_given=1, init="raw_table", rule="authors", betas=(0.9, 0.9), weight_decay=0.01)
    short = cram(tiny, targets, 2, max_steps=20, patience=short_patience or 20, seed=11, **kw)
    fresh = cram(tiny, targets, 2, max_steps=60, patience=patience, seed=11, **kw)
    capped = [i for i in range(len(targets)) if short.stopped_by[i] == "cap" and short.since_best[i] < patience]
    assert capped
    cont = cram(
        tiny,
        [targets[i] for i in capped],
        2,
        max_steps=60,
        patience=patience,
        seed=[11 + i for i in capped],
        resume=[short.state(i) for i in capped],
        **kw,
    )
    for j, i in enumerate(capped):
        assert (cont.stopped_by[j], cont.steps[j], cont.success[j]) == (
            fresh.stopped_by[i],
            fresh.steps[i],
            fresh.success[i],
        )
        torch.testing.assert_close(cont.prompts[j], fresh.prompts[i], rtol=1e-5, atol=1e-6)
    assert any(int(cont.steps[j]) > 20 for j in range(len(capped)))  # not vacuous: continued runs went on


def test_a_continuation_that_is_not_provably_the_same_run_is_refused(tiny):
    targets = _targets((6, 7), seed=2)
    kw = dict(n_given=1, init="raw_table", rule="authors", betas=(0.9, 0.9), weight_decay=0.01, seed=3)
    short = cram(tiny, targets, 2, max_steps=20, patience=20, lr=LR, **kw)
    state = short.state(0)
    with pytest.raises(ValueError, match=r"already run 20 steps, more than max_steps = 10"):
        cram(tiny, targets[:1], 2, max_steps=10, patience=10, lr=LR, resume=[state], **kw)
    with pytest.raises(ValueError, match=r"lr = 0\.05.*lr = 0\.01.*different optimiser settings"):
        cram(tiny, targets[:1], 2, max_steps=60, patience=60, lr=0.01, resume=[state], **kw)
    with pytest.raises(ValueError, match=r"rule = 'authors'.*rule = 'book'"):
        cram(tiny, targets[:1], 2, max_steps=60, patience=60, lr=LR, resume=[state], **{**kw, "rule": "book"})
    with pytest.raises(ValueError, match=r"ran 20 steps with patience None, this run has patience 15"):
        cram(tiny, targets[:1], 2, max_steps=60, patience=15, lr=LR, resume=[state], **kw)
    with pytest.raises(ValueError, match=r"seed 3, this run's target from seed 9"):
        cram(tiny, targets[:1], 2, max_steps=60, patience=60, lr=LR, resume=[state], **{**kw, "seed": 9})
    sc, ar = state
    with pytest.raises(ValueError, match="carries no optimiser settings"):
        cram(tiny, targets[:1], 2, max_steps=60, patience=60, lr=LR, resume=[({**sc, "settings": None}, ar)], **kw)
    stalled = ({**sc, "settings": {**sc["settings"], "patience": 5}, "since_best": 5}, ar)
    with pytest.raises(ValueError, match="patience 5 would have stopped it already"):
        cram(tiny, targets[:1], 2, max_steps=60, patience=5, lr=LR, resume=[stalled], **kw)


def test_find_n50_continues_the_authors_budget_and_matches_a_fresh_search(tiny, tmp_path):
    """The nested budgets with the authors' patience: a search at 40 steps (patience 30) on a store holding the
    20-step search (no patience) gives exactly the per-target outcomes of the same search on an empty store."""
    from accessibility_lib.experiments.n50 import find_n50
    from accessibility_lib.ground.results import ResultStore

    def source(n, i):
        return _targets((n,), seed=100 + i)[0]

    common = dict(
        lr=LR, betas=(0.9, 0.9), weight_decay=0.01, init="raw_table", rule="authors", n_given=1, seed=0,
        design="bisect", n_start=6, n_probe=4, n_around=0, show_progress=False, nested_budgets=(20, 40),
    )  # fmt: skip
    warm = ResultStore(tmp_path / "warm")
    find_n50(tiny, source, 3, 4, store=warm, max_steps=20, patience=20, **common)
    cont = find_n50(tiny, source, 3, 4, store=warm, max_steps=40, patience=30, **common)
    fresh = find_n50(tiny, source, 3, 4, store=ResultStore(tmp_path / "cold"), max_steps=40, patience=30, **common)

    def key(r):
        return (r["n"], r["target"], r["success"], r["steps"], r.get("stopped_by"))

    assert sorted(map(key, cont.outcomes)) == sorted(map(key, fresh.outcomes))
    assert any("continued_from" in r for r in cont.outcomes) or any("derived_from" in r for r in cont.outcomes)


def test_a_patience_that_runs_out_at_the_cap_is_the_cap(tiny):
    """A run with no patience (patience = budget) whose accuracy never rises stops at the cap, not by patience:
    a larger budget with a longer patience continues it (the nested budgets read it so)."""
    res = cram(tiny, [[1, 2, 3, 4, 5, 6, 7, 8]], 1, max_steps=4, patience=4, lr=1e-6, n_given=1, rule="authors")
    assert int(res.since_best[0]) == 4 and (res.stopped_by[0], int(res.steps[0])) == ("cap", 4)
    res = cram(tiny, [[1, 2, 3, 4, 5, 6, 7, 8]], 1, max_steps=9, patience=4, lr=1e-6, n_given=1, rule="authors")
    assert (res.stopped_by[0], int(res.steps[0])) == ("patience", 4)


def test_unknown_init_or_rule_is_refused_with_the_choices(tiny):
    with pytest.raises(ValueError, match=r"init must be one of \('embedding_stats', 'raw_table'\)"):
        cram(tiny, [[1, 2, 3]], 1, max_steps=2, init="zeros")
    with pytest.raises(ValueError, match=r"rule one of \('book', 'authors'\)"):
        cram(tiny, [[1, 2, 3]], 1, max_steps=2, rule="theirs")
    assert np.isfinite(raw_table_std(tiny))
