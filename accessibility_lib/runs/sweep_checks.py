"""Checks before a sweep starts: every unit's model can be loaded here, a Ray address answers, and the Ray
cluster can place one unit (then, while it runs, that its units are placed at all)."""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

from accessibility_lib.runs.sweep_units import SweepError, WorkUnit


# ------------------------------------------------------------------------------------------ input checks
def _model_problem(name: str) -> str | None:
    """Why ``name`` cannot be loaded here (None when it can), without loading any weights."""
    from accessibility_lib.models.loading import availability_problem

    if name in ("random-tiny", "tiny", "scratch", "nano-shape"):
        return None
    return availability_problem(name)


def check_models(
    units: list[WorkUnit], *, skip_unavailable: bool = False, log: Callable[[str], None] = print
) -> list[WorkUnit]:
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


# ------------------------------------------------------------------------------------------ placement on Ray
#: seconds a Ray cluster has to start one unit's task (``--placement-timeout``); past it the sweep reports, not waits
PLACEMENT_TIMEOUT = 300.0


def _probe() -> bool:
    """What the placement probe runs: nothing (a task that asks for what a unit asks for)."""
    return True


def _ask(gpu: bool) -> str:
    return "1 CPU and 1 GPU" if gpu else "1 CPU"


def check_placement(ray, gpu: bool, timeout: float = PLACEMENT_TIMEOUT, where: str = "local") -> dict:
    """Raise :class:`SweepError` unless the connected Ray cluster can place one unit; return its resources.

    A unit's task asks for 1 CPU, and 1 GPU when it runs on CUDA. First the cluster's totals
    (``ray.cluster_resources()``): a head started with ``num_cpus=0`` (the usual head before workers join) has
    no CPU, and Ray would queue every task and wait forever (ray-project/ray#45909). Then one probe task with the
    same ask must start and return within ``timeout`` seconds: a cluster whose CPUs or GPUs stay held by other
    work is reported with what is free (``ray.available_resources()``), not waited on.

    Args:
        ray: the ``ray`` module, connected (``ray.init`` done).
        gpu: whether the units run on CUDA.
        timeout: seconds the probe may wait to be placed and run.
        where: the cluster's address, for the message.

    Returns:
        ``ray.cluster_resources()``.

    Raises:
        SweepError: the cluster lacks a CPU or a GPU, or the probe did not run within ``timeout`` (no unit was
            submitted either way).
    """
    total = ray.cluster_resources()
    need = {"CPU": 1.0, **({"GPU": 1.0} if gpu else {})}
    missing = [k for k, v in need.items() if total.get(k, 0) < v]
    if missing:
        fix = (
            "a head started with no CPU (ray.init(num_cpus=0), `ray start --head --num-cpus=0`) runs nothing until "
            "a worker joins it (`ray start --address=HEAD:PORT` on the worker)"
            if "CPU" in missing
            else "join a node with a GPU, or run the CPU units (--device cpu)"
        )
        raise SweepError(
            f"the Ray cluster ({where}) cannot place a unit: each asks for {_ask(gpu)} and the cluster has "
            + " and ".join(f"{total.get(k, 0):g} {k}" for k in need)
            + f" ({' and '.join(missing)} missing); no unit was started. {fix[0].upper()}{fix[1:]}"
        )
    probe = ray.remote(num_cpus=1, num_gpus=1 if gpu else 0, max_retries=0)(_probe).remote()
    ready, _ = ray.wait([probe], timeout=timeout)
    if not ready:
        ray.cancel(probe)
        free = ray.available_resources()
        raise SweepError(
            f"Ray did not place a task asking for {_ask(gpu)} within {timeout:g} s on the cluster ({where}): "
            f"{free.get('CPU', 0):g} CPU and {free.get('GPU', 0):g} GPU free of {total.get('CPU', 0):g} and "
            f"{total.get('GPU', 0):g}; no unit was started. Free them, or give Ray more time (--placement-timeout)"
        )
    return total


def units_running(folder: Path, since: float) -> bool:
    """Whether a unit's ``.running`` marker in ``folder`` (the store's unit records) was written at or after
    ``since`` (a ``time.time()``): a unit of this sweep has started and not ended."""
    for marker in Path(folder).glob("*.running"):
        try:
            if marker.stat().st_mtime >= since:
                return True
        except FileNotFoundError:  # the unit ended between the listing and the look
            continue
    return False


def placement_stalled(folder: Path, since: float, last_finish: float, timeout: float) -> bool:
    """True when, ``timeout`` seconds after the last finished unit (or the submission, ``last_finish``), no unit
    of the sweep runs (no marker since ``since``): Ray holds the rest unplaced, and the sweep reports them."""
    return time.time() - last_finish >= timeout and not units_running(folder, since)
