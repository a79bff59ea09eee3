"""Write book/04_mean_field.ipynb (without outputs) from the cell texts below.

Run: .venv/bin/python scripts/make_mean_field_notebook.py
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HIDE = {"tags": ["hide-input"]}


def fig(caption: str, name: str) -> dict:
    return {"tags": ["hide-input"], "mystnb": {"figure": {"caption": caption, "name": name}}}


cells = []
md = lambda s, **kw: cells.append(new_markdown_cell(s.strip("\n"), **kw))  # noqa: E731
code = lambda s, meta=None: cells.append(new_code_cell(s.strip("\n"), metadata=meta or {}))  # noqa: E731

md(r"""
# Prompts of any length: the mean-field bound

The packing bound of the first chapter counts the prompts of m vectors that a model computing at
precision ε can tell apart, $(1 + 2r/\varepsilon)^{d m}$, and concludes that sequences longer than n* = C·m are
mostly out of reach. But that count grows without limit with m: a longer prompt can, in principle,
say more. Yet models trained to copy strings (Jelassi et al. {cite}`jelassi2024repeat`) fail past a
length that does *not* grow with the prompt. To explain that, {cite}`meyer2026accessible` (Section
4.3) need a bound that holds for prompts of **any** length — and for that they look at a prompt not as
a sequence but as a *cloud of points*, a probability measure.

This chapter states that bound (Thm 4.9 and Cor 4.10 of the paper), measures on real attention how
far its two structural premises hold, measures the Wasserstein precision it assumes, and compares it
with the finite-length bound.
""")

md(r"""
## Parameters

`preset` picks the sizes (`smoke`: seconds; `nano`: the default, two CPU cores; `paper`: Pythia-160M
and longer prompts). `model_name` is the GPT-NeoX model whose weights the position-free variant
reuses (`"nano"`, the model this book ships; `"tiny"` is a random two-layer GPT-NeoX that needs no
file); `real_models` are models of other architectures measured as shipped (skipped if not fetched);
`ms` the prompt lengths, `n_prompts` random prompts per length, `n_pairs` prompt pairs of length
`pair_m` for the Wasserstein measurement, `q` the Wasserstein order, `real_ms` and `real_pairs` the
smaller sizes used for the real models. `None` takes the preset's value.
""")

code(r"""
preset = "nano"
model_name = None  # "nano", "tiny", or any GPT-NeoX name/path load_model accepts
real_models = None  # e.g. ["smollm2-135m"]
ms = None  # prompt lengths (at least 3) of the structural sweep; lists go through papermill's -y option
n_prompts = None  # random prompts per length
n_pairs = None  # prompt pairs for the W_q measurement
pair_m = None  # their length
q = None  # Wasserstein order
real_ms = None  # prompt lengths for the real models (2 prompts each)
real_pairs = None  # prompt pairs for the real models
""", {"tags": ["parameters"]})

code(r"""
import math
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown, display

from accessibility_lib import bounds, meanfield, plotting, positionfree, presets
from accessibility_lib.widgets import MeanFieldExplorer

params = presets.resolve("mean_field", preset, model_name=model_name, real_models=real_models, ms=ms,
                         n_prompts=n_prompts, n_pairs=n_pairs, pair_m=pair_m, q=q, real_ms=real_ms,
                         real_pairs=real_pairs)
plotting.use_style()
t_start, cpu_start = time.perf_counter(), time.process_time()
model, model_note = positionfree.load_hf(params["model_name"])
model_label = params["model_name"]
if model is None:  # e.g. a hub model on an offline machine: fall back to the shipped nano (or the random tiny)
    model, fallback_note = positionfree.load_hf("nano", fallback_tiny=True)
    model_note, model_label = f"{model_note}; using {fallback_note}", fallback_note.split(":")[0]
embedding = model.get_input_embeddings().weight.detach()  # (d_vocab, d_model): hard prompts are its rows
d_model, n_layers = model.config.hidden_size, model.config.num_hidden_layers
display(Markdown(f"**Preset** `{preset}`. **Model:** {model_note}."))
""", HIDE)

md(r"""
## Why a bound independent of m needs a new idea

In log space the finite-length bound is ln #accessible(m) ≤ d·m·ln(1 + 2r/ε): it grows linearly in m,
and no argument about *sets of sequences of vectors* can stop that, because $B_{d\times m}(0, r)$ really does
contain more and more well-separated points as m grows. A bound that holds for every m must use
something the architecture does *not* distinguish, so that long prompts collapse onto few classes.

Attention provides it. Write the prompt as $X = (X_{:,1}, \dots, X_{:,m}) \in \mathbb{R}^{d\times m}$ and its **empirical
measure**

```{math}
:label: eq-mf-empirical-measure
M(X) = \frac{1}{m}\sum_{i=1}^{m} \delta_{X_{:,i}} \quad\text{on } B_d(0, r).
```

One head of attention *without positional encodings and without a causal mask* sends the token at
position i to

```{math}
:label: eq-mf-attention-measure
A(X)_{:,i} = \frac{\sum_j e^{\langle Q X_{:,i},\, K X_{:,j}\rangle} V X_{:,j}}{\sum_j e^{\langle Q X_{:,i},\, K X_{:,j}\rangle}}
= \frac{\int e^{\langle Q X_{:,i},\, K y\rangle}\, V y \; \mathrm{d}M(X)(y)}{\int e^{\langle Q X_{:,i},\, K y\rangle} \; \mathrm{d}M(X)(y)},
```

which depends on the other tokens only through M(X) (Sander et al. {cite}`sander2022sinkformers`).
Layer norms and MLPs act token by token. Two structural facts follow for every layer L:

1. **permutation equivariance**: L(Xσ) = L(X)σ for every permutation σ of the positions;
2. **duplication invariance**: $L([X, X])_{:,i} = L(X)_{:,i}$ — repeating the whole prompt leaves every
   token's output unchanged, since M([X, X]) = M(X).

So the model is a map on probability measures, and prompts of all lengths live in one space,
𝒫(B_d(0, r)), whatever m is.
""")

md(r"""
## The mean-field bound

Closeness of measures is measured by the Wasserstein distance: for q ≥ 1,
$W_q(\mu, \nu) = \bigl(\min_\pi \int \lVert x - y\rVert^q \,\mathrm{d}\pi(x, y)\bigr)^{1/q}$ over couplings π of μ and ν. It compares prompts of
different lengths, and a prompt, its permutations and its duplications are all at distance 0.

````{prf:assumption} Wasserstein precision (Assumption 4.8)
:label: asm-mf-wasserstein-precision

The model cannot tell apart two prompts whose empirical measures are closer than ε in W_q:
if W_q(M(X), M(Y)) < ε then τ(X) = τ(Y).
````

````{prf:theorem} Mean-field bound (Thm 4.9)
:label: thm-mf-count

Under {prf:ref}`asm-mf-wasserstein-precision`, the number of sequences accessible with prompts of
**any** length in B_d(0, r) satisfies

```{math}
:label: eq-mf-count
\#\mathrm{accessible} \;\le\; \Bigl(e + e\,\frac{(2r)^q}{\varepsilon^q}\Bigr)^{(1 + 2r/\varepsilon)^d}.
```
````

````{prf:proof}
(Sketch.) Cover $B_d(0, r)$ by $N \le (1 + 2r/\varepsilon)^d$ cells of diameter below ε (the centres of a maximal
ε-packing). Move the mass of each cell of M(X) to its centre: every point moves by less than ε, so
the W_q distance moved is below ε, and by {prf:ref}`asm-mf-wasserstein-precision` the model cannot
see the difference. What remains is a probability vector (w_1, …, w_N) on the centres. Quantise its
weights as well: changing weights by a total of δ moves the measure by at most $(2r)\,\delta^{1/q}$ in $W_q$, so
a grid of step about (ε/2r)^q on the simplex suffices. Counting the grid points of the simplex in N
coordinates (a stars-and-bars count, bounded with (a+b choose b) ≤ (e(a+b)/b)^b) gives
(e + e(2r)^q/ε^q)^N classes of indistinguishable prompts, each producing at most one greedy sequence.
````

Taking logarithms twice, as `bounds.mean_field_loglog_count` does,

```{math}
:label: eq-mf-loglog
\ln\ln \#\mathrm{accessible} \le d\,\ln\Bigl(1 + \frac{2r}{\varepsilon}\Bigr) + \ln\Bigl(1 + \ln\bigl(1 + (2r/\varepsilon)^q\bigr)\Bigr),
```

a number that is finite and exact in floating point for every width (d = 10^5 included), even though the
count itself, $e^{e^{\cdots}}$, is not.

````{prf:corollary} Prompt-independent accessible fraction (Cor 4.10)
:label: cor-mf-fraction

Among the |V|^n sequences of length n, the fraction accessible with prompts of any length is at most
#accessible / |V|^n with #accessible from {eq}`eq-mf-count`: it is below 1 as soon as
n > n* = ln #accessible / ln |V|, and falls like $|V|^{-n}$ beyond, **however long the prompt**.
````

The prediction for copying (chapter 6) is qualitative: a step in accuracy at a length that does not
move when the allowed prompt grows.
""")

md(r"""
## The two structural facts, measured

Real decoders break both premises: a causal mask makes position i see only $X_{:,1..i}$ (a different
measure at each position) and rotary embeddings make scores depend on i − j. To see how much, the
library re-runs the trained GPT-NeoX with its own weights and two switches,
`positionfree.neox_forward(model, X, causal=..., rotary=...)` — a functional re-implementation of the
GPT-NeoX block (same layer norms, fused query-key-value, parallel residual, final norm, unembedding)
rather than a patched Hugging Face module, so that the switches are explicit and the attention is the
plain fp32 softmax. With both switches on it *is* the shipped model:
""")

code(r"""
check = torch.randn(2, 9, d_model, generator=torch.Generator().manual_seed(0))
with torch.no_grad():
    hf_logits = model(inputs_embeds=check).logits
gap = (positionfree.neox_forward(model, check, causal=True, rotary=True).logits - hf_logits).abs().max().item()
print(f"max |logit difference| between neox_forward(causal, rotary) and the Hugging Face model: {gap:.2e}")
""")

md(r"""
Three cases: **no mask, no positions** (the mean-field model); **causal, no positions**; and the
**shipped** model (causal + rotary). For random prompts of m token embeddings we measure, for every
layer l, the relative deviations ‖L_l(Xσ) − L_l(X)σ‖ / ‖L_l(X)‖ (σ a random permutation fixing the
last position) and ‖L_l([X, X]) − [L_l(X), L_l(X)]‖ / ‖·‖ (all 2m positions), and the total
variation between next-token distributions at the last position.
""")

code(r"""
cases = list(positionfree.CASES)
sweeps = {}
for case in cases:
    forward = positionfree.make_forward(model, case)
    sweeps[case] = meanfield.structural_sweep(forward, embedding, params["ms"], params["n_prompts"], seed=0, desc=case)
""", HIDE)

code(r"""
FLOOR = 1e-12  # exact zeros drawn at the floor of the log axis
fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.8), sharey=True)
for c, case in enumerate(cases):
    s = sweeps[case]
    for key, style, label in [("perm", "-", "permutation"), ("dup", "--", "duplication")]:
        axes[0].plot(s["ms"], np.maximum(np.median(s[f"{key}_layers"][:, :, -1], 1), FLOOR), style, marker="osD"[c],
                     color=plotting.PALETTE[c], label=f"{case}: {label}", alpha=0.85)
        axes[1].plot(s["ms"], np.maximum(np.median(s[f"{key}_tv"], 1), FLOOR), style, marker="osD"[c],
                     color=plotting.PALETTE[c], alpha=0.85)
for ax, title in zip(axes, ["last layer: relative deviation", "last position: TV of next-token law"]):
    ax.set(yscale="log", xlabel="prompt length m (tokens)", title=title)
    ax.set_xscale("log", base=2)
    ax.set_xticks(params["ms"], [str(m) for m in params["ms"]])
    ax.minorticks_off()
axes[0].set_ylabel("median over prompts")
fig.legend(*axes[0].get_legend_handles_labels(), loc="upper center", ncol=3, fontsize=7, bbox_to_anchor=(0.5, 0.0))
plt.show()
""", fig("Deviation from permutation equivariance (solid) and duplication invariance (dashed) against the prompt length m, "
         "for the three cases. The position-free model sits at floating-point error; a causal mask alone or with rotary "
         "embeddings breaks both facts.", "fig-mf-structural-vs-m"))

code(r"""
fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.6), sharey=True)
layers = np.arange(1, n_layers + 1)
for c, case in enumerate(cases):
    s = sweeps[case]
    for ax, key in zip(axes, ["perm", "dup"]):
        ax.plot(layers, np.maximum(np.median(s[f"{key}_layers"][-1], 0), FLOOR), marker="o", color=plotting.PALETTE[c], label=case)
for ax, title in zip(axes, ["permutation equivariance", "duplication invariance"]):
    ax.set(yscale="log", xlabel="layer", title=f"{title}, m = {params['ms'][-1]}")
    ax.set_xticks(layers)
axes[0].set_ylabel("relative deviation (median)")
axes[0].legend(fontsize=8)
plt.show()
""", fig("Relative deviation per layer at the longest prompt of the sweep.", "fig-mf-structural-per-layer"))

code(r"""
rows = ["| case | permutation, last layer | permutation, TV | duplication, last layer | duplication, TV |", "|---|---|---|---|---|"]
for case in cases:
    s = sweeps[case]
    med = lambda a: f"{np.median(a[-1]):.1e}"  # at the longest m
    rows.append(f"| {case} | {med(s['perm_layers'][:, :, -1])} | {med(s['perm_tv'])} | {med(s['dup_layers'][:, :, -1])} | {med(s['dup_tv'])} |")
display(Markdown(f"Medians over {params['n_prompts']} random prompts at m = {params['ms'][-1]} ({model_label}):\n\n" + "\n".join(rows)))
""", HIDE)

md(r"""
The causal model without positions shows where the damage comes from. Its first copy of [X, X]
computes exactly what X computes (position i sees the same prefix), so all of its duplication
deviation sits in the second copy, whose positions see a *mixture* of a full copy and a prefix — a
different measure. Its last position, though, sees the whole of [X, X], whose measure is M(X): at the
first layer its output is exact, and the deviation that reaches the next-token distribution is what the
other positions' errors carry upward through deeper layers. Rotary embeddings add a dependence on
relative positions on top.

Prompts of other architectures, measured as shipped (a Llama-architecture model, when fetched):
""")

code(r"""
real_sweeps = {}
for name in params["real_models"]:
    real, note = positionfree.load_hf(name)
    if real is None:
        print(note + " — skipped (fetch it with `python -m accessibility_lib.fetch " + name + "`)")
        continue
    forward = positionfree.make_forward(real, "shipped (causal + rotary)")
    emb = real.get_input_embeddings().weight.detach()
    real_sweeps[name] = s = meanfield.structural_sweep(forward, emb, params["real_ms"], 2, desc=name)
    print(f"{note}\n  m = {s['ms'].tolist()}: median permutation TV {np.round(np.median(s['perm_tv'], 1), 3).tolist()}, "
          f"duplication TV {np.round(np.median(s['dup_tv'], 1), 3).tolist()}; "
          f"last-layer duplication deviation {np.round(np.median(s['dup_layers'][:, :, -1], 1), 3).tolist()}")
if not params["real_models"]:
    print("no real model in this preset")
""")

md(r"""
**What this means for real decoders.** Thm 4.9 is a theorem about models that *are* maps on measures.
The decoders the paper tests are not: the measured deviations are of order one in the hidden states
and change the next-token distribution by a visible amount. The theorem therefore does not apply to
them literally. What survives is its mechanism: a causal model without positions is still
equivariant inside each prefix, and the copying experiments of chapter 6 test whether its
*prediction* — a failure length that does not grow with the prompt — holds anyway.

## Wasserstein precision, measured

{prf:ref}`asm-mf-wasserstein-precision` says that close measures give identical outputs. A model with
real-valued outputs is at best *Lipschitz* in W_q: TV(τ(X), τ(Y)) ≤ L·W_q(M(X), M(Y)). We measure
the ratio on pairs of prompts that share their last token (the position read out), where Y is X with
Gaussian noise on its other vectors, some tokens replaced, some dropped (a shorter prompt), or the
others permuted (W_q = 0).
""")

code(r"""
pair_sets = {}
for case in [cases[0], cases[2]]:
    pair_sets[case] = meanfield.lipschitz_pairs(positionfree.make_forward(model, case), embedding, params["pair_m"],
                                                params["n_pairs"], q=params["q"], seed=1, desc=case)
for name in params["real_models"]:
    real, _ = positionfree.load_hf(name)
    if real is not None:
        pair_sets[name] = meanfield.lipschitz_pairs(positionfree.make_forward(real, "shipped (causal + rotary)"),
                                                    real.get_input_embeddings().weight.detach(), params["pair_m"],
                                                    params["real_pairs"], q=params["q"], seed=1, desc=name)
summaries = {k: meanfield.lipschitz_summary(v) for k, v in pair_sets.items()}
rows = ["| model | pairs | L median | L quartiles | L 90% | L max | TV at W = 0 | smallest W flipping the argmax |",
        "|---|---|---|---|---|---|---|---|"]
for k, s in summaries.items():
    rows.append(f"| {k} | {s['n']} | {s['median']:.3g} | {s['q25']:.3g} – {s['q75']:.3g} | {s['q90']:.3g} | {s['max']:.3g} "
                f"| {s['tv_at_w0']:.1e} | {s['w_flip_min']:.3g} |")
display(Markdown(f"Empirical Lipschitz constants L = TV / W_{params['q']:g} (W in embedding units):\n\n" + "\n".join(rows)))
""", HIDE)

code(r"""
markers = {"noise": "o", "replace": "s", "drop": "^", "permute": "x"}
fig, ax = plt.subplots(figsize=(6.4, 4.0))
for c, (k, p) in enumerate(pair_sets.items()):
    for kind, mk in markers.items():
        sel = (p["kind"] == kind) & (p["w"] > 0) & (p["tv"] > 0)
        ax.scatter(p["w"][sel], p["tv"][sel], marker=mk, s=16, color=plotting.PALETTE[c], alpha=0.7,
                   label=f"{k}" if kind == "noise" else None)
ax.set(xscale="log", yscale="log", xlabel=f"W_{params['q']:g}(M(X), M(Y))  (embedding units)",
       ylabel="TV of the next-token laws")
ax.legend(fontsize=8, title="circle: noise, square: replace, triangle: drop", title_fontsize=7)
plt.show()
""", fig("Wasserstein distance between two prompts' measures against the change of the next-token distribution. "
         "Permuted pairs (W = 0) cannot be drawn on a log axis; their TV is in the table above.", "fig-mf-lipschitz"))

md(r"""
For the position-free model the permuted pairs give TV at floating-point level: it *is* a function
of the measure (and of the token read out). The shipped model changes its output at W = 0, so no
Lipschitz constant, and no Wasserstein precision ε, exists for it in the sense of
{prf:ref}`asm-mf-wasserstein-precision`. Where W > 0 the ratio is of the same order for both — the
spread of several-fold across pairs is the honest size of "L". The smallest W that flipped the argmax
is an empirical stand-in for ε at this model's typical margins; it is far above the fp32 resolution.

## The bound against d and 2r/ε

The finite-length bound of Thm 4.5 has ln ln = ln m + ln(d·ln(1 + 2r/ε)), growing with ln m; the
mean-field bound {eq}`eq-mf-loglog` does not depend on m but is *exponential* in d. They cross at

```{math}
:label: eq-mf-crossover
\ln m^* = \ln\ln \#\mathrm{accessible}_{4.9} - \ln\bigl(d \ln(1 + 2r/\varepsilon)\bigr),
```

(`meanfield.crossover_log_m`): for prompts shorter than m* the finite-length bound is tighter.
""")

code(r"""
ds = np.unique(np.logspace(0, 5, 60).astype(int))
ratios = [4.0, 4096.0, 2.0**17]
fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.8))
for c, ratio in enumerate(ratios):
    axes[0].plot(ds, [bounds.mean_field_loglog_count(int(d), ratio / 2, 1.0, params["q"]) for d in ds], color=plotting.PALETTE[c],
                 label=f"2r/ε = {ratio:g}")
axes[0].set(xscale="log", yscale="log", xlabel="d", ylabel="ln ln #accessible (Thm 4.9)", title="mean-field bound")
axes[0].legend()
m_grid = np.unique(np.logspace(0, 12, 80).astype(np.int64))
for c, d in enumerate([1, 2, 4]):
    fm = [meanfield.finite_m_loglog(d, 2.0, 1.0, int(m)) for m in m_grid]  # 2r/ε = 4
    mf = bounds.mean_field_loglog_count(d, 2.0, 1.0, params["q"])
    axes[1].plot(m_grid, fm, color=plotting.PALETTE[c], label=f"d = {d}: Thm 4.5")
    axes[1].axhline(mf, color=plotting.PALETTE[c], ls="--", label=f"d = {d}: Thm 4.9")
    axes[1].axvline(math.exp(meanfield.crossover_log_m(d, 2.0, 1.0, params["q"])), color=plotting.PALETTE[c], ls=":", lw=1)
axes[1].set(xscale="log", xlabel="prompt length m", ylabel="ln ln #accessible", title="2r/ε = 4: which bound is tighter")
axes[1].legend(fontsize=7)
plt.show()
""", fig("Left: ln ln of the mean-field count against the width d, for three precisions (the middle one is the "
         "replication code's 2r/ε = 4096). Right: at toy widths, the finite-length bound (solid) grows with m and "
         "crosses the m-independent mean-field bound (dashed) at m* (dotted).", "fig-mf-bounds"))

code(r"""
rows = ["| d | 2r/ε | ln ln #accessible (Thm 4.9) | ln m* (crossover) | log10 n* for \\|V\\| = 30 |", "|---|---|---|---|---|"]
for d in sorted({1, 4, 64, d_model, 768, 2048}):
    for ratio in (4.0, 4096.0):
        rows.append(f"| {d} | {ratio:g} | {bounds.mean_field_loglog_count(d, ratio / 2, 1.0, params['q']):.4g} "
                    f"| {meanfield.crossover_log_m(d, ratio / 2, 1.0, params['q']):.4g} "
                    f"| {meanfield.mean_field_log10_threshold(d, ratio / 2, 1.0, 30, params['q']):.4g} |")
display(Markdown(f"d = {d_model} is the width of the model loaded above.\n\n" + "\n".join(rows)))
""", HIDE)

md(r"""
At any realistic width the crossover m* is itself a double exponential: for every prompt a computer
can hold, the finite-length bound is the tighter one, and the mean-field bound matters only as a
statement that *some* prompt-independent cap exists.

## The accessible fraction for a copying alphabet

Chapter 6 trains models to copy strings over an alphabet of |V| = 30 symbols. By
{prf:ref}`cor-mf-fraction` the fraction of length-n strings that any prompt can produce is at most
exp(min(0, ln #accessible − n·ln 30)), a step at n* followed by a fall of ln 30 ≈ 3.4 nats per symbol.
""")

code(r"""
fig, ax = plt.subplots(figsize=(6.4, 3.6))
n_grid = np.arange(0, 401, 2)
for c, (d, ratio) in enumerate([(1, 4.0), (2, 4.0), (3, 4.0), (2, 8.0)]):
    lf = [bounds.mean_field_log_accessible_fraction(d, ratio / 2, 1.0, 30, int(n), params["q"]) for n in n_grid]
    ax.plot(n_grid, np.array(lf) / math.log(10), color=plotting.PALETTE[c], label=f"d = {d}, 2r/ε = {ratio:g}")
ax.set(xlabel="string length n (symbols)", ylabel="log10 accessible fraction (bound)", ylim=(-300, 10))
ax.legend()
plt.show()
""", fig("The Cor 4.10 bound on the accessible fraction of strings over |V| = 30 symbols, for toy widths where the "
         "threshold n* is small enough to draw. It is the same for every prompt length.", "fig-mf-fraction"))

code(r"""
t = meanfield.mean_field_log10_threshold(d_model, 2048.0, 1.0, 30, params["q"])
display(Markdown(f"For the loaded model (d = {d_model}) at 2r/ε = 4096 the threshold is n* ≈ 10^({t:.4g}) symbols: "
                 "the bound predicts the *shape* of the copying curve (a prompt-independent step), not where the step is."))
""", HIDE)

md(r"""
## Explorer

The sliders recompute {eq}`eq-mf-loglog`, the threshold n* and the fraction at length n in the
browser (no kernel needed). Start from a toy width and raise d to see n* leave the plot.
""")

code(r"""
MeanFieldExplorer(d=4, r=1.0, eps=0.25, vocab_size=30, q=1.0, n=100, ranges={"d": (1, 64)})
""")

md(r"""
## What it means

* Attention without positions and mask is a map on measures: the permutation and duplication
  deviations sit at floating-point level (≈ 1e-7 relative in fp32) at every layer and every m.
* A causal mask alone breaks both facts (the first copy of [X, X] is exact, the rest is not);
  rotary embeddings keep them broken. The measured next-token TV is far from zero, so the paper's
  models are not in the theorem's class; Thm 4.9 is a statement about an idealisation.
* The Wasserstein "precision" of a real model is a Lipschitz constant with a several-fold spread, and
  is infinite for the shipped model at W = 0 (permutations).
* The mean-field count is finite for all m, but doubly exponential in d; it beats the finite-length
  bound only past a prompt length m* that no real prompt reaches. Its testable content is
  qualitative: a copying failure length that does not move with the prompt — chapter 6.
""")

code(r"""
print(f"chapter computed in {time.perf_counter() - t_start:.0f} s wall, {time.process_time() - cpu_start:.0f} s CPU "
      f"({torch.get_num_threads()} torch threads; preset {preset})")
""", HIDE)

nb = new_notebook(cells=cells, metadata={
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
})
out = Path(__file__).resolve().parents[1] / "book" / "04_mean_field.ipynb"
nbformat.write(nb, out)
print(f"wrote {out}")
