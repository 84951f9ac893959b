"""NVLink domains named by the site: ``--nvlink-domains FILE`` of ``render --ibnetdiscover``.

An ``ibnetdiscover`` dump shows the InfiniBand fabric only: NVLink (an NVL72 rack's
NVSwitch trays) is a different fabric, and its domains are not in the dump. Slurm's block
topology and Topograph's ``accelerator`` label need them, so the site names them, one
domain per line, the domain's name then its hosts as a Slurm hostlist expression::

    # NVL72 racks (nvidia-smi -q: the GPUs' ClusterUUID, or GPU Operator's
    # nvidia.com/gpu.clique label, says which trays share one NVLink domain)
    nvl72-a01  gb200-a01-[01-18]
    nvl72-a02  gb200-a02-[01-18]

``#`` starts a comment. A domain name is a Kubernetes label value (at most 63
characters: letters, digits, ``-``, ``_``, ``.``, starting and ending with a letter or
digit), which also makes it a valid Slurm ``BlockName``; a host is in at most one domain.
"""

from __future__ import annotations

import re
from pathlib import Path

from fabric_stack.errors import InputFileError
from fabric_stack.files.inputs import MAX_CONFIG_BYTES, read_text
from fabric_stack.text.hostlist import expand

_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
"""Kubernetes' label value syntax (kubernetes.io, "Labels and Selectors"), non-empty."""

FORMAT = "`<domain> <hostlist>` lines, e.g. `nvl72-a01 gb200-a01-[01-18]`"


def load_nvlink_domains(path: str | Path) -> dict[str, tuple[str, ...]]:
    """Domain name → its hosts, in file order; InputFileError naming the line otherwise."""
    p = str(path)
    out: dict[str, tuple[str, ...]] = {}
    seen: dict[str, str] = {}
    for lineno, line in enumerate(read_text(path, MAX_CONFIG_BYTES).splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2:
            raise InputFileError(p, f"expected {FORMAT}, got {line.strip()[:60]!r}", lineno)
        name, hostlist = words
        if not _NAME.match(name):
            raise InputFileError(
                p,
                f"domain name {name[:70]!r} is not a Kubernetes label value (at most 63 "
                "letters, digits, '-', '_', '.', starting and ending alphanumeric)",
                lineno,
            )
        if name in out:
            raise InputFileError(p, f"domain {name} named twice", lineno)
        try:
            hosts = tuple(expand(hostlist))
        except ValueError as exc:
            raise InputFileError(p, f"{name}: {exc}", lineno) from None
        for h in hosts:
            if h in seen:
                raise InputFileError(p, f"host {h} is in domains {seen[h]} and {name}", lineno)
            seen[h] = name
        out[name] = hosts
    if not out:
        raise InputFileError(p, f"no NVLink domain in the file (expected {FORMAT})")
    return out


__all__ = ["FORMAT", "load_nvlink_domains"]
