"""Tests of accessibility_lib.experiments.prefix_closure and ``summarize(..., prefix_closure=True)``.

The closure rests on one fact about the model, checked here through the project's own cramming and
decoding paths: a soft prompt crammed for a target also forces every prefix of it (decoding is causal).
"""

from __future__ import annotations

import pytest
import torch

from accessibility_lib.experiments.cramming import cram
from accessibility_lib.experiments.prefix_closure import close_under_prefixes
from accessibility_lib.runs import cramming_summary as CS

torch.set_num_threads(1)


@pytest.mark.parametrize("n_given", [0, 1])
def test_a_prompt_crammed_for_a_target_forces_each_of_its_prefixes(n_given, make_tiny_neox):
    tiny = make_tiny_neox()
    g = torch.Generator().manual_seed(3)
    target = torch.randint(0, 64, (5,), generator=g).tolist()
    res = cram(tiny, [target], 4, seed=0, max_steps=300, lr=0.05, patience=300, n_given=n_given)
    assert res.success[0]
    # the stored prompt, checked again on each prefix: already crammed at its first check (0 updates)
    prefixes = [target[:n] for n in range(n_given + 1, len(target))]
    again = cram(
        tiny,
        prefixes,
        4,
        max_steps=1,
        lr=0.05,
        patience=1,
        n_given=n_given,
        init_prompts=res.prompts.repeat(len(prefixes), 1, 1),
    )
    assert again.success.all() and (again.steps == 0).all()


def test_failures_below_a_longer_success_of_the_same_passage_are_closed():
    rows = [
        {"n": 8, "target": 0, "success": False},
        {"n": 12, "target": 0, "success": True},
        {"n": 16, "target": 0, "success": False},  # above the longest success: stays a failure
        {"n": 8, "target": 1, "success": False},  # another passage: its own successes only
        {"n": 4, "target": 1, "success": True},
        {"n": 10, "target": 0, "success": True},
    ]
    closed, flipped = close_under_prefixes(rows)
    assert flipped == 1
    assert [r["success"] for r in closed] == [True, True, False, False, True, True]
    assert closed[0]["implied_by"] == 12 and "implied_by" not in closed[3]
    assert rows[0]["success"] is False  # the input is not modified


@pytest.mark.parametrize(
    "rows, match",
    [
        ([{"n": 3, "success": True}], "no target"),
        ([{"n": 0, "target": 0, "success": True}], "n must be >= 1"),
        ([{"n": 3, "target": -1, "success": False}], "target >= 0"),
    ],
)
def test_bad_outcomes_are_refused(rows, match):
    with pytest.raises(ValueError, match=match):
        close_under_prefixes(rows)


def _unit(kind, outcomes):
    return {
        "uid": f"{kind}/replication/m1/steps300/paper/float32",
        "kind": kind,
        "m": 1,
        "max_steps": 300,
        "length_convention": "first_given",
        "patience": None,
        "n_targets": 10,
        "instrument": "paper",
        "dtype": "float32",
        "design": "sequential",
        "settings": {"max_steps": 300, "patience": 300},
        "layout": {"n_given": 1},
        "state": "complete",
        "outcomes": outcomes,
    }


def _rows(table):
    return [{"n": n, "target": t, "success": s, "steps": 5 if s else 300} for n, t, s in table]


def test_summary_closes_natural_units_only_and_labels_them():
    # passage t succeeds up to 10 + t; the optimiser also failed once at 8 for passages 3 and 4
    table = [(n, t, n <= 10 + t and not (n == 8 and t in (3, 4))) for t in range(10) for n in (8, 12, 16, 20, 24)]
    art = {"format": 2, "model": "x", "units": [_unit("natural", _rows(table)), _unit("random_words", _rows(table))]}
    plain = {s.kind: s for s in CS.summarize(art)}
    closed = {s.kind: s for s in CS.summarize(art, prefix_closure=True)}
    assert closed["natural"].implied_successes == 2 and closed["random_words"].implied_successes == 0
    assert closed["natural"].budget_label.endswith("prefix-closed")
    assert not closed["random_words"].budget_label.endswith("prefix-closed")
    assert closed["natural"].rates[0] == 1.0 and plain["natural"].rates[0] == 0.8
    assert closed["natural"].fit.n50 > plain["natural"].fit.n50  # closing only raises success rates
    assert closed["random_words"].fit.n50 == plain["random_words"].fit.n50
    assert closed["natural"].failures == plain["natural"].failures - 2
