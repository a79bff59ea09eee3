"""The book's build configuration turns a failing chapter into a failing build.

Builds a one-page book holding a notebook that raises, with the repository's own ``_config.yml`` and
the ``make book`` command line (``jupyter-book build . -W -n --keep-going``): it must exit non-zero
and name the error (``nb_execution_raise_on_error: true`` under ``sphinx: config``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import nbformat
import pytest
from conftest import build_book, stage_book
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def _build(work: Path) -> subprocess.CompletedProcess:
    return build_book(work, timeout=300)


def _book(work: Path, source: str) -> None:
    nb = new_notebook(cells=[new_markdown_cell("# A page"), new_code_cell(source)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    stage_book(work, "format: jb-book\nroot: book/page\n", files={"page.ipynb": nb})


def test_failing_notebook_fails_the_build(tmp_path: Path) -> None:
    _book(tmp_path, "raise RuntimeError('chapter broke on purpose')")
    proc = _build(tmp_path)
    assert proc.returncode != 0
    assert "chapter broke on purpose" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_working_notebook_builds(tmp_path: Path) -> None:
    """Control: the same one-page book with a working cell builds without a single warning."""
    _book(tmp_path, "print(1 + 1)")
    # a hidden notebook in book/ (as tests/test_notebooks.py writes one while it runs) is never built
    stray = new_notebook(cells=[new_markdown_cell("# A page"), new_code_cell("raise RuntimeError('stray')")])
    nbformat.write(stray, tmp_path / "book" / ".nbval_page_123.ipynb")
    proc = _build(tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "stray" not in proc.stdout + proc.stderr
    assert not list((tmp_path / "_build" / "html").rglob(".nbval*"))
