"""The paper preset exercised before a GPU sees it: paper_tiny end to end, fallbacks that run, the GPU check."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from accessibility_lib.geometry import support
from accessibility_lib.ground.results import ResultStore
from accessibility_lib.models import standins
from accessibility_lib.runs import presets
from accessibility_lib.runs.preset_values import LOCAL_MODELS, MODEL_KEYS, PAPER_TINY_SIZES

ROOT = Path(__file__).resolve().parents[2]


def test_paper_tiny_is_the_paper_preset_with_standins_and_small_sizes():
    for chapter, by_name in presets.PRESETS.items():
        assert chapter in PAPER_TINY_SIZES, f"{chapter}: give paper_tiny its CI sizes in PAPER_TINY_SIZES"
        paper, tiny = by_name["paper"], by_name["paper_tiny"]
        sized = set(PAPER_TINY_SIZES[chapter])
        for key, value in paper.items():
            if key in sized:
                continue
            if key in MODEL_KEYS:  # every parameter that names models
                names = value if isinstance(value, list) else [value]
                got = tiny[key] if isinstance(tiny[key], list) else [tiny[key]]
                for real, stand in zip(names, got, strict=True):
                    if real in LOCAL_MODELS:
                        assert stand == real
                    else:  # every hub or fetched model has a stand-in of its architecture
                        assert stand == "standin:" + real and standins.architecture(stand).name == real
            else:
                assert tiny[key] == value, (chapter, key)  # the same m values, kinds, lengths, conventions ...
        if "device" in tiny:
            assert tiny["device"] == "cpu"


def test_support_fallback_holds_every_length_and_a_short_model_is_refused_before_any_work(tmp_path):
    handles, notes = support.load_available(["acme/missing-model"], "cpu", fallback=True, lengths=[4, 1024])
    assert [name for name, _ in handles] == ["random-tiny"] and handles[0][1].n_ctx >= 1024  # the fallback asked for
    assert any("acme/missing-model: skipped" in n for n in notes)
    store = ResultStore(tmp_path)
    res = support.analyse_model(
        handles[0][1], "random-tiny", n_prompts=2, lengths=[4, 1024], cell_samples=100, store=store
    )
    assert res.lengths == [4, 1024]
    with pytest.raises(ValueError, match=r"model 'nano' holds 256 tokens of context, but lengths \[1024\] exceed"):
        support.load_available(["nano"], "cpu", lengths=[4, 1024])
    nano, _ = support.load_available(["nano"], "cpu")
    empty = ResultStore(tmp_path / "empty")
    with pytest.raises(ValueError, match="model 'nano' holds 256 tokens"):
        support.analyse_model(nano[0][1], "nano", n_prompts=2, lengths=[4, 1024], cell_samples=100, store=empty)
    assert not (tmp_path / "empty").exists()  # refused before any embedding was computed


def _count(results: Path) -> dict:
    """Entries per namespace of a store (support embeddings: keyed by name@weights, those of chapter 5)."""
    counts = {ns.name: len(list(ns.glob("*.json"))) for ns in results.iterdir() if ns.is_dir()}
    counts["support_embeddings"] = sum("@" in k["model"] for k, _ in ResultStore(results).entries("embeddings"))
    return counts


@pytest.mark.slow
def test_paper_tiny_end_to_end_through_the_rerun_command_and_the_site(tmp_path):
    """The sweep's units into the store, every chapter in the TOC under paper_tiny through scripts/rerun.py
    (executing from the store: no cramming, support or copying work redone), then the site from those runs."""
    out = tmp_path / "paper_tiny"
    results = out / "results"
    env = {**os.environ, "ACCESSIBILITY_PROGRESS": "0", "HF_HUB_OFFLINE": "1"}
    sweep = subprocess.run(
        [
            sys.executable,
            "-m",
            "accessibility_lib.runs.sweeps",
            "--preset",
            "paper_tiny",
            "--device",
            "cpu",
            "--results",
            str(results),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert sweep.returncode == 0, sweep.stdout[-3000:] + sweep.stderr[-3000:]
    before = _count(results)
    rerun = subprocess.run(
        [sys.executable, "scripts/rerun.py", "--preset", "paper_tiny", "--device", "cpu", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=2400,
    )
    assert rerun.returncode == 0, rerun.stdout[-4000:] + rerun.stderr[-2000:]
    records = json.loads((out / "runs.json").read_text())
    from accessibility_lib.runs.rerun import toc_chapters

    assert [r["chapter"] for r in records] == toc_chapters() and all(r["status"] == "ok" for r in records)
    assert all(r["preset"] == "paper_tiny" for r in records)
    after = _count(results)
    for ns in ("cramming", "table1", "copying_train", "copying_eval", "sweep_units", "support_embeddings"):
        assert after.get(ns, 0) == before.get(ns, 0), (ns, before, after)  # the chapters only read these
    site = subprocess.run(
        [sys.executable, "scripts/build_from_runs.py", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert site.returncode == 0, site.stdout[-4000:] + site.stderr[-3000:]
    html = out / "_site" / "_build" / "html"
    assert (html / "index.html").exists()
    for stem in toc_chapters():
        page = (html / "book" / f"{stem}.html").read_text(encoding="utf-8")
        assert "Not run for this site" not in page and "run failed" not in page, stem
    status = (html / "book" / "status.html").read_text(encoding="utf-8")
    assert status.count("paper_tiny") >= len(toc_chapters())


@pytest.mark.slow
def test_gpu_check_runs_on_cpu_with_tiny_sizes(tmp_path):
    report = tmp_path / "gpu_check.json"
    proc = subprocess.run(
        [sys.executable, "benchmarks/gpu_check.py", "--device", "cpu", "--tiny", "--json", str(report)],
        cwd=ROOT,
        env={**os.environ, "ACCESSIBILITY_PROGRESS": "0"},
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    got = json.loads(report.read_text())
    for key in (
        "matmul_bfloat16",
        "cram_fraction_of_matmul",
        "batched_speedup",
        "cell_volumes_vs_matmul",
        "cells_identical",
        "standin_preset",
    ):
        assert key in got, key
    assert got["batched_same_outcomes"] == 1.0 and got["cells_identical"] == 1.0 and got["standin_preset"] == 1.0
    assert not got["failed"]
    bad = subprocess.run(
        [sys.executable, "benchmarks/gpu_check.py", "--device", "cuda:7", "--tiny"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode != 0 and "cuda:7" in bad.stderr
