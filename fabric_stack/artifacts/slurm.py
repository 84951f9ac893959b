"""`render slurm`: Slurm's network topology from the plan (tree and block).

* ``slurm/topology.conf`` — ``TopologyPlugin=topology/tree`` (every Slurm release since
  2.0; loaded by a real slurmctld 22.05 in tests/integration/slurm/). One ``SwitchName``
  per SU (level 0, standing for the SU's rail leaves), per spine and per core; see
  :mod:`fabric_stack.topology.scheduler` for why the SU, not each rail leaf, is the lowest
  level.
* ``slurm/topology-block.conf`` — ``TopologyPlugin=topology/block`` (Slurm 23.11 to 24.11
  read blocks from topology.conf: ``BlockName=`` lines and ``BlockSizes=``); rename it to
  topology.conf on such a controller.
* ``slurm/topology.yaml`` — Slurm's YAML topology file (man page topology.yaml(5), first in
  Slurm 25.05, UNVERIFIED against release notes): the same tree and blocks as two named
  topologies, the tree the cluster default, the block topology for partitions that name it
  (``Topology=blocks``). Slurm reads topology.yaml first and then ignores topology.conf.

Blocks are the SUs, or the NVL72 racks of a ``gb200-nvl72-tray`` plan. Debian 12's Slurm
(22.05) has no topology/block, so the block files are checked against Slurm's documented
grammar, not a running controller (tests/unit/test_artifacts_slurm.py).

Every name is the site's host name where a names file or naming templates rename the
servers and switches (the topology is renamed once, in the pipeline).
"""

from __future__ import annotations

from typing import Any

import yaml

from fabric_stack.artifacts._base import (
    DISCOVERED_BY,
    GENERATED_BY,
    Artifact,
    RenderContext,
    comment_block,
)
from fabric_stack.text.hostlist import compress
from fabric_stack.topology.scheduler import SchedulerView, TreeSwitch, scheduler_view

TARGET = "slurm"

TOPOLOGY_CONF = "https://slurm.schedmd.com/topology.conf.html"
TOPOLOGY_YAML = "https://slurm.schedmd.com/topology.yaml.html"
TOPOLOGY_GUIDE = "https://slurm.schedmd.com/topology.html"

TREE_NAME = "tree"
"""The tree's topology name in topology.yaml (the cluster default)."""

BLOCK_NAME = "blocks"
"""The block topology's name in topology.yaml (``PartitionName=… Topology=blocks``)."""

FILES = ("slurm/topology.conf", "slurm/topology-block.conf", "slurm/topology.yaml")


def _abstraction(view: SchedulerView) -> list[str]:
    """Why the tree has the SU, not each rail leaf, at its lowest level."""
    tiers = {2: "SU -> spine", 3: "SU -> spine -> core"}[view.tiers]
    return [
        "",
        f"Abstraction: Slurm tree levels {tiers}. This fabric is rail-optimized: each SU has",
        f"{view.rails * view.planes} leaf switch(es), one per rail"
        + (" per plane" if view.planes > 1 else "")
        + ", and every server of the SU is cabled to every one of them, so two servers of",
        "one SU are one switch hop apart on every rail. Slurm's tree wants each node under one",
        "lowest-level switch (slurmctld logs 'Multiple leaf switches contain nodes' when rail",
        "leaves with the same servers are listed), so the lowest level is the SU: one",
        "SwitchName per SU standing for its rail leaves (named in the comment above it). A job",
        "inside one SU is then Slurm's lowest level (one hop); across SUs it is the spine level",
        "(three hops)" + (", across pods the core level (five hops)." if view.tiers == 3 else "."),
        "Fabric-manager hosts (UFM/OpenSM) are not Slurm nodes and are left out.",
        "",
    ]


def _switch_line(sw: TreeSwitch, link_gbps: int) -> str:
    """One ``SwitchName`` line (``LinkSpeed`` only when the speed is known)."""
    kids = f"Nodes={compress(sw.nodes)}" if sw.level == 0 else f"Switches={compress(sw.switches)}"
    speed = f" LinkSpeed={link_gbps}" if link_gbps else ""
    return f"SwitchName={sw.name} {kids}{speed}\n"


def _span(names: tuple[str, ...]) -> str:
    """``a, b`` or ``first .. last`` for a long list."""
    return ", ".join(names) if len(names) <= 2 else f"{names[0]} .. {names[-1]}"


def _switch_comment(sw: TreeSwitch, view: SchedulerView) -> str:
    if sw.role == "su":
        what = (
            f"SU {sw.su}: {len(sw.nodes)} servers x {view.rails * view.planes} rail leaves "
            f"({_span(sw.members)}), {sw.links} server-leaf cables"
        )
    else:
        plane = f", plane {sw.plane}" if view.planes > 1 and sw.plane else ""
        under = "leaf-spine" if sw.role == "spine" else "spine-core"
        what = f"{sw.role} {sw.name}{plane}: {sw.links} {under} cables from {compress(sw.switches)}"
    return f"# {what}\n"


def render_tree(ctx: RenderContext, view: SchedulerView) -> str:
    """``topology.conf`` for topology/tree."""
    head = comment_block(
        [
            f"Slurm network topology of {view.cluster} (topology/tree).",
            GENERATED_BY.format(target=TARGET),
            "Use: TopologyPlugin=topology/tree in slurm.conf; this file next to slurm.conf.",
            "Node names are the servers' host names; they must match slurm.conf NodeName.",
            *_abstraction(view),
            f"LinkSpeed is the plan's link speed in Gb/s ({view.link_gbps}); Slurm does not use",
            "it ('this information is currently not used', topology.conf(5)).",
            "",
            f"Format: {TOPOLOGY_CONF}",
            f"Source: {TOPOLOGY_GUIDE}",
        ]
    )
    body = []
    for sw in view.switches:
        body.append(_switch_comment(sw, view) + _switch_line(sw, view.link_gbps))
    return head + "\n" + "".join(body)


def _block_notes(view: SchedulerView) -> list[str]:
    unit = (
        "NVL72 racks (18 compute trays each: one NVLink domain; trays grouped 18 at a time in "
        "plan order, UNVERIFIED against the site's racks)"
        if view.block_kind == "nvl72"
        else "SUs (a job inside one SU keeps every rail one leaf hop away)"
    )
    sizes = ",".join(str(s) for s in view.block_sizes)
    return [
        "",
        f"Blocks are the {unit}. BlockSizes={sizes}: the base is the smallest block's node",
        "count (Slurm: 'Each block must have at least the planning base block size count of",
        "nodes'); each further size is a power of two times the one before, for aggregates of",
        "contiguous blocks inside one pod.",
        "",
    ]


def render_block_conf(ctx: RenderContext, view: SchedulerView) -> str:
    """``topology-block.conf``: BlockName lines and BlockSizes (Slurm 23.11-24.11)."""
    head = comment_block(
        [
            f"Slurm block topology of {view.cluster} (topology/block).",
            GENERATED_BY.format(target=TARGET),
            "Use: Slurm 23.11 to 24.11, TopologyPlugin=topology/block; install as topology.conf",
            "next to slurm.conf. Slurm 25.05 and later: use topology.yaml instead. Debian 12's",
            "Slurm (22.05) has no topology/block.",
            *_block_notes(view),
            f"Format: {TOPOLOGY_CONF}",
        ]
    )
    return head + "\n" + block_lines(view)


def block_lines(view: SchedulerView) -> str:
    """The ``BlockName`` lines and ``BlockSizes`` of topology/block (topology.conf(5))."""
    lines = [f"BlockName={b.name} Nodes={compress(b.nodes)}\n" for b in view.blocks]
    sizes = ",".join(str(s) for s in view.block_sizes)
    return "".join(lines) + f"BlockSizes={sizes}\n"


def topology_yaml_data(view: SchedulerView) -> list[dict[str, Any]]:
    """topology.yaml's list: the tree (cluster default) and the blocks (when there are)."""
    switches: list[dict[str, Any]] = []
    for sw in view.switches:
        entry: dict[str, Any] = {"switch": sw.name}
        if sw.level == 0:
            entry["nodes"] = compress(sw.nodes)
        else:
            entry["children"] = compress(sw.switches)
        switches.append(entry)
    out: list[dict[str, Any]] = [
        {"topology": TREE_NAME, "cluster_default": True, "tree": {"switches": switches}}
    ]
    if view.blocks:
        blocks = [{"block": b.name, "nodes": compress(b.nodes)} for b in view.blocks]
        block = {"block_sizes": list(view.block_sizes), "blocks": blocks}
        out.append({"topology": BLOCK_NAME, "cluster_default": False, "block": block})
    return out


def render_yaml(ctx: RenderContext, view: SchedulerView) -> str:
    """``topology.yaml``: both topologies (Slurm 25.05+)."""
    head = comment_block(
        [
            f"Slurm topologies of {view.cluster}: '{TREE_NAME}' (topology/tree, the cluster "
            f"default) and '{BLOCK_NAME}' (topology/block).",
            GENERATED_BY.format(target=TARGET),
            "Use: Slurm 25.05 and later, next to slurm.conf (Slurm then ignores topology.conf);",
            f"PartitionName=... Topology={BLOCK_NAME} schedules a partition by blocks.",
            *_abstraction(view),
            *_block_notes(view),
            f"Format: {TOPOLOGY_YAML}",
        ]
    )
    body = yaml.safe_dump(topology_yaml_data(view), sort_keys=False, default_flow_style=False)
    return head + "\n" + body


def files(ctx: RenderContext) -> list[str]:
    """The paths :func:`render` writes."""
    return list(FILES)


def render(ctx: RenderContext) -> list[Artifact]:
    """topology.conf (tree), topology-block.conf (blocks, 23.11-24.11), topology.yaml."""
    view = scheduler_view(ctx.topo)
    texts = (render_tree(ctx, view), render_block_conf(ctx, view), render_yaml(ctx, view))
    return [Artifact(TARGET, path, text) for path, text in zip(FILES, texts, strict=True)]


NO_BLOCKS = (
    "no block topology written: an ibnetdiscover dump does not show NVLink domains "
    "(name them with --nvlink-domains FILE)"
)
"""Why a dump alone gives no topology/block (said on stderr and in topology.yaml)."""


def _discovered_notes(view: SchedulerView) -> list[str]:
    """How the tree was read from the wiring, and what did not go in it."""
    return [
        "Read from the wiring, as NVIDIA Topograph and site scripts do from ibnetdiscover",
        "(https://github.com/NVIDIA/topograph): hosts under the leaf they are cabled to",
        "(leaves sharing most hosts, one SU's rail leaves, are one switch: Slurm wants one",
        "lowest-level switch per node), leaves under the switches above them. Host names",
        "are the NodeDesc's (or the node-name map's), lower case; a host neither names",
        "keeps the dump's node id (H-<guid>): name it in slurm.conf or give --node-name-map.",
        *(x for n in view.notes for x in ("", f"Note: {n}")),
    ]


def _domain_notes(view: SchedulerView) -> list[str]:
    """Where the blocks come from (the dump has no NVLink domains), or why there are none."""
    if not view.blocks:
        return ["", f"No blocks: {NO_BLOCKS}."]
    return [
        "",
        f"Blocks are the {len(view.blocks)} NVLink domains named by --nvlink-domains (the",
        "dump does not show NVLink), each with the hosts of the dump it names. The base block",
        f"size is {view.block_sizes[0]}, the smallest block's node count (Slurm: 'Each block",
        "must have at least the planning base block size count of nodes').",
    ]


def _discovered_tree_conf(view: SchedulerView, max_line: int) -> str:
    """``topology.conf`` (topology/tree) of a fabric read from a dump."""
    head = comment_block(
        [
            f"Slurm network topology of the fabric in {view.origin} (topology/tree).",
            DISCOVERED_BY.format(target=TARGET),
            "Use: TopologyPlugin=topology/tree in slurm.conf; this file next to slurm.conf.",
            *_discovered_notes(view),
            "",
            f"Format: {TOPOLOGY_CONF}",
        ]
    )
    body = []
    for sw in view.switches:
        if sw.level == 0:
            what = f"{len(sw.nodes)} host(s), {sw.links} host cable(s)"
            if len(sw.members) > 1:
                what += f" on leaves {_span(sw.members)}"
        else:
            what = f"level {sw.level}: {sw.links} cable(s) from {compress(sw.switches)}"
        line = _switch_line(sw, view.link_gbps)
        if len(line) > max_line:
            # topology.conf(5) (Slurm 2.0): 'The size of each line in the file is limited to
            # 1024 characters' (later releases lifted it, UNVERIFIED which): refuse, do not cut.
            raise ValueError(f"SwitchName={sw.name}: line of {len(line)} characters")
        body.append(f"# {sw.name}: {what}\n{line}")
    return head + "\n" + "".join(body)


def _discovered_block_conf(view: SchedulerView) -> str:
    """``topology-block.conf`` of a dump's hosts in the site's NVLink domains."""
    head = comment_block(
        [
            f"Slurm block topology of the fabric in {view.origin} (topology/block).",
            DISCOVERED_BY.format(target=TARGET),
            "Use: Slurm 23.11 to 24.11, TopologyPlugin=topology/block; install as topology.conf",
            "next to slurm.conf. Slurm 25.05 and later: use topology.yaml instead. UNVERIFIED",
            "on a running controller (Debian 12's Slurm 22.05 has no topology/block): checked",
            "against topology.conf(5)'s grammar.",
            *_domain_notes(view),
            "",
            f"Format: {TOPOLOGY_CONF}",
        ]
    )
    return head + "\n" + block_lines(view)


def _discovered_yaml(view: SchedulerView) -> str:
    """``topology.yaml`` (Slurm 25.05+) of a dump: the tree, and the blocks if named."""
    blocks = f" and '{BLOCK_NAME}' (topology/block)" if view.blocks else ""
    head = comment_block(
        [
            f"Slurm topologies of the fabric in {view.origin}: '{TREE_NAME}' (topology/tree,",
            f"the cluster default){blocks}.",
            DISCOVERED_BY.format(target=TARGET),
            "Use: Slurm 25.05 and later, next to slurm.conf (Slurm then ignores topology.conf).",
            "UNVERIFIED on a running controller (Debian 12's Slurm 22.05 has no topology.yaml):",
            "checked against topology.yaml(5)'s grammar.",
            *_discovered_notes(view),
            *_domain_notes(view),
            "",
            f"Format: {TOPOLOGY_YAML}",
        ]
    )
    body = yaml.safe_dump(topology_yaml_data(view), sort_keys=False, default_flow_style=False)
    return head + "\n" + body


def render_discovered(view: SchedulerView, max_line: int = 1000) -> list[Artifact]:
    """topology.conf (tree), topology.yaml and, when NVLink domains were named, the block
    topology of a fabric read from ``ibnetdiscover``
    (:func:`~fabric_stack.drift.discovered_view.discovered_view`): no plan, the wiring only.
    ``ValueError`` when a line would pass ``max_line`` characters."""
    out = [Artifact(TARGET, FILES[0], _discovered_tree_conf(view, max_line))]
    if view.blocks:
        out.append(Artifact(TARGET, FILES[1], _discovered_block_conf(view)))
    out.append(Artifact(TARGET, FILES[2], _discovered_yaml(view)))
    return out
