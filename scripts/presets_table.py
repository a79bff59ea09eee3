#!/usr/bin/env python3
"""Write the presets table (accessibility_lib.runs.presets) into README.md and book/presets.md.

python scripts/presets_table.py          # rewrite both
python scripts/presets_table.py --check  # exit 1 if either is out of date (used by the tests)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from accessibility_lib.runs import presets  # noqa: E402

START, END = "<!-- presets:start -->", "<!-- presets:end -->"


def _fmt(value) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def markdown_table() -> str:
    lines = ["| chapter | preset | parameters |", "|---|---|---|"]
    for row in presets.table():
        params = "; ".join(f"`{k}`={_fmt(v)}" for k, v in row.items() if k not in ("chapter", "preset"))
        lines.append(f"| {row['chapter']} | **{row['preset']}** | {params.replace('|', '/')} |")
    return "\n".join(lines)


def _replace_block(text: str, table: str) -> str:
    if START not in text or END not in text:
        raise SystemExit(f"markers {START} … {END} missing")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{table}\n{END}{tail}"


PAGE = """# Presets

Every chapter's `parameters` cell takes a preset name plus individual overrides (a value left at `None`
comes from the preset). `smoke` runs in seconds (the notebook tests), `default` is the default (two CPU
cores, minutes), `paper` is the paper's models and sizes (a GPU box; see the README's "Re-executing at
paper scale"), and `paper_tiny` is `paper` with every model replaced by its tiny random-weight stand-in
and small sizes (every paper-scale code path on a CPU, in minutes; see the appendix on running at scale).
They live in `accessibility_lib/runs/preset_values.py`; this table is generated from it.

"""


def main(argv: list[str]) -> int:
    table = markdown_table()
    readme = ROOT / "README.md"
    page = ROOT / "book" / "presets.md"
    want_readme = _replace_block(readme.read_text(), table)
    want_page = PAGE + START + "\n" + table + "\n" + END + "\n"
    if "--check" in argv:
        stale = [
            p.name for p, want in ((readme, want_readme), (page, want_page)) if not p.exists() or p.read_text() != want
        ]
        if stale:
            print(f"out of date: {stale}; run python scripts/presets_table.py")
            return 1
        return 0
    readme.write_text(want_readme)
    page.write_text(want_page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
