"""Slurm hostlist expressions: ``su1-node[01-16]`` and back.

Slurm's configuration files and ``scontrol`` print node and switch lists in its hostlist
syntax: a prefix, then numbers in brackets as ranges and single values
(``tux[0-3,12,18-20]``), lists separated by commas (topology.conf(5): "Slurm's hostlist
expression parser is used, so the node and switch names need not be consecutive").
:func:`compress` writes that syntax (a name without a trailing number stays as it is);
:func:`expand` reads it, one bracket group per name as Slurm's own output uses, and raises
``ValueError`` naming what it could not read.

    >>> compress(["su1-node01", "su1-node02", "su1-node03", "su1-node07", "mgmt"])
    'mgmt,su1-node[01-03,07]'
    >>> expand("su1-node[01-03,07],mgmt")
    ['su1-node01', 'su1-node02', 'su1-node03', 'su1-node07', 'mgmt']

Source: https://slurm.schedmd.com/topology.conf.html (hostlist expressions in Nodes=,
Switches=).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_NAMES = 1 << 20
"""Most names one expression (or one file, its reader passing what is left) may expand to:
the largest fabric the tool plans has 262,144 GPUs (``spec.model.MAX_GPUS``), so at most
that many nodes and fewer switches. ``n[0-999999999]`` is refused before one name is made."""

MAX_DIGITS = 18
"""Longest number in a range: wider zero-padding would make each name longer than the line."""

_TRAILING = re.compile(r"^(.*?)(\d+)$")
_GROUP = re.compile(r"^([^\[\],]*)\[([0-9,\-]+)\]([^\[\],]*)$")


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def _widths(digits: list[str]) -> dict[int, list[int]]:
    """Zero-padding width → numbers: one width when the numbers share a length (``01``-``16``)
    or none is padded (``1``-``100``), else one group per length."""
    lengths = {len(d) for d in digits}
    if len(lengths) == 1:
        return {lengths.pop(): [int(d) for d in digits]}
    if not any(d.startswith("0") for d in digits):
        return {0: [int(d) for d in digits]}
    out: dict[int, list[int]] = {}
    for d in digits:
        out.setdefault(len(d), []).append(int(d))
    return out


def compress(names: Iterable[str]) -> str:
    """``names`` as one hostlist expression, sorted by prefix then number."""
    by_prefix: dict[str, list[str]] = {}
    plain: list[str] = []
    for name in names:
        m = _TRAILING.match(name)
        if m is None:
            plain.append(name)
        else:
            by_prefix.setdefault(m.group(1), []).append(m.group(2))
    parts = sorted(set(plain))
    for prefix, digits in sorted(by_prefix.items()):
        for width, numbers in sorted(_widths(digits).items()):
            runs = _runs(numbers)
            if len(runs) == 1 and runs[0][0] == runs[0][1]:
                parts.append(f"{prefix}{runs[0][0]:0{width}d}")
                continue
            spans = [
                f"{lo:0{width}d}" if lo == hi else f"{lo:0{width}d}-{hi:0{width}d}"
                for lo, hi in runs
            ]
            parts.append(f"{prefix}[{','.join(spans)}]")
    return ",".join(parts)


def _split(expr: str) -> list[str]:
    """Split at the commas outside brackets."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(expr):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(expr[start:i])
            start = i + 1
    out.append(expr[start:])
    return [p for p in (s.strip() for s in out) if p]


def expand(expr: str, limit: int = MAX_NAMES) -> list[str]:
    """The names of a hostlist expression, in the order written (``ValueError`` if bad, or if
    it would make more than ``limit`` names: counted before any is made)."""
    names: list[str] = []
    for part in _split(expr):
        if "[" not in part and "]" not in part:
            if len(names) >= limit:
                raise ValueError(f"more than {limit:,} names")
            names.append(part)
            continue
        m = _GROUP.match(part)
        if m is None:
            raise ValueError(f"{part!r} is not a hostlist expression (e.g. node[01-04,07])")
        prefix, body, suffix = m.groups()
        for span in body.split(","):
            lo_text, _, hi_text = span.partition("-")
            if not lo_text or (span.endswith("-")):
                raise ValueError(f"{part!r}: bad range {span!r}")
            hi_text = hi_text or lo_text
            if max(len(lo_text), len(hi_text)) > MAX_DIGITS:
                raise ValueError(f"{span[:40]!r}: a number longer than {MAX_DIGITS} digits")
            lo, hi = int(lo_text), int(hi_text)
            if hi < lo:
                raise ValueError(f"{part!r}: range {span!r} runs backwards")
            if len(names) + hi - lo + 1 > limit:
                raise ValueError(
                    f"{span!r}: expands to more than {limit:,} names (no fabric the tool "
                    "plans has that many nodes; is the range a typo?)"
                )
            width = len(lo_text) if lo_text.startswith("0") else 0
            names.extend(f"{prefix}{n:0{width}d}{suffix}" for n in range(lo, hi + 1))
    return names


__all__ = ["compress", "expand"]
