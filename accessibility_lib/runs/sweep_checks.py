"""Checks before a sweep starts: every unit's model can be loaded here, and a Ray address answers."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable

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
