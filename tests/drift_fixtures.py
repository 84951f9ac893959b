"""Drift fixtures composed from the plan: clean observations, injected faults, format writers.

``python -m tests.drift_fixtures`` (re)writes ``tests/fixtures/drift/``. The
files are generated from the seed cluster's plan so they agree with it, then
known faults are injected (listed in ``FAULTS_*`` below and in the fixture
README). ``tests/unit/test_drift_readers.py`` checks the files on disk are what
this module generates, so they cannot drift from the plan silently.

GUIDs, MACs and hostnames are made up.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.drift import Endpoint, ObservedLink, PlanIndex, Snapshot
from fabric_stack.drift.identity import switch_port_number
from fabric_stack.naming.devices import cage_of
from fabric_stack.topology.build import FabricTopology

FIXTURES = Path(__file__).parent / "fixtures" / "drift"
REPO = Path(__file__).resolve().parents[1]

SEED_IB: dict[str, Any] = {}
"""The seed cluster: 128 GPUs, 16 nodes, QM9700, 8 rail leaves, 4 spines."""

SEED_ROCE: dict[str, Any] = {"fabric": "roce", "switch": "sn5600"}
"""The seed cluster on RoCE: SN5600 leaves and spines (ports swp1s0…)."""


def topology(spec: dict[str, Any]) -> FabricTopology:
    """The topology of a spec dict."""
    return build_topology(size_fabric(validate_spec(spec)))


# --------------------------------------------------------------------------- wires


@dataclass(frozen=True)
class Wire:
    """A cable as a source would see it, on the plan's names (writers re-spell it)."""

    a_dev: str
    a_port: str
    b_dev: str
    b_port: str
    speed: int
    role: str = ""
    id: str = ""
    rate: str | None = None


def clean_wires(topo: FabricTopology, roles: Iterable[str] | None = None) -> list[Wire]:
    """One wire per planned link (optionally only some roles), exactly as planned."""
    keep = set(roles) if roles is not None else None
    return [
        Wire(
            link.a_device,
            link.a_port,
            link.b_device,
            link.b_port,
            link.speed_gbps,
            link.role,
            link.id,
            ("4xNDR" if link.speed_gbps == 400 else None),
        )
        for link in topo.links
        if keep is None or link.role in keep
    ]


def _find(wires: list[Wire], link_id: str) -> int:
    for i, w in enumerate(wires):
        if w.id == link_id:
            return i
    raise KeyError(link_id)


def drop(wires: list[Wire], link_id: str) -> list[Wire]:
    """The cable is missing."""
    i = _find(wires, link_id)
    return wires[:i] + wires[i + 1 :]


def add(wires: list[Wire], wire: Wire) -> list[Wire]:
    """An extra cable."""
    return [*wires, wire]


def swap_b(wires: list[Wire], id1: str, id2: str) -> list[Wire]:
    """The upper ends of two cables are swapped."""
    out = list(wires)
    i, j = _find(out, id1), _find(out, id2)
    w1, w2 = out[i], out[j]
    out[i] = replace(w1, b_dev=w2.b_dev, b_port=w2.b_port)
    out[j] = replace(w2, b_dev=w1.b_dev, b_port=w1.b_port)
    return out


def move_b(wires: list[Wire], link_id: str, dev: str, port: str) -> list[Wire]:
    """The upper end of a cable is on another port."""
    out = list(wires)
    i = _find(out, link_id)
    out[i] = replace(out[i], b_dev=dev, b_port=port)
    return out


def set_rate(wires: list[Wire], link_id: str, speed: int, rate: str | None) -> list[Wire]:
    """The cable runs at another speed."""
    out = list(wires)
    i = _find(out, link_id)
    out[i] = replace(out[i], speed=speed, rate=rate)
    return out


def free_port(
    index: PlanIndex, device: str, start: int, used: Iterable[tuple[str, str]] = ()
) -> str:
    """The label of the first port ≥ ``start`` on ``device`` that no planned cable uses."""
    from fabric_stack.naming.devices import switch_port_label

    taken = set(used)
    sch = index.schemes[device]
    n = start
    while True:
        label = switch_port_label(sch.os_family, n, sch.ports_per_cage)
        if (device, label) not in index.at and (device, label) not in taken:
            return label
        n += 1


def snapshot_of(wires: Iterable[Wire], source: str = "test", **kw: Any) -> Snapshot:
    """An in-memory snapshot observing ``wires`` (plan spellings)."""
    return Snapshot(
        source=source,
        origin="memory",
        links=[
            ObservedLink(
                Endpoint(w.a_dev, w.a_port), Endpoint(w.b_dev, w.b_port), speed_gbps=w.speed
            )
            for w in wires
        ],
        **kw,
    )


# --------------------------------------------------------------------------- made-up identities


def _h(text: str, n: int) -> int:
    """A deterministic small hash (stable across runs, unlike hash())."""
    v = 0
    for ch in text:
        v = (v * 131 + ord(ch)) % (1 << (4 * n))
    return v


def switch_guid(name: str) -> str:
    """Made-up switch node GUID (NVIDIA OUI fc6a1c)."""
    return f"fc6a1c0300{_h(name, 6):06x}"


def hca_guid(node: str, port: str) -> str:
    """Made-up HCA node GUID: starts with 0, so the unpadded (…) form differs from "H-…"."""
    return f"0c42a10300{_h(node + port, 6):06x}"


def mac_of(device: str, port: str) -> str:
    """Made-up MAC of a port (locally administered)."""
    v = _h(device + "/" + port, 10)
    return "02:" + ":".join(f"{(v >> s) & 0xFF:02x}" for s in (32, 24, 16, 8, 0))


def netdev_of(port: str) -> str:
    """The Linux netdev a host would name a plan port (what lldpd's port descr says)."""
    if port.startswith("mlx5_"):
        return f"ens{int(port[5:]) + 1}np0"
    return {"stor1": "ens21np0", "stor2": "ens22np0", "mgmt1": "eno1", "bmc1": "bmc"}.get(
        port, port
    )


# --------------------------------------------------------------------------- writers


def _by_device(wires: Iterable[Wire]) -> dict[str, list[tuple[str, str, str, Wire]]]:
    """device → [(local port, peer device, peer port, wire)] for both ends of every wire."""
    out: dict[str, list[tuple[str, str, str, Wire]]] = {}
    for w in wires:
        out.setdefault(w.a_dev, []).append((w.a_port, w.b_dev, w.b_port, w))
        out.setdefault(w.b_dev, []).append((w.b_port, w.a_dev, w.a_port, w))
    return out


def ibnetdiscover_text(
    index: PlanIndex,
    wires: list[Wire],
    *,
    desc: Callable[[str], str] = lambda name: f"MF0;{name}:MQM9700/U1",
    guid_override: dict[str, str] | None = None,
    extra_switches: Iterable[str] = (),
    planned: Mapping[str, str] | None = None,
) -> str:
    """An ibnetdiscover dump of ``wires`` (compute roles) in rdma-core's layout.

    ``planned``: the wires' device names → the plan's (wires of a renamed site): a planned
    port is numbered as the plan numbers it."""
    guid_override = guid_override or {}
    plan_name = planned or {}
    ends = _by_device(wires)
    switches = [d for d in index.schemes if d in ends or d in extra_switches]
    switches += [d for d in extra_switches if d not in switches]
    hcas: set[tuple[str, str]] = set()
    for w in wires:
        for dev, port in ((w.a_dev, w.a_port), (w.b_dev, w.b_port)):
            if dev not in index.schemes and dev not in extra_switches:
                hcas.add((dev, port))

    def is_switch(dev: str) -> bool:
        return dev in index.schemes or dev in extra_switches

    def sguid(dev: str) -> str:
        return guid_override.get(dev, switch_guid(dev))

    def number(dev: str, port: str) -> int:
        # The plan's own number of a planned port (a mixed leaf numbers its uplinks after
        # their first downlink-layout lane); an unplanned one as its label reads.
        pdev = plan_name.get(dev, dev)
        known = index.planned_number((pdev, port))
        if known is not None:
            return known
        sch = index.schemes.get(pdev)
        n = switch_port_number(port, sch.ports_per_cage if sch else 2)
        assert n is not None, (dev, port)
        return n

    lid: dict[str, int] = {}
    for i, dev in enumerate(switches, 1):
        lid[dev] = i
    for i, key in enumerate(sorted(hcas), len(switches) + 1):
        lid["/".join(key)] = i

    out = [
        "#",
        "# Topology file: generated on Tue Jun  4 10:00:00 2024",
        "#",
        f"# Initiated from node {hca_guid(*sorted(hcas)[0])} port {hca_guid(*sorted(hcas)[0])}",
        "",
    ]
    for dev in switches:
        g = sguid(dev)
        out += ["vendid=0x2c9", "devid=0xd2f0", f"sysimgguid=0x{g}", f"switchguid=0x{g}({g})"]
        out.append(f'Switch\t64 "S-{g}"\t\t# "{desc(dev)}" enhanced port 0 lid {lid[dev]} lmc 0')
        rows = []
        for port, pdev, pport, w in ends.get(dev, []):
            rate = w.rate or "4xNDR"
            if is_switch(pdev):
                rows.append(
                    (
                        number(dev, port),
                        f'[{number(dev, port)}]\t"S-{sguid(pdev)}"[{number(pdev, pport)}]\t\t'
                        f'# "{desc(pdev)}" lid {lid[pdev]} {rate}',
                    )
                )
            else:
                hg = hca_guid(pdev, pport)
                rows.append(
                    (
                        number(dev, port),
                        f'[{number(dev, port)}]\t"H-{hg}"[1]({int(hg, 16):x}) \t\t'
                        f'# "{pdev} {pport}" lid {lid[pdev + "/" + pport]} {rate}',
                    )
                )
        out += [r for _, r in sorted(rows)]
        out.append("")
    for dev, port in sorted(hcas):
        hg = hca_guid(dev, port)
        (peer,) = [(p, pd, pp, w) for p, pd, pp, w in ends[dev] if p == port]
        _, pdev, pport, w = peer
        out += ["vendid=0x2c9", "devid=0x1021", f"sysimgguid=0x{hg}", f"caguid=0x{hg}"]
        out.append(f'Ca\t1 "H-{hg}"\t\t# "{dev} {port}"')
        out.append(
            f'[1]({int(hg, 16):x}) \t"S-{sguid(pdev)}"[{number(pdev, pport)}]\t\t'
            f'# lid {lid[dev + "/" + port]} lmc 0 "{desc(pdev)}" lid {lid[pdev]} '
            f"{w.rate or '4xNDR'}"
        )
        out.append("")
    return "\n".join(out)


def node_name_map_text(names: Iterable[str], guid_of: Callable[[str], str] = switch_guid) -> str:
    """``0x<guid> "<name>"`` lines, as opensm / ibnetdiscover read them."""
    lines = ["# node-name-map: switch node GUID → name (made-up GUIDs)"]
    lines += [f'0x{guid_of(n)} "{n}"' for n in names]
    return "\n".join(lines) + "\n"


def _mau(speed: int) -> str:
    return {400: "400GBASE-SR4", 200: "200GBASE-SR4", 100: "100GBASE-SR4", 1: "1000BaseTFD"}.get(
        speed, f"{speed}GBASE-SR"
    )


def lldp_entries(
    index: PlanIndex,
    device: str,
    wires: list[Wire],
    *,
    fqdn: Callable[[str], str] = lambda d: d,
) -> list[dict[str, Any]]:
    """The neighbours ``device`` sees, as plain dicts (local, chassis, port id, descr)."""
    out = []
    for port, pdev, pport, w in sorted(
        _by_device(wires).get(device, []), key=lambda t: (switch_port_number(t[0], 4) or 0, t[0])
    ):
        server_peer = pdev not in index.schemes and pdev in index.devices
        out.append(
            {
                "local": port,
                "name": fqdn(pdev),
                "chassis_mac": mac_of(pdev, "chassis"),
                "port_type": "mac" if server_peer else "ifname",
                "port": mac_of(pdev, pport) if server_peer else pport,
                "descr": netdev_of(pport) if server_peer else f"to {device}",
                "mau": _mau(w.speed),
            }
        )
    return out


def lldpd_json0(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """``lldpctl -f json0`` document."""
    return {
        "lldp": [
            {
                "interface": [
                    {
                        "name": e["local"],
                        "via": "LLDP",
                        "rid": str(i + 1),
                        "age": "0 day, 02:13:07",
                        "chassis": [
                            {
                                "id": [{"type": "mac", "value": e["chassis_mac"]}],
                                "name": [{"value": e["name"]}],
                                "descr": [{"value": "Cumulus Linux version 5.9.1"}],
                                "capability": [{"type": "Bridge", "enabled": True}],
                            }
                        ],
                        "port": [
                            {
                                "id": [{"type": e["port_type"], "value": e["port"]}],
                                "descr": [{"value": e["descr"]}],
                                "ttl": [{"value": "120"}],
                                "auto-negotiation": [
                                    {
                                        "supported": False,
                                        "enabled": False,
                                        "current": [{"value": e["mau"]}],
                                    }
                                ],
                            }
                        ],
                    }
                    for i, e in enumerate(entries)
                ]
            }
        ]
    }


def lldpd_json(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Plain ``lldpctl -f json`` document (dict for one interface, list of dicts for several)."""
    items = [
        {
            e["local"]: {
                "via": "LLDP",
                "rid": str(i + 1),
                "age": "0 day, 02:13:07",
                "chassis": {
                    e["name"]: {
                        "id": {"type": "mac", "value": e["chassis_mac"]},
                        "descr": "Cumulus Linux version 5.9.1",
                        "capability": {"type": "Bridge", "enabled": True},
                    }
                },
                "port": {
                    "id": {"type": e["port_type"], "value": e["port"]},
                    "descr": e["descr"],
                    "ttl": "120",
                    "auto-negotiation": {"supported": False, "enabled": False, "current": e["mau"]},
                },
            }
        }
        for i, e in enumerate(entries)
    ]
    if not items:
        return {"lldp": {}}
    return {"lldp": {"interface": items[0] if len(items) == 1 else items}}


def eos_name(index: PlanIndex, device: str, port: str) -> str:
    """EOS spelling of a plan switch port: ``Ethernet<cage>/<lane>``."""
    sch = index.schemes[device]
    n = switch_port_number(port, sch.ports_per_cage)
    assert n is not None
    cage, lane = cage_of(n, sch.ports_per_cage)
    return f"Ethernet{cage}/{lane}"


def eos_doc(
    index: PlanIndex,
    device: str,
    wires: list[Wire],
    *,
    fqdn: Callable[[str], str],
    silent: Iterable[str] = (),
    extra: Iterable[tuple[str, str, str]] = (),
) -> dict[str, Any]:
    """``show lldp neighbors detail | json`` of ``device`` (quoted interfaceId, FQDN names)."""
    neighbors: dict[str, dict[str, Any]] = {}
    for port, pdev, pport, _ in _by_device(wires).get(device, []):
        local = eos_name(index, device, port)
        if pdev in index.schemes:
            pid, ptype, pdesc = eos_name(index, pdev, pport), "interfaceName", f"to {device}"
        else:
            pid, ptype, pdesc = netdev_of(pport), "interfaceName", netdev_of(pport)
        neighbors.setdefault(local, {"lldpNeighborInfo": []})["lldpNeighborInfo"].append(
            {
                "chassisIdType": "macAddress",
                "chassisId": mac_of(pdev, "chassis"),
                "systemName": fqdn(pdev),
                "systemDescription": "Arista Networks EOS",
                "ttl": 120,
                "neighborDiscoveryTime": 1717490000.0,
                "neighborInterfaceInfo": {
                    "interfaceIdType": ptype,
                    "interfaceId": f'"{pid}"',
                    "interfaceId_v2": pid,
                    "interfaceDescription": pdesc,
                    "maxFrameSize": 9236,
                },
            }
        )
    for local, name, pid in extra:
        neighbors.setdefault(local, {"lldpNeighborInfo": []})["lldpNeighborInfo"].append(
            {
                "chassisIdType": "macAddress",
                "chassisId": mac_of(name, "chassis"),
                "systemName": name,
                "ttl": 120,
                "neighborInterfaceInfo": {
                    "interfaceIdType": "interfaceName",
                    "interfaceId": f'"{pid}"',
                    "interfaceId_v2": pid,
                },
            }
        )
    for local in silent:
        neighbors.setdefault(local, {"lldpNeighborInfo": []})
    return {"lldpNeighbors": dict(sorted(neighbors.items(), key=lambda kv: _eos_sort(kv[0])))}


def _eos_sort(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in name.removeprefix("Ethernet").split("/"))


def eos_status(
    index: PlanIndex, device: str, wires: list[Wire], up_without_lldp: Iterable[str] = ()
) -> dict[str, Any]:
    """``show interfaces status | json`` for the ports with cables (plus silent ones)."""
    st: dict[str, Any] = {}
    for port, _, _, w in _by_device(wires).get(device, []):
        st[eos_name(index, device, port)] = {
            "linkStatus": "connected",
            "bandwidth": w.speed * 1_000_000_000,
            "interfaceType": "400GBASE-SR4",
            "duplex": "duplexFull",
        }
    for local in up_without_lldp:
        st[local] = {
            "linkStatus": "connected",
            "bandwidth": 400_000_000_000,
            "interfaceType": "400GBASE-SR4",
            "duplex": "duplexFull",
        }
    return {"interfaceStatuses": dict(sorted(st.items(), key=lambda kv: _eos_sort(kv[0])))}


CSV_HEADER = [
    "side_a_device",
    "side_a_type",
    "side_a_name",
    "side_b_device",
    "side_b_type",
    "side_b_name",
    "type",
    "status",
    "label",
    "color",
    "length",
    "length_unit",
    "site",
]
_NB_TYPE = {"mmf": "mmf-om4", "smf": "smf-os2", "copper": "cat6"}


def netbox_rows(topo: FabricTopology, wires: list[Wire]) -> list[dict[str, str]]:
    """NetBox cable rows for ``wires`` (type from the planned medium, label = link id)."""
    medium = {link.id: link.medium for link in topo.links}
    rows = []
    for w in wires:
        rows.append(
            {
                "side_a_device": w.a_dev,
                "side_a_type": "dcim.interface",
                "side_a_name": w.a_port,
                "side_b_device": w.b_dev,
                "side_b_type": "dcim.interface",
                "side_b_name": w.b_port,
                "type": _NB_TYPE.get(medium.get(w.id, "mmf"), ""),
                "status": "connected",
                "label": w.id,
                "color": "",
                "length": "3",
                "length_unit": "m",
                "site": "dc1",
            }
        )
    return rows


def netbox_csv(rows: list[dict[str, str]], header: list[str] = CSV_HEADER) -> str:
    """CSV text of NetBox cable rows."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=header, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def netbox_rest(rows: list[dict[str, str]]) -> dict[str, Any]:
    """NetBox REST page of the same cables."""
    results = []
    for i, r in enumerate(rows, 1):
        results.append(
            {
                "id": i,
                "url": f"https://netbox.example/api/dcim/cables/{i}/",
                "display": f"#{i}",
                "type": r["type"],
                "status": {"value": r["status"], "label": r["status"].title()},
                "label": r["label"],
                "color": r["color"],
                "length": float(r["length"]) if r["length"] else None,
                "length_unit": {"value": r["length_unit"], "label": "Meters"},
                "a_terminations": [
                    {
                        "object_type": r["side_a_type"],
                        "object_id": 10 * i,
                        "object": {
                            "name": r["side_a_name"],
                            "device": {"name": r["side_a_device"]},
                        },
                    }
                ],
                "b_terminations": [
                    {
                        "object_type": r["side_b_type"],
                        "object_id": 10 * i + 1,
                        "object": {
                            "name": r["side_b_name"],
                            "device": {"name": r["side_b_device"]},
                        },
                    }
                ],
            }
        )
    return {"count": len(results), "next": None, "previous": None, "results": results}


def inventory_records(topo: FabricTopology) -> dict[str, list[dict[str, Any]]]:
    """Cable and Switch records as the inventory store would list them (status 'active')."""
    intent = derive_intent(topo)
    return {
        "Cable": [{**c.props(), "status": "active"} for c in intent.cables],
        "Switch": [{**s.props(), "status": "active"} for s in intent.switches],
    }


class FakeStore:
    """In-memory stand-in for ``fabric_stack.adapters.inventory`` stores: only ``list_records``."""

    def __init__(self, records: dict[str, list[dict[str, Any]]]) -> None:
        self.records = records

    def list_records(self, kind: str) -> list[dict[str, Any]]:
        """Records of one kind (copies)."""
        return [dict(r) for r in self.records.get(kind, [])]


# --------------------------------------------------------------------------- the seed fixtures


def _dump(doc: Any) -> str:
    return json.dumps(doc, indent=2) + "\n"


def ib_fixture_wires() -> tuple[PlanIndex, list[Wire]]:
    """IB seed wires with the ibnetdiscover faults injected (see FAULTS_IB)."""
    topo = topology(SEED_IB)
    index = PlanIndex.from_topology(topo)
    w = clean_wires(topo, ("node_leaf", "manager_leaf", "leaf_spine"))  # UFM HCAs too
    w = drop(w, "su1-node16:mlx5_7")
    w = add(w, Wire("su1-r1-leaf", "1/10/2", "su1-r2-leaf", "1/10/2", 400, "extra", "extra-1"))
    w = swap_b(w, "su1-node03:mlx5_1", "su1-node04:mlx5_1")
    w = move_b(w, "su1-node07:mlx5_3", "su1-r2-leaf", "1/12/1")
    w = set_rate(w, "su1-node05:mlx5_4", 200, "4xHDR")
    w = [x for x in w if x.a_dev != "su1-node12"]
    w = add(w, Wire("lab-sw-01", "1", "su1-r8-leaf", "1/15/2", 400, "extra", "extra-2"))
    return index, w


FAULTS_IB = """\
ib/ibnetdiscover.txt + ib/node-name-map (seed cluster, InfiniBand, compute fabric):
  missing       su1-node16 mlx5_7 ↔ su1-r8-leaf 1/8/2 not cabled
  extra         su1-r1-leaf 1/10/2 ↔ su1-r2-leaf 1/10/2 (leaf-to-leaf patch)
  swap          su1-node03 mlx5_1 / su1-node04 mlx5_1 swapped on su1-r2-leaf
  wrong rail    su1-node07 mlx5_3 on su1-r2-leaf 1/12/1 instead of su1-r4-leaf 1/4/1
  4xHDR         su1-node05 mlx5_4 ↔ su1-r5-leaf runs 4xHDR where NDR is planned
  GUID changed  su1-r7-leaf replaced: new GUID, node-name-map still has the old one
  device gone   su1-node12 powered off (its 8 HCAs absent)
  extra device  lab-sw-01 on su1-r8-leaf 1/15/2
  quirks        switch NodeDescs MF0;<name>:MQM9700/U1, spine NodeDescs as FQDNs,
                su1-r3-leaf with a stale NodeDesc (the map names it), unpadded (…) GUIDs
"""


def write_ib(root: Path) -> None:
    """ibnetdiscover + node-name-map of the IB seed, faults injected."""
    index, w = ib_fixture_wires()
    replaced = {"su1-r7-leaf": "fc6a1c0300ee0007"}

    def desc(name: str) -> str:
        if name.startswith("spine-"):
            return f"{name}.ib.dc1.example.net"
        if name == "su1-r3-leaf":
            return "MF0;switch-3f2a91:MQM9700/U1"
        return f"MF0;{name}:MQM9700/U1"

    text = ibnetdiscover_text(
        index, w, desc=desc, guid_override=replaced, extra_switches=["lab-sw-01"]
    )
    (root / "ib").mkdir(parents=True, exist_ok=True)
    (root / "ib" / "ibnetdiscover.txt").write_text(text, encoding="utf-8")
    leaves = [d for d in index.schemes if d.endswith("-leaf")]
    (root / "ib" / "node-name-map").write_text(node_name_map_text(leaves), encoding="utf-8")


def netbox_fixture_rows() -> list[dict[str, str]]:
    """NetBox rows of the IB seed (all networks), faults injected (see FAULTS_NETBOX)."""
    topo = topology(SEED_IB)
    w = clean_wires(topo)
    w = drop(w, "su1-node14:bmc1")
    w = add(w, Wire("su1-r1-leaf", "1/10/2", "su1-r2-leaf", "1/10/2", 400, "extra", "extra-1"))
    w = move_b(w, "su1-node02:stor2", "su1-storage-b1", "swp5s0")
    rows = netbox_rows(topo, w)
    for r in rows:
        if r["label"] == "su1-r4-leaf:1/18/2":
            r["status"] = "decommissioning"
        if r["label"] == "su1-node01:bmc1":
            r["type"] = "mmf-om4"
        if r["side_b_device"] == "spine-02":
            r["side_b_device"] = "spine-02.dc1.example.net"
    rows.append(
        {
            "side_a_device": "su1-node01",
            "side_a_type": "dcim.interface",
            "side_a_name": "eno2",
            "side_b_device": "patch-panel-07",
            "side_b_type": "dcim.frontport",
            "side_b_name": "3",
            "type": "cat6",
            "status": "connected",
            "label": "",
            "color": "",
            "length": "1",
            "length_unit": "m",
            "site": "dc1",
        }
    )
    return rows


FAULTS_NETBOX = """\
ib/netbox-cables.csv and ib/netbox-cables.json (seed cluster, every network):
  missing       su1-node14 bmc1 ↔ su1-oob-a1 has no cable record
  extra         su1-r1-leaf 1/10/2 ↔ su1-r2-leaf 1/10/2 recorded, not planned
  wrong port    su1-node02 stor2 recorded on su1-storage-b1 swp5s0 (planned swp1s1)
  status        su1-r4-leaf 1/18/2 ↔ spine uplink marked decommissioning
  type          su1-node01 bmc1 recorded as mmf-om4 (planned copper)
  quirks        spine-02 as an FQDN; one cable to a patch-panel front port (not compared)
"""


def write_netbox(root: Path) -> None:
    """NetBox CSV + REST JSON of the IB seed, faults injected."""
    rows = netbox_fixture_rows()
    (root / "ib").mkdir(parents=True, exist_ok=True)
    (root / "ib" / "netbox-cables.csv").write_text(netbox_csv(rows), encoding="utf-8")
    (root / "ib" / "netbox-cables.json").write_text(_dump(netbox_rest(rows)), encoding="utf-8")


def inventory_fixture_records() -> dict[str, list[dict[str, Any]]]:
    """Inventory records of the IB seed, edited behind the plan's back (FAULTS_INVENTORY)."""
    recs = inventory_records(topology(SEED_IB))
    cables = [c for c in recs["Cable"] if c["name"] != "su1-node09:mlx5_2"]
    for c in cables:
        if c["name"] == "su1-node10:mlx5_0":
            c["a_optic"] = "OSFP 400G DR4"
        if c["name"] == "su1-r2-leaf:1/20/1":
            c["status"] = "decommissioned"
        if c["name"] == "su1-node11:mlx5_6":
            c["a_speed_gbps"] = 200
    switches = []
    for s in recs["Switch"]:
        if s["name"] == "spine-03":
            s["model"] = "qm8700"
        switches.append(s)
    extra = dict(switches[0])
    extra.update(name="su1-r9-leaf", rail=9)
    switches.append(extra)
    return {"Cable": cables, "Switch": switches}


FAULTS_INVENTORY = """\
ib/inventory-records.json (what the store's list_records returns; seed cluster):
  missing       cable record su1-node09:mlx5_2 deleted
  optic         su1-node10:mlx5_0 a_optic edited to OSFP 400G DR4
  status        su1-r2-leaf:1/20/1 marked decommissioned
  speed         su1-node11:mlx5_6 a_speed_gbps edited to 200
  model         spine-03 model edited to qm8700
  extra device  switch record su1-r9-leaf that the plan does not have
"""


def write_inventory(root: Path) -> None:
    """The inventory records (JSON) for the fake store."""
    (root / "ib").mkdir(parents=True, exist_ok=True)
    (root / "ib" / "inventory-records.json").write_text(
        _dump(inventory_fixture_records()), encoding="utf-8"
    )


def roce_lldp_wires() -> tuple[PlanIndex, list[Wire]]:
    """RoCE seed wires with the LLDP faults injected (see FAULTS_LLDP)."""
    topo = topology(SEED_ROCE)
    index = PlanIndex.from_topology(topo)
    w = clean_wires(topo)
    w = [replace(x, rate=None) for x in w]
    w = drop(w, "su1-node16:mlx5_7")
    w = add(w, Wire("su1-r1-leaf", "swp20s0", "su1-r2-leaf", "swp20s0", 400, "extra", "extra-1"))
    w = swap_b(w, "su1-node03:mlx5_1", "su1-node04:mlx5_1")
    w = swap_b(w, "su1-node10:mlx5_0", "su1-node10:mlx5_1")
    w = move_b(w, "su1-node07:mlx5_3", "su1-r2-leaf", "swp12s0")
    w = move_b(w, "su1-node09:mlx5_5", "su1-storage-a1", "swp30s0")
    w = set_rate(w, "su1-r3-leaf:swp33s0", 200, None)
    return index, w


FAULTS_LLDP = """\
roce/lldp/ (lldpctl from every switch of the RoCE seed; json0, and -f json for spines):
  missing       su1-node16 mlx5_7 ↔ su1-r8-leaf swp8s1 not cabled
  extra         su1-r1-leaf swp20s0 ↔ su1-r2-leaf swp20s0
  swap          su1-node03 mlx5_1 / su1-node04 mlx5_1 swapped on su1-r2-leaf
  swap (node)   su1-node10 mlx5_0 / mlx5_1 swapped between su1-r1-leaf and su1-r2-leaf
  wrong rail    su1-node07 mlx5_3 on su1-r2-leaf swp12s0 (planned su1-r4-leaf swp4s0)
  wrong switch  su1-node09 mlx5_5 on su1-storage-a1 swp30s0 (planned su1-r6-leaf swp5s0)
  speed         su1-r3-leaf swp33s0 uplink advertises 200GBASE-SR4 (planned 400G)
  quirks        spines' chassis names are FQDNs; host ports are MAC port ids
                (roce/mac-table.csv maps them)
"""


def write_lldp(root: Path) -> None:
    """lldpctl JSON per switch of the RoCE seed (json0 for most, -f json for spines)."""
    index, w = roce_lldp_wires()
    d = root / "roce" / "lldp"
    d.mkdir(parents=True, exist_ok=True)
    for old in d.glob("*.json"):
        old.unlink()

    def fqdn(name: str) -> str:
        return f"{name}.dc1" if name.startswith("spine-") else name

    for dev in index.schemes:
        entries = lldp_entries(index, dev, w, fqdn=fqdn)
        doc = lldpd_json(entries) if dev.startswith("spine-") else lldpd_json0(entries)
        (d / f"{dev}.json").write_text(_dump(doc), encoding="utf-8")
    rows = ["device,port,mac,ifname"]
    for dev, ports in sorted(index.server_ports.items()):
        for p in sorted(ports):
            rows.append(f"{dev},{p},{mac_of(dev, p)},{netdev_of(p)}")
    (root / "roce" / "mac-table.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def roce_eos_wires() -> tuple[PlanIndex, list[Wire]]:
    """RoCE seed compute wires with the EOS faults injected (see FAULTS_EOS)."""
    topo = topology(SEED_ROCE)
    index = PlanIndex.from_topology(topo)
    w = clean_wires(topo, ("node_leaf", "leaf_spine"))
    w = [replace(x, rate=None) for x in w]
    w = drop(w, "su1-node15:mlx5_2")
    w = drop(w, "su1-node06:mlx5_5")  # cabled, but the host sends no LLDP (status: connected)
    w = move_b(w, "su1-node11:mlx5_6", "su1-r7-leaf", "swp13s0")
    w = set_rate(w, "su1-node08:mlx5_0", 200, None)
    return index, w


FAULTS_EOS = """\
roce/eos/ (EOS `show lldp neighbors detail | json` from the compute switches of the RoCE seed):
  missing       su1-node15 mlx5_2 ↔ su1-r3-leaf swp8s0 not cabled
  up, no LLDP   su1-r6-leaf Ethernet3/2 is connected (status file) but has no neighbour
  wrong port    su1-node11 mlx5_6 on su1-r7-leaf Ethernet13/1 (planned Ethernet6/1)
  speed         su1-r1-leaf Ethernet4/2 (su1-node08 mlx5_0) runs at 200G (status file)
  extra device  lab-sw-01.dc1 listed as a second neighbour on su1-r1-leaf Ethernet1/1
  quirks        systemName FQDNs, quoted interfaceId, EOS port names for a Cumulus-named plan,
                hosts named by their netdev (roce/mac-table.csv maps them)
"""


def write_eos(root: Path) -> None:
    """EOS LLDP JSON per compute switch (plus status files for two leaves)."""
    index, w = roce_eos_wires()
    d = root / "roce" / "eos"
    d.mkdir(parents=True, exist_ok=True)
    for old in d.glob("*.json"):
        old.unlink()

    def fqdn(name: str) -> str:
        return f"{name}.dc1.example.net" if name in index.schemes else name

    for dev in index.schemes:
        if not dev.endswith("-leaf") and not dev.startswith("spine-"):
            continue
        silent = ["Ethernet3/2"] if dev == "su1-r6-leaf" else []
        extra = [("Ethernet1/1", "lab-sw-01.dc1", "Ethernet48")] if dev == "su1-r1-leaf" else []
        doc = eos_doc(index, dev, w, fqdn=fqdn, silent=silent, extra=extra)
        (d / f"{dev}.json").write_text(_dump(doc), encoding="utf-8")
        if dev in ("su1-r1-leaf", "su1-r6-leaf"):
            st = eos_status(index, dev, w, up_without_lldp=silent)
            (d / f"{dev}.status.json").write_text(_dump(st), encoding="utf-8")


def write_malformed(root: Path) -> None:
    """Broken inputs, each with one defect the readers must name by file and line/path."""
    m = root / "malformed"
    m.mkdir(parents=True, exist_ok=True)
    good = (root / "roce" / "lldp" / "su1-r1-leaf.json").read_text(encoding="utf-8")
    (m / "lldp-truncated").mkdir(exist_ok=True)
    (m / "lldp-truncated" / "su1-r1-leaf.json").write_text(good[: len(good) // 3], encoding="utf-8")
    (m / "eos-bad-shape").mkdir(exist_ok=True)
    (m / "eos-bad-shape" / "su1-r1-leaf.json").write_text(
        _dump(
            {
                "lldpNeighbors": {
                    "Ethernet1/1": {"lldpNeighborInfo": []},
                    "Ethernet1/2": {"lldpNeighborInfo": {"systemName": "su1-node02"}},
                }
            }
        ),
        encoding="utf-8",
    )
    ib = (root / "ib" / "ibnetdiscover.txt").read_text(encoding="utf-8").splitlines()
    bad = list(ib)
    idx = next(i for i, line in enumerate(bad) if line.startswith("[3]"))
    bad[idx] = bad[idx].replace('"[', '" [').replace("[3]", "[3", 1)
    (m / "ibnetdiscover-bad-line.txt").write_text("\n".join(bad) + "\n", encoding="utf-8")
    cut = next(i for i, line in enumerate(ib) if line.startswith("Ca\t"))
    (m / "ibnetdiscover-truncated.txt").write_text(
        "\n".join(ib[: cut + 20]) + "\n", encoding="utf-8"
    )
    rows = netbox_fixture_rows()[:6]
    header = [h for h in CSV_HEADER if h != "side_b_name"]
    (m / "netbox-missing-column.csv").write_text(netbox_csv(rows, header), encoding="utf-8")
    full = netbox_csv(rows)
    (m / "netbox-truncated.csv").write_text(full[: full.rindex(",connected")], encoding="utf-8")
    (m / "node-name-map-bad").write_text(
        '# map\n0xfc6a1c0300a1b2c3 "su1-r1-leaf"\nsu1-r2-leaf fc6a1c0300a1b2c4\n', encoding="utf-8"
    )
    (m / "ignore-bad-mode.yaml").write_text(
        "ports:\n  - {device: su1-node07, port: mlx5_3, mode: ignore}\n"
        "  - {device: su1-r1-leaf, port: 1/4/1, mode: sometimes}\n",
        encoding="utf-8",
    )


def write_all(root: Path = FIXTURES) -> list[Path]:
    """(Re)write every drift fixture; returns the files written."""
    write_ib(root)
    write_netbox(root)
    write_inventory(root)
    write_lldp(root)
    write_eos(root)
    write_malformed(root)
    readme = (
        "# Drift fixtures (generated: `python -m tests.drift_fixtures`)\n\n"
        "Composed from the seed cluster's plan, then faults injected. GUIDs, MACs and\n"
        "names are made up. Do not edit by hand.\n\n```\n"
        + "\n".join([FAULTS_IB, FAULTS_NETBOX, FAULTS_INVENTORY, FAULTS_LLDP, FAULTS_EOS])
        + "```\n"
    )
    (root / "README.md").write_text(readme, encoding="utf-8")
    return sorted(p for p in root.rglob("*") if p.is_file())


if __name__ == "__main__":
    files = write_all()
    print(f"wrote {len(files)} fixture files under {FIXTURES.relative_to(REPO)}", file=sys.stderr)
