"""What NetBox holds beyond the plan records, derived from the plan: the NetBox way (issue #34).

:func:`details_of` turns a topology into the fields the NetBox store writes next to the
records: InfiniBand interface types by speed and width, cable length/unit/label/type from
the physical plant (:mod:`fabric_stack.plant`), rack positions, GUIDs from the names file,
and the underlay's ASNs, loopbacks and interface addresses (:mod:`fabric_stack.underlay`).
Pure: no NetBox, no I/O. The store reads the spec back from the stack's site (the Fabric
record) and calls this once per process and spec.

NetBox choice values are those of NetBox 4.7.3 (what ``make netbox`` installs), read from
its ``dcim/choices.py``: ``InterfaceTypeChoices`` (``infiniband-ndr-4x`` "NDR 4X (400
Gbps)", ``infiniband-ndr-2x`` "NDR 2X (200 Gbps)", ``infiniband-xdr-4x`` "XDR 4X (800
Gbps)", ``infiniband-hdr`` "HDR (50 Gbps)" …), ``CableTypeChoices`` (``dac-passive``,
``dac-active``, ``mmf-om4``, ``smf-os2``, ``cat6`` …), ``CableLengthUnitChoices`` (``m``)
and ``DeviceFaceChoices`` (``front``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from fabric_stack.errors import FabricStackError
from fabric_stack.plant.plan import plant_of
from fabric_stack.spec.model import FabricSpec
from fabric_stack.topology.build import FabricTopology

IB_LANE_GBPS = {
    "sdr": 2,
    "ddr": 4,
    "qdr": 8,
    "fdr10": 10,
    "fdr": 14,
    "edr": 25,
    "hdr": 50,
    "ndr": 100,
    "xdr": 200,
}
"""Data rate of one InfiniBand lane per generation, Gb/s, as NetBox 4.7.3 labels its 1X
choices (``dcim/choices.py``: "HDR (50 Gbps)", "NDR (100 Gbps)", "XDR (200 Gbps)"; FDR's
13.5 Gb/s rounded up, so 4 lanes make its "FDR 4X (56 Gbps)")."""

IB_WIDTHS = (1, 2, 4)
"""Link widths NetBox has a choice for (``infiniband-ndr``, ``-ndr-2x``, ``-ndr-4x``)."""

CABLE_TYPE_OF_MEDIUM = {
    "dac": "dac-passive",
    "acc": "dac-active",
    "mmf": "mmf-om4",
    "smf": "smf-os2",
    "copper": "cat6",
}
"""The plant's medium → NetBox cable type. ``acc`` (active copper, ACC/AEC) has no NetBox
choice of its own: ``dac-active`` is the nearest. ``mmf-om4``: the catalog's multimode
optics are specified over OM4 (:mod:`fabric_stack.hardware.cables`); ``smf-os2`` and
``cat6`` are UNVERIFIED choices of grade (the catalog names single-mode and RJ45 only)."""

LABEL_MAX = 100
"""NetBox's cable label length (``Cable.label`` max_length)."""


def ib_interface_type(speed_gbps: int, lane_name: str) -> str:
    """NetBox interface type of an InfiniBand port: generation from the switch OS's speed
    name (``NDR``, ``NDR200``, ``XDR``), width from the speed over the lane rate
    (400 G NDR → ``infiniband-ndr-4x``, 200 G NDR200 → ``infiniband-ndr-2x``); ``other``
    when NetBox has no such choice."""
    gen = next(
        (g for g in sorted(IB_LANE_GBPS, key=len, reverse=True) if lane_name.lower().startswith(g)),
        "",
    )
    if not gen or speed_gbps <= 0 or speed_gbps % IB_LANE_GBPS[gen]:
        return "other"
    width = speed_gbps // IB_LANE_GBPS[gen]
    if width not in IB_WIDTHS:
        return "other"
    return f"infiniband-{gen}" if width == 1 else f"infiniband-{gen}-{width}x"


def cable_label(label_a: str, label_b: str) -> str:
    """One NetBox cable label from the two end labels of the plant (``A / B``), cut to
    NetBox's 100 characters (the end labels themselves stay in the cable's plan record)."""
    return f"{label_a} / {label_b}"[:LABEL_MAX]


@dataclass(frozen=True)
class NetBoxDetails:
    """The NetBox fields of one plan beyond its records (see the module doc)."""

    fabric: str
    """Compute fabric (infiniband, roce, ethernet)."""
    compute_types: dict[int, str] = field(default_factory=dict)
    """Compute-network interface type by speed (InfiniBand only; others keep IF_TYPE)."""
    cables: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Cable name → NetBox cable fields (length, length_unit, label, type)."""
    devices: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Device name → rack, position, face, and for a host its device-type key
    (``server:PROFILE:RU``: the server profile, or the fabric manager's 2 U)."""
    rack_units: int = 0
    """Height of every rack (the layout's)."""
    guids: dict[str, str] = field(default_factory=dict)
    """Device name → node GUID (switches, and servers with one GUID)."""
    port_guids: dict[tuple[str, str], str] = field(default_factory=dict)
    """(server, HCA port) → GUID: a server's GUIDs in the order of its compute NICs."""
    asns: dict[str, int] = field(default_factory=dict)
    """Switch → BGP ASN (routed fabrics)."""
    loopbacks: dict[str, str] = field(default_factory=dict)
    """Switch → loopback address with its length (``10.0.0.1/32``)."""
    addresses: dict[tuple[str, str], str] = field(default_factory=dict)
    """(device, interface) → address with its length (``/31`` fabric links, rail hosts)."""
    prefixes: dict[str, str] = field(default_factory=dict)
    """Prefix → what it is (the loopback and /31 pools, each leaf's rail blocks)."""
    port_types: dict[tuple[str, str], str] = field(default_factory=dict)
    """(device, port) → NetBox type of every port the plan types (InfiniBand compute)."""

    def interface_type(self, network: str, speed_gbps: int) -> str | None:
        """The NetBox type of a port of ``network`` at ``speed_gbps`` (None: the default)."""
        return self.compute_types.get(speed_gbps) if network == "compute" else None


def _cables(topo: FabricTopology) -> dict[str, dict[str, Any]]:
    plant = plant_of(topo, strict=False)
    out: dict[str, dict[str, Any]] = {}
    for link, run in zip(topo.links, plant.runs, strict=True):
        body: dict[str, Any] = {
            "length": run.length_m,
            "length_unit": "m",
            "label": cable_label(run.label_a, run.label_b),
        }
        if run.medium in CABLE_TYPE_OF_MEDIUM:
            body["type"] = CABLE_TYPE_OF_MEDIUM[run.medium]
        out[link.id] = body
    return out


def _guids(topo: FabricTopology) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """Node GUIDs by device, and per HCA port for a server with one GUID per compute NIC
    (the names file lists a server's GUIDs; that they follow the NIC order is UNVERIFIED,
    a site's file may list them otherwise)."""
    nics: dict[str, list[str]] = {}
    for n in topo.nics:
        nics.setdefault(n.node, []).append(n.name)
    devices: dict[str, str] = {}
    ports: dict[tuple[str, str], str] = {}
    for row in topo.plan.spec.names.rows:
        if not row.guids:
            continue
        mine = nics.get(row.actual, [])  # in the topology's NIC (rail) order
        if len(row.guids) > 1 and len(row.guids) == len(mine):
            ports.update({(row.actual, nic): g for nic, g in zip(mine, row.guids, strict=True)})
        else:
            devices[row.actual] = row.guids[0]
    return devices, ports


def _underlay(topo: FabricTopology, out: NetBoxDetails) -> None:
    from fabric_stack.underlay.plan import plan_underlay  # routed fabrics only

    u = plan_underlay(topo)
    for sw in u.switches.values():
        out.asns[sw.name] = sw.asn
        out.loopbacks[sw.name] = _with_len(sw.loopback, 32)
    for link in u.links:
        if link.a_address and link.b_address:
            out.addresses[(link.a_device, link.a_port)] = _with_len(link.a_address, 31)
            out.addresses[(link.b_device, link.b_port)] = _with_len(link.b_address, 31)
    for h in u.hosts:
        out.addresses[(h.server, h.nic)] = f"{h.address}/{h.prefixlen}"
        if h.prefixlen == 31:  # p2p31 host addressing: the leaf port holds the gateway
            out.addresses[(h.leaf, h.leaf_port)] = f"{h.gateway}/31"
    for b in u.blocks:
        out.prefixes[b.subnet] = f"rail {b.rail} block of {b.leaf}"
    st = u.settings
    out.prefixes[str(st.loopbacks)] = "underlay loopback pool"
    if st.fabric_links == "p2p31":
        out.prefixes[str(st.p2p)] = "underlay /31 pool (fabric links)"


def _with_len(address: str, length: int) -> str:
    return address if "/" in address else f"{address}/{length}"


def details_of(topo: FabricTopology) -> NetBoxDetails:
    """Everything NetBox gets beyond the records of ``topo`` (see :class:`NetBoxDetails`)."""
    spec = topo.plan.spec
    types: dict[int, str] = {}
    if spec.fabric == "infiniband":
        model = topo.plan.switch_model
        types = {m.speed_gbps: ib_interface_type(m.speed_gbps, m.lane_name) for m in model.modes}
    out = NetBoxDetails(fabric=spec.fabric, compute_types=types, cables=_cables(topo))
    out = replace(out, rack_units=spec.layout.rack_units)
    for link in topo.links:
        t = out.interface_type(link.network, link.speed_gbps)
        if t:
            out.port_types[(link.a_device, link.a_port)] = t
            out.port_types[(link.b_device, link.b_port)] = t
    for rack in plant_of(topo, strict=False).racks:
        for d in rack.devices:
            if d.position <= 0:
                continue
            place: dict[str, Any] = {"rack": rack.place.name, "position": d.position}
            if d.role in ("server", "manager"):
                profile = spec.node_profile.name if d.role == "server" else "fabric-manager"
                place["model"] = f"server:{profile}:{d.height_u}"
            out.devices[d.name] = {**place, "face": "front"}
    guids, ports = _guids(topo)
    out.guids.update(guids)
    out.port_guids.update(ports)
    if spec.fabric != "infiniband":
        _underlay(topo, out)
    return out


_CACHE: dict[str, NetBoxDetails] = {}


def details_of_spec(spec: Mapping[str, Any]) -> NetBoxDetails | None:
    """:func:`details_of` the plan of a Fabric record's ``spec`` (cached per spec); None when
    the spec no longer builds here (a record from another version: the records stay)."""
    key = json.dumps(spec, sort_keys=True, default=str)
    if key not in _CACHE:
        from fabric_stack.sizing.size import size_fabric
        from fabric_stack.topology.build import build_topology

        try:
            topo = build_topology(size_fabric(FabricSpec.model_validate(dict(spec))))
            _CACHE[key] = details_of(topo)
        except (FabricStackError, ValueError):
            return None
    return _CACHE[key]


__all__ = [
    "CABLE_TYPE_OF_MEDIUM",
    "NetBoxDetails",
    "cable_label",
    "details_of",
    "details_of_spec",
    "ib_interface_type",
]
