"""The scheduler's tree of a fabric nobody planned, read from what the fabric reports.

Sites generate Slurm's ``topology.conf`` from ``ibnetdiscover`` (NVIDIA Topograph,
https://github.com/NVIDIA/topograph, whose test dump is
``../shared/realdata/ibnetdiscover/topograph-ndr-dgx-example.out``; site scripts such as
OleHolmNielsen/Slurm_tools ``slurmibtopology``, jtfrey/ib2slurm, ltaulell/HPC_toolset
``ibmap2slurm``). This is the same tree, from the wiring alone:

* **hosts**: every HCA of a host is one node (the reader names a host by its NodeDesc or
  the node-name map); a host neither names keeps the dump's own node id (``H-<guid>``);
* **level 0**: the leaves (switches hosts are cabled to). Leaves that share most of their
  hosts (the rail leaves of one SU, :func:`~fabric_stack.drift.adopt_roles.host_groups`)
  are one level-0 switch, since Slurm's tree wants each node under one lowest switch
  (slurmctld: 'Multiple leaf switches contain nodes'); a host is listed under the group
  most of its cables reach;
* **level 1 / 2**: switches one / two hops above the leaves, each over the level-below
  switches it is cabled to.

Switches are named by their host name, or by the dump's node id (``S-<guid>``) when their
NodeDesc names none (an unmanaged ``SwitchIB Mellanox Technologies``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from fabric_stack.drift.adopt_roles import host_groups, natural, raw_tiers, wiring
from fabric_stack.drift.identity import is_factory_desc
from fabric_stack.drift.model import Snapshot
from fabric_stack.drift.observation import Observation, observation_from_snapshot
from fabric_stack.naming.site import check_label


@dataclass(frozen=True, slots=True)
class TreeNode:
    """One switch of the discovered tree (a level-0 switch may stand for several leaves)."""

    name: str
    level: int
    nodes: tuple[str, ...] = ()
    switches: tuple[str, ...] = ()
    members: tuple[str, ...] = ()
    """The fabric's switches this one stands for (its leaves at level 0, else itself)."""
    cables: int = 0
    """Cables below it (host cables at level 0, switch cables above)."""


@dataclass
class DiscoveredTree:
    """The tree and what could not go in it, with why."""

    origin: str
    switches: list[TreeNode] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    link_gbps: int | None = None


def _label(obs: Observation, dev: str, prefix: str) -> str:
    """A device's name in the tree: its host name, else the dump's node id (a host of
    several unnamed HCAs: its lowest, whatever order the dump lists them in)."""
    od = obs.devices[dev]
    if (is_factory_desc(dev) or check_label(dev)) and od.guids:
        return f"{prefix}-{min(g.lower().removeprefix('0x') for g in od.guids)}"
    return dev


def discovered_tree(snap: Snapshot) -> DiscoveredTree:
    """The Slurm tree of ``snap`` (an ``ibnetdiscover`` / ``iblinkinfo`` snapshot)."""
    obs = observation_from_snapshot(snap)
    out = DiscoveredTree(snap.origin)
    hosts = {d for d, od in obs.devices.items() if od.kind == "server"}
    adj = wiring(obs.cables)
    tier = raw_tiers(adj, hosts, set())
    leaves = {d for d, t in tier.items() if t == 1}
    groups = host_groups(adj, hosts, leaves)
    by_group: dict[str, list[str]] = {}
    for leaf in sorted(leaves, key=natural):
        by_group.setdefault(groups[leaf], []).append(leaf)
    name_of: dict[str, str] = {}
    level0: dict[str, str] = {}
    """Leaf → the level-0 switch standing for it."""
    for i, (_g, group) in enumerate(sorted(by_group.items(), key=lambda kv: natural(kv[0]))):
        label = _label(obs, group[0], "S") if len(group) == 1 else f"hostgroup{i + 1}"
        for leaf in group:
            level0[leaf] = label
    for dev in tier:
        name_of[dev] = _label(obs, dev, "S")
    host_name = {h: _label(obs, h, "H") for h in hosts}
    under: dict[str, list[str]] = {}
    cables: Counter[str] = Counter()
    split = 0
    for h in sorted(hosts, key=natural):
        where = Counter(level0[p] for _, p, _ in adj.get(h, ()) if p in level0)
        if not where:
            out.notes.append(f"{host_name[h]}: no cable to a switch: left out")
            continue
        top, n = where.most_common(1)[0]
        split += len(where) > 1
        under.setdefault(top, []).append(host_name[h])
        cables[top] += n
    if split:
        out.notes.append(
            f"{split} host(s) are cabled to leaves of more than one host group: each is listed "
            "under the group most of its cables reach (Slurm allows one lowest-level switch "
            "per node)"
        )
    members: dict[str, list[str]] = {}
    for leaf, label in level0.items():
        members.setdefault(label, []).append(name_of[leaf])
    for label in sorted(under, key=natural):
        out.switches.append(
            TreeNode(
                label,
                0,
                nodes=tuple(sorted(under[label], key=natural)),
                members=tuple(members[label]),
                cables=cables[label],
            )
        )
    out.switches += _upper(adj, tier, level0, name_of)
    out.hosts = sorted((n for ns in under.values() for n in ns), key=natural)
    odd = sorted(d for d, od in obs.devices.items() if d not in tier and d not in hosts)
    if odd:
        out.notes.append(
            f"{len(odd)} switch(es) reach no host within three hops (left out): "
            + ", ".join(odd[:5])
            + (" …" if len(odd) > 5 else "")
        )
    rates = Counter(int(lk.speed_gbps) for lk in snap.links if lk.speed_gbps)
    out.link_gbps = rates.most_common(1)[0][0] if rates else None
    return out


def _upper(
    adj: dict[str, list[tuple[str, str, str]]],
    tier: dict[str, int],
    level0: dict[str, str],
    name_of: dict[str, str],
) -> list[TreeNode]:
    """Levels 1 and 2: each switch over the level-below switches it is cabled to."""
    out: list[TreeNode] = []
    present = set(level0.values())
    for t in (2, 3):
        for dev in sorted((d for d, x in tier.items() if x == t), key=natural):
            below: Counter[str] = Counter()
            for _, p, _ in adj.get(dev, ()):
                if tier.get(p) == t - 1:
                    below[level0.get(p, name_of[p]) if t == 2 else name_of[p]] += 1
            kids = tuple(sorted((k for k in below if t > 2 or k in present), key=natural))
            if kids:
                out.append(
                    TreeNode(
                        name_of[dev],
                        t - 1,
                        switches=kids,
                        members=(name_of[dev],),
                        cables=sum(below.values()),
                    )
                )
    return out


__all__ = ["DiscoveredTree", "TreeNode", "discovered_tree"]
