#!/usr/bin/env python3
"""Write the scale plan's tables (accessibility_lib.runs.scaleplan) into book/scale.md, between its markers.

    python scripts/scale_plan.py           # regenerate the tables
    python scripts/scale_plan.py --check   # exit 1 when the page is out of date (a test runs this)
    python scripts/scale_plan.py --gpu-check gpu_check.json   # print the plan at a GPU's measured rates

The numbers come from ``scaleplan_page.markdown("paper")``: FLOP counts and memory from the paper preset and
the models' architecture facts, times from the CPU throughput stored by
``benchmarks/bench_scale_plan.py --write`` (``book/data/scale/cpu_throughput.json``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from accessibility_lib.ground.paths import REPO_ROOT as ROOT
from accessibility_lib.runs import scaleplan_page

PAGE = ROOT / "book" / "scale.md"
START, END = "<!-- scale-plan:start -->", "<!-- scale-plan:end -->"


def render(text: str) -> str:
    if START not in text or END not in text:
        raise SystemExit(f"{PAGE} has no {START} … {END} block")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{scaleplan_page.markdown('paper')}\n{END}{tail}"


def main(argv: list[str]) -> int:
    if "--gpu-check" in argv:  # print the plan with a GPU's measured rates (gpu_check --json FILE); the page stays
        report = json.loads(Path(argv[argv.index("--gpu-check") + 1]).read_text())
        print(scaleplan_page.markdown("paper", gpu=scaleplan_page.gpu_from_check(report)))
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
