"""Tests of accessibility_lib.experiments.cramming: verified cramming, batching, resumable n50 search, bad input.

Most tests use a tiny random GPT-NeoX built from a config (no download); the model-level check
uses the shipped ``nano`` model (committed in the package, so never skipped).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from accessibility_lib.experiments.cramming import cram
from accessibility_lib.experiments.fitting import logistic
from accessibility_lib.experiments.n50 import find_n50
from accessibility_lib.experiments.n50_bisect import locate_n50
from accessibility_lib.ground.results import ResultStore
from accessibility_lib.models.decoding import greedy_decode, recompute_argmax

torch.set_num_threads(1)  # tiny models: threads only add overhead on a shared 2-core machine

FAST = dict(max_steps=150, lr=0.05, patience=60)


@pytest.fixture(scope="module")
def tiny(make_tiny_neox):
    return make_tiny_neox()


def _rand_targets(lengths, vocab=64, seed=1):
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(0, vocab, (n,), generator=g).tolist() for n in lengths]


@pytest.fixture(scope="module")
def nano():
    from accessibility_lib.models.loading import load_model

    return load_model("nano")  # shipped in the package: a missing model is a failure, not a skip


def test_nano_short_natural_target_crammed_and_generate_reproduces_it(nano):
    from accessibility_lib.models.text import natural_targets

    # nano (4 layers, d = 128) crams only very short targets into one vector: its n50(m=1) is ~2
    # tokens (chapter 3); this window (" hosts,") is crammed in about ten steps.
    target = natural_targets(nano.tokenizer, 2, 1, seed=0)[0].tolist()
    res = cram(nano, [target], 1, max_steps=200, lr=0.01, patience=100, seed=0)
    assert res.success[0], (res.best_accuracy, res.final_loss)
    assert res.steps[0] > 0  # the initial prompt did not already produce it
    out = nano.model.generate(
        inputs_embeds=res.prompts[:1],
        attention_mask=torch.ones(1, 1, dtype=torch.long),
        max_new_tokens=len(target),
        do_sample=False,
        pad_token_id=1,
    )
    assert out[0, -len(target) :].tolist() == target  # independent decoding path (HF generate)


# The bound itself (Thm 4.5 under Assumption 4.3) is tested in tests/test_packing_theorem.py on a model whose
# input is rounded to an ε-grid, not by a cramming budget.


def test_crams_short_targets_and_greedy_decoding_reproduces_them(tiny):
    targets = _rand_targets([2, 3, 3, 40])
    res = cram(tiny, targets, 2, seed=0, **FAST)
    assert res.success[:3].all() and not res.success[3]
    assert (res.steps[:3] < FAST["max_steps"]).all()  # early stop as soon as crammed
    dec = greedy_decode(tiny, res.prompts[:3], 5)
    for i in range(3):
        assert dec[i, : len(targets[i])].tolist() == targets[i]
        out = tiny.model.generate(
            inputs_embeds=res.prompts[i : i + 1],
            attention_mask=torch.ones(1, 2, dtype=torch.long),
            max_new_tokens=len(targets[i]),
            do_sample=False,
            pad_token_id=0,
        )
        assert out[0, -len(targets[i]) :].tolist() == targets[i]
    assert res.best_accuracy[3] < 1.0 and np.isfinite(res.final_loss).all()
    assert res.prompts.shape == (4, 2, 32) and res.prompts.dtype == torch.float32


def test_prefix_tokens_before_the_prompt(tiny):
    targets = _rand_targets([2, 3])
    res = cram(tiny, targets, 2, seed=0, prefix_ids=[7], **FAST)
    assert res.success.all()
    pre = tiny.embed(torch.tensor([[7]]))  # (1, 1, d)
    for i, t in enumerate(targets):
        x = torch.cat([pre, res.prompts[i : i + 1]], 1)  # the prefix, then the m soft vectors
        out = tiny.model.generate(
            inputs_embeds=x,
            attention_mask=torch.ones(1, 3, dtype=torch.long),
            max_new_tokens=len(t),
            do_sample=False,
            pad_token_id=0,
        )
        assert out[0, -len(t) :].tolist() == t
    with pytest.raises(ValueError, match="prefix_ids"):
        cram(tiny, targets, 1, prefix_ids=[64])


def test_batched_equals_one_at_a_time_up_to_the_rounding_of_batched_products(tiny):
    """Each target of a batch follows its own optimisation: run alone from its seed, it ends as in the batch.

    Not bit for bit: on CPU a batched matrix product rounds differently from the same product on one row
    (``F.linear``, pytorch/pytorch#136338), and the steps carry the difference on. Measured here (torch 2.13 CPU,
    one thread, these six targets): the same success, stop and step count for all six (three crammed in 29–106
    steps, two at the 150-step cap, one stopped by patience at 148); the prompts differ by 8e-7 to 2.5e-5
    (one is identical). The tolerances below are these measurements with a margin. A larger set can move a
    patience stop further (32 steps on ``nano`` at 300 steps) or flip a target at the threshold, which is why
    the book says which design produced its numbers.
    """
    targets = _rand_targets([2, 3, 5, 8, 12, 30], seed=5)
    batched = cram(tiny, targets, 2, seed=10, **FAST)
    for i, t in enumerate(targets):
        single = cram(tiny, [t], 2, seed=[10 + i], **FAST)
        assert single.success[0] == batched.success[i], i  # measured: equal for all six
        assert single.stopped_by[0] == batched.stopped_by[i], i  # measured: equal for all six
        assert abs(int(single.steps[0]) - int(batched.steps[i])) <= 2, i  # measured: 0 for all six
        diff = float((single.prompts[0] - batched.prompts[i]).abs().max())
        assert diff <= 1e-3, (i, diff)  # measured: at most 2.5e-5, after 106 steps
    assert batched.success.any() and not batched.success.all()  # the check is not vacuous


def test_batch_size_chunks_give_same_outcomes(tiny):
    targets = _rand_targets([2, 3, 6, 25], seed=7)
    a = cram(tiny, targets, 1, seed=3, **FAST)
    b = cram(tiny, targets, 1, seed=3, batch_size=2, **FAST)
    assert (a.success == b.success).all()


def test_divergence_restarts_from_fresh_seed_and_is_reported(tiny):
    res = cram(tiny, _rand_targets([4]), 1, max_steps=20, lr=1e5, patience=20, max_restarts=2, seed=0)
    assert res.restarts[0] == 2 and res.diverged[0] and not res.success[0]


def test_fp16_model_is_refused(make_tiny_neox):
    h = make_tiny_neox()
    h.model.half()
    with pytest.raises(ValueError, match="float16"):
        cram(h, [[1, 2]], 1, max_steps=1)


@pytest.mark.parametrize(
    "targets,m,kw,match",
    [
        ([[1, 2]], 0, {}, "m must be"),
        ([], 1, {}, "at least one target"),
        ([[1, 2], []], 1, {}, r"target_ids\[1\] has 0 tokens"),
        ([[1, 2], [3]], 1, {"n_given": 1}, r"target_ids\[1\] has 1 tokens"),
        ([[1, 2]], 1, {"weight_decay": -0.1}, "weight_decay"),
        ([[1, 64]], 1, {}, "outside"),
        ([list(range(60)) + [1, 2, 3, 4, 5]], 1, {}, "context"),
        ([[1] * 60], 6, {}, "context"),
        ([[1, 2]], 1, {"lr": 0.0}, "lr"),
        ([[1, 2]], 1, {"lr": -1e-2}, "lr"),
        ([[1, 2]], 1, {"max_steps": -1}, "max_steps"),
        ([[1, 2]], 1, {"seed": [1, 2]}, "one seed per target"),
    ],
)
def test_bad_inputs(tiny, targets, m, kw, match):
    with pytest.raises(ValueError, match=match):
        cram(tiny, targets, m, **kw)


def test_find_n50_bad_inputs(tiny):
    src = lambda n, i: [1] * n  # noqa: E731
    with pytest.raises(ValueError, match="m must be"):
        find_n50(tiny, src, 0)
    with pytest.raises(ValueError, match="n_targets"):
        find_n50(tiny, src, 1, 0)
    with pytest.raises(ValueError, match="lr"):
        find_n50(tiny, src, 1, 2, lr=0)
    with pytest.raises(ValueError, match="source must be a TargetSource or a callable"):
        find_n50(tiny, "natural", 1, 2)


def _source(n, i):
    return torch.randint(0, 64, (n,), generator=torch.Generator().manual_seed(1000 * n + i)).tolist()


class _Killed(RuntimeError):
    pass


def test_store_resumes_a_killed_sweep(tiny, tmp_path):
    kw = dict(model_name="tiny", source_name="rand", n_start=4, n_probe=6, design="bisect", show_progress=False, **FAST)
    full = find_n50(tiny, _source, 1, 6, store=ResultStore(tmp_path / "a"), **kw)
    assert full.runs == 6 * len(full.lengths) and full.cached == 0

    calls = {"n": 0}

    def dying(n, i):  # the process is "killed" after the second length's targets were built
        calls["n"] += 1
        if calls["n"] > 12:
            raise _Killed
        return _source(n, i)

    store = ResultStore(tmp_path / "b")
    with pytest.raises(_Killed):
        find_n50(tiny, dying, 1, 6, store=store, **kw)
    assert len(list(store.entries("cramming"))) == 12  # two finished lengths kept
    again = find_n50(tiny, _source, 1, 6, store=store, **kw)
    assert again.cached == 12 and again.runs == full.runs - 12
    assert np.array_equal(again.lengths, full.lengths) and np.array_equal(again.rates, full.rates)
    third = find_n50(tiny, _source, 1, 6, store=store, **kw)
    assert third.runs == 0 and third.cached == full.runs


def test_locate_n50_on_a_known_curve_needs_few_runs():
    rng = np.random.default_rng(0)
    calls = []

    def evaluate(n, count):
        calls.append((n, count))
        return rng.binomial(count, logistic(n, 183.0, 0.08)) / count, count, 0

    res = locate_n50(evaluate, 20, 2048, n_trials=20)
    assert res.fit.ok and abs(res.n50 - 183.0) / 183.0 < 0.05
    assert res.runs == sum(c for _, c in calls) <= 200  # a 10-then-100 grid of 20 targets: ~600
    assert res.bracket[0] < 183 * 1.1 and res.bracket[1] > 183 * 0.9
    assert sorted(set(res.trials)) == [5.0, 20.0]  # probes with 5 targets, the final design with 20


def test_locate_n50_flags_a_curve_that_never_drops():
    res = locate_n50(lambda n, c: (1.0, c, 0), 4, 64, n_trials=1)
    assert not res.fit.ok and np.isnan(res.n50) and res.fit.bound == (">=", 64.0) and not res.bracketed


def test_locate_n50_brackets_from_both_sides_before_reporting():
    # rate exactly 1/2 at the start and 0 above: the crossing is not bracketed until a length with
    # rate > 1/2 is seen below, so the search must go down (here to n = 1, where the rate is 1)
    rates = {1: 1.0, 2: 0.5, 3: 0.0, 4: 0.0}
    asked = []

    def evaluate(n, count):
        asked.append(n)
        return rates.get(n, 0.0), count, 0

    res = locate_n50(evaluate, 2, 64, n_trials=10, n_probe=10, n_around=0)
    assert 1 in asked and res.bracketed and res.bracket == (1, 4)
    assert res.fit.ok and 1.0 < res.n50 < 3.0


def test_locate_n50_one_sided_when_even_the_shortest_fails():
    res = locate_n50(lambda n, c: (0.5 if n == 2 else 0.0, c, 0), 2, 64, n_trials=10, n_probe=10, n_min=2)
    assert not res.bracketed and not res.fit.ok and res.fit.bound == ("<=", 2.0)


def test_given_first_token_is_not_generated(tiny):
    # the authors' layout: [Y, t_1] given, t_2 .. t_n generated; greedy decoding continues after t_1
    targets = _rand_targets([3, 4], seed=11)
    res = cram(tiny, targets, 2, seed=0, n_given=1, **FAST)
    assert res.success.all()
    for i, t in enumerate(targets):
        dec = greedy_decode(tiny, res.prompts[i : i + 1], len(t) - 1, given_ids=torch.tensor([t[:1]]))
        assert dec[0].tolist() == t[1:]
        x = torch.cat([res.prompts[i : i + 1], tiny.embed(torch.tensor([t[:1]]))], 1)  # memory, then t_1
        out = tiny.model.generate(
            inputs_embeds=x,
            attention_mask=torch.ones(1, 3, dtype=torch.long),
            max_new_tokens=len(t) - 1,
            do_sample=False,
            pad_token_id=0,
        )
        assert out[0, -(len(t) - 1) :].tolist() == t[1:]  # an independent decoding path (HF generate)
        assert recompute_argmax(tiny, res.prompts[i : i + 1], torch.tensor([t]), n_given=1)[0].tolist() == t[1:]
    rec = res.record(0)
    assert rec["decode_disagreements"] == 0 and "kv-cache" in rec["decode_path"]


def test_weight_decay_shrinks_a_prompt_that_cannot_be_crammed(tiny):
    t = _rand_targets([40], seed=3)
    a = cram(tiny, t, 1, seed=0, max_steps=30, lr=0.05, patience=30)
    b = cram(tiny, t, 1, seed=0, max_steps=30, lr=0.05, patience=30, weight_decay=5.0)
    assert not a.success[0] and not b.success[0]
    assert float(b.prompts.norm()) < float(a.prompts.norm())


def test_find_n50_with_a_target_source_keys_its_layout(tmp_path):
    from accessibility_lib.experiments.targets import target_source
    from accessibility_lib.models.loading import load_model

    nano = load_model("nano")
    store = ResultStore(tmp_path)
    src = target_source(nano, "random_tokens", "first_given", seed=0)
    res = find_n50(
        nano,
        src,
        1,
        3,
        store=store,
        model_name="nano",
        n_start=3,
        n_probe=3,
        n_around=0,
        show_progress=False,
        max_steps=5,
        patience=5,
    )
    keys = [k for k, _ in store.entries("cramming")]
    assert keys and all(k["layout"]["convention"] == "replication" and k["layout"]["n_given"] == 1 for k in keys)
    assert min(res.lengths) >= 2  # one given token: a target needs at least two
    assert len(res.outcomes) == int(res.trials.sum())


def test_target_source_bad_input_names_the_choices():
    from accessibility_lib.experiments.targets import target_source
    from accessibility_lib.models.loading import load_model

    nano = load_model("nano")
    with pytest.raises(ValueError, match="kind must be one of 'natural', 'random_words', 'random_tokens'"):
        target_source(nano, "random")
    with pytest.raises(ValueError, match="convention must be one of 'all_generated', 'first_given'"):
        target_source(nano, "natural", "authors")
    with pytest.raises(ValueError, match="corpus must be one of"):
        target_source(nano, "natural", corpus="pg20")
    with pytest.raises(ValueError, match="bos_prefix is for the 'all_generated' convention"):
        target_source(nano, "natural", "first_given", bos_prefix=True)


def test_missing_artifacts_name_the_command(tmp_path):
    from accessibility_lib.geometry import support
    from accessibility_lib.runs import cramming_artifacts, cramming_units

    with pytest.raises(
        cramming_artifacts.ArtifactMissingError, match="scripts/real_model_cramming.py --model smollm2-135m"
    ):
        cramming_artifacts.load_artifact("smollm2-135m", tmp_path)
    with pytest.raises(support.SupportArtifactMissingError, match="scripts/support_artifact.py --model gemma-3-270m"):
        support.load_artifact("gemma-3-270m", tmp_path)
    with pytest.raises(ValueError, match="no cramming plan 'huge' for model 'nano'; known"):
        cramming_units.cramming_plan("nano", "huge")


@pytest.mark.slow
def test_artifact_round_trip_refits_exactly_and_resumes_on_a_fresh_store(tmp_path):
    """The runner's artifact holds every per-target outcome; re-fitting gives the search's own numbers, and a
    fresh store seeded from the artifact resumes without re-cramming."""
    import subprocess
    import sys

    from accessibility_lib.runs import cramming_artifacts as CA
    from accessibility_lib.runs import cramming_summary as CS

    env = {**__import__("os").environ, "ACCESSIBILITY_RESULTS": str(tmp_path / "store"), "ACCESSIBILITY_PROGRESS": "0"}
    cmd = [
        sys.executable,
        "scripts/real_model_cramming.py",
        "--model",
        "nano",
        "--plan",
        "smoke",
        "--dtype",
        "float32",
        "--out-dir",
        str(tmp_path / "art"),
    ]
    root = __import__("pathlib").Path(__file__).resolve().parents[2]
    subprocess.run(cmd, cwd=root, env=env, check=True, capture_output=True, text=True, timeout=600)
    art = CA.load_artifact("nano", tmp_path / "art")
    assert all(u["state"] == "complete" for u in art["units"])
    for u in CS.summarize(art):
        assert u.n_outcomes == int(u.trials.sum()) and u.fit is not None
    # a fresh machine: empty store, the artifact only; every outcome is imported, nothing is crammed again
    env["ACCESSIBILITY_RESULTS"] = str(tmp_path / "fresh")
    out = subprocess.run(cmd, cwd=root, env=env, check=True, capture_output=True, text=True, timeout=600).stdout
    assert "resumed" in out and "0 of 2 units to run" in out
    again = CA.load_artifact("nano", tmp_path / "art")
    assert [u["outcomes"] for u in again["units"]] == [u["outcomes"] for u in art["units"]]
    # the dtype is a property of each unit, not of the file
    assert {u["dtype"] for u in again["units"]} == {"float32"} and "dtype" not in again


def test_locate_n50_reuses_lengths_already_evaluated():
    """A resumed search with another start takes the lengths a previous search crammed, where they fit."""
    rates = lambda n: 1.0 if n <= 24 else (0.9 if n <= 27 else 0.1)  # noqa: E731
    done = {16, 24, 32}
    asked = []

    def evaluate(n, count):
        asked.append(n)
        return rates(n), (0 if n in done else count), (count if n in done else 0)

    res = locate_n50(evaluate, 12, 256, n_trials=10, n_probe=10, n_around=0, known=lambda n, c: n in done)
    assert 48 not in asked and 32 in asked  # doubling from 24 took the known 32, not a new 48
    assert res.bracketed and res.bracket[1] <= 32


def test_find_n50_resumed_with_another_start_reuses_the_store(tiny, tmp_path):
    store = ResultStore(tmp_path)
    kw = dict(
        model_name="tiny", source_name="rand", n_probe=4, n_around=0, design="bisect", show_progress=False, **FAST
    )
    first = find_n50(tiny, _source, 1, 4, store=store, n_start=5, **kw)
    again = find_n50(tiny, _source, 1, 4, store=store, n_start=3, **kw)  # another start: reuse, do not re-cram
    assert first.runs > 0 and again.runs <= 4 * 2  # at most the start length and one more are new
    assert again.cached >= 4


def test_decode_disagreement_is_counted_and_never_counted_as_success(tiny, monkeypatch):
    """The branch where the teacher-forced argmax is all right but the KV-cache decode is not (cramming.py, step 1).

    The real decode is replaced by one that returns every token shifted by one in its first two calls, then the true
    decode: the targets must cost one disagreement per row of those calls and succeed only after them (at a
    later step than without the fault); a decode that is always wrong must leave every target uncrammed, with
    disagreements counted although the teacher-forced accuracy reached 1.
    """
    import accessibility_lib.experiments.cramming as C

    targets = _rand_targets([2, 3])
    clean = cram(tiny, targets, 2, seed=0, **FAST)
    assert clean.success.all() and (clean.disagreements == 0).all()

    real = C.greedy_decode
    rows_per_call: list[int] = []

    def faulty(handle, prompts, n_new, *a, **kw):
        out = real(handle, prompts, n_new, *a, **kw)
        rows_per_call.append(prompts.shape[0])
        if len(rows_per_call) <= 2:  # the first two confirmations: every row's last token is wrong
            out = (out + 1) % tiny.d_vocab  # every token (a shorter target's tail is masked)
        return out

    monkeypatch.setattr(C, "greedy_decode", faulty)
    res = cram(tiny, targets, 2, seed=0, **FAST)
    assert res.success.all()
    assert len(rows_per_call) >= 3  # the faulty two, then at least one true confirmation
    assert int(res.disagreements.sum()) == sum(rows_per_call[:2])  # one per row of each faulty confirmation
    assert (res.steps >= clean.steps).all() and (res.steps > clean.steps).any()  # success only after the faults
    assert res.record(0)["decode_disagreements"] == int(res.disagreements[0])

    def always_wrong(handle, prompts, n_new, *a, **kw):
        return (real(handle, prompts, n_new, *a, **kw) + 1) % tiny.d_vocab

    monkeypatch.setattr(C, "greedy_decode", always_wrong)
    bad = cram(tiny, targets, 2, seed=0, **FAST)
    assert not bad.success.any()  # a disagreement is never a success
    assert (bad.disagreements >= 1).all() and (bad.best_accuracy == 1.0).all()


def test_a_capped_run_continued_from_its_state_is_the_uninterrupted_run(tiny):
    """With no patience, 20 steps then 40 more from the stored Adam state = 60 steps in one go (chapter 3's
    budget curve continues the failures of the smaller budget instead of re-running them)."""
    targets = _rand_targets([3, 5, 6, 8, 9, 10], seed=4)
    kw = dict(lr=0.05, seed=11)
    short = cram(tiny, targets, 1, max_steps=20, patience=20, **kw)
    whole = cram(tiny, targets, 1, max_steps=60, patience=60, **kw)
    capped = [i for i in range(len(targets)) if not short.success[i]]
    assert capped
    resumed = cram(
        tiny,
        [targets[i] for i in capped],
        1,
        max_steps=60,
        patience=60,
        lr=0.05,
        seed=[11 + i for i in capped],
        resume=[short.state(i) for i in capped],
    )
    for j, i in enumerate(capped):
        assert resumed.success[j] == whole.success[i] and resumed.steps[j] == whole.steps[i]
        assert torch.allclose(resumed.prompts[j], whole.prompts[i], rtol=1e-5, atol=1e-6)
        assert resumed.disagreements[j] == whole.disagreements[i]
    # the check is not vacuous: some capped target moves on (crams, or ends elsewhere than its 20-step prompt)
    assert any(not torch.allclose(resumed.prompts[j], short.prompts[i]) for j, i in enumerate(capped))


def test_resume_states_are_checked(tiny):
    targets = _rand_targets([4, 5], seed=2)
    short = cram(tiny, targets, 1, max_steps=5, patience=5, lr=0.05)
    with pytest.raises(ValueError, match="one entry"):
        cram(tiny, targets, 1, max_steps=10, resume=[short.state(0)])
    with pytest.raises(ValueError, match="more than max_steps = 3"):
        cram(tiny, targets, 1, max_steps=3, resume=[short.state(0), None])
    scalars, arrays = short.state(0)
    with pytest.raises(ValueError, match=r"shape \(m, d_model\)"):
        cram(tiny, targets, 1, max_steps=10, resume=[(scalars, {**arrays, "exp_avg": arrays["exp_avg"][:, :3]}), None])
    bad = arrays["prompt"].copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN or inf"):
        cram(tiny, targets, 1, max_steps=10, resume=[(scalars, {**arrays, "prompt": bad}), None])
