"""The chapter registry is the book's only chapter list: a chapter added to the TOC is seen everywhere."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from accessibility_lib.ground.paths import REPO_ROOT
from accessibility_lib.runs import publish, registry, rerun

FAKE = "99_fake"
FAKE_MD = """---
jupytext:
  formats: ipynb,md:myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A fake chapter

```{code-cell} ipython3
:tags: [parameters]
preset = "default"
model_name = None
```

```{code-cell} ipython3
params = presets.from_namespace("cramming", globals())
```
"""


@pytest.fixture()
def book_with_a_fake_chapter(tmp_path: Path) -> Path:
    """A copy of this book's TOC and chapters plus ``book/99_fake`` (its parameters are chapter 3's)."""
    root = tmp_path / "root"
    shutil.copytree(REPO_ROOT / "book", root / "book", ignore=shutil.ignore_patterns("_build", "data", "_vendor"))
    toc = (REPO_ROOT / "_toc.yml").read_text()
    last = [c.stem for c in registry.chapters()][-1]
    assert f"- file: book/{last}" in toc
    toc = toc.replace(f"- file: book/{last}", f"- file: book/{last}\n      - file: book/{FAKE}", 1)
    (root / "_toc.yml").write_text(toc)
    shutil.copy(REPO_ROOT / "_config.yml", root / "_config.yml")
    (root / "book" / f"{FAKE}.md").write_text(FAKE_MD)
    nbformat.write(nbformat.v4.new_notebook(), root / "book" / f"{FAKE}.ipynb")
    return root


def test_the_registry_lists_exactly_the_toc_chapters():
    toc = (REPO_ROOT / "_toc.yml").read_text()
    stems = [c.stem for c in registry.chapters()]
    in_toc = [s for s in stems if f"book/{s}" in toc]
    assert stems == in_toc and len(stems) >= 7
    assert sorted(stems) == stems  # NN_ order
    assert {c.name for c in registry.chapters()} >= {"theory", "cramming", "support", "copying", "precision"}


def test_a_fake_chapter_in_the_toc_is_seen_everywhere(book_with_a_fake_chapter, tmp_path):
    root = book_with_a_fake_chapter
    before = [c.stem for c in registry.chapters()]
    # the registry
    stems = [c.stem for c in registry.chapters(root)]
    assert stems == before + [FAKE]
    fake = registry.chapter(FAKE, root)
    assert fake.name == "cramming" and fake.title == "A fake chapter"
    # re-execution: the chapters it would run, and the models it names on the status page
    executable = stems + [c.stem for c in registry.lab_notes(root)]  # the chapters, then their lab notes
    assert rerun.toc_chapters(root) == executable
    assert rerun._model_of(FAKE, "default", {}, root) == "nano"
    assert rerun._model_of(FAKE, "default", {"model_name": "smollm2-135m"}, root) == "smollm2-135m"
    # publishing: a site staged from a run folder that holds no run of the fake chapter says so
    runs = tmp_path / "runs"
    runs.mkdir()
    records = publish.stage_site(runs, tmp_path / "stage", root=root)
    assert [r["chapter"] for r in records] == executable
    assert {r["status"] for r in records} == {"not run"}
    assert FAKE in (tmp_path / "stage" / "book" / "status.md").read_text()
    assert "not run" in (tmp_path / "stage" / "book" / f"{FAKE}.md").read_text().lower()


def test_a_toc_chapter_without_a_parameter_check_is_refused(book_with_a_fake_chapter):
    root = book_with_a_fake_chapter
    md = root / "book" / f"{FAKE}.md"
    md.write_text(md.read_text().replace('presets.from_namespace("cramming", globals())', "pass"))
    with pytest.raises(ValueError, match="presets.from_namespace"):
        registry.chapters(root)


def test_an_unknown_chapter_names_the_known_ones():
    with pytest.raises(ValueError, match="03_cramming"):
        registry.chapter("no_such_chapter")
