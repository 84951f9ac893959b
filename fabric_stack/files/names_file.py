"""Reading a names file: ``planned,actual[,rack,u,serial,guid,mac]`` CSV → spec ``names`` data.

Read through the input layer (size limit, UTF-8, symlinks); every problem is one
:class:`~fabric_stack.errors.InputFileError` line naming the file and line: a missing
or unknown column, an empty cell, a name a switch OS or Kubernetes would refuse, a
name listed twice, a GUID or MAC that is not one. Whether each ``planned`` name is in
the plan is checked when the names are applied (:mod:`fabric_stack.topology.rename`), also by line.

``guid`` and ``mac`` cells may hold several values separated by ``;`` or spaces (a
server has one HCA GUID per rail port); ``fabric-stack adopt`` writes them that way.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fabric_stack.errors import InputFileError
from fabric_stack.files import inputs
from fabric_stack.naming.site import SiteName

COLUMNS = ("planned", "actual", "rack", "u", "serial", "guid", "mac")
"""Columns a names file may have; the first two are required."""

MAX_NAMES_BYTES = 64 << 20
"""A names file of a 262,144-GPU cluster (~40k devices with 8 GUIDs each) is ~15 MB."""


def _split(cell: str) -> list[str]:
    return [x for x in re.split(r"[;\s]+", cell.strip()) if x]


def _row(cells: dict[str, str], line: int, path: str) -> SiteName:
    for col in ("planned", "actual"):
        if not cells.get(col):
            raise InputFileError(path, f"empty {col!r} cell (every row names a device)", line)
    u = cells.get("u", "")
    data: dict[str, Any] = {
        "planned": cells["planned"],
        "actual": cells["actual"],
        "rack": cells.get("rack", ""),
        "u": u if u else 0,
        "serial": cells.get("serial", ""),
        "guids": _split(cells.get("guid", "")),
        "macs": _split(cells.get("mac", "")),
        "line": line,
    }
    try:
        return SiteName.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        col = {"guids": "guid", "macs": "mac"}.get(str(err["loc"][0]), str(err["loc"][0]))
        msg = str(err["msg"]).removeprefix("Value error, ")
        if col == "u":
            msg = f"{u!r} is not a rack unit (an integer 1-60)"
        raise InputFileError(path, f"{col}: {msg}", line) from None


def load_names(path: str | Path) -> dict[str, Any]:
    """Spec ``names`` data (``{"file", "rows"}``) from a names CSV; errors by line."""
    p = str(path)
    text = inputs.read_text(path, MAX_NAMES_BYTES)
    rows = inputs.csv_reader(text, p)
    header = next(rows, None)
    if header is None:
        raise InputFileError(p, "empty file (expected the header planned,actual)", 1)
    cols = [h.strip().lstrip("\ufeff").lower() for h in header]
    for c in cols:
        if c not in COLUMNS:
            raise InputFileError(p, f"unknown column {c!r} (columns: {', '.join(COLUMNS)})", 1)
    for need in ("planned", "actual"):
        if need not in cols:
            raise InputFileError(p, f"missing column {need!r} (header: planned,actual,…)", 1)
    out: list[SiteName] = []
    first: dict[tuple[str, str], int] = {}
    for line, raw in enumerate(rows, start=2):
        if not raw or all(not c.strip() for c in raw):
            continue
        if len(raw) != len(cols):
            raise InputFileError(p, f"{len(raw)} fields where the header has {len(cols)}", line)
        row = _row({c: v.strip() for c, v in zip(cols, raw, strict=True)}, line, p)
        for what, key in (("planned", row.planned), ("actual", row.actual)):
            if (what, key) in first:
                raise InputFileError(
                    p,
                    f"{what} name {key!r} is listed twice (first on line {first[(what, key)]})",
                    line,
                )
            first[(what, key)] = line
        out.append(row)
    return {"file": p, "rows": [r.model_dump() for r in out]}


def write_names(rows: list[SiteName]) -> str:
    """A names CSV of ``rows`` (the inverse of :func:`load_names`)."""
    lines = [",".join(COLUMNS)]
    for r in rows:
        cells = [
            r.planned,
            r.actual,
            r.rack,
            str(r.u) if r.u else "",
            r.serial,
            ";".join(f"0x{g}" for g in r.guids),
            ";".join(r.macs),
        ]
        lines.append(",".join(_quote(c) for c in cells))
    return "\n".join(lines) + "\n"


def _quote(cell: str) -> str:
    return f'"{cell}"' if any(c in cell for c in ',"\n') else cell


__all__ = ["COLUMNS", "load_names", "write_names"]
