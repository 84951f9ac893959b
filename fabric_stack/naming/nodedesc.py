"""InfiniBand NodeDescriptions: the forms real fabrics use, split into host, HCA, model and chip.

A NodeDescription is a free 64-byte string each node reports; the forms seen
in real ``ibnetdiscover`` output (see ``../shared/realdata/ibnetdiscover``):

* ``"gpu001 mlx5_3"`` — rdma-core / inbox drivers: ``<hostname> <ibdev>``.
* ``"r-dcs96 HCA-1"`` — MLNX_OFED's default (its ``ibnodedesc`` sets
  ``<hostname> HCA-<n>``, n counting the host's adapters from 1).
* ``"MF0;r-ufm-sw95:MQM8700/U1"`` — MLNX-OS / NVOS switches:
  ``MF0;<hostname>:<model>/U<chip>``; a router port of a Quantum-X800 adds
  ``/RT`` (``MF0;mamba-2132:Q3400_RA/U2/RT``).
* Plain vendor strings that say nothing about the host
  (``"MT25408 ConnectX Mellanox Technologies"``, ``"SwitchIB Mellanox
  Technologies"``, ``"Voltaire 4036 # 4036-8C5C"``), often shared by many
  nodes, and SHARP's ``"Mellanox Technologies Aggregation Node"``.

:func:`parse_nodedesc` reads them; :func:`switch_nodedesc` and :func:`host_nodedesc`
write the first two forms (the twin's simulated nodes report them), so what is
written is what is read back. How a dump's nodes are named from them is
:mod:`fabric_stack.naming.ib_nodes`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabric_stack.records import fast_init

_MF0 = re.compile(r"^MF0;([^:]+):([^/]+)(?:/U(\d+))?(/RT)?\s*$")
_MF0_HOST = re.compile(r"^MF0;([^:]+):")
_HOST_DEV = re.compile(r"^(\S+?)[\s/:]+((?:mlx\d+_\d+)|(?:HCA-\d+))$", re.I)
_AGGREGATION = re.compile(r"aggregation node", re.I)


@fast_init
@dataclass(frozen=True, slots=True)
class NodeDesc:
    """What a NodeDescription says: the host (or switch) name, an HCA, a model, a chip.

    ``host`` is empty when the description names no host (a plain vendor
    string). ``hca`` is ``mlx5_3`` or ``HCA-1``; ``model`` and ``chip`` come
    from an ``MF0;`` switch description; ``router`` marks ``/RT``;
    ``aggregation`` marks a SHARP aggregation node.
    """

    raw: str
    host: str = ""
    hca: str = ""
    model: str = ""
    chip: int = 0
    router: bool = False
    aggregation: bool = False

    @property
    def form(self) -> str:
        """``mf0``, ``host-ibdev``, ``host-hca``, ``aggregation`` or ``plain``."""
        if self.model:
            return "mf0"
        if self.hca.lower().startswith("mlx"):
            return "host-ibdev"
        if self.hca:
            return "host-hca"
        return "aggregation" if self.aggregation else "plain"


def parse_nodedesc(desc: str) -> NodeDesc:
    """Split a NodeDescription into its parts (see the module docstring for the forms)."""
    s = desc.strip().strip('"').strip()
    if m := _MF0.match(s):
        return NodeDesc(
            s,
            host=m.group(1).strip(),
            model=m.group(2).strip(),
            chip=int(m.group(3) or 0),
            router=bool(m.group(4)),
        )
    if m := _HOST_DEV.match(s):
        return NodeDesc(s, host=m.group(1), hca=m.group(2))
    return NodeDesc(s, aggregation=bool(_AGGREGATION.search(s)))


def may_be_aggregation(desc: str) -> bool:
    """False when ``desc`` cannot be a SHARP aggregation node's (``parse_nodedesc(desc)
    .aggregation`` is then False too): a quick test before parsing every CA's description."""
    return _AGGREGATION.search(desc) is not None


def mf0_host(desc: str) -> str | None:
    """The host part of any ``MF0;<host>:…`` NodeDescription (however the rest is spelled)."""
    m = _MF0_HOST.match(desc)
    return m.group(1) if m else None


def switch_nodedesc(host: str, model: str, chip: int = 1) -> str:
    """An MLNX-OS / NVOS switch NodeDescription: ``MF0;<host>:<model>/U<chip>``."""
    return f"MF0;{host}:{model}/U{chip}"


def host_nodedesc(host: str, hca: str) -> str:
    """A host HCA's NodeDescription as rdma-core sets it: ``<hostname> <ibdev>``."""
    return f"{host} {hca}"
