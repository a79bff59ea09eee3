"""The scale plan as a page: totals per chapter and model, the schedule on one and eight GPUs, Markdown tables.

Reads :mod:`accessibility_lib.runs.scaleplan` (the work and memory of every step) and the measured CPU
throughput (``book/data/scale/cpu_throughput.json``); ``scripts/scale_plan.py`` writes its tables into
``book/scale.md``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from accessibility_lib.runs.flops import GIB
from accessibility_lib.runs.scaleplan import (
    GPU,
    HOST_CORES,
    MEMORY_BUDGET_GIB,
    THROUGHPUT_PATH,
    Work,
    chunking,
    plan,
)


def _si(x: float, unit: str = "") -> str:
    if x == 0:
        return "–"
    for k, p in (("E", 18), ("P", 15), ("T", 12), ("G", 9), ("M", 6), ("k", 3)):
        if abs(x) >= 10**p:
            return f"{x / 10**p:.3g} {k}{unit}"
    return f"{x:.3g} {unit}".strip()


def _time(s: float) -> str:
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def gpu_from_check(report: dict) -> dict:
    """The GPU rates measured by ``benchmarks/gpu_check.py --json`` in the form :func:`summary` takes."""
    return {
        "name": f"{report.get('device', 'GPU')} (measured by gpu_check)",
        "float32": report["matmul_float32"],
        "bfloat16": report["matmul_bfloat16"],
        "memory_gib": GPU["memory_gib"],
    }


def markdown(preset: str = "paper", throughput: dict | None = None, gpu: dict | None = None) -> str:
    """The plan's tables as Markdown (what ``scripts/scale_plan.py`` writes into book/scale.md).

    ``gpu``: measured rates (:func:`gpu_from_check`) instead of the nominal :data:`GPU`.
    """
    th = throughput or load_throughput()
    s = summary(preset, th, gpu)
    lines = [
        f"Times on one {s.gpu['name']} ({_si(s.gpu['float32'], 'FLOP/s')} float32, "
        f"{_si(s.gpu['bfloat16'], 'FLOP/s')} bfloat16, dense) at the fraction η of that rate measured on "
        f"this machine's CPU ({th['machine']}, {th['date']}): "
        + ", ".join(f"{k} η = {v:.2f}" for k, v in sorted(s.eta.items()))
        + f". The support's geometry fits run on the host ({HOST_CORES} cores at the one-thread rate measured here); "
        "the cell points are drawn on the host too, which these times do not count.",
        "",
        "| chapter | model | work items | tokens forwarded | optimiser steps | MC points | FLOP | peak memory | 1 GPU "
        "| 8 GPUs |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in s.rows:
        lines.append(
            f"| {r['chapter']} | {r['model']} | {r['units']} | {_si(r['tokens'])} | {_si(r['steps'])} | "
            f"{_si(r['samples'])} | {_si(r['flops'])} | {r['memory'] / GIB:.2f} GiB | "
            f"{_time(r['seconds_1'])} | {_time(r['seconds_8'])} |"
        )
    lines += [
        "",
        f"**Whole preset:** {_time(s.total_1)} on one GPU, {_time(s.total_8)} on eight (the sweep's "
        "units spread longest first; the other chapters after it on one GPU). Work items are the sweep's units "
        "(for cramming, one per target kind, every m in order) and each chapter's other steps (cramming's "
        "embedding sample for r). The theory chapter is closed forms (seconds). The precision chapter "
        "(chapter 7) is not in this plan: its cost is not counted here.",
        "",
        f"Steps whose working set in one piece would exceed the budget (or a whole GPU), and their chunking "
        f"(budget {MEMORY_BUDGET_GIB:g} GiB a step):",
        "",
        "| step | in one piece | chunked working set | how |",
        "|---|---|---|---|",
    ]
    for c in chunking(preset):
        whole, part = c["whole_bytes"] / GIB, c["chunked_bytes"] / GIB
        assert part <= MEMORY_BUDGET_GIB, c  # the plan's promise, checked every time it is written
        step, how = (c[k].replace("|", "\\|") for k in ("step", "how"))  # a | inside a table cell
        lines.append(f"| {step} | {whole:,.1f} GiB | {part:.3f} GiB | {how} |")
    if th.get("sizes"):
        lines += [
            "",
            "The plan against a measured run (CPU, one thread, the Pythia-160M stand-in at two sizes): "
            "measured time ratio against the ratio of the plan's FLOP counts.",
            "",
            "| work | small stand-in | large stand-in | FLOP ratio (plan) | time ratio (measured) | measured / plan |",
            "|---|---|---|---|---|---|",
        ]
        for kind, m in th["sizes"].items():
            lines.append(
                f"| {kind} | {m['small']} | {m['large']} | {m['flop_ratio']:.2f} | {m['time_ratio']:.2f} | "
                f"{m['time_ratio'] / m['flop_ratio']:.2f} |"
            )
    return "\n".join(lines)


def schedule(durations: list[float], workers: int) -> float:
    """Makespan of independent units on ``workers`` devices, longest first to the least loaded (LPT)."""
    loads = [0.0] * max(1, int(workers))
    for t in sorted(durations, reverse=True):
        i = loads.index(min(loads))
        loads[i] += t
    return max(loads)


def load_throughput(path: Path | None = None) -> dict:
    """The measured CPU throughput (η per kind of work; see ``benchmarks/bench_scale_plan.py``).

    Raises:
        FileNotFoundError: no measurement stored; the message names the command that writes it.
    """
    path = Path(path or THROUGHPUT_PATH)
    if not path.exists():
        raise FileNotFoundError(
            f"no throughput measurement at {path}; write it with "
            "`.venv/bin/python benchmarks/bench_scale_plan.py --write`"
        )
    return json.loads(path.read_text())


@dataclass
class Summary:
    """Per chapter and model: the summed work and the estimated times (seconds) on 1 and on 8 GPUs."""

    rows: list[dict] = field(default_factory=list)
    total_1: float = 0.0
    total_8: float = 0.0
    gpu: dict = field(default_factory=dict)
    eta: dict = field(default_factory=dict)


def summary(
    preset: str = "paper", throughput: dict | None = None, gpu: dict | None = None, workers: int = 8
) -> Summary:
    """The plan of ``preset`` per chapter and model, with times on one GPU and on ``workers``.

    Args:
        throughput: η per kind of work (default: :func:`load_throughput`).
        gpu: rates per dtype (default :data:`GPU`; pass gpu_check's measured rates).
    """
    gpu = dict(gpu or GPU)
    th = throughput or load_throughput()
    eta = th["eta"]
    host = th.get("matmul_flops", 1e11) * HOST_CORES  # the host's cores, each at the measured one-thread rate
    works = plan(preset)

    def seconds(w: Work) -> float:
        return sum(f / host if kind == "host" else f / (eta[kind] * gpu[w.dtype]) for kind, f in w.flops.items())

    rows: dict[tuple[str, str], dict] = {}
    for w in works:
        r = rows.setdefault(
            (w.chapter, w.model),
            {
                "chapter": w.chapter,
                "model": w.model,
                "units": 0,
                "tokens": 0.0,
                "steps": 0.0,
                "samples": 0.0,
                "flops": 0.0,
                "memory": 0.0,
                "seconds_1": 0.0,
                "durations": [],
                "swept": w.swept,
            },
        )
        r["units"] += 1
        for k in ("tokens", "steps", "samples"):
            r[k] += getattr(w, k)
        r["flops"] += sum(w.flops.values())
        r["memory"] = max(r["memory"], w.memory)
        r["seconds_1"] += seconds(w)
        r["durations"].append(seconds(w))
    out = list(rows.values())
    for r in out:
        r["seconds_8"] = schedule(r["durations"], workers) if r["swept"] else r["seconds_1"]
    swept = [seconds(w) for w in works if w.swept]
    rest = sum(seconds(w) for w in works if not w.swept)
    return Summary(out, sum(r["seconds_1"] for r in out), schedule(swept, workers) + rest, gpu, eta)
