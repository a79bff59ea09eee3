"""Chapter 6's record in tables and sentences, for its lab notes: every run, every comparison, every claim.

Built from a :class:`~accessibility_lib.runs.copying_study.CopyingStudy`: where the runs come from, their
training record, the raw counts near each cliff and which fits an R² can judge, what moves the cliff comparison
by comparison, the verdict, Cor 4.10 at every cliff under ``l2_fp16`` (r = the largest L2 norm of the
last-layer embeddings h, ε = r∞·2^−11), and which of the paper's copying claims the runs support. The chapter's
own compact table and sentences are in :mod:`accessibility_lib.runs.copying_text`.
"""

from __future__ import annotations

import math

import numpy as np

from accessibility_lib.experiments import cliffs, copying
from accessibility_lib.experiments.copying_bases import SCRATCH_BASES
from accessibility_lib.runs import copying_report as CR
from accessibility_lib.runs.copying_study import CopyingStudy
from accessibility_lib.runs.copying_text import NEAR, conv_key, of, span

__all__ = ["provenance_note", "training_table", "counts_table", "r2_note", "moves_notes", "verdict",
           "mean_field_table", "bound_points", "claims"]  # fmt: skip


def provenance_note(study: CopyingStudy) -> str:
    """Where the runs come from: the artifact (with the command that made it) or trained here; what is missing."""
    n_art = sum(r["source"] == "artifact" for r in study.runs)
    note = [
        f"{len(study.runs)} run(s) of this preset: {n_art} read from `book/data/copying/study.json`, "
        f"{len(study.runs) - n_art} trained and evaluated here."
    ]
    if n_art and study.artifact is not None:
        note.append(
            "The artifact was made by `env PYTHONPATH=. .venv/bin/python scripts/copying_study.py --preset "
            f"{study.artifact['preset']}`; each run's record holds its command, commit, machine and wall time."
        )
    if study.missing:
        note.append(
            f"**Not in the artifact yet, so not shown:** {', '.join(study.missing)}. The study script adds "
            "them; `-p from_artifact false` trains them here instead."
        )
    return " ".join(note)


def training_table(study: CopyingStudy) -> str:
    """One row a run: width, parameters, steps, training time, whether it reached 100 %, where it is shown from."""
    lines = [
        "| run | d_model | parameters | steps | training time (s) | reached 100 % | shown from |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in study.runs:
        t, rec = r["rec"]["train"], r["rec"]
        lines.append(
            f"| {r['label']} | {rec['d_model']} | {rec['n_params']:,} | {t['steps']} | {t['seconds']:.0f} | "
            f"{'yes' if t['reached'] else 'no (step cap)'} | {r['source']} |"
        )
    return "\n".join(lines)


def counts_table(study: CopyingStudy) -> str:
    """Every run with its raw exact-match counts at L, L + 1 and L + 2, where the cliff is, its kind and cliff / L."""
    lines = [
        "| run | longest training length L | exact matches at L, L + 1, L + 2 | where the cliff is | kind | "
        "cliff / L |",
        "|---|---|---|---|---|---|",
    ]
    for r in study.runs:
        c, L = r["cliff"], r["cfg"].train_max_len
        ev = r["rec"]["eval"]
        k_at = dict(zip(ev["length"], ev["exact"]))
        near = ", ".join(str(k_at.get(n, "–")) for n in (L, L + 1, L + 2)) + f" of {np.ravel(ev['n'])[0]}"
        ratio = (
            f"{c.low / L:.2f}–{c.high / L:.2f}" if c.kind == "step" else f"{c.n50 / L:.2f}" if c.kind == "fall" else "–"
        )
        lines.append(f"| {r['label']} | {L} | {near} | {CR.describe_cliff(c)} | {c.kind} | {ratio} |")
    return "\n".join(lines)


def r2_note(study: CopyingStudy, recheck: dict | None = None) -> str:
    """Which fits an R² can judge here, the median R² over them, the runs left out and why, rebounds and rechecks.

    Args:
        study: the study.
        recheck: ``book/data/copying/recheck.json`` (``{"runs": {label: entry}}``), or None.
    """
    falls, steps, thin = study.informative_falls, study.kind("step"), study.thin_falls
    out = []
    if falls:
        out.append(
            f"Median R² of the logistic over the {len(falls)} fall(s) with two or more lengths inside them: "
            f"**{np.median([r['cliff'].r_squared for r in falls]):.3f}**."
        )
    else:
        out.append(
            "No run here has a fall with two or more lengths inside it (rates between 0 and "
            f"{NEAR} before the curve first reaches 0), so there is no R² of our own."
        )
    if steps:
        out.append(f"{len(steps)} run(s) are steps: a sigmoid fits a step exactly, so their R² measures nothing.")
    if thin:
        out.append(
            f"{len(thin)} fall(s) have one length inside the fall or none: the logistic passes through them "
            "almost exactly, and their n50 intervals lean on its shape inside one gap."
        )
    runs = (recheck or {}).get("runs", {})
    for r in study.rebounding:
        out.append(f"Not monotone: {r['label']}, {CR.rebound_text(r['cliff'])}.")
        text = CR.recheck_text(r["cliff"], runs.get(r["label"]))
        if text:
            out.append(f"{r['label']}, {text} (`scripts/copying_recheck.py`).")
    pc = copying.PAPER_COPYING
    out.append(
        f"The paper reports a median R² of {pc['median_r2']} for its fits (Pythia models, "
        f"{pc['eval_strings_per_length']} evaluation strings a length in the authors' code): other models, "
        "training and evaluation, so the two medians do not measure the same thing."
    )
    return " ".join(out)


def moves_notes(study: CopyingStudy) -> str:
    """Every comparison, one item each: training length (lineages), width (scratch), pretraining (with Fisher)."""
    notes = ["**Training length.**"]
    for name, seq in study.lineages:
        notes += [f"* {CR.describe_move(a, c)}." for a, c in zip(seq, seq[1:])]
        if len(seq) < 2:
            notes.append(f"* {name}: a single training length here, no comparison.")
    notes.append("\n**Width** (scratch GPT-NeoX, two layers, at each training length).")
    notes += [f"* {CR.describe_move(a, c)}." for a, c in study.width_pairs]
    if not study.width_pairs:
        notes.append("* fewer than two scratch widths at any training length here: no comparison.")
    notes.append(
        "\n**Pretraining** (a fine-tuned model against its architecture from scratch, at each training "
        "length; Fisher's exact test at the first length past L, where both were tested there)."
    )
    fisher = {id(f["fine_tuned"]): f for f in study.fisher_past_L()}
    for a, c in study.pretrain_pairs:
        f = fisher.get(id(a))
        extra = (
            f" At n = {f['n']}: {f['k_fine_tuned']} of {f['strings']} fine-tuned, {f['k_scratch']} of "
            f"{f['strings']} from scratch (two-sided p = {f['p']:.1g})."
            if f
            else ""
        )
        notes.append(f"* {CR.describe_move(c, a)}.{extra}")
    if not study.pretrain_pairs:
        notes.append("* no pretrained model with its from-scratch control in this preset.")
    return "\n".join(notes)


def verdict(study: CopyingStudy) -> str:
    """What moves the cliff, in a few sentences: located cliffs at L, moves with L, width and pretraining."""
    located, at_L, beyond = study.located, study.at_L, study.kind("beyond")
    out = [f"Of the {len(study.runs)} runs, {len(located)} have a located cliff (a step or a fall)."]
    out.append(f"**{len(at_L)} of them sit at the training length**: their range reaches the gap between L and L + 1.")
    if beyond:
        out.append(f"{len(beyond)} copy at least half of the strings at every tested length.")
    if study.moves_L:
        out.append(f"Lengthening the training strings moved the cliff out in **{of(study.moves_L)}** comparisons.")
    else:
        out.append(
            "No base was trained at two training lengths here, so whether the cliff follows the training "
            "length is not tested."
        )
    if study.moves_width:
        out.append(f"Widening the scratch model moved it (either way) in {of(study.moves_width)}.")
    if study.moves_pretraining:
        out.append(f"Pretraining moved it (either way) in {of(study.moves_pretraining)}.")
    shown = study.copied_past_own_cliff()
    if shown:
        out.append(
            f"Trained on longer strings, the same architecture copies past its own cliff in {len(shown)} "
            f"comparison(s), at ≥ {NEAR} of the held-out strings. Those cliffs are limits of training, not "
            "of what the network can represent."
        )
        out.append(
            "\n\n"
            + "\n".join(
                f"* {s['name']}: trained to L = {s['L_long']} it copies "
                f"n = {span(min(s['lengths']), max(s['lengths']))}; trained to "
                f"L = {s['L_short']} it copies none of them."
                for s in shown
            )
            + "\n\n"
        )
    if study.moves_L and all(study.moves_L) and len(at_L) == len(located):
        one, far = study.most_copied_past_L(False), study.most_copied_past_L(True)
        out.append(
            "The cliff follows the training length: the models copy what they were trained on and little further."
        )
        out.append(
            "One symbol past L, the most any of them copies is "
            + (
                f"{100 * one[0] / one[1]:.0f} % ({one[0]} of {one[1]} at n = {one[2]}, {one[3]})."
                if one[0]
                else "none."
            )
        )
        out.append(
            "Further out it is "
            + (
                f"{100 * far[0] / far[1]:.0f} % ({far[0]} of {far[1]} at n = {far[2]}, {far[3]})."
                if far[0]
                else "none."
            )
        )
        for f in study.fisher_past_L():
            if f["p"] < 0.05:
                out.append(
                    f"Pretraining does raise the rate one symbol past L at n = {f['n']} ({f['k_fine_tuned']} "
                    f"of {f['strings']} against {f['k_scratch']}, Fisher p = {f['p']:.1g}): a higher rate "
                    "just past the cliff, not a cliff that moved."
                )
    elif study.moves_L:
        out.append(
            "The cliff does not simply follow the training length in every run here: the comparisons above "
            "that move otherwise are the ones to read."
        )
    return " ".join(out).replace(" \n\n", "\n\n").replace("\n\n ", "\n\n")


def mean_field_table(study: CopyingStudy) -> str:
    """Cor 4.10 at every run's cliff under ``l2_fp16``: d, r, 2r/ε, log10 n*, cliff, orders apart, the 2r/ε that
    would put n* at the cliff, and log10 n* at the floor 2r/ε = 1. Mamba rows are marked ‡ (a yardstick only)."""
    lines = [
        "| run | d | r | 2r/ε | log10 n* | cliff (symbols) | orders of magnitude apart | 2r/ε for n* = cliff | "
        "log10 n* at 2r/ε = 1 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in study.runs:
        mf = r["mf"]
        ssm = " ‡" if "mamba" in r["label"] else ""
        lines.append(
            f"| {r['label']}{ssm} | {mf['d']} | {mf['r']:.2f} | {mf['ratio']:.0f} | {mf['log10_nstar']:.0f} | "
            f"{CR.cliff_position(r['cliff'])} | {mf['orders']:.0f} | {mf['ratio_needed']:.2g} | "
            f"{mf['coarsest_log10']:.1f} |"
        )
    note = (
        "\n\n‡ A state-space model (Mamba): its output is not a map on the prompt's empirical measure, so "
        "Theorem 4.9 does not apply to it. Its row gives what the formula would say if it did, as a yardstick "
        "(chapter 7 compares the two architectures)."
        if any("mamba" in r["label"] for r in study.runs)
        else ""
    )
    return (
        f"Under the convention `{conv_key()}` (r = the largest L2 norm of the last-layer embeddings h at copy "
        "positions, ε = r∞·2^−11):\n\n" + "\n".join(lines) + note
    )


def bound_points(study: CopyingStudy) -> str:
    """Why the bound is vacuous here, why no precision rescues it, and what a falsifying test would need.

    Raises:
        AssertionError: some run's n* lies within the tested lengths (the text would then be wrong).
    """
    from accessibility_lib.theory import paper

    mf = [r["mf"] for r in study.runs]
    V = study.params["alphabet_size"]
    n_test = max(study.params["eval_lengths"])
    assert all(m["log10_nstar"] > math.log10(n_test) for m in mf), "n* within the tested lengths"
    orders = study.orders
    paper_d = sorted({paper.models()[p].d_model for p in paper.TABLE1_COLUMNS.values()})
    need = [m["ratio_needed"] for m in mf if math.isfinite(m["ratio_needed"])]
    d_min = min(m["d"] for m in mf)
    text = [
        f"* **Vacuous by {span(orders.min(), orders.max(), '.0f')} orders of magnitude.** Under `l2_fp16` the bound "
        f"excludes no string up to n* ≈ 10^{min(m['log10_nstar'] for m in mf):.0f} symbols or more. The measured "
        f"cliffs lie at {span(min(m['cliff'] for m in mf), max(m['cliff'] for m in mf), '.1f')} symbols. At every "
        "tested length the bound on the accessible fraction is exactly 1, so no cliff can agree or disagree with it.",
        f"* **No precision rescues it.** For n* to fall to the measured cliff, 2r/ε would have to be "
        f"{span(min(need), max(need), '.2g')}: ε larger than the ball's diameter. Even at the floor 2r/ε = 1, n* is "
        f"10^{min(m['coarsest_log10'] for m in mf):.1f} symbols for the narrowest model here (d = {d_min}). At the "
        f"widths of the paper's models (d = {paper_d[0]} to {paper_d[-1]}) it is "
        f"10^{CR.coarsest_nstar_log10(paper_d[0], V):.0f} to 10^{CR.coarsest_nstar_log10(paper_d[-1], V):.0f}.",
        f"* **What a falsifying test would need.** A test at lengths up to {n_test} can contradict Cor 4.10 only "
        f"for a model with d ≤ **{CR.widest_testable(n_test, V)}** (the widest d whose n* at 2r/ε = 1 is at most "
        f"{n_test}). Its output must depend on the prompt only through its empirical measure, to a measured W_1 "
        "precision ε (Assumption 4.8). The models here are none of these: d is "
        f"{span(d_min, max(m['d'] for m in mf))}, they read positions, and ε is a convention.",
    ]
    return "\n".join(text)


def claims(study: CopyingStudy, smol: dict | None = None) -> str:
    """Which of the paper's copying claims the runs support, one item a claim, with its evidence."""
    located, steps, falls = study.located, study.kind("step"), study.kind("fall")
    informative = study.informative_falls
    paper_r2 = copying.PAPER_COPYING["median_r2"]
    n = len(study.runs)
    out = [
        f"* *Exact match falls like a step.* **{'Supported for the small models only' if steps else 'Not seen here'}.** "
        f"{len(located)} of the {n} small-model runs have a cliff within the tested lengths: {len(steps)} step(s) "
        f"and {len(falls)} fall(s) through intermediate rates."
    ]
    if informative:
        shape = (
            f"the {len(informative)} fall(s) with two or more lengths inside give a median R² of "
            f"{np.median([r['cliff'].r_squared for r in informative]):.3f}."
        )
    else:
        shape = "none of our small-model falls has two or more lengths inside it, so none tests the shape."
    out.append(
        f"* *The fall is a sigmoid (median R² {paper_r2}).* **Not testable on steps**, which a sigmoid fits by "
        f"construction; {shape}"
    )
    if smol is not None and smol["cliff"].kind == "fall":
        out.append(
            f"  SmolLM2's fall has R² = {smol['cliff'].r_squared:.3f} over the "
            f"{int(cliffs.fall_window(smol['cliff'].data).sum())} lengths it is fitted to "
            f"({smol['cliff'].data.n_informative} inside the fall); the paper's R² is over its own models and training."
        )
    out.append(
        f"* *The threshold does not depend on the prompt.* **Consistent, trivially.** The prompt holds the "
        f"answer and grows with n, yet {len(located)} of {n} runs stop copying within the tested lengths."
    )
    moved = (
        f" The cliff sits at the training length in {len(study.at_L)} of {len(located)} located runs and moved "
        f"out with it in {of(study.moves_L)} comparisons."
        if study.moves_L
        else ""
    )
    out.append(
        "* *The threshold is the one Cor 4.10 predicts.* **Not testable here: the bound is vacuous.**"
        + moved
        + f" n* lies {study.orders.min():.0f} or more orders of magnitude beyond those cliffs. The "
        "cliff measures length generalisation, not the count of accessible outputs."
    )
    if smol is not None:
        c = smol["cliff"]
        item = (
            f"* *A pretrained model fine-tuned on x|x (SmolLM2-135M, {smol['short_when']}).* Trained on "
            f"n ≤ {smol['L']} and tested at {min(smol['ev']['length'])}–{max(smol['ev']['length'])}: "
            f"{CR.describe_cliff(c)}."
        )
        if c.kind == "fall" and c.steepness > 0:
            rate, lengths = smol["rate"], smol["ev"]["length"]
            n_hi = max(lengths)
            n_lo = max((n for n in lengths if rate[n] >= cliffs.NEAR_FULL), default=None)
            n10 = c.n50 + math.log(9) / c.steepness  # where the fitted logistic reaches 10 %
            if n_lo is not None:
                item += (
                    f" Exact match goes from {100 * rate[n_lo]:.0f} % at n = {n_lo} to {100 * rate[n_hi]:.0f} % "
                    f"at n = {n_hi}."
                )
            item += (
                f" The fitted logistic falls from 90 % to 10 % over about {2 * math.log(9) / c.steepness:.0f} "
                f"symbols, all at positions fine-tuning never filled: a gradual fall, not a step."
            )
            if n10 > n_hi:
                item += f" Its 10 % point, n ≈ {n10:.0f}, lies past the longest length tested."
        if smol["copied_past"]:
            pre = [r for r in located if r["cfg"].base not in SCRATCH_BASES]
            pre_at = [r for r in pre if r in study.at_L]
            item += (
                f" It copies ≥ {NEAR} up to n = {max(smol['copied_past'])} "
                f"({max(smol['copied_past']) / smol['L']:.1f} L), where the small pretrained bases stop at L in "
                f"{len(pre_at)} of {len(pre)} runs. One run cannot say whether the model or its other settings "
                "moved its cliff."
            )
        item += (
            f" Its longest length, {max(smol['ev']['length']):,}, is far below n* ≈ "
            f"10^{smol['mf']['log10_nstar']:.0f}, so it cannot test Cor 4.10 either."
        )
        out.append(item)
    return "\n".join(out)
