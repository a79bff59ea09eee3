"""Execute the book's chapters with papermill for one preset and device, into an output folder.

The command is ``scripts/rerun.py`` (``make rerun``)::

    python scripts/rerun.py --preset paper --device cuda --out runs/paper           # every chapter
    python scripts/rerun.py --preset nano --out runs/nano 03_cramming 05_support    # a subset
    python scripts/rerun.py --preset paper --out runs/paper -p model_name=EleutherAI/pythia-410m 03_cramming

Writes ``<out>/<chapter>.ipynb`` (executed) and keeps the result store in ``<out>/results`` (through
``ACCESSIBILITY_RESULTS``), so re-running the command reuses every finished result. A failing chapter
does not stop the others; at the end a summary names each failure: its kind (a cell raised, the kernel
died, a cell timed out), the cell that was running (index in the executed notebook and first line) and
the error; the exit status is 1. Each executed notebook records its run (preset, device, parameters, model, wall
time, commit, machine, date, status) in its metadata under ``accessibility_run``; ``build_from_runs.py``
turns those into the site's execution-status page.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import time
from pathlib import Path

from accessibility_lib.ground.paths import REPO_ROOT as ROOT
from accessibility_lib.runs.registry import pages as registry_pages

#: kinds of failure named in the summary and on the status page
FAILURE_KINDS = ("raised", "kernel died", "timed out", "error")


def first_line(source: str, width: int = 100) -> str:
    """The first non-blank line of a cell's source, shortened to ``width`` characters."""
    for line in str(source).splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= width else line[: width - 1] + "…"
    return ""


def _running_cell(executed: Path | None) -> tuple[int | None, str, int | None]:
    """(index, first line, execution count) of the last cell papermill started in an executed notebook.

    Papermill stamps ``metadata.papermill.start_time`` on a cell when it starts it and leaves the cells it
    never reached without one, so the last stamped cell is the one that was running when execution stopped.
    Indices count the cells of the executed notebook (papermill's injected-parameters cell included).
    """
    if executed is None:
        return None, "", None
    try:
        cells = json.loads(executed.read_text()).get("cells", [])
    except (OSError, ValueError):
        return None, "", None
    started = [i for i, c in enumerate(cells) if (c.get("metadata", {}).get("papermill") or {}).get("start_time")]
    if not started:
        return None, "", None
    i = started[-1]
    source = cells[i].get("source", "")
    return i, first_line("".join(source) if isinstance(source, list) else source), cells[i].get("execution_count")


def describe_failure(exc: BaseException, executed: Path | None, timeout: int | None = None) -> dict:
    """What failed, where: ``failure`` (one of :data:`FAILURE_KINDS`), ``cell``, ``cell_line``, ``exec_count``, ``error``.

    ``raised``: a cell raised an exception (papermill names the cell). ``kernel died``: the kernel process
    ended (killed, out of memory) while a cell ran. ``timed out``: a cell ran past the per-cell timeout.
    ``error``: anything else (the kernel did not start, the notebook could not be read); ``cell`` is None
    when no cell had started. For the last three the cell is read off the executed notebook (see
    :func:`_running_cell`).
    """
    import papermill as pm
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    if isinstance(exc, pm.PapermillExecutionError):
        return {
            "failure": "raised",
            "cell": exc.cell_index,
            "cell_line": first_line(exc.source),
            "exec_count": exc.exec_count,
            "error": f"{exc.ename}: {exc.evalue}",
        }
    cell, line, count = _running_cell(executed)
    if isinstance(exc, DeadKernelError):
        kind, error = (
            "kernel died",
            f"{type(exc).__name__}: the kernel process ended while this cell ran (killed or out of memory)",
        )
    elif isinstance(exc, CellTimeoutError):
        kind = "timed out"
        error = f"{type(exc).__name__}: the cell ran past the per-cell timeout" + (
            f" of {timeout} s" if timeout else ""
        )
    else:
        kind, error = "error", f"{type(exc).__name__}: {first_line(str(exc), 300)}"
    return {"failure": kind, "cell": cell, "cell_line": line, "exec_count": count, "error": error}


def failure_text(record: dict) -> str:
    """One line naming a failed run's cell and kind of failure.

    For instance ``cell 3 `os.kill(os.getpid(), 9)` — kernel died: DeadKernelError: ...``.
    """
    where = f"cell {record['cell']}" if record.get("cell") is not None else "no cell (none had started)"
    line = f" `{record['cell_line']}`" if record.get("cell_line") else ""
    return f"{where}{line} — {record.get('failure', 'failed')}: {record.get('error', '')}"


def toc_chapters(root: Path = ROOT) -> list[str]:
    """Stems of the executable pages in the TOC: the chapters in order, then their lab notes
    (:func:`accessibility_lib.runs.registry.pages`; a lab-notes page reads its chapter's results, so it runs after)."""
    return [c.stem for c in registry_pages(root)]


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _parse_overrides(pairs: list[str]) -> dict:
    from accessibility_lib.runs.presets import parse_overrides

    try:
        return parse_overrides(pairs)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


def _model_of(stem: str, preset: str, params: dict, root: Path = ROOT) -> str:
    """The models a chapter loads under a preset (from the registry), as text; "—" for none."""
    known = {c.stem: c for c in registry_pages(root)} if (root / "_toc.yml").exists() else {}
    if stem not in known:
        return "—"
    models = known[stem].models(preset, params)
    return ", ".join(models) if models else "—"


def run_chapter(
    stem: str, preset: str, device: str | None, overrides: dict, out: Path, timeout: int, book: Path = ROOT / "book"
) -> dict:
    import papermill as pm

    src = book / f"{stem}.ipynb"
    dst = out / f"{stem}.ipynb"
    declared = pm.inspect_notebook(str(src))
    params = {"preset": preset} if "preset" in declared else {}
    if device is not None and "device" in declared:
        params["device"] = device
    unknown = [k for k in overrides if k not in declared]
    params.update({k: v for k, v in overrides.items() if k in declared})
    record = {
        "chapter": stem,
        "preset": preset,
        "device": device or "default",
        "parameters": params,
        "ignored_overrides": unknown,
        "model": _model_of(stem, preset, params, book.parent),
        "commit": _commit(),
        "machine": f"{platform.node()} ({platform.machine()}, {os.cpu_count()} CPUs)",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    t0 = time.perf_counter()
    try:
        pm.execute_notebook(
            str(src),
            str(dst),
            parameters=params,
            cwd=str(book),
            kernel_name="python3",
            progress_bar=False,
            execution_timeout=timeout,
        )
        record["status"] = "ok"
    except Exception as exc:  # a cell raised, the kernel died, a cell timed out: report it and go on
        record.update(status="failed", **describe_failure(exc, dst if dst.exists() else None, timeout))
    record["wall_s"] = round(time.perf_counter() - t0, 1)
    if dst.exists():
        nb = json.loads(dst.read_text())
        nb.setdefault("metadata", {})["accessibility_run"] = record
        dst.write_text(json.dumps(nb, indent=1, ensure_ascii=False))
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="notebook stems (default: every chapter in _toc.yml)")
    parser.add_argument("--preset", default="default", help="smoke, default, paper or paper_tiny")
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:1 ... (default: the preset's)")
    parser.add_argument("--out", default=None, help="output folder (default: runs/<preset>)")
    parser.add_argument(
        "-p", dest="overrides", action="append", default=[], help="NAME=VALUE parameter override (JSON values)"
    )
    parser.add_argument("--timeout", type=int, default=4 * 3600, help="per-cell timeout in seconds")
    parser.add_argument("--book", default=None, help="folder of notebooks (default: book/, chapters from _toc.yml)")
    args = parser.parse_args(argv)

    book = Path(args.book).resolve() if args.book else ROOT / "book"
    # a book folder beside a _toc.yml: its chapters from the registry; a bare folder: every notebook in it
    toc_root = book.parent
    available = (
        toc_chapters(toc_root) if (toc_root / "_toc.yml").exists() else sorted(p.stem for p in book.glob("*.ipynb"))
    )
    chapters = args.chapters or available
    unknown = [c for c in chapters if not (book / f"{c}.ipynb").exists()]
    if unknown:
        raise SystemExit(f"unknown chapter(s) {unknown}; available: {available}")
    out = Path(args.out or ROOT / "runs" / args.preset).resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.environ["ACCESSIBILITY_RESULTS"] = str(out / "results")
    os.environ.setdefault("ACCESSIBILITY_PROGRESS", "0")
    overrides = _parse_overrides(args.overrides)

    records = []
    for stem in chapters:
        print(f"== {stem}: preset={args.preset} device={args.device or 'default'}", flush=True)
        rec = run_chapter(stem, args.preset, args.device, overrides, out, args.timeout, book)
        records.append(rec)
        print(
            f"   {rec['status']} in {rec['wall_s']} s" + (f" — {failure_text(rec)}" if rec["status"] != "ok" else ""),
            flush=True,
        )
        if rec["ignored_overrides"]:
            print(f"   note: {stem} has no parameter(s) {rec['ignored_overrides']}; not passed", flush=True)
    (out / "runs.json").write_text(json.dumps(records, indent=1, ensure_ascii=False))

    failed = [r for r in records if r["status"] != "ok"]
    print(f"\n{len(records) - len(failed)} of {len(records)} chapters ran; outputs in {out}")
    for r in failed:
        print(f"FAILED {r['chapter']}: {failure_text(r)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
