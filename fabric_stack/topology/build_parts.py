"""What the steps of :func:`~fabric_stack.topology.build.build_topology` share.

:class:`Build` holds the sizing plan and the device, NIC and link lists the steps fill,
with the per-build caches of names and port labels a big plan asks for again and again;
the small lookups (optics, cable types, rack slots) are here too, so ``build.py`` holds
only the wiring rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabric_stack.compat.slot_records import positional_maker
from fabric_stack.naming.devices import core_name, switch_port_label
from fabric_stack.sizing.size import SizingPlan
from fabric_stack.sizing.tiers import leaf_uplink_port
from fabric_stack.topology.model import SERVERS_PER_RACK, Device, Link, Nic

new_link = positional_maker(Link)
"""``Link`` from all 18 fields, positionally: ~0.3 µs instead of ~1.5 µs, which is over a
second for the ~900k cables of a 131,072-GPU, four-plane plan (#43)."""

new_nic = positional_maker(Nic)
"""``Nic`` from all its fields, positionally (one per server rail and plane: ~500k, #43)."""

new_device = positional_maker(Device)
"""``Device`` from all 13 fields, positionally (servers and leaves, by the ten thousand)."""


def optic(speed: int, per_cage: int, reach: str, twin: bool) -> str:
    """The optic of a port: ``OSFP 400G SR``, a twin-port module, or RJ45 at 1 Gb/s."""
    if speed <= 1:
        return "RJ45 (no optic)"
    if twin and per_cage == 4:
        # Four logical ports per cage are a twin-port 2×(2·speed) module on 1:2 splitter fibres.
        return f"OSFP 2×{2 * speed}G {reach} twin-port (1:2 split)"
    if twin and per_cage > 1:
        return f"OSFP {per_cage}×{speed}G {reach} twin-port"
    return f"OSFP {speed}G {reach}"


CABLES = {
    "mmf": "MPO-12/APC OM4 multimode fiber",
    "smf": "MPO-12/APC OS2 single-mode fiber",
    "copper": "Cat6 RJ45 patch cord",
}
"""The cable type of each planned medium (the BOM's cable lines)."""


def cable_type(medium: str) -> str:
    """The cable of a medium (``mmf``, ``smf``, ``copper``)."""
    return CABLES[medium]


def rack_slot(su: int, idx: int, per_rack: int = SERVERS_PER_RACK) -> tuple[str, int]:
    """Rack and 0-based slot of server ``idx`` (1-based) of SU ``su``."""
    r, slot = divmod(idx - 1, per_rack)
    return f"su{su}-rack{r + 1:02d}", slot


@dataclass
class Build:
    """What the steps of :func:`build_topology` share: the plan and the lists they fill."""

    plan: SizingPlan
    devices: list[Device] = field(default_factory=list)
    nics: list[Nic] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    node_names: list[list[str]] = field(default_factory=list)
    """Server names per SU (index ``su - 1``)."""
    leaf_names: dict[tuple[int, int, int, int], str] = field(default_factory=dict)
    """Leaf name by (plane, SU, rail, leaf of the rail)."""
    carriers: dict[str, list[str]] = field(default_factory=dict)
    """Switch names per network that has switches (compute and dedicated access networks)."""
    access_top: dict[int, int] = field(default_factory=dict)
    """Per SU, the lowest RU taken so far by access switches stacked down from U39 (every
    carrier network's switches share the SU's network rack, so they must not overlap)."""

    cores: dict[int, list[list[str]]] = field(default_factory=dict)
    """Core names per plane, made by :meth:`core_names`."""
    uplinks: list[tuple[int, str]] | None = None
    """Leaf uplink ports, made once by :meth:`leaf_uplinks` (#43: every leaf wires them)."""
    labels: dict[int, str] = field(default_factory=dict)
    """Port labels computed so far, by logical port (a 32k-GPU plan asks ~230k times)."""
    tier_labels: dict[tuple[str, int, int], str] = field(default_factory=dict)
    """Port labels of the other tier layouts, by (OS family, ports per cage, number)."""
    role_labels: dict[tuple[str, int], str] = field(default_factory=dict)
    """Port labels by (tier, number): ~400k asks at 131k GPUs, a few hundred labels."""

    def label(self, n: int) -> str:
        """Port label of logical port ``n`` on the compute switch model."""
        got = self.labels.get(n)
        if got is None:
            plan = self.plan
            got = switch_port_label(plan.switch_model.os_family, n, plan.ports_per_cage)
            self.labels[n] = got
        return got

    def label_at(self, family: str, ports_per_cage: int, n: int) -> str:
        """Port label of logical port ``n`` in a layout of ``ports_per_cage`` (a spine, a
        core, or a mixed leaf's uplink cages); the leaf's own layout is :meth:`label`."""
        plan = self.plan
        if family == plan.switch_model.os_family and ports_per_cage == plan.ports_per_cage:
            return self.label(n)
        key = (family, ports_per_cage, n)
        got = self.tier_labels.get(key)
        if got is None:
            got = self.tier_labels[key] = switch_port_label(family, n, ports_per_cage)
        return got

    def tier_label(self, role: str, n: int) -> str:
        """Port label of logical port ``n`` on a switch of tier ``role``."""
        got = self.role_labels.get((role, n))
        if got is None:
            plan = self.plan
            family, ppc = plan.tier_model(role).os_family, plan.tier_ports_per_cage(role)
            got = self.role_labels[(role, n)] = self.label_at(family, ppc, n)
        return got

    def tier_labels_to(self, role: str, last: int) -> list[str]:
        """Port labels of a switch of tier ``role`` by logical port, ``0`` … ``last`` (port 0
        has none): a list index instead of a call per cable (~260k asks at 131k GPUs, #43)."""
        return [""] + [self.tier_label(role, n) for n in range(1, last + 1)]

    def leaf_uplinks(self) -> list[tuple[int, str]]:
        """Leaf uplink *u*: (port number, port label), the same on every leaf (a mixed
        leaf's uplinks fill cages of their own:
        :func:`~fabric_stack.sizing.tiers.leaf_uplink_port`)."""
        if self.uplinks is None:
            plan = self.plan
            mixed, up_ppc = plan.mixed_leaf, plan.leaf_up_ports_per_cage
            family = plan.switch_model.os_family
            self.uplinks = []
            for u in range(plan.leaf_up):
                number, at = leaf_uplink_port(plan.leaf_down, plan.ports_per_cage, up_ppc, mixed, u)
                label = self.label_at(family, up_ppc, at) if mixed else self.label(at)
                self.uplinks.append((number, label))
        return self.uplinks

    def core_names(self, p: int) -> list[list[str]]:
        """Core names of plane ``p`` by (group, member), both 0-based (every pod's spines
        reach the same cores, so they are named once per plane)."""
        got = self.cores.get(p)
        if got is None:
            plan = self.plan
            G = plan.cores_per_group
            got = [
                [core_name(g, m, plan.core_groups, G, p, plan.planes) for m in range(1, G + 1)]
                for g in range(1, plan.core_groups + 1)
            ]
            self.cores[p] = got
        return got

    def compute_optic(self, reach: str, role: str = "leaf") -> str:
        """The optic of a compute switch port of tier ``role`` toward the tier below
        (``SR`` multimode, ``DR`` single-mode)."""
        plan = self.plan
        return optic(plan.tier_speed(role), plan.tier_ports_per_cage(role), reach, True)

    def leaf_uplink_optic(self, reach: str) -> str:
        """The optic of a leaf's uplink cage (at the uplink speed on a mixed leaf)."""
        plan = self.plan
        if not plan.mixed_leaf:
            return self.compute_optic(reach)
        return optic(plan.uplink_gbps, plan.leaf_up_ports_per_cage, reach, True)
