"""Log lines as the tools printed them: launcher prefixes removed, line numbers kept.

Real logs reach us through launchers that prefix every line. Seen in the captured
samples (``../shared/realdata/nccl-tests/SOURCES.md``) and in the launchers' docs:

* Open MPI ``--tag-output``: ``[1,0]<stdout>:`` (job, rank, stream);
* SkyPilot / Ray worker prefixes: ``(head, rank=0, pid=3808) `` in front of that;
* ``kubectl logs --prefix``: ``[pod/NAME/CONTAINER] ``;
* ``kubectl logs --timestamps``: an RFC 3339 time and a space;
* Slurm ``srun --label``: ``0: `` (the task number).

Only these are removed, and only at the start of a line, so a table row or a
``#`` line is never cut in the middle.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_PREFIXES = (
    re.compile(r"^\([^()\n]{1,200}\)\s?"),
    re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:\s?"),
    re.compile(r"^\[pod/[^\]\s]{1,300}\]\s"),
    re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)\s"),
    re.compile(r"^\s{0,4}\d{1,6}: "),
)


def strip_prefix(line: str) -> str:
    """``line`` without the launcher prefixes it starts with (module docstring)."""
    for _ in range(len(_PREFIXES) + 1):
        for rx in _PREFIXES:
            m = rx.match(line)
            if m:
                line = line[m.end() :]
                break
        else:
            return line
    return line


def numbered(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line without prefixes and trailing whitespace)."""
    for no, raw in enumerate(text.splitlines(), start=1):
        yield no, strip_prefix(raw).rstrip()


def is_int(token: str) -> bool:
    """A plain (optionally negative) decimal integer."""
    return token.lstrip("-").isdigit()


def to_float(token: str) -> float | None:
    """``token`` as a float, None when it is not a number."""
    try:
        return float(token)
    except ValueError:
        return None


__all__ = ["is_int", "numbered", "strip_prefix", "to_float"]
