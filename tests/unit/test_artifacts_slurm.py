"""`render slurm`: the tree from the plan's links, the blocks against Slurm's documented grammar.

The tree (topology.conf) is also loaded by a real slurmctld in
tests/integration/slurm/test_slurmctld_topology.py. Debian 12's Slurm (22.05) has no
topology/block (Slurm 23.11+) nor topology.yaml (25.05+), so those two files are checked
here against the grammar of Slurm's man pages (topology.conf(5) "topology/block",
topology.yaml(5); https://slurm.schedmd.com/topology.conf.html,
https://slurm.schedmd.com/topology.yaml.html):

* topology.yaml is a list of topologies; ``topology`` (a unique name) is the first key of
  each, ``cluster_default`` a boolean, and each defines exactly one of ``block``,
  ``flat``, ``tree``;
* a block topology has ``block_sizes`` (each "must be a power of two larger than the prior
  values"; "each block must have at least the planning base block size count of nodes")
  and ``blocks``, each with a unique ``block`` name and its ``nodes``;
* a tree has ``switches``, each with a unique ``switch`` name ("cannot be longer than 64
  characters") and ``children`` (switches) or ``nodes``;
* topology.conf's block lines are ``BlockName=<name> Nodes=<hostlist>`` and one
  ``BlockSizes=<n>[,<n>…]``.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from fabric_stack.artifacts import render_artifacts, slurm
from fabric_stack.text.hostlist import compress, expand
from fabric_stack.topology.scheduler import scheduler_view
from tests.golden_artifacts import context, seed_context

PLANS: dict[str, dict[str, Any]] = {
    "seed": {},
    "4-su": {"gpus": 1024},
    "3-tier": {"switch": "generic-32x400", "gpus": 1024},
    "2-plane": {"planes": 2},
    "nvl72": {"node_profile": "gb200-nvl72-tray", "gpus": 288, "gpus_per_node": 4},
}
"""Plans the tests render: the seed cluster, 4 SUs, three tiers, two planes, GB200 trays."""


def _files(spec: dict[str, Any]) -> dict[str, str]:
    return {a.path: a.content for a in render_artifacts("slurm", context(spec))}


def _conf_lines(text: str) -> list[dict[str, str]]:
    """topology.conf lines as key → value (comments dropped; keys case-insensitive)."""
    out = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        pairs = dict(p.split("=", 1) for p in line.split())
        out.append({k.lower(): v for k, v in pairs.items()})
    return out


def _prose(text: str) -> str:
    """The comment lines as one line of prose (wrapping undone)."""
    return " ".join(ln[2:] for ln in text.splitlines() if ln.startswith("# "))


@given(
    st.lists(st.integers(0, 300), min_size=1, max_size=40, unique=True),
    st.sampled_from(["su1-node", "gpu", "n"]),
    st.integers(0, 3),
)
def test_hostlist_round_trip(numbers: list[int], prefix: str, width: int) -> None:
    names = [f"{prefix}{n:0{width}d}" for n in numbers]
    assert sorted(expand(compress(names))) == sorted(names)


def test_hostlist_refuses_what_slurm_would_not_parse() -> None:
    with pytest.raises(ValueError, match="runs backwards"):
        expand("n[5-1]")
    with pytest.raises(ValueError, match="not a hostlist expression"):
        expand("n[1-2")


@pytest.mark.parametrize("plan", PLANS)
def test_tree_is_the_plan(plan: str) -> None:
    """Every server under exactly one level-0 switch (its SU); spines list the SUs they are
    cabled to, cores their spines; the cable counts add up to the plan's link list."""
    ctx = context(PLANS[plan])
    topo = ctx.topo
    lines = _conf_lines(_files(PLANS[plan])["slurm/topology.conf"])
    by_name = {ln["switchname"]: ln for ln in lines}
    assert len(by_name) == len(lines), "a switch listed twice"
    servers = {d.name: d for d in topo.devices if d.role == "server"}
    seen: dict[str, str] = {}
    for ln in lines:
        if "nodes" in ln:
            for node in expand(ln["nodes"]):
                assert node not in seen, f"{node} under {seen.get(node)} and {ln['switchname']}"
                seen[node] = ln["switchname"]
                assert ln["switchname"] == f"su{servers[node].su}"
    assert set(seen) == set(servers)
    leaf_su = {d.name: d.su for d in topo.switches("leaf")}
    for link in topo.links_of("leaf_spine"):
        assert f"su{leaf_su[link.a_device]}" in expand(by_name[link.b_device]["switches"])
    for link in topo.links_of("spine_core"):
        assert link.a_device in expand(by_name[link.b_device]["switches"])
    view = scheduler_view(topo)
    counts = topo.count_links()
    for role, level in (("node_leaf", 0), ("leaf_spine", 1), ("spine_core", 2)):
        assert sum(s.links for s in view.switches if s.level == level) == counts.get(role, 0)
    assert {ln["linkspeed"] for ln in lines} == {str(topo.plan.link_gbps)}


def test_site_names_are_the_node_names() -> None:
    spec = {"naming": {"server": "gpu-{su}-{index:03d}", "spine": "core-sw-{index}"}}
    text = _files(spec)["slurm/topology.conf"]
    assert "SwitchName=su1 Nodes=gpu-1-[001-016] LinkSpeed=400" in text
    assert "SwitchName=core-sw-1 Switches=su1" in text
    assert "su1-node" not in text


def test_the_file_says_which_abstraction_and_why() -> None:
    text = _prose(_files({})["slurm/topology.conf"])
    assert "Abstraction: Slurm tree levels SU -> spine." in text
    assert "Multiple leaf switches contain nodes" in text
    assert "SU 1: 16 servers x 8 rail leaves (su1-r1-leaf .. su1-r8-leaf)" in text
    three = _prose(_files(PLANS["3-tier"])["slurm/topology.conf"])
    assert "SU -> spine -> core" in three and "across pods the core level" in three


# --------------------------------------------------------------------------- blocks


def check_topology_yaml(data: Any) -> None:
    """topology.yaml(5)'s grammar (module docstring); AssertionError naming what breaks."""
    assert isinstance(data, list) and data, "a list of topologies"
    names = [t.get("topology") for t in data]
    assert len(set(names)) == len(names), f"topology names not unique: {names}"
    for topo in data:
        assert next(iter(topo)) == "topology", "'topology' must be the first attribute"
        assert isinstance(topo.get("cluster_default", False), bool)
        kinds = [k for k in ("block", "flat", "tree") if k in topo]
        assert len(kinds) == 1, f"{topo['topology']}: exactly one of block/flat/tree, {kinds}"
        assert set(topo) <= {"topology", "cluster_default", "block", "flat", "tree"}
        if "block" in topo:
            _check_block(topo["block"])
        if "tree" in topo:
            _check_tree(topo["tree"])
    assert sum(bool(t.get("cluster_default")) for t in data) >= 1


def _check_block(block: dict[str, Any]) -> None:
    assert set(block) <= {"block_sizes", "blocks"}
    sizes = block["block_sizes"]
    assert sizes and all(isinstance(s, int) and s > 0 for s in sizes)
    for lo, hi in pairwise(sizes):
        ratio, rest = divmod(hi, lo)
        assert rest == 0 and ratio > 1 and ratio & (ratio - 1) == 0, f"{hi} after {lo}"
    names: set[str] = set()
    nodes: set[str] = set()
    for b in block["blocks"]:
        assert set(b) <= {"block", "nodes"} and b["block"] not in names
        names.add(b["block"])
        members = expand(b["nodes"])
        assert len(members) >= sizes[0], f"{b['block']}: fewer nodes than the base size"
        assert not nodes & set(members), f"{b['block']}: a node in two blocks"
        nodes |= set(members)


def _check_tree(tree: dict[str, Any]) -> None:
    names = set()
    for sw in tree["switches"]:
        assert set(sw) <= {"switch", "children", "nodes"} and len(sw["switch"]) <= 64
        assert ("children" in sw) != ("nodes" in sw)
        names.add(sw["switch"])
    for sw in tree["switches"]:
        assert set(expand(sw.get("children", ""))) <= names


@pytest.mark.parametrize("plan", PLANS)
def test_topology_yaml_follows_slurms_grammar(plan: str) -> None:
    files = _files(PLANS[plan])
    data = yaml.safe_load(files["slurm/topology.yaml"])
    check_topology_yaml(data)
    tree = {sw["switch"]: sw for sw in data[0]["tree"]["switches"]}
    conf = {ln["switchname"]: ln for ln in _conf_lines(files["slurm/topology.conf"])}
    assert tree.keys() == conf.keys()  # the same tree in both files
    for name, sw in tree.items():
        assert sw.get("nodes") == conf[name].get("nodes")
        assert sw.get("children") == conf[name].get("switches")


@pytest.mark.parametrize("plan", PLANS)
def test_block_conf_follows_slurms_grammar(plan: str) -> None:
    files = _files(PLANS[plan])
    lines = _conf_lines(files["slurm/topology-block.conf"])
    assert all(set(ln) in ({"blockname", "nodes"}, {"blocksizes"}) for ln in lines)
    assert [set(ln) for ln in lines].count({"blocksizes"}) == 1
    sizes = [int(s) for s in lines[-1]["blocksizes"].split(",")]
    blocks = [{"block": ln["blockname"], "nodes": ln["nodes"]} for ln in lines[:-1]]
    _check_block({"block_sizes": sizes, "blocks": blocks})
    yaml_block = yaml.safe_load(files["slurm/topology.yaml"])[1]["block"]
    assert yaml_block == {"block_sizes": sizes, "blocks": blocks}


def test_blocks_are_sus_or_nvl72_racks() -> None:
    four = scheduler_view(context(PLANS["4-su"]).topo)
    assert [b.name for b in four.blocks] == ["su1", "su2", "su3", "su4"]
    assert four.block_sizes == (31,)  # SU 1 gives a server position to the UFMs
    three = scheduler_view(context(PLANS["3-tier"]).topo)
    assert three.block_sizes == (15, 30)  # two SUs per pod
    nvl = scheduler_view(context(PLANS["nvl72"]).topo)
    assert [(b.name, len(b.nodes)) for b in nvl.blocks] == [
        ("nvl72-01", 18),
        ("nvl72-02", 18),
        ("nvl72-03", 18),
        ("nvl72-04", 18),
    ]
    assert nvl.block_sizes == (18,)
    text = _prose(_files(PLANS["nvl72"])["slurm/topology-block.conf"])
    assert "Blocks are the NVL72 racks" in text and "UNVERIFIED" in text


def test_a_broken_block_file_fails_the_grammar_check() -> None:
    """The grammar check can fail: sizes not a power of two apart, a node in two blocks."""
    with pytest.raises(AssertionError, match="48 after 16"):
        _check_block({"block_sizes": [16, 48], "blocks": [{"block": "a", "nodes": "n[1-16]"}]})
    with pytest.raises(AssertionError, match="a node in two blocks"):
        _check_block(
            {
                "block_sizes": [2],
                "blocks": [{"block": "a", "nodes": "n[1-2]"}, {"block": "b", "nodes": "n[2-3]"}],
            }
        )
    with pytest.raises(AssertionError, match="first attribute"):
        check_topology_yaml([{"cluster_default": True, "topology": "t", "flat": True}])


def test_every_line_fits_slurms_parser() -> None:
    """Key=value words only, names Slurm's hostlist parser reads back."""
    for plan in PLANS:
        for path, text in _files(PLANS[plan]).items():
            if not path.endswith(".conf"):
                continue
            for ln in _conf_lines(text):
                for key, value in ln.items():
                    assert re.fullmatch(r"[a-z]+", key), key
                    if key in ("nodes", "switches"):
                        assert expand(value)
    assert slurm.files(seed_context("infiniband")) == list(slurm.FILES)
