"""InfiniBand twin, pure part: the switches' forwarding tables (LFTs) as ``dump_fts`` prints them.

:func:`parse_lfts` reads ``dump_fts`` (``-n`` or not) into one ``bytearray`` per switch (index =
destination LID, value = out port, :data:`NO_ENTRY` where the dump has none): 16,384 GPUs make
1,280 switches × ~17,700 LIDs, 22 M entries, which as dicts of ints would take gigabytes.
What the tables route is checked in :mod:`fabric_stack.twin.ibroutes`.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from itertools import repeat

NO_ENTRY = 0xFF
"""LFT value where ``dump_fts`` printed no entry (it prints valid entries only)."""

Lfts = dict[str, bytearray]
"""Switch GUID → forwarding table: ``table[lid]`` is the out port (:data:`NO_ENTRY`: none)."""

_LFT_HEAD = re.compile(r"^Unicast lids \[0x[0-9a-f]+-(0x[0-9a-f]+)\].*? guid (0x[0-9a-f]+)", re.M)
_LFT_LID = re.compile(r"^0x([0-9a-f]+) \d+\b", re.M)
_LFT_PORT = re.compile(r"^0x[0-9a-f]+ (\d+)\b", re.M)
_PORT_OF = {f"{p:03d}": p for p in range(256)} | {str(p): p for p in range(256)}


def parse_lfts(text: str) -> Lfts:
    """``dump_fts [-n]`` output (every switch's ``ibroute``) → switch GUID → LFT by LID.

    Rows are ``0x<lid> <port>`` (``-n``; without it `` : (destination)`` follows) under a
    ``Unicast lids [0x0-0x<top>] of switch … guid 0x<guid> …`` header. A switch's rows
    come in rising LID order; a run without gaps is stored in one slice, a table with gaps
    in one ``map`` (22 M rows at 16,384 GPUs).
    """
    heads = _heads(text)
    out: Lfts = {}
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        lids, ports = _rows(text[h.end() : end])
        guid = f"{int(h.group(2), 16):016x}"
        table = out.setdefault(guid, bytearray([NO_ENTRY]) * (int(h.group(1), 16) + 1))
        if not ports:
            continue
        if isinstance(lids, range):
            grow(table, lids[-1])
            table[lids.start : lids.stop] = ports
        else:  # gaps (LIDs no port holds): one C-level pass, no Python loop per row
            grow(table, max(lids))
            deque(map(table.__setitem__, lids, ports), maxlen=0)
    return out


def _heads(text: str) -> list[re.Match[str]]:
    """The switch headers, found with ``str.find`` (a multiline regex search tries every
    position of the 264 MB a 16,384-GPU dump is)."""
    out = []
    at = text.find("Unicast lids [")
    while at >= 0:
        if at == 0 or text[at - 1] == "\n":
            m = _LFT_HEAD.match(text, at)
            if m:
                out.append(m)
        at = text.find("Unicast lids [", at + 1)
    return out


def _rows(body: str) -> tuple[range | list[int], bytes]:
    """One switch's rows: their LIDs (a range when contiguous) and out ports. ``dump_fts
    -n`` rows decode without a Python object per row (:func:`_fixed_rows`) or split in C
    (two tokens a row; regular expressions over the 16k dump took 28 s); others by regex."""
    first = body.find("\n0x")
    last = body.rfind("\n0x")
    if first < 0:
        return [], b""
    stop = body.find("\n", last + 1)
    rows = body[first + 1 : stop if stop >= 0 else len(body)]
    fixed = _fixed_rows(rows)
    if fixed is not None:
        return fixed
    tokens = rows.split()
    if len(tokens) == 2 * (rows.count("\n0x") + 1):
        lids, ports = tokens[0::2], bytes(map(_PORT_OF.__getitem__, tokens[1::2]))
    else:
        lids = _LFT_LID.findall(body)
        ports = bytes(map(_PORT_OF.__getitem__, _LFT_PORT.findall(body)))
    numbers = list(map(int, lids, repeat(16)))
    if numbers and numbers[-1] - numbers[0] + 1 == len(numbers) == len(set(numbers)):
        return range(numbers[0], numbers[-1] + 1), ports
    return numbers, ports


_DIGITS = bytes(range(256)).translate(bytes.maketrans(b"0123456789", bytes(range(10))))
_ROW = 12  # len("0x0001 039 \n"): a `dump_fts -n` row of a LID below 0x10000


def _fixed_rows(rows: str) -> tuple[range, bytes] | None:
    """Contiguous ``dump_fts -n`` rows of one width, decoded without a Python object per
    row: the three port digits of every row are three strided slices, summed as big
    integers of one byte per row (a port is at most 255, so no byte carries). None when
    the rows are not like that (other widths, gaps): the caller splits them instead."""
    n = (len(rows) + 1) // _ROW
    raw = rows.encode("ascii", "replace")
    if n == 0 or len(raw) != n * _ROW - 1 or raw[6::_ROW].count(b" ") != n:
        return None
    first, last = int(rows[2:6], 16), int(rows[(n - 1) * _ROW + 2 : (n - 1) * _ROW + 6], 16)
    if last - first + 1 != n or raw[10::_ROW].count(b" ") != n:
        return None
    d = raw.translate(_DIGITS)
    value = sum(int.from_bytes(d[k::_ROW], "big") * m for k, m in ((7, 100), (8, 10), (9, 1)))
    if value.bit_length() > 8 * n:
        return None
    return range(first, last + 1), value.to_bytes(n, "big")


def grow(table: bytearray, lid: int) -> None:
    """Make ``table[lid]`` exist (new entries: :data:`NO_ENTRY`)."""
    if lid >= len(table):
        table.extend(bytes([NO_ENTRY]) * (lid + 1 - len(table)))


def lft_port(lfts: Mapping[str, bytearray], switch: str, lid: int) -> int | None:
    """The out port ``switch`` forwards ``lid`` to, or None when its table has no entry."""
    table = lfts.get(switch)
    if table is None or lid >= len(table) or table[lid] == NO_ENTRY:
        return None
    return table[lid]


def set_lft(lfts: Lfts, switch: str, lid: int, port: int) -> None:
    """Set one entry (a path ``ibtracert`` found for a LID ``dump_fts`` left out)."""
    table = lfts.setdefault(switch, bytearray())
    grow(table, lid)
    table[lid] = port
