"""Shared reader plumbing: JSON with located errors, progress hooks, MAC tables."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from fabric_stack.drift.identity import is_mac, normalize_mac
from fabric_stack.drift.model import Endpoint, Snapshot
from fabric_stack.errors import InputFileError
from fabric_stack.files import inputs

Progress = Callable[[int], None]
"""Called with the number of bytes just consumed (drives a progress bar)."""


class Reader(Protocol):
    """A source adapter: all its I/O happens in :meth:`load`."""

    def load(self) -> Snapshot:
        """Read the source and return what it observed."""
        ...


def read_text(path: Path) -> str:
    """A file's text through the input layer (size limit, UTF-8, symlinks): one error line."""
    return inputs.read_text(path)


def read_json(path: Path, progress: Progress | None = None) -> Any:
    """Parse a JSON file; a syntax error names the line (and says when the file ends early)."""
    text = read_text(path)
    if progress is not None:
        progress(len(text))
    return json_of(text, path)


def json_of(text: str, path: Path) -> Any:
    """Parse the JSON text of ``path`` (already read); errors as :func:`read_json`'s."""
    if not text.strip():
        raise InputFileError(str(path), "empty file (expected JSON)")
    try:
        return inputs.parse_json(text, path)
    except json.JSONDecodeError as exc:
        body = text.rstrip()
        last_line = body.count("\n") + 1
        ends_early = exc.pos >= len(body) or exc.lineno >= last_line
        tail = "; the file ends early (truncated?)" if ends_early else ""
        msg = exc.msg.removesuffix(" at")
        raise InputFileError(
            str(path), f"invalid JSON: {msg} (column {exc.colno}){tail}", exc.lineno
        ) from None


def discovery_files(directory: Path, what: str) -> list[Path]:
    """Every regular file of a source directory, sorted: each is read by its content or
    named in a note by the reader (none is passed over without a word)."""
    if not directory.is_dir():
        raise InputFileError(
            str(directory), f"not a directory (expected one file of {what} per device)"
        )
    files = inputs.list_files(directory, "*")
    if not files:
        raise InputFileError(str(directory), f"no files ({what}, one per device)")
    return files


HOST_SUFFIXES = (".json", ".txt", ".kv", ".keyvalue", ".out", ".log", ".lldp")
"""File-name endings a source directory's file may have after the device name."""


def host_of(path: Path) -> str:
    """The device a discovery file is of: its name without a :data:`HOST_SUFFIXES` ending."""
    name = path.name
    for suffix in HOST_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def skipped(path: Path, expected: str) -> str:
    """The note for a file of a source directory that is none of the formats it reads."""
    return f"skipped {path.name}: not {expected}"


def dir_size(directory: Path) -> int:
    """Total bytes of the files in a directory (for a progress bar)."""
    try:
        return sum(p.stat().st_size for p in directory.iterdir() if p.is_file())
    except OSError:
        return 0


def csv_table(
    path: Path, required: tuple[str, ...]
) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    """The header of a CSV and an iterator of (line number, raw cells) for its rows.

    Missing required columns are an error on line 1; a row with another number
    of fields than the header (a truncated file, an unquoted comma) is an error
    on its line. Blank rows are skipped. Cells are not stripped (callers strip
    the few they use, which is what keeps a 100k-row export fast).
    """
    text = read_text(path)
    lines = text.splitlines()
    if not lines:
        raise InputFileError(str(path), "empty file (expected a CSV header)")
    reader = csv.reader(lines)
    try:
        header = [h.strip().lstrip("\ufeff") for h in next(reader)]
    except csv.Error as exc:
        raise InputFileError(str(path), f"invalid CSV: {inputs.csv_problem(exc)}", 1) from None
    missing = [c for c in required if c not in header]
    if missing:
        raise InputFileError(
            str(path), f"missing column {missing[0]!r} (the header has: {', '.join(header)})", 1
        )
    width = len(header)

    def rows() -> Iterator[tuple[int, list[str]]]:
        try:
            for row in reader:
                if len(row) != width:
                    if not row or all(not c.strip() for c in row):
                        continue
                    raise InputFileError(
                        str(path),
                        f"{len(row)} fields where the header has {width} "
                        "(truncated or unquoted comma?)",
                        reader.line_num,
                    )
                yield reader.line_num, row
        except csv.Error as exc:
            raise InputFileError(
                str(path), f"invalid CSV: {inputs.csv_problem(exc)}", reader.line_num
            ) from None

    return header, rows()


def csv_rows(path: Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row as a dict of stripped cells) of a CSV with a header."""
    header, rows = csv_table(path, required)
    for lineno, row in rows:
        if all(not c.strip() for c in row):
            continue
        yield lineno, {h: c.strip() for h, c in zip(header, row, strict=True)}


def load_mac_table(path: str | Path) -> tuple[dict[str, Endpoint], dict[tuple[str, str], str]]:
    """A MAC table CSV ``device,port,mac[,ifname]`` → (MAC → endpoint, (device, ifname) → port).

    Device and port are spelled as the plan spells them (``su1-node07``,
    ``mlx5_3``); ``ifname`` is the host's interface name for that port.
    """
    p = Path(path)
    macs: dict[str, Endpoint] = {}
    aliases: dict[tuple[str, str], str] = {}
    for lineno, row in csv_rows(p, ("device", "port", "mac")):
        if not row["device"] or not row["port"]:
            raise InputFileError(str(p), "device and port must not be empty", lineno)
        mac = row["mac"]
        if mac:
            if not is_mac(mac):
                raise InputFileError(
                    str(p), f"{mac!r} is not a MAC address (like 0c:42:a1:00:00:01)", lineno
                )
            macs[normalize_mac(mac)] = Endpoint(row["device"], row["port"])
        ifname = row.get("ifname", "")
        if ifname:
            aliases[(row["device"], ifname)] = row["port"]
    return macs, aliases


class DirectoryReader:
    """Base of readers that take a directory of ``<hostname>.json`` files (LLDP, EOS)."""

    source = ""

    def __init__(
        self,
        directory: str | Path,
        mac_table: str | Path | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.mac_table = Path(mac_table) if mac_table else None
        self.progress = progress


def finish_directory(
    snap: Snapshot, hosts: list[str], directory: Path, what: str, mac_table: Path | None
) -> Snapshot:
    """Close a directory source's snapshot: an error naming the directory (and the notes on
    what was skipped) when no file was ``what``; else the hosts it covers and the MAC table."""
    if not hosts:
        raise InputFileError(str(directory), f"no {what} in it ({'; '.join(snap.notes)})")
    snap.covered = frozenset(hosts)
    if mac_table is not None:
        snap.macs, snap.aliases = load_mac_table(mac_table)
    return snap
