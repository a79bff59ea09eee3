"""Build the static site from a folder of executed notebooks, without re-executing them.

The command is ``scripts/build_from_runs.py`` (``make site-from-runs``)::

    python scripts/build_from_runs.py runs/paper            # site in runs/paper/_site/_build/html
    python scripts/build_from_runs.py                       # the most recent folder under runs/

The folder is what ``scripts/rerun.py`` wrote (for instance on a GPU box, then copied back); without an
argument, the run folder under ``runs/`` written last (``runs.json``) is used, and the others are listed.
The book's sources are staged in ``<runs>/_site``, every chapter that ran replaces its committed
(output-free) source, execution is switched off, and the execution-status page is generated from each
notebook's ``accessibility_run`` record: chapter, status (with the failing cell and kind of failure),
preset, model, device, wall time, commit, machine, date. Chapters missing from the folder are published
unexecuted, with a banner at the top of the page saying so, and listed as "not run"; a chapter whose run
failed gets a banner naming the cell where it stopped.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from accessibility_lib.ground.paths import REPO_ROOT as ROOT
from accessibility_lib.runs.rerun import failure_text, toc_chapters

RUNS_HOME = ROOT / "runs"


def run_folders(home: Path = RUNS_HOME) -> list[Path]:
    """Folders under ``home`` written by ``scripts/rerun.py`` (they hold ``runs.json``), most recent first."""
    if not home.is_dir():
        return []
    found = [d for d in home.iterdir() if d.is_dir() and (d / "runs.json").is_file()]
    return sorted(found, key=lambda d: (d / "runs.json").stat().st_mtime, reverse=True)


def choose_runs(given: str | None, home: Path = RUNS_HOME) -> Path:
    """The run folder to publish: ``given``, or the most recent one under ``home``.

    Raises:
        SystemExit: ``given`` is not a folder, or no argument and no run folder exists; the message lists
            the run folders that do exist and the command that makes one.
    """
    folders = run_folders(home)
    listing = ", ".join(_rel(d) for d in folders) or "none"
    how = "make rerun PRESET=default DEVICE=cpu (or: python scripts/rerun.py --preset default --out runs/default)"
    if given:
        path = Path(given).resolve()
        if not path.is_dir():
            raise SystemExit(
                f"{given} is not a folder of executed notebooks; run folders under {_rel(home)}/: {listing}"
            )
        return path
    if not folders:
        raise SystemExit(f"no run folder under {_rel(home)}/ (none holds a runs.json); make one with: {how}")
    print(f"Publishing the most recent run folder, {_rel(folders[0])} (run folders: {listing})", flush=True)
    return folders[0]


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def status_text(record: dict) -> str:
    """The status column of a chapter: ``ok``, ``not run``, or ``failed: <kind> in cell <i> (`line`): <error>``."""
    status = record.get("status", "not run")
    if status != "failed":
        return status
    if "failure" not in record:  # a record written before failures were classified
        return f"failed (cell {record.get('cell')}: {str(record.get('error', ''))[:120]})"
    where = f"cell {record['cell']}" if record.get("cell") is not None else "no cell (none had started)"
    line = f" (`{record['cell_line']}`)" if record.get("cell_line") else ""
    return f"failed: {record['failure']} in {where}{line}: {str(record.get('error', ''))[:160]}"


def status_page(records: list[dict]) -> str:
    lines = [
        "# Execution status",
        "",
        "These pages were executed by `scripts/rerun.py` and published as they are (not re-executed).",
        "A chapter marked *not run* is shown without outputs; a failed one stops at the cell named here.",
        "",
        "| chapter | status | preset | model | device | wall time (s) | commit | machine | date |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        cells = [
            r["chapter"],
            status_text(r),
            r.get("preset", ""),
            r.get("model", ""),
            r.get("device", ""),
            str(r.get("wall_s", "")),
            r.get("commit", ""),
            r.get("machine", ""),
            r.get("date", ""),
        ]
        lines.append("| " + " | ".join(str(c).replace("|", "/").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _run_settings(runs: Path) -> dict:
    """Preset and device of the run in ``runs`` (from its runs.json), for the command that completes it."""
    try:
        records = json.loads((runs / "runs.json").read_text())
    except (OSError, ValueError):
        return {}
    for r in records if isinstance(records, list) else []:
        if isinstance(r, dict) and r.get("preset"):
            return {"PRESET": r["preset"], "DEVICE": r.get("device") if r.get("device") != "default" else None}
    return {}


def banner(record: dict, runs: Path) -> str | None:
    """The MyST admonition put under a chapter's title, or None for a chapter that ran to the end."""
    status = record.get("status")
    if status == "not run":
        settings = {**_run_settings(runs), "RUNS": _rel(runs), "CHAPTERS": record["chapter"]}
        command = "make rerun " + " ".join(f"{k}={v}" for k, v in settings.items() if v)
        return (
            "```{warning}\n**Not run for this site.** This chapter was not executed in the run published here "
            f"(`{_rel(runs)}`): its code is shown without outputs, and no figure or number on this page comes "
            f"from that run. Execute it with `{command}`.\n```"
        )
    if status == "failed":
        return (
            "```{error}\n**This chapter's run failed** "
            f"({failure_text(record) if 'failure' in record else record.get('error', '')}). "
            "Outputs stop at that cell; the cells after it were not run.\n```"
        )
    if status != "ok":
        return f"```{{warning}}\nThis chapter's run has no execution record (status: {status}).\n```"
    return None


_TITLE = re.compile(r"^# \S", re.M)


def add_banner_md(text: str, note: str) -> str:
    """Insert ``note`` right under the first ``# title`` line of a MyST Markdown page (after any front matter)."""
    match = _TITLE.search(text)
    if match is None:
        return note + "\n\n" + text
    end = text.index("\n", match.start()) if "\n" in text[match.start() :] else len(text)
    return text[:end] + "\n\n" + note + "\n" + text[end:]


def add_banner_ipynb(nb: dict, note: str) -> dict:
    """Insert ``note`` under the title of the first Markdown cell of a notebook (a new cell if none has a title)."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if _TITLE.search(source):
                cell["source"] = add_banner_md(source, note)
                return nb
    nb.setdefault("cells", []).insert(0, {"cell_type": "markdown", "metadata": {}, "source": note})
    return nb


def stage_site(runs: Path, stage: Path, root: Path = ROOT, chapters: list[str] | None = None) -> list[dict]:
    """Stage the book's sources in ``stage`` with the executed notebooks of ``runs``; returns the status records.

    A page (chapter or lab notes) that ran is published from its executed ``.ipynb`` (its MyST source is removed
    from the stage); one that did not is published from its MyST source, without outputs, under a "not run"
    banner. No such page is executed by the build; a page outside the registry with code (the intro, whose
    findings read the stored artifacts) is.
    """
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    shutil.copytree(root / "book", stage / "book", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "_build"))
    shutil.copy(root / "_toc.yml", stage / "_toc.yml")
    config = yaml.safe_load((root / "_config.yml").read_text())
    pages = chapters if chapters is not None else toc_chapters(root)
    # the executed pages are shown as they ran (never executed here, run or not); a page outside the registry
    # whose outputs are computed at build time from stored artifacts (the intro's findings) is executed as usual
    execute = config.setdefault("execute", {})
    execute["execute_notebooks"] = "cache"
    execute["exclude_patterns"] = [f"book/{stem}.{ext}" for stem in pages for ext in ("ipynb", "md")]
    # the executed notebooks are the sources here (the normal build reads the MyST files and skips the .ipynb)
    config["exclude_patterns"] = [p for p in config.get("exclude_patterns", []) if not str(p).endswith(".ipynb")]
    (stage / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))

    records = []
    for stem in pages:
        executed = runs / f"{stem}.ipynb"
        md, ipynb = stage / "book" / f"{stem}.md", stage / "book" / f"{stem}.ipynb"
        if executed.exists():
            nb = json.loads(executed.read_text())
            record = nb.get("metadata", {}).get("accessibility_run", {"chapter": stem, "status": "unknown"})
            note = banner(record, runs)
            if note:
                nb = add_banner_ipynb(nb, note)
            ipynb.write_text(json.dumps(nb, indent=1, ensure_ascii=False))
            md.unlink(missing_ok=True)
        else:
            record = {"chapter": stem, "status": "not run"}
            if md.exists():
                md.write_text(add_banner_md(md.read_text(), banner(record, runs)))
                ipynb.unlink(missing_ok=True)
            elif ipynb.exists():
                ipynb.write_text(json.dumps(add_banner_ipynb(json.loads(ipynb.read_text()), banner(record, runs))))
        records.append(record)
    (stage / "book" / "status.md").write_text(status_page(records))
    toc = (stage / "_toc.yml").read_text()
    if "book/status" not in toc.replace("#  - file: book/status", ""):
        toc = toc.replace("#  - file: book/status", "  - file: book/status")
        if "book/status" not in toc:
            toc += "  - file: book/status\n"
        (stage / "_toc.yml").write_text(toc)
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "runs", nargs="?", default=None, help="folder written by scripts/rerun.py (default: the latest under runs/)"
    )
    parser.add_argument("--no-strict", action="store_true", help="do not turn warnings into errors")
    args = parser.parse_args(argv)
    runs = choose_runs(args.runs)
    stage = runs / "_site"
    records = stage_site(runs, stage)
    missing = [r["chapter"] for r in records if r.get("status") == "not run"]
    if missing:
        print(f"Not run in {_rel(runs)} (published without outputs, with a banner): {', '.join(missing)}", flush=True)

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
