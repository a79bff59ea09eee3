"""Tests of the copying task (accessibility_lib.experiments.copying, copying_model): layout, splits, training, eval, cache."""

import dataclasses
import math

import numpy as np
import pytest
import torch

from accessibility_lib.experiments import cliffs
from accessibility_lib.experiments import copying as C
from accessibility_lib.experiments import copying_model as CM
from accessibility_lib.ground.results import ResultStore

# A tiny config that learns to copy strings of length <= 6 over 8 symbols in ~1000 steps (6-25 s on a
# loaded 2-core machine, one thread).
TINY = dict(
    alphabet_size=8,
    d_model=32,
    n_layers=2,
    n_heads=2,
    context=64,
    train_max_len=6,
    batch_size=32,
    lr=3e-3,
    warmup_steps=30,
    max_steps=2000,
    check_every=25,
    check_strings=128,
)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    torch.set_num_threads(1)
    store = ResultStore(tmp_path_factory.mktemp("copy_store"))
    cfg = CM.TrainConfig(**TINY)
    model, info = CM.train_copying(cfg, store=store, show_progress=False)
    return cfg, store, model, info


def test_layout_and_masking_worked_example():
    task = C.CopyTask(26)
    assert (task.start, task.sep, task.end, task.pad, task.d_vocab) == (26, 27, 28, 29, 30)
    b = C.encode_batch(task, [np.array([2, 0, 1]), np.array([5])])  # "cab", "f"
    assert b["input_ids"].tolist() == [[26, 2, 0, 1, 27, 2, 0, 1, 28], [26, 5, 27, 5, 28, 29, 29, 29, 29]]
    assert b["attention_mask"].tolist() == [[1] * 9, [1] * 5 + [0] * 4]
    assert b["labels"].tolist() == [[-100] * 5 + [2, 0, 1, 28], [-100] * 3 + [5, 28] + [-100] * 4]
    assert task.decode(b["input_ids"][0]) == "^cab|cab$"


def test_sampling_is_seeded_and_in_split():
    task = C.CopyTask(26)
    a = C.sample_strings(task, np.random.default_rng(7), 9, 40, "train")
    b = C.sample_strings(task, np.random.default_rng(7), 9, 40, "train")
    assert a.shape == (40, 9) and np.array_equal(a, b) and a.min() >= 0 and a.max() < 26
    assert not C.string_split(a).any()
    assert C.string_split(C.sample_strings(task, np.random.default_rng(7), 9, 40, "eval")).all()


@pytest.mark.parametrize("alphabet,n", [(2, 4), (4, 3), (26, 2), (26, 6)])
def test_train_and_eval_streams_never_overlap(alphabet, n):
    task = C.CopyTask(alphabet)
    train = {tuple(s) for s in C.sample_strings(task, np.random.default_rng([0, 0]), n, 3000, "train")}
    test = {tuple(s) for s in C.sample_strings(task, np.random.default_rng([0, 1]), n, 3000, "eval")}
    assert train and test and not (train & test)
    if alphabet**n <= 1000:  # small spaces: the split really cuts the whole space in two non-empty parts
        everything = np.array(np.unravel_index(np.arange(alphabet**n), (alphabet,) * n)).T
        frac = C.string_split(everything).mean()
        assert 0.2 < frac < 0.8
        assert len(train | test) == alphabet**n


@pytest.mark.slow
def test_tiny_model_learns_to_copy(trained):
    cfg, _, model, info = trained
    assert info["reached"] and info["steps"] < cfg.max_steps
    assert info["loss"][-1] < 0.5 * info["loss"][0]
    res = C.evaluate_copying(
        model, C.CopyTask(cfg.alphabet_size), [cfg.train_max_len], n_strings=50, show_progress=False
    )
    assert res["exact_rate"][0] == 1.0 and res["char_acc"][0] == 1.0
    assert res["ci_low"][0] > 0.9 and res["ci_high"][0] == 1.0


def test_batched_eval_equals_one_at_a_time(trained):
    cfg, _, model, _ = trained
    task = C.CopyTask(cfg.alphabet_size)
    lengths = [3, 6, 8]
    batched = C.evaluate_copying(model, task, lengths, n_strings=20, batch_size=64, show_progress=False)
    single = C.evaluate_copying(model, task, lengths, n_strings=20, batch_size=1, show_progress=False)
    for k in ("exact", "char_acc", "ci_low", "ci_high"):
        np.testing.assert_allclose(batched[k], single[k])
    xs = C.sample_strings(task, np.random.default_rng(3), 8, 30, "eval")
    greedy_exact = (C.greedy_copy(model, task, xs) == xs).all(1)
    assert np.array_equal(greedy_exact, C.teacher_forced_exact(model, task, xs))


def test_cache_hit_returns_same_model(trained):
    cfg, store, model, info = trained
    again, info2 = CM.train_copying(cfg, store=store, show_progress=False)
    assert info2["cached"] and info2["steps"] == info["steps"]
    np.testing.assert_array_equal(info2["loss"], info["loss"])
    ids = C.encode_batch(C.CopyTask(cfg.alphabet_size), [np.array([1, 2, 3])])["input_ids"]
    torch.testing.assert_close(again(input_ids=ids).logits, model(input_ids=ids).logits)


def test_cache_key_changes_with_every_hyperparameter():
    base = CM.TrainConfig(**TINY)
    store = ResultStore("/nonexistent")
    paths = {store._path("copying_train", base.key())}
    for field in dataclasses.fields(CM.TrainConfig):
        value = getattr(base, field.name)
        new = {"base": "nano", "lr": value * 2, "weight_decay": 0.1, "grad_clip": value * 2, "n_heads": value * 2}.get(
            field.name, None
        )
        if new is None:
            new = value + 1 if field.name not in ("train_max_len", "context") else value + 2
        if field.name == "d_model":
            new = value + 2
        changed = dataclasses.replace(base, **{field.name: new})
        paths.add(store._path("copying_train", changed.key()))
    assert len(paths) == len(dataclasses.fields(CM.TrainConfig)) + 1


def test_pretrained_model_cut_to_task(tmp_path):
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    torch.manual_seed(0)
    base = GPTNeoXForCausalLM(
        GPTNeoXConfig(
            vocab_size=100,
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=64,
        )
    )
    emb_before = base.get_input_embeddings().weight.detach().clone()
    folder = tmp_path / "tiny"
    base.save_pretrained(folder)
    cfg = CM.TrainConfig(**{**TINY, "base": str(folder), "max_steps": 3})
    model, info = CM.train_copying(cfg, store=ResultStore(tmp_path / "store"), show_progress=False)
    assert info["steps"] == 3 and model.config.vocab_size == 12
    assert all(p.requires_grad for p in model.parameters())  # the whole model is fine-tuned, not just the cut rows
    body = dict(model.named_parameters())["gpt_neox.layers.0.mlp.dense_h_to_4h.weight"]
    assert not torch.equal(body, dict(base.named_parameters())["gpt_neox.layers.0.mlp.dense_h_to_4h.weight"])
    assert model(input_ids=torch.tensor([[8, 1, 9]])).logits.shape == (1, 3, 12)
    model2 = CM.build_task_model(cfg, base_model=GPTNeoXForCausalLM.from_pretrained(folder))
    torch.testing.assert_close(model2.get_input_embeddings().weight, emb_before[:12])
    again, info2 = CM.train_copying(cfg, store=ResultStore(tmp_path / "store"), show_progress=False)
    assert info2["cached"]
    torch.testing.assert_close(again.get_output_embeddings().weight, model.get_output_embeddings().weight)


def test_cut_keeps_tied_weights_tied():
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    model = GPTNeoXForCausalLM(
        GPTNeoXConfig(
            vocab_size=50,
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            tie_word_embeddings=True,
        )
    )
    CM.cut_vocabulary(model, list(range(10, 22)))
    assert model.get_output_embeddings().weight is model.get_input_embeddings().weight
    assert model(input_ids=torch.tensor([[0, 11]])).logits.shape == (1, 2, 12)


def test_wilson_interval():
    lo, hi = C.wilson_interval([0, 25, 50], [50, 50, 50])
    np.testing.assert_allclose(lo, [0.0, 0.3664, 0.9287], atol=2e-4)  # Wilson (1927) 95 % formula
    np.testing.assert_allclose(hi, [0.0713, 0.6336, 1.0], atol=2e-4)


@pytest.mark.parametrize("d,ratio", [(1, 4.0), (2, 16.0), (8, 64.0), (64, 4096.0)])
def test_mean_field_cliff_against_the_theorem_evaluated_directly(d, ratio):
    """Thm 4.9 (q = 1): #accessible ≤ (e + e·(2r/ε))^{(1 + 2r/ε)^d}; Cor 4.10: the fraction #accessible/|V|^n
    falls below 1 past n* = ln #accessible / ln|V|. Evaluated here as written, the power itself computed
    with mpmath's arbitrary exponents (no double logarithm, not the library's closed form)."""
    import mpmath as mp

    mp.mp.dps = 40
    count = mp.power(mp.e + mp.e * ratio, mp.mpf(1 + ratio) ** d)  # the bound on #accessible itself
    n_star = mp.log(count) / mp.log(26)
    val = cliffs.mean_field_cliff_log10(d, ratio / 2, 1.0, 26)
    assert val == pytest.approx(float(mp.log10(n_star)), abs=1e-9)
    if d == 1:  # small enough for plain floats: (5e)^5 = 4.638e5 sequences, n* = 5·(1 + ln 5)/ln 26 = 4.0045
        assert 10**val == pytest.approx(math.log((5 * math.e) ** 5) / math.log(26), rel=1e-12)
        assert 10**val == pytest.approx(4.0045, abs=1e-4)
        # the fraction bound crosses 1 between the integers around n*: 26^4 = 456976 < (5e)^5 < 26^5
        assert 26**4 < (5 * math.e) ** 5 < 26**5
    if d == 64:  # the replication precision (2r/ε = 4096) at d = 64: n* ≈ 10^231.654 symbols
        assert val == pytest.approx(231.654, abs=1e-3)


def test_bad_inputs():
    with pytest.raises(ValueError, match="alphabet_size"):
        C.CopyTask(1)
    with pytest.raises(ValueError, match="alphabet_size"):
        CM.TrainConfig(alphabet_size=1)
    with pytest.raises(ValueError, match="exceeds the context"):
        CM.TrainConfig(context=32, train_max_len=15)
    model = CM.build_task_model(CM.TrainConfig(**TINY))
    task = C.CopyTask(8)
    with pytest.raises(ValueError, match="non-empty"):
        C.evaluate_copying(model, task, [], show_progress=False)
    with pytest.raises(ValueError, match="exceeds the context"):
        C.evaluate_copying(model, task, [4, 31], show_progress=False)
    with pytest.raises(ValueError, match="n_strings"):
        C.evaluate_copying(model, task, [4], n_strings=0, show_progress=False)
    with pytest.raises(ValueError, match="split"):
        C.sample_strings(task, np.random.default_rng(0), 3, 5, "test")
    with pytest.raises(ValueError):
        C.wilson_interval([3], [2])


def test_nano_shape_from_scratch_matches_nano_config():
    import json
    from pathlib import Path

    import accessibility_lib

    nano = json.loads((Path(accessibility_lib.__file__).parent / "data" / "nano" / "config.json").read_text())
    model = CM.build_task_model(CM.TrainConfig(base="nano-shape", context=64, train_max_len=8))
    assert model.config.hidden_size == nano["hidden_size"]
    assert model.config.num_hidden_layers == nano["num_hidden_layers"]
    assert model.get_input_embeddings().weight.shape == (30, nano["hidden_size"])
    assert model(input_ids=torch.tensor([[26, 1, 27]])).logits.shape == (1, 3, 30)


def test_docstring_example():
    import doctest

    result = doctest.testmod(C, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# --- what exact-match data pin down: steps, and whether a cliff moved ---------------------------


def test_step_data_are_detected_and_described():
    n = np.array([2, 4, 6, 7, 8, 9, 10, 11, 12, 14])
    step = cliffs.cliff_data(n, (n <= 8).astype(float), 50)  # 1 up to 8, 0 from 9: a step with no intermediate rate
    assert step.is_step and step.n_intermediate == 0 and (step.last_full, step.first_zero) == (8, 9)
    text = step.describe()
    assert "between 8 and 9" in text and "R² is 1 by construction" in text and "50 strings" in text
    fall = cliffs.cliff_data(n, [1, 1, 1, 1, 0.96, 0.6, 0.1, 0, 0, 0])
    assert not fall.is_step and fall.n_intermediate == 3 and (fall.last_full, fall.first_zero) == (7, 11)
    assert "3 tested lengths (n = 8 to 10) with intermediate rates" in fall.describe()
    one = cliffs.cliff_data(n, [1, 1, 1, 1, 0.5, 0, 0, 0, 0, 0])
    assert "1 tested length (n = 8) with an intermediate rate" in one.describe()
    assert not cliffs.cliff_data(n, [1, 1, 0, 1, 0, 0, 0, 0, 0, 0]).is_step  # 0/1 only, but not ordered
    assert "beyond n = 14" in cliffs.cliff_data(n, np.ones(10)).describe()
    # near-full rates far below the cliff do not make a fall: they pin neither its position nor its steepness
    misses = cliffs.cliff_data(n, [1, 0.98, 0.96, 0.98, 1, 0, 0, 0, 0, 0], 50)
    assert misses.is_step and misses.n_intermediate == 0 and (misses.last_full, misses.first_zero) == (8, 9)
    assert misses.n_misses_below == 3 and "sporadic misses at 3 shorter lengths" in misses.describe()
    assert "just below 1 here" in misses.describe() and "just below 1" not in text
    # a curve that copies again after a length copied never is named, a monotone one is not
    assert list(cliffs.cliff_data(n, [1, 1, 1, 1, 0.8, 0, 0.2, 0, 0.1, 0]).rebounds) == [10, 12]
    assert cliffs.cliff_data(n, [1, 1, 1, 1, 0.96, 0.6, 0.1, 0, 0, 0]).rebounds.size == 0
    assert cliffs.cliff_data(n, [1, 1, 1, 1, 0.96, 0.6, 0.1, 0, 0, 0]).n_informative == 2  # 0.96 is the plateau
    assert cliffs.cliff_data(n, [1, 1, 1, 1, 0.8, 0, 0.2, 0, 0.1, 0]).n_informative == 1  # rebounds do not count
    low = cliffs.cliff_data(n, [1, 0.5, 1, 1, 1, 0, 0, 0, 0, 0])  # a real dip below the cliff: not a clean step
    assert not low.is_step and low.n_intermediate == 0
    with pytest.raises(ValueError, match="rates"):
        cliffs.cliff_data([1, 2], [0.5, 1.5])
    with pytest.raises(ValueError, match="distinct"):
        cliffs.cliff_data([1, 1], [1, 0])


def test_compare_cliffs_never_reports_a_move_the_data_cannot_show():
    n = np.array([2, 4, 6, 7, 8, 9, 10, 11, 12, 14])
    c8, c8b, c11 = (cliffs.locate_cliff(n, 50 * (n <= L), 50) for L in (8, 8, 11))
    assert c8.kind == "step" and (c8.low, c8.high) == (8, 9) and c8.fit is None and c8.r_squared is None
    same = cliffs.compare_cliffs(c8, c8b)
    assert same.same_step and same.moved is None
    assert cliffs.compare_cliffs(c8, c11).moved == "out" and cliffs.compare_cliffs(c11, c8).moved == "in"
    # adjacent steps (8, 9) and (9, 10): the open brackets do not overlap, so that is a move
    c9 = cliffs.locate_cliff(n, 50 * (n <= 9), 50)
    assert cliffs.compare_cliffs(c8, c9).moved == "out" and cliffs.compare_cliffs(c9, c8).moved == "in"
    # a resolved fall at ~9.2 against the step between 8 and 9: 95 % range about [8.99, 9.32]
    fall = cliffs.locate_cliff(n, [50, 50, 50, 50, 48, 30, 5, 0, 0, 0], 50)
    assert fall.kind == "fall" and fall.n50 == pytest.approx(9.2, abs=0.3) and fall.steepness > 0
    assert 8.9 < fall.low < fall.n50 < fall.high < 9.6 and 0.9 < fall.r_squared <= 1
    assert cliffs.compare_cliffs(c8, fall).moved is None  # the range reaches below 9, into the step's (8, 9)
    assert cliffs.compare_cliffs(c9, fall).moved is None  # the step's (9, 10) holds the fall's range: no move
    later = cliffs.locate_cliff(n, [50, 50, 50, 50, 50, 48, 30, 5, 0, 0], 50)  # the same fall one symbol later
    assert later.kind == "fall" and later.low > 9 and cliffs.compare_cliffs(c8, later).moved == "out"
    # one-sided results are ranges too: a cliff beyond 14 against a step at 8-9 is a move, two "beyond 14" are not
    always = cliffs.locate_cliff(n, np.full(10, 50), 50)
    assert always.kind == "beyond" and (always.low, always.high) == (14, math.inf)
    assert cliffs.compare_cliffs(c8, always).moved == "out"
    both = cliffs.compare_cliffs(always, always)
    assert both.moved is None and both.comparable and not both.same_step
    never = cliffs.locate_cliff(n, np.zeros(10), 50)
    assert never.kind == "below" and never.high == 2 and cliffs.compare_cliffs(never, c8).moved == "out"
    # a dip below the cliff is no clean cliff: no fit, the range runs from the last full length to the first zero
    odd = cliffs.locate_cliff(n, [50, 20, 50, 50, 50, 0, 0, 0, 0, 0], 50)
    assert odd.kind == "irregular" and odd.fit is None and (odd.low, odd.high) == (8, 9)
    # 49 of 50 at the last length before the first 0 is no fall to fit: a step from >= 90 % straight to 0
    near = cliffs.locate_cliff(n, [50, 50, 46, 50, 49, 0, 0, 0, 0, 0], 50)
    assert near.kind == "step" and (near.low, near.high) == (8, 9) and near.fit is None
    assert cliffs.locate_cliff(n, [50, 50, 46, 50, 40, 0, 0, 0, 0, 0], 50).kind == "fall"  # 80 %: a rate in the fall
    # misses far below the cliff (44 of 50 at n = 2) leave the gap unresolved: still a step, not a fitted fall
    far = cliffs.locate_cliff(n, [44, 49, 49, 50, 49, 0, 0, 0, 0, 0], 50)
    assert far.kind == "step" and (far.low, far.high) == (8, 9) and far.fit is None and far.r_squared is None
    with pytest.raises(ValueError, match="exact counts"):
        cliffs.locate_cliff(n, np.full(10, 51), 50)


def test_mean_field_ratio_for_cliff_inverts_the_bound():
    """At the returned 2r/ε, n* is exactly the given length; coarser precision (smaller 2r/ε) gives a smaller n*."""
    for d, n in [(1, 4.0045), (16, 9.0), (128, 8.5), (576, 20.0)]:
        x = cliffs.mean_field_ratio_for_cliff(d, n, 26)
        assert 10 ** cliffs.mean_field_cliff_log10(d, x / 2, 1.0, 26) == pytest.approx(n, rel=1e-9)
        assert cliffs.mean_field_cliff_log10(d, x / 4, 1.0, 26) < math.log10(n)
    assert cliffs.mean_field_ratio_for_cliff(1, 4.0045, 26) == pytest.approx(4.0, rel=1e-4)  # the d = 1 case above
    with pytest.raises(ValueError, match="exceed 1"):
        cliffs.mean_field_ratio_for_cliff(8, 0.2, 2)


# --- a killed fine-tuning resumes where it stopped ----------------------------------------------

_KILL_CFG = dict(TINY, max_steps=300, stop_checks=10**6)  # never stops early: the kill always lands mid-run

_CHILD = """
import sys, torch
torch.set_num_threads(1)
from accessibility_lib.experiments import copying_model as CM
from accessibility_lib.ground.results import ResultStore
cfg = CM.TrainConfig(**{cfg!r})
CM.train_copying(cfg, store=ResultStore(sys.argv[1]), show_progress=False, checkpoint_every=20)
"""


def test_killed_training_resumes_and_computes_what_an_uninterrupted_run_computes(tmp_path):
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    torch.set_num_threads(1)
    cfg = CM.TrainConfig(**_KILL_CFG)
    ref_model, ref = CM.train_copying(cfg, store=ResultStore(tmp_path / "a"), show_progress=False)
    store = ResultStore(tmp_path / "b")
    state = store._path("copying_train", cfg.key()).with_suffix(".ckpt") / "state.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, "-c", _CHILD.format(cfg=_KILL_CFG), str(store.root)], env=env)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and child.poll() is None:
            if state.exists() and json.loads(state.read_text())["step"] >= 100:
                break
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)  # no clean-up handler runs: as a machine going down
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL, "the training process finished before it could be killed"
    assert store.get("copying_train", cfg.key()) is None  # killed mid-run: no finished entry
    killed_at = json.loads(state.read_text())["step"]
    assert 100 <= killed_at < cfg.max_steps

    # an interim look at the checkpoint (read-only) sees the killed run's step, checks and trained weights
    from safetensors.torch import load_file

    ckpt_model, ckpt_state = CM.checkpointed_model(cfg, store)
    assert ckpt_state["step"] == killed_at and len(ckpt_state["check_exact"]) == killed_at // cfg.check_every
    saved = load_file(str(state.parent / f"model.{killed_at}.safetensors"))
    got = ckpt_model.state_dict()
    assert all(torch.equal(got[k], v) for k, v in saved.items())
    fresh = CM.build_task_model(cfg).state_dict()
    assert any(not torch.equal(fresh[k], v) for k, v in saved.items())  # trained, not the untouched base
    assert json.loads(state.read_text())["step"] == killed_at  # looking changed nothing

    model, info = CM.train_copying(cfg, store=store, show_progress=False, checkpoint_every=20)
    assert not info["cached"] and info["steps"] == ref["steps"] == cfg.max_steps
    assert [s["from_step"] for s in info["sessions"]] == [0, killed_at]  # two processes trained it
    np.testing.assert_array_equal(info["loss"], ref["loss"])  # the same batches, the same updates, bit for bit
    np.testing.assert_array_equal(info["check_exact"], ref["check_exact"])
    for (name, p), (_, q) in zip(model.state_dict().items(), ref_model.state_dict().items()):
        assert torch.equal(p, q), name
    assert not state.parent.exists()  # the checkpoint goes once the run is stored
    assert CM.checkpointed_model(cfg, store) is None  # done: nothing interim to look at
    again, info2 = CM.train_copying(cfg, store=store, show_progress=False, checkpoint_every=20)
    assert info2["cached"] and info2["sessions"] == info["sessions"]


def test_a_checkpoint_of_another_run_is_refused(tmp_path):
    from accessibility_lib.experiments import copying_checkpoint as CK

    cfg = CM.TrainConfig(**{**TINY, "max_steps": 4})
    model = CM.build_task_model(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    rngs = {"data": np.random.default_rng(0)}
    CK.save_checkpoint(tmp_path / "c", "run-a", model, opt, sched, {"step": 3}, rngs)
    assert CK.load_checkpoint(tmp_path / "c", "run-a", model, opt, sched, rngs)["step"] == 3
    with pytest.raises(ValueError, match="another run"):
        CK.load_checkpoint(tmp_path / "c", "run-b", model, opt, sched, rngs)
    assert CK.load_checkpoint(tmp_path / "none", "run-a", model, opt, sched, rngs) is None


def test_cliff_data_fields_behind_the_string_only_checks():
    """The cases `test_step_data_are_detected_and_described` checks only through describe(), by their fields
    (derived here by hand from the definitions in CliffData's docstring), and describe() naming those fields."""
    n = np.array([2, 4, 6, 7, 8, 9, 10, 11, 12, 14])
    never = cliffs.cliff_data(n, np.ones(10))  # copies at every tested length: no zero, no cliff in range
    assert (never.is_step, never.last_full, never.first_zero, never.n_intermediate) == (False, 14, None, 0)
    one = cliffs.cliff_data(n, [1, 1, 1, 1, 0.5, 0, 0, 0, 0, 0])  # 1 up to n = 7, ½ at 8, 0 from 9
    assert (one.is_step, one.last_full, one.first_zero, one.n_intermediate) == (False, 7, 9, 1)
    none = cliffs.cliff_data(n, np.zeros(10))  # no length copies: the cliff lies below the shortest
    assert (none.is_step, none.last_full, none.first_zero) == (False, None, 2)
    moved = cliffs.cliff_data(n + 3, [1, 1, 1, 1, 0.5, 0, 0, 0, 0, 0])  # the same data three symbols longer
    assert (moved.last_full, moved.first_zero) == (10, 12) and "n = 11" in moved.describe()
    assert "n = 8" not in moved.describe()  # the text follows the data, not a fixed phrase


def test_a_falls_logistic_sees_only_the_fall():
    """Plateau misses far below the cliff and a rebound after a length copied never leave n50 where the fall
    alone puts it (the study's nano-shape and nano runs at L = 12 moved by 0.3 and 0.2 symbols before); a fall
    through one length gets the model-free bracket of the rates' Wilson intervals."""
    n = np.array([2, 3, 4, 8, 11, 12, 13, 14, 15, 16, 17, 18])
    clean = [50, 50, 50, 50, 50, 50, 4, 0, 0, 0, 0, 0]
    missed = [50, 49, 50, 50, 49, 50, 4, 0, 0, 0, 0, 0]  # 49 of 50 at n = 3 and 11: the plateau
    a, b = cliffs.locate_cliff(n, clean, 50), cliffs.locate_cliff(n, missed, 50)
    assert a.kind == b.kind == "fall" and b.n50 == pytest.approx(a.n50, abs=1e-6) and 12.5 < a.n50 < 13
    assert (a.low, a.high) == (b.low, b.high) == (12, 13)  # 4 of 50 at 13: [0.03, 0.19], below ½
    steady = [50, 50, 50, 50, 50, 49, 20, 0, 0, 0, 0, 0]
    back = [50, 50, 50, 50, 50, 49, 20, 0, 0, 0, 13, 0]  # copied again at n = 17
    c, d = cliffs.locate_cliff(n, steady, 50), cliffs.locate_cliff(n, back, 50)
    assert d.n50 == pytest.approx(c.n50, abs=1e-6) and 12.5 < c.n50 < 13.1
    assert (c.low, c.high) == (d.low, d.high) == (12, 14)  # 20 of 50 at 13: [0.28, 0.54], either side of ½
    assert list(d.data.rebounds) == [17]
    assert cliffs.compare_cliffs(a, d).moved is None  # the two L = 12 runs' ranges overlap: no move shown
    mask = cliffs.fall_window(d.data)
    assert list(n[mask]) == [12, 13, 14]
    # a fall through two or more lengths keeps its profile-likelihood interval, from the window's fit
    wide = cliffs.locate_cliff(n, [50, 50, 50, 50, 50, 48, 30, 5, 0, 0, 0, 0], 50)
    assert wide.data.n_informative == 2 and wide.low < wide.n50 < wide.high and wide.fit.ok
