"""Where the package's data and the book's stored artifacts live (one place for every path)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["PACKAGE_DIR", "DATA_DIR", "REPO_ROOT", "BOOK_DATA"]

#: the ``accessibility_lib`` package folder
PACKAGE_DIR = Path(__file__).resolve().parents[1]
#: data shipped inside the package: the nano models, corpora, the paper's published numbers
DATA_DIR = PACKAGE_DIR / "data"
#: the repository checkout the package sits in (meaningful for an editable install)
REPO_ROOT = PACKAGE_DIR.parent
#: the book's stored artifacts of the long runs (``book/data``)
BOOK_DATA = REPO_ROOT / "book" / "data"
