"""Projected cost of a plan's unfinished units, from the finished ones (token-steps and hours)."""

from __future__ import annotations

import numpy as np
import pytest

from accessibility_lib.runs.cramming_cost import measured_rate, plan_projection, projected_token_steps
from accessibility_lib.runs.cramming_summary import UnitSummary


def _u(kind, m, state, ts, secs=None, steps=300, inst="paper", dtype="float32", n_targets=10):
    z = np.zeros(0)
    return UnitSummary(
        f"{kind}/m{m}/{steps}/{inst}/{dtype}/t{n_targets}",
        kind,
        m,
        steps,
        state,
        z,
        z,
        z,
        None,
        0,
        0,
        secs,
        instrument=inst,
        dtype=dtype,
        token_steps=ts,
        n_targets=n_targets,
    )


def test_projection_scales_the_nearest_finished_unit_by_m_budget_and_targets():
    done = [_u("natural", 1, "complete", 100_000, 500.0), _u("natural", 2, "complete", 210_000, 1500.0)]
    assert measured_rate(done) == pytest.approx(310_000 / 2000.0)
    assert projected_token_steps(_u("natural", 3, "pending", 0), done) == pytest.approx(210_000 * 1.5)
    assert projected_token_steps(_u("natural", 1, "pending", 0, steps=600), done) == pytest.approx(200_000)
    assert projected_token_steps(_u("natural", 1, "pending", 0, n_targets=20), done) == pytest.approx(200_000)
    # a partial unit never projects below what it has spent
    assert projected_token_steps(_u("natural", 1, "partial", 400_000, steps=600), done) == 400_000


def test_no_projection_without_a_comparable_unit_and_other_dtypes_are_not_references():
    done = [_u("natural", 1, "complete", 100_000, 500.0, dtype="bfloat16")]
    assert projected_token_steps(_u("natural", 2, "pending", 0), done) is None
    assert measured_rate(done) is None and measured_rate(done, "bfloat16") == pytest.approx(200.0)
    p = plan_projection(done + [_u("natural", 2, "pending", 0)])
    assert p["rate_token_steps_per_s"] is None and p["hours_one_worker"] is None
    assert p["units"][0]["projected_token_steps"] is None
    # progressive growth is not projected from a fixed-length optimiser
    fixed = [_u("natural", 1, "complete", 100_000, 500.0)]
    assert projected_token_steps(_u("natural", 1, "pending", 0, inst="progressive"), fixed) is None
    assert projected_token_steps(_u("natural", 1, "pending", 0, inst="lr1e-1"), fixed) == pytest.approx(100_000)


def test_hours_left_add_up():
    done = [_u("random_words", 1, "complete", 36_000, 360.0)]
    p = plan_projection(done + [_u("random_words", 2, "partial", 36_000), _u("random_words", 4, "pending", 0)])
    assert [r["hours_left_one_worker"] for r in p["units"]] == [0.1, 0.4]
    assert p["hours_one_worker"] == pytest.approx(0.5)
