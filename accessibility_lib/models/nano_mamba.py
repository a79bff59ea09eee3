"""The ``nano-mamba`` architecture, and Mamba's selective scan for training it on a CPU.

:func:`make_mamba` builds the state-space counterpart of ``nano`` (Hugging Face's ``MambaForCausalLM``:
7 blocks, d_model 128, expand 2, state size 4, conv kernel 4, untied embeddings).

Hugging Face's reference scan (the path without custom kernels) indexes one time step at a time out of
full (batch, inner, length, state) tensors and its backward pass writes a full-size gradient per step,
quadratic in the length. :class:`SelectiveScan` computes the same recurrence
h_t = exp(A·Δ_t) ⊙ h_{t−1} + (Δ_t·u_t) ⊗ B_t, y_t = h_t·C_t on one time slice at a time in both
directions, with a hand-written backward pass (checked by gradcheck and against autograd through the
reference in ``tests/unit/test_nano_mamba.py``). Used only to train ``nano-mamba``
(``scripts/train_nano_mamba.py``); inference everywhere runs the reference scan.
"""

from __future__ import annotations

import torch

__all__ = ["make_mamba", "SelectiveScan", "selective_scan", "use_scan", "set_scan", "check_scan_agreement"]


class SelectiveScan(torch.autograd.Function):
    """Mamba's selective scan, one time slice at a time, with a hand-written backward pass.

    h_t = exp(A·Δ_t) ⊙ h_{t−1} + (Δ_t·u_t) ⊗ B_t,  y_t = Σ_n h_t[:, :, n]·C_t[:, n]  (h_0 = 0).

    Shapes: Δ, u (b, I, L); A (I, N); B, C (b, L, N). Returns y (b, I, L) and the last state (b, I, N).
    Saves the states (L, b, I, N) once; every other tensor of the loops is a (b, I, N) slice.
    """

    @staticmethod
    def forward(ctx, dt, u, A, Bm, Cm):
        b, n_inner, L = dt.shape
        x = dt * u  # (b, I, L)
        h = torch.zeros(b, n_inner, A.shape[1], dtype=dt.dtype, device=dt.device)
        H = torch.empty(L, *h.shape, dtype=dt.dtype, device=dt.device)  # (L, b, I, N)
        ys = torch.empty(L, b, n_inner, dtype=dt.dtype, device=dt.device)
        dtT, xT, BT, CT = dt.permute(2, 0, 1), x.permute(2, 0, 1), Bm.transpose(0, 1), Cm.transpose(0, 1)
        for t in range(L):
            h = torch.exp(A * dtT[t][:, :, None]) * h + xT[t][:, :, None] * BT[t][:, None, :]
            H[t] = h
            ys[t] = torch.bmm(h, CT[t][:, :, None])[:, :, 0]
        ctx.save_for_backward(dt, u, A, Bm, Cm, H)
        return ys.permute(1, 2, 0), h

    @staticmethod
    def backward(ctx, gy, gh_last):
        dt, u, A, Bm, Cm, H = ctx.saved_tensors
        b, n_inner, L = dt.shape
        x = dt * u
        dtT, xT, BT, CT, gyT = (dt.permute(2, 0, 1), x.permute(2, 0, 1), Bm.transpose(0, 1), Cm.transpose(0, 1),
                                gy.permute(2, 0, 1))  # fmt: skip
        gh = gh_last.clone() if gh_last is not None else torch.zeros_like(H[0])
        g_dt, g_x = torch.empty_like(dtT), torch.empty_like(dtT)  # (L, b, I)
        g_B, g_C = torch.empty_like(BT), torch.empty_like(CT)  # (L, b, N)
        g_A = torch.zeros_like(A)
        zero = torch.zeros_like(H[0])
        for t in range(L - 1, -1, -1):
            gh = gh + gyT[t][:, :, None] * CT[t][:, None, :]  # dL/dh_t
            g_C[t] = torch.bmm(gyT[t][:, None, :], H[t])[:, 0]
            g_B[t] = torch.bmm(xT[t][:, None, :], gh)[:, 0]
            g_x[t] = torch.bmm(gh, BT[t][:, :, None])[:, :, 0]
            dA = torch.exp(A * dtT[t][:, :, None])
            tmp = gh * (H[t - 1] if t > 0 else zero) * dA  # dL/d(A·Δ_t), (b, I, N)
            g_dt[t] = (tmp * A).sum(-1)
            g_A += (tmp * dtT[t][:, :, None]).sum(0)
            gh = gh * dA  # dL/dh_{t−1}
        g_x = g_x.permute(1, 2, 0)
        return g_dt.permute(1, 2, 0) + g_x * u, g_x * dt, g_A, g_B.transpose(0, 1), g_C.transpose(0, 1)


def selective_scan(hidden_states, dt, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                   return_last_state=False, **kwargs):  # fmt: skip
    """Drop-in for ``transformers.models.mamba.modeling_mamba.mamba_selective_scan`` (same arguments:
    hidden_states, dt (b, I, L); A (I, N); B, C (b, N, L)), computed by :class:`SelectiveScan`."""
    import torch.nn.functional as F

    if delta_bias is not None:
        dt = dt + delta_bias.to(dt.dtype)[..., None]
    if delta_softplus:
        dt = F.softplus(dt)
    f = torch.promote_types(dt.dtype, torch.float32)
    y, last = SelectiveScan.apply(dt.to(f), hidden_states.to(f), A.to(f), B.transpose(1, 2).to(f),
                                  C.transpose(1, 2).to(f))  # fmt: skip
    y = y.to(hidden_states.dtype)
    if D is not None:
        y = y + hidden_states * D[None, :, None]
    if z is not None:
        y = y * F.silu(z)
    return (y, last) if return_last_state else y


def use_scan(model, scan: str) -> None:
    """Select the scan used while training: ``"loop"`` (:func:`selective_scan`), ``"mambapy"`` or ``"reference"``."""
    import transformers.models.mamba.modeling_mamba as MM

    if not hasattr(MM, "_reference_selective_scan"):
        MM._reference_selective_scan = MM.mamba_selective_scan
    MM.mamba_selective_scan = selective_scan if scan == "loop" else MM._reference_selective_scan
    set_scan(model, scan == "mambapy")


def check_scan_agreement(model, scan: str) -> float:
    """Max |logit difference| between the training scan and Hugging Face's reference sequential scan."""
    x = torch.arange(40, dtype=torch.int64)[None] % model.config.vocab_size
    model.eval()
    with torch.no_grad():
        use_scan(model, "reference")
        ref = model(input_ids=x, use_cache=False).logits
        use_scan(model, scan)
        got = model(input_ids=x, use_cache=False).logits
    model.train()
    return float((ref - got).abs().max())


def set_scan(model, use_mambapy: bool) -> None:
    model.config.use_mambapy = use_mambapy
    for layer in model.backbone.layers:
        layer.mixer.use_mambapy = use_mambapy


def make_mamba(d_vocab: int, d_model: int, n_layers: int, state_size: int, seed: int, use_mambapy: bool):
    """A randomly initialised (seeded) ``MambaForCausalLM`` of nano-mamba's shape."""
    from transformers import MambaConfig, MambaForCausalLM

    cfg = MambaConfig(
        vocab_size=d_vocab,
        hidden_size=d_model,
        state_size=state_size,
        num_hidden_layers=n_layers,
        expand=2,
        conv_kernel=4,
        use_bias=False,
        use_conv_bias=True,
        tie_word_embeddings=False,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=1,
        use_mambapy=use_mambapy,
    )
    torch.manual_seed(seed)
    return MambaForCausalLM(cfg)
