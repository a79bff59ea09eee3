"""Thm 4.5 of the paper tested on a model that satisfies its assumption literally.

Assumption 4.3 (finite precision) says the model is constant on every cube of an ε-grid. Here it is made
literal: a wrapper rounds every coordinate of the prompt X ∈ R^{d×m} to the nearest multiple of ε before
the network sees it. Thm 4.5 then bounds the number of distinct greedy outputs of prompts in the ball
B_{d×m}(0, r) by the packing bound (1 + 2r/ε)^{d·m}, whatever the network and however long the output.

Hand derivation of the count used below (r = R·ε with R a whole number): a coordinate x ∈ [−r, r] rounds to
k·ε with k an integer, |k| ≤ R (x/ε ∈ [−R, R], and rounding keeps it there), so one coordinate takes at most
2R + 1 = 1 + 2r/ε values and the d·m coordinates at most (1 + 2r/ε)^{d·m} joint values. The greedy output is
a function of the rounded prompt, so it takes at most as many values. |V|^n is far larger for every case.

The network is a tiny random GPT-NeoX of width 32. The prompt lives in R^d with d as small as 1 or 2 (so that
the bound is small enough to be reached), and a fixed linear map lifts it to the network's width: the model
under test is the composite, input space R^{d×m}. The same prompts through the same composite *without*
the rounding give more distinct outputs than the bound, and the rounded composite more than a bound with the
factor 2 of 2r/ε dropped: the count is a check that can fail, on the model and on the library's bound.
"""

from __future__ import annotations

import math

import pytest
import torch
import transformers

from accessibility_lib.models.handle import wrap_model
from accessibility_lib.theory import bounds

V, WIDTH, N_TOKENS, N_PROMPTS = 64, 32, 4, 4000
# (d, m, R = r/ε): bounds (1 + 2R)^{dm} = 25, 49, 81, 9; |V|^n = 64^4 ≈ 1.7e7 for all.
CASES = [(2, 1, 2), (1, 2, 3), (2, 2, 1), (1, 1, 4)]


@pytest.fixture(scope="module")
def network():
    torch.manual_seed(0)
    cfg = transformers.GPTNeoXConfig(
        vocab_size=V,
        hidden_size=WIDTH,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=32,
        initializer_range=0.3,  # large weights: outputs far from uniform, argmax cells small
    )
    return wrap_model(transformers.GPTNeoXForCausalLM(cfg), verify=False)


def ball_prompts(count: int, d: int, m: int, r: float, seed: int) -> torch.Tensor:
    """(count, m, d) prompts uniform in the ball B_{d×m}(0, r) (the whole prompt's norm is at most r)."""
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(count, d * m, generator=g, dtype=torch.float64)
    z = z / z.norm(dim=1, keepdim=True) * r * torch.rand(count, 1, generator=g, dtype=torch.float64) ** (1 / (d * m))
    return z.reshape(count, m, d)


def greedy_outputs(net, prompts: torch.Tensor, lift: torch.Tensor, eps: float | None, n: int) -> torch.Tensor:
    """(count, n) greedy tokens of the composite model; ``eps`` rounds the prompt to the ε-grid (None: not)."""
    x = prompts if eps is None else torch.round(prompts / eps) * eps  # Assumption 4.3, made literal
    x = (x @ lift).float()  # (count, m, WIDTH)
    out = []
    with torch.no_grad():
        for _ in range(n):
            tok = net.model(inputs_embeds=x).logits[:, -1].argmax(-1)  # (count,)
            out.append(tok)
            x = torch.cat([x, net.embed(tok[:, None])], 1)  # generated tokens enter as the model embeds them
    return torch.stack(out, 1)


def _setup(d: int, m: int, R: int, seed: int = 1):
    r = 1.0
    eps = r / R
    prompts = ball_prompts(N_PROMPTS, d, m, r, seed)
    lift = torch.randn(d, WIDTH, generator=torch.Generator().manual_seed(seed + 100), dtype=torch.float64) * 3
    return r, eps, prompts, lift


def _distinct(rows: torch.Tensor) -> int:
    return len({tuple(row) for row in rows.tolist()})


@pytest.mark.parametrize("d,m,R", CASES)
def test_rounded_model_never_exceeds_the_librarys_packing_bound(network, d, m, R):
    """The bound is the library's (``bounds.log_packing_ball``), checked against the hand count (1 + 2R)^{dm}."""
    torch.set_num_threads(1)
    r, eps, prompts, lift = _setup(d, m, R)
    bound = math.exp(bounds.log_packing_ball(d, r, eps, m))  # Thm 4.5, as the book computes it
    assert bound == pytest.approx((1 + 2 * R) ** (d * m), rel=1e-12)
    assert bound <= 81  # small enough to be reached by a few thousand prompts
    assert V**N_TOKENS >= 2e5 * bound  # |V|^n dwarfs it: 1.7e7 sequences against at most 81
    outs = greedy_outputs(network, prompts, lift, eps, N_TOKENS)
    rounded = torch.round(prompts / eps).to(torch.int64).reshape(N_PROMPTS, -1)
    assert int(rounded.abs().max()) <= R  # the hand derivation's |k| ≤ R
    n_out = _distinct(outs)
    assert n_out <= bound, (n_out, bound)
    assert n_out >= 3  # the model does produce several sequences: the bound is not met trivially


# Measured on these prompts (seeded): rounded n_out = 12 of bound 25 at (2, 1, 2) and 37 of 81 at (2, 2, 1);
# without rounding 33 and 337. (1 + r/ε)^{dm} — the bound with the factor 2 dropped — is 9 and 16.
@pytest.mark.parametrize("d,m,R", [(2, 1, 2), (2, 2, 1)])
def test_the_bound_separates_a_rounding_model_from_a_non_rounding_one_and_a_wrong_bound(network, d, m, R):
    """Where the count is informative, the same assertion fails for a model without Assumption 4.3 and for a
    bound too small by the factor 2 of 2r/ε: n_out(rounded) ≤ bound < n_out(unrounded), n_out(rounded) > (1 + R)^{dm}."""
    torch.set_num_threads(1)
    r, eps, prompts, lift = _setup(d, m, R)
    bound = math.exp(bounds.log_packing_ball(d, r, eps, m))
    n_round = _distinct(greedy_outputs(network, prompts, lift, eps, N_TOKENS))
    n_free = _distinct(greedy_outputs(network, prompts, lift, None, N_TOKENS))
    assert n_round <= bound < n_free, (n_round, bound, n_free)
    assert n_round > (1 + r / eps) ** (d * m), (n_round, (1 + r / eps) ** (d * m))  # a halved 2r/ε is caught
