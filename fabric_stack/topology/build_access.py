"""The access networks of a build: storage, in-band and OOB switches per SU and their cables.

Step 4 of :func:`~fabric_stack.topology.build.build_topology` (kept apart from the compute
fabric's wiring rules in ``build.py``). Each carrier network (one with dedicated switches) gets
A/B sides of access switches per SU, stacked down the SU's network rack from U39; port *k*
of each server on a rider network lands on side *k* mod sides, the switches filled in turn.
"""

from __future__ import annotations

from fabric_stack.naming.devices import access_switch_name, switch_port_label
from fabric_stack.spec.networks import AccessSwitch, access_ports, access_switch, attach_carriers
from fabric_stack.topology.build_parts import Build as _Build
from fabric_stack.topology.build_parts import cable_type as _cable
from fabric_stack.topology.build_parts import new_link
from fabric_stack.topology.build_parts import optic as _optic
from fabric_stack.topology.model import Device

__all__ = ["add_access_networks"]


def add_access_networks(b: _Build) -> None:
    """Access switches of every carrier network, per SU, and the cables of its riders."""
    spec = b.plan.spec
    access = spec.networks.access()
    b.carriers = {n: [] for n in ("compute", *access)}
    b.carriers["compute"] = [d.name for d in b.devices if d.role in ("leaf", "spine", "core")]
    carrier_of = attach_carriers(access)
    for carrier in access:
        riders = [n for n in access if carrier_of[n] == carrier]
        if riders:
            _wire_access(b, carrier, riders)


def _stack_down(b: _Build, su: int, units: int) -> int:
    """The next free position below the access switches already in SU ``su``'s network rack."""
    b.access_top[su] = b.access_top.get(su, 40) - units
    return b.access_top[su]


def _wire_access(b: _Build, carrier: str, riders: list[str]) -> None:
    """One carrier network: A/B sides of access switches per SU and every rider's cables."""
    plan = b.plan
    ports = access_ports(plan.spec.node_profile)
    # One switch side per port of the carrier network (A/B redundancy), sized per SU.
    sides = max(ports[n][0] for n in riders) or 1
    sw = access_switch(plan.spec.networks.access()[carrier].switch, ports[carrier][1], carrier)
    # Ports each node puts on each side (port k of a rider goes to side k mod sides).
    per_node_side = [
        sum(1 for n in riders for k in range(ports[n][0]) if k % sides == s) for s in range(sides)
    ]
    # The switches' port labels by 0-based downlink, once per carrier (~130k cables, #43).
    labels = [
        switch_port_label(sw.model.os_family, n, sw.ports_per_cage) for n in range(1, sw.down + 1)
    ]
    for su in range(1, plan.sus + 1):
        per_side = max(1, -(-(plan.nodes_in_su(su) * max(per_node_side)) // sw.down))
        switches: list[list[str]] = [[] for _ in range(sides)]
        for side in range(sides):
            for i in range(1, per_side + 1):
                swn = access_switch_name(su, carrier, _SIDES[side], i)
                switches[side].append(swn)
                b.devices.append(
                    Device(
                        name=swn,
                        role=carrier,
                        model=sw.model.key,
                        network=carrier,
                        su=su,
                        index=i,
                        radix=sw.radix,
                        rack=f"su{su}-net",
                        position=_stack_down(b, su, sw.model.rack_units),
                    )
                )
                b.carriers[carrier].append(swn)
        used = [0] * sides
        for rider in riders:
            _wire_rider(b, su, sw, rider, (switches, labels), used)


_SIDES = "abcdefgh"
"""Letters of the redundant access-switch sides (A/B, …)."""


def _wire_rider(
    b: _Build,
    su: int,
    sw: AccessSwitch,
    rider: str,
    carrier: tuple[list[list[str]], list[str]],
    used: list[int],
) -> None:
    """Cables of network ``rider`` in SU ``su``: port k of each server on side k mod sides.

    ``carrier``: the SU's access switch names per side and their port labels by 0-based
    downlink; ``used``: the downlinks taken so far per side (counted on across riders)."""
    prof = b.plan.spec.node_profile
    switches, labels = carrier
    sides, down = len(switches), sw.down
    nports, rspeed, pname = access_ports(prof)[rider]
    medium = "copper" if rspeed <= 1 else "mmf"
    a_opt, b_opt = _optic(rspeed, 1, "SR", False), _optic(rspeed, sw.ports_per_cage, "SR", True)
    cable = _cable(medium)
    # Server port k's name, id suffix and side are the same on every server (#43).
    ports = []
    for k in range(nports):
        a_port = prof.access_port(rider, k, pname)
        ports.append((k + 1, a_port, f":{a_port}", k % sides))
    add = b.links.append
    for node in b.node_names[su - 1]:
        for number, a_port, suffix, side in ports:
            i, port = divmod(used[side], down)
            used[side] += 1
            # Every field of Link, positionally (new_link).
            add(
                new_link(
                    node + suffix,
                    rider,
                    rider,
                    node,
                    a_port,
                    number,
                    switches[side][i],
                    labels[port],
                    port + 1,
                    rspeed,
                    0,
                    0,
                    su,
                    0,
                    medium,
                    a_opt,
                    b_opt,
                    cable,
                )
            )
