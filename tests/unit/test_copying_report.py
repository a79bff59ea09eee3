"""Chapter 6's study in words and numbers: artifacts, cliff phrasing, and Cor 4.10 at the measured cliffs."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from accessibility_lib.experiments import cliffs
from accessibility_lib.runs import copying_outcomes as CO
from accessibility_lib.runs import copying_report as R
from accessibility_lib.runs import presets
from accessibility_lib.runs.work import copying_runs
from accessibility_lib.theory import precision

N = np.array([2, 4, 6, 7, 8, 9, 10, 11, 12, 14])


def _run(label, counts, base="scratch", L=8):
    return {"label": label, "cliff": cliffs.locate_cliff(N, counts, 50), "cfg": None, "base": base, "L": L}


def test_cliffs_are_phrased_as_the_data_allow():
    step = cliffs.locate_cliff(N, 50 * (N <= 8), 50)
    assert R.describe_cliff(step) == "a step between 8 and 9" and R.cliff_position(step) == "8–9 (step)"
    fall = cliffs.locate_cliff(N, [50, 50, 50, 50, 48, 30, 5, 0, 0, 0], 50)
    assert R.describe_cliff(fall).startswith("a fall, n50 = 9.") and "R² = " in R.describe_cliff(fall)
    assert "(2 lengths inside the fall)" in R.describe_cliff(fall) and "again" not in R.describe_cliff(fall)
    one = cliffs.locate_cliff(N, [50, 50, 50, 50, 50, 50, 5, 0, 0, 0], 50)
    assert "(one length inside the fall: R² near 1 by construction, and the range is where" in R.describe_cliff(one)
    assert (one.low, one.high) == (9, 10)  # 5 of 50 at n = 10: its Wilson interval lies below ½; model-free
    assert "k not measured (separated data: the one length inside places n50)" in R.describe_cliff(one)
    assert "k = " not in R.describe_cliff(one)  # the fit's bound on k is not printed as a measurement
    assert R.describe_cliff(fall, short=True) == R.describe_cliff(fall).split(", k = ")[0]
    assert "separated data" not in R.describe_cliff(fall)  # two lengths inside: k is measured
    # a curve that copies again after a length copied never: the rebound is named with its count
    back = cliffs.locate_cliff(N, [50, 50, 50, 50, 49, 20, 0, 0, 13, 0], 50)
    assert list(back.data.rebounds) == [12]
    assert R.describe_cliff(back).endswith("; copied again at n = 12, 13 of 50, after a shorter length copied never)")
    assert back.data.n_informative == 1  # 49 of 50 is the plateau, 13 of 50 after a 0 a rebound
    assert R.rebound_text(step) == ""
    # a re-check on fresh strings (scripts/copying_recheck.py): the rebound is the model's only if every fresh
    # seed copies at the rebound and none in the gap before it
    entry = {"lengths": list(N), "n_strings": 50, "study_seed": 0, "reproduced": True,
             "counts": {"0": [50, 50, 50, 50, 49, 20, 0, 0, 13, 0], "1": [50, 50, 50, 50, 50, 22, 0, 0, 26, 0],
                        "2": [50, 50, 50, 50, 49, 20, 0, 0, 23, 1]}}  # fmt: skip
    held = R.recheck_text(back, entry)
    assert "it copied n = 12: 26 and 23 of 50, and none at n = 10–11: the rebound is the model's" in held
    assert "counts reproduced exactly" in held and "2 fresh sets of 50" in held
    entry["counts"]["2"][8] = 0  # one fresh seed copies nothing at the rebound
    assert R.recheck_text(back, entry).endswith("the rebound did not reproduce on fresh strings")
    entry["reproduced"] = False
    assert "NOT reproduced" in R.recheck_text(back, entry)
    assert R.recheck_text(back, None) == "" and R.recheck_text(step, entry) == ""
    assert R.cliff_position(cliffs.locate_cliff(N, np.full(10, 50), 50)) == "> 14"
    assert R.cliff_position(cliffs.locate_cliff(N, np.zeros(10), 50)) == "< 2"
    a, b = _run("L = 8", 50 * (N <= 8)), _run("L = 11", 50 * (N <= 11))
    assert R.describe_move(a, b).startswith("the cliff moved out: a step between 8 and 9 (L = 8)")
    assert R.describe_move(b, a).startswith("the cliff moved in")
    same = R.describe_move(a, _run("d = 64", 50 * (N <= 8)))
    assert same.startswith("the same step between 8 and 9") and "8.5" not in same


def test_cor_4_10_at_a_cliff_is_vacuous_and_the_numbers_invert():
    """n* at the model's ε is far beyond the cliff; at ratio_needed it is the cliff; at 2r/ε = 1 it is the
    coarsest n*, which a falsifying test must reach: only widths up to widest_testable get there."""
    step = cliffs.locate_cliff(N, 50 * (N <= 8), 50)
    rec = {"d_model": 64, "r": 8.0, "r_inf": 2.0}
    m = R.mean_field_at_cliff(rec, step, 26, precision.L2_FP16)
    assert m["cliff"] == 8.5 and m["ratio"] == pytest.approx(2**12 * 8.0 / 2.0)
    assert m["orders"] == pytest.approx(m["log10_nstar"] - math.log10(8.5)) and m["orders"] > 100
    assert 10 ** cliffs.mean_field_cliff_log10(64, m["ratio_needed"] / 2, 1.0, 26) == pytest.approx(8.5, rel=1e-6)
    assert m["ratio_needed"] < 1  # ε wider than the ball's diameter: a model that tells no two prompts apart
    assert m["coarsest_log10"] == pytest.approx(cliffs.mean_field_cliff_log10(64, 0.5, 1.0, 26))
    for n in (8, 30, 1000):
        d = R.widest_testable(n, 26)
        assert R.coarsest_nstar_log10(d, 26) <= math.log10(n) < R.coarsest_nstar_log10(d + 1, 26)
    assert R.widest_testable(30, 26) == 5 and R.widest_testable(1.0, 26) == 0
    beyond = cliffs.locate_cliff(N, np.full(10, 50), 50)  # beyond every length: compared at its finite end
    assert R.mean_field_at_cliff(rec, beyond, 26, precision.L2_FP16)["cliff"] == 14
    with pytest.raises(ValueError, match="positive length"):
        R.widest_testable(0, 26)
    with pytest.raises(ValueError, match="alphabet_size"):
        R.coarsest_nstar_log10(8, 1)


def _record(cfg, params, label):
    ev = {
        "length": params["eval_lengths"],
        "exact": [50 if n <= cfg.train_max_len else 0 for n in params["eval_lengths"]],
    }
    return {"label": label, "config": cfg.key(), "eval_params": CO.eval_params(params), "eval": ev}


def test_the_chapter_shows_only_artifact_runs_of_its_exact_config(tmp_path):
    params = presets.resolve("copying", "smoke", check_machine=False)
    (l0, c0), (l1, c1) = copying_runs(params)[:2]
    path = tmp_path / "study.json"
    CO.write_artifact(path, {"preset": "smoke"}, l0, _record(c0, params, l0))
    runs, missing = R.gather_runs(copying_runs(params), params, CO.load_artifact(path))
    assert [r["label"] for r in runs] == [l0] and l1 in missing and runs[0]["source"] == "artifact"
    assert runs[0]["cliff"].kind == "step" and runs[0]["cliff"].low == c0.train_max_len
    # another evaluation (or a changed training setting) is another run: not shown from the artifact
    other = {**params, "n_strings": params["n_strings"] + 1}
    assert R.gather_runs(copying_runs(other), other, CO.load_artifact(path))[0] == []
    # what the artifact lacks is computed when the chapter passes a compute function, and only that
    asked = []
    runs, missing = R.gather_runs(copying_runs(params), params, CO.load_artifact(path),
                                  compute=lambda label, cfg: asked.append(label) or _record(cfg, params, label))  # fmt: skip
    assert missing == [] and l0 not in asked and l1 in asked and {r["source"] for r in runs} == {"artifact", "computed"}


def test_concurrent_writers_keep_each_others_runs(tmp_path):
    path = tmp_path / "a.json"

    def write(i):
        for j in range(20):
            CO.write_artifact(path, {"status": "x"}, f"run {i}-{j}", {"i": i, "j": j})

    threads = [threading.Thread(target=write, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(CO.load_artifact(path)["runs"]) == 60


def test_plots_draw_a_step_as_its_band_and_a_fall_as_its_fit():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from accessibility_lib.experiments.copying import wilson_interval
    from accessibility_lib.figures import copying_plots

    def rec(counts):
        lo, hi = wilson_interval(np.asarray(counts), 50)
        p = np.asarray(counts) / 50
        return {"label": "x", "eval": {"length": N, "exact_rate": p, "ci_low": lo, "ci_high": hi, "char_acc": p}}

    fig, (a1, a2, a3) = plt.subplots(1, 3)
    step_counts, fall_counts = 50 * (N <= 8), [50, 50, 50, 50, 48, 30, 5, 0, 0, 0]
    copying_plots.exact_panel(a1, rec(step_counts), cliffs.locate_cliff(N, step_counts, 50), 8, "C0")
    copying_plots.exact_panel(a2, rec(fall_counts), cliffs.locate_cliff(N, fall_counts, 50), 8, "C1")
    labels1, labels2 = a1.get_legend_handles_labels()[1], a2.get_legend_handles_labels()[1]
    assert any("step" in s for s in labels1) and not any("logistic" in s for s in labels1)
    assert any("logistic" in s for s in labels2) and not any("step" in s for s in labels2)
    series = [("a", [(4, cliffs.locate_cliff(N, step_counts, 50))]), ("b", [(4, cliffs.locate_cliff(N, step_counts, 50))]),
              ("c", [(8, cliffs.locate_cliff(N, np.full(10, 50), 50))])]  # fmt: skip
    copying_plots.cliff_against(a3, series, ["C0", "C1", "C2"], spread=0.5)
    x_of = {line.get_label(): float(line.get_xdata()[0]) for line in a3.get_lines()}
    assert x_of["a"] == pytest.approx(3.75) and x_of["b"] == pytest.approx(4.0)  # equal ranges side by side
    arrows = [c for c in a3.get_children() if type(c).__name__ == "Annotation"]
    assert len(arrows) == 1 and x_of["c"] == pytest.approx(8.25)  # "beyond": an arrow up from the longest length
    plt.close(fig)


def test_the_finetune_script_writes_a_resumable_record(tmp_path):
    """scripts/copying_finetune.py on the small pretrained nano: the record names its command, steps, wall time and
    training accuracy while training (at each checkpoint) and the evaluated outcome when done."""
    import json
    import os
    import subprocess
    import sys

    from accessibility_lib.ground.paths import REPO_ROOT

    out = tmp_path / "finetune_nano.json"
    env = {**os.environ, "ACCESSIBILITY_RESULTS": str(tmp_path / "store"), "PYTHONPATH": str(REPO_ROOT)}
    cmd = [sys.executable, str(REPO_ROOT / "scripts" / "copying_finetune.py"), "--base", "nano", "--max-steps", "4",
           "--checkpoint-every", "2", "--out", str(out)]  # fmt: skip
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "step 2/4" in proc.stdout  # a checkpoint (and a partial record) before the end
    art = json.loads(out.read_text())
    assert art["status"] == "done" and art["settings"]["max_steps"] == 4 and art["progress"]["step"] == 4
    assert art["provenance"]["command"].startswith("env PYTHONPATH=. .venv/bin/python scripts/copying_finetune.py")
    assert "--checkpoint-every 2" in art["resume_command"] and art["progress"]["seconds"] > 0
    (rec,) = art["runs"].values()
    assert rec["train"]["steps"] == 4 and len(rec["eval"]["exact"]) == len(art["eval_params"]["eval_lengths"])
    assert not list((tmp_path / "store").rglob("*.ckpt"))  # the checkpoint goes once the run is stored
    # an interim evaluation needs a run in progress: a finished one says so and changes nothing
    proc = subprocess.run(cmd + ["--interim"], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0 and "no checkpoint of this run" in proc.stderr
    assert json.loads(out.read_text()) == art


def test_step_cost_artifact_is_a_measurement_of_both_steps():
    """Chapter 6's LoRA argument reads this artifact (benchmarks/bench_finetune_step.py): the medians are of the
    stored steps, and a frozen step, which skips the weight gradients and the optimiser, is the cheaper one."""
    import statistics

    from accessibility_lib.runs import copying_outcomes

    cost = copying_outcomes.load_artifact(copying_outcomes.STEP_COST_ARTIFACT)
    assert cost is not None, "book/data/copying/finetune_step_cost.json is committed"
    assert cost["full"] == statistics.median(cost["full_steps"])
    assert cost["all_frozen"] == statistics.median(cost["all_frozen_steps"])
    assert 0 < cost["all_frozen"] < cost["full"]
    assert cost["lora_saving_at_most"] == 1 - cost["all_frozen"] / cost["full"]
    assert {"machine", "command", "date"} <= set(cost["provenance"]) and len(cost["load_average"]) == 2


def test_recheck_artifact_matches_the_study_it_rechecks():
    """book/data/copying/recheck.json (scripts/copying_recheck.py): each entry's study-seed counts are the study's
    own, as its ``reproduced`` flag says, over the study's lengths and string count."""
    art = CO.load_artifact(CO.COPYING_DATA / "recheck.json")
    assert art and art["runs"], "the re-check artifact is committed"
    study = CO.load_artifact(CO.STUDY_ARTIFACT)["runs"]
    for label, e in art["runs"].items():
        rec = study[label]
        assert e["lengths"] == rec["eval"]["length"] and e["n_strings"] == rec["eval_params"]["n_strings"]
        assert e["reproduced"] == (e["counts"][str(e["study_seed"])] == rec["eval"]["exact"])
        assert all(
            len(c) == len(e["lengths"]) and all(0 <= k <= e["n_strings"] for k in c) for c in e["counts"].values()
        )
