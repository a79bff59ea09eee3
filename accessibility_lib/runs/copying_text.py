"""Chapter 6's own text, built from a :class:`~accessibility_lib.runs.copying_study.CopyingStudy`: what a learner reads.

The task's token layout (:func:`layout_table`), the one results table (:func:`summary_table`: every model at the
common training length and the SmolLM2 fine-tune, with Cor 4.10's n* under ``l2_fp16``: r = the largest L2 norm
of the last-layer embeddings h, ε = r∞·2^−11), the numbers the prose glues (:func:`chapter_numbers`) and the
chapter's reading of its results (:func:`readings`), said only as far as the runs of the preset show them. The
lab notes' detailed record is :mod:`accessibility_lib.runs.copying_record`.
"""

from __future__ import annotations

import math

import numpy as np

from accessibility_lib.experiments import cliffs, copying
from accessibility_lib.experiments.copying_bases import SCRATCH_BASES
from accessibility_lib.runs import copying_report as CR
from accessibility_lib.runs.copying_study import CONVENTION, CopyingStudy

__all__ = ["NEAR", "span", "of", "conv_key", "layout_table", "summary_table", "chapter_numbers", "readings"]

NEAR = f"{100 * cliffs.NEAR_FULL:.0f} %"


def span(lo: float, hi: float, fmt: str = "g") -> str:
    """``"lo to hi"``, or one number when the two print the same."""
    a, b = format(lo, fmt), format(hi, fmt)
    return a if a == b else f"{a} to {b}"


def of(flags: list[bool]) -> str:
    """``"k of n"`` for a list of booleans."""
    return f"{sum(flags)} of {len(flags)}"


def layout_table(task) -> str:
    """The string ``cab`` as the model sees it: position, token, id and label (–: no loss) of each of its tokens."""
    ex = copying.encode_batch(task, [np.array([2, 0, 1])])
    ids, labels = ex["input_ids"][0], ex["labels"][0]
    k = len(ids)
    rows = [
        "| position | " + " | ".join(str(i) for i in range(k)) + " |",
        "|---" * (k + 1) + "|",
        "| token | " + " | ".join(task.decode([int(t)]).replace("|", "\\|") for t in ids) + " |",
        "| id | " + " | ".join(str(int(t)) for t in ids) + " |",
        "| label | " + " | ".join("–" if int(t) < 0 else str(int(t)) for t in labels) + " |",
    ]
    return (
        f"The string x = `cab` as the model sees it (|V| = {task.alphabet_size}; `^` START, `|` SEP, `$` END; "
        "– marks positions without loss):\n\n" + "\n".join(rows)
    )


def conv_key() -> str:
    """The key of the chapter's ε convention in :data:`~accessibility_lib.theory.precision.CONVENTIONS` (``l2_fp16``)."""
    from accessibility_lib.theory import precision

    return next(k for k, v in precision.CONVENTIONS.items() if v is CONVENTION)


def summary_table(study: CopyingStudy, smol: dict | None = None) -> str:
    """The chapter's one results table: every model at the common training length (and the SmolLM2 fine-tune),
    with its cliff, cliff / L and Cor 4.10's n* under ``l2_fp16``."""
    lines = [
        "| model | training | L | d | r | 2r/ε | cliff (symbols) | cliff / L | log10 n* |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def row(label, how, L, c, mf):
        ratio = (
            f"{c.low / L:.2f}–{c.high / L:.2f}" if c.kind == "step" else f"{c.n50 / L:.2f}" if c.kind == "fall" else "–"
        )
        return (
            f"| {label} | {how} | {L} | {mf['d']} | {mf['r']:.2f} | {mf['ratio']:.0f} | {CR.cliff_position(c)} | "
            f"{ratio} | {mf['log10_nstar']:.0f} |"
        )

    for r in study.at_L0:
        base = r["cfg"].base
        label = f"scratch, d_model = {r['cfg'].d_model}" if base == "scratch" else base
        how = "from scratch" if base in SCRATCH_BASES else "fine-tuned"
        lines.append(row(label, how, r["cfg"].train_max_len, r["cliff"], r["mf"]))
    if smol is not None:
        lines.append(row("SmolLM2-135M", "fine-tuned", smol["L"], smol["cliff"], smol["mf"]))
    return f"Under the convention `{conv_key()}` (r = the largest L2 norm of h, ε = r∞·2^−11):\n\n" + "\n".join(lines)


def chapter_numbers(study: CopyingStudy, smol: dict | None = None) -> dict[str, object]:
    """The numbers chapter 6's prose states, as text to glue (names prefixed ``copy_``). Lower ends the prose calls
    "at least" (the smallest n*, the fewest orders of magnitude, n* at the floor) are rounded down.

    Raises:
        AssertionError: some run's n* lies within the tested lengths (the chapter says the bound forbids nothing
            there).
    """
    mf = [r["mf"] for r in study.runs]
    n_test = max(study.params["eval_lengths"])
    assert all(m["log10_nstar"] > math.log10(n_test) for m in mf), "n* within the tested lengths"
    V = study.params["alphabet_size"]
    least = min(mf, key=lambda m: m["log10_nstar"])  # the smallest n*, and the width it comes with
    vals = {
        "copy_n_runs": len(study.runs),
        "copy_n_located": len(study.located),
        "copy_n_at_L": len(study.at_L),
        "copy_moves_L": of(study.moves_L) if study.moves_L else "none (one training length)",
        "copy_moves_width": of(study.moves_width) if study.moves_width else "none (one width)",
        "copy_moves_pre": of(study.moves_pretraining) if study.moves_pretraining else "none (no pair)",
        "copy_min_log10_nstar": f"{math.floor(least['log10_nstar'])}",
        "copy_min_orders": f"{math.floor(study.orders.min())}" if study.orders.size else "—",
        "copy_cliff_range": span(min(m["cliff"] for m in mf), max(m["cliff"] for m in mf), ".1f"),
        "copy_n_test": n_test,
        "copy_d_testable": CR.widest_testable(n_test, V),
        "copy_near_full": NEAR,
        "copy_L0": study.L0,
        "copy_min_nstar": f"10^{math.floor(least['log10_nstar'])}",  # floored: the chapter says "at least"
        "copy_min_nstar_d": least["d"],
        "copy_min_floor": f"10^{math.floor(10 * min(m['coarsest_log10'] for m in mf)) / 10:.1f}",
        "copy_d_min": min(m["d"] for m in mf),
    }
    if smol is not None:
        c = smol["cliff"]
        vals.update(
            {
                "smol_L": smol["L"],
                "smol_cliff": CR.cliff_position(c),
                "smol_copied_to": max(smol["copied_past"]) if smol["copied_past"] else "no length past L",
                "smol_times_L": f"{max(smol['copied_past']) / smol['L']:.1f}" if smol["copied_past"] else "—",
                "smol_log10_nstar": f"{smol['mf']['log10_nstar']:.0f}",
                "smol_longest": max(smol["ev"]["length"]),
            }
        )
    return vals


def readings(study: CopyingStudy, smol: dict | None = None) -> dict[str, str]:
    """The chapter's reading of its results, one sentence or two each, said only as far as this run shows them.

    Returns:
        ``{"copy_answer", "copy_exact_reading", "copy_moves_reading", "copy_pre_effect", "copy_means_cliff",
        "smol_reading", "copy_answer_smol"}``: text to glue (``copy_answer_smol``: the SmolLM2-135M fine-tune's cliff
        with its 95 % interval and the digits of its n*, as the introduction states it) (``copy_pre_effect``: Fisher's exact test of pretraining at the first length
        past L, or that no pair was tested there). Each says the default preset's finding only when the runs of
        this preset show it, and otherwise what they show instead.
    """
    runs, located, at_L = study.runs, study.located, study.at_L
    all_at_L = bool(located) and len(at_L) == len(located) == len(runs)
    follows = bool(study.moves_L) and all(study.moves_L)
    quiet = not any(study.moves_width) and not any(study.moves_pretraining)
    if all_at_L and follows:
        answer = "Not in these runs. Every small model copies the lengths it was trained on and fails just past them."
    elif all_at_L:
        answer = "Not in these runs. Every small model fails just past the lengths it was trained on."
    else:
        answer = (
            f"Not in these runs, although only {len(at_L)} of the {len(runs)} cliffs sit at the training length here."
        )
    at_L0 = study.at_L0
    k0 = sum(r in at_L for r in at_L0)
    if at_L0 and k0 == len(at_L0):
        exact = (
            f"Every model copies up to L = {study.L0} and stops right after. Pretrained or not, transformer or "
            "state-space model, narrow or wide, the cliff sits at the same place."
        )
    else:
        exact = (
            f"{k0} of the {len(at_L0)} models trained to L = {study.L0} have their cliff there. The others stop "
            "earlier or later; the lab notes give their counts."
        )
    if study.copied_past_own_cliff() and follows:
        moves = (
            "Trained on longer strings, each architecture copies lengths it failed before. The cliff is a limit "
            "of training, not of representation."
        )
    elif study.moves_L:
        moves = "Here the cliff did not always move with L: the lab notes give each comparison."
    else:
        moves = "Only one training length was run in this preset, so it does not test whether the cliff follows L."
    tests = study.fisher_past_L()
    raised = [f for f in tests if f["p"] < 0.05]
    if raised:
        pre = (
            " ".join(
                f"Pretraining does raise the rate just past L: trained to L = {f['fine_tuned']['cfg'].train_max_len}, "
                f"{f['fine_tuned']['cfg'].base} copies {f['k_fine_tuned']} of {f['strings']} strings at n = {f['n']} "
                f"when fine-tuned, against {f['k_scratch']} of {f['strings']} from scratch (Fisher's exact test, "
                f"p = {f['p']:.1g})."
                for f in raised
            )
            + " That is a higher rate just past the cliff, within ranges that overlap, not a cliff that moved."
        )
    elif tests:
        pre = (
            f"Fisher's exact test at the first length past L finds no pretraining effect in any of the {len(tests)} "
            "pairs either (p ≥ 0.05)."
        )
    else:
        pre = "No pretrained model and its control were tested at the same first length past L here."
    if all_at_L and follows and quiet:
        means = (
            "The cliff of these models is the edge of their training lengths. Its range moves with L, not with width or pretraining"
            + ("; pretraining only raises the rate just past L." if raised else ".")
        )
    elif all_at_L:
        means = "The cliff of these models sits at the edge of their training lengths."
    else:
        means = (
            f"The cliffs of these models lie near their training lengths ({len(at_L)} of {len(runs)} at L), far "
            "below any length the bound speaks of."
        )
    if smol is None:
        smol_reading = "No evaluation of the SmolLM2 fine-tune is stored yet."
    elif smol["cliff"].kind == "fall" and smol["cliff"].data.n_informative > 1:
        smol_reading = "Its fall is gradual, not a step."
    elif smol["cliff"].kind == "step":
        smol_reading = "Its fall is a step, like the small models'."
    else:
        smol_reading = f"Its cliff is {CR.describe_cliff(smol['cliff'], short=True)}."
    if smol is not None and smol["cliff"].low > smol["L"]:
        smol_reading += " It lies at positions fine-tuning never filled."
    if smol is None:
        smol_answer = "No SmolLM2-135M fine-tune is evaluated yet."
    else:
        c, digits = smol["cliff"], math.floor(smol["mf"]["log10_nstar"]) + 1  # digits as the intro counts them
        where = (f"falls through one half at n = {c.n50:.0f} [{c.low:.0f}, {c.high:.0f}] letters" if c.kind == "fall"
                 else f"shows {CR.describe_cliff(c, short=True)}")  # fmt: skip
        smol_answer = (f"SmolLM2-135M, fine-tuned on strings of at most {smol['L']} letters, copies longer ones too: "
                       f"its exact match {where}, and its mean-field n* has {digits:,} digits.")  # fmt: skip
    return {
        "copy_answer": answer,
        "copy_exact_reading": exact,
        "copy_moves_reading": moves,
        "copy_pre_effect": pre,
        "copy_means_cliff": means,
        "smol_reading": smol_reading,
        "copy_answer_smol": smol_answer,
    }
