"""Every table a chapter prints under an ε convention's name is checked against that convention.

A chapter prints an ε convention by its key (``rinf_fp16``, ``l2_fp16``, ``u_fp16``, ``u_bf16``, ``u_fp32``,
``table1_pythia``; :data:`accessibility_lib.theory.precision.CONVENTIONS`) beside the r, ε and 2r/ε it used.
This module finds those tables in a chapter's executed Markdown outputs and asks
:func:`accessibility_lib.theory.precision.check_printed` whether the printed numbers are that
convention's — so a table that says ``rinf_fp16`` (the authors' r = r∞) while its r is the largest L2
norm fails, however right each number is.

Which convention a row is printed under:

* a column whose header contains "convention": the key named in that row's cell;
* otherwise the key the paragraph right above the table introduces as "convention `key`" (when it
  introduces exactly one), else the one key that paragraph names (a paragraph naming several keys, none
  introduced, leaves the table unchecked).

:func:`check_tables` also counts the rows it checked, so a test can require that a chapter which prints
convention tables had some checked (a scanner that silently reads nothing would pass every chapter).

Which numbers are read (headers compared without Markdown markup): ``r`` (the radius used), ``ε``,
``2r/ε``, ``r∞`` (or ``r_inf``) and ``r₂`` / ``r (max L2)`` / ``max L2`` (the largest L2 norm). Rows whose
cells are not numbers (``—``) are skipped; a table with a convention and none of r, ε, 2r/ε is not a
convention table.

Used by ``tests/notebooks/test_notebooks.py`` (on every chapter executed under the smoke preset) and
``tests/notebooks/test_conventions.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from accessibility_lib.theory import precision

__all__ = ["Table", "markdown_tables", "check_tables", "convention_problems", "notebook_markdown"]

_KEYS = tuple(sorted(precision.CONVENTIONS, key=len, reverse=True))
_KEY_RE = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, _KEYS)) + r")(?![A-Za-z0-9_])")
_INTRO_RE = re.compile(r"convention\s+[`*]*(" + "|".join(map(re.escape, _KEYS)) + r")(?![A-Za-z0-9_])")
_COLUMNS = {  # role -> pattern of a header without markup
    "r_l2": re.compile(r"^(r₂|r_2|r_l2|r_\{?2\}?|max l2.*|r \(max (l2|‖h‖₂)\).*)$"),
    "r_inf": re.compile(r"^(r∞|r_∞|r_inf|r_\{?\\infty\}?)( \(.*\))?$"),
    "r": re.compile(r"^(r|r used)$"),
    "eps": re.compile(r"^(ε|eps|\\varepsilon)$"),
    "ratio": re.compile(r"^2r/(ε|eps|\\varepsilon)$"),
}


@dataclass
class Table:
    """A Markdown table: the paragraph above it, its header cells and its body rows (cells as text)."""

    preamble: str
    header: list[str]
    rows: list[list[str]]


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def markdown_tables(text: str) -> list[Table]:
    """The pipe tables of a Markdown text, each with the paragraph just above it."""
    lines = text.splitlines()
    out, i = [], 0
    while i < len(lines):
        is_head = lines[i].lstrip().startswith("|") and i + 1 < len(lines)
        if is_head and re.fullmatch(r"\s*\|?\s*:?-{3,}.*", lines[i + 1]) and set(lines[i + 1]) <= set("|-: \t"):
            j, pre = i - 1, []
            while j >= 0 and not lines[j].strip():  # blank lines between the paragraph and the table
                j -= 1
            while j >= 0 and lines[j].strip() and not lines[j].lstrip().startswith("|"):
                pre.insert(0, lines[j])
                j -= 1
            header, rows, k = _cells(lines[i]), [], i + 2
            while k < len(lines) and lines[k].lstrip().startswith("|"):
                rows.append(_cells(lines[k]))
                k += 1
            out.append(Table("\n".join(pre), header, rows))
            i = k
        else:
            i += 1
    return out


def _plain(cell: str) -> str:
    return re.sub(r"[*`$]", "", cell).strip()


def _number(cell: str) -> str | None:
    text = _plain(cell).replace(",", "").replace("−", "-")
    return text if re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", text) else None


def _preamble_key(preamble: str) -> str | None:
    introduced = set(_INTRO_RE.findall(preamble))
    if len(introduced) == 1:
        return introduced.pop()
    named = set(_KEY_RE.findall(preamble))
    return named.pop() if len(named) == 1 and not introduced else None


def check_tables(text: str, where: str = "") -> tuple[int, list[str]]:
    """Check every printed convention row of a Markdown text; count the rows checked.

    Args:
        text: Markdown (a chapter's executed output, or any text with pipe tables).
        where: a label prefixed to each problem (e.g. the chapter and cell).

    Returns:
        (rows checked, problems): one ``"<where>: <row> — <what is wrong>"`` line per row whose numbers are
        not its convention's; a row counts as checked when it names a convention and prints r and ε or 2r/ε.
    """
    out, checked = [], 0
    for t in markdown_tables(text):
        heads = [_plain(h).lower() for h in t.header]
        roles = {}
        for idx, h in enumerate(heads):
            for role, pat in _COLUMNS.items():
                if role not in roles and pat.match(h):
                    roles[role] = idx
        if not {"r", "eps", "ratio"} & set(roles):
            continue
        conv_col = next((i for i, h in enumerate(heads) if "convention" in h), None)
        above = _preamble_key(t.preamble)
        for row in t.rows:
            if len(row) != len(t.header):
                continue
            if conv_col is not None:
                named = _KEY_RE.findall(row[conv_col])
                name = named[0] if len(named) == 1 else None
            else:
                name = above
            if name is None:
                continue
            vals = {role: _number(row[i]) for role, i in roles.items()}
            if vals.get("ratio") is None and (vals.get("r") is None or vals.get("eps") is None):
                continue
            checked += 1
            check = precision.check_printed(
                name, vals.get("r"), vals.get("eps"), ratio=vals.get("ratio"),
                r_l2=vals.get("r_l2"), r_inf=vals.get("r_inf"),
            )  # fmt: skip
            if not check.ok:
                really = (
                    f" (the numbers fit {', '.join(check.matches)})"
                    if check.matches and name not in check.matches
                    else ""
                )
                out.append(f"{where}: | {' | '.join(row)} | printed as {name}: {'; '.join(check.problems)}{really}")
    return checked, out


def convention_problems(text: str, where: str = "") -> list[str]:
    """The problems of :func:`check_tables` alone: empty when every convention row agrees."""
    return check_tables(text, where)[1]


def notebook_markdown(nb: dict) -> list[tuple[int, str]]:
    """(cell index, text) of every Markdown or plain-text output of an executed notebook (JSON dict)."""
    out = []
    for idx, cell in enumerate(nb.get("cells", [])):
        for o in cell.get("outputs", []) or []:
            data = o.get("data", {})
            for key in ("text/markdown", "text/plain"):
                if key in data:
                    v = data[key]
                    out.append((idx, "".join(v) if isinstance(v, list) else v))
                    break
            if o.get("output_type") == "stream":
                v = o.get("text", "")
                out.append((idx, "".join(v) if isinstance(v, list) else v))
    return out
