"""The book executed once per test run: every page on the ``smoke`` preset, shared by every test that reads outputs.

``tests/conftest.py``'s session fixtures ``smoke_book`` and ``smoke_site`` use this module:

- :func:`execute_pages` runs every executable page of the registry (the chapters and their lab notes) with
  papermill, two at a time (a lab-notes page after its chapter, as one build runs them in TOC order), each
  from the page's MyST source with its parameters cell set to ``preset = "smoke"`` — the notebook Jupyter
  Book itself would execute — into one folder, with one result store;
- :func:`prime_cache` puts those executed notebooks into a staged book's jupyter-cache, keyed exactly as
  MyST-NB keys the page it reads, and records the book's execution fingerprint (``book/_ext/sphinx_deps.py``)
  so that ``jupyter-book build`` (``execute_notebooks: cache``, as ``make book``) renders every page from
  them without executing anything: the site the browser tests open is the real build of these outputs.

Papermill runs first everywhere: nbval (which compares outputs afterwards) passes a cell holding an unknown
IPython magic, papermill does not.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: papermill's limits: a kernel that starts slowly on a busy machine is waited for, a cell may take 15 min
START_TIMEOUT_S = 600
CELL_TIMEOUT_S = 900


def smoke_text(text: str) -> str:
    """A page's MyST source with its parameters cell set to the smoke preset."""
    out, n = re.subn(r'^preset = "default"', 'preset = "smoke"', text, count=1, flags=re.M)
    if n != 1:
        raise ValueError('the page\'s parameters cell must set preset = "default"')
    return out


def myst_notebook(text: str, path: Path):
    """The notebook MyST-NB reads from a page's text (the same reader and options as the book's build)."""
    import yaml
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    exts = yaml.safe_load((ROOT / "_config.yml").read_text())["parse"]["myst_enable_extensions"]
    return read_myst_markdown_notebook(
        text, config=MdParserConfig(enable_extensions=set(exts)), add_source_map=True, path=str(path)
    )


@dataclass
class ExecutedBook:
    """Where the session's executed pages are: ``folder/<stem>.ipynb``, their store ``results``, their texts."""

    folder: Path
    results: Path
    records: dict = field(default_factory=dict)

    def record(self, stem: str) -> dict:
        return self.records[stem]

    def executed(self, stem: str) -> Path:
        """The executed notebook of a page; fails (naming the page and its error) when its execution failed."""
        import pytest

        rec = self.records.get(stem)
        if rec is None:
            pytest.fail(f"{stem} was not executed in this run (executed: {', '.join(self.records)})")
        if rec["status"] != "ok":
            pytest.fail(f"{stem} failed on the smoke preset (the session's execution):\n{rec['error']}")
        return self.folder / f"{stem}.ipynb"

    def text(self, stem: str) -> str:
        """The smoke-preset MyST text the page was executed from."""
        return (self.folder / f"{stem}.md").read_text()

    def save(self) -> None:
        (self.folder / "records.json").write_text(json.dumps(self.records, indent=1))

    @classmethod
    def load(cls, folder: Path) -> ExecutedBook:
        return cls(folder, folder / "results", json.loads((folder / "records.json").read_text()))


def execute_pages(folder: Path, pages: list, workers: int = 2) -> ExecutedBook:
    """Execute every page in ``pages`` (registry entries) on the smoke preset into ``folder``, ``workers`` at once.

    Each page runs in its own papermill process (its own kernel); a lab-notes page waits for its chapter (the
    same preset ``name``), whose results it may reuse from the shared store. A page that fails is recorded
    with papermill's error (the cell and its traceback) and the others go on.
    """

    folder.mkdir(parents=True, exist_ok=True)
    book = ExecutedBook(folder, folder / "results")
    env = dict(
        os.environ,
        ACCESSIBILITY_RESULTS=str(book.results),
        ACCESSIBILITY_BOOK_BUILD="1",  # as the book's build: no progress bars in the outputs
        ACCESSIBILITY_PROGRESS="0",
        HF_HUB_OFFLINE="1",
    )
    todo = list(pages)
    chapter_of = {p.stem: next((c.stem for c in pages if c.kind == "chapter" and c.name == p.name), None) for p in todo}
    running: dict[str, tuple[subprocess.Popen, float, Path]] = {}
    done: dict[str, str] = {}
    try:
        _run_all(folder, todo, chapter_of, running, done, book, env, workers)
    finally:  # interrupted (Ctrl-C, a killed worker): no papermill process or kernel outlives the run
        for proc, _, _ in running.values():
            proc.send_signal(signal.SIGINT)  # papermill then shuts its kernel down (SIGTERM would orphan it)
        for proc, _, _ in running.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    book.records = {p.stem: book.records[p.stem] for p in pages}  # TOC order
    book.save()
    return book


def _run_all(folder, todo, chapter_of, running, done, book, env, workers) -> None:
    import nbformat

    while todo or running:
        ready = [p for p in todo if p.kind == "chapter" or chapter_of[p.stem] in done or chapter_of[p.stem] is None]
        while ready and len(running) < workers:
            page = ready.pop(0)
            todo.remove(page)
            text = smoke_text(page.markdown.read_text())
            (folder / f"{page.stem}.md").write_text(text)
            source = folder / f"{page.stem}.source.ipynb"
            nbformat.write(myst_notebook(text, page.markdown), source)
            log = folder / f"{page.stem}.log"
            cmd = [
                sys.executable, "-m", "papermill", str(source), str(folder / f"{page.stem}.ipynb"),
                "--cwd", str(ROOT / "book"), "-k", "python3", "--no-progress-bar",
                "--start-timeout", str(START_TIMEOUT_S), "--execution-timeout", str(CELL_TIMEOUT_S),
            ]  # fmt: skip
            with open(log, "w") as fh:
                proc = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT)
            running[page.stem] = (proc, time.perf_counter(), log)
        time.sleep(0.5)
        for stem, (proc, t0, log) in list(running.items()):
            if proc.poll() is None:
                continue
            del running[stem]
            ok = proc.returncode == 0
            done[stem] = "ok" if ok else "failed"
            book.records[stem] = {
                "status": done[stem],
                "wall_s": round(time.perf_counter() - t0, 1),
                "error": "" if ok else log.read_text()[-6000:],
            }


def prime_cache(work: Path, book: ExecutedBook, stems: list[str]) -> list[str]:
    """Fill the staged book ``work``'s jupyter-cache with the executed pages; returns the stems cached.

    A page is cached under MyST-NB's own key (its code cells and kernelspec as read from ``work/book/<stem>.md``),
    with the executed outputs, execution counts, widget state and language info, and its papermill wall time as
    the execution time the status page shows. The execution fingerprint of ``book/_ext/sphinx_deps.py`` is
    recorded beside, so the build keeps the cache (it clears a cache filled under other dependencies).
    """
    import nbformat
    import sphinx_deps  # book/_ext, on the path by pytest's pythonpath setting
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache_dir = work / "_build" / ".jupyter_cache"
    cache = get_cache(str(cache_dir))
    cached = []
    for stem in stems:
        rec = book.records.get(stem, {})
        if rec.get("status") != "ok":
            continue  # the build executes it (and fails the way the session's execution did)
        md = work / "book" / f"{stem}.md"
        nb = myst_notebook(md.read_text(), md)
        ran = nbformat.read(book.folder / f"{stem}.ipynb", as_version=4)
        code, ran_code = [c for c in nb.cells if c.cell_type == "code"], [c for c in ran.cells if c.cell_type == "code"]
        if [c.source for c in code] != [c.source for c in ran_code]:
            raise AssertionError(f"{stem}: the executed notebook's code differs from the staged page's")
        for c, r in zip(code, ran_code, strict=True):
            c.outputs, c.execution_count = r.outputs, r.execution_count
        for key in ("widgets", "language_info"):
            if key in ran.metadata:
                nb.metadata[key] = ran.metadata[key]
        cache.cache_notebook_bundle(
            CacheBundleIn(nb, str(md), data={"execution_seconds": rec.get("wall_s")}),
            check_validity=False,
            overwrite=True,
        )
        cached.append(stem)
    config = sphinx_deps.DEFAULT_EXECUTION_DEPS
    stamp = {"execution": {**sphinx_deps.fingerprint(work, list(config)), **sphinx_deps.environment()}}
    (cache_dir / sphinx_deps.STATE_FILE).write_text(json.dumps(stamp, indent=1, sort_keys=True))
    return cached
