#!/usr/bin/env python3
"""The tests of the files a change touches (``make check-changed``): prints pytest arguments, one a line.

The change is the working tree against ``HEAD`` (staged, unstaged and untracked files), or against ``BASE`` when
given (``make check-changed BASE=main``: every commit since then as well). Each changed file maps to:

- a test file (``tests/**/test_*.py``): itself;
- a library module (``accessibility_lib/**.py``): the module (its doctests), ``tests/unit/test_<name>.py`` when it
  exists, and every test file that imports the module by name;
- a page of the book (``book/NN_name`` or ``book/lab_name``, ``.md`` or ``.ipynb``): that page's cases of the notebook
  tests (executing it on the smoke preset, nbval, prose, conventions, parameters) and ``tests/unit/test_layout.py``;
- a Sphinx extension (``book/_ext/name.py``): every test file that imports it;
- a benchmark (``benchmarks/name.py``): its tiny run in ``tests/unit/test_benchmarks.py``;
- the test plumbing (``tests/conftest.py``, ``tests/executed_book.py``, this file) or ``pyproject.toml``: the fast
  loop's whole selection (``tests/unit accessibility_lib``).

Anything else (data, prose pages, scripts without a test) maps to nothing. Usage: ``python tests/changed_tests.py
[BASE]``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUMBING = {"tests/conftest.py", "tests/executed_book.py", "tests/changed_tests.py", "pyproject.toml"}
PAGE = re.compile(r"^book/((?:\d\d|lab)_[a-z_]+)\.(?:md|ipynb)$")
#: notebook tests parametrized by a page's stem (the id of the case is the stem): every page's, or the chapters' only
PAGE_TESTS = {
    "tests/notebooks/test_notebooks.py::test_committed_without_outputs": "pages",
    "tests/notebooks/test_notebooks.py::test_chapter_compares_some_output": "chapters",
    "tests/notebooks/test_notebooks.py::test_chapter_smoke_papermill_then_nbval": "pages",
    "tests/notebooks/test_prose.py::test_chapter_prose_has_no_typed_number": "chapters",
    "tests/notebooks/test_conventions.py::test_chapter_prose_names_conventions_by_their_ratios": "chapters",
    "tests/notebooks/test_jupyter_first.py::test_pair_in_sync_and_without_outputs": "chapters",
    "tests/notebooks/test_jupyter_first.py::test_papermill_runs_the_check_cell": "chapters",
}


def changed_files(base: str | None = None, root: Path = ROOT) -> list[str]:
    """Paths (relative to the repository) changed in the working tree against HEAD, or against ``base``."""

    def git(*args: str) -> list[str]:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout
        return [line for line in out.splitlines() if line]

    files = git("diff", "--name-only", base or "HEAD") + git("ls-files", "--others", "--exclude-standard")
    return sorted(set(files))


def _test_files(root: Path) -> list[Path]:
    return sorted((root / "tests").rglob("test_*.py"))


def _importers(pattern: re.Pattern, root: Path) -> list[str]:
    return [str(p.relative_to(root)) for p in _test_files(root) if pattern.search(p.read_text(errors="replace"))]


def selection_for(files: list[str], root: Path = ROOT) -> list[str]:
    """The pytest arguments (files and node ids) that test ``files``, without repeats, in a stable order."""
    out: list[str] = []

    def add(*args: str) -> None:
        out.extend(a for a in args if a not in out)

    for f in files:
        path = root / f
        if f in PLUMBING:
            add("tests/unit", "accessibility_lib")
        elif f.startswith("tests/") and Path(f).name.startswith("test_") and f.endswith(".py"):
            if path.exists():
                add(f)
        elif f.startswith("accessibility_lib/") and f.endswith(".py"):
            module = f[:-3].replace("/", ".").removesuffix(".__init__")
            package, _, name = module.rpartition(".")
            if path.exists():
                add(f)
            unit = root / "tests" / "unit" / f"test_{name}.py"
            if unit.exists():
                add(str(unit.relative_to(root)))
            pattern = re.compile(
                rf"\b{re.escape(module)}\b|from {re.escape(package)} import [^\n]*\b{re.escape(name)}\b"
            )
            add(*_importers(pattern, root))
        elif m := PAGE.match(f):
            stem = m.group(1)
            for test, which in PAGE_TESTS.items():
                if which == "pages" or not stem.startswith("lab_"):
                    add(f"{test}[{stem}]")
            add("tests/unit/test_layout.py")
        elif f.startswith("book/_ext/") and f.endswith(".py"):
            name = Path(f).stem
            add(*_importers(re.compile(rf"^\s*(?:import {name}\b|from {name} import)", re.M), root))
        elif f.startswith("benchmarks/") and f.endswith(".py") and not Path(f).name.startswith("_"):
            add(f"tests/unit/test_benchmarks.py::test_benchmark_runs_in_its_tiny_mode[{Path(f).name}]")
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    for arg in selection_for(changed_files(argv[0] if argv else None)):
        print(arg)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
