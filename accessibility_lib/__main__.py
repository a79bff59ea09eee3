"""The library's commands: ``python -m accessibility_lib COMMAND [ARGS]``.

python -m accessibility_lib fetch smollm2-135m [gemma-3-270m]      # offline real models (models.fetch)
python -m accessibility_lib capacity EleutherAI/pythia-160m -m 4    # bounds from a config (theory.capacity)
python -m accessibility_lib sweeps --preset paper --device cuda     # the heavy units (runs.sweeps)
"""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "fetch": "accessibility_lib.models.fetch",
    "capacity": "accessibility_lib.theory.capacity",
    "sweeps": "accessibility_lib.runs.sweeps",
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        given = f"unknown command {argv[0]!r}; " if argv and argv[0] not in ("-h", "--help") else ""
        print(
            f"{given}usage: python -m accessibility_lib {{{','.join(COMMANDS)}}} [ARGS]\n\n{__doc__}", file=sys.stderr
        )
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    return int(importlib.import_module(COMMANDS[argv[0]]).main(argv[1:]) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
