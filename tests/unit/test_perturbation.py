"""The ε a model really shows (accessibility_lib.experiments.perturbation): known answers, exactness, reproducibility, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from accessibility_lib.experiments import effective_eps
from accessibility_lib.experiments import perturbation as P

EPS = 2.0**-6  # the known grid


def grid_decoder(n_tokens: int, vocab: int = 1_000_003):
    """A 'model' that reads its input only through rounding to the ε-grid and tells every grid cell apart:
    token k = (Σ_i c_i·round(x_i/ε) + k) mod V with fixed odd coefficients c_i (V prime), so moving any
    coordinate to another cell changes every token (two moves cancelling needs c_i ≡ ±c_j: never here).
    """

    def decode(x: torch.Tensor) -> torch.Tensor:
        cells = torch.round(x.double() / EPS).flatten(1).long()  # (B, m·d)
        c = 2 * torch.arange(1, cells.shape[1] + 1) ** 3 + 1  # distinct odd coefficients
        s = (cells * c).sum(1)  # (B,)
        return torch.stack([(s + k) % vocab for k in range(n_tokens)], 1)

    return decode


def test_known_grid_epsilon_is_recovered():
    """Prompts at cube centres of an ε-grid: every direction first leaves the cube at t = ε/2, so ε_eff = ε."""
    gen = torch.Generator().manual_seed(1)
    prompts = torch.randint(-40, 40, (12, 3, 5), generator=gen).double() * EPS  # cube centres k·ε
    prompts[prompts == 0] = EPS  # the grid is relative to ‖X‖∞; keep every prompt non-zero
    nxt, out = P.prompt_sensitivity(grid_decoder(3), prompts.float(), n_tokens=3, n_directions=6, seed=0)
    assert nxt.t.shape == (12, 6) and out.t.shape == (12, 6)
    np.testing.assert_allclose(nxt.t, EPS / 2, rtol=2e-3)
    np.testing.assert_allclose(out.t, EPS / 2, rtol=2e-3)
    eff = effective_eps.summarize(nxt, n_boot=200)
    assert eff.eps == pytest.approx(EPS, rel=2e-3)
    assert eff.ci[0] <= eff.eps <= eff.ci[1]
    assert eff.ci[1] == pytest.approx(EPS, rel=2e-3)
    assert eff.n_unchanged == 0
    assert eff.convention().eps() == eff.eps


def test_float32_grid_is_the_floor():
    """A decoder that sees every bit of its float32 input: the smallest change is the rounding threshold.

    From x = 1.0 a coordinate moving up changes once t·u_i exceeds 2^-24 (half the spacing 2^-23 above 1);
    moving down once t·|u_i| exceeds 2^-25 (the spacing below 1 is 2^-24). Hand derivation, IEEE binary32.
    """

    def bits_decoder(x):
        v = x.float().contiguous().view(torch.int32).flatten(1).long()
        return ((v * torch.arange(1, v.shape[1] + 1)).sum(1) % 1_000_003)[:, None]

    prompts = torch.ones(4, 2, 3)
    nxt, _ = P.prompt_sensitivity(bits_decoder, prompts, n_tokens=1, n_directions=5, seed=3, bisect_steps=30)
    u = P.random_directions((2, 3), 4 * 5, seed=3).view(4, 5, 6).double()
    thresh = torch.where(u > 0, 2.0**-24 / u, 2.0**-25 / u.abs())
    expected = thresh.min(2).values.numpy()
    np.testing.assert_allclose(nxt.t, expected, rtol=1e-6)


def test_h_margin_hand_example():
    W = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    h = torch.tensor([[2.0, 1.0]])
    # argmax 0 (z = 2, 1, -3); token 1 needs Δ/‖w0 − w1‖₁ = 1/2, token 2 needs 5/3
    u = torch.tensor([[-1.0, 1.0], [1.0, -1.0], [0.0, 1.0]])
    worst, along = effective_eps.h_margin_distances(h, W, None, directions=u)
    assert worst[0] == pytest.approx(0.5)
    # along (-1, 1): token 1 gains 2 per unit -> 1/2; token 2 gains 1 -> 5. Along (1, -1): no token gains.
    # along (0, 1): token 1 gains 1 -> 1; token 2 loses.
    np.testing.assert_allclose(along[0], [0.5, math.inf, 1.0])


def test_h_margin_against_brute_force():
    rng = np.random.default_rng(0)
    W = torch.as_tensor(rng.normal(size=(40, 6)))
    b = torch.as_tensor(rng.normal(size=40))
    h = torch.as_tensor(rng.normal(size=(10, 6)) * 3)
    u = P.random_directions((6,), 10 * 4, seed=0).view(10, 4, 6).double()
    worst, along = effective_eps.h_margin_distances(h, W, b, directions=u, chunk=7)
    top = (h @ W.T + b).argmax(1)
    for n in range(10):
        for k in range(4):
            t = along[n, k]
            if not math.isfinite(t):
                continue
            before = (h[n] + t * (1 - 1e-9) * u[n, k]) @ W.T + b
            after = (h[n] + t * (1 + 1e-6) * u[n, k]) @ W.T + b
            assert int(before.argmax()) == int(top[n]) and int(after.argmax()) != int(top[n])
        # the worst case over all directions is attained by the sign vector against the closest rival
        assert worst[n] <= np.nanmin(np.where(np.isfinite(along[n]), along[n], np.inf)) + 1e-12


def _tiny_handle(seed=0):
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    from accessibility_lib.models.handle import wrap_model

    cfg = GPTNeoXConfig(vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)  # fmt: skip
    torch.manual_seed(seed)
    return wrap_model(GPTNeoXForCausalLM(cfg), None, name="tiny-neox")


def test_handle_path_reproducible_from_seed():
    h = _tiny_handle()
    ids, x = P.natural_prompts(h, 3, 2, seed=0)  # no tokenizer: seeded random ids
    assert ids.shape == (3, 2) and x.shape == (3, 2, 32)
    kw = dict(n_tokens=2, n_directions=2, grid_per_octave=1, bisect_steps=4)
    a = P.prompt_sensitivity(h, x, seed=5, **kw)
    b = P.prompt_sensitivity(h, x, seed=5, **kw)
    c = P.prompt_sensitivity(h, x, seed=6, **kw)
    np.testing.assert_array_equal(a[0].t, b[0].t)
    np.testing.assert_array_equal(a[1].t, b[1].t)
    assert not np.array_equal(a[0].t, c[0].t)
    assert np.all(a[1].t <= a[0].t)  # the n-token output changes no later than its first token
    assert a[0].dtype == "float32" and a[0].model == "tiny-neox"
    hn, hout = effective_eps.h_sensitivity(h, x, n_tokens=3, n_directions=3, seed=0)
    assert hn.t.shape == (3, 3) and np.all(hout.t <= hn.t) and np.all(hout.worst <= hn.worst)
    assert np.all(hn.worst <= hn.t.min(1) + 1e-12)
    eff = effective_eps.model_effective_eps(h, space="h", n_prompts=3, m=2, n_directions=2)
    assert eff.eps > 0 and eff.space == "h" and eff.n_directions == 0  # default in h: the exact worst direction
    assert eff.eps == pytest.approx(2 * float(np.quantile(hn.worst, 0.5, method="inverted_cdf")))
    assert effective_eps.summarize(hn, over="worst").eps <= effective_eps.summarize(hn).eps
    with pytest.raises(ValueError, match="only the h space"):
        effective_eps.summarize(a[0], over="worst")


def test_no_soft_prompt_path_is_a_clear_error():
    class NoEmbeds(torch.nn.Module):
        def forward(self, input_ids):
            return input_ids

    class Handle:
        name = "ids-only"
        model = NoEmbeds()
        d_vocab = 10

        def embed(self, ids):
            return torch.zeros(*ids.shape, 4)

    with pytest.raises(P.NoSoftPromptError, match="no soft-prompt path.*inputs_embeds"):
        P.prompt_sensitivity(Handle(), torch.ones(1, 1, 4))
    with pytest.raises(P.NoSoftPromptError, match="no soft-prompt path"):
        effective_eps.model_effective_eps(object())


def test_bad_arguments():
    h = _tiny_handle()
    with pytest.raises(ValueError, match="space must be"):
        effective_eps.model_effective_eps(h, space="logits")
    with pytest.raises(ValueError, match=r"prompts must be a \(P, m, d\)"):
        P.prompt_sensitivity(grid_decoder(1), torch.ones(3, 4))
    sens = P.Sensitivity("prompt", "next token", 1, np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="quantile"):
        effective_eps.summarize(sens, quantile=1.5)
