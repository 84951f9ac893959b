"""The one input layer: every file fabric-stack reads goes through here.

Hostile or broken input must end in one :class:`~fabric_stack.errors.InputFileError`
line (file, line or JSON path, what would be valid), never in a traceback, a
hang or gigabytes of memory. So every read is

* **bounded**: a size limit checked on the open file before reading (``/dev/zero``
  and FIFOs are refused as "not a regular file" instead of read forever);
* **decoded** as UTF-8, a failure naming the byte offset and the line;
* **parsed defensively**: YAML without alias expansion beyond a small budget,
  without duplicate keys, without Python tags; YAML and JSON with a bounded
  nesting depth and integers of bounded length (Python refuses to convert
  integers over 4,300 digits with a message about ``sys.set_int_max_str_digits``);
* **safe about symlinks**: a dangling link or a loop is a clean error.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from fabric_stack.errors import InputFileError

MAX_CONFIG_BYTES = 8 << 20
"""Spec, stack, policy and ignore files (YAML): real ones are a few KB."""

MAX_DATA_BYTES = 512 << 20
"""Discovery files (ibnetdiscover, LLDP/EOS JSON, NetBox, CSV): the drift bench's
largest real-size input is 21.5 MB; a 512 MiB cap leaves a wide margin."""

MAX_DEPTH = 64
"""Nesting depth of YAML and JSON documents: real inputs stay under 12 levels."""

MAX_INT_DIGITS = 40
"""Longest integer literal accepted (a 128-bit GUID in decimal has 39 digits)."""

MAX_YAML_ALIASES = 100
"""Alias references (``*name``) per YAML document."""

MAX_YAML_NODES = 1_000_000
"""Nodes of a YAML document with every alias expanded (stops "billion laughs")."""

MAX_LINE_CHARS = 65_536
"""Longest line a line-based reader (host lists, ``topology.conf``) accepts: a DNS name is
at most 253 characters, and a ``Nodes=`` hostlist of a whole pod a few thousand."""


def _os_problem(exc: OSError, path: Path) -> str:
    """A short human cause for an OSError on ``path``."""
    if exc.errno == errno.ELOOP:
        return "cannot read: symlink loop (the link points back at itself)"
    if exc.errno == errno.ENOENT and os.path.lexists(path):
        return f"cannot read: dangling symlink (its target {os.readlink(path)!r} does not exist)"
    if exc.errno == errno.ENOENT:
        return "cannot read: no such file"
    if exc.errno == errno.EISDIR:
        return "is a directory (expected a file)"
    return f"cannot read: {exc.strerror or exc}"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "is a directory (expected a file)"
    if stat.S_ISFIFO(mode):
        return "is a pipe, not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a regular file"
    return "is not a regular file"


def read_bytes(path: str | Path, limit: int = MAX_DATA_BYTES) -> bytes:
    """A regular file's bytes, at most ``limit`` of them (else an InputFileError)."""
    if str(path) == "":
        raise InputFileError("''", "empty file name (give the path of a file)")
    if "\x00" in str(path):
        raise InputFileError(repr(str(path)), "a file name cannot contain a NUL byte")
    p = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputFileError(str(p), _os_problem(exc, p)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputFileError(str(p), _kind(st.st_mode))
        if st.st_size > limit:
            raise InputFileError(str(p), _too_big(st.st_size, limit))
        chunks: list[bytes] = []
        got = 0
        while got <= limit:  # the file may grow while we read it
            chunk = os.read(fd, min(1 << 20, limit + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > limit:
            raise InputFileError(str(p), _too_big(got, limit))
        return b"".join(chunks)
    except OSError as exc:
        raise InputFileError(str(p), _os_problem(exc, p)) from None
    finally:
        os.close(fd)


def _too_big(size: int, limit: int) -> str:
    return f"file is larger than {limit // (1 << 20)} MiB ({size:,}+ bytes); is it the right file?"


def decode_text(data: bytes, path: str | Path) -> str:
    """UTF-8 text of ``data``; a bad byte is named by offset and line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputFileError(
            str(path),
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} "
            "(save the file as UTF-8)",
            line,
        ) from None


def read_text(path: str | Path, limit: int = MAX_DATA_BYTES) -> str:
    """A regular file's UTF-8 text, size-limited (see :func:`read_bytes`)."""
    return decode_text(read_bytes(path, limit), path)


MAX_SECRET_BYTES = 64 << 10
"""Token and password files: a real one is one short line."""


def read_secret(path: str | Path, what: str) -> str:
    """The one line of a token or password file (``what`` names the option in errors).

    The same layer as every file (a regular file, at most :data:`MAX_SECRET_BYTES`,
    UTF-8), then exactly one non-empty line of printable ASCII: a header or a URL
    carries nothing else, and a second line is a sign of the wrong file. Errors name
    the file and what is wrong, never a byte of its content.
    """
    try:
        text = read_text(path, MAX_SECRET_BYTES)
    except InputFileError as exc:
        raise InputFileError(f"{what} {path}", exc.problem, exc.where) from None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise InputFileError(f"{what} {path}", "the file is empty (expected one line: the secret)")
    if len(lines) > 1:
        raise InputFileError(
            f"{what} {path}", f"{len(lines)} lines (expected one line: the secret, nothing else)"
        )
    bad = next((i for i, ch in enumerate(lines[0]) if not " " <= ch <= "~"), None)
    if bad is not None:
        raise InputFileError(
            f"{what} {path}",
            f"character {bad + 1} of the secret is not printable ASCII (a token is ASCII)",
        )
    return lines[0]


# -- YAML ----------------------------------------------------------------------------


class _Refused(yaml.YAMLError):
    """The document is well-formed YAML but exceeds a budget of this loader."""

    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark


class SafeYamlLoader(yaml.SafeLoader):
    """SafeLoader with budgets (aliases, expanded size, depth, integer length), no
    duplicate keys, and without YAML 1.1 sexagesimal ints, so ``2:1`` stays a string."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0
        self._weight: dict[int, int] = {}

    def compose_node(self, parent: Any, index: Any) -> Any:
        """Compose one node, counting depth, aliases and the expanded size."""
        mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                raise _Refused(f"more than {MAX_YAML_ALIASES} aliases (*name)", mark)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _Refused(f"nested deeper than {MAX_DEPTH} levels", mark)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        size = self._weight.get(id(node))
        if size is None:
            size = 1 + sum(self._weight.get(id(c), 1) for c in _children(node))
            self._weight[id(node)] = size
        if size > MAX_YAML_NODES:
            raise _Refused(
                f"expands to more than {MAX_YAML_NODES:,} values (aliases referring to aliases?)",
                mark,
            )
        return node

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        """A mapping; a key given twice is an error (YAML says keys are unique)."""
        if isinstance(node, yaml.MappingNode):
            seen: dict[tuple[str, str], int] = {}
            for key, _ in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    ident = (key.tag, key.value)
                    if ident in seen:
                        raise _Refused(
                            f"duplicate key {key.value!r} (first on line {seen[ident]})",
                            key.start_mark,
                        )
                    seen[ident] = key.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: Any) -> int:
        """An int, refusing literals longer than :data:`MAX_INT_DIGITS`."""
        digits = str(node.value).replace("_", "").lstrip("+-")
        if len(digits) > MAX_INT_DIGITS:
            raise _Refused(
                f"integer with {len(digits):,} digits (at most {MAX_INT_DIGITS})", node.start_mark
            )
        value: int = super().construct_yaml_int(node)
        return value


def _children(node: Any) -> Iterator[Any]:
    if isinstance(node, yaml.SequenceNode):
        yield from node.value
    elif isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            yield k
            yield v


SafeYamlLoader.add_constructor("tag:yaml.org,2002:int", SafeYamlLoader.construct_yaml_int)
SafeYamlLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:int"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
SafeYamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$"),
    list("-+0123456789"),
)


def parse_yaml(text: str, path: str | Path) -> Any:
    """Parse YAML text with :class:`SafeYamlLoader`; errors name the file and line."""
    try:
        return yaml.load(text, Loader=SafeYamlLoader)
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise InputFileError(
            str(path), f"invalid YAML: control character #x{exc.character:04x} is not allowed", line
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputFileError(
            str(path), f"invalid YAML: {problem}", mark.line + 1 if mark else None
        ) from None
    except RecursionError:  # defence in depth: MAX_DEPTH stops far earlier
        raise InputFileError(str(path), f"invalid YAML: nested deeper than {MAX_DEPTH}") from None


def load_yaml(path: str | Path, limit: int = MAX_CONFIG_BYTES) -> Any:
    """Read and parse a YAML file (size-limited, UTF-8, budgets): the only YAML reader."""
    return parse_yaml(read_text(path, limit), path)


# -- JSON ----------------------------------------------------------------------------


class _LongInt(ValueError):
    def __init__(self, literal: str) -> None:
        super().__init__(literal)
        self.literal = literal


def _parse_int(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_INT_DIGITS:
        raise _LongInt(literal)
    return int(literal)


def lines(text: str, path: str | Path, limit: int = MAX_LINE_CHARS) -> Iterator[tuple[int, str]]:
    """(line number, line) of ``text``; InputFileError naming the first line longer than
    ``limit`` characters (its length, not its content: one enormous line is not echoed)."""
    for no, line in enumerate(text.splitlines(), start=1):
        if len(line) > limit:
            raise InputFileError(
                str(path), f"a line of {len(line):,} characters (at most {limit:,})", no
            )
        yield no, line


def parse_json(text: str, path: str | Path) -> Any:
    """Parse JSON text; syntax errors name the line, budgets name the JSON path."""
    try:
        doc = json.loads(text, parse_int=_parse_int)
    except _LongInt as exc:
        line = text.count("\n", 0, max(0, text.find(exc.literal))) + 1
        raise InputFileError(
            str(path),
            f"integer with {len(exc.literal.lstrip('-')):,} digits (at most {MAX_INT_DIGITS})",
            line,
        ) from None
    except RecursionError:
        raise InputFileError(str(path), f"JSON nested deeper than {MAX_DEPTH} levels") from None
    check_depth(doc, path)
    return doc


def check_depth(doc: Any, path: str | Path, limit: int = MAX_DEPTH) -> None:
    """Refuse a parsed document nested deeper than ``limit`` (names the JSON path)."""
    stack: list[tuple[Any, str, int]] = [(doc, "$", 0)]
    while stack:
        node, where, depth = stack.pop()
        if depth > limit:
            raise InputFileError(str(path), f"nested deeper than {limit} levels", where)
        if isinstance(node, dict):
            stack.extend((v, f"{where}.{k}", depth + 1) for k, v in node.items() if _nested(v))
        elif isinstance(node, list):
            stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(node) if _nested(v))


def _nested(value: Any) -> bool:
    return isinstance(value, dict | list)


# -- CSV -----------------------------------------------------------------------------


def csv_problem(exc: csv.Error) -> str:
    """A human line for a csv module error (no ``_csv.Error`` internals)."""
    text = str(exc)
    if "field larger than field limit" in text:
        return f"a field longer than {csv.field_size_limit():,} characters"
    return text.replace("\n", " ")


def csv_reader(text: str, source: str | Path) -> Iterator[list[str]]:
    """Rows of CSV ``text``; a malformed row is an InputFileError naming its line."""
    reader = csv.reader(io.StringIO(text))
    try:
        yield from reader
    except csv.Error as exc:
        raise InputFileError(
            str(source), f"invalid CSV: {csv_problem(exc)}", reader.line_num
        ) from None


# -- directories ---------------------------------------------------------------------


def list_files(directory: str | Path, pattern: str) -> list[Path]:
    """Regular files in ``directory`` matching ``pattern``, sorted.

    An entry that is a dangling symlink or a symlink loop is an error naming it
    (a discovery run that lost a file should not silently cover fewer devices).
    """
    d = Path(directory)
    if str(directory) == "" or "\x00" in str(directory):
        raise InputFileError(repr(str(directory)), "expected the path of a directory")
    try:
        entries = sorted(d.glob(pattern))
    except OSError as exc:
        raise InputFileError(str(d), _os_problem(exc, d)) from None
    out: list[Path] = []
    for p in entries:
        try:
            st = p.stat()
        except OSError as exc:
            raise InputFileError(str(p), _os_problem(exc, p)) from None
        if stat.S_ISREG(st.st_mode):
            out.append(p)
    return out


def file_size(path: str | Path) -> int:
    """Size of a regular file or the matching files of a directory, 0 when unreadable."""
    try:
        p = Path(path)
        if p.is_dir():
            return sum(x.stat().st_size for x in p.glob("*.json") if x.is_file())
        return p.stat().st_size if p.is_file() else 0
    except OSError:
        return 0


__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_DATA_BYTES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_LINE_CHARS",
    "MAX_SECRET_BYTES",
    "SafeYamlLoader",
    "check_depth",
    "csv_problem",
    "csv_reader",
    "decode_text",
    "file_size",
    "lines",
    "list_files",
    "load_yaml",
    "parse_json",
    "parse_yaml",
    "read_bytes",
    "read_secret",
    "read_text",
]
