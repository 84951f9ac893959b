"""Stable, readable names for devices and ports.

Devices (planes > 1 add a ``p<N>-`` prefix to fabric switches):

========================  ==============================================
``su1-node07``            server 7 of scalable unit 1
``su1-r3-leaf``           rail-3 leaf of SU 1
``su1-r3-leaf2``          second rail-3 leaf of SU 1 (SUs larger than one leaf)
``spine-05``              spine 5 (two tiers)
``r3-spine-05``           spine 5 of rail 3's spine group (rail-grouped spines)
``pod2-spine-05``         spine 5 of pod 2 (three tiers)
``core-g05-02``           core 2 of group 5 (group *j* serves spine *j* of every pod)
``su1-storage-a1``        storage access switch 1 of side A in SU 1
``su1-inband-a1``         in-band management switch; ``su1-oob-a1`` OOB switch
========================  ==============================================

Ports: server compute NICs are their RDMA device names, from the server profile
(:meth:`fabric_stack.hardware.nodes.NodeProfile.rdma_name`: a DGX H100's rail 2 is ``mlx5_3``),
else ``mlx5_0`` = rail 1 in rail order (:func:`nic_name`);
switch ports are labelled as the switch OS prints them: MLNX-OS
``1/<cage>/<lane>`` for split cages (``1/<cage>`` otherwise), Cumulus
``swp<cage>`` or ``swp<cage>s<lane-1>``, generic ``p<n>``. Every port also has
its 1-based logical number, which is what ``ibnetdiscover`` prints. The port grammar of
each OS, both ways, is in :mod:`fabric_stack.nos`; this module names the devices.
"""

from __future__ import annotations

from functools import lru_cache

from fabric_stack.nos.cumulus import CUMULUS_PORT, cumulus_cage_lane
from fabric_stack.nos.declare import PortLayout, families, for_family

__all__ = [
    "CUMULUS_PORT",
    "PORT_LABEL_TEMPLATES",
    "access_switch_name",
    "cage_of",
    "core_name",
    "cumulus_cage_lane",
    "leaf_name",
    "nic_name",
    "node_name",
    "plane_prefix",
    "spine_name",
    "switch_port_label",
]


def _w(n: int) -> int:
    return max(2, len(str(n)))


def plane_prefix(plane: int, planes: int) -> str:
    """``p2-`` on dual-plane fabrics, empty otherwise."""
    return f"p{plane}-" if planes > 1 else ""


def node_name(su: int, index: int, su_nodes: int) -> str:
    """Server ``index`` (1-based) of SU ``su``: ``su1-node07``."""
    return f"su{su}-node{index:0{_w(su_nodes)}d}"


def leaf_name(su: int, rail: int, plane: int = 1, planes: int = 1, leaf: int = 0) -> str:
    """Rail leaf of an SU: ``su1-r3-leaf`` (``p2-su1-r3-leaf`` on plane 2); ``leaf`` k ≥ 1
    numbers the leaves of a rail when an SU has several (``su1-r3-leaf2``)."""
    return f"{plane_prefix(plane, planes)}su{su}-r{rail}-leaf{leaf or ''}"


def spine_name(
    index: int, count: int, pod: int = 0, plane: int = 1, planes: int = 1, rail: int = 0
) -> str:
    """Spine ``index`` (1-based): ``spine-05``, ``pod2-spine-05`` in three tiers, or
    ``r3-spine-05`` in rail 3's spine group (rail-grouped spines)."""
    pod_part = f"pod{pod}-" if pod else ""
    rail_part = f"r{rail}-" if rail else ""
    return f"{plane_prefix(plane, planes)}{pod_part}{rail_part}spine-{index:0{_w(count)}d}"


def core_name(
    group: int, member: int, groups: int, per_group: int, plane: int = 1, planes: int = 1
) -> str:
    """Core ``member`` of ``group`` (both 1-based): ``core-g05-02``."""
    return f"{plane_prefix(plane, planes)}core-g{group:0{_w(groups)}d}-{member:0{_w(per_group)}d}"


def access_switch_name(su: int, network: str, side: str, index: int) -> str:
    """Storage / in-band / OOB access switch of an SU: ``su1-storage-a1``."""
    return f"su{su}-{network}-{side}{index}"


def nic_name(rail: int, plane: int = 1, rails: int = 8) -> str:
    """Neutral RDMA device name of the rail-``rail`` (1-based) NIC on ``plane``: ``mlx5_0`` …

    What a profile without a port list (the default ``hgx-8gpu``) names its rails.
    """
    return f"mlx5_{(plane - 1) * rails + rail - 1}"


PORT_LABEL_TEMPLATES: dict[str, tuple[str, str]] = {
    family: (os.split_template, os.whole_template) for family, os in families().items()
}
"""Port-label family (a switch model's ``os_family``) → (template of a port in a split cage,
template of an unsplit cage's port), read from the switch OS modules of
:mod:`fabric_stack.nos` that hold the grammar both ways. Fields: ``cage`` and ``lane``
(1-based), ``lane0`` (0-based), ``number`` (the logical port). A family not listed is
labelled as ``generic``."""


@lru_cache(maxsize=65536)
def switch_port_label(os_family: str, number: int, ports_per_cage: int) -> str:
    """Label of logical port ``number`` (1-based) as the switch OS prints it
    (:meth:`fabric_stack.nos.SwitchOs.port_name` of the family's OS)."""
    return for_family(os_family).port_name(number, PortLayout(ports_per_cage))


def cage_of(number: int, ports_per_cage: int) -> tuple[int, int]:
    """(cage, lane), both 1-based, of logical port ``number``."""
    cage, lane = divmod(number - 1, ports_per_cage)
    return cage + 1, lane + 1
