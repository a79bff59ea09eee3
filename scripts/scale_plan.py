#!/usr/bin/env python3
"""Write the scale plan's tables (accessibility_lib.runs.scaleplan) into book/scale.md, between its markers.

    python scripts/scale_plan.py           # regenerate the tables
    python scripts/scale_plan.py --check   # exit 1 when the page is out of date (a test runs this)
    python scripts/scale_plan.py --gpu-check gpu_check.json   # print the plan at a GPU's measured rates

The numbers come from ``scaleplan.markdown("paper")``: FLOP counts and memory from the paper preset and
the models' architecture facts, times from the CPU throughput stored by
``benchmarks/bench_scale_plan.py --write`` (``book/data/scale/cpu_throughput.json``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAGE = ROOT / "book" / "scale.md"
START, END = "<!-- scale-plan:start -->", "<!-- scale-plan:end -->"


def render(text: str) -> str:
    from accessibility_lib.runs import scaleplan

    if START not in text or END not in text:
        raise SystemExit(f"{PAGE} has no {START} … {END} block")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{scaleplan.markdown('paper')}\n{END}{tail}"


def main(argv: list[str]) -> int:
    if "--gpu-check" in argv:  # print the plan with a GPU's measured rates (gpu_check --json FILE); the page stays
        from accessibility_lib.runs import scaleplan

        report = json.loads(Path(argv[argv.index("--gpu-check") + 1]).read_text())
        print(scaleplan.markdown("paper", gpu=scaleplan.gpu_from_check(report)))
        return 0
    text = PAGE.read_text()
    want = render(text)
    if "--check" in argv:
        if text != want:
            print(f"out of date: {PAGE.name}; run python scripts/scale_plan.py")
            return 1
        return 0
    PAGE.write_text(want)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
