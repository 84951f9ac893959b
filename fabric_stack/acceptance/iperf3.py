"""Reader of ``iperf3 -J`` output: one JSON object per run (several may follow each other).

The layout is iperf3's own (``iperf_api.c``, 3.x): ``start.connected[0]`` holds the
client's address (``local_host``) and the server's (``remote_host``), ``start.test_start``
the options (``protocol``, ``num_streams``, ``reverse`` for ``-R``, ``bidir`` for
``--bidir``, ``target_bitrate`` for ``-b``, 0 when unpaced), and ``end.sum_received`` what
the receiving end counted: its ``bits_per_second`` is the measurement (Gb/s here, 10^9
bit, as perftest's ``--report_gbits``). A run that did not finish has an ``error`` string
and an empty ``end``: read, and failed by the judge ("no result").

Where it ran: the addresses, placed on the plan's rail addresses by the judge (RoCE and
Ethernet plans have them); else the file name ``<host>_<device>[_to_<peer>].json``. One
line per refusal, naming the file and the line: text that is not JSON, JSON that is not an
iperf3 result, a figure that is not a number.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePath
from typing import Any

from fabric_stack.acceptance.model import Iperf3Run
from fabric_stack.errors import InputFileError

NAME = re.compile(r"^(?P<host>[^_]+)_(?P<device>.+?)(?:_to_(?P<peer>[^_]+))?$")
"""``su1-node01_mlx5_0_to_su1-node02``: client host, its rail device, the server host."""

HEAD = 4096
"""How much of a file :func:`looks_like_iperf3` looks at."""


def looks_like_iperf3(text: str) -> bool:
    """A JSON object with iperf3's ``start`` section (cheap: for skipping other files)."""
    head = text[:HEAD]
    return head.lstrip().startswith("{") and '"start"' in head


def _objects(text: str, source: str) -> list[tuple[int, Any]]:
    """(line, value) of every JSON value in ``text``, one after another."""
    dec = json.JSONDecoder()
    out: list[tuple[int, Any]] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return out
        line = text.count("\n", 0, pos) + 1
        try:
            value, pos = dec.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise InputFileError(
                source, f"not valid JSON ({exc.msg}, column {exc.colno})", exc.lineno
            ) from None
        out.append((line, value))


def _get(doc: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc


def _number(doc: Any, source: str, line: int, *path: str) -> float | None:
    value = _get(doc, *path)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise InputFileError(source, f"{'.'.join(path)} is not a number: {value!r:.40}", line)
    if value < 0 or value == float("inf"):
        raise InputFileError(source, f"{'.'.join(path)} is out of range: {value!r:.40}", line)
    return float(value)


def _text(doc: Any, *path: str) -> str | None:
    value = _get(doc, *path)
    return value if isinstance(value, str) else None


def _run(doc: Any, number: int, line: int, source: str) -> Iperf3Run:
    if not isinstance(doc, dict) or not isinstance(doc.get("start"), dict):
        raise InputFileError(
            source, "JSON but not iperf3 -J output (no 'start' object: run iperf3 with -J)", line
        )
    conn = _get(doc, "start", "connected")
    first = conn[0] if isinstance(conn, list) and conn and isinstance(conn[0], dict) else {}
    ts = _get(doc, "start", "test_start") or {}
    error = _text(doc, "error")
    received = _number(doc, source, line, "end", "sum_received", "bits_per_second")
    sent = _number(doc, source, line, "end", "sum_sent", "bits_per_second")
    target = _number(doc, source, line, "start", "test_start", "target_bitrate")
    retrans = _number(doc, source, line, "end", "sum_sent", "retransmits")
    protocol = _text(ts, "protocol") or "TCP"
    notes = []
    if error is None and received is None:
        if protocol == "TCP":
            raise InputFileError(
                source, "iperf3 result without end.sum_received (the run was cut)", line
            )
        notes.append(f"{protocol}: no end.sum_received (read, not judged)")
    m = NAME.match(PurePath(source).stem)
    streams = _get(ts, "num_streams")
    return Iperf3Run(
        source=source,
        run=number,
        line=line,
        version=_text(doc, "start", "version"),
        local_host=_text(first, "local_host"),
        remote_host=_text(first, "remote_host"),
        host=m["host"] if m else None,
        device=m["device"] if m else None,
        peer=m["peer"] if m else None,
        protocol=protocol,
        streams=streams if isinstance(streams, int) and not isinstance(streams, bool) else 1,
        reverse=bool(_get(ts, "reverse")),
        bidirectional=bool(_get(ts, "bidir")),
        target_gbps=round(target / 1e9, 3) if target else None,
        received_gbps=None if received is None else round(received / 1e9, 3),
        sent_gbps=None if sent is None else round(sent / 1e9, 3),
        seconds=_number(doc, source, line, "end", "sum_received", "seconds"),
        retransmits=None if retrans is None else int(retrans),
        error=error,
        notes=notes,
    )


def read_iperf3(text: str, source: str) -> list[Iperf3Run]:
    """Every ``iperf3 -J`` run in ``text`` (module docstring); [] when it is not JSON at all."""
    if not text.lstrip().startswith("{"):
        return []
    return [_run(doc, i, line, source) for i, (line, doc) in enumerate(_objects(text, source), 1)]


__all__ = ["looks_like_iperf3", "read_iperf3"]
