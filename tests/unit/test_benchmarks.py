"""Every script in ``benchmarks/`` runs: its ``--help`` offers ``--tiny`` and its tiny mode exits 0.

A tiny mode runs the script's whole code path on sizes that take seconds (never the repository's result
store, never ``--write``/``--json`` into ``book/data``); it checks that the benchmark still runs against the
library as it is now (``bench_cramming.py`` failed with an ``ImportError`` after the n50 search moved), not
the numbers it prints. A benchmark measures ratios within one run; no test here times anything.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if not p.name.startswith("_"))
#: scripts whose tiny mode another test runs (the run is not repeated here)
RUN_ELSEWHERE = {"gpu_check.py": ("tests/site/test_paper_tiny.py", "def test_gpu_check_runs_on_cpu_with_tiny_sizes")}
#: scripts without a tiny mode yet, with who adds it: only ``--help`` runs for them. The test below fails as soon as
#: one gains ``--tiny`` (then move it out of this list, so that its tiny mode runs).
NO_TINY_YET: dict[str, str] = {}
#: tiny runs that need another script's tiny output first: script -> (producer, its argument, this one's argument)
NEEDS = {"bench_n50_design_bound.py": ("bench_n50_design_sim.py", "--json", "--sim")}


def _run(args: list[str], tmp_path: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    env = dict(os.environ, ACCESSIBILITY_PROGRESS="0", ACCESSIBILITY_RESULTS=str(tmp_path / "results"))
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def test_every_benchmark_is_listed_once():
    assert len(SCRIPTS) >= 15, SCRIPTS  # the folder was read
    assert set(RUN_ELSEWHERE) | set(NO_TINY_YET) | set(NEEDS) <= set(SCRIPTS)
    for script, (path, name) in RUN_ELSEWHERE.items():
        assert name in (ROOT / path).read_text(), f"{script}: {path} no longer holds {name}"


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_benchmark_runs_in_its_tiny_mode(script, tmp_path):
    helped = _run([f"benchmarks/{script}", "--help"], tmp_path, timeout=300)
    assert helped.returncode == 0, f"{script} --help failed:\n{helped.stdout[-2000:]}{helped.stderr[-3000:]}"
    has_tiny = "--tiny" in helped.stdout
    if script in NO_TINY_YET:
        assert not has_tiny, f"{script} has a --tiny mode now: remove it from NO_TINY_YET so that the suite runs it"
        return
    assert has_tiny, f"{script} has no --tiny mode (a seconds-long run of its whole code path, which this test runs)"
    if script in RUN_ELSEWHERE:
        return
    extra = []
    if script in NEEDS:
        producer, out_flag, in_flag = NEEDS[script]
        made = tmp_path / f"{producer}.json"
        first = _run([f"benchmarks/{producer}", "--tiny", out_flag, str(made)], tmp_path)
        assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
        extra = [in_flag, str(made)]
    proc = _run([f"benchmarks/{script}", "--tiny", *extra], tmp_path)
    assert proc.returncode == 0, f"{script} --tiny failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    assert proc.stdout.strip(), f"{script} --tiny printed nothing"


@pytest.mark.slow
def test_the_authors_sweep_of_bench_cramming():
    """Its doctests: from n = 10 in steps of 100 while the rate is above 0.9, then steps of 10 until below 0.1."""
    proc = subprocess.run(
        [sys.executable, "-m", "doctest", "-v", "benchmarks/bench_cramming.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "3 passed and 0 failed" in proc.stdout, proc.stdout[-2000:]
