"""scripts/rerun.py: executes chapters with papermill, keeps going past a failure and names its cell."""

import json
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]


def _notebook(path: Path, body: str) -> None:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('preset = "default"\ndevice = None\nscale = 1')
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


def test_dead_kernel_and_timeout_are_named_with_their_cell(tmp_path):
    """A cell that kills its kernel and one that sleeps past the timeout: the summary and the status page
    name the cell (index and first line) and the kind of failure, and the chapter after them still runs."""
    book = tmp_path / "book"
    book.mkdir()
    _notebook(book / "01_killed.ipynb", "import os\nos.kill(os.getpid(), 9)  # as the out-of-memory killer does")
    _notebook(book / "02_slow.ipynb", "import time\n\ntime.sleep(60)")
    _notebook(book / "03_good.ipynb", "print('after', x)")
    out = tmp_path / "runs"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "rerun.py"), "--book", str(book), "--out", str(out), "--timeout", "4"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    records = {r["chapter"]: r for r in json.loads((out / "runs.json").read_text())}
    killed, slow = records["01_killed"], records["02_slow"]
    # cells of the executed notebook: parameters (0), papermill's injected parameters (1), x = ... (2), body (3)
    assert (killed["failure"], killed["cell"], killed["cell_line"]) == ("kernel died", 3, "import os")
    assert (slow["failure"], slow["cell"], slow["cell_line"]) == ("timed out", 3, "import time")
    assert "4 s" in slow["error"]
    assert records["03_good"]["status"] == "ok"
    assert "FAILED 01_killed: cell 3 `import os` — kernel died" in proc.stdout
    assert "FAILED 02_slow: cell 3 `import time` — timed out" in proc.stdout
    assert "cell None" not in proc.stdout

    from accessibility_lib.runs.publish import status_page

    page = status_page(list(records.values()))
    assert "kernel died in cell 3 (`import os`)" in page and "timed out in cell 3 (`import time`)" in page
