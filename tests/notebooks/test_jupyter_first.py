"""The chapters are their own source: pairs in sync, no outputs, typed parameters, a self-contained repo.

- every chapter ``book/NN_name.md`` (MyST, what is reviewed and built) has its paired ``.ipynb`` (what
  papermill runs) with the same cells, and neither carries outputs;
- no file of the repository refers to design notes outside it, and nothing regenerates chapters;
- every chapter parameter, given through papermill's ``-p`` as text, through ``-y`` as YAML, or with a
  wrong type, either arrives with its declared type or stops with an error naming the parameter — never
  a traceback from inside the library. The type translation is papermill's own (``papermill.cli``); a
  few real papermill runs execute the chapters' first cells (parameters and the check after them).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import nbformat
import pytest
import yaml

from accessibility_lib.runs import presets
from accessibility_lib.runs.parameters import ParameterError

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(p for p in (ROOT / "book").glob("[0-9][0-9]_*.md"))
NAME = {
    "01_theory": "theory",
    "02_argmax_cells": "argmax_cells",
    "03_cramming": "cramming",
    "04_mean_field": "mean_field",
    "05_support": "support",
    "06_copying": "copying",
    "07_precision": "precision",
}


def _cells(nb) -> list[tuple[str, str, tuple]]:
    return [(c.cell_type, c.source.strip(), tuple(c.metadata.get("tags", []))) for c in nb.cells]


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.stem)
def test_pair_in_sync_and_without_outputs(md):
    import jupytext

    ipynb = md.with_suffix(".ipynb")
    assert ipynb.exists(), f"{md.name} has no paired notebook: run jupytext --set-formats ipynb,md:myst {md}"
    text_nb = jupytext.read(md)
    nb = nbformat.read(ipynb, as_version=4)
    assert nb.metadata.get("jupytext", {}).get("formats") == "ipynb,md:myst", f"{ipynb.name} is not paired"
    assert _cells(text_nb) == _cells(nb), f"{md.name} and {ipynb.name} differ: run jupytext --sync {md}"
    for c in nb.cells:
        if c.cell_type == "code":
            assert c.outputs == [] and c.execution_count is None, f"{ipynb.name} carries outputs: run nbstripout"
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{ipynb.name} must have exactly one cell tagged parameters"
    after = nb.cells[nb.cells.index(tagged[0]) + 1]
    assert f'presets.from_namespace("{NAME[md.stem]}", globals())' in after.source, (
        f"the cell right after {ipynb.name}'s parameters cell must check them with presets.from_namespace"
    )


def test_the_repository_stands_alone():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    pattern = re.compile(r"PAPER\.md|TOOLCHAIN\.md|ARCHITECTURE\.md|\.\./shared|make_\w*notebook")
    bad = []
    for f in files:
        path = ROOT / f
        if path.suffix in {".safetensors", ".png", ".npz"} or not path.is_file() or path.name == Path(__file__).name:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        bad += [f"{f}: {m.group(0)}" for m in pattern.finditer(text)]
    assert not bad, bad


# ---- papermill's parameter translation, for every declared parameter of every chapter ----------------


def _papermill_p(text: str):
    """What `papermill ... -p name <text>` injects (papermill.cli's own type guess)."""
    from papermill.cli import _resolve_type

    return _resolve_type(text)


def _as_text(value) -> str:
    if isinstance(value, list):
        return json.dumps(value)
    return str(value)


def _wrong(param) -> object:
    """A value of the wrong type or outside the allowed set for a declared parameter."""
    kind = param.kind
    if kind.startswith("list["):
        return "[1, 'x'" + ("" if kind != "list[str]" else ", 3") + "]" if kind != "list[str]" else 5
    return {"int": "abc", "float": "fast", "bool": "maybe", "str": 7}[kind]


CASES = [(ch, name) for ch, params in presets.PARAMETERS.items() for name in params]


@pytest.mark.parametrize("chapter,name", CASES, ids=[f"{c}-{n}" for c, n in CASES])
def test_every_parameter_through_p_y_and_a_wrong_type(chapter, name):
    schema = presets.PARAMETERS[chapter][name]
    value = presets.PRESETS[chapter]["default"][name]
    if value is None:
        value = presets.PRESETS[chapter]["paper"][name]
    if value is None:
        pytest.skip(f"{chapter}.{name} is None in every preset")
    # -p name <text>: papermill guesses the type; the chapter's check coerces it back
    via_p = presets.resolve(chapter, "default", check_machine=False, **{name: _papermill_p(_as_text(value))})
    assert via_p[name] == value and type(via_p[name]) is type(value)
    # -y 'name: <yaml>'
    via_y = yaml.safe_load(f"{name}: {_as_text(value)}")[name]
    assert presets.resolve(chapter, "default", check_machine=False, **{name: via_y})[name] == value
    # a wrong type or value: an error that names the parameter and says what is allowed
    with pytest.raises(ParameterError, match=rf"parameter '{re.escape(name)}'.*[Aa]llowed"):
        presets.resolve(chapter, "default", check_machine=False, **{name: _wrong(schema)})


def test_the_reported_papermill_pitfalls():
    # found by a new user: lists as text, YAML numbers as text, "false" as text, a model name unknown
    assert presets.resolve("theory", "default", m_values=_papermill_p("[1, 2]"))["m_values"] == [1, 2]
    assert presets.resolve("copying", "default", check_machine=False, **yaml.safe_load("lr: 1e-3"))["lr"] == 0.001
    with pytest.raises(ParameterError, match="parameter 'seed' got 'false'"):
        presets.resolve("cramming", "default", check_machine=False, seed=_papermill_p("false"))
    with pytest.raises(ParameterError, match="parameter 'fraction_model' got 'GPT-5'.*'Pythia-160M'"):
        presets.resolve("theory", "default", fraction_model="GPT-5")
    with pytest.raises(ParameterError, match="papermill's -p turns text"):
        presets.resolve("cramming", "default", check_machine=False, model_name=_papermill_p("007"))


@pytest.mark.slow
@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.stem)
def test_papermill_runs_the_check_cell(md, tmp_path):
    """Real papermill on the chapter's first cells: a list given as text arrives as a list; a wrong type
    stops in the check cell with the parameter named (PapermillExecutionError, not a library traceback).

    Fresh executions (of the first cells only), not the session's ``smoke_book``: they pass parameters as papermill's
    ``-p`` text and a wrong type, which no preset does."""
    import papermill as pm

    nb = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
    i = next(k for k, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    nb.cells = nb.cells[: i + 2] + [nbformat.v4.new_code_cell("import json; print(json.dumps(params, default=str))")]
    src = tmp_path / "head.ipynb"
    nbformat.write(nb, src)
    chapter = NAME[md.stem]
    schema = presets.PARAMETERS[chapter]
    list_param = next((n for n, p in schema.items() if p.kind == "list[int]"), None)
    good = {"device": "cpu"} if "device" in schema else {}
    if list_param:
        good[list_param] = json.dumps(presets.PRESETS[chapter]["smoke"][list_param])  # text, as -p gives it
    out = tmp_path / "out.ipynb"
    pm.execute_notebook(
        str(src),
        str(out),
        parameters={"preset": "smoke", **good},
        cwd=str(md.parent),
        progress_bar=False,
        kernel_name="python3",
    )
    printed = nbformat.read(out, as_version=4).cells[-1].outputs[0]["text"]
    params = json.loads(printed)
    if list_param:
        assert params[list_param] == presets.PRESETS[chapter]["smoke"][list_param]
    name, param = next(iter(schema.items()))
    with pytest.raises(pm.PapermillExecutionError, match=rf"ParameterError.*parameter '{name}'"):
        pm.execute_notebook(
            str(src),
            str(tmp_path / "bad.ipynb"),
            parameters={"preset": "smoke", name: _wrong(param)},
            cwd=str(md.parent),
            progress_bar=False,
            kernel_name="python3",
        )


def test_intro_links_only_labels_and_pages_that_exist():
    """The introduction's teaching path links exercises and sections of the chapters by label, and its findings
    link chapters: every label it refers to is defined in a page of the book, every page it names exists, and it
    is a MyST notebook that MyST-NB executes (no paired .ipynb, which would be a second source of book/intro)."""
    intro = (ROOT / "book" / "intro.md").read_text()
    assert "kernelspec:" in intro and "```{code-cell}" in intro and not (ROOT / "book" / "intro.ipynb").exists()
    defined = set()
    for page in (ROOT / "book").glob("*.md"):
        text = page.read_text()
        defined |= set(re.findall(r"^:label: ([\w-]+)", text, flags=re.M))
        defined |= set(re.findall(r"^\(([\w-]+)\)=", text, flags=re.M))
    refs = re.findall(r"\{ref\}`(?:[^`<]*<)?([\w-]+)>?`", intro)
    assert len(refs) >= 10, refs  # the teaching path's exercises and sections
    assert sorted(set(refs) - defined) == []
    pages = {p.stem for p in (ROOT / "book").glob("*.md")}
    docs = re.findall(r"\{doc\}`(?:[^`<]*<)?([\w/.-]+)>?`", intro)
    assert docs and sorted(set(docs) - pages) == []
    from accessibility_lib.runs import findings, registry

    stems = {c.stem for c in registry.chapters()}
    assert {
        f.chapter for f in [findings.bound_finding(), findings.mean_field_finding(), findings.precision_finding()]
    } <= stems
