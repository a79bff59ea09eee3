"""Chapter 4's presentation (accessibility_lib.figures.meanfield_report), names in prose (models.names) and the
ε conventions in plain words (theory.precision.plain_name): what each prints, against hand-made inputs."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from accessibility_lib.figures import meanfield_report as MR  # noqa: E402
from accessibility_lib.models.names import label  # noqa: E402
from accessibility_lib.theory import bounds, meanfield, precision  # noqa: E402


def _sweep(scale: float, ms=(3, 6), n_prompts=2, n_layers=2) -> dict:
    k = len(ms)
    return {
        "ms": np.array(ms),
        "perm_layers": np.full((k, n_prompts, n_layers), scale),
        "dup_layers": np.full((k, n_prompts, n_layers), 2 * scale),
        "perm_tv": np.full((k, n_prompts), scale / 10),
        "dup_tv": np.full((k, n_prompts), scale / 5),
    }


def test_round_up_never_rounds_a_maximum_down():
    assert MR.round_up(0.000123) == "0.00013" and MR.round_up(0.0) == "0" and MR.round_up(1.0) == "1"
    assert float(MR.round_up(3.01e-7)) >= 3.01e-7
    with pytest.raises(ValueError):
        MR.round_up(-1.0)


def test_structural_table_gives_medians_at_the_longest_m():
    text = MR.structural_table({"free": _sweep(1e-7), "shipped": _sweep(0.3)}, 2, 6, "nano")
    assert "at m = 6 (nano)" in text
    assert "| shipped | 3.0e-01 | 3.0e-02 | 6.0e-01 | 6.0e-02 |" in text


def test_real_decoders_text_states_the_tolerance_and_fails_past_it():
    text, top = MR.real_decoders_text(_sweep(1e-7), _sweep(0.3), {}, ms=[3, 6], n_prompts=2, real_prompts=2,
                                      model_label="nano")  # fmt: skip
    assert top == "2e-07" and "at most 2e-07" in text and "by 0.6 (relative, median)" in text
    real, _ = MR.real_decoders_text(_sweep(1e-7), _sweep(0.3), {"smollm2-135m": _sweep(0.5, ms=(8, 32))}, ms=[3, 6],
                                    n_prompts=2, real_prompts=2, model_label="nano")  # fmt: skip
    assert "For SmolLM2-135M as shipped (medians over 2 prompts at m = 32" in real and "smollm2" not in real
    with pytest.raises(AssertionError, match="fp32 tolerance"):
        MR.real_decoders_text(_sweep(1e-3), _sweep(0.3), {}, ms=[3, 6], n_prompts=2, real_prompts=2, model_label="x")


def _summary(tv0: float, flips: int) -> dict:
    return {"n": 10, "median": 0.2, "q25": 0.1, "q75": 0.3, "q90": 0.4, "max": 0.5, "tv_at_w0": tv0, "n_w0": 4,
            "flips_at_w0": flips, "w_flip_min": 0.5}  # fmt: skip


def test_wasserstein_verdict_says_whether_a_precision_can_exist():
    ro = {"tv": np.array([0.1, 0.2]), "argmax_changed": np.array([True, False])}
    text, verdict = MR.wasserstein_verdict(_summary(1e-8, 0), _summary(0.05, 2), ro, [("shipped", 0.5)], rms=1.0,
                                           model_label="nano")  # fmt: skip
    assert "no Wasserstein precision" in verdict and "in 2 of 4 pairs" in verdict
    assert "1 of 2 prompts" in text and "not rounding" in text
    _, verdict0 = MR.wasserstein_verdict(_summary(1e-8, 0), _summary(0.05, 0), ro, [], rms=1.0, model_label="nano")
    assert "not a precision" in verdict0


def test_lipschitz_table_and_scatter_count_the_pairs():
    ro = {"free": {"tv": np.array([0.1, 0.3]), "argmax_changed": np.array([True, True])}}
    text = MR.lipschitz_table({"free": _summary(1e-8, 0)}, ro, 1.0)
    assert "| free | 10 | 0.2 | 0.1 – 0.3 | 0.4 | 0.5 | 1.0e-08 (4) | 0 of 4 | 0.5 |" in text
    assert "fewer than 20 pairs" in text and "2 of 2" in text
    pairs = {"free": {"w": np.array([0.0, 1.0, 2.0]), "tv": np.array([0.0, 0.0, 0.1]),
                      "kind": np.array(["permute", "noise", "noise"])}}  # fmt: skip
    fig, note = MR.plot_lipschitz(pairs, 1.0)
    assert note.endswith("free: 1 of 3") and fig.axes


def test_crossover_table_rows_are_the_library_bounds():
    text = MR.crossover_table([4, 1, 4], 26, 1.0)
    rows = [line for line in text.splitlines() if line.startswith("| 1 ") or line.startswith("| 4 ")]
    assert len(rows) == 4  # widths deduplicated and sorted, two precisions each
    d, ratio = 4, 4096.0
    want = f"| {d} | {ratio:g} | {bounds.mean_field_loglog_count(d, ratio / 2, 1.0, 1.0):.4g} "
    assert any(r.startswith(want) for r in rows)
    assert f"{meanfield.crossover_log_m(d, ratio / 2, 1.0, 1.0):.4g}" in text


def test_plot_bounds_reports_the_widest_width():
    fig, d_max, loglog = MR.plot_bounds(1.0)
    assert d_max == 100000 and math.isclose(loglog, bounds.mean_field_loglog_count(d_max, 2048.0, 1.0, 1.0))
    assert len(fig.axes) == 2


def test_model_labels_and_plain_convention_names_hold_no_code_name():
    assert label("smollm2-135m") == "SmolLM2-135M" and label("standin:gemma-3-270m") == "stand-in of Gemma-3-270M"
    assert label("nano") == "nano"
    with pytest.raises(TypeError):
        label(3)
    for key in precision.CONVENTIONS:
        assert key not in precision.plain_name(key) or key == precision.plain_name(key), key
        assert "_" not in precision.plain_name(key)
    assert precision.plain_name("table1_pythia") == precision.CONVENTIONS["table1_pythia"].name
    with pytest.raises(ValueError, match="must be one of"):
        precision.plain_name("replication")


def test_the_explorers_conventions_carry_their_plain_names():
    from accessibility_lib.figures.widgets import conventions_table

    assert {c["key"]: c["plain"] for c in conventions_table()}["rinf_fp16"] == precision.plain_name("rinf_fp16")


def test_power_of_ten_gives_the_exponent_as_a_superscript():
    import math

    from accessibility_lib.figures.meanfield_report import power_of_ten

    assert power_of_ten(2771 * math.log(10) + math.log(9.99)) == "10²⁷⁷¹" and power_of_ten(0.0) == "10⁰"
    with pytest.raises(ValueError):
        power_of_ten(float("nan"))
