"""The library's layout: one folder a stage, imports only from the same or an earlier stage, small modules.

The stages are :data:`accessibility_lib.STAGES`, in the order data flows (ground → models → theory →
geometry → experiments → runs → figures). A module may import from its own stage or an earlier one;
anything else is a backward arrow, and this test fails on it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import accessibility_lib

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "accessibility_lib"
STAGES = accessibility_lib.STAGES
#: a module longer than this is flagged for review (a warning in the summary): is it one concept?
REVIEW_LINES = 400
#: ... and one longer than this fails: no single concept of this library needs it
MAX_LINES = 1000
#: a chapter's code cells hold at most this many lines: chapters call the library, they do not hold it
MAX_CHAPTER_CODE_LINES = 250


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "accessibility_lib" and parts[1] in STAGES else None


def backward_imports(path: str, text: str) -> list[str]:
    """``"module -> imported (stage > own stage)"`` for every import of a later stage in ``text``."""
    own = _stage(path.replace("/", ".").removesuffix(".py"))
    if own is None:
        return []
    out = []
    for node in ast.walk(ast.parse(text)):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            st = _stage(name)
            if st is not None and STAGES.index(st) > STAGES.index(own):
                out.append(f"{path} -> {name} ({st} comes after {own})")
                break
    return out


def _modules() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_module_sits_in_a_stage_folder():
    loose = [p.name for p in PKG.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert loose == [], f"modules outside the stage folders: {loose}"
    assert sorted(p.name for p in PKG.iterdir() if p.is_dir() and not p.name.startswith("__")) == sorted(
        [*STAGES, "data"]
    )


def test_imports_only_run_from_earlier_stages_to_later_ones():
    found = []
    for p in _modules():
        rel = str(p.relative_to(ROOT))
        found += backward_imports(rel, p.read_text())
    assert found == []


def test_a_backward_import_added_on_purpose_is_caught():
    ground = (PKG / "ground" / "results.py").read_text()
    assert backward_imports("accessibility_lib/ground/results.py", ground) == []
    broken = ground + "\nfrom accessibility_lib.figures import plotting\n"
    assert backward_imports("accessibility_lib/ground/results.py", broken) == [
        "accessibility_lib/ground/results.py -> accessibility_lib.figures (figures comes after ground)"
    ]
    lazy = ground + "\ndef f():\n    from accessibility_lib.runs.presets import resolve\n"
    assert len(backward_imports("accessibility_lib/ground/results.py", lazy)) == 1  # inside a function too


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_no_module_is_longer_than_the_limit(path):
    """A module is a natural unit, whatever its length; past REVIEW_LINES the summary asks a reviewer to look."""
    n = len(path.read_text().splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(ROOT)} has {n} lines (> {MAX_LINES}): it holds more than one concept"
    if n > REVIEW_LINES:
        import warnings

        warnings.warn(f"{path.relative_to(ROOT)} has {n} lines (> {REVIEW_LINES}): one concept?", stacklevel=1)


def chapter_code_lines(text: str) -> int:
    """Lines of code in a MyST chapter's code cells: non-blank lines, cell options (``:tags: …``) left out."""
    import re

    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    return sum(1 for cell in cells for line in cell.splitlines() if line.strip() and not line.startswith(":"))


def test_chapter_code_lines_are_counted_as_documented():
    text = (
        "# T\n\n```{code-cell} ipython3\n:tags: [hide-input]\n\nx = 1\n\ny = 2\n```\n\nprose\n\n```python\nz = 3\n```\n"
    )
    assert chapter_code_lines(text) == 2  # the options line, blank lines and a plain code block are not counted


@pytest.mark.parametrize("stem", sorted(p.stem for p in (ROOT / "book").glob("[0-9][0-9]_*.md")))
def test_chapters_are_thin(stem):
    """A chapter's code cells total at most MAX_CHAPTER_CODE_LINES lines: tables, notes and sentence builders
    live in the library beside the computation they present."""
    n = chapter_code_lines((ROOT / "book" / f"{stem}.md").read_text())
    assert n <= MAX_CHAPTER_CODE_LINES, f"book/{stem}.md has {n} lines of code (> {MAX_CHAPTER_CODE_LINES})"


def test_no_script_or_test_edits_sys_path():
    out = subprocess.run(
        ["git", "grep", "-n", "sys.path" + ".insert", "--", "tests", "scripts", "benchmarks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout
    hits = [line for line in out.splitlines() if not line.startswith("tests/unit/test_layout.py")]
    assert hits == []


def test_the_linter_reads_every_library_module():
    """Ruff's excludes (``pyproject.toml``) name the results folders at the root only: an unanchored pattern
    such as ``"runs"`` also matched ``accessibility_lib/runs`` and left that stage unlinted and unformatted."""
    ruff = Path(sys.executable).with_name("ruff")
    if not ruff.exists():
        pytest.skip("ruff is not installed beside this Python (requirements.txt installs it)")
    shown = subprocess.run([str(ruff), "check", "--show-files"], cwd=ROOT, capture_output=True, text=True).stdout
    linted = {Path(line.strip()).resolve() for line in shown.splitlines() if line.strip().endswith(".py")}
    missed = [str(p.relative_to(ROOT)) for p in _modules() if p.resolve() not in linted]
    assert missed == [], f"library modules ruff never reads: {missed[:5]} ({len(missed)} in all)"


def private_imports(text: str) -> list[str]:
    """``module.name`` for every private name (``_x``, not dunder) imported from another library module."""
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("accessibility_lib"):
            out += [
                f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_") and not a.name.startswith("__")
            ]
    return out


def test_no_module_imports_another_modules_private_names():
    """A private name used across modules marks a cut through one concept: merge the modules or make the name public."""
    assert private_imports("from accessibility_lib.geometry.cells import _as_tensor, argmax_tokens\n") == [
        "accessibility_lib.geometry.cells._as_tensor"
    ]
    found = {str(p.relative_to(ROOT)): private_imports(p.read_text()) for p in _modules()}
    assert {k: v for k, v in found.items() if v} == {}


def test_every_module_says_what_it_is():
    """Every library module opens with a docstring that says what it holds (not a placeholder)."""
    bad = []
    for p in _modules():
        doc = ast.get_docstring(ast.parse(p.read_text())) or ""
        if p.name != "__init__.py" and (len(doc.split()) < 5 or "TODO" in doc):
            bad.append(str(p.relative_to(ROOT)))
    assert bad == []
