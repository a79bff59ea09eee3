"""Write book/03_cramming.ipynb (chapter 3, cramming slopes: Cor 4.6 tested), without outputs.

Usage: ``.venv/bin/python scripts/make_cramming_notebook.py``. Edit the cells here, not the notebook.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

OUT = Path(__file__).resolve().parent.parent / "book" / "03_cramming.ipynb"
CELLS = []
HIDE = {"tags": ["hide-input"]}


def md(text: str) -> None:
    CELLS.append(new_markdown_cell(text.strip("\n")))


def code(text: str, metadata: dict | None = None) -> None:
    cell = new_code_cell(text.strip("\n"))
    if metadata:
        cell.metadata.update(metadata)
    CELLS.append(cell)


def fig(caption: str, name: str) -> dict:
    return {"tags": ["hide-input"], "mystnb": {"figure": {"caption": caption, "name": name}}}


md(r"""
# Cramming: how many tokens fit in a soft prompt

Corollary 4.6 of {cite}`meyer2026accessible` is a counting statement: a transformer that cannot tell
apart inputs closer than ε can steer its greedy output into at most $(1+2r/\varepsilon)^{dm}$ distinct
sequences from prompts of m vectors, while there are $|V|^n$ sequences of length n. Past
$n^\ast = C\,m$ tokens some sequences are out of reach, and the fraction within reach decays like
$|V|^{-n}$. The statement is about *all* prompts, so it can be tested only from the other side: search
as hard as possible for a prompt that makes the model produce a given target, and see where the search
starts to fail. That search is **cramming** {cite}`kuratov2025cramming`: freeze the model, optimise only
the m input vectors.

This chapter runs the experiment with our own batched implementation on the book's `nano` model,
re-analyses the success curves the paper published, and checks one real model.
""")

md(r"""
```{prf:corollary} Linear length threshold (Cor 4.6)
:label: cor-cramming-threshold

Let τ map prompts $X \in B_{d\times m}(0, r)$ to next-token distributions over a vocabulary V and be
constant on every cube of an ε-grid (Assumption 4.3). Then inaccessible sequences of length n exist
as soon as

$$n > C\,m, \qquad C = \frac{d\,\ln(1 + 2r/\varepsilon)}{\ln |V|},$$

and the fraction of accessible length-n sequences is at most $(1+2r/\varepsilon)^{dm}/|V|^n$.
```

```{prf:proof}
The prompt ball $B_{d\times m}(0,r)$ has packing number at most $(1+2r/\varepsilon)^{dm}$ at scale ε
(a volume argument), and τ takes at most one value per packing cell (Thm 4.5), so at most that many
greedy continuations exist. There are $|V|^n$ sequences of length n; taking logarithms,
$dm\ln(1+2r/\varepsilon) < n\ln|V|$ exactly when $n > Cm$.
```

The corollary predicts the *form* of the experiment's result — the longest crammable target grows
linearly in m — and an upper bound C on its slope. It says nothing about how close real optimisation
gets to the bound; that ratio is what Table 1 of the paper reports.
""")

md(r"""
## The experiment

For a target $t = (t_1,\dots,t_n)$ and a soft prompt $Y\in\mathbb{R}^{m\times d}$ the loss is the
teacher-forced cross-entropy

```{math}
:label: eq-cramming-loss
L(Y; t) = -\frac1n\sum_{i=1}^{n}\log p\big(t_i \mid [Y, e(t_1), \dots, e(t_{i-1})]\big),
```

where $e$ is the model's input embedding (Gemma's $\sqrt d$ scaling included). The first target token is
predicted from the prompt alone. A target counts as **crammed** only when real greedy decoding from Y
(token by token, with a key–value cache, as `generate` does) reproduces all n tokens. For each m the
success rate over the targets falls with n like a logistic curve; its 50 % point is $n_{50}(m)$, and
the measured slope $C_{\text{exp}}$ of $n_{50}(m)$ against m is compared with C.

What `accessibility_lib.cramming` does differently from the replication code (which crams one target
at a time, reloads the model twice a run, runs fp16 autocast without a gradient scaler — Llama and
Gemma then fail even at n = 10 —, sweeps n on a fixed grid, and fits sigmoids without intervals):

- all targets of a length are optimised **in one batch**, each stopping as soon as it is crammed
  (Adam is applied per target, so the batch equals separate runs);
- the model runs in fp32 or bf16 with an fp32 copy of the prompts; NaN/inf or an exploding prompt
  restarts that target from a fresh seed, and the restarts are reported;
- success is **verified by greedy decoding**, not only by teacher-forced accuracy;
- $n_{50}$ is **located by bracketing and bisection** with a few probe targets, then a handful of
  lengths around it get all targets; the logistic is fitted by binomial maximum likelihood with a
  bootstrap interval, and curves without a 50 % crossing are flagged, not extrapolated;
- every (m, n, target) outcome goes to the result store, so a killed sweep resumes.
""")

md(r"""
## Parameters

`model_name` is any name `accessibility_lib.models.load_model` accepts. `ms` are the prompt lengths,
`n_targets` the targets per length (the paper: 20), `kinds` the target sources (`natural`: windows of
held-out text; `random`: uniform non-special tokens). `max_steps`, `patience` and `lr` are the
optimiser's budget (the paper's code: 3000 steps, patience 500, lr 1e−2, betas (0.9, 0.9)).
`eps_convention` names the ε convention of the bound (see `accessibility_lib.precision`);
`n_embed_prompts` random prompts of `embed_length` tokens give the radius r of the embeddings.
""")

code(
    """
preset = "nano"          # "smoke" (seconds), "nano" (default, 2 CPU cores) or "paper" (GPU, the paper's model)
model_name = None        # "nano", "smollm2-135m", "EleutherAI/pythia-160m", ...
kinds = None             # ["natural", "random"]
ms = None                # prompt lengths m
n_targets = None         # targets per length
max_steps = None         # optimiser steps per target at most
patience = None          # steps without improvement before a target is given up
lr = None                # Adam learning rate
dtype = None             # "float32" or "bfloat16"
device = None            # "cpu" or "cuda"
eps_convention = None    # a name in accessibility_lib.precision.CONVENTIONS
n_embed_prompts = None   # random prompts whose last-layer embeddings give r
embed_length = None      # their length in tokens
seed = None
""",
    {"tags": ["parameters"]},
)

code(
    r"""
import json
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown, display

from accessibility_lib import bounds, geometry, plotting, precision, presets
from accessibility_lib.cramming import find_n50, target_source
from accessibility_lib.embeddings import sample_embeddings
from accessibility_lib.fitting import fit_sigmoid, fit_slope, logistic
from accessibility_lib.models import load_model
from accessibility_lib.results import default_store

params = presets.resolve(
    "cramming", preset, model_name=model_name, kinds=kinds, ms=ms, n_targets=n_targets, max_steps=max_steps,
    patience=patience, lr=lr, dtype=dtype, device=device, eps_convention=eps_convention,
    n_embed_prompts=n_embed_prompts, embed_length=embed_length, seed=seed,
)
plotting.use_style()
DATA = Path("data") if Path("data/cramming_curves.json").exists() else Path("book/data")  # run from book/ or root
if params["device"] == "cpu":
    torch.set_num_threads(1)  # small models on a shared machine: one thread is fastest
t_start = time.perf_counter()
handle = load_model(params["model_name"], device=params["device"], dtype=getattr(torch, params["dtype"]))
store = default_store()
print(f"model {params['model_name']}: d = {handle.d_model}, |V| = {handle.d_vocab}, context {handle.n_ctx}; "
      f"m = {params['ms']}, {params['n_targets']} targets a length, at most {params['max_steps']} steps, "
      f"patience {params['patience']}, lr {params['lr']}, {params['dtype']} on {params['device']}")


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return Markdown("\n".join(lines))
""",
    HIDE,
)

md(r"""
## Success against length

For each source and each m, `find_n50` brackets the 50 % point (doubling n from 10·m, a few probe
targets a length), bisects, then crams all targets at a few lengths around it. The points below are
every length it tried; the curves are the binomial maximum-likelihood logistic fits.
""")

code(
    r"""
runs = {}
for kind in params["kinds"]:
    source = target_source(handle, kind, seed=params["seed"])
    for m in params["ms"]:
        runs[kind, m] = find_n50(
            handle, source, m, params["n_targets"], store=store, model_name=params["model_name"],
            seed=params["seed"], max_steps=params["max_steps"], patience=params["patience"], lr=params["lr"],
        )
rows = []
for (kind, m), r in runs.items():
    f = r.fit
    n50 = f"{f.n50:.1f} [{f.ci[0]:.1f}, {f.ci[1]:.1f}]" if f.ok else f.message
    rows.append([kind, m, n50, f"{f.r2:.2f}" if f.ok else "–", len(r.lengths), r.runs + r.cached])
display(md_table(["targets", "m", "n50 [95 % CI] (tokens)", "R² of the sigmoid", "lengths tried", "cramming runs"], rows))
""",
    HIDE,
)

code(
    r"""
fig_, axes = plt.subplots(1, len(params["kinds"]), figsize=(5.2 * len(params["kinds"]), 3.6), squeeze=False)
colors = plotting.token_colors(len(params["ms"]))
for ax, kind in zip(axes[0], params["kinds"]):
    for c, m in zip(colors, params["ms"]):
        r = runs[kind, m]
        ax.scatter(r.lengths, r.rates, s=12 + 2 * r.trials, color=c, alpha=0.8, label=f"m = {m}")
        if r.fit.ok:
            grid = np.linspace(max(1, r.lengths.min() * 0.8), r.lengths.max() * 1.1, 200)
            ax.plot(grid, logistic(grid, r.fit.n50, r.fit.steepness), color=c, lw=1.5)
    ax.set_xscale("log")
    ax.set_xlabel("target length n (tokens)")
    ax.set_ylabel("fraction crammed")
    ax.set_title(f"{kind} targets")
    ax.legend(fontsize=8)
plt.tight_layout()
plt.show()
""",
    fig("Success rate against target length for each prompt length m (points: lengths the search tried, "
        "size ∝ targets; curves: logistic fits).", "fig-cramming-success"),
)

md(r"""
## n50 grows linearly in m

Corollary 4.6 predicts $n_{50}(m) \le C\,m$; the experiment asks whether the measured $n_{50}$ is linear
in m and what its slope $C_{\text{exp}}$ is. The line is an ordinary least-squares fit with intercept;
the slope's interval is the Student-t interval (undefined with two points).
""")

code(
    r"""
slopes = {}
fig_, ax = plt.subplots(figsize=(5.6, 3.8))
for c, kind in zip([plotting.PALETTE[0], plotting.PALETTE[1]], params["kinds"]):
    pts = [(m, runs[kind, m].fit) for m in params["ms"] if runs[kind, m].fit.ok]
    if not pts:
        continue
    mm = np.array([m for m, _ in pts], dtype=float)
    n50 = np.array([f.n50 for _, f in pts])
    err = np.array([[f.n50 - f.ci[0], f.ci[1] - f.n50] if np.isfinite(f.ci[0]) else [0, 0] for _, f in pts]).T
    ax.errorbar(mm, n50, yerr=err, fmt="o", color=c, capsize=3, label=f"{kind}")
    if len(set(mm)) >= 2:
        s = fit_slope(mm, n50)
        slopes[kind] = s
        grid = np.linspace(0, mm.max() * 1.05, 50)
        ax.plot(grid, s.predict(grid), color=c, lw=1, label=f"{kind}: C_exp = {s.slope:.2f}, R² = {s.r2:.3f}")
ax.set_xlabel("prompt length m (vectors)")
ax.set_ylabel("n50 (tokens)")
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()
""",
    fig("n50 against m with 95 % bootstrap intervals and the fitted lines.", "fig-cramming-n50"),
)

code(
    r"""
rows = [[k, f"{s.slope:.2f}", f"[{s.ci[0]:.2f}, {s.ci[1]:.2f}]" if np.isfinite(s.ci[0]) else "–", f"{s.intercept:.2f}",
         f"{s.r2:.3f}"] for k, s in slopes.items()]
display(md_table(["targets", "C_exp (tokens/vector)", "95 % CI", "intercept", "R²"], rows) if rows else
        Markdown("Fewer than two prompt lengths with a fitted n50: no slope (run a preset with more m)."))
""",
    HIDE,
)

md(r"""
## The bound C and the ratio of Table 1

The bound needs the radius r of the ball that holds the embeddings and the precision ε. We take r as
the **largest L2 norm** of last-layer embeddings (after the final norm) over random prompts — the
smallest centred ball that contains every sample, which is what Theorem 4.5 packs — and report the
largest coordinate $r_\infty$ beside it. The bound depends on r and ε only through 2r/ε, and the paper
does not state one ε (PAPER.md §6): its replication code uses $\varepsilon = r_\infty 2^{-11}$ with
$r = r_\infty$ (so $2r/\varepsilon = 4096$ whatever the model); its Table 1 implies $2r/\varepsilon = 2^{17}$
for Pythia. Every convention is listed below; the chapter's `eps_convention` parameter picks the one in
bold. The ratio $C/C_{\text{exp}}$ is how far the counting bound is above what cramming achieves.
""")

code(
    r"""
emb = sample_embeddings(handle, params["n_embed_prompts"], [params["embed_length"]], store=store,
                        model_key=params["model_name"], desc="embeddings")[params["embed_length"]]
rad = geometry.radii(emb)
r, r_inf = rad["l2"], rad["linf"]
print(f"{params['n_embed_prompts']} random prompts of {params['embed_length']} tokens: r (max L2) = {r:.3f}, "
      f"r∞ (max |coordinate|) = {r_inf:.3f}")
rows = []
for name, conv in precision.CONVENTIONS.items():
    eps = conv.eps(r=r_inf if name == "replication" else r, r_inf=r_inf)
    r_used = r_inf if name == "replication" else r  # the replication code uses r = r∞
    C = bounds.ball_slope(handle.d_model, r_used, eps, handle.d_vocab)
    ratio = [f"{C / slopes[k].slope:.2f}" if k in slopes and slopes[k].slope > 0 else "–" for k in params["kinds"]]
    label = f"**{name}**" if name == params["eps_convention"] else name
    rows.append([label, f"{2 * r_used / eps:.4g}", f"{C:.1f}", *ratio])
display(md_table(["ε convention", "2r/ε", "C (ball, tokens/vector)", *[f"C / C_exp ({k})" for k in params["kinds"]]], rows))
""",
    HIDE,
)

md(r"""
## The paper's own curves, re-analysed

The paper's figures give the success rates over 20 targets for Pythia-160M and Qwen-2.5-0.5B (file
`data/cramming_curves.json`, read off the replication repository's figure data). Fitting them with the
same code as above reproduces the slopes the paper reports — and adds what the paper does not give:
an interval for every $n_{50}$ and for the slope.
""")

code(
    r"""
paper_curves = json.loads((DATA / "cramming_curves.json").read_text())
paper_slopes = {("EleutherAI_pythia-160m", "natural"): 90.37, ("EleutherAI_pythia-160m", "random"): 44.13,
                ("Qwen_Qwen2.5-0.5B", "natural"): 71.02, ("Qwen_Qwen2.5-0.5B", "random"): 36.65}
refit, rows = {}, []
for model, per_kind in paper_curves["models"].items():
    for kind, entry in per_kind.items():
        fits = {int(m): fit_sigmoid(np.asarray(p)[:, 0], np.asarray(p)[:, 1], 20, n_boot=200, seed=0)
                for m, p in entry["curves"].items()}
        mm = np.array(sorted(fits), dtype=float)
        s = fit_slope(mm, [fits[int(m)].n50 for m in mm])
        refit[model, kind] = (fits, s)
        n50s = ", ".join(f"{fits[int(m)].n50:.0f} [{fits[int(m)].ci[0]:.0f}–{fits[int(m)].ci[1]:.0f}]" for m in mm)
        rows.append([model.replace("_", "/", 1), kind, n50s, f"{s.slope:.2f} [{s.ci[0]:.1f}, {s.ci[1]:.1f}]",
                     f"{s.r2:.4f}", f"{paper_slopes[model, kind]:.2f}", f"{min(f.r2 for f in fits.values()):.3f}"])
display(md_table(["model", "targets", "our n50 for m = 1..5 [95 % CI]", "our slope [95 % CI]", "our R²",
                  "paper's slope", "min sigmoid R²"], rows))
""",
    HIDE,
)

code(
    r"""
fig_, axes = plt.subplots(1, 2, figsize=(10.5, 3.6))
for ax, model in zip(axes, paper_curves["models"]):
    for kind, c in zip(["natural", "random"], [plotting.PALETTE[0], plotting.PALETTE[1]]):
        fits, s = refit[model, kind]
        for m, f in fits.items():
            ax.scatter(f.lengths, f.success, s=5, color=c, alpha=0.35)
            grid = np.linspace(f.lengths.min(), f.lengths.max(), 200)
            ax.plot(grid, f.predict(grid), color=c, lw=1)
        ax.plot([], [], color=c, label=f"{kind}: slope {s.slope:.1f}")
    ax.set_title(model.replace("_", "/", 1))
    ax.set_xlabel("target length n (tokens)")
    ax.set_ylabel("fraction crammed (20 targets)")
    ax.legend(fontsize=8)
plt.tight_layout()
plt.show()
""",
    fig("The paper's success curves (points) for m = 1…5 left to right, and our logistic fits.", "fig-cramming-paper"),
)

md(r"""
## A real model at m = 1

Cramming a 135M-parameter model is slow on two CPU cores, so the check below was run **once** by a
documented command, and the chapter shows its stored artifact (`data/real_model_cramming.json`,
with the command, commit, machine, date and wall time). The command is

```
.venv/bin/python scripts/real_model_cramming.py --model smollm2-135m --out book/data/real_model_cramming.json
```

It used a much smaller budget than the paper (bf16, at most 200 steps, 8 targets a length, a time cap;
the settings are printed below), so its $n_{50}$ is a lower estimate of what longer optimisation would
reach. The paper's closest model is Gemma-3-270M, with $n_{50}(m=1)$ = 17.07 (natural) and 10.00
(random).

A first attempt with the soft vector at position 0 taught us something: on SmolLM2 (a Llama-type
model) the teacher-forced accuracy of most targets stopped at $(n-1)/n$, and greedy decoding was
wrong at the **first** token only. Position 0 of these models is an attention sink whose output
hardly depends on its input, so a soft vector placed there cannot choose the first target token. The
recorded run therefore puts a fixed BOS token before the soft vector (`cram(..., prefix_ids=[bos])`),
as real prompts of these models start; m still counts only the optimised vectors.
""")

code(
    r"""
path = DATA / "real_model_cramming.json"
if path.exists():
    real = json.loads(path.read_text())
    prov = real["provenance"]
    print(f"model {real['model']}, m = {real['m']}, {real['n_targets']} targets a length, settings {real['settings']}")
    print(f"command: {prov['command']}\ncommit {prov['commit'][:12]}, {prov['machine']}, {prov['date']}, "
          f"wall time {prov['wall_seconds'] / 60:.1f} min")
    if prov.get("note"):
        print("note:", prov["note"])
    ref = prov["paper_reference"]
    rows = []
    for kind, s in real["sources"].items():
        n50 = f"{s['n50']:.1f}" + (f" [{s['ci'][0]:.1f}, {s['ci'][1]:.1f}]" if s.get("ci") else "") if s["n50"] else s["fit_message"]
        tried = ", ".join(f"{int(n)}: {p:.2f}" for n, p in zip(s["lengths"], s["rates"]))
        rows.append([kind, n50, tried, f"{ref['n50_m1_' + kind]:.2f}"])
    display(md_table(["targets", f"n50 ({real['model']}, m = 1)", "success rate at each n tried", "paper, Gemma-3-270M"], rows))
else:
    print("no real-model artifact yet: run the command above")
""",
    HIDE,
)

md(r"""
## Natural text against random tokens

Natural text is predictable, so the model's own weights already carry most of it: the prompt only has
to encode what the model would not guess. Random token strings carry $\ln|V|$ nats per token, the
maximum, and the paper finds them crammable to about half the length (Pythia-160M: slope 44.13 against
90.37). The counting bound of Cor 4.6 treats all sequences alike, so it is closer to the random-token
slope; the non-uniform cell refinement of the support chapter is what separates likely from unlikely
sequences.
""")

code(
    r"""
rows = []
for m in params["ms"]:
    nat, rnd = runs.get(("natural", m)), runs.get(("random", m))
    if nat is None or rnd is None:
        continue
    verdict = ("natural longer" if nat.fit.ok and rnd.fit.ok and nat.n50 > rnd.n50 else
               "random longer" if nat.fit.ok and rnd.fit.ok else "not comparable")
    rows.append([m, f"{nat.n50:.1f}" if nat.fit.ok else nat.fit.message, f"{rnd.n50:.1f}" if rnd.fit.ok else rnd.fit.message, verdict])
for (model, kind), (fits, s) in refit.items():
    if kind == "natural":
        rows.append([f"paper's {model.split('_')[-1]} (slope)", f"{s.slope:.1f}", f"{refit[model, 'random'][1].slope:.1f}",
                     "natural longer" if s.slope > refit[model, "random"][1].slope else "random longer"])
display(md_table(["m", "n50 natural", "n50 random", "which crams longer"], rows))
print(f"chapter run time: {(time.perf_counter() - t_start) / 60:.1f} min")
""",
    HIDE,
)

md(r"""
## What it means

The paper's own curves, re-fitted here, show the *shape* Corollary 4.6 predicts: $n_{50}$ is linear in
m with R² ≥ 0.995, and natural text crams about twice as long as random tokens. Their slopes are far
below the counting bound — the ratios $C/C_{\text{exp}}$ of Table 1 lie between about 5 and 20 under the
paper's conventions. The bound is a statement about what a perfectly precise search could reach;
gradient descent on a soft prompt is a weak search, and the greedy map has large cells (frequent
tokens) and tiny ones (rare tokens) where the bound counts every cell the same.

Our own runs on the 1.8M-parameter `nano` model (tables above) show the same shape at a tiny scale:
at this CPU budget (300 steps, 10 targets a length) $n_{50}$ is a few tokens and grows with m — when this
chapter was written, about 1.7 tokens per prompt vector for natural text (R² ≈ 0.99) and less for random
tokens — far below the ball bound (C = 128 at 2r/ε = 4096). How well a model reads its prompt sets the
measured slope, the counting bound only caps it: an earlier `nano`, trained 450 steps instead of 1500
(held-out perplexity 55 instead of 31), hardly reacted to a soft prompt beyond the first target token,
and its slope was close to zero. Natural text crams longer than random tokens here too.
""")


def main() -> None:
    nb = new_notebook(cells=CELLS)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.write(nb, OUT)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
