"""Cramming: fit one soft prompt per target so that a frozen model greedily generates the target.

Kuratov et al. (2025), as used in paper Section 5: the model is frozen and only a soft prompt
Y ∈ R^{m×d} (m input vectors) is optimised, with the teacher-forced cross-entropy

    L(Y; t) = −(1/n) Σ_{i=1..n} log p(t_i | [Y, e(t_1), …, e(t_{i−1})]).

**Convention:** the first target token t_1 is *predicted from the prompt alone* (it is not given as
input); the inputs are [Y, e(t_1..t_{n−1})] and the logits at positions m−1 … m+n−2 are scored against
t_1 … t_n. A target is *crammed* when real greedy decoding from Y (with a KV cache, as ``generate``
does) reproduces t_1 … t_n exactly. Optionally fixed tokens (``prefix_ids``, e.g. BOS) come before the
prompt: Llama-type models make position 0 an attention sink whose output hardly depends on its input,
so a soft vector there cannot choose t_1 (observed on SmolLM2-135M, chapter 3).

Improvements over the replication code (PAPER.md §6): many targets are optimised in one batch
(right-padded; the model is causal so padding after a target never influences it, and each target's
loss is its own mean so its gradient does not depend on the batch); each target stops as soon as its
teacher-forced argmax is all correct *and* greedy decoding confirms it; Adam is applied per target
(elementwise, so a batch equals separate runs); prompts start at the scale of the model's real input
embeddings; the forward pass runs in the model's dtype (fp32 or bf16 — fp16 is refused, it needs a
gradient scaler) with an fp32 master copy of the prompts; NaN/inf losses or exploding prompts restart
the target from a fresh seed, and the restarts are reported.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ._checks import check_int, check_positive_real, check_real

__all__ = ["CramResult", "cram", "greedy_decode", "embedding_stats", "context_length", "N50Search", "locate_n50",
           "find_n50", "target_source"]


@dataclass
class CramResult:
    """Per-target outcome of :func:`cram` (B targets).

    Attributes:
        success: (B,) bool — greedy decoding from the prompt reproduces the target exactly.
        steps: (B,) int — optimiser updates used (0 if the initial prompt already worked).
        final_loss: (B,) float — mean cross-entropy per target token at the last check (nats/token).
        best_accuracy: (B,) float — best teacher-forced argmax token accuracy seen, in [0, 1].
        prompts: (B, m, d_model) float32 CPU tensor — the verified prompt (success) or the last one.
        restarts: (B,) int — restarts after a NaN/inf loss or an exploding prompt.
        diverged: (B,) bool — still diverging after ``max_restarts`` restarts (counted as failure).
        seeds: (B,) int — the seed each target's prompt was initialised from.
    """

    success: np.ndarray
    steps: np.ndarray
    final_loss: np.ndarray
    best_accuracy: np.ndarray
    prompts: torch.Tensor
    restarts: np.ndarray
    diverged: np.ndarray
    seeds: np.ndarray

    def __len__(self) -> int:
        return int(self.success.size)

    def record(self, i: int) -> dict:
        """Target ``i``'s scalars as a JSON-able dict (for the result store)."""
        return {
            "success": bool(self.success[i]),
            "steps": int(self.steps[i]),
            "final_loss": float(self.final_loss[i]),
            "best_accuracy": float(self.best_accuracy[i]),
            "restarts": int(self.restarts[i]),
            "diverged": bool(self.diverged[i]),
            "seed": int(self.seeds[i]),
        }


def context_length(handle) -> int | None:
    """The model's maximum number of positions (``max_position_embeddings``), or None if unknown."""
    if getattr(handle, "n_ctx", None):
        return int(handle.n_ctx)
    cfg = getattr(handle.model, "config", None)
    cfg = getattr(cfg, "text_config", None) or cfg
    value = getattr(cfg, "max_position_embeddings", None)
    return int(value) if value else None


def _model_dtype(handle) -> torch.dtype:
    return next(handle.model.parameters()).dtype


def _model_device(handle) -> torch.device:
    return next(handle.model.parameters()).device


@torch.no_grad()
def embedding_stats(handle, n_tokens: int = 4096, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-coordinate mean and standard deviation of the model's real input embeddings.

    Uses ``handle.embed`` (so Gemma's √d scaling is included) on ``n_tokens`` token ids drawn uniformly
    from the vocabulary (all of it when smaller).

    Returns:
        (mean, std), each (d_model,) float32 on the model's device.
    """
    n_tokens = check_int("n_tokens", n_tokens, minimum=2)
    vocab = int(handle.d_vocab)
    device = _model_device(handle)
    if vocab <= n_tokens:
        ids = torch.arange(vocab, device=device)
    else:
        gen = torch.Generator().manual_seed(seed)
        ids = torch.randint(0, vocab, (n_tokens,), generator=gen).to(device)
    emb = handle.embed(ids[None, :])[0].float()  # (N, d)
    return emb.mean(0), emb.std(0).clamp_min(1e-8)


@torch.no_grad()
def greedy_decode(handle, prompts: torch.Tensor, n_new: int, prefix_ids: list[int] | None = None) -> torch.Tensor:
    """Greedy continuation of soft prompts, token by token with a KV cache (as ``generate`` does).

    Args:
        handle: model handle (``.model``, ``.embed``).
        prompts: (B, m, d_model) input vectors.
        n_new: number of tokens to generate (≥ 1).
        prefix_ids: fixed token ids placed before the prompt (e.g. ``[bos]``), or None.

    Returns:
        (B, n_new) int64 token ids on the model's device.
    """
    n_new = check_int("n_new", n_new, minimum=1)
    model, dtype, device = handle.model, _model_dtype(handle), _model_device(handle)
    # transformers 5.x renamed past_key_values to cache; accept both
    cache_kw = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    x = prompts.to(device=device, dtype=dtype)  # (B, m, d)
    if prefix_ids:
        pre = handle.embed(torch.tensor([prefix_ids], device=device)).to(dtype)  # (1, p, d)
        x = torch.cat([pre.expand(x.shape[0], -1, -1), x], 1)
    out = model(inputs_embeds=x, use_cache=True)
    tok = out.logits[:, -1].argmax(-1)  # (B,)
    tokens = [tok]
    past = out[cache_kw] if cache_kw in out else out.past_key_values
    for _ in range(n_new - 1):
        emb = handle.embed(tok[:, None]).to(dtype)  # (B, 1, d)
        out = model(inputs_embeds=emb, use_cache=True, **{cache_kw: past})
        past = out[cache_kw] if cache_kw in out else out.past_key_values
        tok = out.logits[:, -1].argmax(-1)
        tokens.append(tok)
    return torch.stack(tokens, 1)


def _check_targets(handle, target_ids, m: int) -> list[list[int]]:
    if isinstance(target_ids, torch.Tensor):
        target_ids = target_ids.tolist() if target_ids.ndim == 2 else [target_ids.tolist()]
    elif isinstance(target_ids, np.ndarray):
        target_ids = target_ids.tolist() if target_ids.ndim == 2 else [target_ids.tolist()]
    try:
        targets = [[int(t) for t in seq] for seq in target_ids]
    except TypeError as exc:
        raise ValueError("target_ids must be a list of token-id sequences or a 2-D integer array") from exc
    if not targets:
        raise ValueError("target_ids must contain at least one target, got none")
    vocab = int(handle.d_vocab)
    ctx = context_length(handle)
    for i, seq in enumerate(targets):
        if not seq:
            raise ValueError(f"target_ids[{i}] is empty: every target needs at least one token")
        if min(seq) < 0 or max(seq) >= vocab:
            raise ValueError(f"target_ids[{i}] has token ids outside [0, {vocab - 1}]")
        if ctx is not None and m + len(seq) - 1 > ctx:
            raise ValueError(
                f"target_ids[{i}] has {len(seq)} tokens: with m = {m} prompt vectors the input needs "
                f"{m + len(seq) - 1} positions, more than the model's context of {ctx}"
            )
    return targets


def cram(
    handle,
    target_ids,
    m: int,
    *,
    max_steps: int = 3000,
    lr: float = 1e-2,
    patience: int = 500,
    seed: int | list[int] = 0,
    betas: tuple[float, float] = (0.9, 0.9),
    max_restarts: int = 2,
    init_scale: float = 1.0,
    batch_size: int | None = None,
    prefix_ids: list[int] | None = None,
) -> CramResult:
    """Cram every target into its own soft prompt of m vectors, all targets in one batch.

    Args:
        handle: model handle (``.model`` frozen causal LM, ``.embed(ids)`` its input embeddings as
            consumed, ``.d_vocab``), in float32 or bfloat16.
        target_ids: B targets: a list of token-id sequences (lengths may differ) or a (B, n) array.
        m: prompt length, number of soft vectors (≥ 1).
        max_steps: most optimiser updates per target.
        lr: Adam learning rate (> 0). The replication code: AdamW, lr 1e−2, betas (0.9, 0.9).
        patience: stop a target after this many updates without a lower loss or a higher accuracy.
        seed: int (target i starts from seed + i) or one seed per target. A restart after divergence
            uses seed + 1_000_003·k for its k-th restart.
        betas: Adam betas.
        max_restarts: restarts allowed per target after NaN/inf or an exploding prompt.
        init_scale: prompts start as mean + init_scale·std·N(0, 1) per coordinate, with the mean and
            std of the model's real input embeddings (:func:`embedding_stats`).
        batch_size: most targets optimised together (None: all). Outcomes do not depend on it.
        prefix_ids: fixed (not optimised) token ids placed *before* the soft prompt, e.g. ``[bos]``.
            Llama-family models turn position 0 into an attention sink whose output hardly depends
            on its input, so a soft vector at position 0 cannot steer the first target token;
            with a BOS prefix the m soft vectors sit where real tokens do. Default: none.

    Returns:
        A :class:`CramResult` with one entry per target, in input order.

    Raises:
        ValueError: m < 1, no targets, an empty target, token ids outside the vocabulary, a target
            that does not fit the context with the prompt, lr ≤ 0, bad step counts, or an fp16 model.
    """
    m = check_int("m", m, minimum=1)
    lr = check_positive_real("lr", lr)
    max_steps = check_int("max_steps", max_steps, minimum=0)
    patience = check_int("patience", patience, minimum=1)
    max_restarts = check_int("max_restarts", max_restarts, minimum=0)
    init_scale = check_real("init_scale", init_scale, minimum=0.0)
    b1 = check_real("betas[0]", betas[0], minimum=0.0, maximum=1.0, max_inclusive=False)
    b2 = check_real("betas[1]", betas[1], minimum=0.0, maximum=1.0, max_inclusive=False)
    prefix_ids = [int(t) for t in (prefix_ids or [])]
    if any(t < 0 or t >= int(handle.d_vocab) for t in prefix_ids):
        raise ValueError(f"prefix_ids must be token ids in [0, {int(handle.d_vocab) - 1}], got {prefix_ids}")
    targets = _check_targets(handle, target_ids, m + len(prefix_ids))
    n_tg = len(targets)
    if isinstance(seed, (list, tuple, np.ndarray)):
        seeds = [check_int(f"seed[{i}]", s) for i, s in enumerate(seed)]
        if len(seeds) != n_tg:
            raise ValueError(f"seed must be an int or one seed per target ({n_tg}), got {len(seeds)} seeds")
    else:
        seeds = [check_int("seed", seed) + i for i in range(n_tg)]
    dtype = _model_dtype(handle)
    if dtype == torch.float16:
        raise ValueError("the model is in float16: cramming needs float32 or bfloat16 (fp16 needs a gradient scaler)")
    if batch_size is None:
        batch_size = n_tg
    batch_size = check_int("batch_size", batch_size, minimum=1)

    handle.model.eval()
    for p in handle.model.parameters():
        p.requires_grad_(False)
    mean, std = embedding_stats(handle)
    parts = []
    for start in range(0, n_tg, batch_size):
        sl = slice(start, start + batch_size)
        parts.append(_cram_batch(handle, targets[sl], seeds[sl], m, max_steps, lr, patience, (b1, b2),
                                 max_restarts, mean, std * init_scale, prefix_ids))
    return CramResult(*[
        torch.cat([getattr(p, f) for p in parts]) if f == "prompts" else np.concatenate([getattr(p, f) for p in parts])
        for f in CramResult.__dataclass_fields__
    ])


def _init_prompt(seed: int, m: int, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    z = torch.randn(m, mean.numel(), generator=gen)  # (m, d), on CPU for device-independent draws
    return mean.cpu() + std.cpu() * z


def _cram_batch(handle, targets, seeds, m, max_steps, lr, patience, betas, max_restarts, mean, std, prefix_ids) -> CramResult:
    model, dtype, device = handle.model, _model_dtype(handle), _model_device(handle)
    B = len(targets)
    lengths = torch.tensor([len(t) for t in targets], device=device)  # (B,)
    n_max = int(lengths.max())
    tgt = torch.zeros(B, n_max, dtype=torch.long, device=device)
    for i, t in enumerate(targets):
        tgt[i, : len(t)] = torch.tensor(t, device=device)
    mask = torch.arange(n_max, device=device)[None, :] < lengths[:, None]  # (B, n)
    with torch.no_grad():
        tok_emb = handle.embed(tgt).to(dtype)  # (B, n, d)
        pre = handle.embed(torch.tensor([prefix_ids], device=device)).to(dtype) if prefix_ids else None  # (1, p, d)

    prompts = torch.stack([_init_prompt(s, m, mean, std) for s in seeds]).to(device)  # (B, m, d) fp32 master
    init_norm = prompts.flatten(1).norm(dim=1).clone()  # (B,)
    exp_avg = torch.zeros_like(prompts)
    exp_avg_sq = torch.zeros_like(prompts)
    adam_t = torch.zeros(B, device=device)  # per-target Adam step count
    steps = np.zeros(B, dtype=np.int64)
    since_best = np.zeros(B, dtype=np.int64)
    best_loss = np.full(B, np.inf)
    best_acc = np.zeros(B)
    final_loss = np.full(B, np.nan)
    restarts = np.zeros(B, dtype=np.int64)
    success = np.zeros(B, dtype=bool)
    diverged = np.zeros(B, dtype=bool)
    done = np.zeros(B, dtype=bool)
    b1, b2 = betas

    while not done.all():
        idx_np = np.nonzero(~done)[0]
        idx = torch.as_tensor(idx_np, device=device)
        n_act = int(lengths[idx].max())
        p = prompts[idx].clone().requires_grad_(True)  # (b, m, d)
        x = torch.cat([p.to(dtype), tok_emb[idx, : n_act - 1]], 1)  # (b, m + n - 1, d)
        if pre is not None:
            x = torch.cat([pre.expand(x.shape[0], -1, -1), x], 1)  # (b, p + m + n - 1, d)
        logits = model(inputs_embeds=x, logits_to_keep=n_act, use_cache=False).logits.float()  # (b, n, V)
        t_act, mk = tgt[idx, :n_act], mask[idx, :n_act]
        ce = F.cross_entropy(logits.transpose(1, 2), t_act, reduction="none") * mk  # (b, n)
        loss = ce.sum(1) / lengths[idx]  # (b,) nats per token
        correct = ((logits.argmax(-1) == t_act) & mk).sum(1)  # (b,)
        acc = (correct.float() / lengths[idx]).detach().cpu().numpy()
        loss_np = loss.detach().cpu().numpy()

        # 1. targets whose teacher-forced argmax is all right: confirm by real greedy decoding
        cand = np.nonzero(acc >= 1.0)[0]
        if cand.size:
            rows = idx[torch.as_tensor(cand, device=device)]
            dec = greedy_decode(handle, prompts[rows], int(lengths[rows].max()), prefix_ids)  # (c, n)
            ok = ((dec == tgt[rows, : dec.shape[1]]) | ~mask[rows, : dec.shape[1]]).all(1).cpu().numpy()
            for c, good in zip(cand, ok):
                if good:
                    i = idx_np[c]
                    success[i], done[i] = True, True
        # 2. bookkeeping, divergence, patience and step limits
        bad = ~np.isfinite(loss_np)
        for j, i in enumerate(idx_np):
            if done[i]:
                final_loss[i], best_acc[i] = loss_np[j], max(best_acc[i], acc[j])
                continue
            if not bad[j]:
                final_loss[i] = loss_np[j]
                improved = (not np.isfinite(best_loss[i])) or loss_np[j] < best_loss[i] - 1e-4 * abs(best_loss[i]) or acc[j] > best_acc[i]
                best_acc[i] = max(best_acc[i], acc[j])
                best_loss[i] = min(best_loss[i], loss_np[j])
                since_best[i] = 0 if improved else since_best[i] + 1
            if steps[i] >= max_steps or since_best[i] >= patience:
                done[i] = True
        # 3. one Adam update for the rest (per-target bias correction: rows are independent runs)
        upd = np.nonzero(~done[idx_np])[0]
        if upd.size == 0:
            continue
        good = upd[~bad[upd]]
        if good.size:
            loss[torch.as_tensor(good, device=device)].sum().backward()
        grad = p.grad if p.grad is not None else torch.zeros_like(p)
        with torch.no_grad():
            rows = idx[torch.as_tensor(upd, device=device)]
            g = grad[torch.as_tensor(upd, device=device)]  # (u, m, d)
            adam_t[rows] += 1
            ea = exp_avg[rows].mul_(b1).add_(g, alpha=1 - b1)
            es = exp_avg_sq[rows].mul_(b2).addcmul_(g, g, value=1 - b2)
            bc1 = (1 - b1 ** adam_t[rows])[:, None, None]
            bc2 = (1 - b2 ** adam_t[rows])[:, None, None]
            new = prompts[rows] - lr * (ea / bc1) / ((es / bc2).sqrt() + 1e-8)
            exp_avg[rows], exp_avg_sq[rows], prompts[rows] = ea, es, new
            # divergence: non-finite loss/gradient/prompt, or a prompt 1000x its initial norm
            gfin = torch.isfinite(g).flatten(1).all(1).cpu().numpy()
            norm_bad = (~torch.isfinite(new).flatten(1).all(1) | (new.flatten(1).norm(dim=1) > 1e3 * init_norm[rows])).cpu().numpy()
        for u, i in enumerate(idx_np[upd]):
            steps[i] += 1
            if bad[upd[u]] or not gfin[u] or norm_bad[u]:
                if restarts[i] >= max_restarts:
                    diverged[i], done[i] = True, True
                    continue
                restarts[i] += 1
                fresh = _init_prompt(seeds[i] + 1_000_003 * int(restarts[i]), m, mean, std).to(device)
                prompts[i], exp_avg[i], exp_avg_sq[i], adam_t[i] = fresh, 0.0, 0.0, 0.0
                since_best[i], best_loss[i] = 0, np.inf
    return CramResult(success, steps, final_loss, best_acc, prompts.detach().float().cpu(), restarts, diverged,
                      np.asarray(seeds, dtype=np.int64))


# ---------------------------------------------------------------------------------------------
# n50: bracketing and bisection on n, then a sigmoid fit (paper Section 5, Fig 4)
# ---------------------------------------------------------------------------------------------


@dataclass
class N50Search:
    """Result of :func:`locate_n50` / :func:`find_n50`.

    Attributes:
        n50: the fitted 50 % length (tokens), NaN when the fit is degenerate (see ``fit.message``).
        fit: the :class:`~accessibility_lib.fitting.SigmoidFit` on every length evaluated.
        lengths: (L,) lengths evaluated, sorted.
        rates: (L,) success fraction at each length.
        bracket: (lo, hi): the largest length with rate ≥ ½ below the smallest with rate < ½.
        runs: optimisation runs actually performed (targets crammed, cached ones excluded).
        cached: runs found in the result store.
        trials: (L,) targets behind each rate.
    """

    n50: float
    fit: object
    lengths: np.ndarray
    rates: np.ndarray
    bracket: tuple[int, int]
    runs: int
    cached: int
    trials: np.ndarray | None = None


def locate_n50(evaluate, n_start: int, n_max: int, *, n_trials: int, n_probe: int | None = None,
               rel_tol: float = 0.1, n_around: int = 4, spread: float = 0.25, seed: int = 0) -> N50Search:
    """Find the 50 % point of a decreasing success curve with few optimisation runs.

    1. Bracket with ``n_probe`` targets a length: from ``n_start`` double n while the rate stays
       ≥ ½ (or halve it while < ½), capped at ``n_max`` and 1.
    2. Bisect the bracket [lo, hi] (still ``n_probe`` targets) until hi − lo ≤ max(1, rel_tol·lo).
    3. Evaluate ``n_around`` lengths spread over n50·(1 ± ``spread``) with all ``n_trials`` targets
       (the transition of the paper's curves is about ±15–30 % of n50 wide), then fit the logistic to
       every length seen, each weighted by its number of targets (binomial likelihood).

    The replication code instead sweeps a grid (steps of 100, then 10) with 20 targets a point;
    ``benchmarks/bench_cramming.py`` counts the runs of both on known curves.

    Args:
        evaluate: callable ``(n, count) -> (success fraction of targets 0..count-1, runs performed,
            runs cached)``; targets must be the same for a given (n, i) whatever ``count``.
        n_start: first length tried (tokens, ≥ 1).
        n_max: longest length allowed (the context limit).
        n_trials: targets a length in step 3 (the paper: 20).
        n_probe: targets a length in steps 1–2 (default: min(n_trials, max(5, n_trials // 4))).

    Returns:
        An :class:`N50Search`. If every length up to ``n_max`` succeeds (or even n = 1 fails), the
        fit is flagged degenerate and ``n50`` is NaN.
    """
    from .fitting import SigmoidFit, fit_sigmoid

    n_max = check_int("n_max", n_max, minimum=1)
    n_trials = check_int("n_trials", n_trials, minimum=1)
    n_probe = min(n_trials, max(5, n_trials // 4)) if n_probe is None else check_int("n_probe", n_probe, minimum=1, maximum=n_trials)
    n = min(check_int("n_start", n_start, minimum=1), n_max)
    seen: dict[int, tuple[float, int]] = {}  # n -> (rate, targets)
    runs = cached = 0

    def ev(k: int, count: int) -> float:
        nonlocal runs, cached
        if k not in seen or seen[k][1] < count:
            rate, r, c = evaluate(k, count)
            seen[k] = (float(rate), count)
            runs += r
            cached += c
        return seen[k][0]

    lo, hi = None, None
    if ev(n, n_probe) >= 0.5:
        lo = n
        while hi is None and lo < n_max:
            k = min(2 * lo, n_max)
            if ev(k, n_probe) >= 0.5:
                lo = k
            else:
                hi = k
    else:
        hi = n
        while lo is None and hi > 1:
            k = max(hi // 2, 1)
            if ev(k, n_probe) >= 0.5:
                lo = k
            else:
                hi = k
    if lo is not None and hi is not None:
        while hi - lo > max(1, int(rel_tol * lo)):
            mid = (lo + hi) // 2
            if ev(mid, n_probe) >= 0.5:
                lo = mid
            else:
                hi = mid
        centre = 0.5 * (lo + hi)
        for f in np.linspace(-spread, spread, n_around) if n_around > 1 else [0.0] * n_around:
            k = int(round(centre * (1 + f)))
            if 1 <= k <= n_max:
                ev(k, n_trials)
    lengths = np.array(sorted(seen), dtype=np.float64)
    rates = np.array([seen[int(k)][0] for k in lengths])
    trials = np.array([seen[int(k)][1] for k in lengths], dtype=np.float64)
    if lengths.size >= 2:
        fit = fit_sigmoid(lengths, rates, trials, seed=seed)
    else:  # a single length could be tried (n_max = 1, or n = 1 already fails): degenerate
        side = (">", float(lengths[0])) if rates[0] >= 0.5 else ("<", float(lengths[0]))
        fit = SigmoidFit(float("nan"), float("nan"), float("nan"), (float("nan"),) * 2, 0.95, False,
                         f"only n = {int(lengths[0])} could be tried: n50 {side[0]} {side[1]:g}", side,
                         "none", lengths, rates)
    return N50Search(fit.n50, fit, lengths, rates, (lo or 0, hi or n_max), runs, cached, trials)


def find_n50(
    handle,
    source,
    m: int,
    n_targets: int = 20,
    *,
    store=None,
    model_name: str = "model",
    source_name: str | None = None,
    n_start: int | None = None,
    n_max: int | None = None,
    n_probe: int | None = None,
    rel_tol: float = 0.1,
    n_around: int = 4,
    seed: int = 0,
    show_progress: bool = True,
    **cram_kwargs,
) -> N50Search:
    """Locate n50(m), the target length at which half the targets can be crammed into m vectors.

    Every (m, n, target) outcome is written to ``store`` (namespace ``"cramming"``) as soon as its
    batch finishes, keyed by model, source, m, n, target index, seed and every cramming setting, so
    a killed sweep resumes without redoing finished points.

    Args:
        handle: model handle (see :func:`cram`).
        source: callable ``source(n, i) -> n token ids`` for target i of length n (deterministic).
        m: prompt length (≥ 1).
        n_targets: targets per length (the paper: 20).
        store: a :class:`~accessibility_lib.results.ResultStore`, or None for no caching.
        model_name, source_name: labels in the store keys (``source_name`` defaults to
            ``source.name`` or the callable's name).
        n_start: first length tried (default 10·m); n_max: longest (default: context − m + 1).
        n_probe, rel_tol, n_around: see :func:`locate_n50` (n_probe targets a length while bracketing).
        seed: target i is crammed from seed + i.
        show_progress: show a progress bar over crammed targets.
        **cram_kwargs: passed to :func:`cram` (max_steps, lr, patience, ...).

    Returns:
        An :class:`N50Search`.

    Raises:
        ValueError: m < 1, n_targets < 1, or bad cramming settings.
    """
    from .progress import progress

    m = check_int("m", m, minimum=1)
    n_targets = check_int("n_targets", n_targets, minimum=1)
    if not callable(source):
        raise ValueError(f"source must be a callable (n, i) -> token ids, got {type(source).__name__}")
    if "lr" in cram_kwargs:
        check_positive_real("lr", cram_kwargs["lr"])
    ctx = context_length(handle)
    if n_max is None:
        n_max = (ctx - m + 1) if ctx else 4096
    n_start = 10 * m if n_start is None else n_start
    name = source_name or getattr(source, "name", None) or getattr(source, "__name__", "source")
    settings = {k: (list(v) if isinstance(v, tuple) else v) for k, v in sorted(cram_kwargs.items())}
    bar = progress(total=None, desc=f"cramming m={m} ({name})", disable=not show_progress) \
        if show_progress else None

    from .support import weights_fingerprint

    weights = weights_fingerprint(handle)  # a retrained model under the same name never reuses results

    def evaluate(n: int, count: int):
        keys = [{"model": model_name, "weights": weights, "dtype": str(_model_dtype(handle)), "source": name, "m": m, "n": n,
                 "target": i, "seed": seed + i, **settings} for i in range(count)]
        found = [store.get("cramming", k) if store is not None else None for k in keys]
        todo = [i for i, f in enumerate(found) if f is None]
        if todo:
            res = cram(handle, [list(source(n, i)) for i in todo], m, seed=[seed + i for i in todo], **cram_kwargs)
            for j, i in enumerate(todo):
                found[i] = res.record(j)
                if store is not None:
                    store.put("cramming", keys[i], found[i], arrays={"prompt": res.prompts[j].numpy()})
            if bar is not None:
                bar.update(len(todo))
                bar.set_postfix(n=n, rate=f"{np.mean([f['success'] for f in found]):.2f}")
        rate = float(np.mean([f["success"] for f in found]))
        return rate, len(todo), count - len(todo)

    try:
        return locate_n50(evaluate, n_start, n_max, n_trials=n_targets, n_probe=n_probe, rel_tol=rel_tol,
                          n_around=n_around, seed=seed)
    finally:
        if bar is not None:
            bar.close()


def target_source(handle, kind: str, seed: int = 0):
    """A deterministic target source ``(n, i) -> (n,) token ids`` for :func:`find_n50`.

    Args:
        handle: model handle with a ``tokenizer``.
        kind: ``"natural"`` (windows of held-out natural text, :class:`accessibility_lib.text.NaturalText`)
            or ``"random"`` (uniform non-special tokens, :func:`accessibility_lib.text.random_targets`).
        seed: seed of the text source (≥ 0).

    Returns:
        A callable with a ``name`` attribute (``kind``), for the result-store keys.

    Raises:
        ValueError: unknown ``kind`` or a handle without a tokenizer.
    """
    from . import text

    if kind not in ("natural", "random"):
        raise ValueError(f"kind must be 'natural' or 'random', got {kind!r}")
    if getattr(handle, "tokenizer", None) is None:
        raise ValueError("target_source needs a handle with a tokenizer")
    if kind == "natural":
        corpus = text.NaturalText(handle.tokenizer)

        def source(n: int, i: int):
            return corpus.target(n, seed, i).tolist()
    else:

        def source(n: int, i: int):
            return text.random_targets(handle.tokenizer, n, i + 1, seed, d_vocab=handle.d_vocab)[i].tolist()

    source.name = f"{kind}-s{seed}"
    return source
