"""The scale plan: FLOP counts against PyTorch's own counter on stand-ins at two sizes, search, chunking, page."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from accessibility_lib.experiments.sidetest import side_test
from accessibility_lib.models import standin_build, standins
from accessibility_lib.runs import flops, scaleplan, scaleplan_page

ROOT = Path(__file__).resolve().parents[2]
GIB = 2.0**30


def _eager(name: str, d: int, layers: int):
    from transformers import AutoModelForCausalLM

    arch = standins.shrink(standins.architecture(name), d, layers)
    model = AutoModelForCausalLM.from_config(standin_build.build_config(arch), attn_implementation="eager")
    return arch, model.eval()  # eager attention: its products are matmuls the counter sees (SDPA on CPU is not)


@pytest.mark.parametrize(
    "name", ["EleutherAI/pythia-160m", "Qwen/Qwen2.5-0.5B", "meta-llama/Llama-3.2-1B", "google/gemma-3-270m"]
)
@pytest.mark.parametrize("d, layers", [(32, 2), (64, 3)])
def test_flop_counts_equal_pytorchs_counter_at_two_sizes(name, d, layers):
    arch, model = _eager(name, d, layers)
    B, T, keep = 2, 12, 5
    ids = torch.randint(0, 1000, (B, T))
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        model(input_ids=ids, logits_to_keep=keep)
    assert fc.get_total_flops() == B * flops.forward_flops(arch, T, keep)
    model.requires_grad_(False)  # cramming: the weights are frozen, the gradient goes to the prompt
    x = model.get_input_embeddings()(ids).detach().requires_grad_(True)
    with FlopCounterMode(display=False) as fc:
        model(inputs_embeds=x, logits_to_keep=keep).logits.logsumexp(-1).sum().backward()
    assert fc.get_total_flops() == B * flops.step_flops(arch, T, keep, "cram")
    model.requires_grad_(True)  # training: gradients to the weights as well
    with FlopCounterMode(display=False) as fc:
        model(input_ids=ids).logits.logsumexp(-1).sum().backward()
    assert fc.get_total_flops() == B * flops.step_flops(arch, T, T, "train")


def test_cramming_search_is_simulated_with_the_chapters_own_search():
    lengths = scaleplan.cramming_lengths(n50=90.4, m=1, n_targets=20)
    full = sorted(n for n, count in lengths if count == 20)  # the two lengths that pin the crossing
    assert len(full) == 2 and full[0] < 90.4 < full[1] and full[1] - full[0] <= 0.25 * full[0] + 1
    probes = [n for n, count in lengths if count < 20]
    test = side_test(20)
    first = next(j for j, a in zip(test.looks, test.thresholds) if a <= j)  # the first look that can decide
    assert {count for _, count in lengths if count < 20} == {first}  # a step curve settles a side at once
    assert min(probes) == 12 and probes == sorted(probes)  # from the 12·m start, growing by 1.5 to the crossing


def test_chunked_steps_fit_the_budget_and_would_not_in_one_piece():
    cells = next(r for r in scaleplan.chunking("paper") if "cell samples" in r["step"])
    assert cells["whole_bytes"] == 10**7 * 262_144 * 4  # 10^7 points × |V| float32 logits, by hand
    assert cells["whole_bytes"] / GIB > scaleplan.GPU["memory_gib"]
    cos = next(r for r in scaleplan.chunking("paper") if "pairwise cosines" in r["step"])
    assert cos["whole_bytes"] == 110_000**2 * 4 and cos["whole_bytes"] / GIB > scaleplan.MEMORY_BUDGET_GIB
    assert all(r["chunked_bytes"] / GIB <= scaleplan.MEMORY_BUDGET_GIB for r in scaleplan.chunking("paper"))


def test_schedule_is_longest_first():
    assert scaleplan_page.schedule([4, 1, 1, 1, 1], 2) == 4
    assert scaleplan_page.schedule([3, 3, 2, 2, 2], 2) == 7  # LPT, not the optimum 6
    assert scaleplan_page.schedule([5, 1, 2], 8) == 5


def test_plan_covers_every_heavy_chapter_and_model_of_the_paper_preset():
    works = scaleplan.plan("paper")
    support = {w.model for w in works if w.chapter == "support"}
    assert len(support) == 7 and "google/gemma-3-270m" in support
    assert sum(w.chapter == "cramming" and w.swept for w in works) == 2  # one sweep unit per target kind
    assert {w.chapter for w in works} == {"argmax_cells", "cramming", "mean_field", "support", "copying"}
    assert all(w.memory / GIB < scaleplan.GPU["memory_gib"] for w in works)
    s = scaleplan_page.summary("paper", {"eta": {"cram": 0.5, "forward": 0.5, "cells": 0.5, "train": 0.5}})
    assert s.total_8 < s.total_1 and s.total_8 >= max(r["seconds_8"] for r in s.rows)


def test_book_page_is_current():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "scale_plan.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
