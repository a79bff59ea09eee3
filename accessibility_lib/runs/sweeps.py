"""The heavy chapters' work as independent units keyed in the result store, run serially or over Ray.

A *unit* is the smallest piece of a chapter's sweep that depends on nothing else:

- **cramming** (chapter 3): the n50 searches of one model and target kind, every m in order
  (:func:`accessibility_lib.runs.cramming_units.run_cramming_series`);
- **support** (chapter 5): one analysis (:func:`accessibility_lib.geometry.support.analyse_model`) per model;
- **copying** (chapter 6): one fine-tuning and its evaluation
  (:func:`accessibility_lib.experiments.copying_model.train_copying`, ``evaluate_run``) per base × width × longest
  training length.

:func:`plan_work` lists a preset's units from the chapters' own parameters
(:func:`accessibility_lib.runs.presets.resolve`, the same typed check the chapters run), :func:`run_unit` runs
one with exactly the arguments its chapter uses, so every per-target, per-chunk and per-run entry it
writes is the entry the chapter looks up, and :func:`run` runs a list of them

- serially in this process (the default), or
- fanned out over **Ray**: a local Ray on this machine (one unit per GPU, ``num_gpus=1``; on CPU one unit
  per worker, ``num_cpus=1``), or a running Ray cluster by address.

The result store is the only place results land: every unit writes its fine-grained entries as it goes
(the store writes atomically: a temporary file in the same folder, then ``os.replace``) and, last, one
record under namespace ``sweep_units`` keyed by the unit (:meth:`WorkUnit.key`). A unit with a record is done
and is skipped by the next run; a unit killed midway resumes from its finished entries; two workers
that finish the same unit write the same entries (every unit is deterministic in its seed), the last
``os.replace`` wins, and no reader ever sees half a file. Chapters then execute from the store
(``scripts/rerun.py --out`` with the same folder): their look-ups hit, and they only fit and draw.

On a Ray cluster of several machines the store's folder must be one shared file system (NFS, a mounted
bucket) seen by every node at the same path: each unit checks that it sees the driver's store (a token
file the driver writes) and stops with a clear error otherwise. Tasks and their results travel as plain
JSON-able dicts; Ray retries a unit whose worker died (``max_retries``) and never retries one that raised.

Command::

    python -m accessibility_lib sweeps --preset paper --device cuda --ray               # local Ray, all GPUs
    python -m accessibility_lib sweeps --preset paper --device cuda --address HOST:6379  # a running cluster
    python -m accessibility_lib sweeps --preset paper_tiny --device cpu                  # serial (default)
    python -m accessibility_lib sweeps --preset paper --list                             # units and their state
    scripts/rerun.py --preset paper --device cuda                                        # chapters from the store

The store defaults to ``runs/<preset>/results`` (where ``scripts/rerun.py --preset <preset>`` reads it).
Everything that can be wrong with the input — an unknown chapter, preset or parameter, a device this
machine lacks, a model that cannot be loaded (not fetched, not cached, a folder without weights), a Ray
address that does not answer, a Ray cluster that cannot place one unit (no CPU, no GPU for CUDA units, or none
free within ``--placement-timeout``) — stops the command with a message naming it before any unit starts. Units
that Ray then leaves unplaced for that long while none of the sweep's units runs are reported as failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from accessibility_lib.ground.results import ResultStore
from accessibility_lib.runs import sweep_checks, sweep_units
from accessibility_lib.runs.sweep_checks import check_address, check_models
from accessibility_lib.runs.sweep_units import CHAPTERS, NAMESPACE, WORK, SweepError, WorkUnit, one_thread, plan_work

__all__ = [
    "run_unit",
    "run",
    "Report",
    "main",
]

_TOKEN = ".store_token"


def _running_path(store: ResultStore, unit: WorkUnit) -> Path:
    return store._path(NAMESPACE, unit.key()).with_suffix(".running")


def run_unit(
    unit: WorkUnit | dict, root: str | os.PathLike, device: str | None = None, token: str | None = None
) -> dict:
    """Run one unit into the store at ``root`` (skipped when its record is there); return its record.

    While it runs, ``<record>.running`` beside the record names the process (host, pid, start time); it
    is removed when the unit ends (it stays behind a killed process and is overwritten by the next run).

    Args:
        unit: a :class:`WorkUnit` (or its :meth:`WorkUnit.to_dict`).
        root: the store's folder.
        device: where to run (``"cpu"``, ``"cuda"``, ``"cuda:N"``); default the unit's own.
        token: the driver's store token; when given, the store must hold it (a worker that does not see
            the driver's store raises :class:`SweepError` instead of writing elsewhere).

    Returns:
        The unit's record: ``{"result": ..., "seconds", "host", "pid", "device", "label"}``.
    """
    unit = WorkUnit.from_dict(unit) if isinstance(unit, dict) else unit
    device = unit.device if device is None else device
    store = ResultStore(root)
    if token is not None:
        path = Path(root) / NAMESPACE / _TOKEN
        seen = path.read_text().strip() if path.exists() else None
        if seen != token:
            raise SweepError(
                f"worker {socket.gethostname()} does not see the driver's result store at {root} (token "
                f"{'missing' if seen is None else 'different'}): on a cluster of several machines the store must "
                "be one shared file system mounted at the same path on every node"
            )
    done = store.get(NAMESPACE, unit.key())
    if done is not None:
        return done
    marker = _running_path(store, unit)
    marker.parent.mkdir(parents=True, exist_ok=True)
    info = {"host": socket.gethostname(), "pid": os.getpid(), "started": time.time(), "label": unit.label}
    tmp = marker.with_name(f".{marker.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(info))
    os.replace(tmp, marker)
    t0 = time.perf_counter()
    try:
        with one_thread(device):
            result = WORK[unit.chapter](unit.spec, store, device)
        record = {
            "result": result,
            "seconds": round(time.perf_counter() - t0, 3),
            "host": info["host"],
            "pid": info["pid"],
            "device": str(device),
            "label": unit.label,
        }
        store.put(NAMESPACE, unit.key(), record)
    finally:
        with contextlib.suppress(FileNotFoundError):
            marker.unlink()
    return record


def _remote_unit(unit: dict, root: str, token: str) -> dict:
    """What a Ray task runs (a module-level function, so workers import it by name). A CUDA unit runs on
    ``"cuda"``: Ray sets ``CUDA_VISIBLE_DEVICES`` to the one GPU it gave the task."""
    import torch

    device = "cuda" if torch.device(unit["device"]).type == "cuda" else "cpu"
    return run_unit(unit, root, device, token)


@dataclass
class Report:
    """What :func:`run` did: units found done, run now, and failed (with their errors)."""

    done_before: list[WorkUnit] = field(default_factory=list)
    ran: list[WorkUnit] = field(default_factory=list)
    failed: list[tuple[WorkUnit, str]] = field(default_factory=list)
    seconds: float = 0.0


def run(
    units: list[WorkUnit],
    root: str | os.PathLike,
    *,
    ray: bool = False,
    address: str | None = None,
    workers: int | None = None,
    max_retries: int = 3,
    placement_timeout: float = sweep_checks.PLACEMENT_TIMEOUT,
    log: Callable[[str], None] = print,
) -> Report:
    """Run every unit that has no record in the store at ``root``: serially, or over Ray.

    Args:
        units: from :func:`plan_work` (and :func:`check_models`).
        root: the result store's folder (shared by every node of a Ray cluster).
        ray: fan the units out over a local Ray (``workers`` at once: default every GPU, or every CPU core).
            Each unit runs on its own device (:attr:`WorkUnit.device`): over Ray a CUDA unit asks for one GPU
            (``num_gpus=1``) and runs on the GPU Ray gives it; a CPU unit asks for one CPU.
        address: a running Ray cluster (``HOST:PORT``, ``ray://HOST:PORT`` or ``"auto"``); implies ``ray``.
        max_retries: Ray's retries of a unit whose worker died (a unit that raised is not retried).
        placement_timeout: seconds Ray has to place a probe of one unit before any is submitted, and, later,
            to place a unit when none of the sweep's units runs; past it the sweep stops or reports them.
        log: where progress lines go.

    Returns:
        A :class:`Report`. Failed units are listed, not raised: the others still run.

    Raises:
        SweepError: an address that does not answer, Ray not installed, a cluster that cannot place one unit
            (no CPU, no GPU for a CUDA sweep, nothing free within ``placement_timeout``), all before any unit
            starts (:func:`~accessibility_lib.runs.sweep_checks.check_placement`).
    """
    t0 = time.perf_counter()
    store = ResultStore(root)
    report = Report()
    todo = []
    for u in units:
        (report.done_before if store.has(NAMESPACE, u.key()) else todo).append(u)
    log(
        f"{len(units)} units: {len(report.done_before)} already in {root}, {len(todo)} to run"
        + (f" over Ray ({address or 'local'})" if (ray or address) and todo else "")
    )
    if not todo:
        report.seconds = time.perf_counter() - t0
        return report
    if ray or address:
        _run_ray(todo, Path(root), address, workers, max_retries, placement_timeout, log, report)
    else:
        for i, u in enumerate(todo, 1):
            try:
                rec = run_unit(u, root)
                report.ran.append(u)
                log(f"[{i}/{len(todo)}] {u.label}: {sweep_units.describe(rec)} in {rec['seconds']:.1f} s")
            except Exception as exc:  # report and go on: the other units are independent
                report.failed.append((u, f"{type(exc).__name__}: {exc}"))
                log(f"[{i}/{len(todo)}] FAILED {u.label}: {type(exc).__name__}: {exc}")
    report.seconds = time.perf_counter() - t0
    return report


def _run_ray(todo, root: Path, address, workers, max_retries, placement_timeout, log, report) -> None:
    import torch

    if address is not None:
        check_address(address)
    try:
        import ray
    except ImportError:
        raise SweepError("Ray is not installed: pip install -r requirements.txt (it pins ray)") from None
    gpu = any(torch.device(u.device).type == "cuda" for u in todo)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report (machines without network)
    env = {"ACCESSIBILITY_PROGRESS": "0", "TOKENIZERS_PARALLELISM": "false"}
    if address is None:
        n_gpu = torch.cuda.device_count() if gpu else 0
        n = workers or (n_gpu if gpu else (os.cpu_count() or 1))
        for attempt in range(3):  # Ray gives its raylet 30 s to start: a busy machine may need another try
            try:
                ray.init(
                    num_cpus=n if not gpu else max(n, os.cpu_count() or 1),
                    num_gpus=min(n_gpu, n),
                    include_dashboard=False,
                    log_to_driver=False,
                    runtime_env={"env_vars": env},
                    configure_logging=False,
                )
                break
            except Exception as exc:  # Ray raises a bare Exception on a startup timeout
                ray.shutdown()
                if attempt == 2 or "timed out during startup" not in str(exc):
                    raise SweepError(
                        f"a local Ray did not start ({type(exc).__name__}: {exc}); no unit was started"
                    ) from exc
                log(f"a local Ray did not start in time ({exc}); trying again")
    else:
        try:  # an address that answers TCP but is no Ray cluster fails here, after Ray's own retries
            ray.init(address=address, log_to_driver=False, runtime_env={"env_vars": env})
        except (ConnectionError, TimeoutError, RuntimeError, ValueError) as exc:
            raise SweepError(
                f"could not connect to a Ray cluster at {address!r} ({type(exc).__name__}: "
                f"{' '.join(str(exc).split())[:200]}); no unit was started. Check the address "
                "(`ray status` on the head node prints it) or leave --address out for a local Ray"
            ) from None
    try:
        resources = sweep_checks.check_placement(ray, gpu, placement_timeout, address or "local")
        token = secrets.token_hex(8)  # written once Ray can place a unit: a refused cluster leaves the store untouched
        (root / NAMESPACE).mkdir(parents=True, exist_ok=True)
        tmp = root / NAMESPACE / f".{_TOKEN}.{os.getpid()}.tmp"
        tmp.write_text(token)
        os.replace(tmp, root / NAMESPACE / _TOKEN)
        task = ray.remote(_remote_unit)
        pending, since = {}, time.time() - 60  # markers written since then are this sweep's (60 s: clock skew)
        for u in todo:
            cuda = torch.device(u.device).type == "cuda"
            opts = task.options(num_gpus=1 if cuda else 0, num_cpus=1, max_retries=max_retries, retry_exceptions=False)
            pending[opts.remote(u.to_dict(), str(root.resolve()), token)] = u
        log(
            f"Ray: {resources.get('GPU', 0):g} GPU(s), {resources.get('CPU', 0):g} CPU(s); "
            f"{len(pending)} units submitted"
        )
        i, last = 0, time.time()
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=placement_timeout)
            if not ready and sweep_checks.placement_stalled(root / NAMESPACE, since, last, placement_timeout):
                for ref, u in pending.items():  # none runs and none finished for placement_timeout: report, not wait
                    ray.cancel(ref)
                    report.failed.append((u, f"Ray placed no unit for {placement_timeout:g} s"))
                log(f"Ray placed none of the {len(pending)} units left within {placement_timeout:g} s; stopped")
                break
            for ref in ready:
                u, last = pending.pop(ref), time.time()
                i += 1
                try:
                    rec = ray.get(ref)
                    report.ran.append(u)
                    log(
                        f"[{i}/{len(todo)}] {u.label}: {sweep_units.describe(rec)} in {rec['seconds']:.1f} s on "
                        f"{rec['host']} (pid {rec['pid']})"
                    )
                except Exception as exc:  # a unit that raised, or whose workers died more than max_retries times
                    cause = getattr(exc, "cause", None) or exc
                    msg = f"{type(cause).__name__}: {' '.join(str(cause).split())[:500]}"
                    report.failed.append((u, msg))
                    log(f"[{i}/{len(todo)}] FAILED {u.label}: {msg}")
    finally:
        ray.shutdown()  # stops the local Ray; on a cluster, only disconnects this driver


# ------------------------------------------------------------------------------------------ command
def _parse_overrides(pairs: list[str]) -> dict:
    from accessibility_lib.runs.presets import parse_overrides

    try:
        return parse_overrides(pairs)
    except ValueError as exc:
        raise SweepError(str(exc)) from None


def _repo_runs() -> Path:
    from accessibility_lib.ground.results import checkout_root

    root = checkout_root()
    return (root if root is not None else Path.cwd()) / "runs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m accessibility_lib sweeps",
        description="Run the heavy chapters' units (cramming, support, copying) into a result store, "
        "serially or over Ray; then execute the chapters from that store (scripts/rerun.py).",
    )
    parser.add_argument("--preset", default="default", help="a preset name (smoke, default, paper, paper_tiny)")
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:N (default: each chapter's preset)")
    parser.add_argument("--chapters", nargs="+", default=list(CHAPTERS), help=f"some of {list(CHAPTERS)}")
    parser.add_argument("--results", default=None, help="the store's folder (default: runs/<preset>/results)")
    parser.add_argument(
        "-p",
        dest="overrides",
        action="append",
        default=[],
        help="NAME=VALUE or CHAPTER.NAME=VALUE parameter override (JSON values)",
    )
    parser.add_argument("--ray", action="store_true", help="fan the units out over a local Ray")
    parser.add_argument("--address", default=None, help="a running Ray cluster: HOST:PORT, ray://HOST:PORT or auto")
    parser.add_argument("--address-timeout", type=float, default=120.0, help="seconds a Ray cluster has to answer")
    parser.add_argument("--workers", type=int, default=None, help="local Ray: units at once (default: GPUs or cores)")
    wait = sweep_checks.PLACEMENT_TIMEOUT
    parser.add_argument("--placement-timeout", type=float, default=wait, help="seconds Ray has to place a unit")
    parser.add_argument("--skip-unavailable", action="store_true", help="drop the units of models that cannot load")
    parser.add_argument("--list", action="store_true", help="list the units and whether each is done; run nothing")
    args = parser.parse_args(argv)
    os.environ.setdefault("ACCESSIBILITY_PROGRESS", "0")  # one line a unit, no progress bars in logs

    try:
        if args.workers is not None and args.workers < 1:
            raise SweepError(f"--workers must be >= 1, got {args.workers}")
        if args.address is not None:
            check_address(args.address, probe_timeout=args.address_timeout)
        units = plan_work(
            args.preset,
            args.chapters,
            _parse_overrides(args.overrides),
            device=args.device,
            check_machine=not args.list,
        )
        root = Path(args.results) if args.results else (_repo_runs() / args.preset / "results")
        if args.list:
            store = ResultStore(root)
            for u in units:
                state = "done" if store.has(NAMESPACE, u.key()) else "to run"
                print(f"{state:7s} {u.label}")
            return 0
        units = check_models(units, skip_unavailable=args.skip_unavailable)
    except ValueError as exc:  # SweepError, ParameterError: bad input, before any unit ran
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        opts = {"ray": args.ray, "address": args.address, "workers": args.workers}
        report = run(units, root, **opts, placement_timeout=args.placement_timeout)
    except SweepError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"\n{len(report.ran)} ran, {len(report.done_before)} were done, {len(report.failed)} failed "
        f"in {report.seconds:.0f} s; store: {root}"
    )
    for u, msg in report.failed:
        print(f"FAILED {u.label}: {msg}")
    if report.ran or report.done_before:
        print(f"next: scripts/rerun.py --preset {args.preset} --out {root.parent}")
    return 1 if report.failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
