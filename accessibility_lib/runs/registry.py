"""The chapter registry: the book's one list of chapters, read from the table of contents and the chapters.

A chapter is a MyST notebook ``book/NN_name.md`` (paired with ``book/NN_name.ipynb``) listed in
``_toc.yml``; a chapter's *lab notes* (``book/lab_name.md``, in the TOC's "Lab notes" part) keep the record of
how its numbers were measured, take the same parameters and presets, and are listed by :func:`lab_notes`; its *name* — the key of its presets in :data:`accessibility_lib.runs.presets.PRESETS` — is
the one its parameter check names (``params = presets.from_namespace("name", globals())``). Nothing
else lists chapters: ``scripts/rerun.py``, ``scripts/build_from_runs.py``, the presets table and the
tests all ask :func:`chapters`, so a chapter added to the TOC is seen everywhere.

Example:
    >>> [c.stem for c in chapters()][:2]
    ['01_theory', '02_argmax_cells']
    >>> chapter("03_cramming").name
    'cramming'
    >>> [c.stem for c in lab_notes()][0]
    'lab_cramming'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from accessibility_lib.ground.paths import REPO_ROOT

__all__ = ["Chapter", "chapters", "chapter", "lab_notes", "pages", "MODEL_KEYS"]

#: parameters that name the models a chapter loads
MODEL_KEYS = ("model_name", "models", "bases", "real_models")
_NAME = re.compile(r"""presets\.from_namespace\(\s*["']([a-z_]+)["']""")


@dataclass(frozen=True)
class Chapter:
    """One chapter of the book.

    Attributes:
        stem: the file stem, e.g. ``"03_cramming"``.
        name: its presets' key, e.g. ``"cramming"``.
        title: the first ``#`` heading of the chapter.
        root: the folder holding ``_toc.yml`` and ``book/``.
        kind: ``"chapter"`` (``book/NN_name``) or ``"lab"`` (a chapter's lab notes, ``book/lab_name``).
    """

    stem: str
    name: str
    title: str
    root: Path
    kind: str = "chapter"

    @property
    def markdown(self) -> Path:
        return self.root / "book" / f"{self.stem}.md"

    @property
    def notebook(self) -> Path:
        return self.root / "book" / f"{self.stem}.ipynb"

    def presets(self) -> dict:
        """preset -> parameters of this chapter (:data:`accessibility_lib.runs.presets.PRESETS`)."""
        from accessibility_lib.runs import presets

        return presets.PRESETS.get(self.name, {})

    def models(self, preset: str, params: dict | None = None) -> list[str]:
        """The models the chapter loads under ``preset`` (with ``params`` overriding it)."""
        base = dict(self.presets().get(preset, {}))
        base.update({k: v for k, v in (params or {}).items() if v is not None})
        out: list[str] = []
        for key in MODEL_KEYS:
            value = base.get(key)
            if value:
                out += list(value) if isinstance(value, (list, tuple)) else [str(value)]
        return out


def _toc_stems(root: Path) -> list[str]:
    stems = []
    for line in (root / "_toc.yml").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("- file: book/"):
            stems.append(line.split("book/", 1)[1].strip())
    return stems


def _executable(root: Path, pattern: str, kind: str) -> list[Chapter]:
    out = []
    for stem in _toc_stems(root):
        md = root / "book" / f"{stem}.md"
        if not re.match(pattern, stem) or not md.exists() or not (root / "book" / f"{stem}.ipynb").exists():
            continue
        text = md.read_text()
        found = _NAME.search(text)
        if found is None:
            raise ValueError(f"{md} is in the TOC but calls no presets.from_namespace('<chapter>', globals())")
        title = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("# ")), stem)
        out.append(Chapter(stem, found.group(1), title, root, kind))
    return out


def chapters(root: str | Path | None = None) -> list[Chapter]:
    """Every chapter in ``_toc.yml`` (executable notebooks ``book/NN_name`` only), in TOC order.

    Args:
        root: the folder holding ``_toc.yml`` and ``book/`` (default: this checkout).

    Raises:
        ValueError: a listed chapter whose file names no ``presets.from_namespace`` chapter.
    """
    return _executable(Path(root) if root is not None else REPO_ROOT, r"\d\d_", "chapter")


def lab_notes(root: str | Path | None = None) -> list[Chapter]:
    """Every lab-notes page in ``_toc.yml`` (``book/lab_name``, executable), in TOC order.

    A lab-notes page takes its chapter's parameters and presets (its ``name`` is the chapter's).

    Raises:
        ValueError: a listed page whose file names no ``presets.from_namespace`` chapter.
    """
    return _executable(Path(root) if root is not None else REPO_ROOT, r"lab_", "lab")


def pages(root: str | Path | None = None) -> list[Chapter]:
    """Every executable page: the chapters, then the lab notes (each list in TOC order)."""
    return chapters(root) + lab_notes(root)


def chapter(stem_or_name: str, root: str | Path | None = None) -> Chapter:
    """The chapter with this stem (``"03_cramming"``) or name (``"cramming"``).

    Raises:
        ValueError: no such chapter; the message lists them.
    """
    known = chapters(root)
    for c in known:
        if stem_or_name in (c.stem, c.name):
            return c
    raise ValueError(f"no chapter {stem_or_name!r}; chapters: {', '.join(c.stem for c in known)}")
