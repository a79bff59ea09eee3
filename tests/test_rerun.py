"""scripts/rerun.py: executes chapters with papermill, keeps going past a failure and names its cell."""

import json
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent


def _notebook(path: Path, body: str) -> None:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('preset = "nano"\ndevice = None\nscale = 1')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("x = 2 * scale"), nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def test_rerun_continues_past_failure_and_reports_cell(tmp_path):
    book = tmp_path / "book"
    book.mkdir()
    _notebook(book / "01_good.ipynb", "print('preset', preset, 'x', x)")
    _notebook(book / "02_bad.ipynb", "raise RuntimeError('deliberate failure ' + str(x))")
    _notebook(book / "03_good.ipynb", "print('third', x)")
    out = tmp_path / "runs"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "rerun.py"),
            "--book",
            str(book),
            "--out",
            str(out),
            "--preset",
            "smoke",
            "-p",
            "scale=21",
            "-p",
            "nonexistent=3",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    records = {r["chapter"]: r for r in json.loads((out / "runs.json").read_text())}
    assert records["01_good"]["status"] == "ok" and records["03_good"]["status"] == "ok"
    bad = records["02_bad"]
    assert bad["status"] == "failed" and bad["cell"] == 3  # papermill counts its injected-parameters cell
    assert "deliberate failure 42" in bad["error"]
    assert "FAILED 02_bad: cell 3" in proc.stdout
    assert records["01_good"]["ignored_overrides"] == ["nonexistent"]
    executed = nbformat.read(out / "03_good.ipynb", as_version=4)
    assert executed.metadata["accessibility_run"]["preset"] == "smoke"
    assert "third 42" in "".join(o.get("text", "") for o in executed.cells[-1].outputs)
