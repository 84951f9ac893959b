"""Reader of linux-rdma perftest output: ``ib_write_bw``, ``ib_read_bw``, ``ib_send_bw`` (and
the latency tests, read but not judged).

The layout is perftest's own (``src/perftest_parameters.h``): a title
(``RDMA_Write BW Test``, ``Send Bidirectional BW Test``), ``Key : value`` header
fields two to a line (``Device``, ``Number of qps``, ``Link type``, ``Mtu``), the
result header ``#bytes #iterations BW peak[UNIT] BW average[UNIT] MsgRate[Mpps]``
(``RESULT_FMT``/``RESULT_FMT_G``; a ``#sl`` column with ``--sl``) and one row per
size between dashed lines. Units: ``Gb/sec`` with ``--report_gbits`` (10^9 bit),
``MB/sec`` or ``MiB/sec`` otherwise (2^20 byte: perftest's ``format_factor`` is
``0x100000`` for MBS, ``125000000`` for GBS in ``print_report_bw``); rows are kept
in Gb/s.

Where it ran: a file named ``<host>_<device>.txt`` (the device must match the
``Device :`` field), else the shell prompt in front of the command
(``user@host:~$ ib_write_bw …``); the peer is the server the client command names.
Several runs in one file, prompts, and perftest's own notices between the header
and the row (``Conflicting CPU frequency values detected …``) are fine. Refused,
one line naming the line: a result row that does not fit its header, a unit
perftest does not print.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath

from fabric_stack.acceptance.lines import numbered, to_float
from fabric_stack.acceptance.model import PerftestRow, PerftestRun
from fabric_stack.errors import InputFileError

TITLE = re.compile(
    r"^\s*(RDMA_Write|RDMA_Read|Send|Atomic(?:\s+\w+)?)\s+(Bidirectional\s+)?(BW|Latency)\s+Test"
)
VERBS = {"RDMA_Write": "ib_write", "RDMA_Read": "ib_read", "Send": "ib_send"}
FIELD = re.compile(r"([A-Za-z][A-Za-z0-9 .*/_-]*?)\s+:\s+(\S+)")
BW_HEADER = re.compile(r"^\s*#bytes\s+(?:#sl\s+)?#iterations\s+BW peak\[([^\]]+)\]")
LAT_HEADER = re.compile(r"^\s*#bytes\s+#iterations\s+t_(?:min|avg)\[usec\]")
PROMPT = re.compile(r"^\[?[\w.-]+@([\w.-]+)[^$#\n]{0,200}[$#]\s*(.*)$")
COMMAND = re.compile(r"\b(ib_(?:write|read|send|atomic)_(?:bw|lat))\b(.*)$")
DASHES = re.compile(r"^\s*-{20,}\s*$")

GBPS_PER_UNIT = {"Gb/sec": 1.0, "MB/sec": 8 * (1 << 20) / 1e9, "MiB/sec": 8 * (1 << 20) / 1e9}
"""Gb/s per unit perftest prints (module docstring: 2^20-byte MB)."""

VALUE_OPTIONS = frozenset(
    {
        "-d",
        "--ib-dev",
        "-i",
        "--ib-port",
        "-D",
        "--duration",
        "-q",
        "--qp",
        "-s",
        "--size",
        "-n",
        "--iters",
        "-p",
        "--port",
        "-x",
        "--gid-index",
        "-m",
        "--mtu",
        "-t",
        "--tx-depth",
        "-r",
        "--rx-depth",
        "-c",
        "--connection",
        "-I",
        "--inline_size",
        "-l",
        "--post_list",
        "-S",
        "--sl",
        "-T",
        "--tos",
        "-u",
        "--qp-timeout",
        "-E",
        "-B",
        "-J",
        "-j",
        "-w",
        "-y",
        "-K",
        "-k",
        "-W",
        "--use_cuda",
        "--mmap",
        "--mmap-offset",
        "--source_ip",
        "--dest_ip",
        "--server_port",
        "--dest_port",
        "--rate_limit",
        "--burst_size",
        "--rate_units",
        "--flows",
        "--retry_count",
    }
)
"""perftest options that take a value (``perftest_parameters.c`` usage), so the server
named at the end of a client command is told from an option's value."""


@dataclass
class _Run:
    line: int
    test: str
    bandwidth: bool
    bidirectional: bool
    command: tuple[str, str, int] | None
    fields: dict[str, str] = field(default_factory=dict)
    unit: str = ""
    sl: bool = False
    in_table: bool = False
    rows: list[PerftestRow] = field(default_factory=list)
    latency_us: float | None = None
    notes: list[str] = field(default_factory=list)


def read_perftest(text: str, source: str) -> list[PerftestRun]:
    """Every perftest run in ``text``; ``source`` names the file (and maybe host/device)."""
    runs: list[_Run] = []
    command: tuple[str, str, int] | None = None  # (host or "", command line, line)
    lines = list(numbered(text))
    last = max((no for no, s in lines if s.strip()), default=0)
    for no, s in lines:
        p = PROMPT.match(s)
        if p and COMMAND.search(p.group(2)):
            command = (p.group(1), p.group(2), no)
            continue
        if not p and COMMAND.match(s.strip()):
            command = ("", s.strip(), no)
            continue
        t = TITLE.match(s)
        if t:
            verb = VERBS.get(t[1], "ib_atomic")
            kind = "bw" if t[3] == "BW" else "lat"
            runs.append(_Run(no, f"{verb}_{kind}", kind == "bw", bool(t[2]), command))
            command = None
            continue
        if runs:
            _line(runs[-1], s, no, no == last, source)
    return [_freeze(r, i, source) for i, r in enumerate(runs, start=1)]


def _line(run: _Run, s: str, no: int, is_last: bool, source: str) -> None:
    h = BW_HEADER.match(s)
    if h:
        if h[1] not in GBPS_PER_UNIT:
            raise InputFileError(
                source, f"perftest unit {h[1]!r} is not one perftest prints (Gb/sec, MB/sec)", no
            )
        run.unit, run.sl, run.in_table = h[1], "#sl" in s, True
        return
    if LAT_HEADER.match(s):
        run.unit, run.in_table = "usec", True
        return
    if DASHES.match(s):
        run.in_table = False
        return
    tokens = s.split()
    if not run.in_table:
        if not run.rows and run.latency_us is None:
            for k, v in FIELD.findall(s):
                run.fields.setdefault(k.strip(), v)
        return
    if not tokens or not tokens[0].isdigit():
        return  # perftest's notices between the header and the row
    nums = [to_float(x) for x in tokens]
    if run.unit == "usec":
        if len(nums) >= 3 and all(v is not None for v in nums):
            typical = nums[4] if len(nums) >= 9 else nums[2]
            run.latency_us = typical
        return
    want = 6 if run.sl else 5
    if len(nums) < want or any(v is None for v in nums):
        if is_last:
            run.notes.append(f"the last row was cut short (line {no})")
            return
        raise InputFileError(
            source,
            f"perftest result row with {len(tokens)} fields where the header has {want} "
            "(#bytes #iterations BW peak BW average MsgRate)",
            no,
        )
    vals = [v for v in nums if v is not None]
    off = 1 if run.sl else 0
    factor = GBPS_PER_UNIT[run.unit]
    run.rows.append(
        PerftestRow(
            bytes=int(vals[0]),
            iterations=int(vals[1 + off]),
            peak_gbps=round(vals[2 + off] * factor, 3),
            avg_gbps=round(vals[3 + off] * factor, 3),
            line=no,
        )
    )


def peer_of(command: str) -> str | None:
    """The server a perftest client command names (its last argument that is not an
    option's value), None for a server-side command."""
    tokens = command.split()
    if len(tokens) < 2:
        return None
    cand, before = tokens[-1], tokens[-2]
    if cand.startswith("-") or before in VALUE_OPTIONS or "=" in cand:
        return None
    if not re.fullmatch(r"[A-Za-z0-9][\w.:-]*", cand) or cand.isdigit():
        return None
    return cand


def _where(run: _Run, source: str) -> tuple[str | None, str]:
    """(host, where it comes from): the file name ``<host>_<device>.txt``, else the prompt."""
    device = run.fields.get("Device")
    stem = PurePath(source).stem
    name_host, sep, name_dev = stem.partition("_")
    if sep and name_host and (device is None or name_dev == device):
        return name_host, "file name"
    if run.command and run.command[0]:
        return run.command[0], f"shell prompt on line {run.command[2]}"
    return None, "not in the file (name it <host>_<device>.txt)"


def _freeze(r: _Run, number: int, source: str) -> PerftestRun:
    host, host_from = _where(r, source)
    peer = None
    notes = list(r.notes)
    if r.command:
        m = COMMAND.search(r.command[1])
        peer = peer_of(r.command[1][m.start() :]) if m else None
        if m and m.group(1) != r.test:
            notes.append(f"the command on line {r.command[2]} is {m.group(1)}, the title {r.test}")
    if r.rows and all(x.peak_gbps == 0 for x in r.rows) and r.bandwidth:
        notes.append("BW peak 0.00: duration mode (-D), perftest measures no peak")
    mtu = r.fields.get("Mtu", "")
    qps = r.fields.get("Number of qps", "")
    return PerftestRun(
        source=source,
        run=number,
        line=r.line,
        test=r.test,
        bandwidth=r.bandwidth,
        bidirectional=r.bidirectional,
        device=r.fields.get("Device"),
        host=host,
        host_from=host_from,
        peer=peer,
        qps=int(qps) if qps.isdigit() else None,
        link_type=r.fields.get("Link type"),
        mtu=int(mtu.split("[")[0]) if mtu.split("[")[0].isdigit() else None,
        unit=r.unit or ("usec" if not r.bandwidth else ""),
        rows=r.rows,
        latency_typical_us=r.latency_us,
        notes=notes,
    )


__all__ = ["GBPS_PER_UNIT", "peer_of", "read_perftest"]
