"""The test suite writes only inside its temporary folders and the tree's ignored paths, never under HOME.

Tests that start Ray, a kernel, matplotlib or a model run here again in a subprocess whose HOME is a fresh, empty
folder (and whose XDG, Jupyter, IPython, matplotlib and Hugging Face variables are unset, so that every default
resolves under it); the folder must still be empty afterwards. Two suites on one account otherwise share files such
as ``~/.ray/auth_token`` and ``~/.jupyter/lab/workspaces`` (the JupyterLab test keeps its folders under
``tmp_path``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: what runs under the fresh HOME: a Ray head and a sweep driver connecting to it (the suite's other Ray test, a local
#: Ray of two workers, takes minutes and starts Ray the same way); a tiny model built from a config (torch,
#: transformers); matplotlib's figures; a kernel started by papermill
UNDER_TEST = [
    "tests/unit/test_sweeps.py::test_a_ray_head_without_cpus_is_refused_before_any_unit",
    "tests/unit/test_cramming.py::test_fp16_model_is_refused",
    "tests/unit/test_plotting.py::test_legend_outside_covers_no_data",
    "tests/notebooks/test_jupyter_first.py::test_papermill_runs_the_check_cell[01_theory]",
]

#: variables that move a default away from HOME (unset, so that a write outside the suite's folders lands in HOME)
_MOVERS = (
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "MPLCONFIGDIR",
    "IPYTHONDIR",
    "JUPYTER_CONFIG_DIR",
    "JUPYTER_DATA_DIR",
    "JUPYTER_RUNTIME_DIR",
    "HF_HOME",
    "TORCH_HOME",
    "RAY_TMPDIR",
    "RAY_AUTH_TOKEN",
    "npm_config_cache",
)


def _left_in_a_fresh_home(tmp_path: Path, tests: list[str]) -> list[str]:
    """Run ``tests`` in a pytest subprocess whose HOME is an empty folder; return what is under HOME afterwards."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in _MOVERS and not k.startswith("PYTEST_")}
    env["HOME"] = str(home)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "base"), *tests],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "skipped" not in proc.stdout, proc.stdout[-2000:]
    return sorted(str(p.relative_to(home)) for p in home.rglob("*"))


@pytest.mark.slow
def test_a_ray_head_a_model_a_figure_and_a_kernel_leave_nothing_in_a_fresh_home(tmp_path):
    left = _left_in_a_fresh_home(tmp_path, UNDER_TEST)
    assert left == [], f"the tests wrote under HOME: {left[:20]}"


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.xdist_group("browser")
def test_the_jupyterlab_test_leaves_nothing_in_a_fresh_home(tmp_path):
    """JupyterLab, its kernel, the npm it calls and Chromium (before: ``~/.npm/_logs``, ``~/.config/chromium``,
    ``~/.cache/dconf``)."""
    left = _left_in_a_fresh_home(tmp_path, ["tests/browser/test_browser.py::test_live_in_jupyterlab"])
    assert left == [], f"the JupyterLab test wrote under HOME: {left[:20]}"
