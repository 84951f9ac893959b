"""Goldens by symmetry class: one stored file per class of identical devices, plus a table.

Most rendered files of a fabric are the same config under other names: 16 leaves of a
scalable unit differ only in hostname, loopback, ASN, VLAN and the servers they face. We
keep one golden per class (its *representative*) and a ``CLASSES.yaml`` table per render
target that pins, for every other member, the tokens in which it differs. Nothing is lost:
``substitute(representative, member's row) == rendered(member)`` byte for byte, and the
golden test checks exactly that for every member.

How a class is formed (at ``make goldens`` time, no hand edit):

* Text is cut into *tokens* (an IPv4 address, or a run of letters, digits and ``-``) and
  the separators between them. A file's *shape* is its text with every token that holds a
  digit (names, addresses, ASNs, VLANs, ports, numbers) replaced by ``#``.
* Files of one target directory with the same path shape (digits as ``#``) and the same
  content shape form a class; the first in name order is its representative.
* A member's row maps a representative token to the member's token at the same positions:
  ``tok: new`` for every occurrence, ``tok@L: new`` for its occurrences on line ``L`` of
  the representative, ``tok@L:k: new`` for the ``k``-th occurrence on that line. The
  most specific key wins; a token with no key is kept.

The functions here are pure: they take and return text, so the unit tests can mutate a
member and watch the check fail (``tests/unit/test_golden_classes.py``).
"""

from __future__ import annotations

import difflib
import re
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Mapping
from itertools import accumulate

import yaml

TABLE = "CLASSES.yaml"
"""File name of a target directory's class table."""

_TOKEN = re.compile(r"(\d+(?:\.\d+){3}|[A-Za-z0-9-]+)")
"""An IPv4 address whole, else a run of letters, digits and hyphens (``su1-r2-leaf``,
``Ethernet4``, ``4200000003``): small enough that a port or peer name is one token."""
_DIGIT = re.compile(r"\d")
_DIGIT_TOKEN = re.compile(r"\d+(?:\.\d+){3}|[A-Za-z-]*\d[A-Za-z0-9-]*")
"""A token of :data:`_TOKEN` that holds a digit (same alternatives, same order)."""
_NEWLINE = re.compile("\n")
_DIGITS = re.compile(r"\d+")

_HEADER = (
    "# Symmetry classes of this render target, written by `make goldens`\n"
    "# (tests/golden/README.md). Each member renders as its representative with\n"
    "# the tokens on the left replaced by those on the right: `tok` everywhere,\n"
    "# `tok@L` on line L only, `tok@L:k` its k-th occurrence on line L.\n"
)


def split_tokens(text: str) -> list[str]:
    """``text`` cut into separators (even indexes) and tokens (odd indexes)."""
    return _TOKEN.split(text)


def shape_of(text: str) -> str:
    """The content with every digit-bearing token blanked to ``#``: files of one class share it.

    (A regex pass, not a token loop: it runs over every rendered file at each test run.
    Two shapes that collide yet do not align token by token make
    :func:`derive_substitutions` raise, so a collision cannot hide a difference.)
    """
    return _DIGIT_TOKEN.sub("#", text)


def path_shape(path: str) -> str:
    """A member's path with its numbers blanked (``su1-r2-leaf.conf`` → ``su#-r#-leaf.conf``)."""
    return _DIGITS.sub("#", path)


def _occurrences(parts: list[str], only: set[str]) -> list[tuple[int, str, int, int]]:
    """Tokens in ``only`` as (index in ``parts``, token, 1-based line, occurrence on that line)."""
    ends = list(accumulate(map(len, parts)))
    newlines = [m.start() for m in _NEWLINE.finditer("".join(parts))]
    seen: Counter[tuple[int, str]] = Counter()
    out = []
    for i in [i for i in range(1, len(parts), 2) if parts[i] in only]:
        line = bisect_left(newlines, ends[i] - len(parts[i])) + 1
        seen[line, parts[i]] += 1
        out.append((i, parts[i], line, seen[line, parts[i]]))
    return out


def _cheapest_default(tok: str, uses: list[tuple[int, int, str]]) -> str:
    """The replacement for every occurrence of ``tok`` that leaves the fewest line-keyed rows.

    A spine's own port and its peer's port can share a name (``swp33s0``): one changes from
    member to member, the other does not, so some lines must be keyed; key as few as we can.
    """
    lines_with: dict[str, set[int]] = defaultdict(set)
    for line, _, new in uses:
        lines_with[new].add(line)
    all_lines = {line for line, _, _ in uses}

    def cost(new: str) -> tuple[int, int]:
        return (new != tok) + len(all_lines - lines_with[new]), new != tok

    return min(dict.fromkeys(new for _, _, new in uses), key=cost)


def _changed_tokens(rep_parts: list[str], mem_parts: list[str]) -> set[str]:
    """The representative's tokens that differ somewhere in the member (which must align)."""
    if len(rep_parts) != len(mem_parts) or rep_parts[0::2] != mem_parts[0::2]:
        raise ValueError("files of different shapes are not one class")
    changed = [(a, b) for a, b in zip(rep_parts[1::2], mem_parts[1::2], strict=True) if a != b]
    if not all(_DIGIT.search(a) and _DIGIT.search(b) for a, b in changed):
        raise ValueError("files differing in a digit-free token are not one class")
    return {a for a, _ in changed}


def derive_substitutions(representative: str, member: str) -> dict[str, str]:
    """The row that turns ``representative`` into ``member`` (both of one shape)."""
    rep_parts, mem_parts = split_tokens(representative), split_tokens(member)
    by_token: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    for i, tok, line, k in _occurrences(rep_parts, _changed_tokens(rep_parts, mem_parts)):
        by_token[tok].append((line, k, mem_parts[i]))
    subs: dict[str, str] = {}
    for tok, uses in by_token.items():
        common = _cheapest_default(tok, uses)
        if common != tok:
            subs[tok] = common
        subs.update(_line_keys(tok, common, uses))
    return subs


def _line_keys(tok: str, common: str, uses: list[tuple[int, int, str]]) -> dict[str, str]:
    """Keys for the lines where ``tok`` does not become ``common``: whole line, else occurrence."""
    by_line: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for line, k, new in uses:
        by_line[line].append((k, new))
    keys: dict[str, str] = {}
    for line, row in by_line.items():
        news = {new for _, new in row}
        if news == {common}:
            continue
        if len(news) == 1:
            keys[f"{tok}@{line}"] = news.pop()
            continue
        keys.update({f"{tok}@{line}:{k}": new for k, new in row if new != common})
    return keys


def substitute(representative: str, subs: Mapping[str, str]) -> str:
    """``representative`` with a member's row applied: the member's expected content."""
    parts = split_tokens(representative)
    for i, tok, line, k in _occurrences(parts, {key.split("@", 1)[0] for key in subs}):
        for key in (f"{tok}@{line}:{k}", f"{tok}@{line}", tok):
            if key in subs:
                parts[i] = subs[key]
                break
    return "".join(parts)


def group_classes(files: Mapping[str, str]) -> list[list[str]]:
    """Paths of one directory grouped into classes, each in name order, representative first."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(files):
        groups[path_shape(path), shape_of(files[path])].append(path)
    return sorted(groups.values())


def build_table(files: Mapping[str, str]) -> dict[str, dict[str, dict[str, str]]]:
    """Representative → member → row, for the classes of one directory with more than one file."""
    table: dict[str, dict[str, dict[str, str]]] = {}
    for paths in group_classes(files):
        rep, *members = paths
        if members:
            table[rep] = {m: derive_substitutions(files[rep], files[m]) for m in members}
    return table


def dump_table(table: Mapping[str, Mapping[str, Mapping[str, str]]]) -> str:
    """The table as YAML a reviewer reads: a renderer change shows as changed rows."""
    data = [
        {"representative": rep, "members": {m: dict(row) for m, row in members.items()}}
        for rep, members in table.items()
    ]
    body = yaml.safe_dump({"classes": data}, sort_keys=False, width=10_000, allow_unicode=True)
    return _HEADER + body


def load_table(text: str) -> dict[str, dict[str, dict[str, str]]]:
    """Read a table written by :func:`dump_table`."""
    data = yaml.safe_load(text)
    return {
        c["representative"]: {
            m: {str(k): str(v) for k, v in (row or {}).items()} for m, row in c["members"].items()
        }
        for c in data["classes"]
    }


def fold_directory(files: Mapping[str, str]) -> dict[str, str]:
    """One directory's rendered files → what is stored: representatives, singletons, the table.

    That each row rebuilds its member is not re-checked here (it would double the golden
    test's cost): ``tests/golden/test_classes.py`` checks it against the stored files.
    """
    table = build_table(files)
    members = {m for rows in table.values() for m in rows}
    kept = {p: c for p, c in files.items() if p not in members}
    if table:
        kept[TABLE] = dump_table(table)
    return kept


def expand_directory(stored: Mapping[str, str]) -> dict[str, str]:
    """Inverse of :func:`fold_directory`: every member's content from its representative and row."""
    files = {p: c for p, c in stored.items() if p != TABLE}
    if TABLE in stored:
        for rep, rows in load_table(stored[TABLE]).items():
            for member, subs in rows.items():
                files[member] = substitute(stored[rep], subs)
    return files


def member_mismatch(rendered: str, representative: str, subs: Mapping[str, str]) -> str | None:
    """Why ``rendered`` is not its representative under ``subs`` (a short diff), or None."""
    expected = substitute(representative, subs)
    if rendered == expected:
        return None
    diff = difflib.unified_diff(
        expected.splitlines(),
        rendered.splitlines(),
        "golden (substituted)",
        "rendered",
        lineterm="",
        n=1,
    )
    return "\n".join(list(diff)[:20])
