"""The job scheduler's view of a built topology: Slurm's switch tree, its blocks, node labels.

:func:`scheduler_view` reads the plan's link list (never a formula of its own) and returns
what a scheduler needs to place jobs on the fabric's hops:

* **The tree** (Slurm ``topology/tree``). A rail-optimized SU has one leaf per rail, and
  every server of the SU is cabled to every one of them, so the R rail leaves of an SU
  reach exactly the same servers: two servers of one SU are one switch hop apart on every
  rail, whichever rail a flow takes. Slurm's tree wants each node under *one* lowest-level
  switch: given R leaves with the same ``Nodes=``, slurmctld logs "error: WARNING: Multiple
  leaf switches contain nodes" (seen with Debian's slurmctld 22.05.8, see
  tests/integration/slurm/). So the tree's lowest level (level 0) is the **SU**, one
  switch named ``su<N>`` standing for its rail leaves (named in the file), with the SU's
  servers as ``Nodes=``; level 1 is each spine, with the SUs it is cabled to as
  ``Switches=``; level 2 (three tiers) each core, with its spines. A job inside one SU is
  then one hop (Slurm's lowest level), across SUs of a pod three (spine), across pods
  five (core), as on the fabric.
* **Blocks** (Slurm ``topology/block``): one block per SU, or per NVL72 rack of 18
  compute trays for the ``gb200-nvl72-tray`` profile (the NVLink domain is the unit a job
  wants whole there), with the block sizes Slurm's grammar allows.
* **Per-server placement**: SU, pod, rack, the leaf of every (plane, rail), the spine
  group, the NVLink domain; :mod:`fabric_stack.topology.scheduler_labels` turns it into
  Kubernetes node labels.

Only GPU servers are scheduler nodes: the fabric-manager hosts (UFM, OpenSM) cabled to the
same leaves are not, and their cables are not counted in the tree's links.

Sources: https://slurm.schedmd.com/topology.conf.html (topology/tree: SwitchName, Nodes,
Switches, LinkSpeed; topology/block: BlockName, BlockSizes);
https://slurm.schedmd.com/topology.html (the topology guide: the lowest-level switch that
fits a job is preferred).
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric_stack.topology.model import Device, FabricTopology

NVL72_PROFILE = "gb200-nvl72-tray"
"""The node profile whose servers are compute trays of an NVL72 rack (the NVLink domain)."""

NVL72_TRAYS = 18
"""Compute trays per GB200 NVL72 rack: 72 GPUs in 18 trays of 4 (the profile's 4 GPUs per
tray; 18 trays per rack from third-party descriptions, e.g. setloop.io "GB200 NVL72
architecture": "72 Blackwell GPUs across 18 compute trays"; NVIDIA's own datasheet not
read: UNVERIFIED there). The plan does not model the rack, so trays are grouped 18 at a
time in plan order: UNVERIFIED against the site's racking."""


@dataclass(frozen=True, slots=True)
class TreeSwitch:
    """One ``SwitchName`` line of Slurm's tree: what it stands for and what is under it."""

    name: str
    """Slurm's switch name: ``su<N>`` for an SU, the plan's (site's) name for a spine/core."""
    level: int
    """Slurm's level: 0 the SU, 1 a spine, 2 a core (what ``scontrol show topology`` prints)."""
    role: str
    """``su``, ``spine`` or ``core``."""
    nodes: tuple[str, ...]
    """Servers under it (level 0: its ``Nodes=``; above: the union Slurm computes)."""
    switches: tuple[str, ...]
    """Child switches (``Switches=``), empty at level 0."""
    members: tuple[str, ...]
    """The fabric switches it stands for: an SU's rail leaves; a spine or core itself."""
    links: int
    """Planned cables from its children into it: server-to-leaf cables into an SU's leaves,
    leaf-to-spine cables into a spine, spine-to-core cables into a core."""
    su: int = 0
    pod: int = 0
    plane: int = 0


@dataclass(frozen=True, slots=True)
class Block:
    """One Slurm block (``BlockName``): an SU, or an NVL72 rack."""

    name: str
    nodes: tuple[str, ...]
    kind: str
    """``su`` or ``nvl72``."""


@dataclass(frozen=True, slots=True)
class ServerPlace:
    """Where one GPU server sits, as a scheduler labels it."""

    name: str
    """Host name (the site's name when renamed): the Slurm node and Kubernetes node name."""
    su: int
    pod: int
    rack: str
    leaves: tuple[tuple[int, int, str], ...]
    """(plane, rail, leaf) of each of its compute cables, plane then rail order."""
    block: str
    """Its block's name (the SU's, or its NVL72 rack's)."""
    nvlink_domain: str = ""
    """Its NVL72 rack (``nvl72-01``), empty for other profiles (the server is the domain)."""
    tree: tuple[str, ...] = ()
    """Its place in the tree, lowest level first, as Topograph labels it (leaf, spine, core
    values): ``("su1", "pod1")`` from a plan; the discovered switch (group) names from a
    dump (:mod:`fabric_stack.drift.discovered_view`)."""


@dataclass(frozen=True, slots=True)
class SchedulerView:
    """The scheduler's view of the plan (see the module docstring)."""

    cluster: str
    tiers: int
    planes: int
    rails: int
    link_gbps: int
    switches: tuple[TreeSwitch, ...]
    """SUs first, then spines, then cores, each in plan order."""
    blocks: tuple[Block, ...]
    block_sizes: tuple[int, ...]
    """Slurm's ``BlockSizes``: the base (the smallest block's node count), then larger
    aggregates of 2^k contiguous blocks where the fabric has a level for them (pods)."""
    block_kind: str
    servers: tuple[ServerPlace, ...]
    origin: str = ""
    """Empty for a plan; the dump's path for a fabric read from ``ibnetdiscover``."""
    notes: tuple[str, ...] = ()
    """What could not go in the view, and why (a dump's view; a plan has none)."""

    def switch(self, name: str) -> TreeSwitch:
        """A tree switch by name."""
        return next(s for s in self.switches if s.name == name)

    def server(self, name: str) -> ServerPlace:
        """A server's placement by host name."""
        return next(p for p in self.servers if p.name == name)


CORE_VALUE = "core"
"""A plan's one core-level value: every pod shares the cluster's core layer."""


def su_switch_name(su: int) -> str:
    """Slurm's switch name of an SU (also its label value and its block's name)."""
    return f"su{su}"


def pod_name(pod: int) -> str:
    """The label value of a pod's spine group (a two-tier fabric is one pod, ``pod1``)."""
    return f"pod{pod}"


def _pod_of(topo: FabricTopology, su: int) -> int:
    plan = topo.plan
    return (su - 1) // plan.sus_per_pod + 1 if plan.tiers == 3 and plan.sus_per_pod else 1


@dataclass
class _Walk:
    """What one pass over the compute links collects (the order of first sight is kept)."""

    su_nodes: dict[int, list[str]]
    su_leaves: dict[int, list[str]]
    su_links: dict[int, int]
    server_leaves: dict[str, list[tuple[int, int, str]]]
    up: dict[str, dict[str, int]]
    """Spine or core → child (SU switch or spine) → cables."""


def _walk(topo: FabricTopology) -> _Walk:
    """One pass over the compute links: SU members and servers, each upper switch's children."""
    leaf_su: dict[str, int] = {d.name: d.su for d in topo.switches("leaf")}
    w = _Walk({}, {}, {}, {}, {})
    for link in topo.links_of("node_leaf", "leaf_spine", "spine_core"):
        if link.role == "node_leaf":
            su = leaf_su[link.b_device]
            nodes = w.su_nodes.setdefault(su, [])
            if link.a_device not in w.server_leaves:
                nodes.append(link.a_device)
            leaves = w.su_leaves.setdefault(su, [])
            if link.b_device not in leaves:
                leaves.append(link.b_device)
            w.su_links[su] = w.su_links.get(su, 0) + 1
            w.server_leaves.setdefault(link.a_device, []).append(
                (link.plane, link.rail, link.b_device)
            )
        elif link.role == "leaf_spine":
            child = su_switch_name(leaf_su[link.a_device])
            kids = w.up.setdefault(link.b_device, {})
            kids[child] = kids.get(child, 0) + 1
        else:
            kids = w.up.setdefault(link.b_device, {})
            kids[link.a_device] = kids.get(link.a_device, 0) + 1
    return w


def _tree(topo: FabricTopology, w: _Walk) -> list[TreeSwitch]:
    """SU switches (level 0), spines (1), cores (2), children and cable counts from ``w``."""
    out: list[TreeSwitch] = []
    nodes_of: dict[str, tuple[str, ...]] = {}
    for su in sorted(w.su_nodes):
        name = su_switch_name(su)
        nodes_of[name] = tuple(w.su_nodes[su])
        out.append(
            TreeSwitch(
                name,
                0,
                "su",
                nodes_of[name],
                (),
                tuple(w.su_leaves[su]),
                w.su_links[su],
                su=su,
                pod=_pod_of(topo, su),
            )
        )
    for level, role in ((1, "spine"), (2, "core")):
        for dev in topo.switches(role):
            kids = w.up.get(dev.name, {})
            nodes = tuple(n for k in kids for n in nodes_of.get(k, ()))
            nodes_of[dev.name] = nodes
            out.append(
                TreeSwitch(
                    dev.name,
                    level,
                    role,
                    nodes,
                    tuple(kids),
                    (dev.name,),
                    sum(kids.values()),
                    pod=dev.pod or (1 if role == "spine" else 0),
                    plane=dev.plane,
                )
            )
    return out


def _nvl72_racks(servers: list[Device]) -> dict[str, str]:
    """Server → its NVL72 rack (``nvl72-01``): 18 trays at a time in plan order."""
    width = max(2, len(str((len(servers) + NVL72_TRAYS - 1) // NVL72_TRAYS)))
    return {s.name: f"nvl72-{i // NVL72_TRAYS + 1:0{width}d}" for i, s in enumerate(servers)}


def _block_sizes(topo: FabricTopology, blocks: list[Block], kind: str) -> tuple[int, ...]:
    """Base block size, then 2^k aggregates while 2^k SUs still fit in one pod (three tiers).

    Slurm's grammar: "Each block must have at least the planning base block size count of
    nodes. Successive BlockSizes must be a power of two larger than the prior values."
    """
    if not blocks:
        return ()
    base = min(len(b.nodes) for b in blocks)
    sizes = [base]
    plan = topo.plan
    if kind == "su" and plan.tiers == 3:
        k = 2
        while k <= min(plan.sus_per_pod, len(blocks)):
            sizes.append(base * k)
            k *= 2
    return tuple(sizes)


def _tree_path(tiers: int, su: int, pod: int) -> tuple[str, ...]:
    """A plan server's leaf, spine (and core) values: its SU, its pod's spine group, the
    core layer (three tiers only)."""
    path = (su_switch_name(su), pod_name(pod))
    return (*path, CORE_VALUE) if tiers == 3 else path


def scheduler_view(topo: FabricTopology) -> SchedulerView:
    """The scheduler's view of ``topo`` (module docstring). Pure: one pass over its links."""
    plan = topo.plan
    w = _walk(topo)
    servers = [d for d in topo.devices if d.role == "server" and d.name in w.server_leaves]
    nvl72 = plan.spec.node_profile.name == NVL72_PROFILE
    racks = _nvl72_racks(servers) if nvl72 else {}
    places = tuple(
        ServerPlace(
            s.name,
            s.su,
            _pod_of(topo, s.su),
            s.rack,
            tuple(sorted(w.server_leaves[s.name])),
            racks.get(s.name, su_switch_name(s.su)),
            racks.get(s.name, ""),
            _tree_path(plan.tiers, s.su, _pod_of(topo, s.su)),
        )
        for s in servers
    )
    if nvl72:
        groups: dict[str, list[str]] = {}
        for p in places:
            groups.setdefault(p.block, []).append(p.name)
        blocks = [Block(n, tuple(m), "nvl72") for n, m in groups.items()]
    else:
        blocks = [
            Block(su_switch_name(su), tuple(w.su_nodes[su]), "su") for su in sorted(w.su_nodes)
        ]
    kind = "nvl72" if nvl72 else "su"
    return SchedulerView(
        cluster=plan.spec.name,
        tiers=plan.tiers,
        planes=plan.planes,
        rails=plan.rails,
        link_gbps=plan.link_gbps,
        switches=tuple(_tree(topo, w)),
        blocks=tuple(blocks),
        block_sizes=_block_sizes(topo, blocks, kind),
        block_kind=kind,
        servers=places,
    )


__all__ = [
    "CORE_VALUE",
    "NVL72_PROFILE",
    "NVL72_TRAYS",
    "Block",
    "SchedulerView",
    "ServerPlace",
    "TreeSwitch",
    "pod_name",
    "scheduler_view",
    "su_switch_name",
]
