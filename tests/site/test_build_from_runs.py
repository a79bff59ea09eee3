"""scripts/build_from_runs.py: which run folder is published, and how unexecuted or failed chapters are shown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
import yaml
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

ROOT = Path(__file__).resolve().parents[2]
from conftest import stage_book  # noqa: E402

from accessibility_lib.runs import publish as B  # noqa: E402

MD = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# {title}

Some prose.

```{{code-cell}} ipython3
print("{title} ran")
```
"""


def _runs_folder(path: Path, age: float) -> Path:
    path.mkdir(parents=True)
    (path / "runs.json").write_text("[]")
    t = time.time() - age
    os.utime(path / "runs.json", (t, t))
    return path


def test_default_is_the_latest_run_folder(tmp_path: Path, capsys) -> None:
    home = tmp_path / "runs"
    _runs_folder(home / "paper", age=3600)
    newest = _runs_folder(home / "nano", age=10)
    (home / "scratch").mkdir()  # no runs.json: not a run folder
    assert B.run_folders(home) == [newest, home / "paper"]
    assert B.choose_runs(None, home) == newest
    assert "nano" in capsys.readouterr().out
    with pytest.raises(SystemExit, match=r"runs/doesnotexist is not a folder.*nano.*paper"):
        B.choose_runs(str(home / "doesnotexist"), home)


def test_no_run_folder_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no run folder.*make rerun"):
        B.choose_runs(None, tmp_path / "runs")


def _executed(path: Path, title: str, record: dict) -> None:
    nb = new_notebook(cells=[new_markdown_cell(f"# {title}\n\nSome prose."), new_code_cell(f'print("{title} ran")')])
    nb.cells[1].outputs = [new_output("stream", name="stdout", text=f"{title} ran on the GPU box\n")]
    nb.cells[1].execution_count = 1
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["accessibility_run"] = record
    nbformat.write(nb, path)


def _mini_root(root: Path) -> list[str]:
    """A book with three chapters (MyST sources, as in the repository) and the repository's _config.yml."""
    stems = ["01_one", "02_two", "03_three"]
    files = {f"{stem}.md": MD.format(title=stem.split("_")[1].title()) for stem in stems}
    files.update({"intro.md": "# Intro\n", "status.md": "# Execution status\n", "references.bib": ""})
    toc = "format: jb-book\nroot: book/intro\nchapters:\n" + "".join(f"  - file: book/{s}\n" for s in stems)
    stage_book(root, toc + "  - file: book/status\n", files=files)
    return stems


def _mini_runs(runs: Path) -> None:
    runs.mkdir()
    base = {"preset": "paper", "device": "cuda", "model": "m", "commit": "abc1234", "machine": "gpu", "date": "d"}
    (runs / "runs.json").write_text(json.dumps([{**base, "chapter": "01_one", "status": "ok"}]))
    _executed(runs / "01_one.ipynb", "One", {**base, "chapter": "01_one", "status": "ok", "wall_s": 12.5})
    failed = {
        **base,
        "chapter": "03_three",
        "status": "failed",
        "failure": "kernel died",
        "cell": 3,
        "cell_line": "model = load(big)",
        "exec_count": 2,
        "error": "DeadKernelError: the kernel process ended while this cell ran (killed or out of memory)",
        "wall_s": 40.0,
    }
    _executed(runs / "03_three.ipynb", "Three", failed)


def test_stage_publishes_runs_and_marks_the_rest(tmp_path: Path) -> None:
    root, runs, stage = tmp_path / "repo", tmp_path / "runs", tmp_path / "stage"
    stems = _mini_root(root)
    _mini_runs(runs)
    records = B.stage_site(runs, stage, root=root, chapters=stems)
    assert [r["status"] for r in records] == ["ok", "not run", "failed"]
    book = stage / "book"
    # a chapter that ran: its executed notebook replaces the MyST source, without a banner
    assert (book / "01_one.ipynb").exists() and not (book / "01_one.md").exists()
    assert "Not run" not in (book / "01_one.ipynb").read_text()
    # a chapter that did not run: its MyST source, a banner right under its title
    two = (book / "02_two.md").read_text()
    assert not (book / "02_two.ipynb").exists()
    assert two.index("# Two") < two.index("Not run for this site") < two.index("Some prose")
    assert f"make rerun PRESET=paper DEVICE=cuda RUNS={runs} CHAPTERS=02_two" in two
    # a failed chapter: a banner naming the cell and the kind of failure
    three = json.loads((book / "03_three.ipynb").read_text())
    first = "".join(three["cells"][0]["source"])
    assert "run failed" in first and "kernel died" in first and "cell 3" in first and "model = load(big)" in first
    status = (book / "status.md").read_text()
    assert "| 02_two | not run |" in status
    assert "failed: kernel died in cell 3 (`model = load(big)`)" in status
    config = yaml.safe_load((stage / "_config.yml").read_text())
    # every staged page (run or not) is shown as it is, never executed by the build; other pages (the intro's
    # findings, computed from stored artifacts) execute as in make book
    assert config["execute"]["execute_notebooks"] == "cache"
    assert {f"book/{s}.{ext}" for s in stems for ext in ("ipynb", "md")} <= set(config["execute"]["exclude_patterns"])
    assert not any(str(p).endswith(".ipynb") for p in config["exclude_patterns"])


@pytest.mark.slow
def test_site_shows_outputs_banners_and_status(tmp_path: Path) -> None:
    """The staged mini book builds warning-free; the pages show the run's outputs and the banners."""
    root, runs, stage = tmp_path / "repo", tmp_path / "runs", tmp_path / "stage"
    stems = _mini_root(root)
    _mini_runs(runs)
    B.stage_site(runs, stage, root=root, chapters=stems)
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run(
        [str(jb), "build", str(stage), "-W", "-n", "--keep-going"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    html = stage / "_build" / "html" / "book"
    one = (html / "01_one.html").read_text(encoding="utf-8")
    assert "One ran on the GPU box" in one and "Not run for this site" not in one
    two = (html / "02_two.html").read_text(encoding="utf-8")
    assert "Not run for this site" in two and "admonition warning" in two
    three = (html / "03_three.html").read_text(encoding="utf-8")
    assert "run failed" in three and "kernel died" in three
    status = (html / "status.html").read_text(encoding="utf-8")
    assert "not run" in status and "kernel died in cell 3" in status
