"""A discovered tree as the scheduler view the plan's renderers serialize.

:func:`discovered_view` turns :class:`~fabric_stack.drift.discovered.DiscoveredTree` (the
tree of an ``ibnetdiscover`` dump) into the same
:class:`~fabric_stack.topology.scheduler.SchedulerView` that ``render slurm`` and
``render k8s-topology`` write from a plan, so one serializer writes topology.conf,
topology.yaml, the block topology, the node labels and the Kueue Topology of both.

What a dump cannot say is left empty: no SU, pod, rack, plane or rail (the view's
``origin`` is the dump, and the label writer then adds no ``fabric-stack/`` labels);
blocks only from NVLink domains the site names (:mod:`fabric_stack.drift.nvlink_domains`).

Topograph's label values (pkg/engines/k8s/labeler.go and pkg/topology/merger.go, NVIDIA
Topograph v0.5.0, https://github.com/NVIDIA/topograph): a node's ``leaf`` label is the
switch above it, ``spine`` the one above that, ``core`` the next; switches of one level
with the same children are merged into one vertex that keeps the first one's id; a value
longer than 63 characters becomes ``x`` + its 64-bit FNV-1a hash in hex (``checkLabel``).
Here the values are the tree's own switch names (a host group of rail leaves at level 0,
as in topology.conf), switches of one level with the same children are one value, the
first name in natural order (Topograph sorts ids as strings).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from fabric_stack.drift.adopt_roles import natural
from fabric_stack.drift.discovered import DiscoveredTree, TreeNode
from fabric_stack.topology.scheduler import Block, SchedulerView, ServerPlace, TreeSwitch

ROLES = ("leaf", "spine", "core")
"""The view's role of each tree level (level 0 may stand for several rail leaves)."""

BLOCK_KIND = "nvlink"
"""The view's ``block_kind`` for blocks made of NVLink domains the site named."""

_K8S_NODE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
"""A Kubernetes node name: a DNS subdomain (RFC 1123, lower case, at most 253 characters;
kubernetes.io "Object Names and IDs")."""

_FNV_OFFSET, _FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3


def fnv1a64(data: bytes) -> int:
    """The 64-bit FNV-1a hash (Go's ``hash/fnv.New64a``, which Topograph uses)."""
    h = _FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * _FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def topograph_value(name: str) -> str:
    """A label value as Topograph's ``checkLabel`` writes it: as is up to 63 characters,
    else ``x`` + the FNV-1a 64-bit hash of its bytes in hex (Go ``%x``: no padding)."""
    return name if len(name) <= 63 else f"x{fnv1a64(name.encode()):x}"


def _groups(switches: list[TreeNode], level: int) -> dict[str, list[str]]:
    """Child → the level's values above it: switches with the same children are one value
    (named after the first of them)."""
    by_kids: dict[tuple[str, ...], list[str]] = {}
    for sw in switches:
        if sw.level == level:
            by_kids.setdefault(tuple(sorted(sw.switches)), []).append(sw.name)
    above: dict[str, list[str]] = {}
    for kids, names in by_kids.items():
        value = min(names, key=natural)
        for kid in kids:
            above.setdefault(kid, []).append(value)
    return above


def _paths(tree: DiscoveredTree, notes: list[str]) -> dict[str, tuple[str, ...]]:
    """Host → its (leaf, spine, core) values, as far up as the tree goes."""
    path: dict[str, tuple[str, ...]] = {
        sw.name: (sw.name,) for sw in tree.switches if sw.level == 0
    }
    for level in (1, 2):
        above = _groups(tree.switches, level)
        split = 0
        for sw in [s for s in path if len(path[s]) == level]:
            ups = above.get(path[sw][-1], [])  # a group's value is one of its switches
            if ups:
                split += len(ups) > 1
                path[sw] = (*path[sw], min(ups, key=natural))
        if split:
            notes.append(
                f"{split} level-{level - 1} switch(es) are under more than one group of "
                f"level-{level} switches (not every switch cabled to the same ones): "
                "labelled with the first group"
            )
    return {n: path[sw.name] for sw in tree.switches if sw.level == 0 for n in sw.nodes}


def _domains(
    hosts: list[str], domains: dict[str, tuple[str, ...]] | None, notes: list[str]
) -> dict[str, str]:
    """Host → its NVLink domain, for the hosts of the tree the site's domains name."""
    if domains is None:
        return {}
    known = set(hosts)
    where = {h: d for d, members in domains.items() for h in members if h in known}
    absent = sorted({h for m in domains.values() for h in m} - known, key=natural)
    if absent:
        notes.append(
            f"{len(absent)} host(s) of the NVLink domains are not in the dump (not cabled, "
            "or down when it was taken): left out of the blocks: " + _some(absent)
        )
    alone = [h for h in hosts if h not in where]
    if alone:
        notes.append(
            f"{len(alone)} host(s) of the dump are in no NVLink domain: in no block: "
            + _some(alone)
        )
    return where


def _check_nesting(
    members: dict[str, list[str]], paths: dict[str, tuple[str, ...]], notes: list[str]
) -> None:
    """Note each NVLink domain whose hosts sit under more than one leaf (group): Kueue's
    levels put the accelerator domain inside the leaf, as a plan's NVL72 racks are."""
    for domain, hosts in members.items():
        leaves = sorted({paths[h][0] for h in hosts}, key=natural)
        if len(leaves) > 1:
            notes.append(
                f"NVLink domain {domain} spans {len(leaves)} leaves ({_some(leaves)}): "
                "the Kueue levels (accelerator inside leaf) do not nest for it"
            )


def _some(names: list[str]) -> str:
    return ", ".join(names[:5]) + (" …" if len(names) > 5 else "")


def _switches(tree: DiscoveredTree) -> tuple[TreeSwitch, ...]:
    """The tree's switches as the view's, each with the hosts Slurm counts under it."""
    under: dict[str, tuple[str, ...]] = {}
    out = []
    for sw in sorted(tree.switches, key=lambda s: s.level):
        nodes = sw.nodes or tuple(n for k in sw.switches for n in under.get(k, ()))
        under[sw.name] = tuple(dict.fromkeys(nodes))
        role = ROLES[min(sw.level, len(ROLES) - 1)]
        out.append(
            TreeSwitch(sw.name, sw.level, role, under[sw.name], sw.switches, sw.members, sw.cables)
        )
    return tuple(out)


def discovered_view(
    tree: DiscoveredTree, domains: dict[str, tuple[str, ...]] | None = None
) -> SchedulerView:
    """The scheduler view of a discovered tree (module docstring); ``domains`` (NVLink
    domain → hosts, as the site names them) gives the blocks and the accelerator label."""
    notes = list(tree.notes)
    paths = _paths(tree, notes)
    hosts = [n for sw in tree.switches if sw.level == 0 for n in sw.nodes]
    domain_of = _domains(hosts, domains, notes)
    members: dict[str, list[str]] = {}
    for h in hosts:
        if h in domain_of:
            members.setdefault(domain_of[h], []).append(h)
    order = list(domains or {})
    _check_nesting(members, paths, notes)
    blocks = tuple(
        Block(d, tuple(sorted(members[d], key=natural)), BLOCK_KIND) for d in order if d in members
    )
    places = tuple(
        ServerPlace(
            h,
            0,
            0,
            "",
            (),
            domain_of.get(h, ""),
            domain_of.get(h, ""),
            tuple(topograph_value(v) for v in paths[h]),
        )
        for h in sorted(hosts, key=natural)
    )
    levels = max((sw.level for sw in tree.switches), default=0) + 1
    return SchedulerView(
        cluster=Path(tree.origin).name or "fabric",
        tiers=levels,
        planes=1,
        rails=1,
        link_gbps=tree.link_gbps or 0,
        switches=_switches(tree),
        blocks=blocks,
        block_sizes=(min(len(b.nodes) for b in blocks),) if blocks else (),
        block_kind=BLOCK_KIND if blocks else "",
        servers=places,
        origin=tree.origin,
        notes=tuple(notes),
    )


def kubernetes_nodes(view: SchedulerView) -> SchedulerView:
    """``view`` with only the hosts whose names can be Kubernetes node names: a host the
    dump does not name keeps ``H-<guid>``, which no node is called (upper case), and
    Topograph, whose node-name pattern a factory NodeDesc does not match, leaves such
    HCAs out as well (pkg/ib/ib.go ``extractNodeName``, v0.5.0)."""
    keep = tuple(p for p in view.servers if len(p.name) <= 253 and _K8S_NODE.match(p.name))
    gone = [p.name for p in view.servers if p not in keep]
    if not gone:
        return view
    note = (
        f"{len(gone)} host(s) have no Kubernetes node name (the dump names none: name them "
        "with --node-name-map): left out: " + _some(gone)
    )
    return replace(view, servers=keep, notes=(*view.notes, note))


__all__ = [
    "BLOCK_KIND",
    "ROLES",
    "discovered_view",
    "fnv1a64",
    "kubernetes_nodes",
    "topograph_value",
]
