"""The n50 search that spends its targets near n50: the sequential side test, the search, resumption.

Expected values are independent of the implementation: the side test's error is checked by simulating
Bernoulli targets, the search against known logistic curves, resumption against an uninterrupted run.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import transformers

from accessibility_lib.experiments.fitting import logistic
from accessibility_lib.experiments.n50 import StopSearch, find_n50, token_steps
from accessibility_lib.experiments.n50_bisect import locate_n50
from accessibility_lib.experiments.n50_sequential import locate_n50_sequential, predict_n50, width_reached
from accessibility_lib.experiments.sidetest import operating_characteristic, side_test
from accessibility_lib.ground.results import ResultStore
from accessibility_lib.models.handle import wrap_model

torch.set_num_threads(1)
FAST = dict(max_steps=150, lr=0.05, patience=60)


@pytest.mark.parametrize("n_max,alpha,batch", [(10, 0.05, 2), (20, 0.05, 2), (20, 0.1, 1), (12, 0.2, 3)])
def test_side_test_error_rate_on_simulated_bernoulli_targets_is_at_most_its_level(n_max, alpha, batch):
    test = side_test(n_max, alpha, batch=batch)
    assert test.error <= alpha
    rng = np.random.default_rng(0)
    reps = 20000
    for p in (0.5, 0.45, 0.35):  # a rate below 1/2: deciding "above" is the error (worst at p -> 1/2)
        draws = rng.random((reps, n_max)) < p
        wrong = 0
        for row in draws:
            for j in test.looks:
                d = test.decide(int(row[:j].sum()), j)
                if d is not None:
                    wrong += d == "above"
                    break
        rate = wrong / reps
        assert rate <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / reps), (p, rate)
        # the exact dynamic programme agrees with the simulation
        exact = operating_characteristic(test, p)["above"]
        assert abs(rate - exact) <= 4 * np.sqrt(max(exact, 1e-4) / reps) + 1e-3


def test_side_test_decides_fast_far_from_one_half_and_never_wrongly_at_the_extremes():
    test = side_test(10, 0.05)
    far = operating_characteristic(test, 0.02)
    assert far["below"] > 0.9 and far["above"] < 1e-6 and far["expected_trials"] < 6
    assert (
        operating_characteristic(test, 1.0)["above"] == 1.0
        and operating_characteristic(test, 1.0)["expected_trials"] == 5
    )


def test_side_test_bad_input():
    with pytest.raises(ValueError, match="alpha"):
        side_test(10, 0.6)
    with pytest.raises(ValueError, match="n_max"):
        side_test(0)
    with pytest.raises(ValueError, match="looks"):
        side_test(10).decide(1, 2)


def test_predict_n50_from_finished_prompt_lengths():
    assert predict_n50(3, {1: 10.0, 2: 20.0}, 12.0) == pytest.approx(30.0)
    assert predict_n50(4, {2: 9.0}, 12.0) == pytest.approx(18.0)
    assert predict_n50(2, {}, 12.0) == pytest.approx(24.0)
    assert predict_n50(2, {1: float("nan")}, 5.0) == pytest.approx(10.0)


def _curve(n50, k, seed, cap=300):
    """A simulated model: target i at length n succeeds with the logistic probability; failures cost the cap."""
    rng = np.random.default_rng(seed)
    memo = {}

    def outcome(n, i):
        if (n, i) not in memo:
            ok = rng.random() < logistic(n, n50, k)
            memo[n, i] = (ok, int(cap * rng.uniform(0.2, 1.0)) if ok else cap)
        return memo[n, i]

    def evaluate(n, count):
        return float(np.mean([outcome(n, i)[0] for i in range(count)])), count, 0

    def cost(res):
        return sum(outcome(int(n), i)[1] * n for n, t in zip(res.lengths, res.trials) for i in range(int(t)))

    return evaluate, cost


def test_sequential_search_finds_n50_with_fewer_token_steps_than_the_bisection():
    errs, ratio = [], []
    for rep in range(30):
        ev, cost = _curve(40.0, 0.2, rep)
        old = locate_n50(ev, 12, 4096, n_trials=10, n_probe=10, n_around=0)  # the first artifacts' design
        new = locate_n50_sequential(ev, 12, 4096, n_trials=10)
        assert new.bracketed and new.fit.ok
        errs.append(new.n50 - 40.0)
        ratio.append(cost(old) / cost(new))
        assert set(new.trials) <= {5.0, 7.0, 9.0, 10.0}  # decided early far away, all ten where it is pinned
    assert abs(np.mean(errs)) < 1.5 and np.sqrt(np.mean(np.square(errs))) < 4.0
    assert np.mean(ratio) > 1.2


def test_a_precision_target_stops_the_search_once_its_interval_is_that_wide_and_spends_less():
    """``max_width``: the search ends with a closed interval no wider than the target, or with every target at
    the lengths it tried when the target cannot be reached; it never costs more than the search without it,
    whose decisions it repeats up to the stop."""
    stopped = 0
    for rep in range(12):
        ev, cost = _curve(40.0, 0.2, rep)
        full = locate_n50_sequential(ev, 12, 4096, n_trials=10)
        width = 1.5 * (full.fit.ci[1] - full.fit.ci[0])  # a looser precision than the full search reaches
        held = locate_n50_sequential(ev, 12, 4096, n_trials=10, max_width=width)
        assert held.fit.ok and not any(held.fit.ci_open)
        assert held.fit.ci[1] - held.fit.ci[0] <= width + 1e-9
        assert cost(held) <= cost(full)
        stopped += cost(held) < cost(full)
        assert held.fit.ci[0] - 1e-9 <= held.n50 <= held.fit.ci[1] + 1e-9
        if cost(held) < cost(full):  # it stopped early, so its own check held on the lengths it tried
            assert width_reached(held.fit, held.lengths, width)
        assert not width_reached(held.fit, held.lengths, 0.5 * (held.fit.ci[1] - held.fit.ci[0]))
        assert not width_reached(held.fit, [held.fit.ci[0] + 0.5], width)  # an end outside the lengths tried
    assert stopped >= 6  # the target is looser than the full search's width, so most searches stop early
    ev, cost = _curve(40.0, 0.2, 0)
    unreachable = locate_n50_sequential(ev, 12, 4096, n_trials=10, max_width=0.01)
    assert cost(unreachable) == cost(locate_n50_sequential(ev, 12, 4096, n_trials=10))
    with pytest.raises(ValueError, match="max_width"):
        locate_n50_sequential(ev, 12, 4096, n_trials=10, max_width=0.0)


def test_a_flat_curve_left_open_by_the_pins_gets_lengths_beyond_them_until_the_interval_closes():
    """Gemma-3-270M, natural text, m = 1 (chapter 3) stopped with rates 0.6 … 0.4 over every length tried and an
    interval open at both ends. With a curve that flat (k = 0.12 per token, exact rates, 20 targets) the
    crossing is bracketed but the interval is open; the search then tries a length past the longest one and
    the interval closes."""

    def ev(n, count):
        return round(float(logistic(n, 12.0, 0.12)) * count) / count, count, 0

    stuck = locate_n50_sequential(ev, 12, 4096, n_trials=20, close_open=0)
    assert stuck.bracketed and stuck.fit.ok and all(stuck.fit.ci_open)
    closed = locate_n50_sequential(ev, 12, 4096, n_trials=20)
    assert not any(closed.fit.ci_open) and max(closed.lengths) > max(stuck.lengths)
    assert closed.fit.ci[0] < 12.0 < closed.fit.ci[1]
    assert set(stuck.lengths) < set(closed.lengths)  # the same search, continued


def test_stored_outcomes_of_other_searches_join_the_fit_without_being_crammed_again():
    """A length another search stored (here 30, targets 0–9) joins the final fit with exactly the stored
    targets, as the chapters' re-fit from every stored outcome does, so the open-interval check sees that fit."""
    asked = []

    def ev(n, count):
        asked.append((n, count))
        return round(float(logistic(n, 12.0, 0.3)) * count) / count, count, 0

    res = locate_n50_sequential(ev, 12, 4096, n_trials=20, stored=lambda: {30: 10})
    assert (30, 10) in asked and not any(n == 30 and c > 10 for n, c in asked)
    assert 30.0 in res.lengths and res.trials[list(res.lengths).index(30.0)] == 10


def test_sequential_search_spends_all_targets_on_the_lengths_that_pin_the_crossing():
    ev, _ = _curve(20.0, 0.4, 1)
    res = locate_n50_sequential(ev, 8, 512, n_trials=20)
    lo, hi = res.bracket
    full = {int(n) for n, t in zip(res.lengths, res.trials) if t == 20}
    assert lo in full and hi in full and lo < 20 < hi + 3
    assert min(res.trials) < 20  # lengths far from n50 were settled with fewer targets


def test_sequential_search_variants_cap_the_full_counts_and_settle_far_lengths_with_fewer_targets():
    """max_full stops the pinning once that many lengths hold every target; bracket_alpha 0.2 settles a far length with 3 targets
    (2^-3 <= 0.2) where the default level 0.05 needs 5 (benchmarks/bench_n50_design_sim.py measures both)."""
    fewer = 0
    for rep in range(10):
        ev, _ = _curve(30.0, 0.3, rep)
        full = locate_n50_sequential(ev, 2.0, 4096, n_trials=10)
        capped = locate_n50_sequential(ev, 2.0, 4096, n_trials=10, max_full=2)
        n_full, n_capped = sum(t == 10 for t in full.trials), sum(t == 10 for t in capped.trials)
        assert n_capped <= n_full and capped.trials.sum() <= full.trials.sum() and capped.fit.ok
        fewer += n_capped < n_full
    assert fewer > 0  # the cap stopped some search that would have pinned again
    ev, _ = _curve(30.0, 0.5, 3)
    plain = locate_n50_sequential(ev, 2.0, 4096, n_trials=10)
    loose = locate_n50_sequential(ev, 2.0, 4096, n_trials=10, bracket_alpha=0.2)
    assert min(plain.trials) == 5 and min(loose.trials) == 3 and loose.bracketed
    with pytest.raises(ValueError, match="max_full"):
        locate_n50_sequential(ev, 2.0, 64, n_trials=10, max_full=0)
    with pytest.raises(ValueError, match="alpha"):
        locate_n50_sequential(ev, 2.0, 64, n_trials=10, bracket_alpha=0.7)


def test_sequential_search_one_sided_when_nothing_fails():
    res = locate_n50_sequential(lambda n, c: (1.0, c, 0), 4, 64, n_trials=10)
    assert not res.bracketed and not res.fit.ok and res.fit.bound == (">=", 64.0)


def _tiny():
    torch.manual_seed(0)
    cfg = transformers.GPTNeoXConfig(
        vocab_size=64,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        max_position_embeddings=64,
        initializer_range=0.3,
    )
    return wrap_model(transformers.GPTNeoXForCausalLM(cfg), verify=False)


def _source(n, i):
    return torch.randint(0, 64, (n,), generator=torch.Generator().manual_seed(1000 * n + i)).tolist()


def test_a_search_killed_at_a_random_point_and_resumed_gives_the_same_outcomes(tmp_path):
    tiny = _tiny()
    kw = dict(model_name="tiny", source_name="rand", n_pred=6, show_progress=False, **FAST)
    full = find_n50(tiny, _source, 1, 6, store=ResultStore(tmp_path / "a"), **kw)
    batches = len({(r["n"]) for r in full.outcomes})
    assert full.design == "sequential" and full.runs == len(full.outcomes) and full.cached == 0
    kill = int(np.random.default_rng(7).integers(1, max(2, batches)))
    store = ResultStore(tmp_path / "b")
    calls = {"n": 0}

    def stop():
        calls["n"] += 1
        return calls["n"] > kill

    with pytest.raises(StopSearch):
        find_n50(tiny, _source, 1, 6, store=store, should_stop=stop, **kw)
    again = find_n50(tiny, _source, 1, 6, store=store, **kw)
    strip = lambda res: [(r["n"], r["target"], r["success"], r["steps"]) for r in res.outcomes]  # noqa: E731
    assert strip(again) == strip(full)
    assert again.cached > 0 and again.runs + again.cached == full.runs
    assert again.token_steps == full.token_steps == token_steps(full.outcomes, 1)


def test_a_search_that_does_not_prefer_stored_lengths_chooses_as_on_an_empty_store(tmp_path):
    """prefer_stored=False (the search benchmark): lengths another design stored answer look-ups but do not
    steer the search, so it uses the same lengths and outcomes as on an empty store, and crams fewer."""
    tiny = _tiny()
    kw = dict(model_name="tiny", source_name="rand", show_progress=False, **FAST)
    store = ResultStore(tmp_path / "shared")
    other = find_n50(tiny, _source, 1, 6, store=store, design="bisect", n_start=3, n_probe=6, n_around=0, **kw)
    alone = find_n50(tiny, _source, 1, 6, store=ResultStore(tmp_path / "alone"), n_pred=9, **kw)
    beside = find_n50(tiny, _source, 1, 6, store=store, n_pred=9, prefer_stored=False, **kw)
    strip = lambda res: [(r["n"], r["target"], r["success"], r["steps"]) for r in res.outcomes]  # noqa: E731
    assert strip(beside) == strip(alone) and beside.token_steps == alone.token_steps
    shared = {(r["n"], r["target"]) for r in other.outcomes} & {(r["n"], r["target"]) for r in alone.outcomes}
    assert shared and beside.cached == len(shared) and beside.runs == alone.runs - len(shared)


class _Passages:
    """A natural-text-like source: target i of length n is the first n tokens of passage i (prefix-consistent)."""

    kind = "natural"

    def __call__(self, n, i):
        return torch.randint(0, 64, (64,), generator=torch.Generator().manual_seed(i)).tolist()[:n]


def test_both_designs_give_natural_targets_the_passage_horizon_interval(tmp_path):
    """Shared passages: the bisection's interval is computed as the sequential design's is (passage horizons), so
    the search benchmark compares the two like for like."""
    tiny = _tiny()
    kw = dict(model_name="tiny", source_name="passages", show_progress=False, **FAST)
    store = ResultStore(tmp_path / "s")
    bis = find_n50(tiny, _Passages(), 1, 6, store=store, design="bisect", n_start=3, n_probe=6, n_around=0, **kw)
    seq = find_n50(tiny, _Passages(), 1, 6, store=store, n_pred=4, **kw)
    for res in (bis, seq):
        assert res.fit.ok and "passage horizons" in res.fit.method, res.fit.method
    plain = find_n50(tiny, _source, 1, 6, store=store, design="bisect", n_start=3, n_probe=6, n_around=0, **kw)
    assert "passage horizons" not in plain.fit.method


def test_find_n50_refuses_an_unknown_design():
    with pytest.raises(ValueError, match="design must be one of 'sequential', 'bisect'"):
        find_n50(_tiny(), _source, 1, 4, design="grid")


def test_token_steps_counts_every_input_position_of_every_step():
    rows = [{"n": 5, "steps": 10}, {"n": 2, "steps": 3}]
    # m = 2, a BOS before the prompt: positions = 1 + 2 + n - 1
    assert token_steps(rows, 2, 1) == 10 * 7 + 3 * 4


#: one bisection at fixed lengths on the tiny model, for the tests of nested budgets
NESTED = dict(
    model_name="tiny",
    source_name="rand",
    show_progress=False,
    lr=0.05,
    design="bisect",
    n_start=6,
    n_probe=6,
    n_around=0,
)


def test_a_budget_read_off_a_longer_run_equals_running_that_budget(tmp_path):
    """With no patience, b steps are the first b steps of a longer run: nested outcomes equal direct ones."""
    tiny = _tiny()
    kw = dict(NESTED)
    long_store = ResultStore(tmp_path / "nested")
    find_n50(tiny, _source, 1, 6, store=long_store, max_steps=60, patience=60, **kw)
    nested = find_n50(tiny, _source, 1, 6, store=long_store, max_steps=20, patience=20, nested_budgets=(20, 60), **kw)
    direct = find_n50(tiny, _source, 1, 6, store=ResultStore(tmp_path / "direct"), max_steps=20, patience=20, **kw)
    strip = lambda res: [(r["n"], r["target"], r["success"], r["steps"]) for r in res.outcomes]  # noqa: E731
    assert strip(nested) == strip(direct)
    assert any(r.get("derived_from") == 60 for r in nested.outcomes) and nested.runs < direct.runs


def test_without_a_prediction_the_search_climbs_from_below_and_pays_less():
    """Failures cost the whole budget at the longest inputs, successes far below n50 stop early: a search
    with no prediction (predict_for -> None) starts at COLD_START and approaches n50 from below."""
    from accessibility_lib.runs.cramming_units import COLD_START, CrammingUnit, predict_for

    assert predict_for(CrammingUnit("natural", 1), []) is None
    assert predict_for(CrammingUnit("natural", 2), [(CrammingUnit("natural", 1), 4.0)]) == pytest.approx(8.0)
    n50, cap = 4.0, 300
    ratios, errs = [], []
    for rep in range(30):
        rng = np.random.default_rng(rep)
        memo = {}

        def outcome(n, i):
            if (n, i) not in memo:
                ok = rng.random() < logistic(n, n50, 1.0)
                memo[n, i] = (ok, max(1, int(cap * min(1.0, (n / (2 * n50)) ** 2))) if ok else cap)
            return memo[n, i]

        def ev(n, count):
            return float(np.mean([outcome(n, i)[0] for i in range(count)])), count, 0

        def cost(res):
            return sum(outcome(int(n), i)[1] * n for n, t in zip(res.lengths, res.trials) for i in range(int(t)))

        high = locate_n50_sequential(ev, 12, 256, n_trials=10)
        cold = locate_n50_sequential(ev, COLD_START, 256, n_trials=10)
        assert cold.bracketed and cold.fit.ok
        ratios.append(cost(high) / cost(cold))
        errs.append(cold.n50 - n50)
    assert np.mean(ratios) > 1.3
    assert abs(np.mean(errs)) < 1.0


def test_a_larger_budget_continues_the_smaller_ones_failures_and_equals_running_it(tmp_path):
    """With no patience, a 60-step search on a store holding a 20-step search continues that search's
    capped failures from their Adam states: its outcomes equal a 60-step search on an empty store."""
    tiny = _tiny()
    kw = dict(NESTED, nested_budgets=(20, 60))
    store = ResultStore(tmp_path / "nested")
    short = find_n50(tiny, _source, 1, 6, store=store, max_steps=20, patience=20, **kw)
    assert any(not r["success"] and "adam_steps" in r for r in short.outcomes)
    assert not any("exp_avg" in r for r in short.outcomes)  # arrays stay in the store, not in the outcomes
    longer = find_n50(tiny, _source, 1, 6, store=store, max_steps=60, patience=60, **kw)
    direct = find_n50(tiny, _source, 1, 6, store=ResultStore(tmp_path / "direct"), max_steps=60, patience=60, **kw)
    strip = lambda res: [(r["n"], r["target"], r["success"], r["steps"]) for r in res.outcomes]  # noqa: E731
    assert strip(longer) == strip(direct)
    assert any(r.get("continued_from") == 20 for r in longer.outcomes)


def test_the_states_travel_with_the_artifact_to_a_fresh_store(tmp_path):
    """A fresh machine has only ``book/data``: the capped failures' Adam states written beside the artifact
    come back with its outcomes, and the larger budget still continues them."""
    from accessibility_lib.models.fingerprint import weights_fingerprint
    from accessibility_lib.runs import cramming_artifacts as CA

    tiny = _tiny()
    kw = dict(NESTED, nested_budgets=(20, 60))
    old = ResultStore(tmp_path / "old")
    short = find_n50(tiny, _source, 1, 6, store=old, max_steps=20, patience=20, **kw)

    def unit(steps, rows):
        return {
            "uid": f"natural/x/m1/steps{steps}/paper/float32",
            "kind": "natural",
            "m": 1,
            "length_convention": "first_given",
            "corpus": "c",
            "n_targets": 6,
            "seed": 0,
            "instrument": "paper",
            "dtype": "float32",
            "patience": None,
            "max_steps": steps,
            "weights": weights_fingerprint(tiny),
            "source": "rand",
            "layout": None,
            "settings": {"lr": 0.05, "max_steps": steps, "patience": steps},
            "outcomes": rows,
        }

    units = [unit(20, short.outcomes), unit(60, [])]
    path = tmp_path / "tiny.json"
    CA.write_artifact(path, model="tiny", units=units, provenance={"started": "t0"})
    capped = sum(not r["success"] for r in short.outcomes)
    assert CA.write_states(path, old, "tiny", units) == capped > 0
    assert CA.write_states(tmp_path / "alone.json", old, "tiny", units[:1]) == 0  # nothing continues it
    fresh = ResultStore(tmp_path / "fresh")
    assert CA.import_artifact(path, fresh) == len(short.outcomes)
    longer = find_n50(tiny, _source, 1, 6, store=fresh, max_steps=60, patience=60, **kw)
    direct = find_n50(tiny, _source, 1, 6, store=ResultStore(tmp_path / "direct"), max_steps=60, patience=60, **kw)
    strip = lambda res: [(r["n"], r["target"], r["success"], r["steps"]) for r in res.outcomes]  # noqa: E731
    assert strip(longer) == strip(direct)
    assert any(r.get("continued_from") == 20 for r in longer.outcomes)
