"""The heavy chapters' work as independent units keyed in the result store, run serially or over Ray.

A *unit* is the smallest piece of a chapter's sweep that depends on nothing else:

- **cramming** (chapter 3): one n50 search (:func:`accessibility_lib.experiments.n50.find_n50`) per model × target
  kind × prompt length m;
- **support** (chapter 5): one analysis (:func:`accessibility_lib.geometry.support.analyse_model`) per model;
- **copying** (chapter 6): one fine-tuning and its evaluation
  (:func:`accessibility_lib.experiments.copying_model.train_copying`, ``evaluate_run``) per base × width × longest
  training length.

:func:`plan_units` lists a preset's units from the chapters' own parameters
(:func:`accessibility_lib.runs.presets.resolve`, the same typed check the chapters run), :func:`run_unit` runs
one with exactly the arguments its chapter uses, so every per-target, per-chunk and per-run entry it
writes is the entry the chapter looks up, and :func:`run` runs a list of them

- serially in this process (the default), or
- fanned out over **Ray**: a local Ray on this machine (one unit per GPU, ``num_gpus=1``; on CPU one unit
  per worker, ``num_cpus=1``), or a running Ray cluster by address.

The result store is the only place results land: every unit writes its fine-grained entries as it goes
(the store writes atomically: a temporary file in the same folder, then ``os.replace``) and, last, one
record under namespace ``sweep_units`` keyed by the unit (:meth:`Unit.key`). A unit with a record is done
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
address that does not answer — stops the command with a message naming it before any unit starts.
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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from accessibility_lib.ground.results import ResultStore

__all__ = [
    "CHAPTERS",
    "NAMESPACE",
    "Unit",
    "SweepError",
    "plan_units",
    "check_models",
    "check_address",
    "run_unit",
    "run",
    "Report",
    "cramming_search",
    "copying_settings",
    "main",
]

#: Chapters with sweep units, in the order the units are listed.
CHAPTERS = ("cramming", "support", "copying")
#: Result-store namespace of the per-unit records.
NAMESPACE = "sweep_units"
_FORMAT = 1  # bump when a unit's work changes
_TOKEN = ".store_token"


class SweepError(ValueError):
    """Bad input to a sweep (found before any unit starts) or a store that a worker cannot see."""


@dataclass
class Unit:
    """One independent piece of work.

    Attributes:
        chapter: ``"cramming"``, ``"support"`` or ``"copying"``.
        spec: every value that determines the unit's result (JSON-able): the chapter's parameters it
            uses and the unit's coordinates (model, kind, m; model; base, width, training length).
        label: a short readable name.
        model: the model the unit loads (for the availability check), or None (a scratch model).
        device: where it runs (the chapter's ``device`` parameter; not part of the key).
    """

    chapter: str
    spec: dict
    label: str
    model: str | None = None
    device: str = "cpu"

    def key(self) -> dict:
        """The unit's key in namespace :data:`NAMESPACE` (the device is not part of it)."""
        return {"chapter": self.chapter, "spec": self.spec, "format": _FORMAT}

    def to_dict(self) -> dict:
        return {
            "chapter": self.chapter,
            "spec": self.spec,
            "label": self.label,
            "model": self.model,
            "device": self.device,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Unit:
        return cls(data["chapter"], data["spec"], data["label"], data.get("model"), data.get("device", "cpu"))


# ------------------------------------------------------------------------------------------ unit lists
def copying_settings(params: dict) -> list[tuple[str, str, int | None, int]]:
    """The runs of chapter 6 for its parameters: ``(label, base, width or None, train_max_len)``.

    As the chapter lists them: one scratch model per width (when ``"scratch"`` is a base), one run per
    pretrained base, all at the first training length; then the first model again at each further length.
    """
    models = [(f"scratch, d_model = {w}", "scratch", w) for w in params["widths"] if "scratch" in params["bases"]]
    models += [(b.split("/")[-1], b, None) for b in params["bases"] if b != "scratch"]
    if not models:
        return []
    first = params["train_max_lens"][0]
    settings = [(label, base, w, first) for label, base, w in models]
    settings += [(models[0][0], models[0][1], models[0][2], n) for n in params["train_max_lens"][1:]]
    return settings


def _copying_config(params: dict, base: str, width: int | None, max_len: int):
    """The chapter's ``make_config``: the :class:`~accessibility_lib.experiments.copying_model.TrainConfig` of one run."""
    from accessibility_lib.experiments.copying_model import TrainConfig

    common = {
        k: params[k]
        for k in (
            "alphabet_size",
            "context",
            "train_min_len",
            "batch_size",
            "lr",
            "warmup_steps",
            "max_steps",
            "check_every",
            "seed",
        )
    }
    if base == "scratch":
        return TrainConfig(
            base=base,
            d_model=width,
            n_layers=params["n_layers"],
            n_heads=width // params["head_dim"],
            train_max_len=max_len,
            **common,
        )
    return TrainConfig(base=base, train_max_len=max_len, **common)


_SPEC_KEYS = {
    "cramming": ("model_name", "dtype", "convention", "corpus", "n_targets", "max_steps", "patience", "lr", "seed"),
    "support": ("n_prompts", "lengths", "cell_samples", "cell_flops", "source", "token_budget"),
    "copying": ("eval_lengths", "n_strings", "seed"),
}


def plan_units(
    preset: str,
    chapters: Iterable[str] = CHAPTERS,
    overrides: dict[str, Any] | None = None,
    *,
    device: str | None = None,
    check_machine: bool = True,
) -> list[Unit]:
    """The units of ``chapters`` under ``preset``, with ``overrides`` applied where a chapter has that parameter.

    Args:
        preset: a preset name (:data:`accessibility_lib.runs.presets.PRESET_NAMES`).
        chapters: some of :data:`CHAPTERS`.
        overrides: parameter -> value, applied to every listed chapter that declares the parameter
            (as ``scripts/rerun.py -p``); ``"chapter.name"`` applies to that chapter only.
        device: the device override (``"cpu"``, ``"cuda"``, ``"cuda:N"``), checked against this machine.
        check_machine: check the device (set False to list units for another machine).

    Raises:
        SweepError: an unknown chapter or an override no listed chapter has.
        ParameterError (a ValueError): a wrong value, preset or device (from :func:`presets.resolve`).
    """
    from accessibility_lib.runs import presets

    chapters = list(chapters)
    bad = [c for c in chapters if c not in CHAPTERS]
    if bad or not chapters:
        raise SweepError(f"chapters must be some of {list(CHAPTERS)}, got {chapters}")
    overrides = dict(overrides or {})
    used: set[str] = set()
    units: list[Unit] = []
    for chapter in chapters:
        declared = presets.PARAMETERS[chapter]
        mine = {}
        for name, value in overrides.items():
            target, _, pname = name.rpartition(".")
            if (target in ("", chapter)) and pname in declared:
                mine[pname] = value
                used.add(name)
        if device is not None and "device" in declared:
            mine["device"] = device
        p = presets.resolve(chapter, preset, check_machine=check_machine, **mine)
        spec = {k: p[k] for k in _SPEC_KEYS[chapter]}
        dev = p["device"]
        if chapter == "cramming":
            for kind in p["kinds"]:
                for m in p["ms"]:
                    units.append(
                        Unit(
                            chapter,
                            {**spec, "kind": kind, "m": m},
                            f"cramming {p['model_name']} {kind} m={m}",
                            p["model_name"],
                            dev,
                        )
                    )
        elif chapter == "support":
            for name in p["models"]:
                units.append(Unit(chapter, {**spec, "model": name}, f"support {name}", name, dev))
        else:
            for label, base, width, max_len in copying_settings(p):
                cfg = _copying_config(p, base, width, max_len)
                units.append(
                    Unit(
                        chapter,
                        {**spec, "config": cfg.key()},
                        f"copying {label}, n <= {max_len}",
                        None if base in ("scratch", "nano-shape") else base,
                        dev,
                    )
                )
    unused = sorted(set(overrides) - used)
    if unused:
        raise SweepError(f"override(s) {unused} are parameters of none of the chapters {chapters}")
    return units


# ------------------------------------------------------------------------------------------ input checks
def _model_problem(name: str) -> str | None:
    """Why ``name`` cannot be loaded here (None when it can), without loading any weights."""
    from accessibility_lib.models import handle as models, standins

    if name in ("random-tiny", "tiny", "scratch", "nano-shape"):
        return None
    if standins.is_standin(name):
        try:
            standins.architecture(name)
        except ValueError as exc:
            return str(exc)
        return None
    try:
        where, local = models._resolve(name)
    except models.ModelNotAvailableError as exc:
        return " ".join(str(exc).split())
    if local:
        weights = sorted(Path(where).glob("*.safetensors"))
        if not weights:
            return f"folder {where} holds no *.safetensors weights (only safetensors are loaded)"
        try:
            for w in weights:
                models.check_safetensors(w)
        except models.CorruptWeightsError as exc:
            return str(exc)
        return None
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = isinstance(try_to_load_from_cache(where, "config.json"), str)
    except Exception:  # an odd id, a broken cache: treat as not cached
        cached = False
    if cached:
        return None
    if models._hub_offline() or not models._hub_reachable():
        return (
            f"{where!r} is not in the Hugging Face cache and the hub is unreachable or offline (HF_HUB_OFFLINE); "
            "copy the model into a folder and pass the folder, or use its stand-in 'standin:" + where + "'"
        )
    return None


def check_models(
    units: list[Unit], *, skip_unavailable: bool = False, log: Callable[[str], None] = print
) -> list[Unit]:
    """The units whose model can be loaded here; raise on any other unless ``skip_unavailable``.

    Raises:
        SweepError: a unit's model cannot be loaded (the message names each model and why).
    """
    problems = {}
    for name in dict.fromkeys(u.model for u in units if u.model is not None):
        why = _model_problem(name)
        if why is not None:
            problems[name] = why
    if problems and not skip_unavailable:
        lines = "\n".join(f"  {k}: {v}" for k, v in problems.items())
        raise SweepError(
            f"{len(problems)} model(s) cannot be loaded here (no unit was started):\n{lines}\n"
            "Fix them, or pass --skip-unavailable to run the other units."
        )
    for name, why in problems.items():
        log(f"skipped the units of {name}: {why}")
    return [u for u in units if u.model not in problems]


def check_address(address: str, timeout: float = 5.0, probe_timeout: float | None = None) -> None:
    """Raise :class:`SweepError` unless a Ray cluster answers at ``address``.

    First a TCP connection (``timeout`` seconds): a refused or silent address fails at once. Then, when
    ``probe_timeout`` is given, a Ray driver connects from a child process that is stopped after
    ``probe_timeout`` seconds: an address that accepts TCP but is no Ray cluster (another service, a proxy)
    makes ``ray.init`` retry for many minutes, and this turns that into a clear error. ``"auto"`` and
    ``"local"`` (this machine's running instance) skip the TCP step.
    """
    if address not in ("auto", "local"):
        rest = address.split("://", 1)[1] if "://" in address else address
        host, sep, port = rest.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise SweepError(f"address must be HOST:PORT (e.g. 10.0.0.5:6379) or ray://HOST:PORT, got {address!r}")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
                pass
        except OSError as exc:
            why = (
                f"timed out after {timeout:g} s"
                if isinstance(exc, TimeoutError)
                else exc.strerror or type(exc).__name__
            )
            raise SweepError(
                f"the Ray address {address!r} cannot be reached (TCP connection to {host}:{port} failed: {why}); "
                "start the cluster there (`ray start --head`), or leave --address out for a local Ray"
            ) from None
    if probe_timeout is None:
        return
    import subprocess

    code = "import ray, sys; ray.init(address=sys.argv[1], log_to_driver=False); ray.shutdown(); print('ok')"
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, address], capture_output=True, text=True, timeout=probe_timeout
        )
    except subprocess.TimeoutExpired:
        raise SweepError(
            f"no Ray cluster answered at {address!r} within {probe_timeout:g} s (something accepts TCP there, but "
            "a Ray driver could not connect); check the address (`ray status` on the head node prints it), or "
            "leave --address out for a local Ray"
        ) from None
    if proc.returncode != 0 or "ok" not in proc.stdout:
        last = [line for line in proc.stderr.splitlines() if line.strip()][-1:] or ["(no message)"]
        raise SweepError(f"could not connect to a Ray cluster at {address!r}: {last[0][:300]}")


# ------------------------------------------------------------------------------------------ the work
def cramming_search(handle, source, m: int, params: dict, store):
    """Chapter 3's n50 search for one target source and m, with the chapter's settings.

    The chapter calls :func:`accessibility_lib.experiments.n50.find_n50` with these arguments (n_start 2m or the
    source's shortest length, AdamW betas (0.9, 0.9) and weight decay 0.01, as the authors' code);
    the store keys of its outcomes are therefore the ones the chapter looks up.
    """
    from accessibility_lib.experiments.n50 import find_n50

    return find_n50(
        handle,
        source,
        m,
        params["n_targets"],
        store=store,
        model_name=params["model_name"],
        n_start=max(source.min_length, 2 * m),
        seed=params["seed"],
        max_steps=params["max_steps"],
        patience=params["patience"],
        lr=params["lr"],
        betas=(0.9, 0.9),
        weight_decay=0.01,
    )


@contextlib.contextmanager
def _one_thread(device: str):
    """One torch thread on CPU (as the chapters run; the same arithmetic whatever the worker), restored after."""
    import torch

    before = torch.get_num_threads()
    if str(device).startswith("cpu"):
        torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _fit_summary(fit) -> dict:
    return {"ok": bool(fit.ok), "n50": float(fit.n50), "ci": [float(c) for c in fit.ci], "describe": fit.describe()}


def _cramming(spec: dict, store: ResultStore, device: str) -> dict:
    import torch

    from accessibility_lib.models.handle import load_model
    from accessibility_lib.experiments.targets import target_source

    handle = load_model(spec["model_name"], device=device, dtype=getattr(torch, spec["dtype"]))
    source = target_source(handle, spec["kind"], spec["convention"], seed=spec["seed"], corpus=spec["corpus"])
    r = cramming_search(handle, source, spec["m"], spec, store)
    return {
        "n50": float(r.n50),
        "fit": _fit_summary(r.fit),
        "bracketed": bool(r.bracketed),
        "lengths": r.lengths.tolist(),
        "rates": r.rates.tolist(),
        "trials": r.trials.tolist(),
        "outcomes": len(r.outcomes),
        "crammed": int(r.runs),
        "found": int(r.cached),
    }


def _support(spec: dict, store: ResultStore, device: str) -> dict:
    from accessibility_lib.geometry import support

    loaded, notes = support.load_available([spec["model"]], device, fallback=False, lengths=spec["lengths"])
    if not loaded:  # checked before the sweep started; the model went away since
        raise SweepError(notes[0] if notes else f"{spec['model']}: not available")
    (name, handle), *_ = loaded
    res = support.analyse_model(
        handle,
        name,
        n_prompts=spec["n_prompts"],
        lengths=spec["lengths"],
        cell_samples=spec["cell_samples"],
        cell_flops=spec["cell_flops"],
        source=spec["source"],
        token_budget=spec["token_budget"],
        store=store,
    )
    return {
        "d": res.d,
        "vocab": res.vocab_size,
        "stats": res.stats,
        "C": {m: {row: c.rows[row].C for row in c.rows} for m, c in res.columns.items()},
    }


def _copying(spec: dict, store: ResultStore, device: str) -> dict:
    from accessibility_lib.experiments import copying_model

    conf = {k: v for k, v in spec["config"].items() if k != "format"}
    cfg = copying_model.TrainConfig(**conf)
    model, info = copying_model.train_copying(cfg, store=store, device=device)
    res = copying_model.evaluate_run(
        cfg, model, spec["eval_lengths"], n_strings=spec["n_strings"], seed=spec["seed"], store=store
    )
    return {
        "steps": int(info["steps"]),
        "reached": bool(info["reached"]),
        "cached": bool(info["cached"]),
        "length": [int(x) for x in res["length"]],
        "exact_rate": [float(x) for x in res["exact_rate"]],
    }


_WORK = {"cramming": _cramming, "support": _support, "copying": _copying}


def _running_path(store: ResultStore, unit: Unit) -> Path:
    return store._path(NAMESPACE, unit.key()).with_suffix(".running")


def run_unit(unit: Unit | dict, root: str | os.PathLike, device: str | None = None, token: str | None = None) -> dict:
    """Run one unit into the store at ``root`` (skipped when its record is there); return its record.

    While it runs, ``<record>.running`` beside the record names the process (host, pid, start time); it
    is removed when the unit ends (it stays behind a killed process and is overwritten by the next run).

    Args:
        unit: a :class:`Unit` (or its :meth:`Unit.to_dict`).
        root: the store's folder.
        device: where to run (``"cpu"``, ``"cuda"``, ``"cuda:N"``); default the unit's own.
        token: the driver's store token; when given, the store must hold it (a worker that does not see
            the driver's store raises :class:`SweepError` instead of writing elsewhere).

    Returns:
        The unit's record: ``{"result": ..., "seconds", "host", "pid", "device", "label"}``.
    """
    unit = Unit.from_dict(unit) if isinstance(unit, dict) else unit
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
        with _one_thread(device):
            result = _WORK[unit.chapter](unit.spec, store, device)
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

    done_before: list[Unit] = field(default_factory=list)
    ran: list[Unit] = field(default_factory=list)
    failed: list[tuple[Unit, str]] = field(default_factory=list)
    seconds: float = 0.0


def _describe(record: dict) -> str:
    r = record["result"]
    if "fit" in r:
        return f"{r['fit']['describe']} ({r['crammed']} targets crammed, {r['found']} found in the store)"
    if "C" in r:
        return f"d = {r['d']}, |V| = {r['vocab']}, ball C = {r['C'].get('corrected', {}).get('ball')}"
    return f"{r['steps']} steps, {'reached' if r['reached'] else 'did not reach'} 100 %"


def run(
    units: list[Unit],
    root: str | os.PathLike,
    *,
    ray: bool = False,
    address: str | None = None,
    workers: int | None = None,
    max_retries: int = 3,
    log: Callable[[str], None] = print,
) -> Report:
    """Run every unit that has no record in the store at ``root``: serially, or over Ray.

    Args:
        units: from :func:`plan_units` (and :func:`check_models`).
        root: the result store's folder (shared by every node of a Ray cluster).
        ray: fan the units out over a local Ray (``workers`` at once: default every GPU, or every CPU core).
            Each unit runs on its own device (:attr:`Unit.device`): over Ray a CUDA unit asks for one GPU
            (``num_gpus=1``) and runs on the GPU Ray gives it; a CPU unit asks for one CPU.
        address: a running Ray cluster (``HOST:PORT``, ``ray://HOST:PORT`` or ``"auto"``); implies ``ray``.
        max_retries: Ray's retries of a unit whose worker died (a unit that raised is not retried).
        log: where progress lines go.

    Returns:
        A :class:`Report`. Failed units are listed, not raised: the others still run.

    Raises:
        SweepError: an address that does not answer, Ray not installed, a cluster without GPUs for a CUDA
            sweep (all before any unit starts).
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
        _run_ray(todo, Path(root), address, workers, max_retries, log, report)
    else:
        for i, u in enumerate(todo, 1):
            try:
                rec = run_unit(u, root)
                report.ran.append(u)
                log(f"[{i}/{len(todo)}] {u.label}: {_describe(rec)} in {rec['seconds']:.1f} s")
            except Exception as exc:  # report and go on: the other units are independent
                report.failed.append((u, f"{type(exc).__name__}: {exc}"))
                log(f"[{i}/{len(todo)}] FAILED {u.label}: {type(exc).__name__}: {exc}")
    report.seconds = time.perf_counter() - t0
    return report


def _run_ray(todo, root: Path, address, workers, max_retries, log, report) -> None:
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
    token = secrets.token_hex(8)  # written once Ray is up: a refused address leaves no trace in the store
    (root / NAMESPACE).mkdir(parents=True, exist_ok=True)
    tmp = root / NAMESPACE / f".{_TOKEN}.{os.getpid()}.tmp"
    tmp.write_text(token)
    os.replace(tmp, root / NAMESPACE / _TOKEN)
    try:
        resources = ray.cluster_resources()
        if gpu and resources.get("GPU", 0) < 1:
            raise SweepError(f"the units ask for a CUDA device but the Ray cluster has no GPU ({resources})")
        task = ray.remote(_remote_unit)
        pending = {}
        for u in todo:
            cuda = torch.device(u.device).type == "cuda"
            opts = task.options(num_gpus=1 if cuda else 0, num_cpus=1, max_retries=max_retries, retry_exceptions=False)
            pending[opts.remote(u.to_dict(), str(root.resolve()), token)] = u
        log(
            f"Ray: {resources.get('GPU', 0):g} GPU(s), {resources.get('CPU', 0):g} CPU(s); "
            f"{len(pending)} units submitted"
        )
        i = 0
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                u = pending.pop(ref)
                i += 1
                try:
                    rec = ray.get(ref)
                    report.ran.append(u)
                    log(
                        f"[{i}/{len(todo)}] {u.label}: {_describe(rec)} in {rec['seconds']:.1f} s on "
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
    from accessibility_lib.ground.results import _checkout_root

    root = _checkout_root()
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
    parser.add_argument("--skip-unavailable", action="store_true", help="drop the units of models that cannot load")
    parser.add_argument("--list", action="store_true", help="list the units and whether each is done; run nothing")
    args = parser.parse_args(argv)
    os.environ.setdefault("ACCESSIBILITY_PROGRESS", "0")  # one line a unit, no progress bars in logs

    try:
        if args.workers is not None and args.workers < 1:
            raise SweepError(f"--workers must be >= 1, got {args.workers}")
        if args.address is not None:
            check_address(args.address, probe_timeout=args.address_timeout)
        units = plan_units(
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
        report = run(units, root, ray=args.ray, address=args.address, workers=args.workers)
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
