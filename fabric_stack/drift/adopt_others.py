"""Other hosts: login, controller, storage hosts on compute leaves (issue 47).

A site cables its login nodes, Slurm controller and parallel-filesystem servers to the
same leaves as its compute nodes. They are no compute server of the plan: adopt lists
them (with the leaf port they sit on) instead of placing them at a server position,
and drift with adopt's names leaves them out (they are known, not unexpected).

A host is "other" when its name says so (:data:`OTHER_NAME`, the usual site prefixes;
``ufm*`` only when the plan has no fabric-manager position it was placed at) or when it
has another number of fabric cables than most hosts (a storage server with two HCAs
among single-HCA compute nodes).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from fabric_stack.drift.observation import Observation

OTHER_NAME = re.compile(
    r"^(login|controller|ctl|mgmt|head|storage|beegfs|bee|lustre|nfs|ufm)[-_0-9]*",
    re.IGNORECASE,
)
"""Host-name prefixes that mark a non-compute host (site conventions, not a standard)."""


@dataclass(frozen=True)
class OtherHost:
    """A host on the compute fabric that is no compute server, and where it sits."""

    device: str
    leaf: str
    port: str
    why: str


def other_hosts(obs: Observation, managers: set[str]) -> list[OtherHost]:
    """The observed hosts that are no compute server (see the module docstring). Of the
    ``managers`` (placed at a fabric-manager position) only a ``ufm*`` host stays one: a
    storage host on the plan's manager port is still a storage host."""
    cables: dict[str, list[tuple[str, str]]] = {}
    for a, pa, b, pb in obs.cables:
        cables.setdefault(a, []).append((b, pb))
        cables.setdefault(b, []).append((a, pa))
    hosts = [d for d, od in obs.devices.items() if od.kind == "server"]
    computes = [h for h in hosts if h not in managers]
    usual = Counter(len(cables.get(h, ())) for h in computes).most_common(1)
    common = usual[0][0] if usual else 0
    out: list[OtherHost] = []
    for h in sorted(hosts):
        n = len(cables.get(h, ()))
        m = OTHER_NAME.match(h)
        if m and not (h in managers and m.group(1).lower() == "ufm"):
            why = "its name marks a non-compute host"
        # Fewer cables than most: likelier a compute host with a cable down (left to drift).
        elif h not in managers and n > common and len(computes) >= 4:
            why = f"{n} fabric cable(s) where most hosts have {common}"
        else:
            continue
        leaf, port = min(cables.get(h, [("", "")]))
        out.append(OtherHost(h, leaf, port, why))
    return out


__all__ = ["OTHER_NAME", "OtherHost", "other_hosts"]
