#!/usr/bin/env python3
"""Build the static site from a folder of executed notebooks, without re-executing them.

    python scripts/build_from_runs.py runs/paper            # site in runs/paper/_site/_build/html

The folder is what ``scripts/rerun.py`` wrote (for instance on a GPU box, then copied back). The book's
sources are staged in ``<runs>/_site``, every chapter that ran replaces its committed (output-free)
notebook, execution is switched off, and the execution-status page is generated from each notebook's
``accessibility_run`` record: chapter, status, preset, model, device, wall time, commit, machine, date.
Chapters missing from the folder are shown unexecuted and listed as "not run".
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from rerun import toc_chapters  # noqa: E402


def status_page(records: list[dict]) -> str:
    lines = [
        "# Execution status",
        "",
        "These pages were executed by `scripts/rerun.py` and published as they are (not re-executed).",
        "",
        "| chapter | status | preset | model | device | wall time (s) | commit | machine | date |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        status = r.get("status", "not run")
        if status == "failed":
            status = f"failed (cell {r.get('cell')}: {str(r.get('error', ''))[:80]})"
        cells = [
            r["chapter"],
            status,
            r.get("preset", ""),
            r.get("model", ""),
            r.get("device", ""),
            str(r.get("wall_s", "")),
            r.get("commit", ""),
            r.get("machine", ""),
            r.get("date", ""),
        ]
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", help="folder written by scripts/rerun.py")
    parser.add_argument("--no-strict", action="store_true", help="do not turn warnings into errors")
    args = parser.parse_args(argv)
    runs = Path(args.runs).resolve()
    if not runs.is_dir():
        raise SystemExit(f"{runs} is not a folder of executed notebooks")

    stage = runs / "_site"
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir()
    shutil.copytree(ROOT / "book", stage / "book", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "_build"))
    shutil.copy(ROOT / "_toc.yml", stage / "_toc.yml")
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config.setdefault("execute", {})["execute_notebooks"] = "off"
    (stage / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))

    records = []
    for stem in toc_chapters():
        executed = runs / f"{stem}.ipynb"
        if executed.exists():
            shutil.copy(executed, stage / "book" / f"{stem}.ipynb")
            nb = json.loads(executed.read_text())
            records.append(nb.get("metadata", {}).get("accessibility_run", {"chapter": stem, "status": "unknown"}))
        else:
            records.append({"chapter": stem, "status": "not run"})
    (stage / "book" / "status.md").write_text(status_page(records))
    toc = (stage / "_toc.yml").read_text()
    if "book/status" not in toc.replace("#  - file: book/status", ""):
        toc = toc.replace("#  - file: book/status", "  - file: book/status")
        if "book/status" not in toc:
            toc += "  - file: book/status\n"
        (stage / "_toc.yml").write_text(toc)

    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(stage)]
    if not args.no_strict:
        cmd += ["-W", "-n", "--keep-going"]
    print("$", " ".join(cmd), flush=True)
    result = subprocess.run(cmd)
    if result.returncode == 0:
        print(f"Site built from {runs}: open {stage / '_build' / 'html' / 'index.html'}")
    return result.returncode


if __name__ == "__main__":
    raise SystemExit(main())
