"""The book's build never serves a stale page (sphinx_deps).

A one-chapter book in a temporary folder, built with the repository's own ``_config.yml`` and the
``make book`` command line (``jupyter-book build . -W -n --keep-going``). Its chapter is a one-cell
notebook that imports a tiny stand-in library (``fakelib/``), prints one of its values and the text of its
"widget" JavaScript, cites one entry of the book's bibliography, and appends a line to ``executions.log``
each time it really executes (a cached page does not). The tests change one dependency at a time and check
what re-executes and what the page shows.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
import sphinx_deps  # book/_ext, on the path by pytest's pythonpath setting
import yaml
from conftest import build_book, stage_book
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[2]

BIB = """@article{doe2001,
  author = {Doe, Jane},
  title = {A Result},
  journal = {Journal of Results},
  year = {2001}
}
"""
CELL = """import importlib.util, pathlib
spec = importlib.util.spec_from_file_location("fakelib", pathlib.Path("..").resolve() / "fakelib" / "__init__.py")
fakelib = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fakelib)
with open("../executions.log", "a") as fh:
    fh.write("executed\\n")
print("VALUE", fakelib.value())
print("WIDGET", pathlib.Path("../fakelib/widgets/explorer.js").read_text().strip())
"""


def _book(work: Path, *, page_markdown: str = "As shown by {cite:t}`doe2001`.", code: bool = True) -> None:
    def deps(config):
        config["sphinx"]["config"]["accessibility_execution_deps"] = ["fakelib", "requirements.txt"]

    cells = [new_markdown_cell(f"# A page\n\n{page_markdown}")] + ([new_code_cell(CELL)] if code else [])
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    toc = "format: jb-book\nroot: book/page\nchapters:\n  - file: book/references\n"
    files = {"references.bib": BIB, "references.md": "# References\n\n```{bibliography}\n```\n", "page.ipynb": nb}
    stage_book(work, toc, files=files, config_update=deps)
    (work / "fakelib" / "widgets").mkdir(parents=True)
    (work / "fakelib" / "__init__.py").write_text("def value():\n    return 1\n")
    (work / "fakelib" / "widgets" / "explorer.js").write_text("// explorer v1\n")
    (work / "requirements.txt").write_text("numpy\n")


def _build(work: Path) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.perf_counter()
    proc = build_book(work, timeout=300)
    return proc, time.perf_counter() - t0


def _ok(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def _executions(work: Path) -> int:
    log = work / "executions.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def _page(work: Path) -> str:
    return (work / "_build" / "html" / "book" / "page.html").read_text(encoding="utf-8")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new))


@pytest.mark.slow
def test_library_bibliography_and_widget_changes_reach_the_page(tmp_path: Path) -> None:
    _book(tmp_path)
    proc, _ = _build(tmp_path)
    _ok(proc)
    assert _executions(tmp_path) == 1
    page = _page(tmp_path)
    assert "VALUE 1" in page and "explorer v1" in page and ">2001</a>" in page  # Doe [2001]

    proc, seconds = _build(tmp_path)  # nothing changed: nothing executes
    _ok(proc)
    assert _executions(tmp_path) == 1, "an unchanged book re-executed its chapter"
    print(f"no-change rebuild: {seconds:.1f} s")

    # the library's result changes: the chapter re-executes and shows the new value
    _edit(tmp_path / "fakelib" / "__init__.py", "return 1", "return 2")
    proc, seconds = _build(tmp_path)
    _ok(proc)
    assert _executions(tmp_path) == 2, "a library change did not re-execute the chapter"
    assert "VALUE 2" in _page(tmp_path) and "VALUE 1" not in _page(tmp_path)
    print(f"rebuild after a library change: {seconds:.1f} s")

    # a year of the bibliography changes: the chapter's citation shows it (re-rendered, not re-executed)
    _edit(tmp_path / "book" / "references.bib", "year = {2001}", "year = {2002}")
    proc, _ = _build(tmp_path)
    _ok(proc)
    page = _page(tmp_path)
    assert ">2002</a>" in page and "2001" not in page, "the chapter's citation kept the old year"
    assert "2002" in (tmp_path / "_build" / "html" / "book" / "references.html").read_text(encoding="utf-8")
    assert _executions(tmp_path) == 2, "a bibliography change needs no re-execution"

    # the widget code changes: the chapter re-executes (the JS is embedded in the saved widget state)
    _edit(tmp_path / "fakelib" / "widgets" / "explorer.js", "v1", "v2")
    proc, _ = _build(tmp_path)
    _ok(proc)
    assert _executions(tmp_path) == 3 and "explorer v2" in _page(tmp_path)

    proc, _ = _build(tmp_path)  # and again nothing changed
    _ok(proc)
    assert _executions(tmp_path) == 3


def _install_fake_package(site: Path, version: str) -> None:
    """An installed distribution ``fakepkg`` of ``version`` in ``site`` (a folder on PYTHONPATH): the
    dist-info that ``pip install`` writes, read by ``importlib.metadata`` as for any installed package."""
    for old in site.glob("fakepkg-*.dist-info"):
        shutil.rmtree(old)
    info = site / f"fakepkg-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fakepkg\nVersion: {version}\n")
    (info / "RECORD").write_text("")
    (site / "fakepkg.py").write_text("")


@pytest.mark.slow
def test_an_upgraded_package_re_executes_the_chapter(tmp_path: Path) -> None:
    """Upgrading an installed package changes no file of the book, yet the page must show the new version."""
    import os

    work, site = tmp_path / "book", tmp_path / "site"
    cell = (
        "import importlib.metadata\n"
        "with open('../executions.log', 'a') as fh:\n"
        "    fh.write('executed\\n')\n"
        "print('FAKEPKG', importlib.metadata.version('fakepkg'))\n"
    )
    nb = new_notebook(cells=[new_markdown_cell("# A page"), new_code_cell(cell)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    toc = "format: jb-book\nroot: book/page\n"
    stage_book(work, toc, files={"page.ipynb": nb})
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}

    _install_fake_package(site, "1.0")
    proc = build_book(work, timeout=300, env=env)
    _ok(proc)
    assert _executions(work) == 1 and "FAKEPKG 1.0" in _page(work)
    proc = build_book(work, timeout=300, env=env)  # nothing changed: served from the cache
    _ok(proc)
    assert _executions(work) == 1

    _install_fake_package(site, "1.1")  # the upgrade: only the installed version changes
    proc = build_book(work, timeout=300, env=env)
    _ok(proc)
    assert _executions(work) == 2, "a package upgrade did not re-execute the chapter"
    assert "FAKEPKG 1.1" in _page(work) and "FAKEPKG 1.0" not in _page(work)
    assert "fakepkg 1.0 -> 1.1" in proc.stdout  # the log names the package and both versions


def test_the_environment_is_part_of_the_execution_fingerprint(tmp_path: Path, monkeypatch) -> None:
    import importlib.metadata
    import sys

    env = sphinx_deps.environment()
    assert env["env:python"] == sys.version.split()[0]
    assert env["env:pkg:torch"] == importlib.metadata.version("torch")
    assert env["env:pkg:jupyter-book"] == importlib.metadata.version("jupyter-book")  # normalised names
    _install_fake_package(tmp_path, "2.0")
    monkeypatch.syspath_prepend(str(tmp_path))  # undone after the test
    importlib.invalidate_caches()
    assert sphinx_deps.environment()["env:pkg:fakepkg"] == "2.0"
    _install_fake_package(tmp_path, "2.1")
    importlib.invalidate_caches()
    after = sphinx_deps.environment()
    assert sphinx_deps.changed_files({**env, "env:pkg:fakepkg": "2.0"}, after) == ["env:pkg:fakepkg"]


@pytest.mark.slow
def test_a_failed_build_is_not_hidden_by_the_next_one(tmp_path: Path) -> None:
    """A build that warned (here: an unknown citation) fails again when re-run unchanged.

    Without the extension Sphinx would not re-read the unchanged page, the warning would not be emitted
    again, and the second build would succeed and publish the broken page.
    """
    _book(tmp_path, page_markdown="As shown by {cite:t}`nobody1999`.", code=False)
    first, _ = _build(tmp_path)
    assert first.returncode != 0 and "nobody1999" in first.stdout + first.stderr
    second, _ = _build(tmp_path)
    assert second.returncode != 0 and "nobody1999" in second.stdout + second.stderr


def test_fingerprint_covers_library_data_widgets_requirements(tmp_path: Path) -> None:
    """The default dependencies of the real book hold the library source, its data, the widget JS, the pins."""
    files = sphinx_deps.fingerprint(ROOT, sphinx_deps.DEFAULT_EXECUTION_DEPS)
    for must in (
        "accessibility_lib/theory/bounds.py",
        "accessibility_lib/figures/widgets/explorer.js",
        "requirements.txt",
        "pyproject.toml",
    ):
        assert must in files, must
    assert any(p.startswith("accessibility_lib/data/") for p in files)
    assert not any("__pycache__" in p or p.endswith(".pyc") for p in files)
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["sphinx"]["local_extensions"]["sphinx_deps"] == "book/_ext/"
    assert config["bibtex_bibfiles"] == ["book/references.bib"]  # the render dependencies

    # any content change, an added file and a removed file are all seen
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.py").write_text("x = 1\n")
    before = sphinx_deps.fingerprint(tmp_path, ["lib", "missing.txt"])
    assert before["missing.txt"] == "absent"
    (tmp_path / "lib" / "a.py").write_text("x = 2\n")
    (tmp_path / "lib" / "b.js").write_text("//\n")
    (tmp_path / "missing.txt").write_text("now here\n")
    after = sphinx_deps.fingerprint(tmp_path, ["lib", "missing.txt"])
    assert sphinx_deps.changed_files(before, after) == ["lib/a.py", "lib/b.js", "missing.txt"]
    shutil.rmtree(tmp_path / "lib")
    assert sphinx_deps.changed_files(after, sphinx_deps.fingerprint(tmp_path, ["lib", "missing.txt"])) == [
        "lib",
        "lib/a.py",
        "lib/b.js",
    ]
