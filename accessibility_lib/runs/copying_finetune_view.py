"""The SmolLM2-135M copying fine-tune, read from its stored record: settings, progress, evaluation, cliff.

``scripts/copying_finetune.py`` fine-tunes SmolLM2-135M whole on x|x and writes its record to
``book/data/copying/finetune_smollm2-135m.json`` at every checkpoint (``benchmarks/bench_finetune_step.py``
writes the cost of a step beside it). :func:`load` reads both; :func:`evaluation` takes the finished run's
evaluation (or the interim one of a checkpoint), locates its cliff with chapter 6's rule
(:func:`~accessibility_lib.experiments.cliffs.locate_cliff`) and what Cor 4.10 says there; :func:`record_rows`,
:func:`lora_text` and :func:`evaluation_text` put them in words for chapter 6 and its lab notes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from accessibility_lib.experiments import cliffs, copying
from accessibility_lib.ground.provenance import portable_command
from accessibility_lib.runs import copying_outcomes, copying_report

__all__ = ["Finetune", "load", "evaluation", "record_rows", "lora_text", "evaluation_text", "setting_values",
           "FINETUNE_ARTIFACT"]  # fmt: skip

FINETUNE_ARTIFACT = copying_outcomes.COPYING_DATA / "finetune_smollm2-135m.json"


@dataclass
class Finetune:
    """The stored record (``ft``, None when absent) and the measured cost of a step (``cost``, None when absent)."""

    ft: dict | None
    cost: dict | None

    @property
    def settings(self) -> dict:
        """The run's settings (empty without a record)."""
        return self.ft["settings"] if self.ft is not None else {}


def load(path=FINETUNE_ARTIFACT, cost_path=copying_outcomes.STEP_COST_ARTIFACT) -> Finetune:
    """The fine-tune's record and the step-cost benchmark, each None when not stored."""
    return Finetune(copying_outcomes.load_artifact(path), copying_outcomes.load_artifact(cost_path))


def setting_values(f: Finetune) -> dict[str, str]:
    """The run's settings beside the paper's, as text to glue: ``smol_lr``, ``smol_lengths``, ``smol_context``,
    ``smol_cap`` and ``smol_paper_*`` (the authors' values, :data:`~accessibility_lib.experiments.copying.
    PAPER_COPYING`); "—" where no record is stored."""
    pc, s = copying.PAPER_COPYING, f.settings
    return {
        "smol_paper_lr": f"{pc['lr']:g}",
        "smol_paper_lengths": f"{pc['train_min_len']}–{pc['train_max_len']}",
        "smol_paper_context": f"{pc['context']:,}",
        "smol_paper_cap": f"{pc['max_steps']:,}",
        "smol_lr": f"{s['lr']:g}" if s else "—",
        "smol_lengths": f"{s['train_min_len']}–{s['train_max_len']}" if s else "—",
        "smol_context": f"{s['context']}" if s else "—",
        "smol_cap": f"{s['max_steps']:,}" if s else "—",
    }


def lora_text(f: Finetune) -> str:
    """Why the fine-tune is full rather than LoRA, with the measured step cost when it is stored."""
    cost = f.cost
    if not cost:
        return (
            "LoRA's forward and backward passes still run through every layer, so it saves only the weight "
            "gradients and the optimiser step (not measured in this build: `.venv/bin/python "
            "benchmarks/bench_finetune_step.py --json book/data/copying/finetune_step_cost.json` measures it)."
        )
    cpus = cost["provenance"]["machine"].split(",")[1].strip().replace("cpus", "CPUs")
    return (
        f"a step with every weight frozen (the least a LoRA step could cost) took {cost['all_frozen']:.1f} s "
        f"against {cost['full']:.1f} s for the full step. These are medians of {len(cost['full_steps'])} "
        f"alternating steps each, batch {cost['batch_size']}, strings up to {cost['train_max_len']} symbols, "
        f"{cost['threads']} torch thread, {cpus}, load average {max(cost['load_average']):.1f} "
        f"(`benchmarks/bench_finetune_step.py`). LoRA would save at most {cost['lora_saving_at_most']:.0%} of "
        "the time, while changing what is trained from what the paper trains."
    )


def record_rows(f: Finetune) -> list[tuple[str, str]]:
    """The record as (field, value) rows: status, steps, wall time, training exact match, provenance, cost.

    Raises:
        ValueError: no record is stored.
    """
    if f.ft is None:
        raise ValueError(f"no fine-tune record at {FINETUNE_ARTIFACT}")
    ft, s = f.ft, f.settings
    pr = ft.get("progress", {})
    checks = pr.get("check_exact") or [math.nan]
    rows = [
        ("status", ft["status"]),
        (
            "steps",
            f"{pr.get('step', 0)} of at most {s['max_steps']} (batch {s['batch_size']}, lengths "
            f"{s['train_min_len']}–{s['train_max_len']}, lr {s['lr']:g})",
        ),
        ("wall time of training", f"{pr.get('seconds', 0) / 3600:.2f} h"),
        (
            f"training exact match at n = {s['train_max_len']}",
            f"last check {checks[-1]:.3f}, best {max(checks):.3f} "
            f"({len(pr.get('check_exact') or [])} checks of "
            f"{s['check_strings']} strings)",
        ),
        (
            "made by",
            f"`{portable_command(ft['provenance']['command'])}` at commit {ft['provenance']['commit'][:10]}, "
            f"{ft['provenance']['machine']}",
        ),
    ]
    if ft["status"] != "done":
        rows.append(("resume with", f"`{portable_command(ft['resume_command'])}`"))
        if ft.get("plan"):
            rows.append(
                (
                    "cost",
                    f"{ft['plan']['seconds_per_step']:.1f} s a step; at most "
                    f"{ft['plan']['projected_hours_to_cap']:.1f} h more to the step cap",
                )
            )
    return rows


def evaluation(f: Finetune) -> dict | None:
    """The evaluated model's exact match against length, its cliff and Cor 4.10 at it; None if not evaluated.

    Returns:
        ``{"rec", "when" (words), "short_when", "L" (longest training length), "ev" (lengths, counts, rates; the
        lengths past the task context appended), "beyond" (the record of those, or None), "n_ctx" (longest length
        in the task context), "cliff", "mf" (:func:`~accessibility_lib.runs.copying_report.mean_field_at_cliff`
        under ``l2_fp16``), "rate" (length → exact rate), "copied_past" (lengths > L copied ≥ 90 %)}``.
    """
    from accessibility_lib.theory import precision

    ft = f.ft
    if ft is None:
        return None
    if ft.get("runs"):
        rec = next(iter(ft["runs"].values()))
        when, short = f"the finished run ({rec['train']['steps']} steps)", "the finished run"
    elif ft.get("interim") and ft["interim"]["config"] == ft["settings"]:
        rec = ft["interim"]
        when = (
            f"**interim**: the checkpoint at step {rec['step']} of a run still training (its last check "
            f"before it: training exact match {rec['check_exact'][-1]:.3f})"
        )
        short = f"interim, step {rec['step']}"
    else:
        return None
    s = ft["settings"]
    beyond = rec.get("eval_beyond")
    ev = {k: list(v) + (list(beyond["eval"][k]) if beyond else []) for k, v in rec["eval"].items()}
    c = cliffs.locate_cliff(ev["length"], ev["exact"], rec["eval_params"]["n_strings"])
    mf = copying_report.mean_field_at_cliff(rec, c, rec["config"]["alphabet_size"], precision.L2_FP16)
    rate = dict(zip(ev["length"], ev["exact_rate"]))
    L = s["train_max_len"]
    return {
        "rec": rec,
        "when": when,
        "short_when": short,
        "L": L,
        "ev": ev,
        "beyond": beyond,
        "n_ctx": (s["context"] - 3) // 2,
        "cliff": c,
        "mf": mf,
        "rate": rate,
        "copied_past": [n for n in ev["length"] if n > L and rate[n] >= cliffs.NEAR_FULL],
    }


def evaluation_text(f: Finetune, e: dict | None) -> str:
    """The evaluation in a few sentences: what was tested, the cliff, Cor 4.10 at it, how far past L it copies."""
    if f.ft is None:
        return f"No SmolLM2-135M record at `{FINETUNE_ARTIFACT.name}` yet: run `scripts/copying_finetune.py --base smollm2-135m`."
    if e is None:
        return "Not evaluated yet: the run has neither finished nor been looked at with `--interim`."
    ev, L, c, m, s = e["ev"], e["L"], e["cliff"], e["mf"], f.settings
    out = [
        f"Evaluated on {e['rec']['eval_params']['n_strings']} held-out strings a length, lengths "
        f"{min(ev['length'])}–{max(ev['length'])}; {e['when']}."
    ]
    out.append(f"Fine-tuning filled the first {2 * L + 3} positions only (n ≤ {L}).")
    if e["beyond"]:
        out.append(
            f"Lengths past {e['n_ctx']} do not fit the task model's {s['context']}-token context; they run "
            f"with the base's own {e['beyond']['pretrained_positions']:,} positions."
        )
    out.append(f"The cliff: {copying_report.describe_cliff(c)}.")
    tail = (
        f", far past the longest length tried ({max(ev['length']):,})"
        if c.kind == "beyond"
        else f", {m['orders']:.0f} orders of magnitude beyond it"
        if math.isfinite(m["orders"])
        else ""
    )
    out.append(f"Cor 4.10 gives log10 n* = {m['log10_nstar']:.0f} at d = {m['d']}{tail}.")
    if e["copied_past"]:
        far = max(e["copied_past"])
        out.append(
            f"Trained on n ≤ {L}, it copies ≥ {100 * cliffs.NEAR_FULL:.0f} % of the held-out strings up to "
            f"n = {far} ({far / L:.1f} L)."
        )
    return " ".join(out)
