"""Every page in _toc.yml (chapters and lab notes) executes under papermill on the ``smoke`` preset, then under nbval.

The papermill run is the session's one execution of the book (the ``smoke_book`` fixture of
``tests/conftest.py``: each page's parameters cell set to ``preset = "smoke"``, two pages at a time, one result
store), shared with the other tests that read outputs and with the site of the browser tests. nbval
(``--nbval-lax``) then re-executes that executed notebook from scratch and compares the outputs of the cells tagged
``nbval-check-output`` (deterministic outputs: tables of numbers, glued values), numbers included: only
times, object addresses and temporary paths are sanitised (``tests/nbval_sanitize.cfg``). Outputs that
vary from run to run (timings, sampling noise) are not compared; the chapters assert them inside the
notebook against a stated tolerance, so a run outside it fails the execution itself. nbval's run is the one
fresh execution here, on purpose: comparing needs a second run, and it resumes from the store the first run
filled, so it also checks that a resumed run prints what the first one printed (and costs little for the heavy
chapters, whose work it reads back). Committed notebooks must carry no outputs.
"""

from __future__ import annotations

import configparser
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
from accessibility_lib.runs.registry import chapters, pages  # noqa: E402

#: the chapters (not their lab notes)
CHAPTERS = [c.stem for c in chapters()]
#: every executable page: the chapters and their lab notes (same parameters and presets)
PAGES = [p.stem for p in pages()]
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"
CHECK_TAG = "nbval-check-output"
#: chapters whose smoke run prints tables of (ε convention, r, ε or 2r/ε) rows: book/_ext/convention_tables.py
#: must read at least one row of each (chapter 3: the instrument table; 6: the copying bounds; 7: the supports)
PRINTS_CONVENTION_TABLES = {"03_cramming", "06_copying", "07_precision"}


def _nbval(path: Path, rootdir: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    # nbval 0.11.0 passes a cell holding an unknown magic (computationalmodelling/nbval#147, shown by
    # test_nbval_passes_an_unknown_magic_that_papermill_fails): a page reaches nbval only after papermill executed it
    # (the session's smoke_book run, which fails on such a cell); test_nbval_comparison_can_fail hands it one-cell
    # notebooks of plain Python to test nbval itself
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "nbval",  # the suite's own runs leave the plugin out (pyproject.toml's addopts): it is wanted here
            "--nbval-lax",
            "--nbval-sanitize-with",
            str(SANITIZE),
            "--nbval-current-env",
            "--nbval-kernel-startup-timeout",  # a kernel starts slowly on a busy machine: wait for it, do not fail
            "600",
            "--rootdir",
            str(rootdir),
            str(path),
        ],
        cwd=str(path.parent),
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )


@pytest.mark.parametrize("stem", PAGES)
def test_committed_without_outputs(stem):
    nb = json.loads((ROOT / "book" / f"{stem}.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert not any(c.get("outputs") or c.get("execution_count") for c in code), f"{stem} has outputs"
    tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{stem} must have exactly one cell tagged 'parameters'"
    assert "preset" in "".join(tagged[0]["source"]), f"{stem}'s parameters cell must define preset"


@pytest.mark.parametrize("stem", CHAPTERS)
def test_chapter_compares_some_output(stem):
    nb = json.loads((ROOT / "book" / f"{stem}.ipynb").read_text())
    checked = [c for c in nb["cells"] if CHECK_TAG in c.get("metadata", {}).get("tags", [])]
    assert checked, f"{stem}: no cell is tagged {CHECK_TAG!r}, so the notebook test would compare nothing"


def test_sanitizer_leaves_numbers_alone():
    cfg = configparser.ConfigParser()
    cfg.read(SANITIZE)
    import re

    text = "n50 = 8.50 [8.06, 8.94], C = 590.09, 1.8e-07, computed in 12 s at 0x7f3a in /tmp/x.ipynb"
    for section in cfg.sections():
        text = re.sub(cfg[section]["regex"], cfg[section]["replace"], text)
    assert "8.50 [8.06, 8.94]" in text and "590.09" in text and "1.8e-07" in text
    assert "12 s" not in text and "0x7f3a" not in text and "/tmp/x" not in text


def test_nbval_comparison_can_fail(tmp_path):
    """A tagged cell whose stored number differs from what it prints now fails the comparison; a time does not."""
    import nbformat

    def notebook(stored: str) -> Path:
        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell("print(f'value {0.1 + 0.2:.2f} in {__import__(\"random\").random():.1f} s')")
        cell.metadata["tags"] = [CHECK_TAG]
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"value {stored} in 0.7 s\n")]
        cell.execution_count = 1
        nb.cells = [cell]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        path = tmp_path / f"nb_{stored.replace('.', '_')}.ipynb"
        nbformat.write(nb, path)
        return path

    good = _nbval(notebook("0.30"), tmp_path)
    assert good.returncode == 0, good.stdout[-2000:]
    bad = _nbval(notebook("0.31"), tmp_path)
    assert bad.returncode != 0 and "0.31" in bad.stdout, bad.stdout[-2000:]


@pytest.mark.slow
def test_nbval_passes_an_unknown_magic_that_papermill_fails(tmp_path):
    """Why papermill runs every page before nbval: nbval 0.11.0 passes a cell holding an unknown magic
    (computationalmodelling/nbval#147), papermill stops on it. Should nbval start failing it, this test says so."""
    import nbformat
    import papermill as pm

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%no_such_magic\nprint('after the magic')")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "magic.ipynb"
    nbformat.write(nb, path)
    passed = _nbval(path, tmp_path)
    assert passed.returncode == 0, "nbval now fails an unknown magic (nbval#147 fixed?):\n" + passed.stdout[-1500:]
    with pytest.raises(pm.PapermillExecutionError) as failed:
        pm.execute_notebook(str(path), str(tmp_path / "out.ipynb"), kernel_name="python3", progress_bar=False)
    assert "%no_such_magic" in failed.value.source  # the cell that stopped it


@pytest.mark.slow
@pytest.mark.parametrize("stem", PAGES)
def test_chapter_smoke_papermill_then_nbval(stem, smoke_book, tmp_path):
    # papermill first (the session's run; nbval alone would pass a cell holding an unknown magic), nbval second
    executed = json.loads(smoke_book.executed(stem).read_text())  # fails here, naming the cell, if papermill failed
    checked = [c for c in executed["cells"] if CHECK_TAG in c.get("metadata", {}).get("tags", [])]
    if stem in CHAPTERS:
        assert any(c.get("outputs") for c in checked), f"{stem}: the cells tagged {CHECK_TAG!r} printed nothing"
    # every table printed under an ε convention's name holds that convention's r and ε (book/_ext), and the
    # chapters that print such tables had rows checked (a scanner reading nothing would pass them all)
    from convention_tables import check_tables, notebook_markdown

    reports = [check_tables(text, f"{stem} cell {i}") for i, text in notebook_markdown(executed)]
    wrong = [p for _, probs in reports for p in probs]
    assert wrong == [], "convention names printed beside another convention's numbers:\n" + "\n".join(wrong)
    if stem in PRINTS_CONVENTION_TABLES:
        assert sum(n for n, _ in reports) > 0, f"{stem}: no convention row was read from its printed tables"
    # The copy nbval runs lives beside the chapter (as a hidden file) so that nbval's kernel starts in book/, like
    # the build's and papermill's, and the chapter's relative data paths resolve. Its store is the session's: a
    # resumed run (see the module docstring for why this second execution).
    out = ROOT / "book" / f".nbval_{stem}_{os.getpid()}.ipynb"
    try:
        out.write_text(json.dumps(executed))
        proc = _nbval(out, tmp_path, env=dict(os.environ, ACCESSIBILITY_RESULTS=str(smoke_book.results)))
    finally:
        out.unlink(missing_ok=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
