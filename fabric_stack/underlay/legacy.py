"""The numbering a stack recorded before stable allocations (issue #27), to name what moves.

Until commit e696bf7 a switch's router-id was the loopback pool's ``n``-th address,
``n`` its index among the fabric's leaves, spines and cores (in that order), and its
ASN came from an enumeration too (one per plane for cores, one per plane and pod for
spines, then one per leaf), so growth renumbered. Those records carry no
``allocations``; this module reproduces what that code allocated for the recorded
spec, so ``fabric-stack plan`` can say ``router-id 10.255.0.9 → 10.255.0.1`` per switch
instead of nothing. Rail blocks are not reproduced (their sizing changed too): the plan
says they were not recorded.
"""

from __future__ import annotations

from ipaddress import IPv4Address

from fabric_stack.topology.build import FabricTopology


def legacy_switch_allocations(topo: FabricTopology) -> dict[str, dict[str, str]]:
    """Per leaf, spine and core: ``{"router_id", "asn"}`` as the pre-#27 code numbered them."""
    st = topo.plan.spec.underlay
    fabric = list(topo.switches("leaf", "spine", "core"))
    first = int(st.loopbacks.network_address) + 1
    asns = _legacy_asns(topo, st.asn_base)
    return {
        d.name: {"router_id": str(IPv4Address(first + i)), "asn": str(asns[d.name])}
        for i, d in enumerate(fabric)
    }


def _legacy_asns(topo: FabricTopology, base: int) -> dict[str, int]:
    """RFC 7938 ASNs by enumeration: cores per plane, spines per (plane, pod), then leaves."""
    groups: dict[tuple[str, int, int], int] = {}
    out: dict[str, int] = {}
    nxt = base
    for role in ("core", "spine"):
        for d in topo.switches(role):
            key = (role, d.plane, d.pod if role == "spine" else 0)
            if key not in groups:
                groups[key] = nxt
                nxt += 1
            out[d.name] = groups[key]
    for d in topo.switches("leaf"):
        out[d.name] = nxt
        nxt += 1
    return out
