"""The plan's compute and access wiring as adopt reads it: each planned switch position's
identity (:data:`POSITION_ATTRS`), the planned peer of every (device, port key), and the
observed ports turned into the plan's port keys (:func:`port_keys`: NIC names by the
profile, switch ports by their planned numbering)."""

from __future__ import annotations

import re
from typing import Any

from fabric_stack.drift.identity import hca_to_ibdev, switch_port_number
from fabric_stack.drift.observation import Observation
from fabric_stack.drift.plan import PortScheme, port_schemes
from fabric_stack.drift.ports import port_number
from fabric_stack.topology.build import COMPUTE_ROLES, FabricTopology
from fabric_stack.topology.model import MANAGER_ROLE

ACCESS_ROLES = ("storage", "inband", "oob")
"""Link (and switch) roles of the access networks: placed by the server ports they serve."""

_NUM = re.compile(r"(\d+)")


POSITION_ATTRS = ("role", "plane", "pod", "su", "rail", "index")
"""What identifies a planned switch position."""

TIER = {"leaf": 1, "spine": 2, "core": 3}
UPLINK_ROLE = {1: "leaf_spine", 2: "spine_core"}


def common_attrs(devices: list[Any]) -> tuple[tuple[int, Any], ...]:
    """(attribute index, value) of each position attribute all ``devices`` share."""
    out = []
    for i, f in enumerate(POSITION_ATTRS):
        first = getattr(devices[0], f)
        if all(getattr(d, f) == first for d in devices):  # stops at the first that differs
            out.append((i, first))
    return tuple(out)


class PlanPorts:
    """The plan's compute wiring keyed by port: (planned device, port key) → peer."""

    def __init__(self, topo: FabricTopology) -> None:
        self.role = {d.planned_name: d.role for d in topo.devices}
        self.attrs = {d.planned_name: d for d in topo.devices}
        back = {d.name: d.planned_name for d in topo.devices}
        self.schemes = {back[k]: v for k, v in port_schemes(topo).items()}
        self.peer: dict[tuple[str, Any], tuple[str, Any]] = {}
        self.sig: dict[tuple[str, int, int], list[tuple[str, str]]] = {}
        self.nic_names: set[str] = set()
        self.access_role: dict[str, str] = {}
        """Server port name of a storage / in-band / OOB cable → that network's switch role."""
        peer, sig, nics = self.peer, self.sig, self.nic_names
        for link in topo.links:
            role = link.role
            if role in ACCESS_ROLES:
                a, b = back[link.a_device], back[link.b_device]
                self.access_role[link.a_port] = self.role[b]
                peer[(a, link.a_port)] = (b, link.b_port_number)
                peer[(b, link.b_port_number)] = (a, link.a_port)
                continue
            if role not in COMPUTE_ROLES and role != MANAGER_ROLE:
                continue
            a, b, bn = back[link.a_device], back[link.b_device], link.b_port_number
            if role in ("node_leaf", MANAGER_ROLE):
                ak: Any = link.a_port
                nics.add(ak)
            else:
                ak = link.a_port_number
                key = (role, ak, bn)
                pairs = sig.get(key)
                if pairs is None:
                    sig[key] = [(a, b)]
                else:
                    pairs.append((a, b))
            peer[(a, ak)] = (b, bn)
            peer[(b, bn)] = (a, ak)
        self.position = {
            tuple(getattr(d, f) for f in POSITION_ATTRS): d.planned_name
            for d in topo.devices
            if d.role in TIER
        }
        """Switch attributes (role, plane, pod, su, rail, index) → planned name."""
        self._common: dict[tuple[str, int, int], tuple[Any, Any] | None] = {}
        self.nic_rail: dict[str, tuple[int, int]] = {
            link.a_port: (link.plane, link.rail) for link in topo.links_of("node_leaf")
        }
        """NIC name → (plane, rail) it serves."""
        self.leaves: dict[tuple[int, int], list[str]] = {}
        self.leaf_at: dict[tuple[int, int, int, int], str] = {}
        """(plane, pod, su, rail) → planned leaf."""
        for d in topo.switches("leaf"):
            self.leaves.setdefault((d.plane, d.rail), []).append(d.planned_name)
            self.leaf_at[(d.plane, d.pod, d.su, d.rail)] = d.planned_name
        compute = [v for k, v in self.schemes.items() if self.role.get(k) in TIER]
        self.ppc = max((s.ports_per_cage for s in compute), default=1)
        """Logical ports per cage of the compute switches (how their port labels count)."""
        self.tier_scheme: dict[int, PortScheme] = {}
        """Switch tier (1 leaf, 2 spine, 3 core) → how its switches number their ports: the
        tiers may run other models and speeds (issue #43), a mixed leaf two layouts."""
        for k, v in self.schemes.items():
            self.tier_scheme.setdefault(TIER.get(self.role.get(k, ""), 0), v)
        self.tier_scheme.pop(0, None)
        self.access_ppc: dict[str, int] = {}
        """Access switch role → logical ports per cage (a storage switch may split 4 ways)."""
        for k, v in self.schemes.items():
            r = self.role.get(k, "")
            if r in ACCESS_ROLES:
                self.access_ppc[r] = max(self.access_ppc.get(r, 1), v.ports_per_cage)

    def common(self, key: tuple[str, int, int]) -> tuple[Any, Any] | None:
        """The attributes every planned a-end (b-end) of port-pair signature ``key`` shares."""
        if key not in self._common:
            pairs = self.sig.get(key)
            self._common[key] = (
                (
                    common_attrs([self.attrs[a] for a, _ in pairs]),
                    common_attrs([self.attrs[b] for _, b in pairs]),
                )
                if pairs
                else None
            )
        return self._common[key]


def port_keys(
    obs: Observation, plan: PlanPorts, tier: dict[str, int] | None = None
) -> tuple[dict[tuple[str, str], Any], list[str]]:
    """Each observed (device, port) → the plan's port key: a number or a NIC name.

    ``tier`` (observed switch → 1 leaf, 2 spine, 3 core, from the wiring): a switch's port
    labels are read in its tier's numbering (an 800G spine's ``swp5`` is its port 5, a
    mixed leaf's ``swp33`` its port 65); without it, or where that reads nothing, at the
    compute switches' finest cage split."""
    nic_of: dict[str, str | None] = {}
    number_of: dict[tuple[str, int], int | None] = {}
    tiered: dict[tuple[str, int], int | None] = {}
    tier = tier or {}

    def nic(port: str) -> str | None:
        if port not in nic_of:
            ib = port if port in plan.nic_names else hca_to_ibdev(port)
            nic_of[port] = ib if ib in plan.nic_names else None
        return nic_of[port]

    def number(port: str, ppc: int) -> int | None:
        if (port, ppc) not in number_of:
            raw = port.split("/")[-1] if port.startswith("U") else port
            number_of[(port, ppc)] = switch_port_number(raw, ppc)
        return number_of[(port, ppc)]

    devices = obs.devices
    servers = {n for n, d in devices.items() if d.kind == "server"}
    access = plan.access_role
    for a, pa, b, pb in obs.cables:
        if not devices[a].kind and (nic(pa) or pa in access):
            servers.add(a)
        if not devices[b].kind and (nic(pb) or pb in access):
            servers.add(b)
    # A switch a server reaches on a storage / in-band / BMC port counts its ports as the
    # plan's switches of that network do.
    ppc: dict[str, int] = {}
    for a, pa, b, pb in obs.cables:
        for host, hp, sw in ((a, pa, b), (b, pb, a)):
            if host in servers and hp in access and not nic(hp) and sw not in servers:
                ppc[sw] = plan.access_ppc.get(access[hp], plan.ppc)
    keys: dict[tuple[str, str], Any] = {}
    odd: dict[str, set[str]] = {}
    for a, pa, b, pb in obs.cables:
        for dev, port in ((a, pa), (b, pb)):
            if dev in servers:
                ib = nic(port)
                if ib is not None:
                    keys[(dev, port)] = ib
                elif port in access:  # a storage / in-band / BMC port, by the plan's name
                    keys[(dev, port)] = port
                else:
                    odd.setdefault(dev, set()).add(port)
            else:
                t = tier.get(dev, 0)
                scheme = plan.tier_scheme.get(t) if dev not in ppc else None
                n = None
                if scheme is not None:
                    if (port, t) not in tiered:
                        raw = port.split("/")[-1] if port.startswith("U") else port
                        tiered[(port, t)] = port_number(raw, scheme)
                    n = tiered[(port, t)]
                if n is None:
                    n = number(port, ppc.get(dev, plan.ppc))
                if n is not None:
                    keys[(dev, port)] = n
    notes: list[str] = []
    nics = sorted(plan.nic_names, key=natural_key)
    ranked = 0
    named = {dev for (dev, _), k in keys.items() if isinstance(k, str) and k in plan.nic_names}
    for dev, ports in odd.items():
        # Rank only on a server none of whose ports has a plan NIC name: where some do,
        # the others are its storage / in-band / BMC ports, not rail NICs named otherwise.
        # A one-port device (an HCA keeping its factory NodeDesc, 'MT4129 ConnectX7') has
        # no rank to read: its port '1' says nothing about which NIC it is.
        if dev not in named and (len(ports) > 1 or len(nics) == 1) and len(ports) <= len(nics):
            for port, name in zip(sorted(ports, key=natural_key), nics, strict=False):
                keys[(dev, port)] = name
                ranked += 1
    if ranked:
        notes.append(
            f"{ranked} server port name(s) are not NIC names (e.g. ens3np0): read by their rank "
            "among the server's ports (UNVERIFIED: give the plan's NIC names in the source)"
        )
    if any(p not in plan.nic_names and v for p, v in nic_of.items()):
        notes.append("MLNX_OFED HCA-N ports read as mlx5_(N-1) (UNVERIFIED)")
    for dev in servers:
        devices[dev].kind = "server"
    return keys, notes


def natural_key(text: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in _NUM.split(text)]
