"""Every chapter in _toc.yml executes under papermill on the ``smoke`` preset, then re-runs under nbval.

papermill injects ``preset = "smoke"`` after the cell tagged ``parameters``; nbval (``--nbval-lax``)
then re-executes that executed notebook from scratch and compares the outputs of the cells marked
``# NBVAL_CHECK_OUTPUT`` (deterministic numbers only), with floats, object ids, times and paths
sanitised by ``tests/nbval_sanitize.cfg``. Committed notebooks must carry no outputs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from rerun import toc_chapters  # noqa: E402

CHAPTERS = toc_chapters()


@pytest.mark.parametrize("stem", CHAPTERS)
def test_committed_without_outputs(stem):
    nb = json.loads((ROOT / "book" / f"{stem}.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert not any(c.get("outputs") or c.get("execution_count") for c in code), f"{stem} has outputs"
    tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{stem} must have exactly one cell tagged 'parameters'"
    assert "preset" in "".join(tagged[0]["source"]), f"{stem}'s parameters cell must define preset"


@pytest.mark.slow
@pytest.mark.parametrize("stem", CHAPTERS)
def test_chapter_smoke_papermill_then_nbval(stem, tmp_path):
    import papermill as pm

    # The executed copy lives beside the chapter (as a hidden file) so that nbval's kernel starts in
    # book/, like the build's and papermill's, and the chapter's relative data paths resolve.
    out = ROOT / "book" / f".nbval_{stem}_{os.getpid()}.ipynb"
    try:
        pm.execute_notebook(
            str(ROOT / "book" / f"{stem}.ipynb"),
            str(out),
            parameters={"preset": "smoke"},
            cwd=str(ROOT / "book"),
            kernel_name="python3",
            progress_bar=False,
            execution_timeout=600,
        )
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--nbval-lax",
                "--nbval-sanitize-with",
                str(ROOT / "tests" / "nbval_sanitize.cfg"),
                "--nbval-current-env",
                "--rootdir",
                str(tmp_path),
                str(out),
            ],
            cwd=str(ROOT / "book"),
            capture_output=True,
            text=True,
            timeout=900,
        )
    finally:
        out.unlink(missing_ok=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
