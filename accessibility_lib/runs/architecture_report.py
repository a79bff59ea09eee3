"""A transformer and a state-space model under the same bound: chapter 7's comparison of `nano` and `nano-mamba`.

Both were trained on the same text, budget and tokenizer (:func:`training_table`, from their training logs). Their
cramming runs (plan ``architectures``, stored artifacts in ``book/data/cramming/``) are re-fitted here
(:func:`load_cramming`) and set side by side m by m (:func:`compare_text`) and beside each model's bounds
(:func:`slopes_table`); their copying runs (``book/data/copying/architectures.json``) are located with chapter 6's
cliff rule (:func:`load_copying`, :func:`copying_table`); Thm 4.9's premises are measured on both
(:func:`premises_table`). Every function returns Markdown or the data behind it; nothing is typed.
"""

from __future__ import annotations

import json

import numpy as np

from accessibility_lib.runs.precision_counts import floor_sig

__all__ = ["MODELS", "training_table", "plan_text", "load_cramming", "cramming_table", "compare_text",
           "slopes_table", "load_copying", "copying_table", "premises_table", "margin", "budget", "at_cap",
           "chapter_numbers"]  # fmt: skip

#: the two architectures compared: the book's transformer and its state-space twin
MODELS = ("nano", "nano-mamba")


def training_table() -> str:
    """Parameters, tokens, held-out and unigram perplexity and training time of both models, from their logs."""
    from accessibility_lib.models.loading import nano_dir

    cards = {"nano": nano_dir() / "train_log.json", "nano-mamba": nano_dir().parent / "nano_mamba" / "train_log.json"}
    lines = ["| model | architecture | parameters | tokens seen | held-out perplexity | unigram perplexity | "
             "training time (s) |", "|---" * 7 + "|"]  # fmt: skip
    logs = {n: json.loads(p.read_text()) for n, p in cards.items() if p.exists()}
    for name in cards:
        if name not in logs:
            lines.append(
                f"| {name} | not trained yet: `nice -n 10 .venv/bin/python scripts/train_nano_mamba.py` | | | | | |"
            )
            continue
        log = logs[name]
        arch = "GPT-NeoX (transformer)" if name == "nano" else "Mamba (state-space)"
        secs = log.get("train_seconds_all_runs", log.get("train_seconds_last_run"))
        lines.append(f"| {name} | {arch} | {log['n_params']:,} | {log['tokens_seen']:,} | {log['heldout_ppl']:.1f} | "
                     f"{log['unigram_ppl']:.1f} | {secs:.0f} |")  # fmt: skip
    scored = sorted({log["heldout_tokens_scored"] for log in logs.values()})
    out = "\n".join(lines) + (f"\n\nPerplexities on the same held-out chapters, windows and scoring "
                              f"({', '.join(f'{n:,}' for n in scored)} scored tokens; the evaluation of "
                              "`scripts/train_nano.py`).")  # fmt: skip
    if len(logs) == 2:
        worse, better = sorted(logs, key=lambda n: logs[n]["heldout_ppl"], reverse=True)
        out += (f" On the same data and budget, `{worse}` is the weaker language model (held-out perplexity "
                f"{logs[worse]['heldout_ppl']:.1f} against {logs[better]['heldout_ppl']:.1f}). The two are matched in "
                "data, width and parameters, not in perplexity: a difference below is as much between a weaker and a "
                "stronger model as between architectures.")  # fmt: skip
    return out


def plan_text() -> str:
    """The cramming plan both models ran (``architectures``), checked to be the same for both.

    Raises:
        AssertionError: the two models' plans differ.
    """
    from accessibility_lib.runs.cramming_units import cramming_plan

    plan = cramming_plan("nano-mamba", "architectures")
    assert [(u.kind, u.m, u.max_steps) for u in plan] == [
        (u.kind, u.m, u.max_steps) for u in cramming_plan("nano", "architectures")
    ]
    u = plan[0]
    return (
        "Both models ran the same cramming plan (`accessibility_lib.runs.cramming_units.PLANS`, plan `architectures`). "
        f"It has m = {', '.join(str(m) for m in sorted({u.m for u in plan}))} prompt vectors and "
        f"{' and '.join(sorted({u.kind for u in plan}))} targets (natural: held-out text), {u.n_targets} targets a "
        f"length. It uses the authors' optimiser, the `{u.length_convention}` length convention, {u.max_steps} steps "
        f"(patience {u.patience}) and float32."
    )


def load_cramming() -> dict:
    """Both models' cramming artifacts, re-fitted: per model ``{"points": {kind: [(m, fit, state)]}, "slopes":
    {kind: SlopeFit}, "units": {(kind, m): UnitSummary}, "cap": {kind: (failures at the cap, failures)}}``, or
    ``{"missing": reason}`` when a model has no artifact yet."""
    from accessibility_lib.experiments import slope_fit
    from accessibility_lib.runs import cramming_artifacts as CA
    from accessibility_lib.runs import cramming_summary as CS

    cram = {}
    for name in MODELS:
        try:
            art = CA.load_artifact(name)
        except CA.ArtifactMissingError as exc:
            cram[name] = {"missing": str(exc).splitlines()[-1].strip()}
            continue
        pts = {}
        for u in art["units"]:
            f = CA.refit_unit(u)[3]
            pts.setdefault(u["kind"], []).append((u["m"], f, u.get("state", "pending")))
        fits = {}
        for kind, rows in pts.items():
            ok = sorted((m, f) for m, f, _ in rows if f is not None and f.ok)
            if len({m for m, _ in ok}) >= 2:
                fits[kind] = slope_fit.fit_slope(
                    [m for m, _ in ok], [f.n50 for _, f in ok], n50_ci=[f.ci for _, f in ok]
                )
        units = {(u.kind, u.m): u for u in CS.summarize(art)}
        cap = {kind: (sum(units[(kind, m)].failures_at_cap for m, _, _ in rows),
                      sum(units[(kind, m)].failures for m, _, _ in rows)) for kind, rows in pts.items()}  # fmt: skip
        cram[name] = {"points": pts, "slopes": fits, "units": units, "cap": cap}
    return cram


def _limited(c: dict, kind: str) -> bool | None:
    from accessibility_lib.runs import cramming_budget as CB

    return CB.budget_reading([c["units"][(kind, m)] for m, _, _ in c["points"][kind]])[0]


def cramming_table(cram: dict) -> str:
    """Every unit of both models: kind, m, state, budget, n50 with its interval, failures at the step cap; then
    chapter 3's budget reading where the failures say the budget may limit the n50s."""
    from accessibility_lib.runs import cramming_budget as CB

    lines = [
        "| model | target kind | m | state | budget | n50 [95 % CI] | failures at the step cap |",
        "|---" * 7 + "|",
    ]
    notes = []
    for name, c in cram.items():
        if "missing" in c:
            lines.append(f"| {name} | — | — | not run yet | — | `{c['missing']}` | — |")
            continue
        for kind, rows in c["points"].items():
            for m, f, state in sorted(rows, key=lambda r: r[0]):
                u = c["units"][(kind, m)]
                lines.append(f"| {name} | {kind} | {m} | {state} | {u.budget_label} | "
                             f"{f.describe() if f is not None else '—'} | "
                             + (f"{u.failures_at_cap}/{u.failures}" if u.failures else "no failure") + " |")  # fmt: skip
            limited, text = CB.budget_reading([c["units"][(kind, m)] for m, _, _ in rows])
            if limited is not False and text != "no failure":
                notes.append(f"{name} ({kind}): {text}")
    if not notes:
        return "\n".join(lines)
    return "\n".join(lines) + (
        "\n\n**Budget.** Chapter 3 reads the failures so: with a patience, more than half of them at the step cap "
        "means the budget may limit the n50s. Chapter 3's budget curve is the test.\n\n"
        + "\n".join(f"* {n}." for n in notes)
    )


def compare_text(cram: dict) -> tuple[str, dict]:
    """The two architectures at each m and kind, by their n50 intervals (disjoint: one crams more at this budget).

    Returns:
        ``(text, counts)``: ``counts`` = ``{"pairs", "mamba_more", "nano_more"}``.
    """
    rows, counts = [], {"pairs": 0, "mamba_more": 0, "nano_more": 0}
    if not all("points" in cram.get(n, {}) for n in MODELS):
        return "", counts
    for kind in ("natural", "random_words"):
        fa, fb = ({m: f for m, f, _ in cram[n]["points"].get(kind, []) if f is not None and f.ok} for n in MODELS)
        for m in sorted(set(fa) & set(fb)):
            a, b = fa[m], fb[m]
            who = (
                "nano-mamba crams more"
                if b.ci[0] > a.ci[1]
                else "nano crams more"
                if a.ci[0] > b.ci[1]
                else "the intervals overlap"
            )
            counts["pairs"] += 1
            counts["mamba_more"] += who.startswith("nano-mamba")
            counts["nano_more"] += who.startswith("nano crams")
            caps = "; ".join(f"{n} {cram[n]['units'][(kind, m)].failures_at_cap}/{cram[n]['units'][(kind, m)].failures}"
                             for n in MODELS if cram[n]["units"][(kind, m)].failures)  # fmt: skip
            rows.append(f"* {kind.replace('_', ' ')}, m = {m}: nano {a.n50:.1f} [{a.ci[0]:.1f}, {a.ci[1]:.1f}], "
                        f"nano-mamba {b.n50:.1f} [{b.ci[0]:.1f}, {b.ci[1]:.1f}]: {who}"
                        + (f" (failures at the step cap: {caps})." if caps else "."))  # fmt: skip
    if not rows:
        return "", counts
    text = ("**The two architectures, m by m.**\n\n" + "\n".join(rows) + f"\n\nDisjoint intervals: nano-mamba crams "
            f"more in {counts['mamba_more']} and nano in {counts['nano_more']} of the {counts['pairs']} pairs. Both ran "
            "the same budget, so a difference is a difference at that budget. Where most failures stopped at the step "
            "cap the n50 is budget-limited, and a larger budget may move the two differently.")  # fmt: skip
    return text, counts


def slopes_table(cram: dict, support: dict) -> tuple[str, list[tuple]]:
    """Each measured slope C_exp beside its own bounds (ball ``l2_fp16``, ellipsoid, fp32 any input, ball at the
    median ε_eff), as bound / slope with the interval the slope's interval gives; then what the margins mean.

    Returns:
        ``(markdown, verdict)``: ``verdict`` one ``(name, kind, ball bound, SlopeFit)`` a measured slope.
    """
    lines = ["| model | target kind | C_exp [95 % CI] | C ball (`l2_fp16`: r = max ‖h‖₂, ε = r∞·2^−11) / C_exp | "
             "C ellipsoid / C_exp | C fp32 any input / C_exp | C ball (median ε_eff) / C_exp |", "|---" * 7 + "|"]  # fmt: skip
    verdict = []
    for name, c in cram.items():
        s = support.get(name)
        for kind, fit in c.get("slopes", {}).items():
            if s is None:
                continue
            bounds = [s["C_ball_rep"], s["C_ell_rep"], s["C_any"]["fp32"], s.get("C_ball_eff", float("nan"))]
            if fit.reliable:
                cells = [f"{b / fit.slope:.2f} [{b / fit.ci[1]:.2f}, {b / fit.ci[0]:.2f}]" for b in bounds]
            else:
                cells = ["— (slope unreliable)"] * len(bounds)
            capped = " (most failures stopped at the step cap while improving)" if _limited(c, kind) else ""
            lines.append(f"| {name} | {kind} | {fit.describe()}{capped} | " + " | ".join(cells) + " |")
            verdict.append((name, kind, bounds[0], fit))
    msg = "\n".join(lines)
    if not verdict:
        return msg + "\n\nNo cramming artifact with at least two fitted n50 yet.", verdict
    judged = [v for v in verdict if v[3].reliable]
    sure = [v for v in judged if v[2] > v[3].ci[1]]
    capped = [v for v in sure if _limited(cram[v[0]], v[1])]
    unsure = [v for v in verdict if not v[3].reliable]
    out = []
    if judged:
        margins = [v[2] / v[3].ci[1] for v in judged]
        out.append(f"The ball bounds (`l2_fp16`, the first ratio column) exceed the {len(judged)} reliable measured "
                   f"slopes by {floor_sig(min(margins), 2)}–{max(margins):.0f}× at the top of their 95 % intervals"
                   + (f" ({len(judged) - len(sure)} of them not wholly below it)." if len(sure) < len(judged) else "."))  # fmt: skip
    else:
        out.append(f"None of the {len(verdict)} measured slopes is reliable enough to set beside its bound.")
    if capped:
        out.append(f"For {len(capped)} of them most failures stopped at the step cap while still improving. Their "
                   "n50s may rise with more steps, so the top of the interval is the top for this budget, not for the "
                   "model.")  # fmt: skip
    if unsure:
        out.append(
            f"{len(unsure)} cannot be judged: " + ", ".join(f"{n} ({k}): {f.caveat()}" for n, k, _, f in unsure) + "."
        )
    out.append("A ratio above 1 is what the bound requires of uniformly random tokens only. Natural text and random "
               "words are a small part of all |V|^n sequences, so for them the bound is a yardstick (as in the "
               "paper's Table 1), not a cap.")  # fmt: skip
    return msg + "\n\n" + " ".join(out), verdict


def load_copying() -> tuple[dict, dict]:
    """The copying artifact of both models and each model's cliff (chapter 6's rule).

    Returns:
        ``(art, cliffs)``: the artifact (``{"models": {}}`` when absent) and ``{name: CliffEstimate}``.

    Raises:
        ValueError: a model's lengths were tested with different numbers of strings.
    """
    from accessibility_lib.experiments import cliffs
    from accessibility_lib.ground.results import loads
    from accessibility_lib.runs.cramming_artifacts import ARTIFACT_DIR

    path = ARTIFACT_DIR.parent / "copying" / "architectures.json"
    art = loads(path.read_text()) if path.exists() else {"models": {}}
    found = {}
    for name, rec in art["models"].items():
        ev = {k: np.asarray(v) for k, v in rec["eval"].items()}
        if np.unique(ev["n"]).size != 1:
            raise ValueError(f"{name}: strings per length differ ({sorted(set(ev['n'].tolist()))})")
        found[name] = cliffs.locate_cliff(ev["length"], ev["exact"], int(ev["n"][0]))
    return art, found


def copying_table(art: dict, found: dict) -> str:
    """Both models' copying runs: steps, whether they reached 100 %, the cliff, and Cor 4.10's n* at their support
    (``l2_fp16``, q = 1, |V| the alphabet; a yardstick for both, see the notes under the table)."""
    from accessibility_lib.experiments import cliffs
    from accessibility_lib.runs import copying_report as CR
    from accessibility_lib.theory import precision

    if not art["models"]:
        return "No copying artifact yet: `nice -n 10 .venv/bin/python scripts/architecture_copying.py --models nano nano-mamba`."
    st = art["settings"]
    lines = ["| model | architecture | steps | reached 100 % | cliff (a step's bracket, or a fall's n50 [95 % CI]) | d | "
             "r | ε | log10 n* (Thm 4.9 and Cor 4.10, `l2_fp16`, q = 1, \\|V\\| the alphabet) |", "|---" * 9 + "|"]  # fmt: skip
    for name, rec in art["models"].items():
        eps = precision.L2_FP16.eps(r=rec["r"], r_inf=rec["r_inf"])
        l10 = f"{cliffs.mean_field_cliff_log10(rec['d_model'], rec['r'], eps, st['alphabet_size']):.0f}"
        l10 += " ‡" if "Mamba" in rec["architecture"] else " †"
        c = found[name]
        where = CR.describe_cliff(c) + (" (no tested length inside the fall)" if c.kind == "step" else "")
        lines.append(f"| {name} | {rec['architecture']} | {rec['train']['steps']} | "
                     f"{'yes' if rec['train']['reached'] else 'no'} | {where} | {rec['d_model']} | {rec['r']:.2f} | "
                     f"{eps:.3g} | {l10} |")  # fmt: skip
    lines += ["", f"Settings: {st['alphabet_size']} letters, trained on strings of length {st['train_min_len']} to "
              f"{st['train_max_len']}, {st['n_strings']} held-out strings a tested length. These are the book's small "
              "settings, not the paper's (chapter 6)."]  # fmt: skip
    steps_at = [n for n, c in found.items() if c.kind == "step" and c.low == st["train_max_len"]]
    if steps_at:
        who = steps_at[0] if len(steps_at) == 1 else ", ".join(steps_at[:-1]) + " and " + steps_at[-1]
        lines += ["", f"For {who} the fall is a step right past the longest training length: a failure to generalise "
                  "in length, which says nothing about the architecture's capacity beyond it."]  # fmt: skip
    lines += ["", "† For the transformer's position-free idealisation: the shipped model reads positions through a "
              "causal mask and rotary embeddings, which break Thm 4.9's premises (below).", "",
              "‡ A yardstick only: a recurrence is not a map on measures, so Thm 4.9 does not apply."]  # fmt: skip
    lines += [""] + [f"- {n}: {CR.describe_cliff(c)}." for n, c in found.items()]
    if any(c.kind == "step" for c in found.values()):  # said once, in short sentences: the lab's reading budget
        lines += ["", "A step pins the cliff between two tested lengths. It says neither where inside that gap the "
                  "cliff lies nor how steep it is, so a sigmoid's R² on it is 1 by construction."]  # fmt: skip
    return "\n".join(lines)


def premises_table(seed: int = 0, m: int = 8, prompts: int = 16) -> str:
    """Thm 4.9's premises (permutation equivariance, duplication invariance) measured at the last layer on random
    hard prompts: the shipped `nano` and `nano-mamba`, and `nano` without mask and positions, where they hold."""
    from accessibility_lib.theory import meanfield, positionfree

    rows = ["| model | forward | prompts × m | permutation: median relative deviation (last layer) | "
            "duplication: median relative deviation (last layer) | duplication: median TV of the next token |",
            "|---" * 6 + "|"]  # fmt: skip
    for name in MODELS:
        handle, note = positionfree.load_hf(name)
        if handle is None:
            rows.append(f"| {name} | — | — | not available: {note} | | |")
            continue
        for case in ["shipped (causal + rotary)"] + (["no mask, no positions"] if name == "nano" else []):
            label = "shipped (recurrence)" if name == "nano-mamba" else case
            sw = meanfield.structural_sweep(positionfree.make_forward(handle, case), handle, [m], prompts, seed=seed,
                                            desc=f"{name}: {label}")  # fmt: skip
            rows.append(f"| {name} | {label} | {prompts} × {m} | {np.median(sw['perm_layers'][0][:, -1]):.3g} | "
                        f"{np.median(sw['dup_layers'][0][:, -1]):.3g} | {np.median(sw['dup_tv'][0]):.3g} |")  # fmt: skip
    return "\n".join(rows)


def margin(cram: dict, support: dict, name: str, kind: str = "natural") -> float | None:
    """The ball bound (``l2_fp16``) over the top of a model's measured slope interval; None without a reliable
    slope or a measured support."""
    fit = cram.get(name, {}).get("slopes", {}).get(kind)
    s = support.get(name)
    if fit is None or not fit.reliable or s is None:
        return None
    return s["C_ball_rep"] / fit.ci[1]


def budget(cram: dict, name: str, kind: str = "natural") -> int | None:
    """The step budget (max_steps) of a model's cramming units of ``kind``; None when they ran at several budgets
    or none was loaded."""
    steps = {u.max_steps for (k, _), u in cram.get(name, {}).get("units", {}).items() if k == kind}
    return steps.pop() if len(steps) == 1 else None


def at_cap(cram: dict, name: str, kind: str = "natural") -> tuple[int, int] | None:
    """``(failed runs that stopped at the step cap, failed runs)`` of a model's units of ``kind``; None when not
    loaded."""
    return cram.get(name, {}).get("cap", {}).get(kind)


def chapter_numbers(cram: dict, support: dict) -> dict[str, str]:
    """The numbers chapter 7's prose states about the two architectures, as text to glue: ``arch_<model>_margin``
    (:func:`margin`), ``arch_<model>_slope`` (the natural-text slope C_exp with its interval), ``arch_pairs``,
    ``arch_mamba_more``, ``arch_nano_more`` (:func:`compare_text`)."""
    _, counts = compare_text(cram)
    out = {f"arch_{k}": str(v) for k, v in counts.items()}
    for name in MODELS:
        m = margin(cram, support, name)
        out[f"arch_{name.replace('-', '_')}_margin"] = "— (no reliable slope)" if m is None else floor_sig(m, 2)
        fit = cram.get(name, {}).get("slopes", {}).get("natural")
        out[f"arch_{name.replace('-', '_')}_slope"] = "— (no fit)" if fit is None else fit.describe()
    return out
