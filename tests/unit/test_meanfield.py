"""Tests of the mean-field pieces: the position-free GPT-NeoX, W_q through POT, the structural
measurements and the Thm 4.9 closed forms (Meyer et al. 2026, Section 4.3)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from accessibility_lib.models.handle import wrap_model
from accessibility_lib.theory import bounds, meanfield, measures, positionfree
from accessibility_lib.theory.positionfree import neox_forward, tiny_neox


@pytest.fixture(scope="module")
def model():
    return tiny_neox(d_model=64, n_layers=2, n_heads=4, d_vocab=97, seed=0)


@pytest.fixture(scope="module")
def handle(model):
    return wrap_model(model, name="tiny")  # hard prompts come from handle.embed, the model's own embedding


@pytest.fixture(scope="module")
def prompts():
    gen = torch.Generator().manual_seed(1)
    return torch.randn(3, 12, 64, generator=gen)  # (B, m, d): random soft prompts


# ---------------------------------------------------------------- the position-free model
def test_switches_on_reproduce_hf_model(model, prompts):
    ref = model(inputs_embeds=prompts, output_hidden_states=True)
    out = neox_forward(model, prompts, causal=True, rotary=True)
    assert torch.allclose(out.logits, ref.logits, atol=1e-5, rtol=1e-5)
    assert len(out.hidden_states) == model.config.num_hidden_layers + 1


def test_switches_change_the_function(model, prompts):
    full = neox_forward(model, prompts, causal=True, rotary=True).logits
    for causal, rotary in [(False, False), (True, False), (False, True)]:
        other = neox_forward(model, prompts, causal=causal, rotary=rotary).logits
        assert (other - full).abs().max() > 1e-3


def test_positionfree_is_permutation_equivariant(model, prompts):
    f = positionfree.make_forward(model, "no mask, no positions")
    dev = meanfield.permutation_deviation(f, prompts, torch.Generator().manual_seed(2))
    assert dev["layers"].max() < 1e-5 and dev["tv"].max() < 1e-5
    # full permutation (last position moves too): L(Xσ) = L(X)σ position by position
    perm = torch.randperm(12, generator=torch.Generator().manual_seed(3))
    a = f(prompts[:, perm]).hidden_states[-1]
    b = f(prompts).hidden_states[-1][:, perm]
    assert ((a - b).norm() / b.norm()).item() < 1e-5


def test_positionfree_is_duplication_invariant(model, prompts):
    f = positionfree.make_forward(model, "no mask, no positions")
    dev = meanfield.duplication_deviation(f, prompts)
    assert dev["layers"].max() < 1e-5 and dev["tv"].max() < 1e-5
    # also a triple copy [X, X, X]: the measure is unchanged
    three = f(torch.cat([prompts] * 3, 1)).last_probs()
    assert meanfield.total_variation(three, f(prompts).last_probs()).max() < 1e-5


def test_rotary_causal_model_is_not(model, prompts):
    f = positionfree.make_forward(model, "shipped (causal + rotary)")
    perm = meanfield.permutation_deviation(f, prompts, torch.Generator().manual_seed(2))
    dup = meanfield.duplication_deviation(f, prompts)
    assert perm["layers"].min() > 1e-2 and perm["tv"].min() > 1e-4
    assert dup["layers"].min() > 1e-2 and dup["tv"].min() > 1e-4


def test_causal_without_positions_first_layer_duplication_exact_on_first_copy(model, prompts):
    # causal mask alone: the first copy of [X, X] sees exactly what X sees (prefix property)
    f = positionfree.make_forward(model, "causal, no positions")
    one, two = f(prompts), f(torch.cat([prompts, prompts], 1))
    for h1, h2 in zip(one.hidden_states, two.hidden_states):
        assert torch.allclose(h2[:, :12], h1, atol=1e-5)
    assert meanfield.duplication_deviation(f, prompts)["layers"].max() > 1e-2  # the second copy is not


def test_structural_sweep_shapes(model, handle):
    f = positionfree.make_forward(model, "no mask, no positions")
    res = meanfield.structural_sweep(f, handle, [3, 5], 2)
    assert res["perm_layers"].shape == (2, 2, 2) and res["dup_tv"].shape == (2, 2)
    assert res["perm_layers"].max() < 1e-5


def test_hf_forward_matches(model, prompts):
    f = positionfree.make_forward(model, "shipped (causal + rotary)")
    g = positionfree.hf_forward(model, prompts, all_logits=True)
    assert torch.allclose(f(prompts).logits, g.logits, atol=1e-5)
    last = positionfree.hf_forward(model, prompts)
    assert last.logits.shape[1] == 1 and torch.allclose(last.last_probs(), f(prompts).last_probs(), atol=1e-6)


# ---------------------------------------------------------------- W_q through POT
@pytest.mark.parametrize("q", [1.0, 2.0, 3.0])
@pytest.mark.parametrize("sizes", [(7, 7), (5, 8), (1, 4)])
def test_wasserstein_matches_1d_closed_form(q, sizes):
    rng = np.random.default_rng(int(q * 10 + sizes[0]))
    x, y = rng.normal(size=sizes[0]), rng.normal(1.0, 2.0, size=sizes[1])
    closed = measures.wasserstein_1d_closed_form(x, y, q)
    assert measures.wasserstein(x[:, None], y[:, None], q) == pytest.approx(closed, rel=1e-9, abs=1e-12)
    assert measures.wasserstein_1d(x, y, q) == pytest.approx(closed, rel=1e-7, abs=1e-10)


def test_wasserstein_known_values():
    assert measures.wasserstein([[0.0]], [[3.0]], q=2) == pytest.approx(3.0)
    # translation by a vector v: W_q = |v| for every q
    X = np.random.default_rng(0).normal(size=(6, 3))
    v = np.array([1.0, -2.0, 2.0])
    for q in (1, 2):
        assert measures.wasserstein(X, X + v, q) == pytest.approx(3.0, rel=1e-9)
    # a prompt, its permutation and its duplication have the same measure
    assert measures.wasserstein(X, X[::-1]) == pytest.approx(0.0, abs=1e-7)  # ot.dist rounding: ~1e-9
    assert measures.wasserstein(X, np.concatenate([X, X])) == pytest.approx(0.0, abs=1e-7)
    # closed form on a line: uniform on {0, 1} vs Dirac at 0 -> W_1 = 1/2, W_2 = sqrt(1/2)
    assert measures.wasserstein_1d_closed_form([0.0, 1.0], [0.0], 2) == pytest.approx(math.sqrt(0.5))


def test_wasserstein_accepts_torch_and_weights():
    X = torch.zeros(2, 2)
    Y = torch.tensor([[1.0, 0.0], [0.0, 0.0]])
    assert measures.wasserstein(X, Y, 1, b=[0.25, 0.75]) == pytest.approx(0.25)


# ---------------------------------------------------------------- Lipschitz pairs
def test_lipschitz_pairs(model, handle):
    e = handle
    free = meanfield.lipschitz_pairs(positionfree.make_forward(model, "no mask, no positions"), e, 6, 8)
    rot = meanfield.lipschitz_pairs(positionfree.make_forward(model, "shipped (causal + rotary)"), e, 6, 8)
    s_free, s_rot = meanfield.lipschitz_summary(free), meanfield.lipschitz_summary(rot)
    assert s_free["tv_at_w0"] < 1e-5 < s_rot["tv_at_w0"]  # permuted prompts: same measure, different law
    assert np.all(free["tv"] <= 1) and np.all(free["w"] >= 0) and s_free["n"] == 6
    assert 0 < s_free["q25"] <= s_free["median"] <= s_free["q75"] <= s_free["max"]
    w0 = rot["w"] == 0
    assert s_rot["flips_at_w0"] == int(rot["argmax_changed"][w0].sum()) and s_free["flips_at_w0"] == 0


def test_readout_moves_keep_the_measure_and_move_the_last_vector(model, handle):
    free = meanfield.readout_moves(positionfree.make_forward(model, "no mask, no positions"), handle, 6, 6)
    assert free["tv"].shape == free["argmax_changed"].shape == (6,)
    assert np.all((free["tv"] >= 0) & (free["tv"] <= 1))
    # the position-free model reads the measure and the last vector: swapping the last vector moves the law,
    # where a permutation that keeps it does not (test_lipschitz_pairs)
    assert np.median(free["tv"]) > 1e-4
    for bad, msg in (((1, 3), "m"), ((4, 0), "n_prompts")):
        with pytest.raises(ValueError, match=msg):
            meanfield.readout_moves(positionfree.make_forward(model, "no mask, no positions"), handle, *bad)


# ---------------------------------------------------------------- closed forms
def test_mean_field_loglog_count_finite_and_monotone():
    ds = [1, 2, 5, 10, 100, 1000, 10_000, 100_000]
    for r, eps, q in [(1.0, 2.0**-11, 1), (1.0, 0.5, 2), (300.0, 1e-8, 1.5), (1.0, 1e-300, 4)]:
        vals = [bounds.mean_field_loglog_count(d, r, eps, q) for d in ds]
        assert all(math.isfinite(v) for v in vals)
        assert all(b > a for a, b in zip(vals, vals[1:]))
    # monotone in 2r/ε and in q
    ratios = [bounds.mean_field_loglog_count(1000, 1.0, e) for e in (1.0, 0.1, 1e-3, 1e-9)]
    assert all(b > a for a, b in zip(ratios, ratios[1:]))
    assert bounds.mean_field_loglog_count(64, 1.0, 0.1, 2) > bounds.mean_field_loglog_count(64, 1.0, 0.1, 1)
    # against the direct formula where it fits in a float: d = 1, 2r/ε = 4, q = 1 -> ln(5·ln(e + 4e))
    assert bounds.mean_field_loglog_count(1, 1.0, 0.5, 1) == pytest.approx(math.log(5 * math.log(5 * math.e)))


def test_mean_field_log_accessible_fraction():
    # tiny case: d = 1, 2r/ε = 4, q = 1 -> ln #acc = 5·(1 + ln 5) ≈ 13.05 nats; |V| = 30
    log_count = 5 * (1 + math.log(5))
    assert bounds.mean_field_log_accessible_fraction(1, 1.0, 0.5, 30, 2) == 0.0
    assert bounds.mean_field_log_accessible_fraction(1, 1.0, 0.5, 30, 10) == pytest.approx(
        log_count - 10 * math.log(30)
    )
    fr = [bounds.mean_field_log_accessible_fraction(d, 1.0, 2.0**-11, 30, 10**6) for d in (1, 10, 1000, 100_000)]
    assert all(math.isfinite(f) and f <= 0 for f in fr)
    assert fr[-1] == 0.0  # real widths: the bound is vacuous for every representable n


def test_crossover_and_threshold():
    d, r, eps = 4, 1.0, 0.25
    log_m = meanfield.crossover_log_m(d, r, eps)
    m_star = math.exp(log_m)
    below, above = max(1, math.floor(m_star * 0.9)), math.ceil(m_star * 1.1)
    mf = bounds.mean_field_loglog_count(d, r, eps)
    assert meanfield.finite_m_loglog(d, r, eps, below) < mf < meanfield.finite_m_loglog(d, r, eps, above)
    t = meanfield.mean_field_log10_threshold(d, r, eps, 30)
    n_star = 10**t
    assert bounds.mean_field_log_accessible_fraction(d, r, eps, 30, math.floor(n_star * 0.99)) == 0.0
    assert bounds.mean_field_log_accessible_fraction(d, r, eps, 30, math.ceil(n_star * 1.01)) < 0.0
    assert math.isfinite(meanfield.mean_field_log10_threshold(100_000, 1.0, 1e-9, 50_000))


# ---------------------------------------------------------------- bad inputs
@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: bounds.mean_field_loglog_count(0, 1.0, 0.1), "d must be"),
        (lambda: bounds.mean_field_loglog_count(4, -1.0, 0.1), "r must be"),
        (lambda: bounds.mean_field_loglog_count(4, 1.0, 0.0), "eps must be"),
        (lambda: bounds.mean_field_loglog_count(4, 1.0, 0.1, q=0.5), "q must be"),
        (lambda: bounds.mean_field_loglog_count(4.0, 1.0, 0.1), "d must be an integer"),
        (lambda: bounds.mean_field_log_accessible_fraction(4, 1.0, 0.1, 1, 3), "d_vocab"),
        (lambda: bounds.mean_field_log_accessible_fraction(4, 1.0, 0.1, 30, -1), "n must be"),
        (lambda: measures.wasserstein(np.zeros((2, 3)), np.zeros((2, 4))), "same width"),
        (lambda: measures.wasserstein(np.zeros((2, 3)), np.zeros((2, 3)), q=0.5), "q must be"),
        (lambda: measures.wasserstein(np.zeros((0, 3)), np.zeros((2, 3))), "must not be empty"),
        (lambda: measures.wasserstein([[np.nan]], [[0.0]]), "finite"),
        (lambda: measures.empirical_measure(np.zeros((2, 2)), [0.5, 0.6]), "sum to 1"),
        (lambda: measures.empirical_measure(np.zeros((2, 2)), [1.0]), "one entry per prompt vector"),
        (lambda: measures.empirical_measure(np.zeros((2, 2, 2))), r"\(m, d\)"),
        (lambda: measures.wasserstein_1d(np.zeros((2, 2)), [0.0]), "1-D"),
        (lambda: meanfield.crossover_log_m(4, 1.0, -0.1), "eps must be"),
        (lambda: meanfield.mean_field_log10_threshold(4, 1.0, 0.1, 1), "d_vocab"),
        (lambda: meanfield.finite_m_loglog(4, 1.0, 0.1, 0), "m must be"),
        (lambda: meanfield.lipschitz_summary({"w": [0.0], "tv": [0.1], "argmax_changed": [False]}), "W_q > 0"),
        (lambda: meanfield.lipschitz_summary({"w": [1.0]}), "missing"),
        (lambda: meanfield.total_variation(torch.ones(3), torch.ones(4)), "same shape"),
        (lambda: positionfree.tiny_neox(d_model=10, n_heads=4), "divisible"),
    ],
)
def test_bad_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bad_model_and_prompt_inputs(model):
    with pytest.raises(ValueError, match="inputs_embeds must"):
        neox_forward(model, torch.zeros(4, 64))
    with pytest.raises(ValueError, match="d_model=64"):
        neox_forward(model, torch.zeros(1, 4, 63))
    with pytest.raises(ValueError, match="finite"):
        neox_forward(model, torch.full((1, 2, 64), float("nan")))
    with pytest.raises(ValueError, match="causal LM"):
        neox_forward(torch.nn.Linear(2, 2), torch.zeros(1, 2, 2))
    import transformers

    llama = transformers.LlamaForCausalLM(
        transformers.LlamaConfig(
            vocab_size=11, hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2
        )
    )
    with pytest.raises(ValueError, match="GPT-NeoX"):
        neox_forward(llama, torch.zeros(1, 2, 8))
    with pytest.raises(ValueError, match="GPT-NeoX"):
        positionfree.make_forward(llama, "causal, no positions")
    assert positionfree.make_forward(llama, "shipped (causal + rotary)")(torch.zeros(1, 3, 8)).logits.shape == (
        1,
        1,
        11,
    )
    with pytest.raises(ValueError, match="case must be"):
        positionfree.make_forward(model, "rotary only")
    f = positionfree.make_forward(model, "no mask, no positions")
    with pytest.raises(ValueError, match="m >= 3"):
        meanfield.permutation_deviation(f, torch.zeros(1, 2, 64), torch.Generator())
    with pytest.raises(ValueError, match="m must be"):
        meanfield.structural_sweep(f, wrap_model(model), [2], 2)
    with pytest.raises(ValueError, match="m must be"):
        meanfield.lipschitz_pairs(f, wrap_model(model), 2, 3)
    with pytest.raises(ValueError, match="handle must be a model handle"):  # a raw weight matrix is refused
        meanfield.random_prompts(model.get_input_embeddings().weight, 1, 2, torch.Generator())


# ---------------------------------------------------------------- the shipped nano model
def test_nano_structural_facts():
    nano, note = positionfree.load_hf("nano")
    assert nano is not None, note  # shipped in the package: a missing model is a failure, not a skip
    gen = torch.Generator().manual_seed(5)
    X = meanfield.random_prompts(nano, 2, 10, gen)  # (2, 10, d): hard prompts through nano.embed
    with torch.no_grad():
        ref = nano.model(inputs_embeds=X).logits
    assert torch.allclose(neox_forward(nano, X).logits, ref, atol=1e-4, rtol=1e-4)
    free = positionfree.make_forward(nano, "no mask, no positions")
    assert meanfield.permutation_deviation(free, X, gen)["tv"].max() < 1e-5
    assert meanfield.duplication_deviation(free, X)["tv"].max() < 1e-5
    shipped = positionfree.make_forward(nano, "shipped (causal + rotary)")
    assert meanfield.duplication_deviation(shipped, X)["layers"].min() > 1e-3


@pytest.mark.realmodel("smollm2-135m")
def test_smollm2_is_not_a_map_on_measures():
    real, note = positionfree.load_hf("smollm2-135m")
    assert real is not None, note
    f = positionfree.make_forward(real, "shipped (causal + rotary)")
    X = meanfield.random_prompts(real, 1, 8, torch.Generator().manual_seed(0))
    assert meanfield.duplication_deviation(f, X)["tv"].min() > 1e-4


@pytest.mark.realmodel("gemma-3-270m")
@pytest.mark.slow
def test_gemma_hard_prompts_are_what_the_model_reads():
    # random_prompts goes through the model's own embedding (√d scale included): fed as inputs_embeds,
    # the prompt gives exactly the logits of the same ids fed as input_ids
    real, note = positionfree.load_hf("gemma-3-270m")
    assert real is not None, note
    gen = torch.Generator().manual_seed(0)
    X = meanfield.random_prompts(real, 1, 6, gen)
    ids = torch.randint(0, real.d_vocab, (1, 6), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        want = real.model(input_ids=ids).logits[:, -1]
    got = positionfree.make_forward(real, "shipped (causal + rotary)")(X).logits[:, -1]
    assert torch.allclose(got, want, atol=1e-3, rtol=1e-3)
