"""The plan as a twin wiring, node GUIDs, and faults applied to a wiring: all pure.

:func:`plan_wiring` reads the topology (it never recomputes a port map) and
keeps what the twin builds: the InfiniBand compute subnet (leaf, spine, core,
one CA node per HCA port, as real gear reports it) or, for Ethernet/RoCE,
every planned cable (compute, storage, in-band and out-of-band), so ``lldpctl``
on a server sees all of its planned neighbours as on a real site.

Faults (:func:`apply_fault`) return a new wiring; the runtime then makes the
running twin match it. A fault names cable ends as ``DEVICE:PORT`` with the
plan's port labels (``su1-r1-leaf:1/17/1``, ``su1-r1-leaf:swp17s0``,
``su1-node01:mlx5_0``) or a switch port number (``su1-r1-leaf:17``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from fabric_stack.errors import FabricStackError
from fabric_stack.hardware.switches import lookup_switch
from fabric_stack.naming.devices import switch_port_label
from fabric_stack.topology.build import FABRIC_ROLES, HOST_ROLES, MANAGER_ROLE, FabricTopology
from fabric_stack.twin.model import EXPECTED_FINDING, FAULT_KINDS, Cable, Device, End, Fault, Wiring

SWITCH_GUID_BASE = 0x02FA570100000000
"""Switch node GUIDs: a locally administered EUI-64 prefix (bit 1 of the first byte set, so
no vendor's OUI is claimed) + 32 bits of SHA-256 of the name, low nibble 0."""

HCA_GUID_BASE = 0x02FA570200000000
"""HCA node GUIDs: as switches, another prefix. ibsim gives port 1 the node GUID + 1."""


class TwinError(FabricStackError):
    """A twin command given something it cannot do (bad fault, no twin in DIR): exit 2."""


class TwinFailure(FabricStackError):
    """The twin could not be built or queried (a daemon failed, a wait timed out): exit 1."""

    exit_code = 1


def plan_wiring(topo: FabricTopology, all_planes: bool = False) -> Wiring:
    """The wiring a twin of ``topo`` runs: InfiniBand compute subnet, or every Ethernet cable.

    The InfiniBand subnet includes the fabric-manager hosts (UFM / OpenSM) and their
    cables. ``twin up`` models one subnet; ``all_planes`` lets a caller wire every plane
    of a dual-plane plan into one ibsim (disjoint subnets, one SM set each).
    """
    plan = topo.plan
    ib = plan.spec.fabric == "infiniband"
    if ib and plan.planes > 1 and not all_planes:
        raise TwinError(
            f"planes: the twin models one InfiniBand subnet; this plan has {plan.planes} planes "
            "(twin a single-plane plan: --planes 1)"
        )
    roles = FABRIC_ROLES if ib else None
    links = [lk for lk in topo.links if roles is None or lk.role in roles]
    used: dict[str, int] = {}
    hcas: dict[str, list[str]] = {}
    for lk in links:
        used[lk.a_device] = max(used.get(lk.a_device, 0), lk.a_port_number)
        used[lk.b_device] = max(used.get(lk.b_device, 0), lk.b_port_number)
        if ib and lk.role in ("node_leaf", MANAGER_ROLE):
            hcas.setdefault(lk.a_device, []).append(lk.a_port)
    devices: list[Device] = []
    for d in topo.devices:
        if d.name not in used:
            continue
        if d.role in HOST_ROLES:
            devices.append(
                Device(
                    name=d.name,
                    kind="server",
                    ports=used[d.name],
                    model=d.model,
                    hcas=tuple(hcas.get(d.name, ())),
                )
            )
        else:
            ports = max(d.radix, used[d.name])
            devices.append(Device(name=d.name, kind="switch", ports=ports, model=d.model))
    cables = tuple(
        Cable(
            a=End(device=lk.a_device, port=lk.a_port, number=lk.a_port_number),
            b=End(device=lk.b_device, port=lk.b_port, number=lk.b_port_number),
            gbps=lk.speed_gbps,
            role=lk.role,
        )
        for lk in links
    )
    return Wiring(fabric="infiniband" if ib else "ethernet", devices=tuple(devices), cables=cables)


def assign_guids(wiring: Wiring, given: Mapping[str, str] | None = None) -> dict[str, str]:
    """Node GUID of every switch and every ``host mlx5_N``: ``given`` first, else from the name.

    Deterministic: the same plan always gets the same GUIDs. A hash collision
    moves the later name (in plan order) to the next free slot, so GUIDs stay unique.
    """
    given = dict(given or {})
    out: dict[str, str] = {}
    taken = {int(g, 16) for g in given.values()}
    names: list[tuple[str, int]] = []
    for d in wiring.devices:
        if d.kind == "switch":
            names.append((d.name, SWITCH_GUID_BASE))
        else:
            names += [(f"{d.name} {h}", HCA_GUID_BASE) for h in d.hcas]
    for name, base in names:
        if name in given:
            out[name] = given[name]
            continue
        slot = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big") & 0xFFFFFFF0
        for _ in range(1 << 20):  # bounded: a free slot is found long before
            guid = base | slot
            if guid not in taken:
                break
            slot = (slot + 0x10) & 0xFFFFFFF0
        taken.add(guid)
        out[name] = f"0x{guid:016x}"
    return out


# --------------------------------------------------------------------------- ends and faults


def _labeler(topo: FabricTopology, device: Device) -> tuple[str, int] | None:
    """(os family, ports per cage) to label free ports of a compute switch, else None."""
    plan = topo.plan
    if device.kind != "switch" or device.model.lower() != plan.switch_model.key:
        return None
    try:
        return lookup_switch(device.model).os_family, plan.ports_per_cage
    except FabricStackError:
        return None


def resolve_end(topo: FabricTopology, wiring: Wiring, text: str) -> End:
    """``DEVICE:PORT`` → the :class:`End` it names (a planned port, or a free switch port)."""
    device_name, sep, port = text.rpartition(":")
    if not sep or not device_name or not port:
        raise TwinError(f"{text!r}: expected DEVICE:PORT (e.g. su1-r1-leaf:17, su1-node01:mlx5_0)")
    device = wiring.device(device_name)
    if device is None:
        raise TwinError(f"{text!r}: no device {device_name!r} in the twin")
    for c in wiring.cables:
        for e in (c.a, c.b):
            if e.device == device_name and (
                e.port == port or (device.kind == "switch" and str(e.number) == port)
            ):
                return e
    lab = _labeler(topo, device)
    if lab is not None:
        os_family, ppc = lab
        numbers = range(1, device.ports + 1)
        if port.isdigit() and int(port) in numbers:
            n = int(port)
            return End(device=device_name, port=switch_port_label(os_family, n, ppc), number=n)
        for n in numbers:
            if switch_port_label(os_family, n, ppc) == port:
                return End(device=device_name, port=port, number=n)
    raise TwinError(
        f"{text!r}: {device_name} has no port {port!r} (a planned port label or, on a "
        f"compute switch, a number 1..{device.ports})"
    )


def _cable_at(wiring: Wiring, end: End) -> int | None:
    """Index of the cable plugged into ``end`` (ends are identified by device and port label:
    every HCA of a server is its own port 1, so numbers are not unique on servers)."""
    key = (end.device, end.port)
    for i, c in enumerate(wiring.cables):
        if (c.a.device, c.a.port) == key or (c.b.device, c.b.port) == key:
            return i
    return None


def _replace_end(cable: Cable, old: End, new: End) -> Cable:
    if (cable.a.device, cable.a.port) == (old.device, old.port):
        return cable.model_copy(update={"a": new})
    return cable.model_copy(update={"b": new})


def _need_cable(wiring: Wiring, end: End) -> int:
    i = _cable_at(wiring, end)
    if i is None:
        raise TwinError(f"{end.text()}: no cable is plugged in there")
    return i


def _need_free(wiring: Wiring, end: End) -> None:
    if _cable_at(wiring, end) is not None:
        raise TwinError(f"{end.text()}: a cable is already plugged in there (pick a free port)")


def parse_fault(topo: FabricTopology, wiring: Wiring, kind: str, args: tuple[str, ...]) -> Fault:
    """Validate a fault from the command line and resolve its ends onto plan names."""
    arity = {"unplug": 1, "swap": 2, "move": 2, "speed": 2, "down": 1, "rogue": 2}
    if kind not in arity:
        raise TwinError(f"fault kind {kind!r} is not known (one of {', '.join(FAULT_KINDS)})")
    if len(args) != arity[kind]:
        usage = {
            "unplug": "DEVICE:PORT",
            "swap": "DEVICE:PORT DEVICE:PORT",
            "move": "DEVICE:PORT DEVICE:PORT",
            "speed": "DEVICE:PORT GBPS",
            "down": "DEVICE",
            "rogue": "SWITCH:PORT NAME",
        }[kind]
        raise TwinError(f"fault {kind} takes {usage} (got {len(args)} argument(s))")
    resolved: tuple[str, ...]
    if kind == "down":
        if wiring.device(args[0]) is None:
            raise TwinError(f"down {args[0]!r}: no such device in the twin")
        resolved = (args[0],)
    elif kind == "speed":
        if not args[1].isdigit():
            raise TwinError(f"speed: {args[1]!r} is not a speed in Gb/s (e.g. 200)")
        resolved = (resolve_end(topo, wiring, args[0]).text(), args[1])
    elif kind == "rogue":
        end = resolve_end(topo, wiring, args[0])
        if wiring.device(args[1]) is not None:
            raise TwinError(f"rogue: {args[1]!r} is already a device of the twin (pick a new name)")
        if (
            not args[1]
            or len(args[1]) > 40
            or not all(ch.isalnum() or ch in "-_." for ch in args[1])
        ):
            raise TwinError(f"rogue: {args[1]!r} is not a hostname (letters, digits, - _ .)")
        resolved = (end.text(), args[1])
    else:
        resolved = tuple(resolve_end(topo, wiring, a).text() for a in args)
    fault = Fault(kind=kind, args=resolved, expects=EXPECTED_FINDING[kind])
    apply_fault(topo, wiring, fault)  # raises now, before anything changes, if it cannot apply
    return fault


def apply_fault(topo: FabricTopology, wiring: Wiring, fault: Fault) -> Wiring:
    """The wiring with ``fault`` applied (see the module docstring)."""
    cables = list(wiring.cables)
    kind, args = fault.kind, fault.args
    if kind == "down":
        return wiring.model_copy(update={"down": (*wiring.down, args[0])})
    first = resolve_end(topo, wiring, args[0])
    if kind == "unplug":
        del cables[_need_cable(wiring, first)]
    elif kind == "speed":
        i = _need_cable(wiring, first)
        cables[i] = cables[i].model_copy(update={"gbps": int(args[1])})
    elif kind == "swap":
        second = resolve_end(topo, wiring, args[1])
        i, j = _need_cable(wiring, first), _need_cable(wiring, second)
        if i == j:
            raise TwinError(f"swap: {args[0]} and {args[1]} are the two ends of one cable")
        cables[i] = _replace_end(cables[i], first, second)
        cables[j] = _replace_end(cables[j], second, first)
    elif kind == "move":
        second = resolve_end(topo, wiring, args[1])
        i = _need_cable(wiring, first)
        _need_free(wiring, second)
        cables[i] = _replace_end(cables[i], first, second)
    elif kind == "rogue":
        _need_free(wiring, first)
        name = args[1]
        ib = wiring.fabric == "infiniband"
        port = "mlx5_0" if ib else "eth0"
        rogue = Device(name=name, kind="server", ports=1, model="rogue", hcas=(port,) if ib else ())
        cables.append(
            Cable(
                a=End(device=name, port=port, number=1),
                b=first,
                gbps=topo.plan.link_gbps,
                role="rogue",
            )
        )
        return wiring.model_copy(
            update={"devices": (*wiring.devices, rogue), "cables": tuple(cables)}
        )
    return wiring.model_copy(update={"cables": tuple(cables)})


def faulted_wiring(topo: FabricTopology, faults: tuple[Fault, ...]) -> Wiring:
    """The plan's wiring with every fault of the log applied, in order."""
    wiring = plan_wiring(topo)
    for f in faults:
        wiring = apply_fault(topo, wiring, f)
    return wiring
